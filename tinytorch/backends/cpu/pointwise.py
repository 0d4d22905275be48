"""Pointwise kernels of the ``cpu`` backend: NumPy's ufuncs with PyTorch's rules (IEEE warnings silent, integer
division by zero an error, integer powers, scalar bounds) and the complex-number ops."""
import math

import numpy as np

from .registry import KERNELS, _f, _quiet


def _pairs_as_complex(a):
    # the two parts stored side by side, not ``re + 1j * im``: 1j * inf is (nan + inf j), which would put a NaN
    # in the real part
    out = np.empty(a.shape[:-1], np.complex128 if a.dtype == np.float64 else np.complex64)
    out.real, out.imag = a[..., 0], a[..., 1]
    return out


def _int_zero_check(a, b):
    if np.asarray(b).dtype.kind in "iub" and np.asarray(a).dtype.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _div(a, b, rounding_mode=None):
    if rounding_mode is not None:
        _int_zero_check(a, b)
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "trunc":
        if np.issubdtype(np.result_type(a, b), np.integer):
            q = np.floor_divide(a, b)
            r = np.remainder(a, b)
            return np.where((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), q + 1, q)
        return np.trunc(np.true_divide(a, b))
    return np.floor_divide(a, b)


KERNELS.add("div", _f(_div))


@KERNELS.register("round")
def _round(a, decimals=0):
    return np.round(a, decimals)


_CONST_CHUNK = 1 << 16
_zeros_cache = {}


def _bound(fn, a, v, out=None):
    """``fn(a, v)`` for np.maximum / np.minimum and a Python scalar ``v``.

    NumPy's SIMD loops for maximum/minimum only take two contiguous operands: with a scalar (a stride-0
    operand) they run an element-wise loop ~3x slower, so the scalar is expanded to a constant block that
    the array is walked against in chunks."""
    if type(v) is int and a.dtype.kind not in "iub" and not -2 ** 63 <= v < 2 ** 63:  # float, bfloat16 (kind V)
        v = float(v)  # NumPy refuses a Python int past int64 next to floats; the op casts it to the float dtype
    if not (isinstance(v, (int, float)) and a.dtype.kind in "fiu" and a.size >= 256 and a.flags.c_contiguous):
        return fn(a, v, out=out) if out is not None else fn(a, v)
    dt = a.dtype if out is None else out.dtype
    if np.result_type(a, v) != dt:  # NEP 50: a scalar that does not fit the array's dtype changes the result
        return fn(a, v, out=out) if out is not None else fn(a, v)
    m = min(a.size, _CONST_CHUNK)
    if v == 0 and not (dt.kind == "f" and math.copysign(1.0, v) < 0):
        c = _zeros_cache.get(dt)
        if c is None:
            c = _zeros_cache[dt] = np.zeros(_CONST_CHUNK, dt)
            c.flags.writeable = False
        c = c[:m]
    else:
        c = np.full(m, v, dt)
    if out is None:
        out = np.empty(a.shape, dt)
    af, of = a.reshape(-1), out.reshape(-1)
    for i in range(0, af.size, m):
        j = min(i + m, af.size)
        fn(af[i:j], c[:j - i], out=of[i:j])
    return out


@KERNELS.register("relu")
def _relu(a):
    return _bound(np.maximum, a, 0)


@KERNELS.register("clamp")
def _clamp(a, lo, hi):
    with _quiet():
        out = a
        if lo is not None:
            out = _bound(np.maximum, out, lo)
        if hi is not None:
            # the max's result can be written over (not for 0-d input: NumPy then returns a scalar)
            out = _bound(np.minimum, out, hi, out=out if out is not a and isinstance(out, np.ndarray) else None)
        return np.array(out, copy=True) if out is a else out


