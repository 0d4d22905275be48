"""``save`` / ``load`` in PyTorch's checkpoint format, so checkpoints move both ways between tinytorch and torch.

The format (``torch.save`` since PyTorch 1.6): an uncompressed zip whose entries sit in one folder,
``archive/data.pkl`` (a protocol-2 pickle of the object, in which each tensor is a call of
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` and each
storage a persistent id ``('storage', torch.<Dtype>Storage, key, location, numel)``), one raw
little-endian file per storage (``archive/data/<key>``), and ``version``, ``byteorder``,
``.format_version``, ``.storage_alignment`` and ``.data/serialization_id`` records. Tensors that
share a storage (views, tied weights) are saved once and come back sharing it.

Loading with ``weights_only=True`` (the default, as in torch >= 2.6) unpickles with an allowlist of
globals (the tensor/parameter rebuild functions, storage types, dtypes, ``torch.device``,
``OrderedDict``, a few builtins and NumPy scalars), so a checkpoint cannot run code.
``weights_only=False`` also imports the non-torch classes the file names, as torch does: only for
files you trust. Files written by tinytorch before this format (``data.json`` inside) still load.
"""
import io
import json
import os
import pickle
import struct
import tempfile
import zipfile
from collections import OrderedDict

import numpy as np

from . import _dtype as _dt
from ._tensor import Tensor

_FOLDER = "archive"
_ALIGN = 64  # torch aligns each record's data to 64 bytes (so a reader may mmap it)

# torch's storage class per dtype name, and back
_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
            "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
            "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_STORAGE_DTYPE = {v: k for k, v in _STORAGE.items()}
# the names torch pickles dtypes under (torch.float32 is pickled as GLOBAL 'torch float32'), and aliases
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}


