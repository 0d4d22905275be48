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


@pytest.mark.parametrize("mode,kw", [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", dict()),
                                     ("RNN", dict(bidirectional=True, nonlinearity="relu")),
                                     ("LSTM", dict(batch_first=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_through_rnns_match_torch(mode, kw, enforce_sorted):
    """pack_padded_sequence -> RNN -> pad_packed_sequence: outputs, final states (in the caller's batch
    order), and gradients of the padded input, against torch."""
    rng = np.random.default_rng(0)
    bf = kw.get("batch_first", False)
    x = rng.standard_normal((3, 5, 4) if bf else (5, 3, 4)).astype(np.float32)
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    torch.manual_seed(0)
    net_th = getattr(torch.nn, mode)(4, 3, **kw)
    net_tt = getattr(tt.nn, mode)(4, 3, **kw)
    net_tt.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in net_th.state_dict().items()})
    h0 = rng.standard_normal((net_th.num_layers * (2 if net_th.bidirectional else 1), 3, 3)).astype(np.float32)
    res = []
    for m, net in ((torch, net_th), (tt, net_tt)):
        xx = m.tensor(x, requires_grad=True)
        p = m.nn.utils.rnn.pack_padded_sequence(xx, m.tensor(lengths), batch_first=bf, enforce_sorted=enforce_sorted)
        hx = (m.tensor(h0), m.tensor(h0 * 0.5)) if mode == "LSTM" else m.tensor(h0)
        out, h = net(p, hx)
        assert isinstance(out, m.nn.utils.rnn.PackedSequence)
        padded, lens = m.nn.utils.rnn.pad_packed_sequence(out, batch_first=bf, total_length=6)
        states = h if mode == "LSTM" else (h,)
        (padded.sum() + sum((s * (i + 2)).sum() for i, s in enumerate(states))).backward()
        res.append((padded.detach().numpy(), lens.tolist(), [s.detach().numpy() for s in states], xx.grad.numpy(),
                    out.batch_sizes.tolist()))
    (p_th, l_th, s_th, g_th, b_th), (p_tt, l_tt, s_tt, g_tt, b_tt) = res
    assert l_tt == l_th and b_tt == b_th
    np.testing.assert_allclose(p_tt, p_th, rtol=1e-5, atol=1e-6)
    for a, b in zip(s_tt, s_th):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g_tt, g_th, rtol=1e-5, atol=1e-6)


def test_pack_utilities_and_errors_match_torch():
    seqs = [np.arange(n * 2, dtype=np.float32).reshape(n, 2) + n for n in (2, 4, 1)]
    for m in (torch, tt):
        R = m.nn.utils.rnn
        ts = [m.tensor(s) for s in seqs]
        p = R.pack_sequence(ts, enforce_sorted=False)
        assert p.batch_sizes.tolist() == [3, 2, 1, 1] and p.sorted_indices.tolist() == [1, 0, 2]
        assert p.unsorted_indices.tolist() == [1, 0, 2]
        back = R.unpack_sequence(p)
        assert [b.tolist() for b in back] == [s.tolist() for s in seqs]
        padded = R.pad_sequence(ts, batch_first=True)
        assert [u.tolist() for u in R.unpad_sequence(padded, m.tensor([2, 4, 1]), batch_first=True)] == \
            [s.tolist() for s in seqs]
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
            R.pack_sequence(ts)
        with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
            R.pack_padded_sequence(m.ones(3, 2, 1), m.tensor([3, 0]))
        with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
            R.pad_packed_sequence(p, total_length=2)


@pytest.mark.parametrize("kw", [dict(proj_size=2), dict(proj_size=3, num_layers=2, bidirectional=True),
                                dict(proj_size=1, batch_first=True)])
def test_lstm_with_projections_matches_torch(kw):
    """LSTM proj_size: weight_hr_l{k} parameters, h of size proj_size (outputs, h_n), c of hidden_size, and the
    gradients, against torch with the same weights; also through a packed batch."""
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    net_th = torch.nn.LSTM(4, 5, **kw)
    net_tt = tt.nn.LSTM(4, 5, **kw)
    assert [(k, tuple(v.shape)) for k, v in net_tt.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in net_th.state_dict().items()]
    assert repr(net_tt) == repr(net_th)
    net_tt.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in net_th.state_dict().items()})
    x = rng.standard_normal((3, 6, 4)).astype(np.float32)
    for packed in (False, True):
        res = []
        for m, net in ((torch, net_th), (tt, net_tt)):
            xx = m.tensor(x, requires_grad=True)
            inp = m.nn.utils.rnn.pack_padded_sequence(xx, [6, 4, 2] if kw.get("batch_first") else [3, 3, 2, 2, 1, 1],
                                                      batch_first=kw.get("batch_first", False)) if packed else xx
            out, (h, c) = net(inp)
            if packed:
                out = m.nn.utils.rnn.pad_packed_sequence(out, batch_first=kw.get("batch_first", False))[0]
            (out.sum() + (h * 2).sum() + (c * 3).sum()).backward()
            res.append([t.detach().numpy() for t in (out, h, c, xx.grad)])
        for a, b in zip(*reversed(res)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for m in (torch, tt):
        with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
            m.nn.LSTM(4, 5, proj_size=5)
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
            m.nn.GRU(4, 5, proj_size=2)
        with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 1, 2\\), got \\[1, 1, 5\\]"):
            m.nn.LSTM(4, 5, proj_size=2)(m.ones(3, 1, 4), (m.zeros(1, 1, 5), m.zeros(1, 1, 5)))
