"""Gamma, Beta and Poisson: densities through lgamma / digamma; draws from NumPy's samplers on the host stream
of the default generator (``tinytorch.manual_seed``), as the other random functions. Gamma (and Beta, built on
it) are reparameterized with implicit gradients computed on the host next to the draw."""
from numbers import Number

import math

import numpy as np

from .._ops.creation import tensor
from .._ops.generator import _rng
from ..backends.cpu.special import _gamma_pq
from .._ops.pointwise import log, xlogy
from .._ops.special import digamma, lgamma
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import _params


def _draw(like, shape, fn):
    """A tensor of ``shape`` (dtype and device of ``like``) filled by ``fn(rng, shape)`` on the host."""
    arr = np.asarray(fn(_rng(None), tuple(shape)))
    return tensor(arr, device=like.device).to(like.dtype)


def _broadcast_np(t, shape):
    return np.broadcast_to(t.detach().cpu().numpy(), tuple(shape))


_lgamma_np = np.vectorize(math.lgamma, otypes=[np.float64])


def _standard_gamma_grad(a, z):
    """dz/da of a Gamma(a, 1) sample z held at a fixed quantile (implicit reparameterization, Figurnov et al.,
    "Implicit Reparameterization Gradients", 2018): -(dP(a, z)/da) / p(z; a), with dP/da by a central
    difference of the incomplete gamma function (relative step 1e-4, error ~1e-8)."""
    a, z = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(z, np.float64))
    h = 1e-4 * np.maximum(a, 1.0)
    h = np.minimum(h, a / 2)
    p_hi, q_hi = _gamma_pq(a + h, z)
    p_lo, q_lo = _gamma_pq(a - h, z)
    # difference the smaller of P and Q: 1 - P loses the far upper tail to rounding
    dpda = np.where(p_hi + p_lo <= q_hi + q_lo, p_hi - p_lo, q_lo - q_hi) / (2 * h)
    logpdf = (a - 1) * np.log(z) - z - _lgamma_np(a)
    return -dpda / np.exp(logpdf)


def _gamma_rsample(concentration, shape):
    """Standard Gamma(concentration, 1) samples of ``shape`` whose gradient with respect to ``concentration``
    is the implicit reparameterization gradient: the value is the host draw z, and z + g * (c - c.detach())
    carries dz/dc = g to c."""
    from .._dtype import finfo
    c = _broadcast_np(concentration, shape).astype(np.float64)
    z = np.asarray(_rng(None).standard_gamma(c, tuple(shape)), np.float64)
    z = np.maximum(z, finfo(concentration.dtype).tiny)
    zt = tensor(z, device=concentration.device).to(concentration.dtype)
    if not concentration.requires_grad:
        return zt
    g = tensor(_standard_gamma_grad(c, z), device=concentration.device).to(concentration.dtype)
    ce = concentration.expand(tuple(shape))
    return zt + g * (ce - ce.detach())


class Gamma(Distribution):
    """Gamma distribution with shape ``concentration`` > 0 and ``rate`` > 0 (``torch.distributions.Gamma``):
    density rate^c x^(c-1) exp(-rate x) / Gamma(c). Reparameterized: rsample = z / rate with z ~ Gamma(c, 1)
    and dz/dc the implicit reparameterization gradient (see ``_standard_gamma_grad``)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _params(concentration, rate)
        batch = Size() if isinstance(concentration, Number) and isinstance(rate, Number) else self.rate.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape=Size()):
        from .._dtype import finfo
        x = _gamma_rsample(self.concentration, self._extended_shape(sample_shape)) / self.rate
        return x.clamp(min=finfo(x.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return xlogy(c, r) + xlogy(c - 1, value) - r * value - lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - log(self.rate) + lgamma(c) + (1.0 - c) * digamma(c)


class Beta(Distribution):
    """Beta distribution on [0, 1] with ``concentration1`` (alpha) > 0 and ``concentration0`` (beta) > 0
    (``torch.distributions.Beta``). Reparameterized: X / (X + Y) of X ~ Gamma(alpha), Y ~ Gamma(beta), each
    with its implicit reparameterization gradient."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _params(concentration1, concentration0)
        scalar = isinstance(concentration1, Number) and isinstance(concentration0, Number)
        super().__init__(Size() if scalar else self.concentration1.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=Size()):
        from .._dtype import finfo
        shape = self._extended_shape(sample_shape)
        x = _gamma_rsample(self.concentration1, shape)
        y = _gamma_rsample(self.concentration0, shape)
        eps = finfo(x.dtype).eps
        return (x / (x + y)).clamp(min=eps, max=1 - eps)

    def _lbeta(self):
        a, b = self.concentration1, self.concentration0
        return lgamma(a) + lgamma(b) - lgamma(a + b)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return xlogy(a - 1, value) + xlogy(b - 1, 1 - value) - self._lbeta()

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        return self._lbeta() - (a - 1) * digamma(a) - (b - 1) * digamma(b) + (a + b - 2) * digamma(a + b)


class Poisson(Distribution):
    """Poisson distribution with ``rate`` >= 0 over the non-negative integers (``torch.distributions.Poisson``):
    log_prob(k) = k log(rate) - rate - lgamma(k + 1)."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _params(rate)
        super().__init__(Size() if isinstance(rate, Number) else self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        lam = _broadcast_np(self.rate, shape)
        return _draw(self.rate, shape, lambda r, s: r.poisson(lam, s))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return xlogy(value, self.rate) - self.rate - lgamma(value + 1)


class Chi2(Gamma):
    """Chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)
    (``torch.distributions.Chi2``)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self):
        return self.concentration * 2
