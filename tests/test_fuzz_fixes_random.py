"""Differential cases for the generated fuzzer's findings (issue 32) among the random ops and their argument checks,
and the reductions and factories next to them. Every case runs after the same ``manual_seed`` in tinytorch and in
PyTorch (the spec) and compares exactly: values (random draws included: tinytorch draws PyTorch's stream), dtype,
shape, requires_grad, the stream left behind (one more ``rand`` after the call), or the exception type and the
start of its message (the op's name)."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

INF, NAN = float("inf"), float("nan")
SEED = 20261128


def _outcome(lib, fn):
    """What ``fn(lib)`` does after seeding: ("ok", [(values, dtype, shape, requires_grad)...], next draw) or
    ("raise", exception type name, message head)."""
    warnings.simplefilter("ignore")
    lib.manual_seed(SEED)
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return ("raise", type(e).__name__, str(e).split("(")[0][:40])  # the type, the message up to "("
    outs = out if isinstance(out, tuple) else (out,)
    got = []
    for t in outs:
        v = t.detach()
        arr = v.to(lib.float32).numpy() if v.dtype is lib.bfloat16 else v.contiguous().numpy()
        got.append((arr, str(v.dtype).split(".")[-1], tuple(v.shape), bool(t.requires_grad)))
    return ("ok", got, float(lib.rand(1).item()))


def _check(fn):
    want, got = _outcome(torch, fn), _outcome(tt, fn)
    assert got[0] == want[0], (got, want)
    if want[0] == "raise":
        assert got[1:] == want[1:]
        return
    assert len(got[1]) == len(want[1])
    for (ga, gd, gs, gr), (wa, wd, ws, wr) in zip(got[1], want[1]):
        assert (gd, gs, gr) == (wd, ws, wr)
        np.testing.assert_array_equal(ga, wa)
    assert got[2] == want[2], "the random stream is left elsewhere"


def _x(L, shape=(5, 7), dtype="float32", nan_at=None):
    """Deterministic data (from NumPy, not from either library's stream), with a NaN, -inf and 0 planted."""
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    flat = a.reshape(-1)
    flat[:3] = [NAN, -INF, 0.0] if nan_at is None else flat[:3]
    return L.tensor(a).to(getattr(L, dtype))


def _views(L, make):
    return {"transposed": make(L, (7, 5)).t(), "strided": make(L, (5, 14))[:, ::2],
            "permuted": make(L, (3, 4, 2)).permute(2, 0, 1), "contiguous": make(L, (5, 7))}


# ---- RReLU in training draws its slopes as ATen's rrelu_with_noise --------------------------------------------
RRELU = {
    "module": lambda L: L.nn.RReLU()(_x(L)),
    "module-wide": lambda L: L.nn.RReLU(-1.0, 0.5)(_x(L)),
    "module-huge-upper": lambda L: L.nn.RReLU(0.1, 9223372036854775808)(_x(L)),
    "float64": lambda L: L.nn.RReLU()(_x(L, dtype="float64")),
    "bfloat16": lambda L: L.nn.RReLU()(_x(L, dtype="bfloat16")),
    "transposed": lambda L: L.nn.RReLU()(_x(L).t()),
    "3d": lambda L: L.nn.RReLU(0.2, 0.4)(_x(L, (2, 3, 4))),
    "functional-train": lambda L: L.nn.functional.rrelu(_x(L), 0.1, 0.3, True),
    "functional-inplace": lambda L: L.nn.functional.rrelu(_x(L), 0.1, 0.3, True, True),
    "torch.rrelu_": lambda L: L.rrelu_(_x(L), 0.1, 0.3, True),
    "eval": lambda L: L.nn.functional.rrelu(_x(L), 0.1, 0.3, False),
    "half-training": lambda L: L.nn.functional.rrelu(_x(L, dtype="float16"), training=True),
}


@pytest.mark.parametrize("case", sorted(RRELU))
def test_rrelu_noise(case):
    _check(RRELU[case])


def test_rrelu_gradient_is_the_slope():
    grads = []
    for L in (torch, tt):
        L.manual_seed(SEED)
        x = L.tensor(np.linspace(-2, 2, 12, dtype=np.float32), requires_grad=True)
        L.nn.functional.rrelu(x, 0.1, 0.3, True).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ---- samplers on non-contiguous tensors: TensorIterator's memory order; normal_ one draw at a time -------------
FILLS = {
    "uniform_": lambda t: t.uniform_(-1.0, 2.0), "normal_": lambda t: t.normal_(0.5, 2.0),
    "exponential_": lambda t: t.exponential_(1.5), "geometric_": lambda t: t.geometric_(0.3),
    "cauchy_": lambda t: t.cauchy_(0.0, 1.0), "log_normal_": lambda t: t.log_normal_(0.0, 1.0),
    "random_": lambda t: t.random_(0, 50), "random_to": lambda t: t.random_(50), "random_all": lambda t: t.random_(),
    "bernoulli_": lambda t: t.bernoulli_(0.3), "uniform_from_to_kw": lambda t: t.uniform_(**{"from": 0.5, "to": 2.0}),
    "random_to_kw": lambda t: t.random_(to=9),
}


@pytest.mark.parametrize("view", ["transposed", "strided", "permuted", "contiguous"])
@pytest.mark.parametrize("op", sorted(FILLS))
def test_inplace_sampler_memory_order(op, view):
    _check(lambda L: FILLS[op](_views(L, lambda L, s: L.zeros(*s))[view]))


def test_bernoulli_tensor_p_follows_memory_order():
    _check(lambda L: L.zeros(7, 5).t().bernoulli_(L.linspace(0, 1, 35).reshape(7, 5).t()))


LIKE = {
    "rand_like": lambda L, x: L.rand_like(x), "randn_like": lambda L, x: L.randn_like(x),
    "randn_like64": lambda L, x: L.randn_like(x, dtype=L.float64),
    "randint_like": lambda L, x: L.randint_like(x, 10), "randint_like_lohi": lambda L, x: L.randint_like(x, -4, 9),
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.4),
    "dropout_inplace": lambda L, x: L.nn.functional.dropout(x, 0.4, True, True),
    "alpha_dropout": lambda L, x: L.nn.functional.alpha_dropout(x, 0.4, True),
    "Dropout": lambda L, x: L.nn.Dropout(0.3)(x), "AlphaDropout": lambda L, x: L.nn.AlphaDropout(0.3)(x),
}


