from .._dtype import finfo
from .._ops.random import multinomial
from ..autograd.grad_mode import no_grad
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution


class Categorical(Distribution):
    """Categorical distribution over {0, ..., K-1}, given ``probs`` (non-negative, normalized over the last dim)
    or ``logits`` (unnormalized log-probabilities), exactly one, shape (*batch, K)
    (``torch.distributions.Categorical``). Samples are int64 of shape sample_shape + batch_shape."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if not isinstance(probs, Tensor) or probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            if not isinstance(logits, Tensor) or logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            self._param = self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def __getattr__(self, name):
        if name == "probs":
            self.probs = self.__dict__["logits"].softmax(-1)
            return self.probs
        if name == "logits":
            eps = finfo(self.__dict__["probs"].dtype).eps
            p = self.__dict__["probs"].clamp(eps, 1 - eps)
            self.logits = p.log()
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.probs.new_full(self._extended_shape(), float("nan"))

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.probs.new_full(self._extended_shape(), float("nan"))

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, (tuple, list)):
            sample_shape = (sample_shape,)
        n = 1
        for s in sample_shape:
            n *= s
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = multinomial(probs_2d, n, True).T  # (n, batch numel)
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        from .._ops.movement import broadcast_tensors
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        from .._ops.creation import arange
        values = arange(self._num_events, device=self._param.device).reshape(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
