from numbers import Number

from .._ops.special import lgamma
from .._ops.pointwise import exp, sigmoid
from ..autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from .bernoulli import BinaryParams
from .distribution import Distribution
from .normal import _params


def _logsigmoid(x):
    from ..nn.functional import logsigmoid
    return logsigmoid(x)


class NegativeBinomial(BinaryParams, Distribution):
    """The number of successes before ``total_count`` failures in Bernoulli trials of success probability
    ``probs`` (or ``logits``; exactly one) (``torch.distributions.NegativeBinomial``). Samples come from
    Poisson(Gamma(total_count, rate=exp(-logits))); no rsample."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = _params(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = _params(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        scalar = isinstance(total_count, Number) and isinstance(probs if probs is not None else logits, Number)
        super().__init__(Size() if scalar else self._param.shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.total_count * exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * exp(self.logits)).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    def sample(self, sample_shape=Size()):
        from .._ops.random import poisson
        from .gamma import Gamma
        with no_grad():
            rate = Gamma(self.total_count, exp(-self.logits), validate_args=False).sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        unnormalized = self.total_count * _logsigmoid(-self.logits) + value * _logsigmoid(self.logits)
        norm = -lgamma(self.total_count + value) + lgamma(1.0 + value) + lgamma(self.total_count)
        norm = norm.masked_fill(self.total_count + value == 0.0, 0.0)  # the 0-trial, 0-success case
        return unnormalized - norm
