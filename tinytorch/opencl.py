"""``tinytorch.opencl``: the OpenCL device's runtime API (the counterpart of ``torch.cuda``).

Devices are ``opencl:0`` .. ``opencl:N-1`` over every OpenCL platform found by pyopencl, GPUs first.
"""
from . import _ops
from .backends.opencl import runtime as _cl
from .device import get_backend as _get_backend


def _backend():
    return _get_backend("opencl")


def _index(device):
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    from .device import as_device
    return as_device(device).index or 0


def is_available():
    """True when pyopencl is installed and at least one OpenCL device exists."""
    return _cl.unavailable_reason() is None


def device_count():
    """Number of OpenCL devices (0 without pyopencl or a platform)."""
    return len(_cl._devices()) if _cl.cl is not None else 0


def get_device_name(device=None):
    return _backend().dev_for(_index(device)).name


def current_device():
    return 0


def synchronize(device=None):
    """Wait until every kernel queued on the device has finished."""
    _backend().dev_for(_index(device)).queue.finish()


def memory_allocated(device=None):
    """Bytes held by live tensors on the device (blocks of the caching allocator in use)."""
    return _backend().dev_for(_index(device)).allocated


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``."""
    return _backend().dev_for(_index(device)).max_allocated


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (in use + cached free blocks)."""
    return _backend().dev_for(_index(device)).reserved


def reset_peak_memory_stats(device=None):
    d = _backend().dev_for(_index(device))
    d.max_allocated = d.allocated


def empty_cache():
    """Give cached free blocks back to the driver (tensors still alive keep their memory)."""
    for lazy in _cl._devices():
        if lazy.dev is not None:
            lazy.dev.empty_cache()


def manual_seed(seed):
    """Seed random numbers for OpenCL tensors. tinytorch draws them on the host with the default generator and
    copies them over, so the same seed gives the same values on every device."""
    return _ops.generator.manual_seed(seed)


manual_seed_all = manual_seed
