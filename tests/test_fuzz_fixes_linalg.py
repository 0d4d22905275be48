"""Differential cases for the generated fuzzer's findings (issue 32) in linear algebra and statistics: triangular
and Cholesky solves with inf/NaN/zero diagonals, kron of non-row-major inputs, cov/corrcoef, dist, trapezoid and
cumulative_trapezoid, lu pivots. Each case runs in tinytorch and in PyTorch (the spec) and compares values,
dtypes, shapes, requires_grad and errors (type and message)."""
import itertools
import random
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

INF, NAN = float("inf"), float("nan")
A0 = [[2.0, 1.0, 3.0], [0.5, 4.0, 1.0], [1.0, 2.0, 5.0]]
B0 = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def _run(fn, L):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(L)
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            return e


def _np(x):
    return x.detach().numpy()


def _compare(ours, theirs, rtol=1e-4, atol=1e-5):
    if isinstance(theirs, Exception) or isinstance(ours, Exception):
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        assert str(ours) == str(theirs)
        return
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _compare(a, b, rtol, atol)
        return
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol, equal_nan=True)


def _diff(fn, **tol):
    _compare(_run(fn, tt), _run(fn, torch), **tol)


def _with(L, vals, at=None, v=None):
    t = L.tensor(vals)
    if at is not None:
        t[at] = v
    return t


# ---- triangular solves: inf/NaN reach only the entries that depend on them; zero diagonals give inf/NaN -------
SPECIALS = [(None, None), ((0, 0), NAN), ((0, 0), INF), ((2, 2), INF), ((1, 1), 0.0), ((2, 0), NAN), ((0, 2), -INF)]
B_SPECIALS = [(None, None), ((0, 0), NAN), ((0, 0), INF), ((2, 1), -INF)]


@pytest.mark.parametrize("upper,left,unit", list(itertools.product([True, False], repeat=3)))
@pytest.mark.parametrize("a_sp", SPECIALS)
@pytest.mark.parametrize("b_sp", B_SPECIALS)
def test_solve_triangular_nonfinite(upper, left, unit, a_sp, b_sp):
    def fn(L):
        A, B = _with(L, A0, *a_sp), _with(L, B0, *b_sp)
        return L.linalg.solve_triangular(A, B if left else B.t(), upper=upper, left=left, unitriangular=unit)
    _diff(fn)


@pytest.mark.parametrize("upper,transpose", list(itertools.product([True, False], repeat=2)))
@pytest.mark.parametrize("b_sp", B_SPECIALS)
def test_triangular_solve_nonfinite(upper, transpose, b_sp):
    _diff(lambda L: tuple(L.triangular_solve(_with(L, B0, *b_sp), L.tensor(A0), upper=upper, transpose=transpose)))


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("a_sp", SPECIALS[:3])
@pytest.mark.parametrize("b_sp", B_SPECIALS)
def test_cholesky_solve_and_inverse_nonfinite(upper, a_sp, b_sp):
    _diff(lambda L: L.cholesky_solve(_with(L, B0, *b_sp), _with(L, A0, *a_sp), upper=upper))
    _diff(lambda L: L.cholesky_inverse(_with(L, A0, *a_sp), upper=upper))


def test_triangular_solve_coefficient_batch_and_grad():
    res = []
    for L in (tt, torch):
        b = L.tensor(B0).expand(2, 3, 2).clone().requires_grad_()
        a = L.tensor(A0).requires_grad_()
        X, M = L.triangular_solve(b, a, transpose=True, unitriangular=True)
        assert M.shape == (2, 3, 3) and M.requires_grad
        ((X * X).sum() + (M * M).sum()).backward()
        res.append((_np(X), _np(M), _np(a.grad), _np(b.grad)))
        b2 = L.tensor(B0).requires_grad_()
        assert L.triangular_solve(b2, L.tensor(A0))[1].requires_grad  # b alone makes the coefficient need grad
    for x, y in zip(*res):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("upper,left,unit", list(itertools.product([True, False], repeat=3)))
def test_solve_triangular_gradients(upper, left, unit):
    grads = []
    for L in (tt, torch):
        a, b = L.tensor(A0, dtype=L.float64).requires_grad_(), L.tensor(B0, dtype=L.float64).requires_grad_()
        X = L.linalg.solve_triangular(a, b if left else b.t(), upper=upper, left=left, unitriangular=unit)
        (X * X).sum().backward()
        grads.append((_np(a.grad), _np(b.grad)))
    for x, y in zip(*grads):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


