from ..autograd.grad_mode import no_grad
from .._tensor import Size
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """A mixture whose k components are one batched distribution: ``component_distribution`` has rightmost
    batch dim k, ``mixture_distribution`` is a Categorical over k (``torch.distributions.MixtureSameFamily``).
    log_prob = logsumexp_k(log w_k + log p_k(x)); ValueError for a non-Categorical mixture or mismatched
    shapes. Not reparameterized (``sample`` only)."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs, cdbs = tuple(mixture_distribution.batch_shape), tuple(component_distribution.batch_shape[:-1])
        for a, b in zip(reversed(mdbs), reversed(cdbs)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({Size(mdbs)}) is not compatible with "
                                 f"`component_distribution.batch_shape`({Size(cdbs)})")
        km, kc = mixture_distribution.logits.shape[-1], component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(Size(cdbs), component_distribution.event_shape, validate_args=validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def support(self):
        return self._component_distribution.support

    def _pad(self, x):
        # x (sample + batch + event) -> with a component dim before the event dims
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, p):
        # mixture probs (mixture batch, k) -> broadcastable against (batch, k, event)
        dist_ndims = len(self.batch_shape)
        cat_ndims = len(self._mixture_distribution.batch_shape)
        p = p.reshape(tuple(p.shape[:-1]) + (1,) * (dist_ndims - cat_ndims) + (p.shape[-1],)) \
            if dist_ndims - cat_ndims > 0 else p
        return p.reshape(tuple(p.shape) + (1,) * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        mean_cond_var = (probs * self._component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self._component_distribution.mean - self._pad(self.mean)) ** 2).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        return (self._component_distribution.cdf(self._pad(x)) * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        lp = self._component_distribution.log_prob(self._pad(x))
        return (lp + self._mixture_distribution.logits.log_softmax(-1)).logsumexp(-1)

    def sample(self, sample_shape=Size()):
        with no_grad():
            sample_shape = Size(sample_shape) if not isinstance(sample_shape, int) else Size((sample_shape,))
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            idx = self._mixture_distribution.sample(sample_shape)  # (sample, batch)
            comp = self._component_distribution.sample(sample_shape)  # (sample, batch, k, event)
            idx = idx.reshape(tuple(idx.shape) + (1,) * (len(es) + 1))
            idx = idx.expand(tuple(idx.shape[:-len(es) - 1]) + (1,) + es) if es else idx
            return comp.gather(gather_dim, idx).squeeze(gather_dim)
