"""Random-stream fidelity: after the same manual_seed (or with a Generator seeded the same), every random op draws
PyTorch's CPU numbers bit for bit, and the stream advances as torch's does (a second call matches too).

float32 randn / normal_ of 16+ elements go through torch's AVX2 kernel (x86 always dispatches normal_ there: its
AVX-512 build registers no normal kernel); tinytorch emulates its log/sincos polynomials and fused multiply-adds,
so those compare exactly as well. No tolerance is used anywhere."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

SEED = 1234


def _np(t):
    t = t.detach()
    return t.float().numpy() if t.dtype in (tt.bfloat16, torch.bfloat16) else t.numpy()


def _data(lib, arr, dtype="float32"):
    return lib.tensor(np.asarray(arr)).to(getattr(lib, dtype))


SIZES = (1, 5, 15, 16, 17, 33, 100, 5000)
FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8")

CASES = {}
for n in SIZES:
    for dt in FLOATS:
        CASES[f"rand-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.rand(n, dtype=getattr(L, dt), **g)
        CASES[f"randn-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.randn(n, dtype=getattr(L, dt), **g)
        CASES[f"uniform_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).uniform_(-1.7, 5.1, **g)
        CASES[f"normal_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).normal_(0.1, 0.3, **g)
        CASES[f"exponential_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).exponential_(0.7, **g)
        CASES[f"cauchy_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).cauchy_(0.7, 0.3, **g)
        CASES[f"log_normal_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).log_normal_(0.1, 0.3, **g)
        CASES[f"geometric_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).geometric_(0.05, **g)
        CASES[f"bernoulli_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).bernoulli_(0.3, **g)
    for dt in FLOATS + INTS + ("bool",):
        lo = 0 if dt in ("uint8", "bool") else -3
        hi = 2 if dt == "bool" else 7
        CASES[f"random_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).random_(**g)
        CASES[f"random_to-{n}-{dt}"] = lambda L, g, n=n, dt=dt, hi=hi: L.empty(n, dtype=getattr(L, dt)).random_(hi, **g)
        CASES[f"random_from_to-{n}-{dt}"] = \
            lambda L, g, n=n, dt=dt, lo=lo, hi=hi: L.empty(n, dtype=getattr(L, dt)).random_(lo, hi, **g)
    for dt in INTS:
        CASES[f"geometric_-{n}-{dt}"] = lambda L, g, n=n, dt=dt: L.empty(n, dtype=getattr(L, dt)).geometric_(0.2, **g)
    CASES[f"randint-{n}"] = lambda L, g, n=n: L.randint(3, 1000, (n,), **g)
    CASES[f"randint-wide-{n}"] = lambda L, g, n=n: L.randint(-(1 << 40), 1 << 40, (n,), **g)
    CASES[f"randint-int16-{n}"] = lambda L, g, n=n: L.randint(-5, 5, (n,), dtype=L.int16, **g)
    CASES[f"randperm-{n}"] = lambda L, g, n=n: L.randperm(n, **g)
    CASES[f"randint_like-{n}"] = lambda L, g, n=n: L.randint_like(L.zeros(n), 10, **g)
    CASES[f"randint_like-lohi-{n}"] = lambda L, g, n=n: L.randint_like(L.zeros(n, dtype=L.int32), -4, 10, **g)
    CASES[f"rand_like-{n}"] = lambda L, g, n=n: L.rand_like(L.zeros(n, dtype=L.float64), **g)
    CASES[f"randn_like-{n}"] = lambda L, g, n=n: L.randn_like(L.zeros(n), **g)
    mean = np.linspace(-1, 1, n, dtype=np.float32)  # from NumPy: the test is of the draws, not of linspace
    std = np.linspace(0.5, 2, n, dtype=np.float32)
    CASES[f"normal-tt-{n}"] = lambda L, g, m=mean, s=std: L.normal(_data(L, m), _data(L, s), **g)
    CASES[f"normal-tf-{n}"] = lambda L, g, m=mean: L.normal(_data(L, m), 0.3, **g)
    CASES[f"normal-ft-{n}"] = lambda L, g, s=std: L.normal(0.1, _data(L, s), **g)
    CASES[f"normal-ff-{n}"] = lambda L, g, n=n: L.normal(0.1, 0.3, (n,), **g)
    CASES[f"normal-ff64-{n}"] = lambda L, g, m=mean: L.normal(_data(L, m, "float64"), 0.3, **g)
    p = np.linspace(0, 1, n)
    CASES[f"bernoulli-tensor-{n}"] = lambda L, g, p=p: L.bernoulli(_data(L, p), **g)
    CASES[f"bernoulli-tensor64-{n}"] = lambda L, g, p=p: L.bernoulli(_data(L, p, "float64"), **g)
    CASES[f"bernoulli-float-{n}"] = lambda L, g, n=n: L.bernoulli(L.zeros(n), 0.4, **g)
    CASES[f"bernoulli_-tensor-{n}"] = lambda L, g, p=p: L.zeros(len(p)).bernoulli_(_data(L, p), **g)
    rates = np.linspace(0, 40, n)
    CASES[f"poisson-{n}"] = lambda L, g, r=rates: L.poisson(_data(L, r), **g)
    CASES[f"poisson64-{n}"] = lambda L, g, r=rates: L.poisson(_data(L, r, "float64"), **g)

PROBS = np.array([0.1, 0.0, 0.3, 0.4, 0.2, 0.05, 0.0, 0.7])
for dt in ("float32", "float64"):
    for k in (1, 3, 6):  # 6 == the number of non-zero categories
        for rep in (True, False):
            CASES[f"multinomial-1d-{k}-{rep}-{dt}"] = \
                lambda L, g, k=k, rep=rep, dt=dt: L.multinomial(_data(L, PROBS, dt), k, rep, **g)
            CASES[f"multinomial-2d-{k}-{rep}-{dt}"] = lambda L, g, k=k, rep=rep, dt=dt: L.multinomial(
                _data(L, np.stack([PROBS, PROBS[::-1] * 3, np.arange(8.0)]), dt), k, rep, **g)
    CASES[f"multinomial-all-categories-{dt}"] = lambda L, g, dt=dt: L.multinomial(_data(L, np.arange(1.0, 9.0), dt), 8, **g)
    CASES[f"multinomial-many-{dt}"] = lambda L, g, dt=dt: L.multinomial(_data(L, PROBS, dt), 500, True, **g)


def _run(case, lib, explicit):
    """Two calls of ``case`` after seeding: the default generator, or an explicit Generator (then the default
    stream must stay untouched, so a later rand() also matches)."""
    warnings.simplefilter("ignore")
    lib.manual_seed(SEED)
    if explicit:
        g = lib.Generator().manual_seed(SEED + 1)
        kw = {"generator": g}
    else:
        kw = {}
    first, second = CASES[case](lib, kw), CASES[case](lib, kw)
    return _np(first), _np(second), _np(lib.rand(3))


@pytest.mark.parametrize("explicit", [False, True], ids=["default", "generator"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_stream_matches_torch(case, explicit):
    want, got = _run(case, torch, explicit), _run(case, tt, explicit)
    for w, g_, what in zip(want, got, ("first call", "second call", "default stream after")):
        assert g_.dtype == w.dtype, what
        np.testing.assert_array_equal(g_, w, err_msg=f"{case}: {what}")


def _dropout_cases():
    x = np.random.default_rng(0).standard_normal((4, 6, 5, 3)).astype(np.float32)
    cases = {
        "dropout": lambda L, tr: L.nn.functional.dropout(_data(L, x), 0.3, tr),
        "dropout-p0.9-f64": lambda L, tr: L.nn.functional.dropout(_data(L, x, "float64"), 0.9, tr),
        "dropout-inplace": lambda L, tr: L.nn.functional.dropout(_data(L, x), 0.3, tr, True),
        "dropout1d": lambda L, tr: L.nn.functional.dropout1d(_data(L, x[0]), 0.4, tr),
        "dropout2d": lambda L, tr: L.nn.functional.dropout2d(_data(L, x), 0.4, tr),
        "dropout3d": lambda L, tr: L.nn.functional.dropout3d(_data(L, x[None]), 0.4, tr),
        "alpha_dropout": lambda L, tr: L.nn.functional.alpha_dropout(_data(L, x), 0.3, tr),
        "feature_alpha_dropout": lambda L, tr: L.nn.functional.feature_alpha_dropout(_data(L, x), 0.3, tr),
    }
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"):
        arr = x[0] if name == "Dropout1d" else x[None] if name == "Dropout3d" else x

        def mod(L, tr, name=name, arr=arr):
            m = getattr(L.nn, name)(0.35)
            m.train(tr)
            return m(_data(L, arr))
        cases["nn." + name] = mod
    return cases


DROPOUT = _dropout_cases()


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", sorted(DROPOUT))
def test_dropout_matches_torch(case, training):
    out = []
    for lib in (torch, tt):
        warnings.simplefilter("ignore")
        lib.manual_seed(SEED)
        a = DROPOUT[case](lib, training)
        b = DROPOUT[case](lib, training)
        out.append((_np(a), _np(b), _np(lib.rand(3))))
    for w, g_ in zip(*out):
        np.testing.assert_array_equal(g_, w, err_msg=case)


def test_normal_cache_survives_between_calls():
    """normal_distribution<double> keeps its second Box-Muller value for the next small draw, and manual_seed
    drops it: interleaved small randn / log_normal_ calls stay on torch's stream."""
    res = []
    for lib in (torch, tt):
        lib.manual_seed(SEED)
        a = lib.randn(3, dtype=lib.float64)
        b = lib.empty(1, dtype=lib.float64).log_normal_(0.5, 0.2)
        c = lib.randn(1)
        lib.manual_seed(SEED)
        d = lib.randn(1, dtype=lib.float64)
        res.append([_np(t) for t in (a, b, c, d)])
    for w, g_ in zip(*res):
        np.testing.assert_array_equal(g_, w)


# thousands of cheap cases: CI runs a sample (TINYTORCH_SAMPLE, tests/conftest.py), a local run all of them
pytestmark = pytest.mark.sweep
