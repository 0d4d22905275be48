"""``torch.storage``: the public storage types, ``UntypedStorage`` (bytes) and the deprecated ``TypedStorage``.

tinytorch's tensors view an internal, typed ``tinytorch._storage.Storage``; ``Tensor.untyped_storage()`` returns
an ``UntypedStorage`` over the same memory: its bytes, its ``data_ptr()`` and ``nbytes()``, which is what
safetensors, ``save_pretrained`` and accelerate use to find tensors sharing memory. As in PyTorch, each call
returns a new Python object; two storages are the same memory when their ``data_ptr()`` agree.

Byte reads and writes (indexing, ``fill_``, ``copy_``, ``tolist``) run as ops on a uint8 tensor over the storage, so
every device's storages work. Source: PyTorch's ``torch/storage.py`` and its storage documentation.
"""
import copy as _copy
import os
import warnings

import numpy as np

from . import _dtype as _dt
from ._dispatch import _reinterpret
from ._storage import Storage, host_address as _host_address
from ._tensor import Tensor
from .device import as_device

__all__ = ["UntypedStorage", "TypedStorage", "asarray", "from_file"]


def _empty_bytes(nbytes, device):
    from ._ops.creation import empty
    return empty(nbytes, dtype=_dt.uint8, device=device)._storage


def _bytes_of(st):
    return st if st.dtype is _dt.uint8 else _reinterpret(st, _dt.uint8)


class _StorageBase:
    """What both storage types read and write through ``_tensor()``, a 1-D tensor over their memory (a uint8 one
    for UntypedStorage, one of its dtype for TypedStorage): PyTorch's ``_StorageBase``."""

    __slots__ = ()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        """The elements (bytes for an UntypedStorage) as a list of Python numbers."""
        return self._tensor().tolist()

    def fill_(self, value):
        self._tensor().fill_(value)
        return self


