"""``save`` / ``load`` in PyTorch's checkpoint format, so checkpoints move both ways between tinytorch and torch.

The format (``torch.save`` since PyTorch 1.6): an uncompressed zip whose entries sit in one folder,
``archive/data.pkl`` (a protocol-2 pickle of the object, in which each tensor is a call of
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` and each
storage a persistent id ``('storage', torch.<Dtype>Storage, key, location, numel)``), one raw
little-endian file per storage (``archive/data/<key>``), and ``version``, ``byteorder``,
``.format_version``, ``.storage_alignment`` and ``.data/serialization_id`` records. Tensors that
share a storage (views, tied weights) are saved once and come back sharing it.

Loading with ``weights_only=True`` (the default, as in torch >= 2.6) runs the pickle through
``_weights_only_unpickler`` with torch's rules: an allowlist of globals (the tensor/parameter rebuild
functions, storage types, dtypes, ``torch.device``, ``OrderedDict``, a few builtins and NumPy scalars)
extended by ``add_safe_globals`` / ``safe_globals``, so a checkpoint cannot run code nor set a tensor's
private fields. ``weights_only=False`` also imports the non-torch classes the file names, as torch does:
only for files you trust. Either way the archive is checked before memory is committed (member names,
record sizes against what the tensors claim, view bounds, bounded reads). ``save`` streams each storage
into its record and publishes the file by an atomic rename. Files written by tinytorch before this format
(``data.json`` inside) still load.
"""
import io
import json
import math
import os
import pickle
import re
import secrets
import socket
import struct
import warnings
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from . import _dtype as _dt
from . import _weights_only_unpickler as _wo
from ._tensor import Tensor
from ._utils import (_SAFE, _STORAGE, _LoadedStorage, _StorageType, _is_int, _rebuild_parameter, _set_tensor_state,
                     _torch_globals)

_FOLDER = "archive"
_ALIGN = 64  # torch aligns each record's data to 64 bytes (so a reader may mmap it)

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


def _storage_array(storage):
    """The whole storage as a flat little-endian host array (all of it, as torch saves shared storages): the
    storage's own memory on the cpu (no copy), a host copy of this one storage for other devices."""
    from ._tensor import _new
    flat = _new(storage, (storage.size,), (1,), 0, storage.dtype)
    arr = np.ascontiguousarray(flat.detach().numpy(force=True))
    if arr.dtype.byteorder == ">":
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    return arr


