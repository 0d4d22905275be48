import math

from .._ops.creation import empty
from .._ops.pointwise import expm1, log, log1p
from .._tensor import Size
from .normal import LocScale


class Laplace(LocScale):
    """Laplace distribution, density exp(-|x - loc| / scale) / (2 scale) (``torch.distributions.Laplace``);
    scale > 0. Reparameterized by the inverse cdf of u ~ U(eps - 1, 1), as torch."""

    @property
    def variance(self):
        return 2 * self.scale ** 2

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()):
        from .._dtype import finfo
        eps = finfo(self.loc.dtype).eps
        u = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device).uniform_(
            eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * expm1(-d.abs() / self.scale)

    def icdf(self, value):
        t = value - 0.5
        return self.loc - self.scale * t.sign() * log1p(-2 * t.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)
