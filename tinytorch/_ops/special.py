"""Gamma-family special functions: lgamma, digamma, polygamma, the Hurwitz zeta and mvlgamma.

Each is an op whose forward is a decomposition into tinytorch primitives (so every backend runs it, on its
own device) and whose backward is the next function of the family: lgamma' = digamma, digamma' =
polygamma(1), polygamma(n)' = polygamma(n + 1). Formulas:
  - lgamma: Lanczos' approximation (g = 7, 9 terms; Numerical Recipes 6.1 / Press et al.), with the
    reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x) for x < 0.5;
  - digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series in 1/x^2
    (Abramowitz & Stegun 6.3.18), reflection psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0.5;
  - Hurwitz zeta(s, q) = sum_k (q + k)^-s: the first N terms, then the Euler-Maclaurin tail with Bernoulli
    numbers up to B14 (the method of Cephes' ``zeta``, which torch uses); polygamma(n, x) =
    (-1)^(n + 1) n! zeta(n + 1, x).
Accuracy: about 1e-15 relative in float64; float32 inputs are computed in float32.
"""
import math

from .. import _dtype as _dt
from .._dispatch import COMPLEX_DTYPES, defop, dispatch, refuse
from .._tensor import Tensor
from ._util import method

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
# B_2j / (2j)! for j = 1..7
_BERN = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160, -691 / 1307674368000, 1 / 74724249600)


def _float_meta(x, *a, **kw):
    dt = x.dtype if x.dtype.is_floating_point else _dt.get_default_dtype()
    return [(x._shape, dt)], [None]


def _as_float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


def _half_in_float(decomp):
    """``decomp`` computed in float32 for float16/bfloat16 input and rounded once to that dtype, as PyTorch's
    CPU kernels compute the half types (its series in half precision would lose most of the digits)."""
    import functools

    @functools.wraps(decomp)
    def wrapper(x, *args, **kw):
        if isinstance(x, Tensor) and x.dtype in (_dt.float16, _dt.bfloat16):
            return decomp(x.to(_dt.float32), *args, **kw).to(x.dtype)
        return decomp(x, *args, **kw)
    return wrapper


def _lgamma_pos(x):
    """lgamma for x >= 0.5 (Lanczos)."""
    from .pointwise import log
    z = x - 1
    a = z * 0 + _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], 1):
        a = a + c / (z + i)
    t = z + (_LANCZOS_G + 0.5)
    return (z + 0.5) * log(t) - t + log(a) + 0.5 * math.log(2 * math.pi)


@_half_in_float
def _lgamma_decomp(x):
    from .pointwise import abs, log, sin, where
    x = _as_float(x)
    small = x < 0.5
    xr = where(small, 1 - x, x)  # reflected argument, always >= 0.5
    pos = _lgamma_pos(xr)
    # log(pi / |sin(pi x)|) with sin(pi x) reduced to x's fractional part, so that large negative x keep their
    # precision; at the poles (non-positive integers) it is log(pi / 0) = inf, as in torch
    frac = x - x.floor()
    refl = math.log(math.pi) - log(abs(sin(frac * math.pi))) - pos
    # lgamma(+-inf) = inf (the series above gives inf - inf there)
    return where(abs(x) == float("inf"), float("inf"), where(small, refl, pos))


def _lgamma_bw(c, g):
    return g * digamma(c.inputs[0])


_lgamma_op = defop("lgamma", _float_meta, _lgamma_bw, decomp=_lgamma_decomp,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"lgamma_vml_cpu\" not implemented for '{T}'"))


@_half_in_float
def _digamma_decomp(x):
    from .pointwise import log, tan, where
    x = _as_float(x)
    small = x < 0.5
    y = where(small, 1 - x, x)  # >= 0.5
    acc = y * 0
    for _ in range(10):  # recurrence up to y >= 10.5
        lo = y < 10
        acc = acc - where(lo, 1 / y, 0.0)
        y = where(lo, y + 1, y)
    r = 1 / (y * y)
    # psi(y) ~ log y - 1/(2y) - sum_j B_2j / (2j) y^-2j
    series = r * 0
    for j in range(7, 0, -1):
        series = (series + _B2J_OVER_2J[j - 1]) * r
    psi = log(y) - 0.5 / y - series + acc
    # x - round(x) is exact and lies in [-0.5, 0.5], so pi * frac keeps its digits near a pole (x - floor(x)
    # rounds a small negative x away; torch's kernel takes modf's part in double for the same reason); tan has
    # period pi, so the reflection term is the same
    frac = x - x.round()
    refl = psi - math.pi / tan(frac * math.pi)
    out = where(small, refl, psi)
    # poles: at 0 the limit from the side of the zero's sign (-inf at +0, inf at -0, as torch's copysign(inf, -x)),
    # NaN at negative integers
    out = where(x == float("inf"), float("inf"), out)  # log(inf) - inf / tan(...) would be NaN
    at_zero = where(x.signbit(), float("inf"), float("-inf"))
    return where(x == 0, at_zero, where((x < 0) & (frac == 0), float("nan"), out))


