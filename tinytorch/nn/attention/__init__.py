"""``torch.nn.attention``: choose which scaled-dot-product-attention kernels may run (``SDPBackend``,
``sdpa_kernel``); ``bias`` (causal masks as ``attn_mask``) and ``flex_attention`` are submodules.

tinytorch computes attention one way (the math kernel); the switches decide, as PyTorch's do, when a call
finds no kernel it may use (tinytorch/backends/_sdp.py has the rule). Source: torch/nn/attention/__init__.py
(PyTorch 2.13).
"""
import contextlib
import enum

from ...backends import _sdp

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# When True, the lower-right CausalBias path warns why fused kernels were not used (tinytorch has none).
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled-dot-product-attention kernels, numbered as PyTorch's (``int(SDPBackend.MATH) == 0``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__

    def __str__(self):
        return f"SDPBackend.{self.name}"


# switch name (as in torch.backends.cuda.enable_<name>_sdp) -> backend
_SWITCHES = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
             "overrideable": SDPBackend.OVERRIDEABLE}


def _cur_sdpa_kernel_backends(with_priority=False):
    """The backends allowed now (in priority order when ``with_priority``)."""
    on = [b for name, b in _SWITCHES.items() if _sdp.enabled(name)]
    if with_priority:
        order = _sdp.priority()
        on.sort(key=lambda b: order.index(int(b)))
    return on


def _sdpa_kernel(backends, set_priority=False):
    for name, b in _SWITCHES.items():
        _sdp.set_enabled(name, b in backends)
    if set_priority:
        order = [int(b) for b in backends]
        order += [b for b in _sdp.priority() if b not in order]
        _sdp.set_priority(order)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block (or the decorated function), let ``F.scaled_dot_product_attention`` use only
    ``backends`` (an SDPBackend or a list of them); with ``set_priority`` their order in the list also becomes
    the order they are tried in. The previous switches (and order) come back on exit, even on an exception.
    AssertionError when ``backends`` is neither an SDPBackend nor a list. Yields ``{}`` as PyTorch."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


def _get_flash_version():
    """The flash-attention version PyTorch reports (its bundled kernels' version)."""
    return "2.5.7"


from . import bias  # noqa: E402,F401
