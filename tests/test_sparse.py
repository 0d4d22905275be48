"""Sparse COO / CSR tensors (tinytorch/sparse) against real PyTorch: layouts, constructors, conversions, repr,
the ops a sparse tensor takes (values, gradients, errors), and a small GCN trained the same on both."""
import pickle

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant checks|CSR tensor support):UserWarning")

IDX = np.array([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]])  # (0, 2) appears twice: uncoalesced
VAL = np.array([3.0, 4.0, 5.0, 1.0, -2.0], dtype=np.float32)
SHAPE = (3, 3)


def both(idx=IDX, val=VAL, shape=SHAPE, requires_grad=False, **kw):
    """The same COO tensor in tinytorch and in torch."""
    a = tt.sparse_coo_tensor(tt.tensor(idx), tt.tensor(val), shape, requires_grad=requires_grad, **kw)
    b = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(val), shape, requires_grad=requires_grad, **kw)
    return a, b


def dense_pair(shape, seed=0, requires_grad=False, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x, y = tt.tensor(a), torch.tensor(a)
    if requires_grad:
        x.requires_grad_()
        y.requires_grad_()
    return x, y


def same(x, y, atol=1e-5):
    """Same layout, shape, dtype, and same dense values (sparse results compared through to_dense)."""
    assert str(x.layout) == str(y.layout), (x.layout, y.layout)
    assert tuple(x.shape) == tuple(y.shape)
    assert str(x.dtype) == str(y.dtype)
    xd = x.to_dense() if x.layout is not tt.strided else x
    yd = y.to_dense() if y.layout is not torch.strided else y
    np.testing.assert_allclose(xd.detach().numpy(), yd.detach().numpy(), atol=atol, rtol=1e-5)


def same_parts(x, y):
    """Same stored structure: indices (or crow/col), values, nnz, coalesced flag."""
    same(x, y)
    assert x._nnz() == y._nnz()
    if y.layout is torch.sparse_coo:
        assert x.is_coalesced() == y.is_coalesced()
        np.testing.assert_array_equal(x._indices().numpy(), y._indices().numpy())
        np.testing.assert_allclose(x._values().detach().numpy(), y._values().detach().numpy(), rtol=1e-6)
    else:
        np.testing.assert_array_equal(x.crow_indices().numpy(), y.crow_indices().numpy())
        np.testing.assert_array_equal(x.col_indices().numpy(), y.col_indices().numpy())
        np.testing.assert_allclose(x.values().detach().numpy(), y.values().detach().numpy(), rtol=1e-6)


def raises_same(f_tt, f_torch, prefix_only=False):
    with pytest.raises(Exception) as e_torch:
        f_torch()
    with pytest.raises(Exception) as e_tt:
        f_tt()
    assert type(e_tt.value) is type(e_torch.value), (e_tt.value, e_torch.value)
    if prefix_only:  # PyTorch appends the list of its dispatch keys
        assert str(e_torch.value).startswith(str(e_tt.value)), (str(e_tt.value), str(e_torch.value)[:300])
    else:
        assert str(e_tt.value) == str(e_torch.value)


# ---- layouts --------------------------------------------------------------------------------------------------

def test_layout_objects():
    for name in ("strided", "sparse_coo", "sparse_csr"):
        assert repr(getattr(tt, name)) == repr(getattr(torch, name)) == str(getattr(tt, name))
        assert isinstance(getattr(tt, name), tt.layout)
        assert pickle.loads(pickle.dumps(getattr(tt, name))) is getattr(tt, name)
    assert tt.ones(2).layout is tt.strided and tt.ones(2).layout == tt.strided
    assert tt.strided != tt.sparse_coo
    with pytest.raises(TypeError):
        tt.layout()
    x = tt.ones(2)
    assert (x.is_sparse, x.is_sparse_csr) == (False, False)


# ---- construction, structure, repr ------------------------------------------------------------------------------

def test_coo_constructor_and_structure():
    a, b = both()
    same_parts(a, b)
    assert a.layout is tt.sparse_coo and a.is_sparse and not a.is_sparse_csr
    assert (a.sparse_dim(), a.dense_dim()) == (b.sparse_dim(), b.dense_dim())
    assert repr(a) == repr(b)
    same_parts(a.coalesce(), b.coalesce())
    c = a.coalesce()
    assert c.coalesce() is c
    np.testing.assert_array_equal(c.indices().numpy(), b.coalesce().indices().numpy())
    np.testing.assert_array_equal(c.values().numpy(), b.coalesce().values().numpy())
    assert a.stride() == b.stride() and a.is_contiguous() == b.is_contiguous()
    assert a.numel() == b.numel() and a.size() == tuple(b.size())


@pytest.mark.parametrize("case", [
    dict(idx=[[0, 1], [1, 0]], val=[1, 2], shape=None),  # ints and size inference
    dict(idx=[[0, 1]], val=[[1.0, 2.0], [3.0, 4.0]], shape=None),  # a dense dim
    dict(idx=np.zeros((2, 0), dtype=np.int64), val=np.zeros(0, dtype=np.float32), shape=(2, 3)),  # empty
    dict(idx=[[0, 1]], val=[1.0, 2.0], shape=(4,), dtype="float64"),
])
def test_coo_constructor_cases(case):
    kw = {}
    if "dtype" in case:
        kw = dict(dtype=getattr(tt, case["dtype"]))
    size = () if case["shape"] is None else (case["shape"],)
    a = tt.sparse_coo_tensor(case["idx"], case["val"], *size, **kw)
    kw = {k: getattr(torch, case["dtype"]) for k in kw}
    b = torch.sparse_coo_tensor(case["idx"], case["val"], *size, **kw)
    same_parts(a, b)
    assert repr(a) == repr(b)


def test_coo_constructor_numpy_int32_indices_and_dtype():
    """gcn's construction: numpy int32 indices, float values cast to int64."""
    e = np.array([[0, 1, 2], [1, 2, 0]], dtype=np.int32)
    a = tt.sparse_coo_tensor(e, tt.ones(3), (3, 3), dtype=tt.int64)
    b = torch.sparse_coo_tensor(e, torch.ones(3), (3, 3), dtype=torch.int64)
    same_parts(a, b)
    same(tt.eye(3) + a, torch.eye(3) + b)


@pytest.mark.parametrize("args", [
    lambda m: ([0, 1], [1.0, 2.0], (2,), {}),
    lambda m: ([[0, 1]], [1.0, 2.0, 3.0], (2,), {}),
    lambda m: ([[0, 1]], [1.0, 2.0], (3, 2), {}),
    lambda m: ([[0, 1]], [1.0, 2.0], (1,), {"check_invariants": True}),
    lambda m: ([[-1, 1]], [1.0, 2.0], (3,), {"check_invariants": True}),
    lambda m: ([[0, 1]], [1, 2], (3,), {"requires_grad": True}),
])
def test_coo_constructor_errors(args):
    def run(m):
        i, v, s, kw = args(m)
        return m.sparse_coo_tensor(m.tensor(i), m.tensor(v), s, **kw)
    raises_same(lambda: run(tt), lambda: run(torch))


def test_csr_constructor_and_conversions():
    crow, col, val = [0, 1, 3, 3], [2, 0, 1], [1.0, 2.0, 3.0]
    a = tt.sparse_csr_tensor(tt.tensor(crow), tt.tensor(col), tt.tensor(val), (3, 4))
    b = torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(val), (3, 4))
    same_parts(a, b)
    assert repr(a) == repr(b)
    assert a.is_sparse_csr and not a.is_sparse and a.layout is tt.sparse_csr
    assert (a.sparse_dim(), a.dense_dim(), a._nnz()) == (b.sparse_dim(), b.dense_dim(), b._nnz())
    same_parts(a.to_sparse(), b.to_sparse())
    same_parts(a.to_sparse_coo(), b.to_sparse_coo())
    same_parts(a.double(), b.double())
    assert repr(a.double()) == repr(b.double())
    inferred = tt.sparse_csr_tensor(tt.tensor(crow), tt.tensor(col), tt.tensor(val))
    same_parts(inferred, torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(val)))
    c, d = both()
    same_parts(c.to_sparse_csr(), d.to_sparse_csr())
    same_parts(c.to_sparse(layout=tt.sparse_csr), d.to_sparse(layout=torch.sparse_csr))
    x, y = dense_pair((3, 4))
    same_parts(x.to_sparse_csr(), y.to_sparse_csr())
    assert repr(x.to_sparse_csr()) == repr(y.to_sparse_csr())


