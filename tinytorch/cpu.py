"""``torch.cpu``: the runtime API of the ``cpu`` device (NumPy), for code that is written against
``torch.<device>`` modules generically."""
from . import amp as _amp


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    """The cpu device has one index: nothing to select."""


def synchronize(device=None):
    """NumPy kernels run synchronously: nothing to wait for."""


def is_initialized():
    return True


class _AmpNamespace:
    """``torch.cpu.amp``: the older spelling of ``torch.autocast('cpu')``."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from . import _dtype
        return _amp.autocast("cpu", dtype or _dtype.bfloat16, enabled, cache_enabled)


amp = _AmpNamespace()
