import math

from .._ops.creation import empty
from .._ops.pointwise import atan, log, tan
from .._tensor import Size
from .normal import LocScale


class Cauchy(LocScale):
    """Cauchy (Lorentz) distribution, density 1 / (pi scale (1 + ((x - loc) / scale)^2))
    (``torch.distributions.Cauchy``); scale > 0. Mean and variance are undefined (nan / inf, as torch).
    Reparameterized: rsample = loc + scale * tan(pi (u - 1/2)), u ~ U(0, 1)."""

    @property
    def mean(self):
        return self.loc * float("nan")

    @property
    def variance(self):
        return self.loc * 0 + float("inf")

    def rsample(self, sample_shape=Size()):
        u = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device).uniform_()
        return self.loc + self.scale * tan(math.pi * (u - 0.5))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - log(self.scale) - log(1 + ((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + log(self.scale)
