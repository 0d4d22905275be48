"""nn.utils.parametrize and the ready-made parametrizations (weight_norm, spectral_norm), and the older
hook-based nn.utils.weight_norm, against torch: values, gradients of the originals, state_dict keys, the
swapped class, assignment through right_inverse, removal and errors."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch

RNG = np.random.default_rng(0)


def _same(make):
    """The same module built in both libraries, tinytorch loading torch's initial state."""
    torch.manual_seed(0)
    m_th = make(torch)
    m_tt = make(tt)
    m_tt.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in m_th.state_dict().items()})
    return m_th, m_tt


def _run(m, lib, x):
    out = m(lib.tensor(x))
    (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(np.float32))).sum().backward()
    return out


@pytest.mark.parametrize("make,shape", [
    (lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(3, 4)), (2, 3)),
    (lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Conv1d(2, 3, 3), dim=None), (2, 2, 6)),
    (lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Conv2d(2, 3, 3), dim=1), (1, 2, 5, 5)),
    (lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(5, 4)), (3, 5)),
    (lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Conv2d(2, 3, 3), n_power_iterations=3), (1, 2, 5, 5)),
    (lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.ConvTranspose2d(2, 3, 3)), (1, 2, 4, 4)),
])
def test_parametrizations_match_torch(make, shape):
    m_th, m_tt = _same(make)
    assert type(m_tt).__name__ == type(m_th).__name__ and list(m_tt.state_dict()) == list(m_th.state_dict())
    x = RNG.standard_normal(shape).astype(np.float32)
    for step in range(2):  # spectral_norm runs a power iteration per training forward
        o_th, o_tt = _run(m_th, torch, x), _run(m_tt, tt, x)
        assert_close(o_tt, o_th, "float32", 1e-4, 1e-5)
        for (k, p_th), p_tt in zip(m_th.named_parameters(), m_tt.parameters()):
            assert_close(p_tt.grad, p_th.grad, "float32", 1e-4, 1e-5, msg=k)
    for k, v in m_th.state_dict().items():
        assert_close(m_tt.state_dict()[k], v, "float32", 1e-4, 1e-5, msg=k)
    m_th.eval()
    m_tt.eval()
    assert_close(m_tt(tt.tensor(x)), m_th(torch.tensor(x)), "float32", 1e-4, 1e-5)
    assert repr(m_tt) == repr(m_th)


class _Symmetric:
    @staticmethod
    def make(nn):
        class Symmetric(nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

        class Scale(nn.Module):
            def forward(self, X):
                return X * 2

            def right_inverse(self, A):
                return A / 2
        return Symmetric, Scale


def test_register_parametrization_chain_assign_remove_match_torch():
    results = []
    for L in (torch, tt):
        P = L.nn.utils.parametrize
        Sym, Scale = _Symmetric.make(L.nn)
        L.manual_seed(0)
        m = L.nn.Linear(3, 3)
        m.weight.data = L.tensor(RNG.standard_normal((3, 3)).astype(np.float32)) if L is torch else m.weight.data
        results.append(m)
    m_th, m_tt = results
    m_tt.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in m_th.state_dict().items()})
    for L, m in ((torch, m_th), (tt, m_tt)):
        P = L.nn.utils.parametrize
        Sym, Scale = _Symmetric.make(L.nn)
        P.register_parametrization(m, "weight", Sym())
        P.register_parametrization(m, "weight", Scale())
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
        with P.cached():
            assert m.weight is m.weight
        with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement right_inverse"):
            m.weight = L.ones(3, 3)
        P.register_parametrization(m, "bias", Scale())
        m.bias = L.tensor([2.0, 4, 6])  # stored through Scale.right_inverse
    assert_close(m_tt.weight, m_th.weight, "float32")
    assert_close(m_tt.parametrizations.weight.original, m_th.parametrizations.weight.original, "float32")
    assert_close(m_tt.parametrizations.bias.original, m_th.parametrizations.bias.original, "float32")
    assert list(m_tt.state_dict()) == list(m_th.state_dict())
    for L, m in ((torch, m_th), (tt, m_tt)):
        L.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
        assert type(m).__name__ == "ParametrizedLinear"  # bias is still parametrized
        L.nn.utils.parametrize.remove_parametrizations(m, "bias", leave_parametrized=False)
        assert type(m).__name__ == "Linear" and not L.nn.utils.parametrize.is_parametrized(m)
        assert m.bias.tolist() == [1.0, 2.0, 3.0]
    assert_close(m_tt.weight, m_th.weight, "float32")
    assert list(m_tt.state_dict()) == list(m_th.state_dict())
    for L in (torch, tt):
        with pytest.raises(ValueError, match="may not change the shape of the tensor, unless `unsafe` flag is enabled"):
            class Half(L.nn.Module):
                def forward(self, X):
                    return X[:1]
            L.nn.utils.parametrize.register_parametrization(L.nn.Linear(2, 2), "weight", Half())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            L.nn.utils.parametrize.register_parametrization(L.nn.Linear(2, 2), "nope", Half())


def test_weight_norm_old_checkpoint_loads_into_parametrization():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2))
    m = tt.nn.utils.parametrizations.weight_norm(tt.nn.Linear(3, 2))
    m.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in old.state_dict().items()})
    assert_close(m.weight, old.weight, "float32", 1e-6, 1e-6)


def test_legacy_weight_norm_matches_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m_th, m_tt = _same(lambda L: L.nn.utils.weight_norm(L.nn.Conv1d(2, 3, 3), dim=0))
    assert sorted(m_tt.state_dict()) == sorted(m_th.state_dict()) == ["bias", "weight_g", "weight_v"]
    x = RNG.standard_normal((2, 2, 6)).astype(np.float32)
    assert_close(_run(m_tt, tt, x), _run(m_th, torch, x), "float32", 1e-5, 1e-6)
    assert_close(m_tt.weight_g.grad, m_th.weight_g.grad, "float32", 1e-5, 1e-6)
    assert_close(m_tt.weight_v.grad, m_th.weight_v.grad, "float32", 1e-5, 1e-6)
    for L, m in ((torch, m_th), (tt, m_tt)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
                L.nn.utils.weight_norm(m)
        L.nn.utils.remove_weight_norm(m)
        assert sorted(m.state_dict()) == ["bias", "weight"]
    assert_close(m_tt.weight, m_th.weight, "float32", 1e-6, 1e-6)
    with pytest.warns(FutureWarning, match="deprecated"):
        tt.nn.utils.weight_norm(tt.nn.Linear(2, 2))
