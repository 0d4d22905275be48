from .._dtype import finfo
from .._ops.creation import empty
from .._ops.pointwise import floor, log, log1p
from ..autograd.grad_mode import no_grad
from .._tensor import Size
from ..nn.functional import binary_cross_entropy_with_logits as _bce_logits
from . import constraints
from .bernoulli import Bernoulli


class Geometric(Bernoulli):
    """The number of failures before the first success of Bernoulli(p) trials, p in (0, 1], given ``probs``
    or ``logits`` (``torch.distributions.Geometric``). Samples are floats; no rsample."""
    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    has_enumerate_support = False

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = empty(shape, dtype=self.probs.dtype, device=self.probs.device).uniform_(tiny, 1)
            return floor(log(u) / log1p(-self.probs))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self.probs
        # p = 1 and value = 0: 0 * log(0) is 0 (the sure first success), as torch arranges
        q = p.masked_fill((p == 1) & (value == 0), 0) if value.shape == p.shape else p
        return value * log1p(-q) + log(p)

    def entropy(self):
        return _bce_logits(self.logits, self.probs, reduction="none") / self.probs

    def enumerate_support(self, expand=True):
        raise NotImplementedError("Geometric has no finite support to enumerate")
