"""RNN / LSTM / GRU and their cells against torch after copying the same weights: outputs, final states,
gradients, state_dict key names and shapes, and bad input."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

CONFIGS = [
    ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict()),
    ("GRU", dict(num_layers=2)),
    ("GRU", dict(bidirectional=True, bias=False)),
    ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True)),
    ("RNN", dict(batch_first=True)),
]


def _pair(cls, *args, **kw):
    ref = getattr(torch.nn, cls)(*args, **kw)
    ours = getattr(tt.nn, cls)(*args, **kw)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    ours.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return ours, ref


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("cls,kw", CONFIGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CONFIGS)])
def test_recurrent_layer_matches_torch(cls, kw):
    ours, ref = _pair(cls, 5, 7, **kw)
    assert repr(ours) == repr(ref)
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    xo, xr = tt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (yo, ho), (yr, hr) = ours(xo), ref(xr)
    _close(yo, yr)
    for a, b in zip(ho if cls == "LSTM" else (ho,), hr if cls == "LSTM" else (hr,)):
        _close(a, b)
    w = np.random.default_rng(1).standard_normal(tuple(yr.shape)).astype(np.float32)
    ((yo * tt.tensor(w)).sum() + (ho[0] if cls == "LSTM" else ho).sum()).backward()
    ((yr * torch.tensor(w)).sum() + (hr[0] if cls == "LSTM" else hr).sum()).backward()
    _close(xo.grad, xr.grad, 1e-4)
    for (n, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=n)


def test_initial_state_and_unbatched_input():
    ours, ref = _pair("LSTM", 3, 4, num_layers=2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 3)).astype(np.float32)  # unbatched (L, H_in)
    h = rng.standard_normal((2, 4)).astype(np.float32)
    c = rng.standard_normal((2, 4)).astype(np.float32)
    (yo, (ho, co)), (yr, (hr, cr)) = ours(tt.tensor(x), (tt.tensor(h), tt.tensor(c))), \
        ref(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    assert yo.shape == yr.shape and ho.shape == hr.shape
    _close(yo, yr)
    _close(co, cr)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(cls):
    ours, ref = _pair(cls, 5, 6)
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    a, b = ours(tt.tensor(x)), ref(torch.tensor(x))
    for u, v in zip(a if cls == "LSTMCell" else (a,), b if cls == "LSTMCell" else (b,)):
        _close(u, v)


def test_bad_input():
    m = tt.nn.GRU(5, 7)
    with pytest.raises(RuntimeError, match="input_size. Expected 5, got 4"):
        m(tt.randn(3, 2, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 7\)"):
        m(tt.randn(3, 2, 5), tt.zeros(2, 2, 7))
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        tt.nn.RNN(2, 3, nonlinearity="gelu")
