from numbers import Number

from .._dtype import finfo
from .._ops.random import bernoulli as _bernoulli
from .._ops.pointwise import log, log1p, sigmoid
from ..autograd.grad_mode import no_grad
from .._tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits as _bce_logits
from . import constraints
from .distribution import Distribution
from .normal import _params


def _clamp_probs(p):
    eps = finfo(p.dtype).eps
    return p.clamp(eps, 1 - eps)


class BinaryParams:
    """The ``probs`` / ``logits`` pair of a binary-event distribution (Bernoulli, NegativeBinomial,
    LogitRelaxedBernoulli): one is given, the other is derived on first use, as torch's lazy_property."""

    def __getattr__(self, name):
        if name == "probs":
            self.probs = sigmoid(self.__dict__["logits"])
            return self.probs
        if name == "logits":
            p = _clamp_probs(self.__dict__["probs"])
            self.logits = log(p) - log1p(-p)
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def param_shape(self):
        return self._param.shape


class Bernoulli(BinaryParams, Distribution):
    """Bernoulli distribution over {0, 1}, given ``probs`` or ``logits`` (exactly one) (``torch.distributions.
    Bernoulli``). Samples are in the parameter's float dtype; no rsample."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = _params(probs)
            param = self.probs
        else:
            (self.logits,) = _params(logits)
            param = self.logits
        self._param = param
        batch = Size() if isinstance(probs if probs is not None else logits, Number) else param.shape
        super().__init__(batch, validate_args=validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        m = (self.probs >= 0.5).to(self.probs.dtype)
        return m.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = _params(self.logits, value)
        return -_bce_logits(logits, value, reduction="none")

    def entropy(self):
        return _bce_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        from .._ops.creation import arange
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
