"""torch.func transforms against torch.func on the same functions and inputs: functional_call, grad (nested,
argnums, has_aux), vjp, jvp, jacrev / jacfwd / hessian, vmap (in_dims, out_dims, pytrees), and the per-sample
gradient recipe from PyTorch's tutorial (vmap of grad of a functional_call)."""
import numpy as np
import pytest
import torch
import torch.func

import tinytorch as tt
import tinytorch.func

from conftest import assert_close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 2))


def both(fn):
    """fn(m, fm, x, y, w) on torch and on tinytorch, with float64 copies of the same inputs."""
    ref = fn(torch, torch.func, torch.tensor(X), torch.tensor(Y), torch.tensor(W))
    ours = fn(tt, tt.func, tt.tensor(X), tt.tensor(Y), tt.tensor(W))
    return ours, ref


def check(ours, ref):
    if isinstance(ref, (tuple, list)):
        assert len(ours) == len(ref)
        for a, b in zip(ours, ref):
            check(a, b)
    elif isinstance(ref, dict):
        assert sorted(ours) == sorted(ref)
        for k in ref:
            check(ours[k], ref[k])
    else:
        assert_close(ours, ref, "float64")


CASES = {
    "grad": lambda m, fm, x, y, w: fm.grad(lambda a: (a.sin() * a).sum())(x),
    "grad_grad": lambda m, fm, x, y, w: fm.grad(lambda a: fm.grad(lambda b: (b ** 3).sum())(a).sum())(x),
    "grad_argnums": lambda m, fm, x, y, w: fm.grad(lambda a, b: (a @ b).tanh().sum(), argnums=(0, 1))(x, w),
    "grad_has_aux": lambda m, fm, x, y, w: fm.grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(x),
    "grad_and_value": lambda m, fm, x, y, w: fm.grad_and_value(lambda a, b: (a * b).sum(), argnums=1)(x, y),
    "grad_dict_input": lambda m, fm, x, y, w: fm.grad(lambda d: (d["a"] * d["b"]).sum())({"a": x, "b": y}),
    "vjp": lambda m, fm, x, y, w: (lambda r: (r[0], r[1](m.ones_like(r[0]) * 2)))(fm.vjp(lambda a: a.exp() @ w, x)),
    "jvp": lambda m, fm, x, y, w: fm.jvp(lambda a, b: (a * b).sin(), (x, y), (y, x)),
    "jacrev": lambda m, fm, x, y, w: fm.jacrev(lambda a: (a @ w).tanh())(x),
    "jacrev_argnums": lambda m, fm, x, y, w: fm.jacrev(lambda a, b: a @ b, argnums=(0, 1))(x[:2], w),
    "jacfwd": lambda m, fm, x, y, w: fm.jacfwd(lambda a: a.sin().sum(0))(x),
    "hessian": lambda m, fm, x, y, w: fm.hessian(lambda a: (a ** 3).sum() + (a[0] * a[1]).sum())(x[:2]),
    "vmap": lambda m, fm, x, y, w: fm.vmap(lambda a, b: (a * b).sum())(x, y),
    "vmap_in_dims": lambda m, fm, x, y, w: fm.vmap(lambda a, b: a @ b, in_dims=(0, None))(x, w),
    "vmap_dim1_out1": lambda m, fm, x, y, w: fm.vmap(lambda a: a.cumsum(0), in_dims=1, out_dims=1)(x),
    "vmap_tuple_out": lambda m, fm, x, y, w: fm.vmap(lambda a: (a.max(), a.min()))(x),
    "vmap_nested": lambda m, fm, x, y, w: fm.vmap(fm.vmap(lambda a, b: a * b))(x, y),
    "vmap_grad": lambda m, fm, x, y, w: fm.vmap(fm.grad(lambda a, b: (a * b).sin().sum()))(x, y),
    "vmap_dict": lambda m, fm, x, y, w: fm.vmap(lambda d: d["a"] + d["b"])({"a": x, "b": y}),
    "vmap_jacrev": lambda m, fm, x, y, w: fm.vmap(fm.jacrev(lambda a: a.sin() * a))(x),
}


@pytest.mark.parametrize("case", list(CASES))
def test_func_transform_matches_torch(case):
    ours, ref = both(CASES[case])
    check(ours, ref)


def _model(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Tanh(), m.nn.Linear(5, 2))


def test_per_sample_gradients_recipe_matches_torch():
    """PyTorch's per-sample-gradient tutorial: vmap(grad(loss of functional_call)) over the batch."""
    out = {}
    for m, fm in ((torch, torch.func), (tt, tt.func)):
        model = _model(m)
        if m is tt:
            model.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in _model(torch).state_dict().items()})
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = m.tensor(X, dtype=m.float32)
        t = m.tensor([0, 1, 1, 0])

        def loss(p, xi, ti):
            logits = fm.functional_call(model, p, (xi.unsqueeze(0),))
            return m.nn.functional.cross_entropy(logits, ti.unsqueeze(0))
        out[m] = fm.vmap(fm.grad(loss), in_dims=(None, 0, 0))(params, x, t)
        # the module still holds its own parameters
        assert all(p.requires_grad for p in model.parameters())
    for k in out[torch]:
        assert_close(out[tt][k], out[torch][k], "float32", rtol=1e-5, atol=1e-6, msg=k)


def test_functional_call_swaps_and_restores():
    for m, fm in ((torch, torch.func), (tt, tt.func)):
        lin = m.nn.Linear(3, 2)
        w0 = lin.weight
        zeros = {"weight": m.zeros(2, 3), "bias": m.ones(2)}
        out = fm.functional_call(lin, zeros, (m.ones(1, 3),))
        assert out.tolist() == [[1.0, 1.0]]
        assert lin.weight is w0
        out = fm.functional_call(lin, ({"weight": m.zeros(2, 3)}, {"bias": m.ones(2) * 3}), m.ones(1, 3))
        assert out.tolist() == [[3.0, 3.0]]
        with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
            fm.functional_call(lin, {"weight": m.zeros(2, 3)}, (m.ones(1, 3),), strict=True)
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            fm.functional_call(lin, ({"bias": m.ones(2)}, {"bias": m.ones(2)}), (m.ones(1, 3),))


def test_func_errors_match_torch():
    for m, fm in ((torch, torch.func), (tt, tt.func)):
        with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
            fm.grad(lambda a: a * 2)(m.ones(3))
        with pytest.raises(ValueError, match="Expected all tensors to have the same size in the mapped dimension"):
            fm.vmap(lambda a, b: a + b)(m.ones(3), m.ones(4))
        with pytest.raises(ValueError, match="Expected at least one Tensor to vmap over"):
            fm.vmap(lambda a: a, in_dims=(None,))(m.ones(3))
    assert tt.vmap is tt.func.vmap