# B_2j / (2j) for j = 1..7 (the asymptotic series of digamma)
_B2J_OVER_2J = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_bw(c, g):
    return g * polygamma(1, c.inputs[0])


_digamma_op = defop("digamma", _float_meta, _digamma_bw, decomp=_digamma_decomp,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"digamma\" not implemented for '{T}'"))


def _zeta(s, q):
    """Hurwitz zeta(s, q) for a real order s (number or tensor) > 1, by Euler-Maclaurin summation."""
    from .pointwise import where
    n = 10
    qmin = q.amin().item() if q.numel() else 0.0
    if qmin == qmin and qmin < 0 and qmin != float("-inf"):
        n += math.ceil(-qmin)  # sum directly until q + k > 9, as Cephes does
    total = q * 0
    for k in range(n):
        total = total + (q + k) ** (-s)
    w = q + n
    total = total + w ** (1 - s) / (s - 1) + 0.5 * w ** (-s)
    # sum_j B_2j/(2j)! * s (s+1) ... (s+2j-2) * w^(-s-2j+1)
    fac = s * w ** (-s - 1)
    for j in range(1, 8):
        total = total + _BERN[j - 1] * fac
        fac = fac * (s + 2 * j - 1) * (s + 2 * j) / (w * w)
    qi = (q == q.floor()) & (q <= 0)
    return where(qi, float("inf"), total)


@_half_in_float
def _polygamma_decomp(x, n):
    if n == 0:
        return digamma(x)
    x = _as_float(x)
    if n >= 2 ** 31:
        # torch's kernel takes n as a C int (calc_polygamma(x, int n)), so a larger n wraps modulo 2**32: at 0 it
        # is -zeta(1, x) = -inf, at a negative value n! is inf and zeta(n + 1 < 1, x) NaN, else polygamma of the
        # wrapped order
        n = (n + 2 ** 31) % 2 ** 32 - 2 ** 31
        if n <= 0:
            from .creation import full_like
            return full_like(x, float("-inf") if n == 0 else float("nan"))
    # (-1)^(n+1) n! as a float: inf past 170! (where torch's exp(lgamma(n + 1)) overflows too) rather than an
    # exact factorial, whose digits take minutes for the huge n a caller may pass
    fact = float(math.factorial(n)) if n <= 170 else float("inf")
    return _zeta(n + 1, x) * (fact if n % 2 else -fact)


def _polygamma_bw(c, g):
    return g * polygamma(c.kw["n"] + 1, c.inputs[0])


_polygamma_op = defop("polygamma", _float_meta, _polygamma_bw, decomp=_polygamma_decomp)


def _zeta_meta(x, q):
    from .pointwise import _float
    return _float(x, q)


def _zeta_decomp(x, q):
    from .pointwise import where
    from .creation import full_like
    if not isinstance(x, Tensor):
        x = full_like(q, x, dtype=q.dtype if q.dtype.is_floating_point else _dt.get_default_dtype())
    if not isinstance(q, Tensor):
        q = full_like(x, q)
    x, q = _as_float(x), _as_float(q)
    sx = where(x > 1, x, 2.0)  # torch: inf at x == 1, NaN for x < 1
    z = _zeta(sx, q)
    return where(x == 1, float("inf"), where(x < 1, float("nan"), z))


_zeta_op = defop("special_zeta", _zeta_meta, None, decomp=_zeta_decomp)


def _entr_decomp(x):
    from .pointwise import log, where
    x = _as_float(x)
    safe = where(x > 0, x, 1.0)
    out = where(x > 0, -x * log(safe), 0.0)
    return where(x < 0, float("-inf"), where(x != x, x, out))


def _entr_bw(c, g):
    from .pointwise import log
    return g * -(log(c.inputs[0]) + 1)  # NaN for x < 0 and inf at 0, as torch's formula gives


_entr_op = defop("special_entr", _float_meta, _entr_bw, decomp=_entr_decomp)