def test_dense_to_sparse_and_back():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype=np.float32)
    x, y = tt.tensor(a), torch.tensor(a)
    same_parts(x.to_sparse(), y.to_sparse())
    same_parts(x.to_sparse_coo(), y.to_sparse_coo())
    same_parts(x.to_sparse(1), y.to_sparse(1))
    assert repr(x.to_sparse(1)) == repr(y.to_sparse(1))
    same_parts(tt.zeros(2, 3).to_sparse(), torch.zeros(2, 3).to_sparse())
    assert repr(tt.zeros(2, 3).to_sparse()) == repr(torch.zeros(2, 3).to_sparse())
    same_parts(tt.tensor(a).long().to_sparse(), torch.tensor(a).long().to_sparse())
    s, t = both()
    same(s.to_dense(), t.to_dense())
    assert x.to_dense() is x
    raises_same(lambda: x.to_sparse(3), lambda: y.to_sparse(3))
    raises_same(lambda: s.to_sparse(1), lambda: t.to_sparse(1))


def test_repr_with_autograd_and_dtype():
    a, b = both(requires_grad=True)
    assert repr(a) == repr(b)
    assert repr(a * 2) == repr(b * 2)
    assert repr(a.double().detach()) == repr(b.double().detach())
    assert repr(a.coalesce()) == repr(b.coalesce())


