"""tinytorch.distributions against torch.distributions: densities, entropies, cdfs and their gradients on the
same parameters; sample shapes and sample statistics (the random streams differ, so moments are compared)."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch

D = tt.distributions
TD = torch.distributions


def _eye4(like):
    m = __import__("tinytorch" if "tinytorch" in type(like).__module__ else "torch")
    return m.eye(4, dtype=like.dtype)


def both(a, requires_grad=True):
    a = np.asarray(a, dtype=np.float64)
    return tt.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad)


CASES = [
    ("normal", lambda d, p, q: d.Normal(p, q.abs() + 0.1), (3, 4), lambda m, v: m.log_prob(v * 2)),
    ("normal_cdf", lambda d, p, q: d.Normal(p, q.abs() + 0.1), (3, 4), lambda m, v: m.cdf(v)),
    ("normal_icdf", lambda d, p, q: d.Normal(p, q.abs() + 0.1), (3, 4), lambda m, v: m.icdf(v.abs() * 0.4 + 0.05)),
    ("normal_entropy", lambda d, p, q: d.Normal(p, q.abs() + 0.1), (3, 4), lambda m, v: m.entropy() * v),
    ("uniform", lambda d, p, q: d.Uniform(p - 3, p + q.abs() + 3), (3, 4), lambda m, v: m.log_prob(v)),
    ("uniform_cdf_entropy", lambda d, p, q: d.Uniform(p - 1, p + q.abs() + 1), (3, 4),
     lambda m, v: m.cdf(m.low + v.abs() * 0.3) + m.entropy()),
    ("bernoulli_probs", lambda d, p, q: d.Bernoulli(probs=p.sigmoid()), (3, 4),
     lambda m, v: m.log_prob((v > 0).double()) + m.entropy()),
    ("bernoulli_logits", lambda d, p, q: d.Bernoulli(logits=p * 3), (3, 4),
     lambda m, v: m.log_prob((v > 0).double()) + m.entropy() + m.probs),
    ("categorical_probs", lambda d, p, q: d.Categorical(probs=p.abs() + 0.1), (3, 5),
     lambda m, v: m.log_prob((v.abs() * 2).long()[:, 0]) + m.entropy()),
    ("categorical_logits", lambda d, p, q: d.Categorical(logits=p), (3, 5),
     lambda m, v: m.log_prob((v.abs() * 2).long().clamp(max=4).T) + m.entropy() + m.probs.sum()),
    ("exponential", lambda d, p, q: d.Exponential(p.abs() + 0.2), (3, 4),
     lambda m, v: m.log_prob(v.abs()) + m.entropy() + m.cdf(v.abs()) + m.icdf(v.abs() * 0.3) + m.mean + m.variance),
    ("laplace", lambda d, p, q: d.Laplace(p, q.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob(v) + m.entropy() + m.cdf(v) + m.icdf(v.abs() * 0.4 + 0.05) + m.stddev),
    ("gamma", lambda d, p, q: d.Gamma(p.abs() + 0.3, q.abs() + 0.2), (3, 4),
     lambda m, v: m.log_prob(v.abs() + 0.01) + m.entropy() + m.mean + m.variance + m.mode),
    ("beta", lambda d, p, q: d.Beta(p.abs() + 0.3, q.abs() + 0.2), (3, 4),
     lambda m, v: m.log_prob(v.abs() * 0.4 + 0.05) + m.entropy() + m.mean + m.variance),
    ("poisson", lambda d, p, q: d.Poisson(p.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob((v.abs() * 3).floor()) + m.mean + m.variance),
    ("mvn_cov", lambda d, p, q: d.MultivariateNormal(p[0], q @ q.mT + _eye4(q)),
     (4, 4), lambda m, v: m.log_prob(v) + m.entropy() + m.variance.sum(-1)),
    ("mvn_scale_tril", lambda d, p, q: d.MultivariateNormal(p, scale_tril=q.tril() * 0.3 + _eye4(q) * 2), (4, 4),
     lambda m, v: m.log_prob(v * 2) + m.entropy()),
    ("mvn_precision", lambda d, p, q: d.MultivariateNormal(p[1], precision_matrix=q @ q.mT + _eye4(q)), (4, 4),
     lambda m, v: m.log_prob(v) + m.covariance_matrix.sum()),
    ("dirichlet", lambda d, p, q: d.Dirichlet(p.abs() + 0.3), (3, 4),
     lambda m, v: m.log_prob(v.abs() / v.abs().sum(-1, keepdim=True)) + m.entropy() + m.mean.sum(-1)
     + m.variance.sum(-1)),
    ("independent_normal", lambda d, p, q: d.Independent(d.Normal(p, q.abs() + 0.1), 1), (3, 4),
     lambda m, v: m.log_prob(v) + m.entropy()),
]


# the distributions added after the first set: densities, cdfs, entropies and moments with their gradients
CASES += [
    ("cauchy", lambda d, p, q: d.Cauchy(p, q.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob(v * 2) + m.cdf(v) + m.entropy() + m.icdf(v.abs() * 0.4 + 0.05)),
    ("gumbel", lambda d, p, q: d.Gumbel(p, q.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob(v * 2) + m.entropy() + m.mean + m.variance),
    ("lognormal", lambda d, p, q: d.LogNormal(p * 0.5, q.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob(v.abs() + 0.1) + m.entropy() + m.mean + m.variance + m.cdf(v.abs() + 0.2)),
    ("halfnormal", lambda d, p, q: d.HalfNormal(q.abs() + 0.1), (3, 4),
     lambda m, v: m.log_prob(v.abs()) + m.entropy() + m.mean + m.variance + m.cdf(v.abs())),
    ("studentt", lambda d, p, q: d.StudentT(q.abs() * 3 + 2.5, p, q.abs() + 0.2), (3, 4),
     lambda m, v: m.log_prob(v * 2) + m.entropy() + m.variance),
    ("chi2", lambda d, p, q: d.Chi2(q.abs() * 3 + 0.5), (3, 4),
     lambda m, v: m.log_prob(v.abs() + 0.1) + m.entropy() + m.mean),
]


# built on transforms (Weibull, Pareto, HalfCauchy, the relaxed ones), a mixture, and a count distribution
CASES += [
    ("weibull", lambda d, p, q: d.Weibull(p.abs() + 0.5, q.abs() + 0.7), (3, 4),
     lambda m, v: m.log_prob(v.abs() + 0.1) + m.entropy() + m.mean + m.variance + m.cdf(v.abs() + 0.2)),
    ("pareto", lambda d, p, q: d.Pareto(p.abs() + 0.5, q.abs() + 2.5), (3, 4),
     lambda m, v: m.log_prob(m.scale + v.abs()) + m.entropy() + m.mean + m.variance),
    ("halfcauchy", lambda d, p, q: d.HalfCauchy(q.abs() + 0.3), (3, 4),
     lambda m, v: m.log_prob(v.abs()) + m.entropy() + m.cdf(v.abs()) + m.icdf(v.abs() * 0.4 + 0.05)),
    ("negative_binomial_probs", lambda d, p, q: d.NegativeBinomial(q.abs() * 3 + 0.5, probs=p.sigmoid()), (3, 4),
     lambda m, v: m.log_prob((v.abs() * 3).floor()) + m.mean + m.variance),
    ("negative_binomial_logits", lambda d, p, q: d.NegativeBinomial(q.abs() + 1.0, logits=p), (3, 4),
     lambda m, v: m.log_prob((v.abs() * 3).floor()) + m.mode),
    ("relaxed_bernoulli", lambda d, p, q: d.RelaxedBernoulli(q.abs() + 0.5, logits=p), (3, 4),
     lambda m, v: m.log_prob(v.sigmoid() * 0.9 + 0.05)),
    ("relaxed_one_hot", lambda d, p, q: d.RelaxedOneHotCategorical(q[0, 0].abs() + 0.5, logits=p), (3, 4),
     lambda m, v: m.log_prob(v.softmax(-1))),
    ("mixture_normal", lambda d, p, q: d.MixtureSameFamily(d.Categorical(logits=p[0]), d.Normal(p[1], q[2].abs() + 0.2)),
     (3, 4), lambda m, v: m.log_prob(v) + m.cdf(v) + m.mean + m.variance),
    ("mixture_mvn", lambda d, p, q: d.MixtureSameFamily(d.Categorical(logits=p[:, 0]), d.Independent(
        d.Normal(p, q.abs() + 0.3), 1)), (3, 4), lambda m, v: m.log_prob(v[:2, None]) + m.mean.sum() + m.variance.sum()),
]


def _grad_rtol(name):
    # gradients through digamma meet torch's trigamma, which is accurate to ~5e-10 only (ours agrees with
    # mpmath to 1e-15: tests/test_ops.py::test_gamma_family_matches_mpmath)
    return 1e-8 if name in ("gamma", "beta", "dirichlet", "studentt", "chi2") else None


def _kl(pair):
    mod = __import__("tinytorch" if "tinytorch" in type(pair[0]).__module__ else "torch")
    return mod.distributions.kl_divergence(*pair)


KL_CASES = [
    ("normal", lambda d, p, q: (d.Normal(p, q.abs() + 0.1), d.Normal(q, p.abs() + 0.3))),
    ("bernoulli", lambda d, p, q: (d.Bernoulli(logits=p), d.Bernoulli(probs=q.sigmoid()))),
    ("categorical", lambda d, p, q: (d.Categorical(logits=p), d.Categorical(probs=q.abs() + 0.1))),
    ("exponential", lambda d, p, q: (d.Exponential(p.abs() + 0.2), d.Exponential(q.abs() + 0.1))),
    ("gamma", lambda d, p, q: (d.Gamma(p.abs() + 0.3, q.abs() + 0.2), d.Gamma(q.abs() + 0.5, p.abs() + 0.4))),
    ("beta", lambda d, p, q: (d.Beta(p.abs() + 0.3, q.abs() + 0.2), d.Beta(q.abs() + 0.5, p.abs() + 0.4))),
    ("laplace", lambda d, p, q: (d.Laplace(p, q.abs() + 0.1), d.Laplace(q, p.abs() + 0.3))),
    ("poisson", lambda d, p, q: (d.Poisson(p.abs() + 0.1), d.Poisson(q.abs() + 0.2))),
    ("uniform", lambda d, p, q: (d.Uniform(p - 1, p + 1), d.Uniform(p - 2 - q.abs(), p + 3))),
    ("uniform_outside", lambda d, p, q: (d.Uniform(p - 1, p + 1), d.Uniform(p, p + 3))),
    ("mvn", lambda d, p, q: (d.MultivariateNormal(p, scale_tril=q.tril() * 0.3 + _eye4(q) * 2),
                             d.MultivariateNormal(q[0], p @ p.mT + _eye4(p)))),
    ("dirichlet", lambda d, p, q: (d.Dirichlet(p.abs() + 0.3), d.Dirichlet(q.abs() + 0.5))),
    ("independent", lambda d, p, q: (d.Independent(d.Normal(p, q.abs() + 0.1), 1),
                                     d.Independent(d.Normal(q, p.abs() + 0.2), 1))),
]


@pytest.mark.parametrize("name,make", KL_CASES, ids=[c[0] for c in KL_CASES])
def test_kl_divergence_matches_torch(name, make):
    rng = np.random.default_rng(1)
    shape = (4, 4) if name == "mvn" else (3, 4)
    p_tt, p_th = both(rng.standard_normal(shape))
    q_tt, q_th = both(rng.standard_normal(shape))
    out_tt, out_th = _kl(make(D, p_tt, q_tt)), _kl(make(TD, p_th, q_th))
    assert_close(out_tt, out_th, "float64", msg=name)
    if name == "uniform_outside":
        return
    w = rng.standard_normal(tuple(out_th.shape))
    (out_tt * tt.tensor(w)).sum().backward()
    (out_th * torch.tensor(w)).sum().backward()
    for a, b in ((p_tt, p_th), (q_tt, q_th)):
        assert_close(a.grad, b.grad, "float64", rtol=_grad_rtol(name), msg=name)


def test_kl_unregistered_pair_and_register_kl():
    p, q = D.Normal(0.0, 1.0), D.Exponential(1.0)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, q)

    class MyNormal(D.Normal):
        pass
    # a subclass inherits its base pair's formula; a registration for the subclass pair takes precedence
    assert np.isclose(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item(), 0.5)
    D.register_kl(MyNormal, D.Normal)(lambda a, b: a.loc * 0 + 42.0)
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0


@pytest.mark.parametrize("name,make,shape,fn", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, make, shape, fn):
    rng = np.random.default_rng(0)
    p_tt, p_th = both(rng.standard_normal(shape))
    q_tt, q_th = both(rng.standard_normal(shape))
    v = rng.standard_normal(shape)
    out_tt = fn(make(D, p_tt, q_tt), tt.tensor(v))
    out_th = fn(make(TD, p_th, q_th), torch.tensor(v))
    assert_close(out_tt, out_th, "float64", msg=name)
    w = rng.standard_normal(tuple(out_th.shape))
    (out_tt * tt.tensor(w)).sum().backward()
    (out_th * torch.tensor(w)).sum().backward()
    for a, b in ((p_tt, p_th), (q_tt, q_th)):
        if b.grad is None:
            assert a.grad is None or not a.grad.any()
        else:
            assert_close(a.grad, b.grad, "float64", rtol=_grad_rtol(name), msg=name)


def test_shapes_and_properties_match_torch():
    for make in (lambda d, m: d.Normal(m.zeros(2, 3), m.ones(3)), lambda d, m: d.Uniform(m.zeros(2, 1), 2.0),
                 lambda d, m: d.Bernoulli(m.full((4,), 0.3)), lambda d, m: d.Categorical(m.ones(2, 3, 4)),
                 lambda d, m: d.Normal(0.0, 2.0), lambda d, m: d.Exponential(m.ones(3)),
                 lambda d, m: d.Laplace(m.zeros(2), 1.0), lambda d, m: d.Gamma(m.full((2, 3), 2.0), m.ones(3)),
                 lambda d, m: d.Beta(m.full((3,), 2.0), 3.0), lambda d, m: d.Poisson(m.full((2,), 4.0)),
                 lambda d, m: d.Independent(d.Normal(m.zeros(2, 3, 4), 1.0), 2),
                 lambda d, m: d.MultivariateNormal(m.zeros(2, 1, 3), m.eye(3).expand(4, 3, 3)),
                 lambda d, m: d.Dirichlet(m.ones(2, 5)), lambda d, m: d.Weibull(m.ones(2, 3), 1.5),
                 lambda d, m: d.Pareto(1.0, m.full((3,), 3.0)), lambda d, m: d.HalfCauchy(m.ones(2)),
                 lambda d, m: d.NegativeBinomial(m.full((3,), 4.0), probs=m.full((3,), 0.3)),
                 lambda d, m: d.MixtureSameFamily(d.Categorical(m.ones(2, 3)), d.Normal(m.zeros(2, 3), 1.0)),
                 lambda d, m: d.MixtureSameFamily(d.Categorical(m.ones(3)),
                                                  d.Independent(d.Normal(m.zeros(3, 2), 1.0), 1))):
        a, b = make(D, tt), make(TD, torch)
        assert a.batch_shape == tuple(b.batch_shape) and a.event_shape == tuple(b.event_shape)
        assert a.sample((5, 2)).shape == tuple(b.sample((5, 2)).shape)
        assert a.sample().shape == tuple(b.sample().shape)
        assert a.has_rsample == b.has_rsample
        for prop in ("mean", "variance"):
            assert_close(getattr(a, prop), getattr(b, prop), "float32", msg=prop)
    assert D.Categorical(tt.ones(2, 3)).sample((4,)).dtype == tt.int64
    assert_close(D.Bernoulli(tt.tensor([0.2, 0.7])).enumerate_support(), TD.Bernoulli(torch.tensor([0.2, 0.7]))
                 .enumerate_support())
    assert_close(D.Categorical(tt.ones(2, 3)).enumerate_support(), TD.Categorical(torch.ones(2, 3))
                 .enumerate_support())


def test_sample_statistics():
    tt.manual_seed(0)
    n = 20000
    x = D.Normal(tt.tensor([1.0, -2.0]), tt.tensor([0.5, 3.0])).sample((n,))
    assert np.allclose(x.mean(0).numpy(), [1.0, -2.0], atol=0.1)
    assert np.allclose(x.std(0).numpy(), [0.5, 3.0], rtol=0.05)
    u = D.Uniform(tt.tensor(-1.0), tt.tensor(3.0)).sample((n,))
    assert float(u.min()) >= -1.0 and float(u.max()) < 3.0 and abs(float(u.mean()) - 1.0) < 0.05
    b = D.Bernoulli(probs=tt.tensor([0.1, 0.8])).sample((n,))
    assert np.allclose(b.mean(0).numpy(), [0.1, 0.8], atol=0.02)
    for dist, mean, var in ((D.Exponential(tt.tensor(2.0)), 0.5, 0.25), (D.Laplace(1.0, 2.0), 1.0, 8.0),
                            (D.Gamma(tt.tensor(3.0), tt.tensor(2.0)), 1.5, 0.75),
                            (D.Beta(tt.tensor(2.0), tt.tensor(3.0)), 0.4, 0.04), (D.Poisson(tt.tensor(4.0)), 4.0, 4.0)):
        x = dist.sample((n,))
        assert abs(float(x.mean()) - mean) < 0.05 * max(1.0, mean), type(dist).__name__
        assert abs(float(x.var()) - var) < 0.1 * var, type(dist).__name__
    cov = tt.tensor([[2.0, 0.6], [0.6, 1.0]])
    x = D.MultivariateNormal(tt.tensor([1.0, -1.0]), cov).sample((n,))
    xc = x - x.mean(0)
    assert np.allclose((xc.T @ xc / n).numpy(), cov.numpy(), atol=0.06) and np.allclose(x.mean(0), [1, -1], atol=0.05)
    d = D.Dirichlet(tt.tensor([1.0, 2.0, 3.0])).sample((n,))
    assert np.allclose(d.sum(-1).numpy(), 1, atol=1e-5) and np.allclose(d.mean(0).numpy(), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    c = D.Categorical(probs=tt.tensor([0.2, 0.5, 0.3])).sample((n,))
    assert np.allclose(np.bincount(c.numpy(), minlength=3) / n, [0.2, 0.5, 0.3], atol=0.02)


def test_rsample_is_differentiable():
    loc, scale = tt.tensor([0.5], requires_grad=True), tt.tensor([2.0], requires_grad=True)
    tt.manual_seed(1)
    z = D.Normal(loc, scale).rsample((1000,))
    z.mean().backward()
    assert np.isclose(loc.grad.item(), 1.0)
    eps = (z.detach() - 0.5) / 2.0
    assert np.isclose(scale.grad.item(), eps.mean().item(), atol=1e-6)
    low = tt.tensor(0.0, requires_grad=True)
    D.Uniform(low, 1.0).rsample((10,)).sum().backward()
    assert low.grad is not None
    assert not D.Normal(loc, scale).sample().requires_grad
    with pytest.raises(NotImplementedError):
        D.Bernoulli(tt.tensor(0.5)).rsample()


def test_gamma_implicit_reparameterization_gradient():
    """dz/dalpha of a Gamma(alpha, 1) draw against torch's approximation (~1e-4) and mpmath (1e-6); the
    reparameterized samples carry it: d/dparam of the sample mean estimates d/dparam of the distribution mean."""
    from tinytorch.distributions.gamma import _standard_gamma_grad
    a = np.array([0.3, 1.0, 2.5, 10.0, 100.0, 0.05, 1000.0, 3.0, 0.5, 2.0])
    z = np.array([0.05, 0.7, 3.0, 8.0, 110.0, 1e-8, 1010.0, 40.0, 12.0, 1e-3])
    np.testing.assert_allclose(_standard_gamma_grad(a, z),
                               torch._standard_gamma_grad(torch.tensor(a), torch.tensor(z)).numpy(), rtol=5e-4)
    mpmath = pytest.importorskip("mpmath")
    for ai, zi in ((3.0, 40.0), (100.0, 110.0), (0.5, 12.0)):
        d = mpmath.diff(lambda t: mpmath.gammainc(t, 0, zi, regularized=True), ai)
        ref = float(-d / mpmath.exp((ai - 1) * mpmath.log(zi) - zi - mpmath.loggamma(ai)))
        assert abs(_standard_gamma_grad(np.array([ai]), np.array([zi]))[0] / ref - 1) < 1e-6
    tt.manual_seed(0)
    alpha, rate = tt.tensor(2.0, requires_grad=True), tt.tensor(1.5, requires_grad=True)
    D.Gamma(alpha, rate).rsample((40000,)).mean().backward()
    assert abs(alpha.grad.item() - 1 / 1.5) < 0.02 and abs(rate.grad.item() + 2.0 / 1.5 ** 2) < 0.03
    a1, b1 = tt.tensor(2.0, requires_grad=True), tt.tensor(3.0, requires_grad=True)
    x = D.Beta(a1, b1).rsample((40000,))
    assert float(x.min()) > 0 and float(x.max()) < 1
    x.mean().backward()
    assert abs(a1.grad.item() - 3 / 25) < 0.01 and abs(b1.grad.item() + 2 / 25) < 0.01
    assert not D.Gamma(2.0, 1.0).sample((3,)).requires_grad


def test_validation_errors_match_torch():
    for bad in (lambda d, m: d.Normal(m.zeros(2), m.tensor([1.0, -1.0])),
                lambda d, m: d.Bernoulli(probs=m.tensor([1.5])),
                lambda d, m: d.Uniform(m.tensor(2.0), m.tensor(1.0)),
                lambda d, m: d.Bernoulli(probs=m.tensor([0.5]), logits=m.tensor([0.0])),
                lambda d, m: d.Bernoulli(probs=m.tensor([0.5])).log_prob(m.tensor([0.5])),
                lambda d, m: d.Categorical(probs=m.tensor([0.5, 0.5])).log_prob(m.tensor(2))):
        with pytest.raises(ValueError):
            bad(TD, torch)
        with pytest.raises(ValueError):
            bad(D, tt)
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0


@pytest.mark.parametrize("name,args", [("Cauchy", (0.5, 2.0)), ("Gumbel", (0.5, 2.0)), ("LogNormal", (0.1, 0.5)),
                                       ("HalfNormal", (2.0,)), ("StudentT", (5.0, 0.5, 2.0)), ("Chi2", (3.0,))])
def test_new_distributions_sample_like_torch(name, args):
    """Sample shapes and medians (robust for Cauchy too) against torch's; rsample carries gradients."""
    tt.manual_seed(0)
    torch.manual_seed(0)
    s_tt = getattr(D, name)(*args).sample((20000,))
    s_th = getattr(TD, name)(*args).sample((20000,))
    assert tuple(s_tt.shape) == tuple(s_th.shape) == (20000,)
    assert abs(float(s_tt.median()) - float(s_th.median())) < 0.06
    p = tt.tensor([float(a) for a in args], requires_grad=True)
    getattr(D, name)(*p.unbind()).rsample((4,)).sum().backward()
    assert p.grad is not None and bool(tt.isfinite(p.grad).all())