def entr(input):
    """Elementwise entropy term -x log x: 0 at 0, -inf for x < 0 (``torch.special.entr``). Gradient
    -(log x + 1)."""
    return dispatch(_entr_op, (input,))


@method("lgamma")
def lgamma(input):
    """Natural log of the absolute value of the gamma function, elementwise (``torch.lgamma``).

    input: a tensor of any shape (integers promote to the default dtype). Returns a tensor of the same shape;
    inf at the poles (non-positive integers). Lanczos' approximation (Numerical Recipes, 3rd ed., 6.1)."""
    return dispatch(_lgamma_op, (input,))


@method("digamma")
def digamma(input):
    """The digamma function psi(x) = d/dx lgamma(x), elementwise (``torch.digamma``, ``torch.special.psi``).

    input: a tensor of any shape. Returns a tensor of the same shape: -inf at 0 and NaN at negative integers,
    as torch. Recurrence + asymptotic series (Abramowitz & Stegun 6.3.5, 6.3.18)."""
    return dispatch(_digamma_op, (input,))


@method("polygamma")
def _polygamma_method(self, n):
    return polygamma(n, self)


def polygamma(n, input):
    """The n-th derivative of digamma, elementwise (``torch.polygamma(n, input)``).

    n: a non-negative int (RuntimeError otherwise). input: a tensor of any shape. Returns a tensor of the same
    shape; for n >= 1, (-1)^(n+1) n! zeta(n + 1, x) by Euler-Maclaurin summation."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if isinstance(input, Tensor) and input.dtype.is_complex:
        # PyTorch dispatches n = 0 and 1 to the digamma and trigamma kernels, which name themselves
        kernel = {0: "digamma", 1: "trigamma"}.get(n, "polygamma")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt._SCALAR_TYPE[input.dtype.name]}'")
    return dispatch(_polygamma_op, (input,), {"n": n})


def zeta(input, other):
    """The Hurwitz zeta function sum_k (other + k)^-input (``torch.special.zeta``).

    input (the order s) and other (q): tensors or numbers that broadcast. Returns a floating tensor: inf at
    s == 1 or at q a non-positive integer, NaN for s < 1, as torch. Gradients, which torch does not
    implement, come from the summation itself."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("special_zeta(): expected at least one tensor argument")
    if isinstance(input, Tensor) and isinstance(other, Tensor) and input._shape != other._shape:
        from .movement import broadcast_tensors
        input, other = broadcast_tensors(input, other)
    return dispatch(_zeta_op, (input, other))


