"""The backend interface.

A backend is an *allocator* (memory for storages, copies host<->device) plus a table of *kernels*
keyed by op name. Kernels receive backend-native arrays (whatever ``view`` returns: for NumPy an
``ndarray`` view with the tensor's shape, strides and offset) and keyword attributes, and return new
native arrays. They never see ``Tensor`` or autograd. ``docs/backends.md`` lists the primitive ops.
"""


class Backend:
    """Base class of device backends. Subclasses fill ``kernels`` and implement the allocator."""

    name = None
    kernels = None
    shape_only = False  # True for the meta device: outputs come from the meta functions, no kernels run
    # optional: {op name: fn(dst, *args)} writing op(dst, *args) into dst, used by in-place ops outside autograd
    inplace_kernels = {}

    def device_count(self):
        return 1

    # -- allocator --
    def alloc(self, numel, dtype):
        """A new, uninitialised flat buffer of ``numel`` elements."""
        raise NotImplementedError

    def is_available(self):
        """False when the device cannot be used here (no driver, no platform); ``unavailable_reason`` says why."""
        return True

    def unavailable_reason(self):
        return None

    def from_numpy(self, arr, device=None):
        """A buffer on ``device`` (a ``tinytorch.device``) holding a copy of the flat, C-contiguous host array."""
        raise NotImplementedError

    def to_numpy(self, native):
        """A host ``ndarray`` copy of the native array."""
        raise NotImplementedError

    # -- tensors <-> native arrays --
    def view(self, buf, dtype, shape, strides, offset):
        """The native array seen by kernels for a strided region of ``buf``."""
        raise NotImplementedError

    def wrap(self, native, dtype):
        """``(native, buffer, strides, offset)`` for a kernel result of dtype ``dtype``."""
        raise NotImplementedError

    def reinterpret(self, buf, old_dtype, new_dtype):
        """Optional: a buffer sharing ``buf``'s memory whose elements are ``new_dtype`` (for
        ``Tensor.view(dtype)``). Backends whose buffers are untyped bytes return ``buf`` itself."""
        raise NotImplementedError(f"Tensor.view(dtype) is not supported on the '{self.name}' device: its backend "
                                  "does not implement Backend.reinterpret")

    def cast(self, native, dtype):
        """A new native array with ``native``'s values converted to ``dtype``."""
        raise NotImplementedError

    def copy_(self, dst, src):
        """Write ``src`` (broadcast to ``dst``'s shape, converted to its dtype) into ``dst`` in place."""
        raise NotImplementedError

    def synchronize(self):
        pass

    def memory_allocated(self):
        return 0
