"""The ``meta`` device: tensors with shape, dtype and strides but no data.

No kernel ever runs: the dispatcher builds outputs from the op's meta function, so shape inference,
type promotion, autograd graphs and module construction work (``nn.Linear(10**5, 10**5,
device="meta")`` is instant). Ops whose output shape depends on data (boolean masks, ``nonzero``)
raise NotImplementedError, as reading values does.
"""
from .._strides import contiguous_strides, numel
from .base import Backend


class MetaArray:
    """Stand-in for device memory: only a size."""

    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


class MetaView:
    __slots__ = ("shape", "strides", "offset", "dtype")

    def __init__(self, shape, strides, offset, dtype):
        self.shape, self.strides, self.offset, self.dtype = shape, strides, offset, dtype


class MetaBackend(Backend):
    shape_only = True

    def __init__(self):
        self.kernels = {}

    def alloc(self, n, dtype):
        return MetaArray(n)

    def from_numpy(self, arr, device=None):
        return MetaArray(arr.size)

    def to_numpy(self, native):
        raise NotImplementedError("Cannot copy out of meta tensor; no data! Use a real device for values")

    def reinterpret(self, buf, old_dtype, new_dtype):
        return MetaArray(buf.size * old_dtype.itemsize // new_dtype.itemsize)

    def view(self, buf, dtype, shape, strides, offset):
        return MetaView(shape, strides, offset, dtype)

    def empty(self, shape, dtype):
        return MetaView(shape, contiguous_strides(shape), 0, dtype), MetaArray(numel(shape))

    def cast(self, native, dtype):
        return MetaView(native.shape, native.strides, native.offset, dtype)

    def copy_(self, dst, src):
        pass
