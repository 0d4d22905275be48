"""The Python-visible names of ``torch._C`` that libraries call, set on ``tinytorch._C``.

In PyTorch ``torch._C`` is the compiled core; libraries reach into it for a handful of names on their common paths
(Lightning's ``_nn._parse_to``, torchvision's ``_log_api_usage_once``, tv_tensors' ``DisableTorchFunctionSubclass``).
tinytorch's compiled module is ``tinytorch._C`` (the native kernels); ``install`` adds these names to it, or to an
empty module of that name when the native kernels are not built, so ``torch._C.X`` resolves under the import swap.
Each is the real thing in tinytorch's terms, documented where it differs.
"""
import enum
import importlib
import sys
import types

from . import overrides
from ._tensor import Tensor


def _log_api_usage_once(event):
    """PyTorch's API-usage logging hook: records nothing unless an internal logger is registered (it never is in
    an open-source build), so nothing is recorded here either."""


def _get_tracing_state():
    """The ``torch.jit`` tracing state: None outside a trace (tinytorch's traces have no state object to give)."""
    return None


class DispatchKey(enum.Enum):
    """The dispatch keys PyTorch's dispatcher orders kernels by (``torch._C.DispatchKey``); tinytorch's one
    dispatcher chooses by device, so these name keys only."""
    Undefined = 0
    CPU = 1
    CUDA = 2
    Meta = 3
    PrivateUse1 = 4
    Sparse = 5
    SparseCPU = 6
    SparseCsrCPU = 7
    Autograd = 8
    AutogradCPU = 9
    AutogradCUDA = 10
    AutogradPrivateUse1 = 11
    AutocastCPU = 12
    AutocastCUDA = 13
    AutocastXPU = 14
    AutocastPrivateUse1 = 15
    Python = 16
    PythonTLSSnapshot = 17
    Functionalize = 18
    ADInplaceOrView = 19
    CompositeImplicitAutograd = 20
    CompositeExplicitAutograd = 21
    BackendSelect = 22
    XLA = 23
    MPS = 24
    XPU = 25


class DispatchKeySet:
    """A set of ``DispatchKey`` (``torch._C.DispatchKeySet``): ``has``, ``|``, ``-``, ``add``, ``remove``."""

    def __init__(self, *keys):
        self._keys = frozenset(k for key in keys for k in (key._keys if isinstance(key, DispatchKeySet) else (key,)))

    def has(self, key):
        return key in self._keys

    def __or__(self, other):
        return DispatchKeySet(self, other)

    def __sub__(self, other):
        out = DispatchKeySet()
        out._keys = self._keys - DispatchKeySet(other)._keys
        return out

    def add(self, key):
        return self | DispatchKeySet(key)

    def remove(self, key):
        return self - DispatchKeySet(key)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and self._keys == other._keys

    def __hash__(self):
        return hash(self._keys)

    def __repr__(self):
        return f"DispatchKeySet({', '.join(sorted(k.name for k in self._keys))})"


class _ExcludeDispatchKeyGuard:
    """A context that excludes dispatch keys while it is active (``torch._C._ExcludeDispatchKeyGuard``): tinytorch's
    dispatcher has no per-key kernels to skip, so excluding keys changes nothing it runs."""

    def __init__(self, keyset):
        self.keyset = keyset

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _parse_to(*args, **kwargs):
    """``Tensor.to``'s arguments as (device, dtype, non_blocking, memory_format), as ``torch._C._nn._parse_to``."""
    from ._ops.creation import _parse_to as parse
    dtype, device = parse(tuple(a for a in args if not isinstance(a, bool)),
                          {k: v for k, v in kwargs.items() if k in ("dtype", "device")})
    non_blocking = kwargs.get("non_blocking", next((a for a in args if isinstance(a, bool)), False))
    return device, dtype, non_blocking, kwargs.get("memory_format")


def _get_accelerator(check=False):
    """The current accelerator's device type (``torch._C._get_accelerator``): see ``torch.accelerator``."""
    from . import accelerator
    dev = accelerator.current_accelerator(check)
    from .device import device
    return dev if dev is not None else device("cpu")


def _get_privateuse1_backend_name():
    return "privateuseone"


def install():
    """Add the names to ``tinytorch._C`` (importing the native module, or creating an empty one)."""
    try:
        c = importlib.import_module("tinytorch._C")
    except ImportError:
        c = types.ModuleType("tinytorch._C", "tinytorch's native kernels are not built; torch._C's Python names")
        sys.modules["tinytorch._C"] = c
    nn = types.ModuleType("tinytorch._C._nn", "torch._C._nn's Python-visible names")
    nn._parse_to = _parse_to
    names = {
        "_log_api_usage_once": _log_api_usage_once, "_get_tracing_state": _get_tracing_state,
        "DispatchKey": DispatchKey, "DispatchKeySet": DispatchKeySet, "_ExcludeDispatchKeyGuard": _ExcludeDispatchKeyGuard,
        "_nn": nn, "_get_accelerator": _get_accelerator, "_get_privateuse1_backend_name": _get_privateuse1_backend_name,
        "DisableTorchFunctionSubclass": overrides.DisableTorchFunctionSubclass,
        "DisableTorchFunction": overrides.DisableTorchFunction,
        "_disabled_torch_function_impl": overrides._disabled_torch_function_impl,
        "_is_torch_function_mode_enabled": overrides._is_torch_function_mode_enabled,
        "_TensorMeta": type(Tensor),  # Tensor's metaclass: ``type`` in tinytorch
        "_TensorBase": Tensor,
    }
    from .serialization import PyTorchFileReader
    names["PyTorchFileReader"] = PyTorchFileReader
    for name, value in names.items():
        setattr(c, name, value)
    sys.modules["tinytorch._C._nn"] = nn
    return c
