"""Gamma, Beta and Poisson: densities through lgamma / digamma; draws from NumPy's samplers on the host stream
of the default generator (``tinytorch.manual_seed``), as the other random functions."""
from numbers import Number

import numpy as np

from .._ops.creation import _rng, tensor
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


class Gamma(Distribution):
    """Gamma distribution with shape ``concentration`` > 0 and ``rate`` > 0 (``torch.distributions.Gamma``):
    density rate^c x^(c-1) exp(-rate x) / Gamma(c). ``sample`` only: torch's reparameterized gradient through
    the sampler (implicit differentiation of the incomplete gamma function) is not implemented, and ``cdf``
    (the regularized incomplete gamma function) neither."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

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

    def sample(self, sample_shape=Size()):
        from .. import finfo
        shape = self._extended_shape(sample_shape)
        c = _broadcast_np(self.concentration, shape)
        x = _draw(self.rate, shape, lambda r, s: r.standard_gamma(c, s)) / self.rate.detach()
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
    (``torch.distributions.Beta``). ``sample`` only (see ``Gamma``)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval

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

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        a, b = _broadcast_np(self.concentration1, shape), _broadcast_np(self.concentration0, shape)
        return _draw(self.concentration1, shape, lambda r, s: r.beta(a, b, s))

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
