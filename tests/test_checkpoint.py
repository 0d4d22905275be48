"""utils.checkpoint: recomputation gives the same outputs and gradients as the plain forward (dropout included),
and matches torch's checkpoint on the same weights."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch
from tinytorch.utils.checkpoint import checkpoint, checkpoint_sequential


def make(n):
    return n.nn.Sequential(n.nn.Linear(4, 8), n.nn.Tanh(), n.nn.Dropout(0.3), n.nn.Linear(8, 8), n.nn.GELU(),
                           n.nn.Linear(8, 3))


def run(m, x, how):
    tt.manual_seed(3)
    x.grad = None
    m.zero_grad()
    y = m(x) if how == "plain" else checkpoint(m, x, use_reentrant=True) if how == "checkpoint" else \
        checkpoint_sequential(m, 3, x)
    y.pow(2).sum().backward()
    return y.detach(), x.grad.clone(), [p.grad.clone() for p in m.parameters()]


@pytest.mark.parametrize("how", ["checkpoint", "sequential"])
def test_checkpoint_matches_plain_forward(how):
    m = make(tt)
    x = tt.randn(5, 4, requires_grad=True)
    y0, gx0, gp0 = run(m, x, "plain")
    y1, gx1, gp1 = run(m, x, how)
    assert np.array_equal(y0.numpy(), y1.numpy())
    assert np.allclose(gx0.numpy(), gx1.numpy(), rtol=1e-6, atol=1e-7)
    for a, b in zip(gp0, gp1):
        assert np.allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_checkpoint_matches_torch_and_keeps_no_graph():
    m_th = make(torch).eval()
    m_tt = make(tt).eval()
    m_tt.load_state_dict({k: tt.tensor(v.numpy()) for k, v in m_th.state_dict().items()})
    a = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    x_tt, x_th = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y_tt = checkpoint(lambda t, s: m_tt(t) * s, x_tt, 2.0, use_reentrant=True)
    y_th = torch.utils.checkpoint.checkpoint(lambda t, s: m_th(t) * s, x_th, 2.0, use_reentrant=True)
    assert y_tt.grad_fn.name() == "_CheckpointBackward"  # one node: the segment's graph is not kept
    assert_close(y_tt, y_th, rtol=1e-5, atol=1e-6)
    y_tt.sum().backward()
    y_th.sum().backward()
    assert_close(x_tt.grad, x_th.grad, rtol=1e-5, atol=1e-6)
    for (k, p_th), p_tt in zip(m_th.named_parameters(), m_tt.parameters()):
        assert_close(p_tt.grad, p_th.grad, rtol=1e-5, atol=1e-6, msg=k)
