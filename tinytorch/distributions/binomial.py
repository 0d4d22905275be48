from numbers import Number

from .._ops.creation import empty, tensor
from .._ops.pointwise import exp, log1p
from .._ops.special import lgamma
from ..autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from .bernoulli import Bernoulli
from .distribution import Distribution
from .normal import _params


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Bernoulli):
    """The number of successes in ``total_count`` Bernoulli(p) trials, given ``probs`` or ``logits``
    (``torch.distributions.Binomial``). ``total_count`` (a number or tensor of non-negative integers)
    broadcasts with the parameter. Samples are floats; no rsample."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        Bernoulli.__init__(self, probs, logits, validate_args=False)
        param = self._param
        self.total_count, param = _params(total_count, param)
        self.total_count = self.total_count.to(param.dtype)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch = Size() if isinstance(total_count, Number) and isinstance(probs if probs is not None else logits,
                                                                          Number) else param.shape
        Distribution.__init__(self, batch, validate_args=validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        n = int(self.total_count.max().item()) if self.total_count.numel() else 0
        with no_grad():
            if n == 0:
                return self.probs.new_zeros(shape)
            u = empty(shape + (n,), dtype=self.probs.dtype, device=self.probs.device).uniform_()
            trial = tensor(list(range(n)), dtype=self.probs.dtype, device=self.probs.device)
            hits = (u < self.probs.expand(shape).unsqueeze(-1)) & (trial < self.total_count.expand(shape).unsqueeze(-1))
            return hits.to(self.probs.dtype).sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_binom = lgamma(n + 1) - lgamma(value + 1) - lgamma(n - value + 1)
        # n log(1 + e^l), written stably
        normalize = n * _clamp_by_zero(logits) + n * log1p(exp(-logits.abs()))
        return value * logits + log_binom - normalize

    def entropy(self):
        n = int(self.total_count.max().item())
        if bool((self.total_count != n).any()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        support = tensor(list(range(n + 1)), dtype=self.probs.dtype, device=self.probs.device)
        support = support.reshape((-1,) + (1,) * len(self._batch_shape))
        lp = self.log_prob(support)
        return -(exp(lp) * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max().item())
        if bool((self.total_count != n).any()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = tensor(list(range(n + 1)), dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
