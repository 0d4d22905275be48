"""Storage: a flat typed buffer owned by a device backend's allocator."""
from ._modes import _state


class Storage:
    """A flat buffer of ``size`` elements of ``dtype`` on ``device``.

    Tensors are (storage, shape, strides, offset) views; every view of the same memory shares one
    Storage, and so one version counter (``_version``, bumped by in-place writes).
    """

    __slots__ = ("buf", "dtype", "device", "size", "_version", "backend", "inference", "__weakref__")
    sparse = False  # True for the stand-in storage of a sparse tensor (tinytorch/sparse): the dispatcher routes it
    resizable = True  # False for memory borrowed from another owner (``from_numpy``): resize_ cannot grow it

    def __init__(self, buf, dtype, device, size, backend):
        self.backend = backend
        self.buf = buf
        self.dtype = dtype
        self.device = device
        self.size = size
        self._version = [0]
        # allocated under inference_mode: its tensors are inference tensors (PyTorch's rule, per allocation)
        self.inference = _state.inference

    def nbytes(self):
        return self.size * self.dtype.itemsize

    def __len__(self):
        return self.size

    def __repr__(self):
        return f"Storage(size={self.size}, dtype={self.dtype}, device={self.device})"


class BorrowedStorage(Storage):
    """A Storage over memory another library owns (``from_numpy``'s array): it cannot grow, so a ``resize_`` (or
    an ``out=`` argument) that needs more elements raises "Trying to resize storage that is not resizable", as
    PyTorch's storage over a NumPy array."""

    __slots__ = ()
    resizable = False


def host_address(buf):
    """The address of a host buffer's first byte; a buffer without one (a device handle) is named by its id."""
    if hasattr(buf, "__array_interface__"):
        return buf.__array_interface__["data"][0]
    return id(buf)


# ---- allocation limits ------------------------------------------------------------------------------------
_INT64_MAX = (1 << 63) - 1
_host_memory = []


def _memory_limit():
    """Bytes one host allocation may take: physical memory plus swap. Linux's default overcommit heuristic
    refuses a single larger request, which is where PyTorch's CPU allocator fails; checking first keeps NumPy
    from ever trying."""
    if not _host_memory:
        limit = _INT64_MAX
        try:
            import os
            limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith("SwapTotal:"):
                        limit += int(line.split()[1]) * 1024
        except (OSError, ValueError, AttributeError):  # pragma: no cover - non-Linux hosts
            pass
        _host_memory.append(limit)
    return _host_memory[0]


def alloc_error(nbytes):
    """PyTorch's RuntimeError for a CPU allocation that cannot be served."""
    return RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
                        f"you tried to allocate {nbytes} bytes. Error code 12 (Cannot allocate memory)")


def check_alloc(shape, dtype):
    """Refuse, before anything is allocated, a tensor of ``shape`` and ``dtype`` whose size does not fit in
    int64 ("Storage size calculation overflowed", as PyTorch) or exceeds the host's memory (PyTorch's
    allocator error). Returns the number of elements."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    if nbytes > _INT64_MAX or n > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if nbytes > _memory_limit():
        raise alloc_error(nbytes)
    return n


def translate_alloc_error(e):
    """The PyTorch exception for an allocation failure ``e`` raised by NumPy (MemoryError, or the ValueError
    NumPy raises for a size that overflows), or None when ``e`` is something else."""
    if isinstance(e, MemoryError):
        shape, dt = getattr(e, "shape", None), getattr(e, "dtype", None)
        nbytes = 0
        if shape is not None and dt is not None:
            nbytes = dt.itemsize
            for s in shape:
                nbytes *= s
        return alloc_error(nbytes)
    if isinstance(e, ValueError) and str(e).startswith(("array is too big", "Maximum allowed dimension exceeded")):
        return RuntimeError(f"Storage size calculation overflowed: {e}")
    return None
