import math
from numbers import Number

from .._ops.random import randn
from .._ops.pointwise import log, log1p, rsqrt
from .._ops.special import digamma, lgamma
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .normal import _params


class StudentT(Distribution):
    """Student's t distribution with ``df`` > 0 degrees of freedom, location ``loc`` and ``scale`` > 0
    (``torch.distributions.StudentT``). Mean is nan for df <= 1, variance inf for 1 < df <= 2 and nan for
    df <= 1, as torch. Reparameterized: loc + scale * Z * rsqrt(V / df), Z ~ N(0, 1), V ~ Chi2(df)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = _params(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch = Size() if all(isinstance(a, Number) for a in (df, loc, scale)) else self.df.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        m = self.loc.clone()
        return m.masked_fill(self.df <= 1, float("nan"))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        v = self.scale ** 2 * (self.df / (self.df - 2))
        v = v.masked_fill((self.df <= 2) & (self.df > 1), float("inf"))
        return v.masked_fill(self.df <= 1, float("nan"))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        z = randn(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * rsqrt(v / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = log(self.scale) + 0.5 * log(self.df) + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df) \
            - lgamma(0.5 * (self.df + 1.0))
        return -0.5 * (self.df + 1.0) * log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return log(self.scale) + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df)) \
            + 0.5 * log(self.df) + lbeta