@pytest.mark.parametrize("view", ["transposed", "strided", "permuted", "contiguous"])
@pytest.mark.parametrize("op", sorted(LIKE))
def test_like_and_dropout_lay_out_as_empty_like(op, view):
    _check(lambda L: LIKE[op](L, _views(L, lambda L, s: L.ones(*s))[view]))


def test_rand_like_keeps_a_transposes_strides():
    for L in (torch, tt):
        assert L.rand_like(L.zeros(7, 5).t()).stride() == (1, 5)


# ---- random_ / randint bounds: ATen's update_from/update_to, range checks, 64-bit draws from 2^28 --------------
RANDOM_DTYPES = ["float32", "float64", "bfloat16", "float16", "int64", "int32", "int16", "uint8", "bool",
                 "complex64"]
RANDOM_BOUNDS = [(0, 10), (0, 1 << 24), (0, 1 << 25), (-3, 1 << 28), (0, (1 << 28) - 1), (5, 1 << 29),
                 (0, 1 << 31), (0, 1 << 32), (0, 1 << 40), (-(1 << 62), 1 << 62), (0, 70000), (0, 2048),
                 (1 << 20, None), (3, None), (-5, None), (-(1 << 63), None), (-(1 << 62), None), (0, 513)]


@pytest.mark.parametrize("dtype", RANDOM_DTYPES)
@pytest.mark.parametrize("lo,hi", RANDOM_BOUNDS, ids=[f"{a}-{b}" for a, b in RANDOM_BOUNDS])
def test_random_from_to(lo, hi, dtype):
    _check(lambda L: L.zeros(6, dtype=getattr(L, dtype)).random_(lo, hi))


@pytest.mark.parametrize("dtype", RANDOM_DTYPES)
@pytest.mark.parametrize("lo,hi", [b for b in RANDOM_BOUNDS if b[1] is not None])
def test_randint_bounds(lo, hi, dtype):
    _check(lambda L: L.randint(lo, hi, (5,), dtype=getattr(L, dtype)))


@pytest.mark.parametrize("case", ["randint_like-big", "randint_like-complex", "randint_like-complex-dtype"])
def test_randint_like_bounds(case):
    _check({"randint_like-big": lambda L: L.randint_like(L.zeros(3, 4), 1 << 40),
            "randint_like-complex": lambda L: L.randint_like(L.zeros(3, dtype=L.complex64), 5),
            "randint_like-complex-dtype": lambda L: L.randint_like(L.zeros(3), 5, dtype=L.complex128)}[case])