def test_method_errors_on_wrong_layouts():
    x, y = dense_pair((2, 3))
    s, t = both()
    c, d = s.to_sparse_csr(), t.to_sparse_csr()
    for name in ("indices", "values", "crow_indices", "col_indices", "coalesce", "is_coalesced"):
        raises_same(lambda: getattr(x, name)(), lambda: getattr(y, name)())
    for name in ("indices", "coalesce", "is_coalesced"):
        raises_same(lambda: getattr(c, name)(), lambda: getattr(d, name)())
    raises_same(lambda: s.crow_indices(), lambda: t.crow_indices())
    raises_same(lambda: s.indices(), lambda: t.indices())  # uncoalesced
    raises_same(lambda: x._nnz(), lambda: y._nnz(), prefix_only=True)
    raises_same(lambda: x._values(), lambda: y._values(), prefix_only=True)
    assert (x.sparse_dim(), x.dense_dim()) == (y.sparse_dim(), y.dense_dim())
    raises_same(lambda: s.data_ptr(), lambda: t.data_ptr())
    raises_same(lambda: s.numpy(), lambda: t.numpy())
    raises_same(lambda: tt.sparse.sum(x), lambda: torch.sparse.sum(y))


@pytest.mark.parametrize("fn", [lambda m, s: s.exp(), lambda m, s: m.exp(s), lambda m, s: s.view(9),
                                lambda m, s: s.cos()])
def test_unsupported_ops_raise_torchs_error(fn):
    s, t = both()
    raises_same(lambda: fn(tt, s), lambda: fn(torch, t), prefix_only=True)


# ---- ops -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, s: s * 2, lambda m, s: 2 * s, lambda m, s: s / 2, lambda m, s: s.div(2), lambda m, s: -s,
    lambda m, s: s.neg(), lambda m, s: s.abs(), lambda m, s: s.sin(), lambda m, s: s.relu(),
    lambda m, s: s * m.tensor(3.0), lambda m, s: s + s, lambda m, s: s - s * 2, lambda m, s: s.add(s, alpha=2),
    lambda m, s: s * s, lambda m, s: s * s.t(), lambda m, s: s.t(), lambda m, s: s.transpose(0, 1),
    lambda m, s: s.double(), lambda m, s: s.to(m.float64), lambda m, s: s.to("cpu"), lambda m, s: s.clone(),
    lambda m, s: s.sum(), lambda m, s: s.sum(0), lambda m, s: s.sum(1), lambda m, s: s.sum((0, 1)),
    lambda m, s: s.sum(dtype=m.float64), lambda m, s: m.sparse.sum(s), lambda m, s: m.sparse.sum(s, 0),
    lambda m, s: m.sparse.sum(s, -1), lambda m, s: m.sparse.sum(s, [0, 1]),
    lambda m, s: m.ones(3, 3) + s, lambda m, s: m.ones(3, 3) - s, lambda m, s: m.ones(3, 3) * s,
    lambda m, s: s * m.arange(9.0).view(3, 3), lambda m, s: s * m.arange(3.0), lambda m, s: s.coalesce().to_sparse_csr() * 2,
    lambda m, s: s.to_sparse_csr() + s.to_sparse_csr(), lambda m, s: s.to_sparse_csr().sum(),
])
def test_sparse_op_values(fn):
    s, t = both()
    same(fn(tt, s), fn(torch, t))


