"""``CUDABackend``: the ``cuda`` device. The ``opencl`` backend's kernels (every module of ``backends/opencl``) on
NVIDIA's driver: the runtime is ``runtime.py`` (NVRTC, the caching allocator, one stream), the GEMMs are cuBLAS
(``blas.py``); the rest is inherited."""
import functools

from ..opencl.backend import OpenCLBackend
from . import blas, graphs
from .runtime import _devices, unavailable_reason


class CUDABackend(OpenCLBackend):
    """NVIDIA GPUs: ``cuda:0`` .. ``cuda:N-1`` (the driver's device order)."""

    _devices = staticmethod(_devices)
    _unavailable = staticmethod(unavailable_reason)
    dtypes = frozenset(OpenCLBackend.dtypes | {"bfloat16"})

    def __init__(self):
        super().__init__()
        # cuBLAS for the float GEMMs; integer matmuls keep the generated kernel
        for name, fn in (("matmul", blas.matmul), ("linear", blas.linear)):
            self.kernels[name] = functools.partial(_float_or, fn, self.kernels[name], self)

    def _check_dtype(self, dtype, dev):
        if dtype.name not in self.dtypes:
            raise TypeError(f"cuda: dtype {dtype} is not supported by tinytorch's cuda device")

    def memory_reserved(self, index=None):
        return self._dev(index).reserved

    def graphed(self, run):
        """A compiled plan's ``run`` replayed as one CUDA graph (``mode="reduce-overhead"``, as PyTorch's)."""
        return graphs.graphed(run)


def _float_or(fast, general, be, *args, **kw):
    first = args[0]
    if first.dtype.name in blas.DTYPES and all(a is None or a.dtype is first.dtype for a in args):
        return fast(be, *args, **kw)
    return general(*args, **kw)


# the opencl backend's float GEMM kernels, which cuBLAS replaces on this device
_CUBLAS_KEYS = ("matmul", "matmul_vec", "matmul_nt")


def runs_on_cuda(key):
    """Whether the opencl kernel of cache key ``key`` (its name, then its dtype) is one the cuda device builds:
    all but the float GEMMs, which are cuBLAS calls here."""
    return not (key[0] in _CUBLAS_KEYS and len(key) > 1 and key[1] in blas.DTYPES)
