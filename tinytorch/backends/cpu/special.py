"""Special functions of the ``cpu`` backend: erf (the C library's in float64, a rational fit in float32), erfinv,
the standard normal CDF Phi (for GELU) and the regularized incomplete gamma functions."""
import math

import numpy as np

from .registry import KERNELS, _f, _quiet


# erf in float64: the C library's erf (what PyTorch's CPU kernel calls), element by element; float32 has a
# vectorized rational approximation below
_erf_libm = np.frompyfunc(math.erf, 1, 1)


def _erf_exact(x):
    return np.asarray(_erf_libm(x), dtype=x.dtype)


# erfinv: Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011),
# evaluated in float64 and refined by Newton steps, so float64 results are accurate to the last bits and float32
# ones round correctly (the OpenCL backend's kernel starts from the same approximation). Near +-1, erf(x) - y
# cancels to nothing, so there the steps solve log erfc(|x|) = log(1 - |y|) instead, whose derivative stays
# moderate all the way to 1 - 2^-53.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682)
_erfc_libm = np.frompyfunc(math.erfc, 1, 1)
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _erfinv(a):
    y = np.asarray(a, np.float64)
    t = np.abs(y)
    inside = t < 1
    t = np.where(inside, t, 0.0)
    w = -np.log((1.0 - t) * (1.0 + t))
    wc, wt = w - 2.5, np.sqrt(w) - 3.0
    pc, pt = np.full_like(w, _ERFINV_CENTRAL[0]), np.full_like(w, _ERFINV_TAIL[0])
    for cc, ct in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        pc = cc + pc * wc
        pt = ct + pt * wt
    x = np.where(w < 5.0, pc, pt) * t
    near_one = t >= 0.5
    log_target = np.log(np.where(near_one, 1.0 - t, 1.0))
    for _ in range(4):  # the tail's start is an extrapolation past 1 - 2^-24: one more step than float32 needs
        d = _TWO_OVER_SQRT_PI * np.exp(-x * x)
        ec = np.asarray(_erfc_libm(np.where(near_one, x, 0.0)), np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            step_tail = (np.log(ec) - log_target) * ec / d
        step_central = (np.asarray(_erf_libm(x), np.float64) - t) / d
        x = x + np.where(near_one, step_tail, -step_central)
    # erfinv(+-1) = +-inf; outside [-1, 1] (and at NaN) it is NaN
    x = np.where(inside, np.copysign(x, y), np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan))
    return x.astype(a.dtype, copy=False)


KERNELS.add("erfinv", _f(_erfinv))


# erf for float32 as a rational function of x^2 on [-c, c], c = erfinv(1 - 2^-24) (beyond it erf rounds to
# +-1): the minimax fit used by XLA and Eigen for float32, max abs error 3.4e-7 here. Evaluated in chunks
# that stay in cache, it is vectorized where the C library's erf runs element by element.
_ERF_P = np.array([0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
                   1.128379143519084], np.float32)
_ERF_Q = np.array([-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
                   0.11098505178285362, 0.49746925110067538, 1.0], np.float32)
# Past erfinv(1 - 2^-24) = 3.7439 the fit is an extrapolation that crosses 1 at ~3.851: clipping the input at
# 3.86 and the result to [-1, 1] makes erf exactly +-1 there, as float32 rounding of the true erf is, so
# 1 + erf(x) is exactly 0 for very negative x (GELU's Phi underflows to 0, as in torch)
_ERF_CLIP = np.float32(3.86)
_CHUNK = 1 << 15


def _erf32_into(x, out):
    np.clip(x, -_ERF_CLIP, _ERF_CLIP, out=out)
    x2 = out * out
    p = x2 * _ERF_P[0]
    for c in _ERF_P[1:-1]:
        p += c
        p *= x2
    p += _ERF_P[-1]
    q = x2 * _ERF_Q[0]
    for c in _ERF_Q[1:-1]:
        q += c
        q *= x2
    q += _ERF_Q[-1]
    out *= p
    out /= q
    np.clip(out, -1, 1, out=out)


def _erf(a):
    if a.dtype == np.float32:
        xf = np.ascontiguousarray(a).reshape(-1)
        out = np.empty_like(xf)
        for i in range(0, xf.size, _CHUNK):
            _erf32_into(xf[i:i + _CHUNK], out[i:i + _CHUNK])
        return out.reshape(a.shape)
    return np.asarray(_erf_exact(a), dtype=a.dtype)


KERNELS.add("erf", _f(_erf))


def _phi32(x, pdf_times_x=False):
    """Phi(x) = 0.5 * (1 + erf(x / sqrt 2)) of a float32 array; with ``pdf_times_x`` adds x * phi(x)."""
    xf = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(xf)
    for i in range(0, xf.size, _CHUNK):
        xc, oc = xf[i:i + _CHUNK], out[i:i + _CHUNK]
        _erf32_into(xc * np.float32(0.7071067811865476), oc)
        oc += 1
        oc *= np.float32(0.5)
        if pdf_times_x:
            e = xc * xc
            e *= np.float32(-0.5)
            np.exp(e, out=e)
            e *= xc
            e *= np.float32(0.3989422804014327)
            oc += e
    return out.reshape(x.shape)


def _phi(x):
    """The standard normal CDF, 0.5 * (1 + erf(x / sqrt 2)): the C library's erf in float64, the rational erf in float32."""
    if x.dtype == np.float32:
        return _phi32(x)
    out = np.asarray(_erf_exact(x * np.asarray(0.7071067811865476, x.dtype)), x.dtype)
    out += 1
    out *= np.asarray(0.5, x.dtype)
    return out