@pytest.mark.parametrize("fn", [lambda c: c.exp(), lambda c: c.cos(), lambda c: c - c, lambda c: c / 2,
                                lambda c: c.sum(0),
                                lambda c: c.view(9)])
def test_csr_unsupported_ops(fn):
    s, t = both()
    raises_same(lambda: fn(s.to_sparse_csr()), lambda: fn(t.to_sparse_csr()), prefix_only=True)


@pytest.mark.parametrize("fn", [lambda c: c.abs(), lambda c: c.sin(), lambda c: c.relu(), lambda c: -c,
                                lambda c: c * 2, lambda c: c + c, lambda c: c.sum(),
                                lambda c: c.clone(), lambda c: c.double()])
def test_csr_ops(fn):
    s, t = both()
    a, b = fn(s.to_sparse_csr()), fn(t.to_sparse_csr())
    same_parts(a, b) if b.layout is torch.sparse_csr else same(a, b)


@pytest.mark.parametrize("fn", [
    lambda m, h: h * 2, lambda m, h: h + h, lambda m, h: h.sum(), lambda m, h: h.sum(0), lambda m, h: h.sum(1),
    lambda m, h: m.sparse.sum(h, 1), lambda m, h: m.sparse.sum(h, [0, 2]), lambda m, h: h.to_dense(),
    lambda m, h: h.coalesce(), lambda m, h: -h, lambda m, h: m.ones(3, 2, 2) + h,
])
def test_hybrid_tensor_ops(fn):
    """A COO tensor with a dense dim (to_sparse(1) of a 3-D tensor, one row empty)."""
    a = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    a[1] = 0
    x, y = tt.tensor(a).to_sparse(1), torch.tensor(a).to_sparse(1)
    assert (x.sparse_dim(), x.dense_dim(), x._nnz()) == (y.sparse_dim(), y.dense_dim(), y._nnz())
    assert repr(x) == repr(y)
    same(fn(tt, x), fn(torch, y))


def test_add_coalesces_like_torch():
    s, t = both()
    same_parts(s.coalesce() + s.coalesce(), t.coalesce() + t.coalesce())
    same_parts(s * 2, t * 2)
    same_parts(s.t(), t.t())
    same_parts(tt.sparse.sum(s, 0), torch.sparse.sum(t, 0))


@pytest.mark.parametrize("fn", [
    lambda m, s: s + m.ones(3, 3), lambda m, s: s + 1, lambda m, s: s / s, lambda m, s: s + s.sum(0),
    lambda m, s: m.zeros(3, 2, 2).to_sparse(2).transpose(0, 2), lambda m, s: s * m.ones(3, 2).to_sparse(),
    lambda m, s: s * m.ones(2, 3), lambda m, s: m.ones(2, 3) * s,
])
def test_sparse_op_errors(fn):
    s, t = both()
    raises_same(lambda: fn(tt, s), lambda: fn(torch, t))


def test_inplace_ops_on_sparse():
    s, t = both()
    s.mul_(3)
    t.mul_(3)
    same(s, t)
    s.add_(s)
    t.add_(t)
    same(s, t)
    v0 = s._version
    s.copy_(tt.sparse_coo_tensor([[0], [0]], [7.0], (3, 3)))
    assert s._version > v0
    same(s, torch.sparse_coo_tensor([[0], [0]], [7.0], (3, 3)))