def _member(z, name, size):
    """A ZipInfo for an uncompressed entry whose data starts at a multiple of 64 bytes (padding in the extra
    field, as torch's writer does), so readers that mmap the file can map each storage in place."""
    info = zipfile.ZipInfo(f"{_FOLDER}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile then appends a 20-byte zip64 field to the extra
    start = z.fp.tell() + 30 + len(info.filename.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -start % _ALIGN
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # 'FB': the id torch uses for its padding
    return info, zip64


def _write_aligned(z, name, data):
    info, zip64 = _member(z, name, len(data))
    with z.open(info, "w", force_zip64=zip64) as out:
        out.write(data)


_CHUNK = 1 << 24  # bytes handed to the zip writer at a time (its CRC and the file write work in place)


def _write_storage(z, name, storage):
    """Stream one storage into its record: the bytes go from the storage's memory to the file in chunks,
    never gathered into one Python bytes object."""
    arr = _storage_array(storage)
    raw = memoryview(arr.reshape(-1).view(np.uint8))  # bytes view (also for dtypes NumPy cannot export)
    info, zip64 = _member(z, name, raw.nbytes)
    with z.open(info, "w", force_zip64=zip64) as out:
        for i in range(0, raw.nbytes, _CHUNK):
            out.write(raw[i:i + _CHUNK])


def _write_checkpoint(out, data_pkl, storages):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        _write_aligned(z, "data.pkl", data_pkl)
        _write_aligned(z, ".format_version", b"1")
        _write_aligned(z, ".storage_alignment", str(_ALIGN).encode())
        _write_aligned(z, "byteorder", b"little")
        for ref, storage in storages:
            _write_storage(z, f"data/{ref.key}", storage)
        _write_aligned(z, "version", b"3\n")
        _write_aligned(z, ".data/serialization_id", str(int.from_bytes(os.urandom(16), "little")).encode())


def _temporary_prefix(path):
    """Temporaries of ``path`` are ``.<name>.<host>.<pid>.<random>.tmp`` in its folder: the host and process
    that write one are in its name, so a later save can tell an orphan (its writer was killed) from a save
    in progress."""
    return f".{os.path.basename(path)}.{socket.gethostname().replace('.', '-')}."


def _remove_orphaned_temporaries(folder, prefix):
    """Delete the temporaries a killed save of the same target left (SIGKILL/SIGTERM/power loss end a process
    without running its cleanup): those written on this host by a process that no longer exists."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return
    for n in names:
        pid = n[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # its writer is alive: a save in progress
        except ProcessLookupError:
            pass
        except (PermissionError, OSError):
            continue  # alive under another user, or unknown: leave it
        try:
            os.remove(os.path.join(folder, n))
        except OSError:
            pass


def _open_temporary(path):
    """A new file next to ``path`` (same folder, so the final rename is atomic), created as ``open`` creates
    files: mode 0666 less the umask (0644 under the usual umask 022), like the files torch.save writes.
    Orphans of earlier killed saves of the same target are removed first."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {folder} does not exist.")
    prefix = _temporary_prefix(path)
    _remove_orphaned_temporaries(folder, prefix)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(folder, f"{prefix}{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


DEFAULT_PROTOCOL = 2


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write ``obj`` (tensors, state_dicts, optimizer states, nested containers, modules, picklable objects) to
    the path or binary file object ``f`` in PyTorch's checkpoint format: ``torch.load`` reads it, and so does
    ``tinytorch.load``. Tensors on any device are saved from host copies; views keep sharing storage.

    Storage data is streamed from memory to the file (no second copy of the checkpoint in memory). A path is
    written to a temporary file in the same folder (mode 0666 less the umask, as torch's files) and renamed
    into place, so a failed or interrupted save (an exception, KeyboardInterrupt) removes the temporary and
    leaves any previous file intact; the temporary of a save killed outright (SIGKILL) is removed by the
    next save of the same path. Errors: pickle's (``PicklingError``, ``AttributeError``, ``TypeError``)
    for objects that cannot be pickled; RuntimeError when the target's folder does not exist (as torch).
    Mirrors ``torch.save``."""
    data_pkl = io.BytesIO()
    p = _Pickler(data_pkl)
    p.dump(obj)
    data_pkl = data_pkl.getvalue()
    storages = list(p.storages.values())
    if hasattr(f, "write"):
        _write_checkpoint(f, data_pkl, storages)
        return
    path = os.fspath(f)
    fd, tmp = _open_temporary(path)
    try:
        with os.fdopen(fd, "wb") as out:
            fd = None
            _write_checkpoint(out, data_pkl, storages)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        tmp = None
    finally:
        # reached with tmp set only when the save failed or was interrupted: nothing half-written stays
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            try:
                os.remove(tmp)
            except FileNotFoundError:
                pass


# ---- loading -----------------------------------------------------------------------------------------
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")

# Deflate cannot expand data more than ~1032-fold: a member declaring a larger uncompressed size is corrupt or
# a zip bomb, refused before anything is inflated.
_MAX_DEFLATE_RATIO = 1032


def clear_safe_globals():
    """Clears the list of globals that are safe for ``weights_only`` load (``torch.serialization``'s)."""
    _wo._clear_safe_globals()


def get_safe_globals():
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return _wo._get_safe_globals()


def add_safe_globals(safe_globals):
    """Marks the given globals (classes or functions, or ``(obj, "module.qualname")`` pairs naming them as the
    checkpoint does) as safe for ``load(weights_only=True)``: the file may then call them, create instances
    and set their state. A whole pickled ``nn.Module`` loads once its classes (the program's own and the
    ``nn`` modules it holds) are listed, as in PyTorch. Mirrors ``torch.serialization.add_safe_globals``."""
    _wo._add_safe_globals(safe_globals)


class safe_globals(_wo._safe_globals):
    """Context manager: ``with safe_globals([MyModule]): load(f)`` allows the listed globals inside the block
    only. Mirrors ``torch.serialization.safe_globals``."""


class _Archive:
    """Checked access to a checkpoint's zip: member names that stay inside the archive's one folder, sizes
    from the zip directory that the data can really hold, records read with a bound, and corruption (missing
    records, bad CRCs, truncated data) reported as RuntimeError naming the record."""

    def __init__(self, z, file_size):
        self.z = z
        infos = z.infolist()
        for info in infos:
            n = info.filename
            if n.startswith(("/", "\\")) or "\\" in n or ".." in n.split("/") or (len(n) > 1 and n[1] == ":"):
                raise RuntimeError(f"tinytorch.load: the checkpoint's member name {n!r} is an absolute path or leaves "
                                   "the archive's folder; refusing the file")
            if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
                raise RuntimeError(f"tinytorch.load: record {n} declares {info.file_size} bytes but stores "
                                   f"{info.compress_size}: the checkpoint is corrupted")
            if info.compress_size > file_size or info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 64:
                raise RuntimeError(f"tinytorch.load: record {n} declares {info.file_size} bytes from "
                                   f"{info.compress_size} stored bytes in a {file_size}-byte file: the checkpoint "
                                   "is corrupted or a zip bomb")
        self.names = [i.filename for i in infos]

    def info(self, name):
        try:
            return self.z.getinfo(name)
        except KeyError:
            raise RuntimeError(f"tinytorch.load: the checkpoint has no record {name} (file not found); it is "
                               "truncated or corrupted") from None

    def open(self, name):
        return self.z.open(self.info(name))

    def read(self, name, nbytes=None, limit=None):
        """The record's bytes as a uint8 array: exactly ``nbytes`` (RuntimeError before reading when the zip
        directory declares another size), or at most ``limit``."""
        info = self.info(name)
        if nbytes is not None and info.file_size != nbytes:
            raise RuntimeError(f"tinytorch.load: record size ({info.file_size} bytes) of {name} does not match "
                               f"expected size ({nbytes} bytes)")
        if limit is not None and info.file_size > limit:
            raise RuntimeError(f"tinytorch.load: record {name} is {info.file_size} bytes, more than the {limit} "
                               "expected")
        n = info.file_size
        out = np.empty(n, np.uint8)
        view = memoryview(out)
        pos = 0
        with self.guard(name), self.z.open(info) as fh:
            while pos < n:
                got = fh.readinto(view[pos:min(n, pos + (1 << 20))])
                if not got:
                    raise RuntimeError(f"tinytorch.load: record {name} is truncated ({pos} of {n} bytes)")
                pos += got
            fh.read(1)  # reach the end, where zipfile checks the CRC
        return out

    def guard(self, name):
        return _CorruptAsRuntimeError(name)


class PyTorchFileReader:
    """Reads the records of a checkpoint archive written by ``save`` (or by PyTorch): ``torch.PyTorchFileReader``.

    ``name_or_buffer``: a path or a binary file object. Record names are relative to the archive's top folder
    (``"data.pkl"``, ``"data/0"``); a missing record raises RuntimeError, a corrupted one likewise.
    """

    def __init__(self, name_or_buffer):
        self._zip = zipfile.ZipFile(name_or_buffer if not isinstance(name_or_buffer, os.PathLike)
                                    else os.fspath(name_or_buffer))
        names = self._zip.namelist()
        self._prefix = names[0].split("/", 1)[0] + "/" if names and "/" in names[0] else ""
        size = self._zip.fp.seek(0, 2) if self._zip.fp is not None else 0
        self._archive = _Archive(self._zip, size)

    def get_all_records(self):
        return [n[len(self._prefix):] for n in self._archive.names if n.startswith(self._prefix)]

    def has_record(self, name):
        return self._prefix + name in self._archive.names

    def get_record(self, name):
        """The record's bytes."""
        return self._archive.read(self._prefix + name).tobytes()

    def get_record_offset(self, name):
        """Where the record's data starts in the file (bytes)."""
        info = self._archive.info(self._prefix + name)
        return info.header_offset + len(info.FileHeader())

    def get_storage_from_record(self, name, numel, dtype):
        """A uint8 tensor of the record's ``numel`` bytes (``dtype`` is the storage class asked for)."""
        from ._ops.creation import from_numpy
        return from_numpy(self._archive.read(self._prefix + name, nbytes=numel))

    def serialization_id(self):
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""


class _CorruptAsRuntimeError:
    """zipfile/zlib errors while reading a record become RuntimeError naming it, as torch reports them."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (zipfile.BadZipFile, zlib.error, EOFError)):
            raise RuntimeError(f"tinytorch.load: record {self.name} of the checkpoint is corrupted: {exc}") from None
        return False


class _Loader:
    """What both unpicklers share: storages from the archive (read once, shared by the tensors viewing them),
    placed on the device ``map_location`` says."""

    def __init__(self, archive, folder, map_location):
        self.archive, self.folder, self.map_location = archive, folder, map_location
        self.storages = {}
        self.big_endian = False
        if f"{folder}byteorder" in archive.names:
            order = bytes(archive.read(f"{folder}byteorder", limit=16)).decode("ascii", "replace")
            if order not in ("little", "big"):
                raise RuntimeError(f"tinytorch.load: unknown byteorder {order!r} in the checkpoint")
            self.big_endian = order == "big"

    def _place(self, arr, dt, location):
        return _place_storage(arr, dt, location, self.map_location)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise pickle.UnpicklingError(f"tinytorch.load: unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"tinytorch.load: unsupported storage type {stype!r}")
        if not isinstance(key, str) or not isinstance(location, str) or not _is_int(numel) or numel < 0:
            raise RuntimeError(f"tinytorch.load: invalid storage reference {pid!r}")
        st = self.storages.get(key)
        if st is None:
            from ._ops.creation import _from_host
            dt = stype.dtype
            item = np.dtype(dt.np).itemsize
            raw = self.archive.read(f"{self.folder}data/{key}", nbytes=numel * item)
            arr = raw.view(np.dtype(dt.np).newbyteorder(">" if self.big_endian else "<"))
            if arr.dtype.byteorder not in ("=", "|") and arr.dtype != np.dtype(dt.np):
                arr = arr.astype(dt.np)
            st = _LoadedStorage(self._place(arr, dt, location))
            self.storages[key] = st
        elif st.flat.dtype is not stype.dtype:
            raise RuntimeError(f"tinytorch.load: storage {key} is used with two dtypes ({st.flat.dtype} and "
                               f"{stype.dtype})")
        return st


def _place_storage(arr, dt, location, map_location):
    """The flat tensor of a loaded storage on its target device. A callable ``map_location`` is called as PyTorch
    calls it, ``map_location(storage, location)`` with the storage on the cpu (an ``UntypedStorage``), and returns
    the storage to use (moved, for instance) or None for the default placement."""
    from ._ops.creation import _from_host
    from .device import device as _device
    if map_location is None or isinstance(map_location, (str, dict, _device)) or not callable(map_location):
        return _from_host(arr, dt, _target(location, map_location))
    from .storage import TypedStorage, UntypedStorage
    t = _from_host(arr, dt, "cpu")
    res = map_location(UntypedStorage._wrap(t._storage), location)
    if res is None:
        return t.to(_target(location, None))
    u = res.untyped() if isinstance(res, TypedStorage) else res
    if not isinstance(u, UntypedStorage):
        raise TypeError(f"tinytorch.load: map_location returned {type(res).__name__}, expected a storage or None")
    return TypedStorage._wrap(u, dt)._tensor()


def _restricted_globals():
    """The built-in allowlist as the weights-only unpickler looks it up: ``{"module.name": object}``."""
    return {f"{m}.{n}": v for (m, n), v in {**_torch_globals(), **_SAFE}.items()}


def _weights_only_unpickler(fh, loader, encoding):
    from .nn.parameter import Parameter
    return _wo.Unpickler(fh, allowed=_restricted_globals(), persistent_load=loader.persistent_load,
                         set_tensor_state=_set_tensor_state, tensor_types=(Tensor,),
                         newobj={Parameter: lambda *a: _rebuild_parameter(*a)}, build_types=(np.dtype,),
                         encoding=encoding)


# Modules an earlier tinytorch pickled classes and functions under, and the namespace their names live in now
# (files split by topic): a whole pickled model keeps loading.
_MOVED = {"tinytorch.nn.modules.layers": "tinytorch.nn", "tinytorch._ops.composites": "tinytorch",
          "tinytorch._ops.creation": "tinytorch", "tinytorch._ops.spectral": "tinytorch.functional",
          "tinytorch._ops.variants": "tinytorch._variants", "tinytorch.backends.numpy": "tinytorch.backends.cpu"}


def _moved_global(module, name):
    """``module.name`` as an earlier tinytorch pickled it, found where it lives now; None when unknown."""
    import importlib
    new = _MOVED.get(module)
    if new is None:
        return None
    return getattr(importlib.import_module(new), name, None)


def _full_unpickler(fh, loader, pickle_module, pickle_load_args):
    """``weights_only=False``: any global is imported (only for trusted files); torch's names map to
    tinytorch's."""
    torch_globals = _torch_globals()
    base = getattr(pickle_module, "Unpickler", pickle.Unpickler)

    class Unpickler(base):
        def find_class(self, module, name):
            module, name = _wo._read_global(module, name)
            key = (module, name)
            if key in torch_globals:
                return torch_globals[key]
            if key in _SAFE:
                return _SAFE[key]
            if module == "torch" or module.startswith("torch."):
                raise pickle.UnpicklingError(f"tinytorch.load: the checkpoint needs {module}.{name}, which "
                                             "tinytorch cannot rebuild")
            try:
                return super().find_class(module, name)
            except (ImportError, AttributeError):
                moved = _moved_global(module, name)
                if moved is None:
                    raise
                return moved

        def persistent_load(self, pid):
            return loader.persistent_load(pid)

    return Unpickler(fh, **pickle_load_args)


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
    return str(_device(map_location) if isinstance(map_location, str) else map_location)


def _get_wo_message(message):
    """torch.load's wording around a weights-only refusal."""
    docs = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
            "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, do those "
                f"steps only if you trust the source of the checkpoint. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) "
                "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
                "following error message.\n\tWeightsUnpickler error: " + message + docs)
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        out += ("Please file an issue with the following so that we can make `weights_only=True` compatible with "
                "your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + docs


def _resolve_weights_only(weights_only, pickle_module):
    """``weights_only`` after torch's default (None -> True unless a ``pickle_module`` is given) and its
    environment switches: ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` forces True; ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``
    forces False only when the caller did not pass ``weights_only`` (with a UserWarning); both set is a
    RuntimeError. Values "1", "y", "yes", "true" (any case) switch them on."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    true_values = ["1", "y", "yes", "true"]
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in true_values
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        weights_only = True
    elif force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        weights_only = False
    return bool(weights_only)


def _file_size(f):
    if hasattr(f, "read"):
        pos = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(pos)
        return end - pos
    return os.path.getsize(f)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read a checkpoint written by ``torch.save`` or ``tinytorch.save`` (PyTorch's zip format) from a path or
    binary file object. Storages land on ``map_location`` (a device, string, or dict from saved location to
    device); tensors that shared a storage share it again.

    ``weights_only`` (default True, and as torch the ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` /
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` environment switches) unpickles with torch's rules: only allow-listed
    globals (the tensor rebuild functions, dtypes, ``OrderedDict``, ... and what ``add_safe_globals`` /
    ``safe_globals`` added), so a file cannot run code or reach a tensor's internals; anything else raises
    ``pickle.UnpicklingError`` naming the global. Whatever ``weights_only``, the file is checked before memory
    is committed: member names must stay in the archive's folder, each storage record must hold exactly the
    bytes its tensors claim, views must lie inside their storage, records are read with a bound (no zip
    bomb), and missing records or CRC mismatches raise RuntimeError. Also RuntimeError for a file that is not
    a zip checkpoint (e.g. torch's legacy pre-1.6 format) and, as torch, for CUDA storages without
    ``map_location``. Mirrors ``torch.load``."""
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    pickle_load_args.setdefault("encoding", "utf-8")
    src = f if hasattr(f, "read") else os.fspath(f)
    try:
        z = zipfile.ZipFile(src)
    except zipfile.BadZipFile:
        raise RuntimeError(f"tinytorch.load: {f} is not a zip checkpoint (torch.save's format since PyTorch 1.6); "
                           "re-save it with a recent torch") from None
    with z:
        archive = _Archive(z, _file_size(src) if not hasattr(src, "read") else _file_size(src) + src.tell())
        names = archive.names
        if "data.json" in names and not any(n.endswith("/data.pkl") for n in names):  # tinytorch's old format
            meta = json.loads(bytes(archive.read("data.json", limit=1 << 30)))
            if meta.get("magic") == _LEGACY_MAGIC:
                return _decode_legacy(meta["obj"], archive, map_location)
        folder = names[0].split("/", 1)[0] + "/" if names and "/" in names[0] else ""
        for n in names:
            if not folder or not n.startswith(folder):
                raise RuntimeError(f"tinytorch.load: file in archive is not in a subdirectory {folder}: {n}")
        pkl = f"{folder}data.pkl"
        if pkl not in names:
            raise RuntimeError(f"tinytorch.load: {f} is a zip file but not a checkpoint (no data.pkl)")
        loader = _Loader(archive, folder, map_location)
        with archive.guard(pkl), archive.open(pkl) as fh:
            if weights_only:
                try:
                    return _weights_only_unpickler(fh, loader, pickle_load_args["encoding"]).load()
                except pickle.UnpicklingError as e:
                    raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
                except (IndexError, KeyError) as e:  # a malformed pickle (stack underflow, bad memo)
                    raise pickle.UnpicklingError(_get_wo_message(f"malformed pickle: {e!r}")) from None
            return _full_unpickler(fh, loader, pickle_module or pickle, pickle_load_args).load()


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
        shape = tuple(int(n) for n in obj["shape"])
        nbytes = math.prod(shape) * np.dtype(d.np).itemsize
        arr = z.read(obj["__tensor__"], nbytes=nbytes).view(d.np).reshape(shape)
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
