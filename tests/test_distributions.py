"""tinytorch.distributions against torch.distributions: densities, entropies, cdfs and their gradients on the
same parameters; sample shapes and sample statistics (the random streams differ, so moments are compared)."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch

D = tt.distributions
TD = torch.distributions


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
]


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
            assert_close(a.grad, b.grad, "float64", msg=name)


def test_shapes_and_properties_match_torch():
    for make in (lambda d, m: d.Normal(m.zeros(2, 3), m.ones(3)), lambda d, m: d.Uniform(m.zeros(2, 1), 2.0),
                 lambda d, m: d.Bernoulli(m.full((4,), 0.3)), lambda d, m: d.Categorical(m.ones(2, 3, 4)),
                 lambda d, m: d.Normal(0.0, 2.0)):
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
