"""``tinytorch.cuda``: tinytorch has no CUDA backend, so scripts that ask get an honest "no".

``is_available()`` is False and ``device_count()`` 0, so the common
``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the cpu. GPUs without CUDA are reached
through ``tinytorch.opencl``.
"""


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """No CUDA generator exists; accepted (as PyTorch does when CUDA is absent) and ignored."""


manual_seed_all = manual_seed


def synchronize(device=None):
    from .device import no_cuda
    raise no_cuda()


class _AmpNamespace:
    """``torch.cuda.amp``: GradScaler and autocast, which (as torch's without CUDA) warn and disable
    themselves."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast
        from . import _dtype
        return autocast("cuda", dtype or _dtype.float16, enabled, cache_enabled)

    @staticmethod
    def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        from .amp import GradScaler
        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = _AmpNamespace()


# the answers of a CPU-only PyTorch build: no CUDA memory, no bfloat16 support, no current device
def is_bf16_supported(including_emulation=True):
    return False


def empty_cache():
    """Nothing to free: there is no CUDA memory."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def _not_compiled(*args, **kwargs):
    from .device import no_cuda
    raise no_cuda()


current_device = get_device_name = get_device_capability = set_device = mem_get_info = _not_compiled
