"""Rebuilding tensors from a checkpoint (PyTorch keeps the same functions in ``torch/_utils.py``): the functions a
checkpoint's pickle calls (``_rebuild_tensor_v2`` ...), the storages they accept, and the globals a checkpoint may
name, ``_torch_globals`` (torch's names mapped to tinytorch's) and ``_SAFE``. ``serialization.py`` reads the
archive and runs the unpicklers with these.
"""
from collections import Counter, OrderedDict

import numpy as np

from . import _dtype as _dt
from ._tensor import Tensor

# torch's storage class per dtype name, and back
_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
            "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
            "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_STORAGE_DTYPE = {v: k for k, v in _STORAGE.items()}
# the names torch pickles dtypes under (torch.float32 is pickled as GLOBAL 'torch float32'), and aliases
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}


class _StorageType:
    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"torch.{_STORAGE[self.dtype.name]}"


class _LoadedStorage:
    """A storage read from a checkpoint (a flat tensor over its record). The rebuild functions accept only
    these, so a pickle cannot pass them some other object as the memory a tensor views."""

    def __init__(self, flat):
        self.flat = flat

    def __repr__(self):
        return f"<storage of {self.flat.numel()} {self.flat.dtype} elements>"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _check_view(storage, storage_offset, size, stride):
    """The geometry of a saved tensor must lie inside its storage (RuntimeError otherwise, as ``set_``)."""
    if not isinstance(storage, _LoadedStorage):
        raise RuntimeError(f"tinytorch.load: a tensor's storage must come from the checkpoint, got "
                           f"{type(storage).__name__}")
    if not (isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list)) and _is_int(storage_offset)
            and all(_is_int(s) for s in size) and all(_is_int(s) for s in stride)):
        raise RuntimeError(f"tinytorch.load: invalid tensor geometry: size {size!r}, stride {stride!r}, storage "
                           f"offset {storage_offset!r}")
    n = storage.flat.numel()
    item = storage.flat.element_size()
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} vs {len(stride)}")
    if storage_offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)} and storage offset "
                           f"{storage_offset} must be non-negative")
    need = 0 if 0 in size else storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1
    if need > n:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {storage_offset}, "
                           f"and itemsize {item} requiring a storage size of {need * item} are out of bounds for "
                           f"storage of size {n * item}")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    from .storage import TypedStorage
    if isinstance(storage, TypedStorage):  # a program rebuilding from a storage it holds (Lightning's lazy loader)
        storage = _LoadedStorage(storage._tensor())
    _check_view(storage, storage_offset, size, stride)
    if not isinstance(requires_grad, bool):
        raise RuntimeError(f"tinytorch.load: requires_grad must be a bool, got {type(requires_grad).__name__}")
    flat = storage.flat
    t = flat.as_strided(tuple(size), tuple(stride), flat._offset + storage_offset)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _tensor_field_names():
    """Everything a Tensor class defines (slots such as ``_shape``/``_storage``, class defaults, properties,
    methods): a checkpoint may not set these. In torch they live in C++, out of a pickle's reach."""
    from .nn.parameter import Parameter
    names = set()
    for cls in (Tensor, Parameter):
        for k in cls.__mro__:
            names.update(vars(k))
            names.update(getattr(k, "__slots__", ()))
    return names


def _set_obj_state(obj, state):
    """Apply a pickled Python-attribute state to a rebuilt tensor, as torch's ``_utils._set_obj_state``, but
    refusing any name the tensor type defines (its private fields included): only attributes a program added
    itself can come from the file, plus ``requires_grad`` as a bool."""
    if state is None:
        return obj
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    fields = _tensor_field_names() | {"__class__", "__dict__"}
    for part in (dict_state, slots_state):
        if not part:
            continue
        if not isinstance(part, dict):
            raise RuntimeError(f"Invalid serialized state: {state}")
        for k, v in part.items():
            if k == "requires_grad" and isinstance(v, bool):
                obj.requires_grad_(v)
            elif not isinstance(k, str) or k in fields or k.startswith("__"):
                raise RuntimeError(f"tinytorch.load: the checkpoint sets the tensor attribute {k!r}, which is part "
                                   "of the tensor itself and is not restored from a file")
            else:
                setattr(obj, k, v)
    return obj


