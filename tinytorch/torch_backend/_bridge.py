"""Tensors of both libraries over one memory.

A tensor of the PyTorch device is a plain ``torch.Tensor`` with a PrivateUse1 ``TensorImpl``. Its storage is a
``torch.UntypedStorage`` whose data pointer is a unique address that is never read (tinytorch's device memory is
not addressable from the host), and whose Python object carries the tinytorch ``Storage`` that owns the memory:
PyTorch keeps a storage's Python object, and so the tinytorch buffer, alive as long as the storage lives. The
sizes, strides and offset of the torch tensor are the truth; tinytorch has the same strided model, so the two
directions are one constructor call each and share the memory:

- ``to_tinytorch(t)``: the tinytorch Tensor over ``t``'s memory (no grad, no history: autograd is PyTorch's);
- ``to_torch(x)``: the torch Tensor over a tinytorch kernel's result.
"""
import threading
import weakref

import torch

import tinytorch
from tinytorch._dispatch import _reinterpret
from tinytorch._storage import Storage
from tinytorch._tensor import _new

# torch dtype <-> tinytorch dtype, by name
TT_DTYPE = {getattr(torch, n): getattr(tinytorch, n) for n in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
    "complex128")}
TORCH_DTYPE = {v: k for k, v in TT_DTYPE.items()}

# Fake device addresses: one increasing range, never reused, so two live storages never overlap (PyTorch compares
# data pointers to find shared and overlapping memory: serialization, Module.to, in-place overlap checks).
_ALIGN = 256
_address = [1 << 48]
_address_lock = threading.Lock()


def _reserve(nbytes):
    with _address_lock:
        a = _address[0]
        _address[0] = a + (max(nbytes, 1) + _ALIGN - 1) // _ALIGN * _ALIGN
    return a


class State:
    """The registered device: its PyTorch name, the tinytorch device type behind it and that backend."""
    name = None          # the name PrivateUse1 was renamed to
    tt_type = None       # tinytorch device type ("opencl")
    backend = None       # tinytorch backend object
    devices = {}         # torch device index -> (torch.device, tinytorch.device)
    native = None        # the C++ extension (_native) once registered; None on the pure-Python registration


def torch_device(index):
    d = State.devices.get(index)
    if d is None:
        d = State.devices[index] = (torch.device(State.name, index), tinytorch.device(State.tt_type, index))
    return d[0]


def tt_device(index):
    torch_device(index)
    return State.devices[index][1]


def check_index(index):
    """The device index ``index`` (None: the current device), checked: RuntimeError for one the platform does
    not have (PyTorch's wording for CUDA), or for one past 0 without the C++ extension."""
    n = State.backend.device_count() if State.backend.is_available() else 0
    if index is None:  # "opencl" without an index: the current device (PyTorch's C++ guard's, when loaded)
        index = State.native.current_device() if State.native is not None else 0
    if not 0 <= index < n:
        raise RuntimeError(f"{State.name}: invalid device ordinal {index}: the platform has {n} "
                           f"{State.tt_type} device{'s' if n != 1 else ''}")
    if index > 0 and State.native is None:
        # PyTorch's Python device guard (torch._C._acc) knows one device only: a tensor made for index 1 would
        # report index 0. Refuse instead of silently moving it.
        raise RuntimeError(f"{State.name}:{index}: only {State.name}:0 can be used from PyTorch (the device "
                           f"guard registered from Python reports one device)")
    return index


_BY_ADDRESS = weakref.WeakValueDictionary()  # address -> tinytorch Storage of the storages torch_storage made


def torch_storage(st):
    """A new ``torch.UntypedStorage`` on the device over the tinytorch Storage ``st``'s memory."""
    nbytes = st.size * st.dtype.itemsize
    if State.native is not None:  # the C++ one can be resized (UntypedStorage.resize_)
        s = State.native.make_storage(_reserve(nbytes), nbytes, st.device.index or 0)
    else:
        address = _reserve(nbytes)
        s = torch._C._construct_storage_from_data_pointer(address, torch_device(st.device.index or 0), nbytes)
        _BY_ADDRESS[address] = st
    s._tinytorch = st
    return s


def tt_storage(s, dtype):
    """The tinytorch Storage of a device ``torch.UntypedStorage`` seen as elements of ``dtype``."""
    st = State.native.owner(s) if State.native is not None else getattr(s, "_tinytorch", None)
    if st.__class__ is not Storage:
        # a storage from the C++ allocator (torch.UntypedStorage(n, device=...)), or one PyTorch made over another
        # storage's memory (at::from_blob): a storage's data_ptr is its base address, the key
        st = ALLOCATIONS.get(s.data_ptr())
        if st is None:
            st = _BY_ADDRESS.get(s.data_ptr())
        if st is None:
            raise RuntimeError(f"this {State.name} storage was not made by tinytorch's allocator (its memory is "
                               "not known to the device)")
    return as_dtype(st, dtype)


_dtype_views = weakref.WeakKeyDictionary()  # tinytorch Storage -> {dtype: the Storage seen as that dtype}


def as_dtype(st, dtype):
    """The tinytorch Storage ``st`` seen as elements of ``dtype`` (Tensor.view(dtype)): one reinterpreted
    Storage per dtype, kept while ``st`` lives."""
    if st.dtype is dtype:
        return st
    views = _dtype_views.setdefault(st, {})
    v = views.get(dtype)
    if v is None:
        v = views[dtype] = _reinterpret(st, dtype)
    return v


