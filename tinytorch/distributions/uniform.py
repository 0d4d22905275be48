from numbers import Number

from .._ops.random import rand
from .._ops.pointwise import log
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import _params


class Uniform(Distribution):
    """Uniform distribution on [low, high) (``torch.distributions.Uniform``); low < high, broadcast to the
    batch shape. Reparameterized: rsample = low + (high - low) * u, u ~ U[0, 1)."""
    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _params(low, high)
        batch = Size() if isinstance(low, Number) and isinstance(high, Number) else self.low.shape
        super().__init__(batch, validate_args=validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError(f"Expected parameter low ({type(self.low).__name__} of shape {tuple(self.low.shape)}) "
                             f"of distribution {self!r} to satisfy the constraint LessThan(upper_bound=high), but "
                             f"found invalid values:\n{self.low}")

    @property
    def support(self):
        return constraints.half_open_interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return self.low * float("nan")

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).to(self.low.dtype) * (value < self.high).to(self.low.dtype)
        return log(inside) - log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return log(self.high - self.low)

    def __repr__(self):
        return f"Uniform(low: {self.low if self.low.numel() == 1 else self.low.shape}, " \
               f"high: {self.high if self.high.numel() == 1 else self.high.shape})"