# ---- samplers with infinite parameters (the emulated fma keeps IEEE's infinities) ------------------------------
INF_PARAMS = [("cauchy_", (INF, 1.0)), ("cauchy_", (0.0, INF)), ("cauchy_", (-INF, INF)), ("cauchy_", (0.0, 1e308)),
              ("log_normal_", (INF, 1.0)), ("log_normal_", (0.0, INF)), ("log_normal_", (-INF, 1.0)),
              ("normal_", (INF, 1.0)), ("normal_", (-INF, 1.0)), ("normal_", (0.0, INF)), ("normal_", (NAN, 1.0)),
              ("exponential_", (INF,)), ("geometric_", (1e-300,))]


@pytest.mark.parametrize("n", [3, 16, 40])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op,args", INF_PARAMS, ids=[f"{o}{a}" for o, a in INF_PARAMS])
def test_sampler_infinite_parameters(op, args, dtype, n):
    _check(lambda L: getattr(L.empty(n, dtype=getattr(L, dtype)), op)(*args))


# ---- bernoulli_(p tensor), normal(tensor), poisson ---------------------------------------------------------------
SAMPLING = {
    "bernoulli_-int-p": lambda L: L.zeros(3).bernoulli_(L.tensor([1], dtype=L.int16)),
    "bernoulli_-bool-p": lambda L: L.zeros(3).bernoulli_(L.tensor([True])),
    "bernoulli_-empty-p": lambda L: L.zeros(3).bernoulli_(L.zeros(0)),
    "bernoulli_-wider-p": lambda L: L.zeros((), dtype=L.bfloat16).bernoulli_(L.ones(1)),
    "bernoulli_-p-requires-grad": lambda L: L.zeros(2, 3).bernoulli_(L.full((3,), 0.5, requires_grad=True)),
    "bernoulli_-int-self": lambda L: L.zeros(2, 3, dtype=L.int32).bernoulli_(L.full((3,), 0.5)),
    "bernoulli_-p-keyword": lambda L: L.zeros(2, 3).bernoulli_(p=L.full((3,), 0.5)),
    "normal-float-only": lambda L: L.normal(1.5),
    "normal-two-floats": lambda L: L.normal(0.0, 1.0),
    "normal-mean-requires-grad": lambda L: L.normal(L.tensor([0.0, INF, 1.0], requires_grad=True)),
    "normal-both-require-grad": lambda L: L.normal(L.zeros(3, requires_grad=True), L.ones(3, requires_grad=True)),
    "normal-std-requires-grad": lambda L: L.normal(0.5, L.ones(20, requires_grad=True)),
    "normal-complex64": lambda L: L.normal(L.zeros(3, dtype=L.complex64)),
    "normal-complex128": lambda L: L.normal(L.zeros(30, dtype=L.complex128), 2.0),
    "poisson-inf-huge": lambda L: L.poisson(L.tensor([INF, 1e38, 1e19, 1e18, 5.0])),
    "poisson-inf-huge64": lambda L: L.poisson(L.tensor([1e19] * 5 + [3.0, 30.0], dtype=L.float64)),
    "binomial-mismatch": lambda L: L.binomial(L.ones(4), L.full((5,), 0.5)),
    "binomial-empty": lambda L: L.binomial(L.ones(4), L.zeros(0)),
}


@pytest.mark.parametrize("case", sorted(SAMPLING))
def test_sampling_checks(case):
    _check(SAMPLING[case])


def test_normal_gradient_is_zero():
    x = tt.tensor([0.0, 1.0], requires_grad=True)
    tt.normal(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]  # PyTorch's derivative of normal in its mean


# ---- scans, sum, arange/range, isin/bucketize, *_like, mode ---------------------------------------------------
SCAN_DTYPES = ["bool", "float16", "bfloat16", "int64", "float32", None]


@pytest.mark.parametrize("inplace", [False, True], ids=["out-of-place", "in-place"])
@pytest.mark.parametrize("in_dtype", ["float32", "int32", "bool", "float16"])
@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=str)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_dtypes(op, dtype, in_dtype, inplace):
    def fn(L):
        x = (L.tensor(np.linspace(0.1, 2.9, 18, dtype=np.float32)).reshape(3, 6)).to(getattr(L, in_dtype))
        d = dtype and getattr(L, dtype)
        return getattr(x, op + "_")(-1, dtype=d) if inplace else getattr(L, op)(x, -1, dtype=d)
    _check(fn)