# ---- saving ------------------------------------------------------------------------------------------
class _Global:
    """A reference to ``module.name`` written as a pickle GLOBAL without importing it (torch need not be
    installed to write a checkpoint that names ``torch._utils._rebuild_tensor_v2``)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce insists on a callable; this one is only ever written
        raise TypeError(f"{self.module}.{self.name} is a pickle reference, not a function")


class _StorageRef:
    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")


class _Pickler(pickle._Pickler):
    """Pickles tensors as torch does: storages by persistent id, tensors as ``_rebuild_tensor_v2`` calls.

    The pure-Python pickler, because only it lets a GLOBAL name a module that is not importable here."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}  # id(Storage) -> (_StorageRef, Storage)

    def save_global_ref(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def save_dtype(self, obj):
        self.save_global_ref(_Global("torch", obj.name))

    dispatch[_dt.dtype] = save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", _STORAGE[obj.dtype.name]), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        from .device import device
        from ._tensor import Size
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                plain = obj.detach()
                return _REBUILD_PARAMETER, (plain, obj.requires_grad, OrderedDict())
            if obj.dtype.name not in _STORAGE:
                raise TypeError(f"tinytorch.save: tensors of dtype {obj.dtype} have no torch storage type")
            st = obj._storage
            ref = self.storages.get(id(st))
            if ref is None:
                ref = (_StorageRef(str(len(self.storages)), obj.dtype, st.size), st)
                self.storages[id(st)] = ref
            return _REBUILD_TENSOR, (ref[0], obj._offset, tuple(obj._shape), tuple(obj._stride),
                                     bool(obj.requires_grad), OrderedDict())
        if isinstance(obj, device):
            return _Global("torch", "device"), (str(obj),)
        if isinstance(obj, Size):
            return _Global("torch", "Size"), (tuple(obj),)
        return NotImplemented


def _storage_bytes(storage):
    """The whole storage as little-endian bytes on the host (all of it, as torch saves shared storages)."""
    from ._tensor import _new
    flat = _new(storage, (storage.size,), (1,), 0, storage.dtype)
    arr = np.ascontiguousarray(flat.detach().numpy(force=True))
    if arr.dtype.byteorder == ">":
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    return arr.tobytes()


def _write_aligned(z, name, data):
    """An uncompressed zip entry whose data starts at a multiple of 64 bytes (padding in the extra field, as
    torch's writer does), so readers that mmap the file can map each storage in place."""
    info = zipfile.ZipInfo(f"{_FOLDER}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = z.fp.tell() + 30 + len(info.filename.encode("utf-8")) + 4
    pad = -start % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # 'FB': the id torch uses for its padding
    z.writestr(info, data)


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors, state_dicts, optimizer states, nested containers, picklable objects) to the
    path or binary file object ``f`` in PyTorch's checkpoint format: ``torch.load`` reads it, and so does
    ``tinytorch.load``. Tensors on any device are saved from host copies; views keep sharing storage.

    A path is written to a temporary file in the same folder and renamed into place, so a crash or an
    unpicklable object mid-save never leaves a truncated file. Errors: pickle's (``PicklingError``,
    ``AttributeError``, ``TypeError``) for objects that cannot be pickled. Mirrors ``torch.save``."""
    data_pkl = io.BytesIO()
    p = _Pickler(data_pkl)
    p.dump(obj)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        _write_aligned(z, "data.pkl", data_pkl.getvalue())
        _write_aligned(z, ".format_version", b"1")
        _write_aligned(z, ".storage_alignment", str(_ALIGN).encode())
        _write_aligned(z, "byteorder", b"little")
        for ref, storage in p.storages.values():
            _write_aligned(z, f"data/{ref.key}", _storage_bytes(storage))
        _write_aligned(z, "version", b"3\n")
        _write_aligned(z, ".data/serialization_id", str(int.from_bytes(os.urandom(16), "little")).encode())
    data = buf.getvalue()
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pt")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


# ---- loading -----------------------------------------------------------------------------------------
class _StorageType:
    def __init__(self, dtype):
        self.dtype = dtype


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = storage.as_strided(tuple(size), tuple(stride), storage._offset + storage_offset)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    from .nn.parameter import Parameter
    t = func(*args)
    if new_type is Parameter and not isinstance(t, Parameter):
        t = Parameter(t, t.requires_grad)
    return t


def _numpy_scalar(dtype, data):
    return np.frombuffer(data, dtype=dtype)[0]


def _torch_globals():
    from . import device, Size
    from .nn.parameter import Parameter
    g = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
         ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
         ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
         ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
         ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
         ("torch", "Tensor"): Tensor, ("torch.nn.parameter", "Parameter"): Parameter,
         ("torch", "device"): device, ("torch", "Size"): Size}
    for name, st in _STORAGE.items():
        g[("torch", st)] = _StorageType(_dt._by_name(name))
    for name in list(_STORAGE) + list(_DTYPE_ALIASES):
        g[("torch", name)] = _dt._by_name(_DTYPE_ALIASES.get(name, name))
    return g


_SAFE = {("collections", "OrderedDict"): OrderedDict, ("builtins", "set"): set,
         ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex, ("builtins", "slice"): slice,
         ("builtins", "int"): int, ("builtins", "float"): float, ("builtins", "bool"): bool,
         ("numpy", "dtype"): np.dtype, ("numpy.core.multiarray", "scalar"): _numpy_scalar,
         ("numpy._core.multiarray", "scalar"): _numpy_scalar}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, folder, map_location, weights_only):
        super().__init__(file)
        self.zf, self.folder, self.map_location, self.weights_only = zf, folder, map_location, weights_only
        self.storages = {}
        self.torch = _torch_globals()

    def find_class(self, module, name):
        key = (module, name)
        if key in self.torch:
            return self.torch[key]
        if key in _SAFE:
            return _SAFE[key]
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(f"tinytorch.load: the checkpoint needs {module}.{name}, which tinytorch "
                                         "cannot rebuild")
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: unsupported global: GLOBAL {module}.{name}. tinytorch.load refuses "
                "to import it, since that could run code from the file; pass weights_only=False only for a "
                "checkpoint you trust.")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"tinytorch.load: unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        t = self.storages.get(key)
        if t is None:
            from ._ops.creation import _from_host
            if not isinstance(stype, _StorageType):
                raise pickle.UnpicklingError(f"tinytorch.load: unsupported storage type {stype!r}")
            dt = stype.dtype
            raw = self.zf.read(f"{self.folder}data/{key}")
            arr = np.frombuffer(raw, dtype=np.dtype(dt.np).newbyteorder("<"))[:numel].astype(dt.np, copy=True)
            t = _from_host(arr, dt, _target(location, self.map_location))
            self.storages[key] = t
        return t


def _target(location, map_location):
    """The device a storage saved at ``location`` loads onto, following ``map_location`` as torch does."""
    from .device import device as _device
    if map_location is None:
        if location.startswith("cuda"):
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        return str(_device(location))
    if isinstance(map_location, dict):
        return _target(map_location.get(location, location), None)
    if callable(map_location) and not isinstance(map_location, (str, _device)):
        raise NotImplementedError("tinytorch.load: a callable map_location is not supported; pass a device, a "
                                  "string or a dict")
    return str(_device(map_location) if isinstance(map_location, str) else map_location)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read a checkpoint written by ``torch.save`` or ``tinytorch.save`` (PyTorch's zip format) from a path or
    binary file object. Storages land on ``map_location`` (a device, string, or dict from saved location to
    device); tensors that shared a storage share it again.

    ``weights_only=True`` (default) refuses any global outside the allowlist (pickle.UnpicklingError), so a
    file cannot run code. Errors: RuntimeError for a file that is not a zip checkpoint (e.g. torch's legacy
    pre-1.6 format) and, as torch, for CUDA storages without ``map_location``. Mirrors ``torch.load``."""
    try:
        z = zipfile.ZipFile(f if hasattr(f, "read") else os.fspath(f))
    except zipfile.BadZipFile:
        raise RuntimeError(f"tinytorch.load: {f} is not a zip checkpoint (torch.save's format since PyTorch 1.6); "
                           "re-save it with a recent torch") from None
    with z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if pkl:
            folder = pkl[0][:-len("data.pkl")]
            with z.open(pkl[0]) as fh:
                return _Unpickler(io.BytesIO(fh.read()), z, folder, map_location, weights_only).load()
        if "data.json" in names:  # written by tinytorch before it used torch's format
            meta = json.loads(z.read("data.json"))
            if meta.get("magic") == _LEGACY_MAGIC:
                return _decode_legacy(meta["obj"], z, map_location)
        raise RuntimeError(f"tinytorch.load: {f} is a zip file but not a checkpoint (no data.pkl)")