class UntypedStorage(_StorageBase):
    """``torch.UntypedStorage``: ``nbytes`` bytes of memory on a device, shared by the tensors that view it.

    ``UntypedStorage(size=0, *, device=None)`` allocates ``size`` bytes (uninitialised); ``UntypedStorage(sequence)``
    holds the byte values of a sequence of ints. Indexing reads and writes single bytes (``int`` in [0, 255]); a
    slice is a storage over part of the same memory.
    """

    __slots__ = ("_st", "_byte_offset", "_nbytes")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args, device=None):
        if len(args) > 1:
            raise TypeError(f"UntypedStorage(): expected at most 1 positional argument, got {len(args)}")
        arg = args[0] if args else 0
        if isinstance(arg, (list, tuple)):
            st = _empty_bytes(len(arg), device)
            self._init(st, 0, len(arg))
            if arg:
                from ._ops.creation import tensor
                self._tensor().copy_(tensor(list(arg), dtype=_dt.uint8))
            return
        try:
            n = int(arg) if not isinstance(arg, (float, bool)) else None
        except TypeError:
            n = None
        if n is None:
            raise TypeError(f"UntypedStorage(): argument 'size' must be int, not {type(arg).__name__}")
        if n < 0:
            raise RuntimeError(f"Storage size must be non-negative, got {n}")
        self._init(_empty_bytes(n, device), 0, n)

    def _init(self, st, byte_offset, nbytes):
        self._st = st
        self._byte_offset = byte_offset
        self._nbytes = nbytes

    @classmethod
    def _wrap(cls, st, byte_offset=0, nbytes=None):
        """The bytes of an internal ``Storage`` (all of it by default)."""
        self = object.__new__(cls)
        self._init(st, byte_offset, st.nbytes() - byte_offset if nbytes is None else nbytes)
        return self

    def _tensor(self):
        """A 1-D uint8 tensor over these bytes: byte reads and writes go through the dispatcher as ops."""
        from ._tensor import _new
        b = _bytes_of(self._st)
        return _new(b, (self._nbytes,), (1,), self._byte_offset, _dt.uint8)

    # ---- what libraries read --------------------------------------------------------------------------------
    @property
    def device(self):
        return self._st.device

    @property
    def is_cuda(self):
        return self._st.device.type == "cuda"

    def nbytes(self):
        """The size in bytes."""
        return self._nbytes

    def size(self):
        """The size in bytes (an UntypedStorage's elements are bytes)."""
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        """The address of the first byte (on a host device; a device buffer's handle is named by its id)."""
        return _host_address(self._st.buf) + self._byte_offset

    def type(self):
        return "torch.storage.UntypedStorage"

    def _version(self):
        return self._st._version[0]

    # ---- bytes ------------------------------------------------------------------------------------------------
    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self._nbytes)
            if step != 1:
                raise RuntimeError("slices with steps are not supported by UntypedStorage")
            return UntypedStorage._wrap(self._st, self._byte_offset + start, max(stop - start, 0))
        i = self._index(idx)
        return int(self._tensor()[i].item())

    def __setitem__(self, idx, value):
        if isinstance(idx, slice):
            self[idx].fill_(value)
            return
        self._tensor()[self._index(idx)] = value

    def _index(self, idx):
        i = int(idx)
        if not -self._nbytes <= i < self._nbytes:
            raise IndexError(f"index {i} out of range for storage of size {self._nbytes}")
        return i + self._nbytes if i < 0 else i

    def zero_(self):
        return self.fill_(0)

    def copy_(self, source, non_blocking=None):
        """Copy the bytes of ``source`` (a storage of the same size) into this one."""
        if not isinstance(source, (UntypedStorage, TypedStorage)):
            raise TypeError(f"copy_(): argument 'source' must be a storage, not {type(source).__name__}")
        src = source.untyped() if isinstance(source, TypedStorage) else source
        if src.nbytes() != self._nbytes:
            raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src was {src.nbytes()} bytes")
        self._tensor().copy_(src._tensor())
        return self

    def clone(self):
        """A copy of the bytes in new memory on the same device."""
        out = UntypedStorage(self._nbytes, device=self.device)
        return out.copy_(self)

    def to(self, *, device=None, non_blocking=False):
        from .device import device as _device
        dev = _device(device) if device is not None else self.device
        if dev == self.device:
            return self
        out = UntypedStorage(self._nbytes, device=dev)
        out._tensor().copy_(self._tensor())
        return out

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to(device="cuda" if device is None else device)

    def untyped(self):
        return self

    # ---- sharing and files ------------------------------------------------------------------------------------
    def is_shared(self):
        """Whether the memory is shared between processes (a file mapped with ``shared=True``)."""
        return isinstance(getattr(self._st.buf, "base", None), np.memmap) and self._st.buf.base.mode == "r+"

    def is_pinned(self, device="cuda"):
        return False

    def pin_memory(self, device="cuda"):
        raise RuntimeError("Cannot access accelerator device when none is available.")

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """Bytes mapped from ``filename`` (``torch.UntypedStorage.from_file``).

        ``shared=True``: writes reach the file and other processes mapping it; the file is created or grown to
        ``nbytes`` if needed. ``shared=False``: writes stay private (copy on write), and the file must hold at least
        ``nbytes`` bytes (RuntimeError otherwise).
        """
        nbytes = int(nbytes)
        if shared:
            fd = os.open(filename, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if os.fstat(fd).st_size < nbytes:
                    os.ftruncate(fd, nbytes)
            finally:
                os.close(fd)
        else:
            size = os.path.getsize(filename) if os.path.exists(filename) else -1
            if size < 0:
                raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory (2)")
            if size < nbytes:
                raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required mapping size <{nbytes}>")
        if nbytes == 0:
            return cls(0)
        mapped = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        from .backends.cpu import NumpyBackend  # noqa: F401  (the cpu backend owns host buffers)
        from ._dispatch import _cpu_backend
        from .device import device as _device
        st = Storage(mapped[:], _dt.uint8, _device("cpu"), nbytes, _cpu_backend())
        return cls._wrap(st)

    @classmethod
    def from_buffer(cls, buffer, byte_order="native", count=-1, offset=0, dtype=None):
        """A copy of a Python buffer's bytes (``torch.UntypedStorage.from_buffer``)."""
        data = np.frombuffer(buffer, dtype=np.uint8, count=count, offset=offset)
        out = cls(len(data))
        if len(data):
            _bytes_of(out._st).buf[:len(data)] = data
        return out

    # ---- printing and pickling ----------------------------------------------------------------------------------
    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        tail = f"[torch.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]"
        return f"{body}\n{tail}" if body else tail

    def __reduce__(self):
        return (_rebuild_untyped, (bytes(bytearray(self.tolist())), str(self.device)))

    def __copy__(self):
        return UntypedStorage._wrap(self._st, self._byte_offset, self._nbytes)

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())

    def __sizeof__(self):
        return super().__sizeof__() + self._nbytes


def _rebuild_untyped(data, device):
    return UntypedStorage.from_buffer(data).to(device=device)


_warned = [False]


def _warn_typed_storage_removal(stacklevel=2):
    """PyTorch's deprecation warning for TypedStorage, given once per process as PyTorch gives it."""
    if _warned[0]:
        return
    _warned[0] = True
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                  UserWarning, stacklevel=stacklevel + 1)