_lgamma_np = np.frompyfunc(math.lgamma, 1, 1)


_EPS = float(np.finfo(np.float64).eps)
_MAX_TERMS = 5000
_BIG_A = 1e5   # past this order the sums need ~sqrt(a) terms: the Wilson-Hilferty normal approximation instead
_erfc_np = np.frompyfunc(math.erfc, 1, 1)


def _gamma_pq(a, x):
    """The regularized incomplete gamma functions (P(a, x), Q(a, x) = 1 - P) of float64 arrays: the power series
    for P where x < a + 1, Lentz's continued fraction for Q otherwise (Numerical Recipes 6.2); each branch's
    own function is exact to rounding (so the smaller of P and Q keeps its relative accuracy) and the other is
    1 minus it. torch's values at the edges (a = 0, x = 0, x = inf), NaN for negative arguments. Used by the
    ``igamma`` kernel and by the Gamma distribution's implicit reparameterization gradient."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    P = np.full(a.shape, np.nan)
    Q = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a >= 0) & (x >= 0) & ~((a == 0) & (x == 0)) & ~(np.isinf(a) & np.isinf(x))
        one = ok & ((a == 0) | np.isposinf(x))
        zero = ok & ((x == 0) | np.isposinf(a))
        P[one], Q[one], P[zero], Q[zero] = 1.0, 0.0, 0.0, 1.0
        reg = ok & (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        ar, xr = a[reg], x[reg]
        pre = np.exp(ar * np.log(xr) - xr - _lgamma_np(ar).astype(np.float64))
        big = ar > _BIG_A
        ser = (xr < ar + 1) & ~big
        cf = ~ser & ~big
        # series: P = pre * sum_n x^n / (a (a+1) ... (a+n))
        sa, sx = ar[ser], xr[ser]
        term = 1.0 / sa
        total = term.copy()
        ap = sa.copy()
        live = np.ones(sa.shape, bool)
        # a cap on the terms: for a huge ``a`` close to ``x`` the series needs ~sqrt(a) of them
        for _ in range(_MAX_TERMS):
            if not live.any():
                break
            ap[live] += 1
            term[live] *= sx[live] / ap[live]
            total[live] += term[live]
            live &= np.abs(term) > np.abs(total) * 1e-17
        p_ser = total * pre[ser]
        # continued fraction (modified Lentz): Q = pre * h
        ca, cx = ar[cf], xr[cf]
        tiny = 1e-300
        b = cx + 1 - ca
        c = np.full(ca.shape, 1 / tiny)
        d = 1 / b
        h = d.copy()
        live = np.ones(ca.shape, bool)
        for i in range(1, _MAX_TERMS + 1):
            if not live.any():
                break
            idx = np.flatnonzero(live)
            an = -i * (i - ca[idx])
            b[idx] += 2
            dl = an * d[idx] + b[idx]
            dl[np.abs(dl) < tiny] = tiny
            cl = b[idx] + an / c[idx]
            cl[np.abs(cl) < tiny] = tiny
            dl = 1 / dl
            delta = dl * cl
            d[idx], c[idx] = dl, cl
            h[idx] *= delta
            # two ulps of 1: for a huge b, delta is b * (1 / b), which rounds to 1 - ulp and never gets closer
            live[idx[np.abs(delta - 1) <= 2 * _EPS]] = False
        q_cf = h * pre[cf]
        pr, qr = np.empty(ar.shape), np.empty(ar.shape)
        pr[ser], qr[ser] = p_ser, 1 - p_ser
        pr[cf], qr[cf] = 1 - q_cf, q_cf
        if big.any():
            # (x / a)^(1/3) is normal with mean 1 - 1/(9a) and variance 1/(9a) (Abramowitz & Stegun 26.4.14)
            ab, xb = ar[big], xr[big]
            z = (np.cbrt(xb / ab) - (1 - 1 / (9 * ab))) / np.sqrt(1 / (9 * ab))
            qb = 0.5 * _erfc_np(z / math.sqrt(2)).astype(np.float64)
            pr[big], qr[big] = 1 - qb, qb
        P[reg], Q[reg] = pr, qr
    return P, Q


@KERNELS.register("igamma")
def _igamma(a, x, upper):
    """P(a, x), or Q(a, x) with ``upper``, in the dtype of the inputs (computed in float64)."""
    P, Q = _gamma_pq(a, x)
    return (Q if upper else P).astype(np.result_type(a, x), copy=False)


@KERNELS.register("special_spherical_bessel_j0")
def _spherical_bessel_j0(x):
    """j0(x) = sin(x) / x as ATen's spherical_bessel_j0_forward (Math.h): its Taylor series below |x| = 0.5 (each
    coefficient T(1) / T(n) rounded in x's dtype, as the C++ template), 0 at +-inf."""
    t = x.dtype.type
    x2 = x * x
    series = np.zeros_like(x)
    for d in (6227020800.0, -39916800.0, 362880.0, -5040.0, 120.0, -6.0):
        series += t(1.0) / t(d)
        series *= x2
    with _quiet():
        out = np.where(np.abs(x) < 0.5, 1 + series, np.sin(x) / x)
    return np.where(np.isinf(x), t(0), out).astype(x.dtype, copy=False)
