"""Differential cases for the ``nn.functional`` / ``nn`` differences the generated fuzzer (issue 32) found:
argument types, dtypes the PyTorch kernels are not compiled for, and value checks. Each case is a function of
the library module; it runs in tinytorch and in PyTorch, and both must raise the same exception type with the
same message, or both return equal results."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

NAN, INF = float("nan"), float("inf")
INTS = ("int64", "int32", "int16", "int8", "uint8", "bool")
COMPLEX = ("complex64", "complex128")


def x(m, *shape, dtype="float32"):
    """Deterministic data known to both libraries, cast to ``dtype``."""
    shape = shape or (4, 4)
    n = int(np.prod(shape))
    t = (m.arange(n, dtype=m.float64) % 7 - 3).reshape(shape) / 2
    return t.to(getattr(m, dtype))


def pool_with_indices(m, n, dtype="float32", idtype="int64"):
    shape = (1, 2) + (4,) * n
    pool = getattr(m.nn.functional, f"max_pool{max(n, 1)}d")
    y, i = pool(x(m, *shape), 2, return_indices=True)
    return y.to(getattr(m, dtype)), i.to(getattr(m, idtype))


CASES = []


def case(name, fn):
    CASES.append(pytest.param(fn, id=name))


# kernels compiled for floating point only (NotImplementedError "<kernel>" not implemented for 'Long')
for fname in ("hardshrink", "softshrink", "hardsigmoid", "hardswish"):
    for dt in INTS + COMPLEX + ("float16", "bfloat16", "float64"):
        case(f"{fname}-{dt}", lambda m, f=fname, d=dt: getattr(m.nn.functional, f)(x(m, dtype=d)))
for dt in INTS + COMPLEX + ("float16", "bfloat16"):
    case(f"rrelu-eval-{dt}", lambda m, d=dt: m.nn.functional.rrelu(x(m, dtype=d)))
    case(f"rrelu-train-{dt}", lambda m, d=dt: m.nn.functional.rrelu(x(m, dtype=d), training=True).shape)
    case(f"pdist-{dt}", lambda m, d=dt: m.nn.functional.pdist(x(m, dtype=d)))
    case(f"smooth_l1-{dt}", lambda m, d=dt: m.nn.functional.smooth_l1_loss(x(m), x(m, dtype=d)))
    for side in (0, 1):
        case(f"kl_div-{side}-{dt}", lambda m, d=dt, s=side: m.nn.functional.kl_div(
            *((x(m, dtype=d), x(m)) if s == 0 else (x(m), x(m, dtype=d))), reduction="sum"))
    for n in (1, 2, 3):
        case(f"max_unpool{n}d-{dt}", lambda m, d=dt, n=n: getattr(m.nn.functional, f"max_unpool{n}d")(
            *pool_with_indices(m, n, dtype=d), 2))
case("kl_div-int-and-complex", lambda m: m.nn.functional.kl_div(x(m, dtype="int64"), x(m, dtype="complex64")))
for n in (1, 2, 3):
    case(f"max_unpool{n}d-int32-indices", lambda m, n=n: getattr(m.nn.functional, f"max_unpool{n}d")(
        *pool_with_indices(m, n, idtype="int32"), 2))
# an integer input keeps its dtype (the margin truncated); 'mean' then refuses it, 'sum' works
for dt in ("int64", "uint8", "float16"):
    for red in ("mean", "sum", "none"):
        case(f"hinge-{dt}-{red}", lambda m, d=dt, r=red: m.nn.functional.hinge_embedding_loss(
            x(m, dtype=d), m.tensor([1.0, -1.0, -1.0, 1.0]), margin=1.5, reduction=r))

# value checks
for lo, up in ((0.5, 1 / 3), (INF, 1 / 3), (NAN, 1 / 3), (0.1, INF), (0.1, NAN), (-INF, 0.1), (2 ** 63, 1 / 3),
               (0.1, -1.0)):
    for tr in (False, True):
        case(f"rrelu-bounds-{lo}-{up}-{tr}", lambda m, lo=lo, up=up, tr=tr: m.nn.functional.rrelu(
            x(m), lo, up, training=tr).shape)
    case(f"rrelu_-bounds-{lo}-{up}", lambda m, lo=lo, up=up: m.nn.functional.rrelu_(x(m), lo, up))
for lambd in (INF, NAN, -1.0, 1e300, 0.0):
    for dt in ("float32", "float64", "bfloat16"):
        case(f"softshrink-lambda-{lambd}-{dt}", lambda m, v=lambd, d=dt: m.nn.functional.softshrink(x(m, dtype=d), v))
for eps in (-1.0, NAN, -1e-9, None):
    case(f"cosine_similarity-eps-{eps}", lambda m, e=eps: m.nn.functional.cosine_similarity(x(m), x(m), eps=e))
case("cosine_similarity-dim-None", lambda m: m.nn.functional.cosine_similarity(x(m), x(m), dim=None))
for p in (-1.0, NAN, None, INF):
    case(f"pdist-p-{p}", lambda m, p=p: m.nn.functional.pdist(x(m), p=p))
case("pdist-float16-one-row", lambda m: m.nn.functional.pdist(x(m, 1, 16, dtype="float16")))
case("pdist-int-negative-p", lambda m: m.nn.functional.pdist(x(m, dtype="int64"), -1.0))
case("smooth_l1-beta-nan", lambda m: m.nn.functional.smooth_l1_loss(x(m), x(m), beta=NAN))
for fn in ("triplet_margin_loss", "triplet_margin_with_distance_loss"):
    case(f"{fn}-margin-negative", lambda m, f=fn: getattr(m.nn.functional, f)(x(m), x(m), x(m), margin=-1.0))
case("torch.triplet_margin_loss-margin-negative", lambda m: m.triplet_margin_loss(x(m), x(m), x(m), margin=-1.0))
case("triplet_margin_loss-p-None", lambda m: m.nn.functional.triplet_margin_loss(x(m), x(m), x(m), p=None))
for which in range(3):
    for bad in ("0-d", "drop", "extra"):
        def _twd(m, w=which, b=bad):
            args = [x(m), x(m), x(m)]
            args[w] = {"0-d": x(m, 1).reshape(()), "drop": x(m, 4), "extra": x(m, 2, 4, 4)}[b]
            return m.nn.functional.triplet_margin_with_distance_loss(*args)
        case(f"triplet_with_distance-{which}-{bad}", _twd)
case("soft_margin-target-broadcasts-past-input", lambda m: m.nn.functional.soft_margin_loss(x(m, 4), x(m)))
case("soft_margin-target-broadcasts-to-input", lambda m: m.nn.functional.soft_margin_loss(x(m), x(m, 4)))
case("soft_margin-target-requires-grad", lambda m: m.nn.functional.soft_margin_loss(
    x(m), x(m).requires_grad_()))

# argument types (PyTorch's argument parser: TypeError)
TYPE_CASES = [
    ("hardsigmoid", lambda m: m.nn.functional.hardsigmoid(1.5)),
    ("hardswish", lambda m: m.nn.functional.hardswish([1.0])),
    ("hinge_embedding_loss", lambda m: m.nn.functional.hinge_embedding_loss(1.5, x(m))),
    ("kl_div-input", lambda m: m.nn.functional.kl_div(1.5, x(m))),
    ("kl_div-target", lambda m: m.nn.functional.kl_div(x(m), 1.5)),
    ("kl_div-log_target", lambda m: m.nn.functional.kl_div(x(m), x(m), log_target=2)),
    ("poisson_nll_loss-target", lambda m: m.nn.functional.poisson_nll_loss(x(m), 1.5)),
    ("poisson_nll_loss-full", lambda m: m.nn.functional.poisson_nll_loss(x(m), x(m), full="yes")),
    ("poisson_nll_loss-eps", lambda m: m.nn.functional.poisson_nll_loss(x(m), x(m), eps=None)),
    ("pairwise_distance-x1", lambda m: m.nn.functional.pairwise_distance(1.5, x(m))),
    ("pairwise_distance-p", lambda m: m.nn.functional.pairwise_distance(x(m), x(m), p=None)),
    ("soft_margin_loss-target", lambda m: m.nn.functional.soft_margin_loss(x(m), 1.5)),
    ("triplet_with_distance-float", lambda m: m.nn.functional.triplet_margin_with_distance_loss(x(m), 1.5, x(m))),
    ("KLDivLoss-log_target", lambda m: m.nn.KLDivLoss(log_target=None)(x(m), x(m))),
]
TYPE_CASES += [
    ("alpha_dropout-eval", lambda m: m.nn.functional.alpha_dropout(1.5)),
    ("alpha_dropout-train", lambda m: m.nn.functional.alpha_dropout(None, training=True)),
    ("alpha_dropout-p-first", lambda m: m.nn.functional.alpha_dropout(1.5, p=2.0)),
]
for fn in ("channel_shuffle", "native_channel_shuffle"):
    for shape, g in (((2, 4), 2), ((4,), 0), ((2, 4, 3), 0), ((2, 4, 3), 2)):
        case(f"{fn}-{shape}-{g}", lambda m, f=fn, s=shape, g=g: getattr(m.nn.functional, f)(x(m, *s), g))
for cell in ("RNNCell", "GRUCell", "LSTMCell"):
    case(f"{cell}-3d-input", lambda m, c=cell: getattr(m.nn, c)(4, 3)(x(m, 2, 2, 4)))
    case(f"{cell}-3d-hidden", lambda m, c=cell: getattr(m.nn, c)(4, 3)(
        x(m, 2, 4), (x(m, 2, 3), x(m, 1, 2, 3)) if c == "LSTMCell" else x(m, 1, 2, 3)))
for nl in ("bogus", 1, None):
    case(f"RNNCell-nonlinearity-{nl}", lambda m, nl=nl: m.nn.RNNCell(4, 3, nonlinearity=nl)(x(m, 2, 4)))
for name, fn in TYPE_CASES:
    case(f"type-{name}", fn)


def _run(m, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(m)
        except Exception as e:  # noqa: BLE001 - the exception is the result under test
            return "raise", e


def _tree(v):
    """A comparable form of a result: tensors as (dtype name, shape, values as float64 lists)."""
    if isinstance(v, (tuple, list)):
        return [_tree(a) for a in v]
    if hasattr(v, "detach"):
        a = v.detach()
        vals = None if a.dtype.is_complex else a.double().tolist()
        return str(a.dtype).split(".")[-1], tuple(a.shape), vals
    return v


@pytest.mark.parametrize("fn", CASES)
def test_same_as_torch(fn):
    want_kind, want = _run(torch, fn)
    got_kind, got = _run(tt, fn)
    if want_kind == "raise":
        assert got_kind == "raise", f"torch raised {type(want).__name__}({want}); tinytorch returned"
        # torch's Python code trips over a non-tensor with AttributeError; ours raises the parser's TypeError
        want_type = TypeError if isinstance(want, AttributeError) else type(want)
        assert isinstance(got, want_type), f"{type(got).__name__}({got}) vs torch {type(want).__name__}({want})"
        if not isinstance(want, AttributeError):
            assert str(got) == str(want)
    else:
        assert got_kind == "ok", f"tinytorch raised {type(got).__name__}({got}); torch returned"
        g, w = _tree(got), _tree(want)
        if isinstance(w, tuple):
            assert g[:2] == w[:2], f"dtype/shape {g[:2]} vs torch {w[:2]}"
            tol = 1e-2 if w[0] in ("float16", "bfloat16") else 1e-6
            np.testing.assert_allclose(np.array(g[2], dtype=float), np.array(w[2], dtype=float), rtol=tol, atol=tol)
        else:
            assert g == w