def _set_tensor_state(inst, state):
    """BUILD on a tensor (the weights-only unpickler): torch accepts only its legacy ``set_``/``__setstate__``
    forms there; a Parameter's legacy ``(requires_grad, _, hooks)`` is honoured, a subclass's attribute dict
    goes through ``_set_obj_state``; anything else is refused."""
    from .nn.parameter import Parameter
    if type(inst) is Parameter and isinstance(state, tuple) and len(state) == 3:
        if not isinstance(state[0], bool):
            raise RuntimeError("tinytorch.load: requires_grad must be a bool")
        inst.requires_grad_(state[0])
        return
    if type(inst) in (Tensor, Parameter):
        raise TypeError(f"tinytorch.load: a {type(inst).__name__} cannot be given state by the checkpoint "
                        f"(got {type(state).__name__}); tensors are rebuilt only by the rebuild functions")
    _set_obj_state(inst, state)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
        raise RuntimeError("tinytorch.load: _rebuild_parameter expects a tensor and a bool")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    from .nn.parameter import Parameter
    if func not in _REBUILDERS or not (isinstance(new_type, type) and issubclass(new_type, Tensor)) or \
            not isinstance(args, tuple):
        raise RuntimeError(f"tinytorch.load: cannot rebuild a tensor of type {new_type!r} with {func!r}")
    t = func(*args)
    if type(t) is not new_type:
        if new_type is Parameter:
            t = Parameter(t, t.requires_grad)
        elif new_type is not Tensor:
            t = t.as_subclass(new_type)
    return _set_obj_state(t, state)


_REBUILDERS = (_rebuild_tensor_v2, _rebuild_tensor, _rebuild_parameter, _rebuild_parameter_with_state)


def _numpy_scalar(dtype, data):
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes) or \
            len(data) != dtype.itemsize:
        raise RuntimeError(f"tinytorch.load: invalid NumPy scalar of dtype {dtype!r}")
    return np.frombuffer(data, dtype=dtype)[0]


def _bytes_from_latin1(s, encoding="latin1"):
    """``_codecs.encode``, as protocol-2 pickles write ``bytes`` (only the latin-1 form that pickle emits)."""
    if not isinstance(s, str) or encoding != "latin1":
        raise RuntimeError("tinytorch.load: _codecs.encode is only allowed as pickle uses it for bytes")
    return s.encode("latin1")


def _bytearray(*args):
    """``bytearray`` as pickles use it (from a string or bytes of the file); never ``bytearray(n)``, which
    would allocate n bytes on a few bytes' say-so."""
    if args and not isinstance(args[0], (str, bytes, bytearray)):
        raise RuntimeError("tinytorch.load: bytearray may only be built from data in the checkpoint")
    return bytearray(*args)


def _torch_globals():
    """``{(module, name): object}`` the checkpoint may name: torch's rebuild functions and types mapped to
    tinytorch's, dtypes and storage types."""
    from .device import device
    from ._tensor import Size
    from .nn.parameter import Parameter
    g = {("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
         ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
         ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
         ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
         ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
         ("torch", "Tensor"): Tensor, ("torch.nn.parameter", "Parameter"): Parameter,
         ("torch", "device"): device, ("torch", "Size"): Size}
    for name, st in _STORAGE.items():
        g[("torch", st)] = _StorageType(_dt._by_name(name))
    for name in list(_STORAGE) + list(_DTYPE_ALIASES):
        g[("torch", name)] = _dt._by_name(_DTYPE_ALIASES.get(name, name))
    return g


_SAFE = {("collections", "OrderedDict"): OrderedDict, ("collections", "Counter"): Counter,
         ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "complex"): complex,
         ("builtins", "bytearray"): _bytearray, ("builtins", "slice"): slice, ("builtins", "int"): int,
         ("builtins", "float"): float, ("builtins", "bool"): bool, ("_codecs", "encode"): _bytes_from_latin1,
         ("numpy", "dtype"): np.dtype, ("numpy.core.multiarray", "scalar"): _numpy_scalar,
         ("numpy._core.multiarray", "scalar"): _numpy_scalar}
