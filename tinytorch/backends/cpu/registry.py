"""The ``cpu`` backend's kernel tables. Each topic module registers its kernels where it writes them, with
``@KERNELS.register(name)`` or ``KERNELS.add(name, fn)``; ``INPLACE_KERNELS`` holds the optional in-place
kernels (``Backend.inplace_kernels``)."""
import numpy as np

from ..base import KernelTable

KERNELS = KernelTable("cpu")
INPLACE_KERNELS = KernelTable("cpu")


def _quiet():
    return np.errstate(all="ignore")


def _f(fn):
    """Wrap a NumPy function so IEEE warnings are silent, as in PyTorch (inf/nan are results, not errors)."""
    def k(*a, **kw):
        with _quiet():
            return fn(*a, **kw)
    k.__name__ = getattr(fn, "__name__", "kernel")
    return k
