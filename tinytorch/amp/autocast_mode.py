"""Automatic mixed precision: ``torch.autocast``.

Inside ``autocast(device_type, dtype)``, ops that gain from lower precision (matrix products, convolutions,
``linear``, ``prelu``, ``scaled_dot_product_attention``) cast their floating-point tensor arguments on that
device type to ``dtype``; ops that need the range of float32 (the losses, ``prod``, ``cdist``, ``trace``,
the LAPACK routines) cast them to float32. float64 arguments are never cast, and every other op runs in the
dtype of its inputs. These are PyTorch's CPU autocast policies (``aten/src/ATen/autocast_mode.cpp``,
"lower_precision_fp" and "fp32"), applied to the same functions.

The policy is attached to each function by ``autocast_op``; the casts are ordinary ``Tensor.to`` calls, so
autograd sends float32 gradients to float32 leaves. Backward passes run without autocast, so backward ops
run in the dtype their forward ops used (PyTorch's documented behaviour).
"""
import functools
import warnings

from .._dispatch import _cast, autocast_op  # noqa: F401 (the autocast step of the op path)
from .._modes import _ac, _recount, _suspended  # noqa: F401 (the state lives in the core layer)

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

# PyTorch's device types (c10/core/DeviceType.h, in the order its parser lists them) and the autocast dtype each starts
# with (autocast_mode.cpp). A device type without one has no dtype until set_autocast_dtype gives it one; reading it
# raises "unsupported scalarType" in PyTorch. tinytorch's own registered devices (opencl, ...) autocast to bfloat16.
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                       "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16", "ipu": "float16", "xpu": "float16", "hip": "float16",
                  "maia": "bfloat16", "xla": "bfloat16", "mps": "float16", "hpu": "bfloat16", "mtia": "float16",
                  "privateuseone": "float16"}
# device types with an autocast dispatch key (is_autocast_enabled / set_autocast_enabled accept them)
_AUTOCAST_KEYS = set(_DEFAULT_DTYPE) - {"hip"}


def _has_autocast(device_type):
    from ..device import _BACKENDS
    return device_type in _AUTOCAST_KEYS or (device_type in _BACKENDS and device_type != "meta")


def _entry(device_type, need_key=False):
    """[enabled, dtype] of ``device_type``. RuntimeError, as PyTorch's, for a string that names no device type
    and (``need_key``) for a device type autocast has no dispatch key for (meta, vulkan, ...)."""
    from ..device import _BACKENDS
    if device_type not in _TORCH_DEVICE_TYPES and device_type not in _BACKENDS:
        raise RuntimeError(f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type at start of device "
                           f"string: {device_type}")
    if need_key and not _has_autocast(device_type):
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    entries = _ac.entries
    e = entries.get(device_type)
    if e is None:
        from .. import _dtype
        name = _DEFAULT_DTYPE.get(device_type, "bfloat16" if _has_autocast(device_type) else None)
        e = entries[device_type] = [False, name and getattr(_dtype, name)]
    return e


def _cuda_missing():
    from ..backends.cuda import runtime
    return runtime.unavailable_reason() is not None


def is_autocast_available(device_type):
    """Whether autocast can be enabled for ``device_type`` here: every registered device type that is available
    (cuda where there is an NVIDIA GPU)."""
    from ..device import _BACKENDS
    return device_type in _BACKENDS and not (device_type == "cuda" and _cuda_missing())


class autocast:
    """Context manager / decorator that runs the ops inside it in mixed precision (``torch.autocast``).

    device_type: 'cpu' (or another registered device type); dtype: torch.bfloat16 (cpu's default) or
    torch.float16; enabled=False turns autocast off inside the region. ValueError when ``device_type`` is not
    a string; RuntimeError for an unknown device type. An unsupported dtype, or 'cuda' where the cuda device is
    unavailable, warns and leaves autocast off, as PyTorch does.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        from .. import _dtype
        entry = _entry(device_type)  # RuntimeError for a string that names no device type
        if dtype is None and entry[1] is None:
            raise RuntimeError("unsupported scalarType")
        if not _has_autocast(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else _entry(device_type)[1]
        self._cache_enabled = _ac.cache_enabled if cache_enabled is None else cache_enabled
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if device_type == "cuda" and _cuda_missing():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
            self._enabled = False
        elif self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{device_type.upper()} Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.")
            self._enabled = False

    def __enter__(self):
        e = _entry(self.device)
        self._prev = (e[0], e[1], _ac.cache_enabled)
        e[0] = self._enabled
        e[1] = self.fast_dtype
        _ac.cache_enabled = self._cache_enabled
        _recount()
        return self

    def __exit__(self, *exc):
        e = _entry(self.device)
        e[0], e[1], _ac.cache_enabled = self._prev
        _recount()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return fn(*a, **k)
        return wrapper


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (no argument: 'cuda', as PyTorch, which is never on here)."""
    return _entry("cuda" if device_type is None else device_type, need_key=True)[0]


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # the old one-argument form: set_autocast_enabled(enabled) for cuda
        device_type, enabled = "cuda", device_type
    _entry(device_type, need_key=True)[0] = bool(enabled)
    _recount()


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (``torch.get_autocast_dtype``; cpu: bfloat16 unless set).
    RuntimeError for an unknown device type, and ("unsupported scalarType") for one with no autocast dtype."""
    dtype = _entry(device_type)[1]
    if dtype is None:
        raise RuntimeError("unsupported scalarType")
    return dtype


def set_autocast_dtype(device_type, dtype):
    _entry(device_type)[1] = dtype


def is_autocast_cache_enabled():
    return _ac.cache_enabled


def set_autocast_cache_enabled(enabled):
    _ac.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """No-op: casts are not cached (each wrapped call casts its arguments again)."""


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom ``autograd.Function.forward`` (``torch.amp.custom_fwd``): with ``cast_inputs``,
    runs forward with autocast off and its floating tensor arguments cast to ``cast_inputs`` when autocast is
    on for ``device_type``; without it, forward runs under the autocast state of the caller."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def wrapper(*args, **kw):
        if cast_inputs is None or not _entry(device_type)[0]:
            return fwd(*args, **kw)
        args = tuple(_cast(a, (device_type,), cast_inputs) for a in args)
        kw = {k: _cast(v, (device_type,), cast_inputs) for k, v in kw.items()}
        with autocast(device_type, enabled=False):
            return fwd(*args, **kw)
    return wrapper


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom ``autograd.Function.backward`` (``torch.amp.custom_bwd``). Backward passes run
    without autocast here, so it returns ``bwd`` unchanged."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


# the older per-device spellings (deprecated in PyTorch, still common in scripts)
def is_autocast_cpu_enabled():
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def autocast_increment_nesting():
    _ac.nesting += 1
    return _ac.nesting


def autocast_decrement_nesting():
    _ac.nesting -= 1
    return _ac.nesting
