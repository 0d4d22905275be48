"""Storage: a flat typed buffer owned by a device backend's allocator."""
from .autograd.grad_mode import _state


class Storage:
    """A flat buffer of ``size`` elements of ``dtype`` on ``device``.

    Tensors are (storage, shape, strides, offset) views; every view of the same memory shares one
    Storage, and so one version counter (``_version``, bumped by in-place writes).
    """

    __slots__ = ("buf", "dtype", "device", "size", "_version", "backend", "inference", "__weakref__")

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
