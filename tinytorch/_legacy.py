"""PyTorch's legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor`` ...) and process-wide settings that
scripts set at start-up (deterministic algorithms, float32 matmul precision).

The legacy types are constructors and isinstance targets, as in torch: ``FloatTensor(2, 3)`` is an
uninitialized float32 cpu tensor of that shape, ``FloatTensor([1, 2])`` one holding that data, and
``isinstance(t, FloatTensor)`` is true for float32 tensors on cpu.
"""
from . import _dtype as _dt
from ._tensor import Size, Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_float32_matmul_precision", "get_float32_matmul_precision"]


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


class _LegacyTensor(metaclass=_LegacyTensorType):
    dtype = None

    def __new__(cls, *args, device=None):
        from ._ops.creation import empty, tensor
        if not args:
            return empty(0, dtype=cls.dtype, device=device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
                (len(args) == 1 and isinstance(args[0], Size)):
            return empty(*args, dtype=cls.dtype, device=device)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data.dtype is not cls.dtype:
                    raise TypeError(f"expected {cls.dtype} (got {data.dtype})")
                return data
            return tensor(data, dtype=cls.dtype, device=device)
        raise TypeError(f"{cls.__name__}(): arguments must be sizes (ints), one sequence of data, or a Size")


def _legacy(name, dtype):
    return _LegacyTensorType(name, (_LegacyTensor,), {"dtype": dtype, "__doc__": f"Legacy constructor / isinstance "
                                                                                 f"target for {dtype} cpu tensors."})


FloatTensor = _legacy("FloatTensor", _dt.float32)
DoubleTensor = _legacy("DoubleTensor", _dt.float64)
HalfTensor = _legacy("HalfTensor", _dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _dt.bfloat16)
ByteTensor = _legacy("ByteTensor", _dt.uint8)
CharTensor = _legacy("CharTensor", _dt.int8)
ShortTensor = _legacy("ShortTensor", _dt.int16)
IntTensor = _legacy("IntTensor", _dt.int32)
LongTensor = _legacy("LongTensor", _dt.int64)
BoolTensor = _legacy("BoolTensor", _dt.bool)

_settings = {"deterministic": False, "warn_only": False, "matmul_precision": "highest"}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the request for deterministic algorithms (``torch.use_deterministic_algorithms``). Every
    tinytorch kernel is already deterministic (NumPy on cpu; the OpenCL kernels, col2im and scatter
    included, use no floating-point atomics), so nothing else changes."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not {type(mode).__name__}")
    _settings["deterministic"], _settings["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    """The mode last given to ``use_deterministic_algorithms`` (False at start)."""
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """The ``warn_only`` last given to ``use_deterministic_algorithms``."""
    return _settings["warn_only"]


def set_float32_matmul_precision(precision):
    """Records the float32 matmul precision ('highest', 'high' or 'medium'; ``torch.set_float32_matmul_precision``).
    torch may then use TF32 or bfloat16 internally; tinytorch's GEMMs always compute in full float32, which
    every setting permits. Other values warn and change nothing, as in torch."""
    if precision not in ("highest", "high", "medium"):
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings["matmul_precision"] = precision


def get_float32_matmul_precision():
    """The precision last set by ``set_float32_matmul_precision`` ('highest' at start)."""
    return _settings["matmul_precision"]
