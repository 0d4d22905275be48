import math

from .._ops.pointwise import erf, erfinv, exp, expm1, log
from .._tensor import Size
from . import constraints
from .normal import Normal


class LogNormal(Normal):
    """Log-normal distribution: exp(X) with X ~ Normal(loc, scale) (``torch.distributions.LogNormal``); ``loc``
    and ``scale`` are the underlying normal's. Support x > 0. Reparameterized through the normal."""
    support = constraints.positive

    @property
    def mean(self):
        return exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self):
        return exp(self.loc - self.scale ** 2)

    @property
    def variance(self):
        s2 = self.scale ** 2
        return expm1(s2) * exp(2 * self.loc + s2)

    @property
    def stddev(self):
        return self.variance.sqrt()

    def rsample(self, sample_shape=Size()):
        return exp(super().rsample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = log(value)
        return -((y - self.loc) ** 2) / (2 * self.scale ** 2) - log(self.scale) - math.log(math.sqrt(2 * math.pi)) - y

    def cdf(self, value):
        return 0.5 * (1 + erf((log(value) - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return exp(self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2))

    def entropy(self):
        return super().entropy() + self.loc
