"""The ``cpu`` backend: storages are flat NumPy arrays and kernels are NumPy calls.

This is the reference backend: every primitive op has a kernel here, and a few composite ops
(softmax, log_softmax) register kernels for speed. Kernels get ``ndarray`` views and must return
arrays that do not alias their inputs.

Each kernel is registered next to its code (``registry.KERNELS``), one topic a module: ``pointwise``,
``reduce``, ``index`` (gather / scatter / indexing / copies), ``linalg`` (matmul, einsum, LAPACK, FFT), ``nn``,
``special`` (erf, erfinv, incomplete gamma) and ``fused`` (in-place kernels, fused optimizer updates);
``malloc`` tunes glibc's malloc for host memory. ``native`` puts the C++ kernels of ``tinytorch._C`` (built by
``pip install``; ``tinytorch/csrc``) in front of the NumPy ones they fall back to.
"""
import numpy as np

from ..._strides import contiguous_strides as _contig
from ..base import Backend
from . import fused, index, linalg, nn, pointwise, reduce, special  # noqa: F401  (importing registers the kernels)
from .malloc import MALLOC_TUNED  # noqa: F401
from .native import NATIVE_INPLACE_KERNELS, NATIVE_KERNELS
from .native import _C

_wrap_contiguous = _C.wrap_contiguous if _C is not None else None
from .registry import INPLACE_KERNELS, KERNELS


def _dense(shape, strides, isz):
    expected = isz
    for n, st in sorted(zip(shape, strides), key=lambda p: p[1]):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


class NumpyBackend(Backend):
    """NumPy on the host: the default ``cpu`` device."""

    kernel_language = "c++"
    codegen = "tinytorch.compiler.codegen_cpp"

    def __init__(self):
        self.kernels = dict(KERNELS)
        self.kernels.update(NATIVE_KERNELS)  # the C++ kernels, each falling back to its NumPy kernel
        self.inplace_kernels = dict(INPLACE_KERNELS)
        self.inplace_kernels.update(NATIVE_INPLACE_KERNELS)

    def alloc(self, numel, dtype):
        """A flat uninitialised buffer; a size the host cannot hold is PyTorch's allocator RuntimeError, raised
        before NumPy tries."""
        from ..._storage import check_alloc
        check_alloc((numel,), dtype)
        return np.empty(numel, dtype=dtype.np)

    def from_numpy(self, arr, device=None):
        return arr

    def to_numpy(self, native):
        return np.array(native, copy=True)

    def reinterpret(self, buf, old_dtype, new_dtype):
        nbytes = buf.size * buf.itemsize
        keep = nbytes - nbytes % new_dtype.itemsize  # whole elements of the new dtype
        return buf[:keep // buf.itemsize].view(new_dtype.np)

    def view(self, buf, dtype, shape, strides, offset):
        isz = buf.itemsize
        if 0 in shape:
            # an empty view reads no memory: its offset may lie past a (possibly empty) buffer's end, which
            # NumPy refuses, so it is built at offset 0
            offset = 0
        try:
            return np.ndarray(shape, buf.dtype, buf, offset * isz, tuple(s * isz for s in strides))
        except ValueError:
            # a byte stride past int64 (``unfold`` with a huge step leaves one window): the stride of a size-1
            # dim is never followed, so NumPy gets 0 there
            return np.ndarray(shape, buf.dtype, buf, offset * isz,
                              tuple(0 if n == 1 else s * isz for s, n in zip(strides, shape)))

    def wrap(self, native, dtype):
        if _wrap_contiguous is not None:
            r = _wrap_contiguous(native, dtype.np)  # the common case in one C call; None: any other layout
            if r is not None:
                return r
        a = native
        if type(a) is not np.ndarray:
            a = np.asarray(a)
        if a.dtype is not dtype.np and a.dtype != dtype.np:
            a = a.astype(dtype.np)
        if a.flags.c_contiguous:
            return a, a.reshape(-1), _contig(a.shape), 0
        isz = a.itemsize
        if a.size and all(s > 0 for s in a.strides) and _dense(a.shape, a.strides, isz):
            # a dense permuted layout (NumPy keeps its inputs' memory order): keep it, as PyTorch's
            # TensorIterator does, instead of copying to row-major
            return a, a.ravel(order="K"), tuple(s // isz for s in a.strides), 0
        a = np.ascontiguousarray(a)
        return a, a.reshape(-1), _contig(a.shape), 0

    def cast(self, native, dtype):
        return native.astype(dtype.np)

    def copy_(self, dst, src):
        np.copyto(dst, src, casting="unsafe")


def get_cpu_capability():
    """The instruction set the native kernels run with, in ``torch.backends.cpu.get_cpu_capability``'s words:
    "AVX2", "AVX512" or "DEFAULT" (scalar loops, or the NumPy kernels when the native ones are not built)."""
    cap = _C.cpu_capability() if _C is not None else ""
    return {"avx2": "AVX2", "avx512": "AVX512"}.get(cap, "DEFAULT")


def set_num_threads(n):
    """Use ``n`` threads for the ``cpu`` backend from now on (``torch.set_num_threads``): the native kernels'
    pool and their BLAS calls, which set the BLAS's count per call, so NumPy outside tinytorch keeps its own.
    Without native GEMMs (or a BLAS without OpenBLAS's thread functions) the NumPy kernels' BLAS is limited
    process-wide instead (threadpoolctl). RuntimeError unless ``n`` is positive."""
    if not isinstance(n, int) or n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    from . import native
    native.set_num_threads(n)
    if not native.blas_threads_per_call():
        import threadpoolctl
        threadpoolctl.threadpool_limits(limits=native.blas_threads(n), user_api="blas")
