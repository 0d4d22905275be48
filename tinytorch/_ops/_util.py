"""Helpers shared by op definitions."""
import numpy as np

from .._tensor import Tensor


# The Tensor methods the op modules declare, {name: function}: the method spelling of each op, written next to
# the op. ``tinytorch/_surface.py`` installs them on Tensor, all at once, after every op module is loaded; a name
# declared twice for different functions is an error here, so which module is imported last decides nothing.
TENSOR_METHODS = {}


def method(name):
    """Declare the decorated function as Tensor method ``name`` (the function itself is returned). RuntimeError
    when another function already holds the name."""
    def deco(fn):
        prev = TENSOR_METHODS.get(name)
        if prev is not None and prev is not fn:
            raise RuntimeError(f"Tensor.{name} is declared twice: by {prev.__module__}.{prev.__qualname__} and "
                               f"{fn.__module__}.{fn.__qualname__}")
        TENSOR_METHODS[name] = fn
        return fn
    return deco


def defop_on_cpu(name, meta, backward, registry, **kw):
    """Define an op whose kernel only ``cpu`` has (LAPACK, FFT, complex parts). Its decomposition, which other
    backends run, copies the tensor arguments to cpu, runs the op there and copies the result(s) back; the
    backward formula still runs on the tensor's own device. The op is stored in ``registry[name]``."""
    from .._dispatch import defop, dispatch

    def decomp(*args, **kwargs):
        dev = next(a.device for a in args if isinstance(a, Tensor))
        out = dispatch(registry[name], tuple(a.cpu() if isinstance(a, Tensor) else a for a in args), kwargs)
        return tuple(o.to(dev) for o in out) if isinstance(out, tuple) else out.to(dev)
    registry[name] = op = defop(name, meta, backward, decomp=decomp, **kw)
    return op


def scalar_check(x, op, arg):
    if not isinstance(x, (int, float, bool)):
        raise TypeError(f"{op}(): argument '{arg}' must be a number, not {type(x).__name__}")
    return x


_ARG_KINDS = {
    "bool": (lambda v: isinstance(v, bool), "bool"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool) or _is_int_tensor(v), "int"),
    "float": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) or _is_scalar_tensor(v), "float"),
    "Tensor": (lambda v: isinstance(v, Tensor), "Tensor"),
    "Tensor?": (lambda v: v is None or isinstance(v, Tensor), "Tensor"),
    "int?": (lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)), "int"),
    "float?": (lambda v: v is None or isinstance(v, (int, float)) and not isinstance(v, bool), "float"),
}


def _is_int_tensor(v):
    return isinstance(v, Tensor) and v.ndim == 0 and not v.dtype.is_floating_point and not v.dtype.is_complex


def _is_scalar_tensor(v):
    return isinstance(v, Tensor) and v.ndim == 0


def check_arg(fn, name, position, value, kind):
    """``value`` when it has the type PyTorch's argument parser wants for parameter ``name`` of ``fn``
    (``kind``: "bool", "int", "float", "Tensor", or one of them with "?" for optional), else PyTorch's
    TypeError: ``fn(): argument 'name' (position N) must be bool, not str``. ``position`` is 1-based; None
    for a keyword-only parameter (PyTorch then omits it from the message)."""
    ok, want = _ARG_KINDS[kind]
    if not ok(value):
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be {want}, not {type(value).__name__}")
    return value


def as_dims(dim):
    """Normalize ``dim`` arguments given as int, tuple, list, or None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (dim,)
    return tuple(dim)


# PyTorch's names of the scalar types, as its "... not implemented for 'Long'" messages spell them
SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "uint16": "UInt16",
                "uint32": "UInt32", "uint64": "UInt64"}


# the C++ type names PyTorch's "value cannot be converted to type ... without overflow" messages use
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def check_scalar_fits(value, dtype):
    """RuntimeError, as PyTorch's checked scalar conversion, when the scalar ``value`` (a number or a 0-d tensor)
    is complex with a non-zero imaginary part and ``dtype`` is real (bool takes any value)."""
    if isinstance(value, Tensor):
        if value.ndim or not value.dtype.is_complex:
            return
        value = value.item()
    if isinstance(value, complex) and value.imag != 0 and dtype.name in _CPP_NAMES:
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[dtype.name]} without overflow")


def check_scalar_converts(value, dtype, numel=None):
    """RuntimeError, as PyTorch's checked conversion of a Scalar to ``dtype`` (``c10::checked_convert``), when
    the number ``value`` does not fit: a complex with a non-zero imaginary part into a real dtype; into an
    integer dtype a float outside its range or NaN, an int outside its range (an unsigned dtype also takes a
    negative int down to minus its maximum, which wraps); into a float dtype a finite float past its largest
    value. Bool and float64 take anything; float32 and complex64 refuse a finite double past float's largest
    value, float16 and bfloat16 a finite number past theirs, except (PyTorch's one-element fill is unchecked)
    when ``numel`` is 1 (a float too large becomes inf there)."""
    name = dtype.name
    if name in ("float16", "bfloat16") and numel != 1 and isinstance(value, (int, float)) and \
            not isinstance(value, bool) and abs(value) != float("inf") and \
            abs(value) > (65504.0 if name == "float16" else 3.3895313892515355e38):
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[name]} without overflow")
    if name in ("float32", "complex64"):
        parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
        if any(isinstance(p, float) and abs(p) > 3.4028234663852886e38 and abs(p) != float("inf") for p in parts):
            cname = "float" if name == "float32" else "c10::complex<float>"
            raise RuntimeError(f"value cannot be converted to type {cname} without overflow")
    if name not in _CPP_NAMES:
        return  # bool and the complex dtypes
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[name]} without overflow")
        value = value.real
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if dtype.is_floating_point:
        return
    info = np.iinfo(dtype.np)
    if isinstance(value, float):
        bad = value != value or not info.min <= value <= info.max
    else:
        bad = value > info.max or value < (-info.max if info.min == 0 else info.min)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[name]} without overflow")


def check_dtype(kernel, dtype, floating=False, complex_ok=False, integral=False):
    """``dtype`` when it is in the families the PyTorch kernel ``kernel`` is compiled for (floating point,
    complex, integral: bool is none of them), else PyTorch's NotImplementedError (``"<kernel>" not implemented
    for 'Long'``)."""
    ok = (floating and dtype.is_floating_point) or (complex_ok and dtype.is_complex) or \
        (integral and not dtype.is_floating_point and not dtype.is_complex and dtype.name != "bool")
    if not ok:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES.get(dtype.name, dtype.name)}'")
    return dtype


class Unset:
    """The default of a parameter that is not given, where PyTorch's overloads refuse None for it and its absence
    selects an overload (``max(x)`` vs ``max(x, dim)``; ``unbiased``, whose absence lets ``correction`` apply).
    Shown as ``shown`` in signatures."""
    __slots__ = ("shown",)

    def __init__(self, shown):
        self.shown = shown

    def __repr__(self):
        return self.shown
