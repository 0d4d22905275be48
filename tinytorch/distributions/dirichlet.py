from .._ops.pointwise import xlogy
from .._ops.special import digamma, lgamma
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import _gamma_rsample


class Dirichlet(Distribution):
    """Dirichlet distribution over the probability simplex, ``concentration`` (*, k) > 0
    (``torch.distributions.Dirichlet``): density Gamma(sum c) / prod Gamma(c_i) * prod x_i^(c_i - 1).
    Reparameterized: normalized Gamma(c_i, 1) draws with implicit reparameterization gradients."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(Size(concentration.shape[:-1]), Size(concentration.shape[-1:]), validate_args=validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        m = cm1 / cm1.sum(-1, keepdim=True)
        below = (self.concentration < 1).all(-1, keepdim=True)
        from .._ops.pointwise import where
        onehot = (self.concentration == self.concentration.amax(-1, keepdim=True)).to(m.dtype)
        return where(below, onehot, m)

    @property
    def variance(self):
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0 ** 2 * (c0 + 1))

    def rsample(self, sample_shape=Size()):
        from .._dtype import finfo
        g = _gamma_rsample(self.concentration, self._extended_shape(sample_shape))
        x = g / g.sum(-1, keepdim=True)
        return x.clamp(min=finfo(x.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return lgamma(c).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((c - 1.0) * digamma(c)).sum(-1)
