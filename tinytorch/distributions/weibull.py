import math

from .._ops.creation import ones_like
from .._ops.special import lgamma
from .._ops.pointwise import exp, log
from . import constraints
from .exponential import Exponential
from .normal import _params
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform

_EULER = 0.57721566490153286060


class Weibull(TransformedDistribution):
    """Two-parameter Weibull distribution, cdf 1 - exp(-(x / scale) ** concentration) on x > 0
    (``torch.distributions.Weibull``): scale * E ** (1 / concentration) for E ~ Exponential(1), so it is
    reparameterized."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = _params(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, [PowerTransform(self.concentration_reciprocal), AffineTransform(0, self.scale)],
                         validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration_reciprocal

    @property
    def variance(self):
        return self.scale ** 2 * (exp(lgamma(1 + 2 * self.concentration_reciprocal))
                                  - exp(2 * lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return _EULER * (1 - self.concentration_reciprocal) + log(self.scale * self.concentration_reciprocal) + 1


class Pareto(TransformedDistribution):
    """Pareto type-I distribution with minimum ``scale`` and tail index ``alpha``: scale * exp(E), E ~
    Exponential(alpha) (``torch.distributions.Pareto``)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        from .transforms import ExpTransform
        self.scale, self.alpha = _params(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(0, self.scale)], validate_args=validate_args)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale) (``torch.distributions.HalfCauchy``); support x >= 0."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        from .cauchy import Cauchy
        from .transforms import AbsTransform
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        from .._ops.creation import full
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def mode(self):
        return self.scale * 0

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        from .._ops.pointwise import where
        if self._validate_args:
            self._validate_sample(value)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
