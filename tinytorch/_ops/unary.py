"""Unary elementwise functions written in the ops of ``pointwise.py`` (as ATen's UnaryOps): the inverse
hyperbolic functions, erfc, deg2rad / rad2deg, sinc, and the float tests signbit, isneginf, isposinf, isreal.
Every backend runs them and autograd differentiates them through those ops.

Signatures, defaults and results follow the PyTorch 2.x documentation of the function of the same name.
"""
import math

from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from ._util import check_dtype, method


def _float(x):
    """``x`` itself when floating or complex, else ``x`` in the default dtype (integer and bool input)."""
    return x if x.dtype.is_floating_point or x.dtype.is_complex else x.to(_dt.get_default_dtype())


def _half_in_float(fn):
    """``fn`` computed in float32 for float16/bfloat16 input and rounded once to the input's dtype, as
    PyTorch's CPU kernels compute the half types (a formula's intermediates, x^2 or pi x, would otherwise
    overflow or lose the digits the result keeps)."""
    import functools

    @functools.wraps(fn)
    def wrapper(input):
        if input.dtype in (_dt.float16, _dt.bfloat16):
            return fn(input.to(_dt.float32)).to(input.dtype)
        return fn(input)
    return wrapper


# above this magnitude sqrt(x^2 + 1) is |x| to the last bit in float64 (and float32), and x^2 may overflow, so
# the inverse hyperbolics use log(|x|) + log(2) (what C's asinh/acosh do for large arguments)
_BIG = 2.0 ** 28


def _same_meta(x):
    return [(x._shape, x.dtype)], [None]


def _asinh_decomp(x):
    from .pointwise import log, log1p, sqrt, where
    a = where(x < 0, -x, x)
    big = a > _BIG
    small = where(big, 1.0, a)  # the branch not taken gets harmless input
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))) keeps precision near 0
    r = where(big, log(where(big, a, 1.0)) + math.log(2.0), log1p(small + small * small / (1 + sqrt(small * small + 1))))
    return where(x < 0, -r, r) if x.numel() else r


def _acosh_decomp(x):
    from .pointwise import log, sqrt, where
    big = x > _BIG
    small = where(big, 1.0, x)
    # sqrt(x - 1) sqrt(x + 1): NaN below -1 without squaring x (which would overflow to inf)
    return where(big, log(where(big, x, 1.0)) + math.log(2.0), log(small + sqrt(small - 1) * sqrt(small + 1)))


def _asinh_bw(c, g):
    from .pointwise import rsqrt
    x = c.inputs[0]
    return g * rsqrt(x * x + 1)  # PyTorch's formula: 0 where x^2 overflows


def _acosh_bw(c, g):
    from .pointwise import rsqrt
    x = c.inputs[0]
    return g * rsqrt(x * x - 1)


# real asinh/acosh as ops that save their input, as PyTorch's (an in-place change of it then fails backward)
_asinh_op = defop("asinh", _same_meta, _asinh_bw, decomp=_asinh_decomp)
_acosh_op = defop("acosh", _same_meta, _acosh_bw, decomp=_acosh_decomp)


@method("asinh")
@_half_in_float
def asinh(input):
    """Inverse hyperbolic sine, ``sign(x) * log(|x| + sqrt(x^2 + 1))`` (``torch.asinh``); integer input gives
    the default dtype, complex input the principal branch in its own dtype. Exact at +-inf and for
    magnitudes whose square overflows (as C's ``asinh``)."""
    from .pointwise import log, sqrt, where
    x = _float(input)
    if x.dtype.is_complex:
        # odd: computed for Re z >= 0, where z + sqrt(z^2 + 1) does not cancel, and mirrored
        flip = x.real < 0
        z = where(flip, -x, x)
        # sqrt(z - i) sqrt(z + i), not sqrt(z^2 + 1): the right side of the cut on the imaginary axis
        r = log(z + sqrt(z - 1j) * sqrt(z + 1j))
        return where(flip, -r, r)
    # |x| as x times a constant sign, not abs() (whose gradient at 0 is 0, asinh's is 1); the product keeps x
    # saved for backward, so modifying x in place before backward raises, as in PyTorch
    return dispatch(_asinh_op, (x,))


