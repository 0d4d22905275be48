"""Anomaly detection (``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``): while enabled, the backward
engine checks every gradient a node returns and raises on NaN, naming the node. PyTorch also records the
forward stack trace of each node to print with the error; tinytorch does not (the error names the node)."""
import warnings

from .grad_mode import _ContextDecorator

_anomaly = {"enabled": False, "check_nan": True}


def is_anomaly_enabled():
    """True while anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _anomaly["enabled"]


def is_anomaly_check_nan_enabled():
    """True when anomaly detection also checks gradients for NaN (``torch.is_anomaly_check_nan_enabled``)."""
    return _anomaly["check_nan"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off for the whole process (``torch.set_anomaly_enabled``)."""
    _anomaly["enabled"], _anomaly["check_nan"] = bool(enabled), bool(check_nan)


class _AnomalyMode(_ContextDecorator):
    def __enter__(self):
        self._prev = (_anomaly["enabled"], _anomaly["check_nan"])
        set_anomaly_enabled(self._mode, self._check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self._prev)
        return False


class detect_anomaly(_AnomalyMode):
    """Context manager / decorator enabling anomaly detection: a backward node that returns a gradient with
    NaN raises RuntimeError("Function 'MulBackward0' returned nan values in its 0th output.")."""

    def __init__(self, check_nan=True):
        self._mode, self._check_nan, self._args = True, check_nan, (check_nan,)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)


class set_detect_anomaly(_AnomalyMode):
    """``set_detect_anomaly(mode, check_nan=True)``: sets anomaly detection now; as a context manager, restores
    the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self._mode, self._check_nan, self._args = bool(mode), check_nan, (mode, check_nan)
        self._prev = (_anomaly["enabled"], _anomaly["check_nan"])
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return self