BAD_SOLVES = [
    lambda L: L.cholesky_solve(L.randn(4), L.randn(4, 4)),
    lambda L: L.cholesky_solve(L.randn(4, 2), L.randn(4)),
    lambda L: L.cholesky_solve(L.randn(4, 2), L.randn(4, 3)),
    lambda L: L.cholesky_solve(L.randn(3, 2), L.randn(4, 4)),
    lambda L: L.cholesky_solve(L.randn(4, 2), L.randn(4, 4, dtype=L.float64)),
    lambda L: L.cholesky_solve(L.randn(4, 2).int(), L.randn(4, 4).int()),
    lambda L: L.triangular_solve(L.randn(4, 4).int(), L.randn(4, 4).int()),
    lambda L: L.triangular_solve(L.randn(4, 4).half(), L.randn(4, 4).half()),
    lambda L: L.triangular_solve(L.randn(4, 4).int(), L.randn(4, 5)),
    lambda L: L.triangular_solve(L.randn(3, 4), L.randn(4, 5)),
    lambda L: L.triangular_solve(L.randn(0, 4), L.randn(4, 4)),
    lambda L: L.lu_unpack(*L.linalg.lu_factor(L.randn(4, 4))[:1], L.linalg.lu_factor(L.randn(4, 4))[1].long()),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.randn(4, 4))[:1], L.zeros(4, dtype=L.int64), L.randn(4, 2)),
    lambda L: L.lu_solve(L.randn(4, 2), L.randn(4, 4), L.zeros(4)),
]


@pytest.mark.parametrize("i", range(len(BAD_SOLVES)))
def test_bad_solve_arguments(i):
    ours, theirs = _run(BAD_SOLVES[i], tt), _run(BAD_SOLVES[i], torch)
    assert isinstance(theirs, Exception)
    _compare(ours, theirs)


# ---- kron: PyTorch views its interleaved product, which fails for inputs laid out out of row-major order -------
def _kron_cases(n=400, seed=0):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        spec = []
        for _ in range(2):
            nd = rng.randint(0, 3)
            shape = [rng.choice([0, 1, 2, 3] if _ % 7 == 0 else [1, 2, 3]) for _ in range(nd)]
            perm = list(range(nd))
            rng.shuffle(perm)
            step = nd > 0 and rng.random() < 0.3
            if step:
                shape[-1] *= 2
            spec.append((tuple(shape), tuple(perm), step))
        out.append(spec)
    return out


@pytest.mark.parametrize("chunk", range(4))
def test_kron_layouts(chunk):
    cases = _kron_cases()[chunk::4]
    raised = 0
    for k, spec in enumerate(cases):
        data = [np.random.default_rng(k).standard_normal(s).astype(np.float32) for s, _, _ in spec]

        def fn(L, spec=spec, data=data):
            xs = []
            for (shape, perm, step), d in zip(spec, data):
                x = L.from_numpy(d.copy()).permute(*perm) if perm else L.from_numpy(d.copy())
                xs.append(x[..., ::2] if step else x)
            return L.kron(*xs)
        theirs = _run(fn, torch)
        raised += isinstance(theirs, Exception)
        _compare(_run(fn, tt), theirs)
    assert raised  # the sample includes layouts PyTorch refuses