@method("acosh")
@_half_in_float
def acosh(input):
    """Inverse hyperbolic cosine, ``log(x + sqrt(x^2 - 1))`` for x >= 1, NaN below (``torch.acosh``); complex
    input gives the principal branch ``log(z + sqrt(z + 1) sqrt(z - 1))``. Exact for magnitudes whose square
    overflows."""
    from .pointwise import log, sqrt
    x = _float(input)
    if x.dtype.is_complex:
        return log(x + sqrt(x + 1) * sqrt(x - 1))
    return dispatch(_acosh_op, (x,))


@method("atanh")
@_half_in_float
def atanh(input):
    """Inverse hyperbolic tangent, ``0.5 * log1p(2x / (1 - x))`` (``torch.atanh``); complex input gives the
    principal branch ``(log1p(z) - log1p(-z)) / 2`` in its own dtype."""
    from .pointwise import log1p
    x = _float(input)
    if x.dtype.is_complex:
        return (log1p(x) - log1p(-x)) * 0.5
    from .natives import atanh as _atanh  # one op saving x, as PyTorch's AtanhBackward0
    return _atanh(x)


arcsinh, arccosh, arctanh = asinh, acosh, atanh
for _n, _f in (("arcsinh", asinh), ("arccosh", acosh), ("arctanh", atanh)):
    method(_n)(_f)


@method("erfc")
def erfc(input):
    """``1 - erf(x)`` (``torch.erfc``). NotImplementedError for complex input (no complex kernel in PyTorch)."""
    from .pointwise import erf
    if input.dtype.is_complex:  # PyTorch has no complex erfc kernel
        check_dtype("erfc_vml_cpu", input.dtype, floating=True)
    return 1 - erf(_float(input))


@method("deg2rad")
def deg2rad(input):
    """Degrees to radians (``torch.deg2rad``); RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _float(input) * (math.pi / 180)


@method("rad2deg")
def rad2deg(input):
    """Radians to degrees (``torch.rad2deg``). RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _float(input) * (180 / math.pi)


@method("sinc")
@_half_in_float
def sinc(input):
    """Normalized sinc, ``sin(pi x) / (pi x)`` with 1 at 0 (``torch.sinc``); complex input stays complex."""
    from .pointwise import sin, where
    x = _float(input)
    if not x.dtype.is_complex:
        from .natives import sinc as _sinc  # one op saving x, as PyTorch's SincBackward0
        return _sinc(x)
    px = x * math.pi
    safe = where(x == 0, 1.0, px)
    return where(x == 0, 1.0, sin(safe) / safe)


@method("signbit")
def signbit(input):
    """True where the sign bit is set (negative numbers, -0.0, NaN with the bit) (``torch.signbit``).
    NotImplementedError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if not input.dtype.is_floating_point:
        return input < 0
    from .pointwise import where
    # -0.0 has the sign bit: 1 / -0.0 = -inf
    return (input < 0) | ((input == 0) & (1 / where(input == 0, input, 1.0) < 0))


@method("isneginf")
def isneginf(input):
    """True where input is -inf (``torch.isneginf``). RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("isneginf does not support complex inputs.")
    return input.isinf() & (input < 0) if input.dtype.is_floating_point else input != input


@method("isposinf")
def isposinf(input):
    """True where input is +inf (``torch.isposinf``). RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("isposinf does not support complex inputs.")
    return input.isinf() & (input > 0) if input.dtype.is_floating_point else input != input


@method("isreal")
def isreal(input):
    """True where the imaginary part is 0 (every element of a real tensor) (``torch.isreal``)."""
    if input.dtype.is_complex:
        from .complex import imag
        return imag(input) == 0
    return (input == input) | (input != input)


__all__ = ["asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "erfc", "deg2rad", "rad2deg", "sinc",
           "signbit", "isneginf", "isposinf", "isreal"]
