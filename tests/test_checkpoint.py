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


# ---- optimizer state through save/load, both ways between torch and tinytorch --------------------------
OPTIMIZERS = [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01)),
              ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)), ("AdamW", dict(lr=0.01)),
              ("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict(lr=0.5)), ("Adamax", dict(lr=0.02)),
              ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.5,
                                                                                   centered=True)),
              ("Rprop", dict(lr=0.01)), ("ASGD", dict(lr=0.05, t0=2)), ("LBFGS", dict(lr=0.5, max_iter=4, history_size=3)),
              ("Adafactor", dict(lr=0.01))]


def _problem(n, params):
    """A small least-squares problem over (W, b) whose closure works for every optimizer (LBFGS needs one)."""
    rng = np.random.default_rng(1)
    x = n.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    y = n.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    W, b = params

    def closure(opt):
        opt.zero_grad()
        loss = ((x @ W + b - y) ** 2).mean()
        loss.backward()
        return loss
    return closure


def _train(n, name, kw, start, steps, state=None):
    """``steps`` steps of optimizer ``name`` from the parameter values ``start`` (numpy), optionally resuming
    from a loaded optimizer state; returns the parameters (numpy) and the optimizer."""
    params = [n.nn.Parameter(n.tensor(a.copy())) for a in start]
    opt = getattr(n.optim, name)(params, **kw)
    if state is not None:
        opt.load_state_dict(state)
    closure = _problem(n, params)
    for _ in range(steps):
        opt.step(lambda: closure(opt))
    return [p.detach().numpy().copy() for p in params], opt


START = [np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32), np.zeros(4, np.float32)]


@pytest.mark.parametrize("src", ["torch", "tinytorch"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_state_round_trip(tmp_path, name, kw, src):
    """A state_dict saved after 3 steps by one library loads into the other, which continues 3 more steps to
    the parameters the saving library reaches by itself after 6; ``step`` stays a 0-d float32 tensor."""
    if not hasattr(torch.optim, name):
        pytest.skip(f"torch {torch.__version__} has no optim.{name}")
    a, b = (torch, tt) if src == "torch" else (tt, torch)
    mid, opt_a = _train(a, name, kw, START, 3)
    a.save(opt_a.state_dict(), tmp_path / "opt.pt")
    ref, _ = _train(a, name, kw, START, 6)
    state = b.load(tmp_path / "opt.pt")
    got, opt_b = _train(b, name, kw, mid, 3, state)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    for s in opt_b.state_dict()["state"].values():
        if "step" in s:
            assert isinstance(s["step"], b.Tensor) and s["step"].dim() == 0 and s["step"].dtype == b.float32
            assert float(s["step"]) == 6.0