OTHERS = {
    "cumsum-0d-bool": lambda L: L.cumsum(L.zeros(()), 0, dtype=L.bool),
    "sum-keepdim-only-method": lambda L: L.ones(2, 3).sum(keepdim=False),
    "sum-keepdim-only": lambda L: L.sum(L.ones(2, 3), keepdim=True),
    "sum-keepdim-none": lambda L: L.sum(L.ones(2, 3), keepdim=None),
    "sum-dim-none-keepdim": lambda L: L.sum(L.ones(2, 3), None, True),
    "sum-keepdim-str": lambda L: L.ones(2, 3).sum(1, "a"),
    "sum-dim": lambda L: L.ones(2, 3).sum(dim=1, keepdim=True),
    "nansum-int": lambda L: L.nansum(L.ones(2, 3, dtype=L.int16), 1),
    "nansum-bool": lambda L: L.ones(2, 3, dtype=L.bool).nansum(),
    "arange-bool": lambda L: L.arange(0.0, 1.0, dtype=L.bool),
    "arange-empty-bool": lambda L: L.arange(0, 0, dtype=L.bool),
    "arange-complex": lambda L: L.arange(0.0, 1.0, dtype=L.complex64),
    "arange-pin-memory": lambda L: L.arange(0.0, 1.0, pin_memory=False),
    "range-bool": lambda L: L.range(0.0, 1.0, dtype=L.bool),
    "range-complex": lambda L: L.range(0.0, 1.0, dtype=L.complex64),
    "range-wrong-sign": lambda L: L.range(0.0, 1.0, step=-1.0),
    "range-big-step": lambda L: L.range(0.0, 1.0, step=2),
    "range-fractional": lambda L: L.range(0, 1, 0.3),
    "range-tenths": lambda L: L.range(0.1, 1.0, 0.1),
    "range-down": lambda L: L.range(1, 0, -0.3),
    "range-int": lambda L: L.range(1, 7, 2, dtype=L.int32),
    "range-half": lambda L: L.range(0, 1, dtype=L.float16),
    "range-inf": lambda L: L.range(0, INF),
    "range-zero-step": lambda L: L.range(0, 1, 0),
    "range-no-end": lambda L: L.range(5),
    "isin-list-elements": lambda L: L.isin([1.0, 2.0], L.tensor([1.0, 2.0])),
    "isin-list-test": lambda L: L.isin(L.tensor([1.0, 2.0]), [1.0, 2.0]),
    "isin-two-numbers": lambda L: L.isin(2, 3),
    "isin-number-elements": lambda L: L.isin(1.0, L.tensor([1.0, 2.0])),
    "isin-number-test": lambda L: L.isin(L.tensor([1.0, 2.0]), 2),
    "isin-bool-elements": lambda L: L.isin(L.tensor([True]), L.tensor([1.0])),
    "isin-bool-test": lambda L: L.isin(L.tensor([1.0]), L.tensor(True)),
    "isin-complex": lambda L: L.isin(L.tensor([1 + 1j]), L.tensor([1.0])),
    "isin-mixed": lambda L: L.isin(L.tensor([1, 2]), L.tensor([1.5, 2.0])),
    "bucketize-list-input": lambda L: L.bucketize([1.0, 2.0], L.tensor([1.0, 2.0])),
    "bucketize-list-boundaries": lambda L: L.bucketize(L.tensor([1.0]), [1.0, 2.0]),
    "bucketize-number": lambda L: L.bucketize(1.5, L.tensor([1.0, 2.0])),
    "zeros_like-pin-int": lambda L: L.zeros_like(L.zeros(2), pin_memory=2),
    "ones_like-pin-str": lambda L: L.ones_like(L.zeros(2), pin_memory="yes"),
    "zeros_like-pin-false": lambda L: L.zeros_like(L.zeros(2), pin_memory=False),
}


@pytest.mark.parametrize("case", sorted(OTHERS))
def test_reductions_and_factories(case):
    _check(OTHERS[case])


def _mode_rows():
    rng = np.random.default_rng(0)
    rows = []
    for trial in range(60):
        n = int(rng.integers(1, 90))
        row = rng.integers(0, 5, n).astype(np.float64)
        row[rng.random(n) < rng.random()] = NAN
        if trial % 3 == 0:
            row = rng.standard_normal(n)
            row[rng.integers(0, n)] = NAN
        rows.append(row)
    return rows


MODE_ROWS = _mode_rows()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("i", range(len(MODE_ROWS)))
def test_mode_follows_std_sort(i, dtype):
    row = MODE_ROWS[i] if dtype != "int64" else np.nan_to_num(MODE_ROWS[i], nan=7.0)
    _check(lambda L: L.tensor(row).to(getattr(L, dtype)).mode())


def test_mode_of_a_matrix_with_nans():
    a = np.random.default_rng(1).standard_normal((4, 4)).astype(np.float32)
    a[1, 2] = a[3, 0] = NAN
    _check(lambda L: L.tensor(a).mode(0))
    _check(lambda L: L.tensor(a).mode())
