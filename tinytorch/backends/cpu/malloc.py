"""glibc malloc tuning for the ``cpu`` backend's host memory, applied once at import (``MALLOC_TUNED``)."""
import ctypes
import os
import sys


def _keep_freed_host_memory():
    """Make glibc's malloc keep freed blocks of up to 32 MB for reuse instead of returning them to the OS.

    By default glibc serves blocks above 128 KB with fresh ``mmap`` pages and gives them back on ``free``, so
    each large temporary (im2col columns, activations) page-faults on first touch: on this project's VMs that
    halved the LeNet train step. Raising the mmap and trim thresholds gives NumPy's allocations the reuse a
    caching allocator gives PyTorch's GPU tensors. Returns True when applied; ``TINYTORCH_MALLOC_TUNING=0`` opts
    out, and other C libraries are left alone.
    """
    if not sys.platform.startswith("linux") or os.environ.get("TINYTORCH_MALLOC_TUNING", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # pragma: no cover - musl and other C libraries
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 256 << 20))


MALLOC_TUNED = _keep_freed_host_memory()
