"""A third-party device defined only through tinytorch's public backend API, as a new accelerator's package would.

Its "device memory" is a NumPy array hidden behind a small handle class, and it registers kernels for
the primitive ops only — no softmax, log_softmax, im2col or col2im kernels — so every composite op
reaches it through its decomposition. Training a model on it proves the primitive set is sufficient.
"""
import numpy as np

import tinytorch
from tinytorch._dispatch import OPS
from tinytorch.backends.base import Backend
from tinytorch.backends.cpu import KERNELS


class DevBuffer:
    """Device memory: a flat array the rest of tinytorch never touches directly."""

    def __init__(self, flat):
        self.flat = flat
        self.size = flat.size


class DevArray:
    """What kernels receive: a strided window of a DevBuffer."""

    __slots__ = ("arr",)

    def __init__(self, arr):
        self.arr = arr

    @property
    def shape(self):
        return self.arr.shape


def _unwrap(x):
    return x.arr if isinstance(x, DevArray) else x


def _kernel(fn):
    def k(*args, **kw):
        out = fn(*(_unwrap(a) for a in args), **kw)
        if isinstance(out, tuple):
            return tuple(DevArray(np.asarray(o)) for o in out)
        return DevArray(np.asarray(out))
    return k


class MyDevBackend(Backend):
    """Two 'devices' (mydev:0, mydev:1), primitive kernels only."""

    def __init__(self):
        self.kernels = {name: _kernel(fn) for name, fn in KERNELS.items() if OPS[name].decomp is None}
        self.allocated = 0

    def device_count(self):
        return 2

    def alloc(self, numel, dtype):
        self.allocated += numel * dtype.itemsize
        return DevBuffer(np.zeros(numel, dtype.np))

    def from_numpy(self, arr, device=None):
        return DevBuffer(np.array(arr, copy=True))

    def to_numpy(self, native):
        return np.array(native.arr, copy=True)

    def view(self, buf, dtype, shape, strides, offset):
        isz = buf.flat.itemsize
        return DevArray(np.ndarray(shape, buf.flat.dtype, buf.flat, offset * isz, tuple(s * isz for s in strides)))

    def wrap(self, native, dtype):
        a = np.asarray(native.arr, dtype=dtype.np, order="C")
        return DevArray(a), DevBuffer(a.reshape(-1)), tinytorch._strides.contiguous_strides(a.shape), 0

    def cast(self, native, dtype):
        return DevArray(native.arr.astype(dtype.np))

    def copy_(self, dst, src):
        np.copyto(dst.arr, _unwrap(src), casting="unsafe")


def register():
    if not tinytorch.device_module_registered("mydev"):
        tinytorch.register_backend("mydev", MyDevBackend())