@KERNELS.register("pow")
def _pow(a, b):
    with _quiet():
        if not isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and b.dtype.kind in "iu" and \
                not isinstance(a, float):
            # a Python integer base wraps into the exponent's dtype, as PyTorch's scalar cast does
            a = np.array(int(a), dtype=np.int64).astype(b.dtype)
        if isinstance(b, (int, float)) and isinstance(a, np.ndarray) and a.dtype.kind == "f" and \
                a.dtype != np.float16 and b in (0.5, -0.5):
            # PyTorch computes x ** 0.5 as sqrt and x ** -0.5 as rsqrt (float, double, bfloat16; not half),
            # which differs from pow at -0.0 (-0.0, -inf) and at -inf (nan)
            r = np.sqrt(a)
            return r if b == 0.5 else np.reciprocal(r)
        if np.issubdtype(np.result_type(a, b), np.integer) and np.any(np.asarray(b) < 0):
            if np.ndim(b) == 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            # PyTorch: x ** -n is 1 for x == 1, +-1 for x == -1, 0 otherwise
            neg = b < 0
            safe = np.power(a, np.where(neg, 0, b))
            sign_one = np.where(np.asarray(b) % 2 == 0, 1, -1)
            return np.where(neg, np.where(a == 1, 1, np.where(a == -1, sign_one, 0)), safe).astype(safe.dtype)
        out = np.power(a, b)
        if isinstance(b, np.ndarray) and b.size == 1 and b.dtype.kind == "f" and isinstance(a, np.ndarray) and \
                a.dtype.kind == "f" and float(b.reshape(-1)[0]) == 0.5:
            # NumPy's loop for a broadcast exponent of 0.5 takes sqrt; a tensor exponent is plain pow in PyTorch
            out = np.where((a == 0) | (a == -np.inf), np.abs(a).astype(out.dtype), out)
        return out


@KERNELS.register("remainder")
def _remainder(a, b):
    _int_zero_check(a, b)
    with _quiet():
        return np.remainder(a, b)


@KERNELS.register("fmod")
def _fmod(a, b):
    _int_zero_check(a, b)
    with _quiet():
        return np.fmod(a, b)


@KERNELS.register("nan_to_num")
def _nan_to_num(a, nan, posinf, neginf):
    return np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)


def _sign(a):
    if a.dtype == np.bool_:
        return a.copy()
    if a.dtype.kind in "iuc":
        return np.sign(a)
    # PyTorch's CPU sign is (0 < x) - (x < 0): NaN gives 0 where np.sign gives NaN, and -0 gives +0
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


for _name, _kernel in {
    # pointwise, float
    "exp": _f(np.exp), "exp2": _f(np.exp2), "expm1": _f(np.expm1), "log": _f(np.log), "log2": _f(np.log2),
    "log10": _f(np.log10), "log1p": _f(np.log1p), "sqrt": _f(np.sqrt), "rsqrt": _f(lambda a: 1 / np.sqrt(a)),
    "sin": _f(np.sin), "cos": _f(np.cos), "tan": _f(np.tan), "asin": _f(np.arcsin), "acos": _f(np.arccos),
    "atan": _f(np.arctan), "sinh": _f(np.sinh), "cosh": _f(np.cosh), "tanh": _f(np.tanh),
    "sigmoid": _f(lambda a: 1 / (1 + np.exp(-a))), "reciprocal": _f(np.reciprocal),
    # pointwise, dtype-preserving
    "neg": np.negative, "abs": np.abs, "sign": _f(_sign),
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "bitwise_not": lambda a: np.logical_not(a) if a.dtype == np.bool_ else np.invert(a),
    "logical_not": np.logical_not, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    # binary
    "add": lambda a, b, alpha=1: np.add(a, b if alpha == 1 else np.multiply(b, alpha)),
    "sub": lambda a, b, alpha=1: np.subtract(a, b if alpha == 1 else np.multiply(b, alpha)),
    "mul": np.multiply, "atan2": _f(np.arctan2), "maximum": np.maximum, "minimum": np.minimum,
    "nextafter": np.nextafter,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "where": lambda c, a, b: np.where(c, a, b),
    # complex numbers
    "real": lambda a: np.ascontiguousarray(a.real), "imag": lambda a: np.ascontiguousarray(a.imag),
    "conj": np.conjugate, "view_as_real_copy": lambda a: np.stack([a.real, a.imag], -1),
    "view_as_complex": lambda a: _pairs_as_complex(a),
}.items():
    KERNELS.add(_name, _kernel)
