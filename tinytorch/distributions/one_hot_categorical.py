from .._ops.special import lgamma
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class _OverCategorical(Distribution):
    """Distributions of vectors built from one Categorical over the last dim: its ``probs`` / ``logits``, and
    event shape (K,)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}

    def __init__(self, probs, logits, validate_args):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits


class OneHotCategorical(_OverCategorical):
    """A Categorical draw as a one-hot vector of length K (``torch.distributions.OneHotCategorical``): given
    ``probs`` or ``logits`` of shape (*batch, K); event shape (K,). Samples are in the parameter's dtype."""
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(probs, logits, validate_args)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        from ..nn.functional import one_hot
        return one_hot(self.probs.argmax(-1), self.probs.shape[-1]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        from ..nn.functional import one_hot
        idx = self._categorical.sample(sample_shape)
        return one_hot(idx, self.probs.shape[-1]).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()


class Multinomial(_OverCategorical):
    """Counts of ``total_count`` Categorical draws over K categories (``torch.distributions.Multinomial``):
    ``probs`` or ``logits`` of shape (*batch, K); event shape (K,). Samples are in the parameter's dtype."""
    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        super().__init__(probs, logits, validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        from ..nn.functional import one_hot
        draws = self._categorical.sample(Size((self.total_count,)) + Size(sample_shape))
        return one_hot(draws, self.probs.shape[-1]).to(self.probs.dtype).sum(0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        # a category of probability 0 that was not drawn contributes 0 * -inf = 0
        logits = logits.masked_fill((value == 0) & (logits == float("-inf")), 0) if value.shape == logits.shape \
            else logits
        log_powers = (logits * value).sum(-1)
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + log_powers

    def entropy(self):
        raise NotImplementedError("Multinomial.entropy is not implemented in tinytorch")
