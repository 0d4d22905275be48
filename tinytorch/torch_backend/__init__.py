"""tinytorch's devices inside real PyTorch: the ``opencl`` device as PyTorch's PrivateUse1 backend.

In a process running real ``torch`` (2.13)::

    import torch
    import tinytorch.torch_backend          # or TINYTORCH_TORCH_AUTOLOAD=1: `import torch` loads it

    x = torch.randn(3, device="opencl")
    model.to("opencl")

PyTorch's out-of-tree device mechanism (PrivateUse1, renamed to ``opencl``) is set up the way PyTorch's own guide
for new backends describes: the device module ``torch.opencl`` (``device_module``), an allocator, a device guard
and the PrivateUse1 hooks (a small C++ extension built at first use, ``_native``; without a compiler, PyTorch's
Python registration ``torch._C._acc``, which lacks the allocator, generators and devices past the first),
``Tensor.opencl()``/``Module.opencl()``, and one kernel per ATen op registered with ``torch.library``
(``kernels``, ``registration``). Every kernel runs the
tinytorch op of the same meaning on tinytorch's backend; autograd, views, argument parsing and the whole Python
API stay PyTorch's. ATen ops without a kernel run on the CPU through a fallback that warns once per op.

Which tinytorch device is registered: ``TINYTORCH_TORCH_DEVICE`` (default ``opencl``; any device registered with
``tinytorch.register_backend`` works, under its own name).

Source: PyTorch's "Facilitating New Backend Integration by PrivateUse1" tutorial and
``torch.utils.backend_registration``.
"""
import os
import sys

if "torch" in sys.modules and getattr(sys.modules["torch"], "Tensor", None) is getattr(sys.modules.get("tinytorch"), "Tensor", 0):
    raise ImportError("tinytorch.torch_backend registers tinytorch's devices with real PyTorch; under the import "
                      "swap (python -m tinytorch.run) `torch` is tinytorch itself and has its devices already")

import torch  # noqa: E402

import tinytorch  # noqa: E402

from . import _bridge, _native, registration  # noqa: E402
from ._bridge import State  # noqa: E402
from .registration import FALLBACKS, registered_ops  # noqa: E402

__all__ = ["register", "FALLBACKS", "registered_ops", "to_tinytorch", "from_tinytorch"]


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    def is_available(self):
        return State.backend.is_available()

    def has_primary_context(self, dev_id):
        return True

    def is_built(self):
        return True


class _Guard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1


def register(device=None):
    """Register tinytorch's device ``device`` (default ``$TINYTORCH_TORCH_DEVICE`` or ``"opencl"``) as PyTorch's
    PrivateUse1 backend under the same name. Idempotent; RuntimeError when PrivateUse1 is already taken by
    another backend or ``device`` is not a tinytorch device."""
    device = device or os.environ.get("TINYTORCH_TORCH_DEVICE", "opencl")
    if State.name is not None:
        if State.name != device:
            raise RuntimeError(f"tinytorch's {State.name} device is already PyTorch's PrivateUse1 backend; one "
                               f"process can register one")
        return
    current = torch._C._get_privateuse1_backend_name()
    if current not in ("privateuseone", device):
        raise RuntimeError(f"PyTorch's PrivateUse1 backend is already '{current}'")
    from tinytorch.device import get_backend
    State.backend = get_backend(tinytorch.device(device))
    State.tt_type = device
    State.name = device
    from .device_module import make_module
    torch.utils.rename_privateuse1_backend(device)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    torch._register_device_module(device, make_module(device))
    _register_hooks()
    registration.register()


def _register_hooks():
    # The C++ hooks and guard (allocator, every device, generators, pinned memory, storage resize) when the
    # extension builds; else PyTorch's Python ones. PyTorch takes one set of hooks per process, so exactly one of
    # the two is registered.
    native = _native.load()
    if native is not None:
        try:
            _bridge.init_native(native)
            return
        except Exception as e:  # noqa: BLE001 - refused registration: the Python hooks are refused alike below
            _native._disable(f"the extension loaded but its registration failed: {e}")
    if not (_native.reason() or "").startswith("disabled"):
        # said once: without the extension, PyTorch itself segfaults on a device storage it allocates
        import warnings
        warnings.warn(f"tinytorch: PyTorch's {State.name} device runs without its C++ extension "
                      f"({_native.reason()}). torch.UntypedStorage(n, device='{State.name}') and "
                      f"UntypedStorage.to('{State.name}') crash the process, torch.Generator('{State.name}') "
                      f"and pin_memory() raise, and only {State.name}:0 can be used. Set TINYTORCH_TORCH_NATIVE=0 "
                      "to accept this silently.")
    torch._C._acc.register_python_privateuseone_hook(_Hooks())
    torch._C._acc.register_python_privateuseone_device_guard(_Guard())


def to_tinytorch(t):
    """The tinytorch Tensor over a device tensor's memory (no copy; no autograd history)."""
    return _bridge.to_tinytorch(t)


def from_tinytorch(x):
    """The torch device tensor over a tinytorch Tensor's memory (no copy)."""
    return _bridge.to_torch(x.detach())


register()