@method("mvlgamma")
def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p (``torch.mvlgamma``, ``torch.special.multigammaln``):
    p (p - 1) / 4 log(pi) + sum_{i<p} lgamma(x - i / 2), elementwise. p: an int >= 1."""
    if not isinstance(p, int) or p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype is _dt.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if input.dtype.is_complex:  # PyTorch builds the p offsets with arange in the input's dtype
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{_dt._SCALAR_TYPE[input.dtype.name]}\'')
    from .creation import arange
    x = _as_float(input)
    # as ATen: the p shifts (1 - p) / 2 ... 0 as one tensor in x's dtype, broadcast against x on a last dim and
    # summed, so a huge p fails at that allocation (as there) instead of looping p times
    shifts = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=x.dtype, device=x.device)
    return lgamma(x.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) * 0.25 * math.log(math.pi)


for _name, _fn in (("lgamma_", lgamma), ("digamma_", digamma)):
    method(_name)(lambda self, _f=_fn: self._inplace(_f))
method("polygamma_")(lambda self, n: self._inplace(lambda x: polygamma(n, x)))
method("mvlgamma_")(lambda self, p: self._inplace(lambda x: mvlgamma(x, p)))

__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma"]


# ---- modified Bessel functions of the first kind, orders 0 and 1 ---------------------------------------------
# |x| < 30: the power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!), 90 terms (all positive: no cancellation);
# |x| >= 30: the large-argument expansion e^x / sqrt(2 pi x) * sum_k (-1)^k a_k(nu) / x^k (Abramowitz &
# Stegun 9.7.1), 30 terms. Both are within a few ulp of mpmath in float64 (tests/test_ops.py).
_BESSEL_SWITCH = 30.0


def _bessel_series(ax, nu):
    h = ax * 0.5
    q = h * h
    term = h if nu == 1 else ax * 0 + 1.0
    total = term
    for k in range(1, 90):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _bessel_asym_scaled(ax, nu):
    """e^-x I_nu(x) for large x."""
    mu = 4.0 * nu * nu
    coef, total = 1.0, ax * 0 + 1.0
    inv = 1 / ax
    p = inv
    for k in range(1, 31):
        coef = coef * (mu - (2 * k - 1) ** 2) / (k * 8.0)
        total = total + ((-1) ** k) * coef * p
        p = p * inv
    return total / (2 * math.pi * ax).sqrt()


@_half_in_float
def _bessel(x, nu, scaled):
    from .pointwise import exp, where
    x = _as_float(x)
    ax = x.abs()
    big = ax >= _BESSEL_SWITCH
    small_x = where(big, 0.0, ax)
    big_x = where(big, ax, _BESSEL_SWITCH)
    s = _bessel_series(small_x, nu)
    a = _bessel_asym_scaled(big_x, nu)
    if scaled:
        out = where(big, a, s * exp(-small_x))
    else:
        # a * exp(x) is 0 * inf past exp's range: the function itself is inf there (at x = +-inf itself
        # torch's Cephes formula gives NaN, kept)
        e = exp(big_x)
        out = where(big, where((e == float("inf")) & (big_x != float("inf")), float("inf"), a * e), s)
    return out * x.sign() if nu == 1 else out


def _i0_bw(c, g):
    return g * i1(c.inputs[0])


def _i0e_bw(c, g):
    x = c.inputs[0]
    return g * (special_i1e(x) - x.sign() * c.out)


def _i1_bw(c, g):
    from .pointwise import where
    x = c.inputs[0]
    safe = where(x == 0, 1.0, x)
    return g * where(x == 0, 0.5, i0(x) - c.out / safe)


def _i1e_bw(c, g):
    from .pointwise import where
    x = c.inputs[0]
    safe = where(x == 0, 1.0, x)
    return g * where(x == 0, 0.5, special_i0e(x) - c.out * (x.sign() + 1 / safe))


_i0_op = defop("i0", _float_meta, _i0_bw, decomp=lambda x: _bessel(x, 0, False),
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"i0_vml_cpu\" not implemented for '{T}'"))
_i0e_op = defop("special_i0e", _float_meta, _i0e_bw, decomp=lambda x: _bessel(x, 0, True), save_output=True)
_i1_op = defop("special_i1", _float_meta, _i1_bw, decomp=lambda x: _bessel(x, 1, False), save_output=True)
_i1e_op = defop("special_i1e", _float_meta, _i1e_bw, decomp=lambda x: _bessel(x, 1, True), save_output=True)


@method("i0")
def i0(input):
    """The modified Bessel function of the first kind of order 0, elementwise (``torch.i0``,
    ``torch.special.i0``): the power series below |x| = 30, the large-argument expansion above (Abramowitz &
    Stegun 9.6.10, 9.7.1). Gradient i1."""
    return dispatch(_i0_op, (input,))


def special_i0e(input):
    """exp(-|x|) * i0(x) (``torch.special.i0e``), finite for all x."""
    return dispatch(_i0e_op, (input,))


def i1(input):
    """The modified Bessel function of the first kind of order 1 (``torch.special.i1``); odd in x."""
    return dispatch(_i1_op, (input,))


def special_i1e(input):
    """exp(-|x|) * i1(x) (``torch.special.i1e``)."""
    return dispatch(_i1e_op, (input,))


method("i0_")(lambda self: self._inplace(i0))
__all__ += ["i0"]


# ---- regularized incomplete gamma: a cpu kernel (a convergence-driven loop), the derivative in ops --------
def _float_pair_meta(name, a, b, error):
    """Meta of a binary op on two tensors that promote to a floating dtype; ``error`` (torch's exception type
    for the op) for integer inputs, with ATen's kernel and type names."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        bad = a if not isinstance(a, Tensor) else b
        raise TypeError(f"{name}(): argument 'other' must be Tensor, not {type(bad).__name__}")
    dt = _dt.promote_types(a.dtype, b.dtype)
    if not dt.is_floating_point:
        word = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool"}.get(dt.name, dt.name)
        raise error(f"\"{name}_cpu\" not implemented for '{word}'")
    from .. import _strides
    return [(_strides.broadcast_shapes(a._shape, b._shape), dt)], [dt, dt]


def _igamma_meta(a, x, upper):
    return _float_pair_meta("igammac" if upper else "igamma", a, x, NotImplementedError)


def _igamma_bw(c, g):
    from .pointwise import exp, log
    upper = c.kw["upper"]
    if c.next_edges[0] is not None:
        raise NotImplementedError(f"the derivative for '{'igammac' if upper else 'igamma'}: input' is not "
                                  "implemented.")
    a, x = c.inputs
    dens = exp(log(x) * (a - 1) - x - lgamma(a))  # d/dx P(a, x): the Gamma(a) density
    return None, g * (-dens if upper else dens)