# ---- the format tinytorch wrote before (read only) -----------------------------------------------
_LEGACY_MAGIC = "tinytorch-save-v1"


def _decode_legacy(obj, z, map_location):
    from .nn.parameter import Parameter
    from ._ops.creation import _from_host
    rec = lambda v: _decode_legacy(v, z, map_location)  # noqa: E731
    if isinstance(obj, list):
        return [rec(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tensor__" in obj:
        d = _dt._by_name(obj["dtype"])
        arr = np.frombuffer(z.read(obj["__tensor__"]), dtype=d.np).reshape(obj["shape"]).copy()
        t = _from_host(arr, d, str(map_location) if map_location is not None else "cpu")
        if obj.get("param"):
            return Parameter(t, requires_grad=obj["requires_grad"])
        return t.requires_grad_(True) if obj["requires_grad"] else t
    key = lambda k: tuple(k) if isinstance(k, list) else k  # noqa: E731
    if "__odict__" in obj:
        return OrderedDict((key(rec(k)), rec(v)) for k, v in obj["__odict__"])
    if "__dict__" in obj:
        return {key(rec(k)): rec(v) for k, v in obj["__dict__"]}
    if "__tuple__" in obj:
        return tuple(rec(v) for v in obj["__tuple__"])
    if "__dtype__" in obj:
        return _dt._by_name(obj["__dtype__"])
    if "__float__" in obj:
        return float(obj["__float__"])
    raise ValueError("tinytorch.load: unrecognised entry in data.json")


def _rebuild(arr, dtype_name, requires_grad):
    from ._ops.creation import _from_host
    t = _from_host(arr, _dt._by_name(dtype_name))
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_param(arr, dtype_name, requires_grad):
    from .nn.parameter import Parameter
    return Parameter(_rebuild(arr, dtype_name, False), requires_grad)
