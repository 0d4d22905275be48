"""Differential cases for the fuzzer's (tests/fuzz.py) linear-algebra leftovers (issue 32): inf/NaN through svd, qr,
inverse and matrix_exp (which entries become NaN, raise or return, as PyTorch's MKL LAPACK), pinverse of empty
matrices, renorm with p = inf, histc's bin edges in bfloat16 and histogram's requires_grad. Each case runs the
same NumPy data through tinytorch and PyTorch and compares NaN patterns exactly and values to a tolerance."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

INF, NAN = float("inf"), float("nan")


def _both(fn, x):
    """fn(lib, tensor) in both libraries, results as lists of float64 arrays."""
    out = []
    for lib in (tt, torch):
        r = fn(lib, lib.tensor(x))
        r = list(r) if isinstance(r, tuple) else [r]
        out.append([np.asarray(t.detach().float().numpy(), dtype=np.float64) for t in r])
    return out


def _same(ours, theirs, atol=1e-4):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=atol, equal_nan=True)


# ---- svd: an inf leading entry (MKL's gesdd: NaN singular values, first and k-th vectors swapped) -------------
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (4, 3), (3, 4), (2, 3), (3, 2)])
@pytest.mark.parametrize("value", [INF, -INF])
@pytest.mark.parametrize("call", ["linalg.svd", "svd", "svd_some_false"])
def test_svd_leading_inf(shape, value, call):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x.reshape(-1)[0] = value
    fn = {"linalg.svd": lambda lib, t: lib.linalg.svd(t), "svd": lambda lib, t: lib.svd(t),
          "svd_some_false": lambda lib, t: lib.svd(t, some=False)}[call]
    _same(*_both(fn, x), atol=0)


# ---- qr: inf/NaN anywhere, both modes (MKL's unblocked Householder reflections) ------------------------------
QR_CASES = [(seed, [(3, 3), (4, 3), (3, 4), (2, 2), (5, 5), (4, 4), (2, 5), (5, 2), (1, 3), (3, 1)][seed % 10],
             [NAN, INF, -INF][seed % 3]) for seed in range(60)]


@pytest.mark.parametrize("seed,shape,value", QR_CASES)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_nonfinite(seed, shape, value, mode):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if seed % 2:
        x.reshape(-1)[0] = value
    else:
        x[tuple(rng.integers(0, s) for s in shape)] = value
    _same(*_both(lambda lib, t: lib.linalg.qr(t, mode=mode), x))


def test_qr_nonfinite_batch_leaves_finite_matrices_alone():
    x = np.random.default_rng(1).standard_normal((3, 4, 3))
    x[1, 0, 0] = NAN
    x[2, 2, 1] = INF
    _same(*_both(lambda lib, t: lib.qr(t), x), atol=1e-10)


# ---- inverse: a NaN anywhere makes its matrix's inverse all NaN, without an error ----------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("pos", [0, -1, 4])
@pytest.mark.parametrize("call", ["inverse", "linalg.inv"])
def test_inverse_nan(n, pos, call):
    x = np.random.default_rng(n).standard_normal((2, n, n)).astype(np.float32)
    x[0].reshape(-1)[pos % (n * n)] = NAN
    fn = (lambda lib, t: lib.inverse(t)) if call == "inverse" else (lambda lib, t: lib.linalg.inv(t))
    _same(*_both(fn, x))


# ---- matrix_exp: per-matrix scaling by 2^-s; inf/NaN/huge give NaN, not an error or the identity -------------
@pytest.mark.parametrize("value", [1e38, INF, -INF, NAN])
def test_matrix_exp_nonfinite(value):
    x = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    x[0, 0, 0] = value
    _same(*_both(lambda lib, t: lib.matrix_exp(t), x))


def test_matrix_exp_scales_each_matrix():
    x = np.random.default_rng(0).standard_normal((3, 3, 3)) * np.array([1e-3, 1.0, 6.0])[:, None, None]
    _same(*_both(lambda lib, t: lib.linalg.matrix_exp(t), x), atol=1e-9)


# ---- renorm with p = inf: the largest magnitude of each slice --------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("p", [INF, 2.0])
@pytest.mark.parametrize("inplace", [False, True])
def test_renorm_inf(dim, p, inplace):
    x = (np.random.default_rng(2).standard_normal((3, 4, 5)) * 3).astype(np.float32)
    fn = (lambda lib, t: t.renorm_(p, dim, 2.0)) if inplace else (lambda lib, t: lib.renorm(t, p, dim, 2.0))
    _same(*_both(fn, x), atol=1e-6)


@pytest.mark.parametrize("shape,dim", [((3, 0), 0), ((0, 3), 0), ((3, 0), 1)])
def test_renorm_inf_empty(shape, dim):
    res = []
    for lib in (tt, torch):
        try:
            res.append(tuple(lib.zeros(shape).renorm(INF, dim, 1.0).shape))
        except RuntimeError as e:
            res.append(str(e))
    assert res[0] == res[1]


# ---- pinverse of empty matrices: zeros (n, m), no error from max(S) ---------------------------------------------
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (2, 3, 0)])
@pytest.mark.parametrize("call", ["pinverse", "linalg.pinv", "method"])
def test_pinverse_empty(shape, call):
    fn = {"pinverse": lambda lib, t: lib.pinverse(t), "linalg.pinv": lambda lib, t: lib.linalg.pinv(t),
          "method": lambda lib, t: t.pinverse()}[call]
    _same(*_both(fn, np.zeros(shape, np.float32)))


# ---- histc: bin edges of PyTorch's linspace in the input's dtype --------------------------------------------
@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_histc_edges_in_dtype(seed, dtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(int(rng.integers(1, 200))).astype(np.float32)
    bins = [3, 10, 100, 256][seed % 4]
    lo, hi = [(0, 0), (-1.3, 0.7), (0.1, 0.3), (-2.0, 2.0)][(seed // 4) % 4]
    ours = tt.histc(tt.tensor(x).to(getattr(tt, dtype)), bins, lo, hi).float().numpy()
    theirs = torch.histc(torch.tensor(x).to(getattr(torch, dtype)), bins, lo, hi).float().numpy()
    np.testing.assert_array_equal(ours, theirs)


# ---- histogram: the outputs require grad when a tensor argument does; backward refuses ---------------------
HIST_CASES = {
    "input": lambda lib: lib.histogram(lib.linspace(-1, 1, 7, requires_grad=True), 3),
    "input_edges": lambda lib: lib.histogram(lib.linspace(-1, 1, 7, requires_grad=True), lib.linspace(-1, 1, 4)),
    "weight": lambda lib: lib.histogram(lib.linspace(-1, 1, 7), 3, weight=lib.ones(7, requires_grad=True)),
    "edges": lambda lib: lib.histogram(lib.linspace(-1, 1, 7), lib.linspace(-1, 1, 4, requires_grad=True)),
    "method": lambda lib: lib.linspace(-1, 1, 7, requires_grad=True).histogram(3),
    "none": lambda lib: lib.histogram(lib.linspace(-1, 1, 7), 3),
}


@pytest.mark.parametrize("case", sorted(HIST_CASES))
def test_histogram_requires_grad(case):
    res = []
    for lib in (tt, torch):
        h, e = HIST_CASES[case](lib)
        err = None
        if h.requires_grad:
            with pytest.raises(RuntimeError) as info:
                (h.sum() + e.sum()).backward()
            err = str(info.value)
        res.append((h.requires_grad, e.requires_grad, h.tolist(), err))
        np.testing.assert_allclose(e.detach().numpy(), torch.linspace(-1, 1, 4).numpy(), atol=1e-7)
    assert res[0] == res[1]


def test_histogram_no_grad_mode():
    with tt.no_grad():
        h, e = tt.histogram(tt.linspace(-1, 1, 7, requires_grad=True), 3)
    assert not h.requires_grad and not e.requires_grad


# ---- histogram with int bins: PyTorch's edges in the input's dtype, an element on a rounded edge in the bin above
HISTOGRAM_VALUES = [(seed, [1, 2, 3, 7, 10][seed % 5], dtype) for seed in range(40) for dtype in ("float32", "float64")]


@pytest.mark.parametrize("seed,bins,dtype", HISTOGRAM_VALUES)
def test_histogram_int_bins(seed, bins, dtype):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(int(rng.integers(0, 50))).astype(np.float32)
    if seed % 7 == 0:
        x[:] = 1.5
    if seed % 11 == 0:
        x = np.linspace(-1, 1, 7, dtype=np.float32)
    res = []
    for lib in (tt, torch):
        kw = {"range": (-1.0, 1.0)} if seed % 3 == 0 else {}
        if seed % 4 == 0:
            kw["weight"] = lib.tensor(np.linspace(0, 1, x.size)).to(getattr(lib, dtype))
        h, e = lib.histogram(lib.tensor(x).to(getattr(lib, dtype)), bins, density=seed % 5 == 0, **kw)
        res.append((h.numpy(), e.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-6, equal_nan=True)
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-7)


@pytest.mark.parametrize("seed", range(6))
def test_matrix_exp_float32_accuracy(seed):
    x = np.random.default_rng(seed).standard_normal((2, 4, 4)).astype(np.float32) * 2
    ours = tt.matrix_exp(tt.tensor(x))
    theirs = torch.matrix_exp(torch.tensor(x))
    assert ours.dtype is tt.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=5e-6, atol=5e-6)
