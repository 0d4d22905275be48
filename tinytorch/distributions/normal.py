import math
from numbers import Number

from .._ops.creation import tensor
from .._ops.random import randn
from .._ops.movement import broadcast_tensors
from .._ops.pointwise import erf, erfinv, log
from ..autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from .distribution import Distribution


def _params(*args):
    """Broadcast parameters given as numbers or tensors to tensors of one shape (default dtype for numbers)."""
    from .._tensor import Tensor
    like = next((a for a in args if isinstance(a, Tensor)), None)
    ts = [a if isinstance(a, Tensor) else tensor(float(a), dtype=like.dtype if like is not None else None,
                                                   device=like.device if like is not None else None) for a in args]
    return broadcast_tensors(*ts)


class LocScale(Distribution):
    """A distribution over the reals symmetric about ``loc`` with spread ``scale`` > 0, broadcast to the
    batch shape: the shared part of Normal and Laplace (parameters, mean and mode)."""
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


class Normal(LocScale):
    """Normal distribution N(loc, scale^2) (``torch.distributions.Normal``); loc and scale broadcast to the
    batch shape, scale > 0. Reparameterized: rsample = loc + scale * eps, eps ~ N(0, 1)."""

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - log(self.scale) - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)