# ---- cov / corrcoef -----------------------------------------------------------------------------------------------
X0 = [[1.0, 2.0, 4.0, 7.0], [0.0, 3.0, 1.0, -2.0], [5.0, 5.0, 1.0, 0.0]]
COV = [
    lambda L: L.cov(L.randn(2, 2, 2)),
    lambda L: L.corrcoef(L.randn(2, 2, 2)),
    lambda L: L.cov(L.tensor(X0)[:1]),
    lambda L: L.corrcoef(L.tensor(X0)[:1]),
    lambda L: L.cov(L.tensor(X0), fweights=L.ones(4)),
    lambda L: L.cov(L.tensor(X0), fweights=L.ones(3, dtype=L.long)),
    lambda L: L.cov(L.tensor(X0), fweights=-L.ones(4, dtype=L.long)),
    lambda L: L.cov(L.tensor(X0), fweights=L.ones(4, 4, dtype=L.long)),
    lambda L: L.cov(L.tensor(X0), aweights=L.ones(4, 4)),
    lambda L: L.cov(L.tensor(X0), aweights=L.ones(4, dtype=L.long)),
    lambda L: L.cov(L.tensor(X0), aweights=L.zeros(4)),
    lambda L: L.cov(L.tensor(X0), aweights=L.tensor([1.0, 2, 3, 4], dtype=L.float64)),
    lambda L: L.cov(L.tensor(X0), aweights=L.tensor([1.0, 2, 3, 4]), fweights=L.tensor([1, 2, 1, 1]), correction=2),
    lambda L: L.cov(L.tensor(X0), aweights=L.ones(4), correction=5),
    lambda L: L.cov(L.randn(3, 0), aweights=L.ones(0)),
    lambda L: L.cov(L.tensor(X0).int()),
    lambda L: L.cov(L.tensor(X0), fweights=L.ones(4, dtype=L.bool)),
    lambda L: L.cov(L.tensor(X0), fweights=L.ones(4, dtype=L.uint8)),
    lambda L: L.cov(L.tensor(X0), correction=2 ** 40),
    lambda L: L.cov(L.tensor(X0), correction=1.5),
    lambda L: L.cov(L.tensor(X0), correction=True),
    lambda L: L.cov(L.tensor(X0)[:, :0]),
    lambda L: L.cov(L.tensor(X0).bool()),
    lambda L: L.corrcoef(L.tensor(X0).bool()),
    lambda L: L.tensor(X0).cov(correction=0),
    lambda L: L.corrcoef(L.tensor(X0)),
    lambda L: L.corrcoef(L.tensor(X0).to(L.complex64) * (1 + 1j)),
    lambda L: L.cov(L.tensor(X0).to(L.complex64) * (1 + 2j)),
]


@pytest.mark.parametrize("i", range(len(COV)))
def test_cov_corrcoef(i):
    _diff(COV[i])


def test_cov_warns_past_the_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        tt.cov(tt.tensor(X0), correction=4)


# ---- dist, trapezoid, cumulative_trapezoid ---------------------------------------------------------------------
OTHER = [
    lambda L: L.dist(L.ones(4), 1.5),
    lambda L: L.dist(1.5, L.ones(4)),
    lambda L: L.ones(4).dist(1.5),
    lambda L: L.dist(L.ones(4), L.zeros(4), p="a"),
    lambda L: L.ones(4).dist(L.zeros(4), p=1),
]
for _f in ("trapezoid", "trapz", "cumulative_trapezoid"):
    OTHER += [
        lambda L, f=_f: getattr(L, f)(L.arange(32.).reshape(2, 4, 4),
                                      L.arange(16.).reshape(4, 4) ** 2),
        lambda L, f=_f: getattr(L, f)(L.arange(16.).reshape(4, 4), L.zeros(4, 0)),
        lambda L, f=_f: getattr(L, f)(L.arange(16.).reshape(4, 4), L.arange(20.).reshape(4, 5)),
        lambda L, f=_f: getattr(L, f)(L.arange(16.).reshape(4, 4), L.arange(32.).reshape(2, 4, 4)),
        lambda L, f=_f: getattr(L, f)(L.arange(16.).reshape(4, 4), L.tensor([0.0, 1e38, 2.0, 3.0])),
        lambda L, f=_f: getattr(L, f)(L.tensor([[1e38, 3e38, 1.0]]), dx=2.0),
        lambda L, f=_f: getattr(L, f)(L.ones(4, 4, dtype=L.bool), L.ones(4, 4)),
        lambda L, f=_f: getattr(L, f)(L.ones(4, 4, dtype=L.bool)),
        lambda L, f=_f: getattr(L, f)(L.ones(4, 0, dtype=L.bool)),
        lambda L, f=_f: getattr(L, f)(L.ones(4, 0, dtype=L.int32)),
        lambda L, f=_f: getattr(L, f)(L.arange(12).reshape(3, 4), dim=0),
        lambda L, f=_f: getattr(L, f)(L.arange(12.).reshape(3, 4), L.arange(3.), dim=0),
        lambda L, f=_f: getattr(L, f)(L.arange(12.).reshape(3, 4), L.arange(4.), dim=0),
    ]


@pytest.mark.parametrize("i", range(len(OTHER)))
def test_dist_and_trapezoid(i):
    _diff(OTHER[i])