def test_discrete_additions_match_torch():
    """Binomial, Geometric, Multinomial and OneHotCategorical: log_prob, entropy and moments with gradients
    against torch; sample shapes and sample means."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, (2, 3))
    res = []
    for m in (tt, torch):
        d = m.distributions
        probs = m.tensor(p, requires_grad=True)
        logits = m.tensor(p - 0.5, requires_grad=True)
        cnt = m.tensor([[0.0, 3.0, 5.0], [1.0, 2.0, 4.0]])
        b = d.Binomial(5, probs=probs)
        g = d.Geometric(logits=logits)
        mn = d.Multinomial(4, probs=probs)
        oh = d.OneHotCategorical(logits=logits)
        outs = [b.log_prob(cnt), b.entropy(), b.mean, b.variance, d.Binomial(m.tensor([3.0, 5.0, 7.0]), logits=logits).log_prob(cnt),
                g.log_prob(cnt), g.entropy(), g.mean, g.variance,
                mn.log_prob(m.tensor([[1.0, 2.0, 1.0], [0.0, 0.0, 4.0]])), mn.mean, mn.variance,
                oh.log_prob(m.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])), oh.entropy(), oh.mean]
        sum(o.sum() for o in outs).backward()
        res.append([o.detach().numpy() for o in outs] + [probs.grad.numpy(), logits.grad.numpy()])
    for a, b_ in zip(*res):
        np.testing.assert_allclose(a, b_, rtol=1e-6, atol=1e-7)
    tt.manual_seed(0)
    probs = tt.tensor(p)
    for dist, mean in ((tt.distributions.Binomial(5, probs), 5 * p), (tt.distributions.Geometric(probs), 1 / p - 1),
                       (tt.distributions.Multinomial(4, probs[0]), 4 * p[0] / p[0].sum()),
                       (tt.distributions.OneHotCategorical(probs[0]), p[0] / p[0].sum())):
        s = dist.sample((4000,))
        assert tuple(s.shape) == (4000,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
        np.testing.assert_allclose(s.mean(0).numpy(), mean, rtol=0.1, atol=0.05)


@pytest.mark.parametrize("name", ["tanh", "exp", "sigmoid", "affine_tanh", "affine_negative", "affine_event_dim",
                                  "compose"])
def test_transformed_distribution_matches_torch(name):
    """TransformedDistribution over Normal with the transforms SAC-style policies and flows use: log_prob
    and cdf values and gradients, batch and event shapes, against torch."""
    rng = np.random.default_rng(0)
    mu0, sd0 = rng.standard_normal((2, 3)), np.abs(rng.standard_normal((2, 3))) + 0.3
    v0 = rng.uniform(-0.9, 0.9, (2, 3))
    make, val = {
        "tanh": (lambda d, mu, sd: [d.TanhTransform(cache_size=1)], v0),
        "exp": (lambda d, mu, sd: d.ExpTransform(), np.abs(v0) + 0.1),
        "sigmoid": (lambda d, mu, sd: [d.SigmoidTransform()], np.abs(v0)),
        "affine_tanh": (lambda d, mu, sd: [d.TanhTransform(), d.AffineTransform(1.0, 2.0)], v0 * 2 + 1),
        "affine_negative": (lambda d, mu, sd: [d.AffineTransform(0.5, -3.0)], v0),
        "affine_event_dim": (lambda d, mu, sd: [d.AffineTransform(0.5, sd, event_dim=1)], v0),
        "compose": (lambda d, mu, sd: [d.ComposeTransform([d.ExpTransform(), d.AffineTransform(0.0, 2.0)])],
                    np.abs(v0) + 0.1),
    }[name]
    res = []
    for m in (tt, torch):
        mu, sd = m.tensor(mu0, requires_grad=True), m.tensor(sd0, requires_grad=True)
        dist = m.distributions.TransformedDistribution(m.distributions.Normal(mu, sd), make(m.distributions, mu, sd))
        lp = dist.log_prob(m.tensor(val))
        outs = [lp] + ([dist.cdf(m.tensor(val))] if name != "affine_event_dim" else [])
        sum(o.sum() for o in outs).backward()
        res.append([o.detach().numpy() for o in outs] + [mu.grad.numpy(), sd.grad.numpy(),
                                                          tuple(dist.batch_shape), tuple(dist.event_shape)])
    for a, b in zip(*res):
        if isinstance(a, tuple):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # a sample inverted through the cache gives a finite density even where tanh saturates
    tt.manual_seed(0)
    d = D.TransformedDistribution(D.Normal(tt.tensor(mu0) * 10, 1.0), [D.TanhTransform(cache_size=1)])
    a = d.rsample()
    assert bool(tt.isfinite(d.log_prob(a)).all())


def test_new_distribution_samples_have_the_right_moments_and_gradients():
    tt.manual_seed(0)
    n = 40000
    checks = [(D.Weibull(tt.tensor(2.0), tt.tensor(1.5)), 0.03), (D.Pareto(tt.tensor(1.0), tt.tensor(4.0)), 0.03),
              (D.NegativeBinomial(tt.tensor(5.0), probs=tt.tensor(0.3)), 0.03),
              (D.MixtureSameFamily(D.Categorical(tt.tensor([0.2, 0.8])), D.Normal(tt.tensor([-2.0, 3.0]), 0.5)), 0.03)]
    for d, rtol in checks:
        s = d.sample((n,))
        assert abs(s.mean().item() - d.mean.item()) <= rtol * abs(d.mean.item()) + 0.02, type(d).__name__
    temp = tt.tensor(0.5, requires_grad=True)
    logits = tt.tensor([0.1, -0.4, 1.2], requires_grad=True)
    r = D.RelaxedOneHotCategorical(temp, logits=logits).rsample((5,))
    assert r.shape == (5, 3) and tt.allclose(r.sum(-1), tt.ones(5))
    (r[:, 0] * 2).sum().backward()
    assert logits.grad is not None and temp.grad is not None
    b = D.RelaxedBernoulli(tt.tensor(0.3), probs=tt.tensor([0.2, 0.9])).rsample((100,))
    assert ((b > 0) & (b < 1)).all()
    h = D.HalfCauchy(tt.tensor(1.0)).sample((1000,))
    assert (h >= 0).all()