def test_device_and_pickle_round_trip():
    s, t = both()
    m = s.to("mydev")
    assert m.device.type == "mydev" and m.layout is tt.sparse_coo
    assert "device='mydev" in repr(m)
    d, _ = dense_pair((3, 2))
    np.testing.assert_allclose(tt.sparse.mm(m, d.to("mydev")).cpu().numpy(),
                               torch.sparse.mm(t, torch.tensor(d.numpy())).numpy(), rtol=1e-5, atol=1e-6)
    same(m.to("cpu"), t)
    r = pickle.loads(pickle.dumps(s))
    same_parts(r, t)


# ---- products and gradients --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, s, d: m.sparse.mm(s, d), lambda m, s, d: m.mm(s, d), lambda m, s, d: m.spmm(s, d),
    lambda m, s, d: s @ d, lambda m, s, d: m.matmul(s, d), lambda m, s, d: s.mm(d),
    lambda m, s, d: m.sparse.addmm(m.ones(3, 4), s, d), lambda m, s, d: m.sparse.addmm(m.ones(3, 4), s, d,
                                                                                        beta=0.5, alpha=2.0),
    lambda m, s, d: m.mm(d.t(), s), lambda m, s, d: d.t() @ s, lambda m, s, d: m.sparse.mm(s.to_sparse_csr(), d),
    lambda m, s, d: s.to_sparse_csr() @ d, lambda m, s, d: m.matmul(s, d[:, 0]),
])
def test_products_with_gradients(fn):
    s, t = both(requires_grad=True)
    x, y = dense_pair((3, 4), requires_grad=True)
    out_a, out_b = fn(tt, s, x), fn(torch, t, y)
    same(out_a, out_b)
    w = np.random.default_rng(1).standard_normal(tuple(out_b.shape)).astype(np.float32)
    (out_a * tt.tensor(w)).sum().backward()
    (out_b * torch.tensor(w)).sum().backward()
    same(x.grad, y.grad)
    if t.grad is not None:
        same(s.grad, t.grad)
    else:
        assert s.grad is None


def test_dense_results_are_plain_tensors():
    """A sparse tensor is a plain Tensor to __torch_function__ (as PyTorch's): dense results stay plain."""
    s, _ = both()
    assert type(tt.mm(s, tt.ones(3, 2))) is tt.Tensor
    assert type(s.to_dense()) is tt.Tensor and type(tt.ones(3, 3) + s) is tt.Tensor
    assert isinstance(s, tt.Tensor) and tt.is_tensor(s)


def test_sparse_times_sparse():
    s, t = both()
    same(tt.sparse.mm(s, s.t()), torch.sparse.mm(t, t.t()))


def test_product_errors():
    s, t = both()
    raises_same(lambda: tt.mm(s, tt.ones(4, 1)), lambda: torch.mm(t, torch.ones(4, 1)))
    raises_same(lambda: tt.mm(s, tt.ones(3, 1, dtype=tt.float64)),
                lambda: torch.mm(t, torch.ones(3, 1, dtype=torch.float64)))


@pytest.mark.parametrize("fn", [
    lambda m, s: s.sum(), lambda m, s: (s.to_dense() * m.arange(9.0).view(3, 3)).sum(),
    lambda m, s: (s * 2).to_dense().sum(), lambda m, s: (s + s).to_dense().pow(2).sum(),
    lambda m, s: (s * s).to_dense().sum(), lambda m, s: s.t().to_dense()[0].sum(),
    lambda m, s: s.coalesce().to_dense().sum(), lambda m, s: m.sparse.sum(s, 0).to_dense().sum(),
    lambda m, s: m.sparse.sum(s), lambda m, s: s.double().to_dense().sum(),
    lambda m, s: s.coalesce().values().pow(2).sum(), lambda m, s: (-(s / 4)).to_dense().pow(2).sum(),
    lambda m, s: (m.ones(3, 3) + s).pow(2).sum(), lambda m, s: ((s * 2) @ m.ones(3, 2)).sum(),
    lambda m, s: (s.t() @ m.ones(3, 2)).sum(), lambda m, s: (s.clone() @ m.ones(3, 2)).sum(),
    lambda m, s: ((s + s) @ m.ones(3, 2)).sum(), lambda m, s: (s.coalesce() @ m.ones(3, 2)).sum(),
    lambda m, s: (m.ones(2, 3) @ s).sum(), lambda m, s: (s.to_sparse_csr() @ m.ones(3, 2)).sum(),
    lambda m, s: (m.ones(3, 3) - s).pow(2).sum(),
])
def test_gradient_of_a_sparse_leaf(fn):
    s, t = both(requires_grad=True)
    fn(tt, s).backward()
    fn(torch, t).backward()
    same(s.grad, t.grad)


