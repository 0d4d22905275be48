import math
from numbers import Number

from .._ops.pointwise import erf, erfinv, log
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import Normal, _params


class HalfNormal(Distribution):
    """|X| with X ~ Normal(0, scale) (``torch.distributions.HalfNormal``); scale > 0, support x >= 0.
    Reparameterized: rsample = |scale * eps|."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        (self.scale,) = _params(scale)
        self._normal = Normal(0.0 * self.scale, self.scale, validate_args=False)
        super().__init__(Size() if isinstance(scale, Number) else self.scale.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)

    def rsample(self, sample_shape=Size()):
        return self._normal.rsample(sample_shape).abs()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lp = self._normal.log_prob(value) + math.log(2)
        return lp.masked_fill(value < 0, float("-inf"))

    def cdf(self, value):
        return erf(value / (self.scale * math.sqrt(2)))

    def icdf(self, prob):
        return self.scale * erfinv(prob) * math.sqrt(2)

    def entropy(self):
        return 0.5 * math.log(math.pi / 2) + log(self.scale) + 0.5
