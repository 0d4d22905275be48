import math
from numbers import Number

from .._ops.creation import empty
from .._ops.pointwise import expm1, log, log1p
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import _params


class Laplace(Distribution):
    """Laplace distribution, density exp(-|x - loc| / scale) / (2 scale) (``torch.distributions.Laplace``);
    scale > 0. Reparameterized by the inverse cdf of u ~ U(eps - 1, 1), as torch."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _params(loc, scale)
        batch = Size() if isinstance(loc, Number) and isinstance(scale, Number) else self.loc.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale ** 2

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()):
        from .. import finfo
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