def test_gradient_through_values_of_constructor():
    v = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    idx = [[0, 1, 1], [1, 0, 1]]
    a = tt.tensor(v, requires_grad=True)
    b = torch.tensor(v, requires_grad=True)
    sa, sb = tt.sparse_coo_tensor(idx, a, (2, 2)), torch.sparse_coo_tensor(idx, b, (2, 2))
    assert sa.grad_fn is not None and sa.grad_fn.name() == type(sb.grad_fn).__name__
    x, y = dense_pair((2, 3), requires_grad=True)
    tt.sparse.mm(sa, x).pow(2).sum().backward()
    torch.sparse.mm(sb, y).pow(2).sum().backward()
    same(a.grad, b.grad)
    same(x.grad, y.grad)
    d = np.array([[0.0, 2.0], [3.0, 0.0]], dtype=np.float32)
    c, e = tt.tensor(d, requires_grad=True), torch.tensor(d, requires_grad=True)
    (c.to_sparse() * 3).to_dense().sum().backward()
    (e.to_sparse() * 3).to_dense().sum().backward()
    same(c.grad, e.grad)


def test_gradient_accumulates_twice():
    s, t = both(requires_grad=True)
    for _ in range(2):
        tt.sparse.sum(s * 2).backward()
        torch.sparse.sum(t * 2).backward()
    same(s.grad, t.grad)
    assert s.grad.layout is tt.sparse_coo


@pytest.mark.parametrize("order", ["one graph", "sparse first", "dense first"])
def test_sparse_and_dense_gradients_of_one_leaf_add_up(order):
    """sparse.mm gives a sparse gradient, mm a dense one: summed in the engine or in .grad, as PyTorch."""
    res = []
    for m in (tt, torch):
        s = m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), SHAPE, requires_grad=True)
        d = m.ones(3, 2)
        if order == "one graph":
            (m.sparse.mm(s, d).sum() + m.mm(s, d).sum()).backward()
        else:
            fs = [lambda: m.sparse.mm(s, d).sum().backward(), lambda: m.mm(s, d).sum().backward()]
            for f in (fs if order == "sparse first" else fs[::-1]):
                f()
        res.append(s.grad)
    same(*res)


def test_second_backward_needs_retain_graph():
    s, t = both(requires_grad=True)
    x, y = dense_pair((3, 2), requires_grad=True)
    la, lb = tt.sparse.mm(s, x).sum(), torch.sparse.mm(t, y).sum()
    la.backward(retain_graph=True)
    lb.backward(retain_graph=True)
    la.backward()
    lb.backward()
    same(s.grad, t.grad)
    same(x.grad, y.grad)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        la.backward()


def test_sparse_softmax():
    s, t = both()
    for dim in (0, 1, -1):
        same(tt.sparse.softmax(s, dim), torch.sparse.softmax(t, dim))
        same(tt.sparse.log_softmax(s, dim), torch.sparse.log_softmax(t, dim))
    a, b = both(requires_grad=True)
    w = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    (tt.sparse.softmax(a, 1).to_dense() * tt.tensor(w)).sum().backward()
    (torch.sparse.softmax(b, 1).to_dense() * torch.tensor(w)).sum().backward()
    same(a.grad, b.grad)


# ---- a GCN (pytorch/examples gcn, on a small random graph) ---------------------------------------------------------