_IGAMMA_OPS = {}
from ._util import defop_on_cpu as _defop_on_cpu  # noqa: E402
_defop_on_cpu("igamma", _igamma_meta, _igamma_bw, _IGAMMA_OPS)


@method("igamma")
def igamma(input, other, *, out=None):
    """The regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a) of ``input`` = a and ``other`` = x
    (broadcast; floating; ``torch.igamma`` / ``torch.special.gammainc``). NaN for negative arguments; 1 at
    a = 0 < x. Differentiable in x only (NotImplementedError for a, as torch). Computed in float64 (power
    series / continued fraction, Numerical Recipes 6.2), which here is more accurate than torch's."""
    r = dispatch(_IGAMMA_OPS["igamma"], (input, other), {"upper": False})
    return r


@method("igammac")
def igammac(input, other, *, out=None):
    """The regularized upper incomplete gamma Q(a, x) = 1 - P(a, x) (``torch.igammac`` /
    ``torch.special.gammaincc``), computed directly where it is small."""
    r = dispatch(_IGAMMA_OPS["igamma"], (input, other), {"upper": True})
    return r


__all__ += ["igamma", "igammac"]


# ---- nextafter: the next representable float, a cpu kernel (NumPy's) ---------------------------------------
def _nextafter_meta(a, b):
    return _float_pair_meta("nextafter", a, b, NotImplementedError)


def _nextafter_bw(c, g):
    # torch's convention: locally the identity in input (except where input == other, which returns other),
    # constant in other
    a, b = c.inputs
    return g * (a != b), g * 0


_defop_on_cpu("nextafter", _nextafter_meta, _nextafter_bw, _IGAMMA_OPS)


@method("nextafter")
def nextafter(input, other, *, out=None):
    """The next floating-point value after ``input`` towards ``other``, elementwise (broadcast, promoted;
    ``torch.nextafter``). RuntimeError for integer tensors, as torch."""
    r = dispatch(_IGAMMA_OPS["nextafter"], (input, other))
    return r


method("nextafter_")(lambda self, other: self._inplace(nextafter, other))
__all__ += ["nextafter"]


# ---- spherical Bessel function of the first kind, order 0 -------------------------------------------------------
# j0(x) = sin(x) / x, as ATen's spherical_bessel_j0_forward (aten/src/ATen/native/Math.h) computes it: its Taylor
# series below |x| = 0.5 (no 0/0 at x = 0), 0 at +-inf. PyTorch gives it no derivative and compiles its cpu kernel
# for float32 and float64 only (integer and bool inputs promote to the default dtype).
_SBJ0_DENOMS = (-6.0, 120.0, -5040.0, 362880.0, -39916800.0, 6227020800.0)


def _sbj0_coefficients(dtype):
    # T(1) / T(n) of ATen's series, each rounded in the computing dtype as the C++ template does
    t = dtype.np.type
    return [float(t(1.0) / t(d)) for d in _SBJ0_DENOMS]


def _spherical_bessel_j0_meta(x):
    dt = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else _dt.get_default_dtype()
    return [(x._shape, dt)], [dt]


def _spherical_bessel_j0_decomp(x):
    from .pointwise import abs, isinf, sin, where
    x2 = x * x
    series = 0.0
    for c in reversed(_sbj0_coefficients(x.dtype)):
        series = x2 * (c + series)
    return where(isinf(x), 0.0, where(abs(x) < 0.5, 1.0 + series, sin(x) / x))


_spherical_bessel_j0_op = defop(
    "special_spherical_bessel_j0", _spherical_bessel_j0_meta, decomp=_spherical_bessel_j0_decomp,
    differentiable=False,
    refused=refuse(("float16", "bfloat16", "complex64", "complex128"), NotImplementedError,
                   "\"spherical_bessel_j0_cpu\" not implemented for '{T}'"))


def spherical_bessel_j0(input, *, out=None):
    """The spherical Bessel function of the first kind of order 0, j0(x) = sin(x) / x, elementwise
    (``torch.special.spherical_bessel_j0``; Abramowitz & Stegun 10.1.11). Any shape; float32/float64 out
    (integer and bool inputs promote to the default dtype); float16, bfloat16 and complex inputs raise
    NotImplementedError as PyTorch's. Not differentiable, as in PyTorch."""
    r = dispatch(_spherical_bessel_j0_op, (input,))
    return r
