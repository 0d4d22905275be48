"""Unary elementwise functions written in the ops of ``pointwise.py`` (as ATen's UnaryOps): the inverse
hyperbolic functions, erfc, deg2rad / rad2deg, sinc, and the float tests signbit, isneginf, isposinf, isreal.
Every backend runs them and autograd differentiates them through those ops.

Signatures, defaults and results follow the PyTorch 2.x documentation of the function of the same name.
"""
import math

from .. import _dtype as _dt
from ._util import method


def _float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


@method("asinh")
def asinh(input):
    """Inverse hyperbolic sine, ``sign(x) * log(|x| + sqrt(x^2 + 1))`` (``torch.asinh``)."""
    from .pointwise import log1p, sqrt, where
    x = _float(input)
    a = x.abs()
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))) keeps precision near 0; the where keeps the gradient 1 at x = 0
    r = log1p(a + a * a / (1 + sqrt(a * a + 1)))
    return where(x < 0, -r, r) if x.numel() else r


@method("acosh")
def acosh(input):
    """Inverse hyperbolic cosine, ``log(x + sqrt(x^2 - 1))`` for x >= 1, NaN below (``torch.acosh``)."""
    from .pointwise import log, sqrt
    x = _float(input)
    return log(x + sqrt(x * x - 1))


@method("atanh")
def atanh(input):
    """Inverse hyperbolic tangent, ``0.5 * log1p(2x / (1 - x))`` (``torch.atanh``)."""
    from .pointwise import log1p
    x = _float(input)
    return log1p(2 * x / (1 - x)) * 0.5


arcsinh, arccosh, arctanh = asinh, acosh, atanh
for _n, _f in (("arcsinh", asinh), ("arccosh", acosh), ("arctanh", atanh)):
    method(_n)(_f)


@method("erfc")
def erfc(input):
    """``1 - erf(x)`` (``torch.erfc``)."""
    from .pointwise import erf
    return 1 - erf(_float(input))


@method("deg2rad")
def deg2rad(input):
    """Degrees to radians (``torch.deg2rad``); RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _float(input) * (math.pi / 180)


@method("rad2deg")
def rad2deg(input):
    """Radians to degrees (``torch.rad2deg``); RuntimeError for complex input, as PyTorch."""
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _float(input) * (180 / math.pi)


@method("sinc")
def sinc(input):
    """Normalized sinc, ``sin(pi x) / (pi x)`` with 1 at 0 (``torch.sinc``)."""
    from .pointwise import sin, where
    x = _float(input)
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
    """True where input is -inf (``torch.isneginf``)."""
    return input.isinf() & (input < 0) if input.dtype.is_floating_point else input != input


@method("isposinf")
def isposinf(input):
    """True where input is +inf (``torch.isposinf``)."""
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
