"""``torch.accelerator``: the device-agnostic runtime API. The accelerator is the first available registered
device other than ``cpu`` and ``meta`` (``opencl`` when an OpenCL platform exists, else a third-party device
registered with ``tinytorch.register_backend``), so code written as

    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

runs on a GPU through OpenCL where there is one."""
from .device import _BACKENDS, device as _device

_index = [0]


def current_accelerator(check_available=False):
    """The accelerator's device type as a device without index, or None when there is none."""
    for name, backend in _BACKENDS.items():
        if name in ("cpu", "meta"):
            continue
        try:
            ok = backend.is_available() and backend.device_count() > 0
        except Exception:  # a backend that cannot even probe its devices is not available
            ok = False
        if ok:
            return _device(name)
    return None


def is_available():
    """True when there is an accelerator (see the module docstring)."""
    return current_accelerator() is not None


def _backend():
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError("torch.accelerator: no accelerator is available (tinytorch found no available device "
                           "besides cpu)")
    return _BACKENDS[acc.type]


def device_count():
    """Number of devices of the accelerator type (0 when there is none)."""
    acc = current_accelerator()
    return _BACKENDS[acc.type].device_count() if acc is not None else 0


def current_device_index():
    _backend()
    return _index[0]


current_device_idx = current_device_index


def set_device_index(device):
    n = _backend().device_count()
    idx = device if isinstance(device, int) else (_device(device).index or 0)
    if not 0 <= idx < n:
        raise RuntimeError(f"torch.accelerator: device index {idx} is out of range ({n} device(s))")
    _index[0] = idx


set_device_idx = set_device_index


def synchronize(device=None):
    """Wait for the accelerator's queued kernels to finish."""
    _backend().synchronize()


def memory_allocated(device_index=None):
    return _backend().memory_allocated()
