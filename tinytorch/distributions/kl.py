"""KL divergence KL(p || q) between distributions, looked up by the pair of types (``torch.distributions.kl``).

``register_kl(P, Q)`` decorates a function computing KL(p || q) for p of type P and q of type Q; lookups
take the most specific registered pair along both classes' MROs. Unregistered pairs raise
NotImplementedError. Formulas as in torch/distributions/kl.py (closed forms of each pair)."""
import math

from .._ops.pointwise import log, where
from .._ops.special import digamma, lgamma
from ..nn.functional import softplus
from .bernoulli import Bernoulli
from .categorical import Categorical
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Beta, Gamma, Poisson
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .uniform import Uniform

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for p of ``type_p`` and q of ``type_q``."""
    def deco(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return deco


def _lookup(tp, tq):
    best, rank = None, None
    for i, a in enumerate(tp.__mro__):
        for j, b in enumerate(tq.__mro__):
            fn = _KL_REGISTRY.get((a, b))
            if fn is not None and (rank is None or (i + j, i) < rank):
                best, rank = fn, (i + j, i)
    return best


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], elementwise over the batch shape. p, q: distributions whose
    type pair has a registered closed form (NotImplementedError otherwise)."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                  f"{type(q).__name__}")
    return fn(p, q)


_INF = float("inf")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(p.probs == 0, 0.0, where(q.probs == 0, _INF, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(p.probs == 1, 0.0, where(q.probs == 1, _INF, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, 0.0, where(q.probs == 0, _INF, t))
    return t.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -log(ratio) + ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * log(p.rate / q.rate)
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sp = p.concentration1 + p.concentration0
    sq = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sp)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sq)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sq - sp) * digamma(sp)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -log(ratio) + diff / q.scale + ratio * (-diff / p.scale).exp() - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (log(p.rate) - log(q.rate)) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    out = log((q.high - q.low) / (p.high - p.low))
    return where((q.low > p.low) | (q.high < p.high), _INF, out)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = lgamma(sp) - lgamma(sq)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sp).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    from .._ops.linalg_composites import solve_triangular
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    k = p.event_shape[0]
    batch = tuple(p.batch_shape) if len(p.batch_shape) >= len(q.batch_shape) else tuple(q.batch_shape)
    A = solve_triangular(Lq.expand(batch + (k, k)), Lp.expand(batch + (k, k)), upper=False)
    term2 = (A * A).sum((-2, -1))
    term3 = _batch_mahalanobis(Lq.expand(batch + (k, k)), q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


del math
