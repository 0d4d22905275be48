"""Continuous relaxations of discrete distributions (Maddison et al. 2017, "The Concrete Distribution";
Jang et al. 2017, "Categorical Reparameterization with Gumbel-Softmax"): reparameterized stand-ins for
Bernoulli and one-hot Categorical samples, sharper as ``temperature`` goes to 0."""
from numbers import Number

from .._dtype import finfo
from .._ops.creation import full_like
from .._ops.random import rand
from .._ops.special import lgamma
from .._tensor import Size, Tensor
from . import constraints
from .bernoulli import BinaryParams
from .categorical import Categorical
from .distribution import Distribution
from .normal import _params
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform


def _clamp_unit(u):
    f = finfo(u.dtype)
    return u.clamp(min=f.eps, max=1 - f.eps)


class LogitRelaxedBernoulli(BinaryParams, Distribution):
    """The logit of a RelaxedBernoulli sample: (logit(u) + logits) / temperature, u ~ U(0, 1)
    (``torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli``)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _params(probs)
            self._param = self.probs
        else:
            (self.logits,) = _params(logits)
            self._param = self.logits
        scalar = isinstance(probs if probs is not None else logits, Number)
        super().__init__(Size() if scalar else self._param.shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = _clamp_unit(self.probs.expand(shape))
        u = _clamp_unit(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = self.logits - value * self.temperature
        t = self.temperature if isinstance(self.temperature, Tensor) else full_like(diff, self.temperature)
        return t.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxed distribution as a transformed base whose parameters it forwards."""
    has_rsample = True

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_Relaxed):
    """A reparameterized relaxation of Bernoulli on (0, 1): sigmoid of a LogitRelaxedBernoulli sample
    (``torch.distributions.RelaxedBernoulli``)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical sample: log_softmax((logits + g) / temperature), g ~ Gumbel(0, 1)
    (``torch.distributions.relaxed_categorical.ExpRelaxedCategorical``)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = _clamp_unit(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        t = self.temperature if isinstance(self.temperature, Tensor) else full_like(value[..., 0], self.temperature)
        log_scale = lgamma(full_like(t, float(k))) + t.log() * (k - 1)
        score = self.logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_Relaxed):
    """A reparameterized relaxation of one-hot Categorical on the simplex: the Gumbel-softmax sample
    softmax((logits + g) / temperature) (``torch.distributions.RelaxedOneHotCategorical``)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits), ExpTransform(),
                         validate_args=validate_args)