def _gcn_losses(m, feats, edges, labels, w1, w2, steps=5):
    n = feats.shape[0]
    adj = m.sparse_coo_tensor(edges, m.ones(edges.shape[1]), (n, n), dtype=m.int64)
    adj = m.eye(n) + adj
    deg = m.sqrt(1 / m.sum(adj, dim=1))
    deg[deg == float("inf")] = 0
    deg = m.diag(deg).to_sparse()
    adj = (deg @ adj @ deg).to_sparse()
    x = m.tensor(feats).to_sparse()
    k1, k2 = m.nn.Parameter(m.tensor(w1)), m.nn.Parameter(m.tensor(w2))
    opt = m.optim.Adam([k1, k2], lr=0.01, weight_decay=5e-4)
    y = m.tensor(labels)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        h = m.relu(m.spmm(adj, m.mm(x, k1)))
        out = m.nn.functional.log_softmax(m.sparse.mm(adj, m.mm(h, k2)), dim=1)
        loss = m.nn.functional.nll_loss(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_gcn_trains_like_torch():
    rng = np.random.default_rng(0)
    n, f, hidden, classes = 12, 6, 8, 3
    feats = (rng.random((n, f)) < 0.4).astype(np.float32)
    edges = rng.integers(0, n, (2, 30)).astype(np.int32)
    labels = rng.integers(0, classes, n)
    w1 = rng.standard_normal((f, hidden)).astype(np.float32) * 0.5
    w2 = rng.standard_normal((hidden, classes)).astype(np.float32) * 0.5
    ours = _gcn_losses(tt, feats, edges, labels, w1, w2)
    ref = _gcn_losses(torch, feats, edges, labels, w1, w2)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    assert ref[-1] < ref[0]


# ---- a GAT (pytorch/examples gat: multi-head graph attention over the Cora-style sparse adjacency) ------------------

def _gat_losses(m, feats, edges, labels, steps=4):
    """The example's code path: the adjacency built as a sparse COO tensor (self-loops added, made dense for the
    attention mask), a GraphAttentionLayer (shared linear map, LeakyReLU scores of concatenated pairs, masked
    softmax, dropout off) with two heads concatenated, then a one-head output layer; Adam with weight decay."""
    n = feats.shape[0]
    m.manual_seed(0)
    adj = m.sparse_coo_tensor(m.tensor(edges), m.ones(edges.shape[1]), (n, n))
    adj = (adj + m.eye(n).to_sparse()).coalesce().to_dense()

    class GATLayer(m.nn.Module):
        def __init__(self, in_f, out_f, heads, concat):
            super().__init__()
            self.heads, self.out_f, self.concat = heads, out_f, concat
            self.W = m.nn.Parameter(m.empty(in_f, heads * out_f))
            self.a = m.nn.Parameter(m.empty(heads, 2 * out_f, 1))
            m.nn.init.xavier_normal_(self.W, gain=1.414)
            m.nn.init.xavier_normal_(self.a, gain=1.414)

        def forward(self, h, adj):
            g = m.mm(h, self.W).view(-1, self.heads, self.out_f).permute(1, 0, 2)
            src = m.matmul(g, self.a[:, :self.out_f, :])
            dst = m.matmul(g, self.a[:, self.out_f:, :])
            e = m.nn.functional.leaky_relu(src + dst.mT, 0.2)
            att = m.softmax(m.where(adj > 0, e, m.tensor(-9e15)), dim=-1)
            out = m.matmul(att, g)
            return out.permute(1, 0, 2).reshape(n, -1) if self.concat else out.mean(dim=0)

    layer1, layer2 = GATLayer(feats.shape[1], 4, 2, True), GATLayer(8, 3, 1, False)
    params = list(layer1.parameters()) + list(layer2.parameters())
    opt = m.optim.Adam(params, lr=0.005, weight_decay=5e-4)
    x, y = m.tensor(feats), m.tensor(labels)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = layer2(m.nn.functional.elu(layer1(x, adj)), adj)
        loss = m.nn.functional.nll_loss(m.log_softmax(out, dim=1), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_gat_trains_like_torch():
    rng = np.random.default_rng(1)
    n, f, classes = 10, 5, 3
    feats = rng.random((n, f)).astype(np.float32)
    edges = rng.integers(0, n, (2, 24))
    labels = rng.integers(0, classes, n)
    ours, ref = _gat_losses(tt, feats, edges, labels), _gat_losses(torch, feats, edges, labels)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)
    assert ref[-1] < ref[0]
