import math

from .._ops.creation import empty
from .._ops.pointwise import exp, log
from .._tensor import Size
from .normal import LocScale

_EULER = 0.57721566490153286060


class Gumbel(LocScale):
    """Gumbel (type-I extreme value) distribution, cdf exp(-exp(-(x - loc) / scale))
    (``torch.distributions.Gumbel``); scale > 0. Reparameterized: rsample = loc - scale log(-log u)."""

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def rsample(self, sample_shape=Size()):
        from .._dtype import finfo
        tiny = finfo(self.loc.dtype).tiny
        u = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device).uniform_(
            tiny, 1 - finfo(self.loc.dtype).eps)
        return self.loc - self.scale * log(-log(u))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return z - exp(z) - log(self.scale)

    def cdf(self, value):
        return exp(-exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * log(-log(value))

    def entropy(self):
        return log(self.scale) + (1 + _EULER)