def _unpack_py(t):
    """(owner, sizes, strides, offset, torch dtype) of a device tensor, None for anything else; ``owner`` is the
    storage's tinytorch Storage, or the torch storage when it has none (the C++ allocator's). The C++ extension's
    ``unpack`` does the same in one call."""
    if isinstance(t, torch.Tensor) and t.device.type == State.name:
        s = t.untyped_storage()
        return getattr(s, "_tinytorch", s), tuple(t.shape), t.stride(), t.storage_offset(), t.dtype
    return None


unpack = _unpack_py  # the C++ one once the extension is registered (init_native)


def from_unpacked(owner, shape, stride, offset, torch_dtype):
    """The tinytorch Tensor of ``unpack``'s answer."""
    dtype = TT_DTYPE[torch_dtype]
    if owner.__class__ is not Storage:
        st = tt_storage(owner, dtype)
    elif owner.dtype is dtype:
        st = owner
    else:
        st = as_dtype(owner, dtype)
    return _new(st, shape, stride, offset, dtype)


def to_tinytorch(t):
    """The tinytorch Tensor over the device tensor ``t``'s memory, with its sizes, strides and offset."""
    u = unpack(t)
    if u is None:
        raise RuntimeError(f"expected a tensor on the {State.name} device")
    return from_unpacked(*u)


_new_tensor = torch._C._acc.create_empty_tensor


def to_torch(x, storage=None):
    """The torch device tensor over the tinytorch Tensor ``x``'s memory (``storage``: the torch storage that
    already wraps it, when there is one)."""
    native = State.native
    if native is not None:  # one C++ call, and the tensor's device index is its storage's
        if storage is None:
            st = x._storage
            nbytes = st.size * st.dtype.itemsize
            return native.wrap(st, nbytes, st.device.index or 0, x._shape, x._stride, x._offset,
                               TORCH_DTYPE[x.dtype])
        return native.make_tensor(storage, x._shape, x._stride, x._offset, TORCH_DTYPE[x.dtype])
    if storage is None:
        storage = torch_storage(x._storage)
    t = _new_tensor((0,), TORCH_DTYPE[x.dtype])
    t.set_(storage, x._offset, x._shape, x._stride)
    return t


# ---- the C++ allocator's side (_native): device memory it hands PyTorch is tinytorch's ------------------------

# address -> the tinytorch uint8 Storage behind it, for every live allocation of the C++ allocator
ALLOCATIONS = {}


def allocate(nbytes, index):
    """A new allocation of ``nbytes`` on device ``index``: a tinytorch uint8 Storage, recorded in
    ``ALLOCATIONS`` under a fresh fake address, which is returned. RuntimeError for a device the platform lacks;
    the tinytorch allocator's error when the device is out of memory."""
    st = tinytorch.empty((nbytes,), dtype=tinytorch.uint8, device=tt_device(check_index(index)))._storage
    address = _reserve(nbytes)
    ALLOCATIONS[address] = st
    return address


def release(address):
    """Forget the allocation at ``address`` (the C++ DataPtr died); its tinytorch Storage goes with the last
    tinytorch tensor over it."""
    ALLOCATIONS.pop(address, None)


def _bytes(st, n):
    return _new(st if st.dtype is tinytorch.uint8 else _reinterpret(st, tinytorch.uint8), (n,), (1,), 0,
                tinytorch.uint8)


def copy_bytes(dst, src, nbytes):
    """Copy ``nbytes`` between two allocations of the C++ allocator, given by base address (the allocator's
    ``copy_data``). RuntimeError for an address that is not the start of a live allocation."""
    try:
        d, s = ALLOCATIONS[dst], ALLOCATIONS[src]
    except KeyError as e:
        raise RuntimeError(f"{State.name}: address {e.args[0]:#x} is not the start of a live allocation of the "
                           "device allocator") from None
    if nbytes:
        _bytes(d, nbytes).copy_(_bytes(s, nbytes))


def resize(storage, nbytes, index):
    """``UntypedStorage.resize_`` on the device: a new allocation of ``nbytes`` holding the bytes both sizes
    share; returns its address, which the C++ side puts in ``storage``. The storage forgets its old tinytorch
    Storage (its memory is freed with it)."""
    old = tt_storage(storage, tinytorch.uint8)
    address = allocate(nbytes, index)
    n = min(nbytes, storage.nbytes())
    if n:
        _bytes(ALLOCATIONS[address], n).copy_(_bytes(old, n))
    storage.__dict__.pop("_tinytorch", None)
    return address


def init_native(native):
    """Register the C++ allocator, device guard and hooks of ``native`` (``_native.load()``) for the device. It
    must run before PyTorch's Python hooks would be registered: PyTorch takes one set per process. RuntimeError
    when PrivateUse1 hooks are registered already."""
    available = State.backend.is_available()
    count = State.backend.device_count() if available else 0
    native.init(count, available, allocate, release, copy_bytes, resize,
                lambda index: State.backend.synchronize(index))
    State.native = native
    global unpack, _reserve
    unpack = native.unpack
    _reserve = native.reserve  # one address counter for the C++ storages and the Python ones
