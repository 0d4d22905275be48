from numbers import Number

from .._ops.creation import empty
from .._ops.pointwise import exp, log, log1p
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import _params


class Exponential(Distribution):
    """Exponential distribution with rate ``rate`` > 0, density rate * exp(-rate * x) on x >= 0
    (``torch.distributions.Exponential``). Reparameterized: rsample = E / rate, E ~ Exp(1)."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _params(rate)
        super().__init__(Size() if isinstance(rate, Number) else self.rate.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate * 0

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate ** -2

    def rsample(self, sample_shape=Size()):
        e = empty(self._extended_shape(sample_shape), dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return e / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        return -log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - log(self.rate)