class TypedStorage(_StorageBase):
    """``torch.TypedStorage`` (deprecated in PyTorch, still returned by ``Tensor.storage()``): a storage's memory seen
    as elements of ``dtype``; ``size()`` counts elements, ``untyped()`` gives the bytes."""

    __slots__ = ("_untyped_storage", "dtype")
    is_sparse = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        dtype = _dt.get_default_dtype() if dtype is None else dtype
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage(): 'wrap_storage' cannot be given with positional arguments")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a UntypedStorage for 'wrap_storage', got {type(wrap_storage).__name__}")
            self._untyped_storage, self.dtype = wrap_storage, dtype
            return
        arg = args[0] if args else 0
        if isinstance(arg, (list, tuple)):
            from ._ops.creation import tensor
            t = tensor(list(arg), dtype=dtype, device=device)
            self._untyped_storage, self.dtype = UntypedStorage._wrap(t._storage), dtype
            return
        from ._ops.creation import empty
        t = empty(int(arg), dtype=dtype, device=device)
        self._untyped_storage, self.dtype = UntypedStorage._wrap(t._storage), dtype

    @classmethod
    def _wrap(cls, untyped, dtype):
        self = object.__new__(cls)
        self._untyped_storage, self.dtype = untyped, dtype
        return self

    def _tensor(self):
        from ._tensor import _new
        u = self._untyped_storage
        st = u._st if u._st.dtype is self.dtype else _reinterpret(u._st, self.dtype)
        isz = self.dtype.itemsize
        return _new(st, (u.nbytes() // isz,), (1,), u._byte_offset // isz, self.dtype)

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def size(self):
        """The number of ``dtype`` elements."""
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def untyped(self):
        """The bytes: an ``UntypedStorage`` over the same memory."""
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped):
        return TypedStorage._wrap(untyped, self.dtype)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self.size())
            if step != 1:
                raise RuntimeError("slices with steps are not supported by TypedStorage")
            isz = self.dtype.itemsize
            return TypedStorage._wrap(self._untyped_storage[start * isz:max(stop, start) * isz], self.dtype)
        n = self.size()
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return self._tensor()[i].item()

    def __setitem__(self, idx, value):
        self._tensor()[idx] = value

    def copy_(self, source, non_blocking=None):
        self._untyped_storage.copy_(source)
        return self

    def clone(self):
        return TypedStorage._wrap(self._untyped_storage.clone(), self.dtype)

    def cpu(self):
        return TypedStorage._wrap(self._untyped_storage.cpu(), self.dtype)

    def is_shared(self):
        return self._untyped_storage.is_shared()

    def type(self):
        from ._utils import _STORAGE
        return f"torch.{_STORAGE.get(self.dtype.name, 'TypedStorage')}"

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        tail = f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"
        return f"{body}\n{tail}" if body else tail

    def __reduce__(self):
        return (TypedStorage._wrap, (self._untyped_storage, self.dtype))

    def __copy__(self):
        return TypedStorage._wrap(_copy.copy(self._untyped_storage), self.dtype)

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())


# ---- constructors over existing memory: torch.asarray (which takes storages too) and torch.from_file ----------
def _scalar_type_name(d):
    return _dt._SCALAR_TYPE.get(d.name, d.name)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``obj`` as a tensor, sharing its memory when it can (``torch.asarray``).

    ``obj``: a tensor, a NumPy array, a storage, an object with the buffer protocol (bytes, bytearray, memoryview,
    array.array; read as ``dtype``, default the default float dtype), or a scalar / nested sequence (always copied).
    ``copy=None`` shares memory unless a dtype or device conversion needs a copy; ``copy=True`` always copies;
    ``copy=False`` never does and raises ValueError where it would have to, with PyTorch's messages.
    A storage without ``dtype`` is read as int64, as PyTorch does.
    """
    from ._ops.creation import _has_buffer, frombuffer, from_numpy, tensor
    dtype = _dt.as_dtype(dtype, "asarray")
    dev = as_device(device)
    if isinstance(obj, (UntypedStorage, TypedStorage)):
        untyped = obj.untyped() if isinstance(obj, TypedStorage) else obj
        want = dtype or (obj.dtype if isinstance(obj, TypedStorage) else _dt.int64)
        t = TypedStorage._wrap(untyped, want)._tensor()
    elif isinstance(obj, Tensor):
        t = obj
    elif isinstance(obj, np.ndarray):
        t = from_numpy(obj)
    elif not isinstance(obj, (list, tuple)) and _has_buffer(obj):
        t = frombuffer(obj, dtype=dtype or _dt.get_default_dtype())
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        t = tensor(obj, dtype=dtype, device=device)
        return t.requires_grad_() if requires_grad else t
    if dtype is not None and t.dtype is not dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_scalar_type_name(t.dtype)}' into dtype "
                             f"'{_scalar_type_name(dtype)}'.")
        t, copy = t.to(dtype=dtype), None
    if dev is not None and t.device != dev:
        if copy is False:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{dev}'.")
        t, copy = t.to(device=dev), None
    if copy:
        t = t.clone()
    return t.requires_grad_() if requires_grad else t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D cpu tensor of ``size`` elements of ``dtype`` (default: the default dtype) mapped from ``filename``
    (``torch.from_file``): with ``shared=True`` writes reach the file (created or grown as needed), otherwise they
    stay private and the file must be large enough (RuntimeError)."""
    from ._ops.creation import empty
    dtype = _dt.as_dtype(dtype, "from_file") or _dt.get_default_dtype()
    size = int(size)
    u = UntypedStorage.from_file(filename, bool(shared), size * dtype.itemsize)
    t = TypedStorage._wrap(u, dtype)._tensor() if size else empty(0, dtype=dtype)
    if device is not None and as_device(device) != t.device:
        t = t.to(device=device)
    return t.requires_grad_() if requires_grad else t
