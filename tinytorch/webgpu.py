"""``tinytorch.webgpu``: the WebGPU device's runtime API (the counterpart of ``torch.mps`` / ``torch.cuda``).

The device is ``webgpu`` (``webgpu:0``): the first WebGPU adapter wgpu-py finds, a high-performance one first.
"""
from .backends.webgpu import runtime as _wg


def _dev():
    d = _wg.device()
    if d is None:
        raise RuntimeError(f"webgpu device is not available: {_wg.unavailable_reason()}")
    return d


def is_available():
    """True when wgpu-py is installed and a WebGPU adapter opens a device."""
    return _wg.device() is not None


def device_count():
    """Number of WebGPU devices tinytorch uses: 1 with an adapter, else 0."""
    return 1 if is_available() else 0


def get_device_name(device=None):
    """The adapter's name and graphics API, e.g. ``'llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)'``."""
    return _dev().name


def current_device():
    """The index of the current WebGPU device: always 0 (tinytorch drives one adapter)."""
    return 0


def synchronize(device=None):
    """Submit the recorded kernels and wait until the device has run them all."""
    _dev().finish()


def memory_allocated(device=None):
    """Bytes held by live tensors on the device (blocks of the caching allocator in use)."""
    return _dev().allocated


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``."""
    return _dev().max_allocated


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (in use + cached free blocks)."""
    return _dev().reserved


def reset_peak_memory_stats(device=None):
    """Start the peak of ``max_memory_allocated`` over at the current allocation."""
    d = _dev()
    d.max_allocated = d.allocated


def empty_cache():
    """Give cached free blocks back to the driver (tensors still alive keep their memory)."""
    d = _wg._DEVICE
    if d is not None:
        d.empty_cache()


def manual_seed(seed):
    """Seed random numbers for webgpu tensors: tinytorch draws them on the host with the default generator and
    copies them over, so the same seed gives the same values on every device."""
    from . import _ops
    return _ops.generator.manual_seed(seed)


manual_seed_all = manual_seed
