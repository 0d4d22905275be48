"""Bad input PyTorch refuses, differential against PyTorch, as generated sweeps (loops over dtypes, ops and argument
positions, not one hand-written test per case):

1. dtypes: every dtype x ops whose kernels PyTorch compiles for a narrower set (complex max/sort/clamp/compare,
   bool subtraction, integer input to float-only functions, bitwise ops on floats, the scatter/index family with
   mismatched source and index dtypes);
2. shapes: for each matrix/loss op, every tensor argument given a wrong rank and each dimension a wrong size;
3. ``allclose``/``isclose`` argument rules (dtypes, negative tolerances, non-tensor arguments);
4. in-place methods: each ``Tensor`` method ending in ``_`` on a leaf that requires grad, and each in-place
   method whose result dtype cannot be cast back to the tensor's dtype; the tensor's values and version counter
   are untouched after the raise.

Each case runs the same call through tinytorch and torch: where torch raises, tinytorch must raise the same
exception type (a subclass is fine) from a deliberate check, not from inside NumPy; where torch returns, tinytorch
must return the same shapes, dtypes and values.
"""
import math
import os
import traceback
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128",
          "int64", "int32", "int16", "int8", "uint8", "bool"]
INTS = ["int64", "int32", "int16", "int8", "uint8", "bool"]
_NUMPY_DIR = os.path.dirname(np.__file__)


# ---------------------------------------------------------------------------------------------------- harness

def _data(shape, dtype, seed=0, positive=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        # distinct values: sort/topk/kthvalue pick among ties in an unspecified order
        n = int(np.prod(shape))
        lo = 1 if positive or dtype == "uint8" else -n // 2
        return (rng.permutation(n) + lo).reshape(shape).astype(dtype)
    lo = 0.1 if positive else -0.9
    a = rng.uniform(lo, 0.9, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(lo, 0.9, shape)
        return a.astype(dtype)
    return a.astype(np.float64 if dtype == "float64" else np.float32)


def mk(m, shape, dtype="float32", seed=0, positive=False, requires_grad=False):
    """The same values as a tensor of library ``m`` (tinytorch or torch)."""
    t = m.tensor(_data(shape, dtype, seed, positive)).to(getattr(m, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _run(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, fn(m)
        except Exception as e:  # noqa: BLE001 - the exception is the result being compared
            return False, e


def _flatten(r):
    if isinstance(r, (tt.Tensor, torch.Tensor)):
        x = r.detach()
        name = str(x.dtype).split(".")[-1]
        if name == "bfloat16":
            x = x.float()
        vals = np.asarray(x.numpy())
        vals = vals.astype(np.complex128 if vals.dtype.kind == "c" else np.float64)
        return ("tensor", tuple(r.shape), name, vals)
    if isinstance(r, (tuple, list)):
        return ("seq", [_flatten(v) for v in r])
    return ("value", r)


def _same_result(ours, theirs, cid):
    if theirs[0] != ours[0]:
        return f"{cid}: {ours[0]} vs torch's {theirs[0]}"
    if theirs[0] == "tensor":
        if ours[1] != theirs[1]:
            return f"{cid}: shape {ours[1]} vs torch's {theirs[1]}"
        if ours[2] != theirs[2]:
            return f"{cid}: dtype {ours[2]} vs torch's {theirs[2]}"
        tol = 1e-2 if ours[2] in ("float16", "bfloat16") else 1e-4
        if not np.allclose(ours[3], theirs[3], rtol=tol, atol=tol, equal_nan=True):
            return f"{cid}: values differ: {ours[3]} vs torch's {theirs[3]}"
    elif theirs[0] == "seq":
        if len(ours[1]) != len(theirs[1]):
            return f"{cid}: {len(ours[1])} results vs torch's {len(theirs[1])}"
        for a, b in zip(ours[1], theirs[1]):
            d = _same_result(a, b, cid)
            if d:
                return d
    elif ours[1] != theirs[1]:
        return f"{cid}: {ours[1]!r} vs torch's {theirs[1]!r}"
    return None


def _from_numpy(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1].filename if frames else ""
    return last.startswith(_NUMPY_DIR) or type(exc).__module__.startswith("numpy")


def difference(cid, fn, message=False):
    """None when ``fn`` behaves as in torch (raises the same exception type, or returns the same result), else a
    description of the difference. ``message``: the exception messages must be equal too (True), or where the
    predicate ``message(torch's exception)`` holds."""
    t_ok, t_res = _run(fn, torch)
    o_ok, o_res = _run(fn, tt)
    if not t_ok:
        if o_ok:
            return f"{cid}: tinytorch returned where torch raises {type(t_res).__name__}: {t_res}"
        base = next(c for c in type(t_res).__mro__ if c.__module__ == "builtins")
        if not isinstance(o_res, base):
            return (f"{cid}: tinytorch raised {type(o_res).__name__}: {o_res}; "
                    f"torch raises {type(t_res).__name__}: {t_res}")
        if _from_numpy(o_res):
            return f"{cid}: the error comes from inside NumPy: {o_res!r}"
        if (message(t_res) if callable(message) else message) and str(o_res) != str(t_res):
            return f"{cid}: message {str(o_res)!r}; torch's {str(t_res)!r}"
        return None
    if not o_ok:
        return f"{cid}: tinytorch raised {type(o_res).__name__}: {o_res}; torch returns"
    return _same_result(_flatten(o_res), _flatten(t_res), cid)


def check(cid, fn, message=False):
    d = difference(cid, fn, message)
    assert d is None, d


# ---------------------------------------------------------------------------------------------------- 1. dtypes

def F(m):
    return m.nn.functional


# op name -> fn(m, x) where x is a (3, 4) tensor of the swept dtype
UNARY = {
    "max": lambda m, x: x.max(), "max_dim": lambda m, x: x.max(0), "min": lambda m, x: x.min(),
    "min_dim": lambda m, x: x.min(1), "amax": lambda m, x: x.amax(0), "amin": lambda m, x: x.amin(1),
    "aminmax": lambda m, x: m.aminmax(x), "argmax": lambda m, x: x.argmax(), "argmin_dim": lambda m, x: x.argmin(1),
    "sort": lambda m, x: x.sort(0), "argsort": lambda m, x: x.argsort(1), "topk": lambda m, x: x.topk(2),
    "msort": lambda m, x: m.msort(x), "kthvalue": lambda m, x: x.kthvalue(2), "median": lambda m, x: x.median(),
    "cummax": lambda m, x: x.cummax(0),
    "clamp": lambda m, x: x.clamp(0, 1), "clamp_min": lambda m, x: x.clamp(min=0),
    "clamp_tensor": lambda m, x: x.clamp(min=x), "clip": lambda m, x: x.clip(max=1),
    "lt": lambda m, x: x < x, "gt_scalar": lambda m, x: x > 0, "le": lambda m, x: x <= x,
    "ge_scalar": lambda m, x: x >= 1, "maximum": lambda m, x: m.maximum(x, x), "fmax": lambda m, x: m.fmax(x, x),
    "floor": lambda m, x: x.floor(), "ceil": lambda m, x: x.ceil(), "round": lambda m, x: x.round(),
    "round_decimals": lambda m, x: x.round(decimals=1), "trunc": lambda m, x: x.trunc(), "frac": lambda m, x: x.frac(),
    "sign": lambda m, x: x.sign(), "signbit": lambda m, x: x.signbit(),
    "remainder": lambda m, x: x.remainder(2), "remainder_t": lambda m, x: x % x, "fmod": lambda m, x: x.fmod(2),
    "floor_divide": lambda m, x: x // 2,
    "sub": lambda m, x: x - x, "sub_scalar": lambda m, x: x.sub(1), "sub_alpha": lambda m, x: m.sub(x, x, alpha=2),
    "rsub": lambda m, x: m.rsub(x, x), "rsub_scalar": lambda m, x: 1 - x, "neg": lambda m, x: -x,
    "negative": lambda m, x: m.negative(x),
    "softmax": lambda m, x: F(m).softmax(x, 0), "log_softmax": lambda m, x: F(m).log_softmax(x, 1),
    "softmin": lambda m, x: F(m).softmin(x, 1),
    "mean": lambda m, x: x.mean(), "mean_dim": lambda m, x: x.mean(0), "nanmean": lambda m, x: x.nanmean(),
    "std": lambda m, x: x.std(), "var": lambda m, x: x.var(1), "std_mean": lambda m, x: m.std_mean(x),
    "layer_norm": lambda m, x: F(m).layer_norm(x, (4,)),
    "group_norm": lambda m, x: F(m).group_norm(x, 1),
    "linear": lambda m, x: F(m).linear(x, x),
    "conv1d": lambda m, x: F(m).conv1d(x.reshape(1, 3, 4), x[:, :2].reshape(1, 3, 2)),
    "conv2d": lambda m, x: F(m).conv2d(x.reshape(1, 1, 3, 4), x[:2, :2].reshape(1, 1, 2, 2)),
    "avg_pool1d": lambda m, x: F(m).avg_pool1d(x.reshape(1, 3, 4), 2),
    "max_pool1d": lambda m, x: F(m).max_pool1d(x.reshape(1, 3, 4), 2),
    "relu": lambda m, x: F(m).relu(x), "gelu": lambda m, x: F(m).gelu(x), "silu": lambda m, x: F(m).silu(x),
    "elu": lambda m, x: F(m).elu(x), "leaky_relu": lambda m, x: F(m).leaky_relu(x),
    "hardtanh": lambda m, x: F(m).hardtanh(x), "softplus": lambda m, x: F(m).softplus(x),
    "sigmoid": lambda m, x: m.sigmoid(x), "tanh": lambda m, x: m.tanh(x), "logsigmoid": lambda m, x: F(m).logsigmoid(x),
    "normalize": lambda m, x: F(m).normalize(x),
    "mse_loss": lambda m, x: F(m).mse_loss(x, x), "l1_loss": lambda m, x: F(m).l1_loss(x, x),
    "exp": lambda m, x: x.exp(), "sqrt": lambda m, x: x.sqrt(), "erfinv": lambda m, x: x.erfinv(),
    "erfinv_": lambda m, x: x.clone().erfinv_(), "sqrt_": lambda m, x: x.clone().sqrt_(),
    "exp_": lambda m, x: x.clone().exp_(),
    "bitwise_and": lambda m, x: x & x, "bitwise_or_scalar": lambda m, x: x | 1, "bitwise_xor": lambda m, x: x ^ x,
    "bitwise_not": lambda m, x: ~x, "lshift": lambda m, x: x << 1, "rshift": lambda m, x: x >> 1,
    "bitwise_left_shift": lambda m, x: m.bitwise_left_shift(x, x),
    "logical_not": lambda m, x: m.logical_not(x), "abs": lambda m, x: x.abs(),
    "cumsum": lambda m, x: x.cumsum(0), "prod": lambda m, x: x.prod(), "sum": lambda m, x: x.sum(1),
    "gcd": lambda m, x: m.gcd(x, x), "atan2": lambda m, x: m.atan2(x, x), "lerp": lambda m, x: m.lerp(x, x, 0.5),
    "addcmul": lambda m, x: m.addcmul(x, x, x), "addcdiv": lambda m, x: m.addcdiv(x, x, x + 1),
}

# the scatter/index family, fn(m, x, src, idx) with x (3, 4), src of the source dtype, idx of the index dtype
INDEX_FILL = {
    "put_": lambda m, x, s, i: x.put_(i[0], s[0]),
    "put_accumulate": lambda m, x, s, i: x.put_(i[0], s[0], accumulate=True),
    "index_fill_": lambda m, x, s, i: x.index_fill_(0, i[0, :2], 1),
    "index_fill_tensor": lambda m, x, s, i: x.index_fill_(1, i[0, :2], s[0, 0]),
    "masked_fill_": lambda m, x, s, i: x.masked_fill_(x != x, 1),
    "masked_fill_tensor": lambda m, x, s, i: x.masked_fill_(m.ones(3, 4, dtype=m.bool), s[0, 0]),
    "masked_fill_mask_dtype": lambda m, x, s, i: x.masked_fill_(i, 1),
    "masked_scatter_": lambda m, x, s, i: x.masked_scatter_(m.ones(3, 4, dtype=m.bool), s),
    "index_copy_": lambda m, x, s, i: x.index_copy_(0, i[0, :2], s[:2]),
    "index_add_": lambda m, x, s, i: x.index_add_(0, i[0, :2], s[:2]),
    "index_add_alpha": lambda m, x, s, i: x.index_add_(0, i[0, :2], s[:2], alpha=2),
    "index_reduce_": lambda m, x, s, i: x.index_reduce_(0, i[0, :2], s[:2], "prod"),
    "scatter_": lambda m, x, s, i: x.scatter_(0, i, s),
    "scatter_value": lambda m, x, s, i: x.scatter_(0, i, 1),
    "scatter_reduce_arg": lambda m, x, s, i: x.scatter_(0, i, s, reduce="add"),
    "scatter_add_": lambda m, x, s, i: x.scatter_add_(0, i, s),
    "scatter_reduce_sum": lambda m, x, s, i: x.scatter_reduce_(0, i, s, "sum"),
    "scatter_reduce_amax": lambda m, x, s, i: x.scatter_reduce_(1, i, s, "amax"),
    "scatter_reduce_mean": lambda m, x, s, i: x.scatter_reduce_(0, i, s, "mean", include_self=False),
    "scatter_reduce_prod": lambda m, x, s, i: x.scatter_reduce_(0, i, s, "prod"),
    "index_put_": lambda m, x, s, i: x.index_put_((i[0, :2],), s[0, 0]),
    "gather": lambda m, x, s, i: x.gather(0, i),
    "index_select": lambda m, x, s, i: x.index_select(1, i[0]),
    "take": lambda m, x, s, i: x.take(i),
}


def _index(m, dtype):
    idx = np.array([[0, 1, 2, 1], [2, 0, 1, 0], [1, 2, 0, 2]])
    return m.tensor(idx).to(getattr(m, dtype))


def _index_case(op, xd, sd, idd):
    def fn(m):
        x = mk(m, (3, 4), xd)
        out = INDEX_FILL[op](m, x, mk(m, (3, 4), sd, seed=1), _index(m, idd))
        return out, x
    return fn


DTYPE_CASES = [(f"{op}-{d}", (lambda m, _f=f, _d=d: _f(m, mk(m, (3, 4), _d, positive=_d.startswith("uint")))))
               for op, f in UNARY.items() for d in DTYPES]
INDEX_CASES = (
    [(f"{op}-self_{d}", _index_case(op, d, d, "int64")) for op in INDEX_FILL for d in DTYPES]
    + [(f"{op}-src_{s}", _index_case(op, "float32", s, "int64")) for op in INDEX_FILL for s in DTYPES
       if s != "float32"]
    + [(f"{op}-int_self_src_{s}", _index_case(op, "int64", s, "int64")) for op in INDEX_FILL
       for s in ("float32", "int32", "bool")]
    + [(f"{op}-index_{i}", _index_case(op, "float32", "float32", i)) for op in INDEX_FILL
       for i in ("int32", "int16", "uint8", "bool", "float32")])


@pytest.mark.parametrize("cid,fn", DTYPE_CASES + INDEX_CASES, ids=[c[0] for c in DTYPE_CASES + INDEX_CASES])
def test_dtype_refusals_as_torch(cid, fn):
    check(cid, fn)


# the messages PyTorch users search for, compared in full
MESSAGE_CASES = [
    ("bool_sub", lambda m: m.tensor([True]) - m.tensor([False])),
    ("bool_sub_scalar", lambda m: m.tensor([True]).sub(1)),
    ("bool_rsub", lambda m: m.rsub(m.tensor([True]), m.tensor([False]))),
    ("bool_neg", lambda m: -m.tensor([True])),
    ("mean_int", lambda m: m.tensor([1, 2]).mean()),
    ("erfinv__int", lambda m: m.tensor([1, 2]).erfinv_()),
    ("sqrt__int", lambda m: m.tensor([1, 2]).sqrt_()),
    ("complex_max", lambda m: m.tensor([1j]).max()),
    ("complex_lt", lambda m: m.tensor([1j]) < m.tensor([1j])),
    ("complex_clamp", lambda m: m.tensor([1j]).clamp(0, 1)),
    ("int_add__float", lambda m: m.tensor([1, 2]).add_(1.5)),
    ("int_div__int", lambda m: m.tensor([1, 2]).div_(2)),
    ("bool_add__int", lambda m: m.tensor([True]).add_(1)),
    ("int_mul__float_tensor", lambda m: m.tensor([1, 2]).mul_(m.tensor([0.5, 1.0]))),
    ("int_sub__bool", lambda m: m.tensor([1, 2]).sub_(m.tensor([True, False]))),
    ("put__source_dtype", lambda m: m.zeros(3).put_(m.tensor([0]), m.tensor([1]))),
    ("masked_scatter__source_dtype", lambda m: m.zeros(3).masked_scatter_(m.tensor([True, False, True]),
                                                                           m.ones(3, dtype=m.float64))),
    ("index_copy__int32_index", lambda m: m.zeros(3, 2).index_copy_(0, m.tensor([0], dtype=m.int32), m.ones(1, 2))),
    ("nll_loss_batch", lambda m: m.nn.functional.nll_loss(m.zeros(4, 3), m.zeros(5, dtype=m.int64))),
    ("softmax_int", lambda m: m.nn.functional.softmax(m.ones(3, 4, dtype=m.int64), 0)),
    ("allclose_dtypes", lambda m: m.allclose(m.ones(2), m.ones(2, dtype=m.float64))),
    ("isclose_negative_rtol", lambda m: m.isclose(m.ones(2), m.ones(2), rtol=-1.0)),
]


@pytest.mark.parametrize("cid,fn", MESSAGE_CASES, ids=[c[0] for c in MESSAGE_CASES])
def test_refusal_messages_as_torch(cid, fn):
    check(cid, fn, message=True)


# ---------------------------------------------------------------------------------------------------- 2. shapes

# name -> (fn(m, *tensors), [(shape, dtype, kind)]): kind "f" random floats, "p" positive floats, "i" class
# indices (0/1), ("c", v) a constant ``v``
def _lsm(m, t):
    return t.log_softmax(-1)


SHAPE_OPS = {
    "addmm": (lambda m, a, b, c: m.addmm(a, b, c), [((2, 4), "f"), ((2, 3), "f"), ((3, 4), "f")]),
    "addmv": (lambda m, a, b, c: m.addmv(a, b, c), [((2,), "f"), ((2, 3), "f"), ((3,), "f")]),
    "addr": (lambda m, a, b, c: m.addr(a, b, c), [((2, 3), "f"), ((2,), "f"), ((3,), "f")]),
    "addbmm": (lambda m, a, b, c: m.addbmm(a, b, c), [((2, 4), "f"), ((5, 2, 3), "f"), ((5, 3, 4), "f")]),
    "baddbmm": (lambda m, a, b, c: m.baddbmm(a, b, c), [((5, 2, 4), "f"), ((5, 2, 3), "f"), ((5, 3, 4), "f")]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [((5, 2, 3), "f"), ((5, 3, 4), "f")]),
    "mm": (lambda m, a, b: m.mm(a, b), [((2, 3), "f"), ((3, 4), "f")]),
    "mv": (lambda m, a, b: m.mv(a, b), [((2, 3), "f"), ((3,), "f")]),
    "matmul": (lambda m, a, b: m.matmul(a, b), [((5, 2, 3), "f"), ((3, 4), "f")]),
    "matmul_vec": (lambda m, a, b: m.matmul(a, b), [((3,), "f"), ((3, 4), "f")]),
    "dot": (lambda m, a, b: m.dot(a, b), [((3,), "f"), ((3,), "f")]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [((3,), "f"), ((3,), "f")]),
    "outer": (lambda m, a, b: m.outer(a, b), [((3,), "f"), ((2,), "f")]),
    "cdist": (lambda m, a, b: m.cdist(a, b), [((2, 5, 3), "f"), ((2, 4, 3), "f")]),
    "meshgrid": (lambda m, a, b: m.meshgrid(a, b, indexing="ij"), [((3,), "f"), ((2,), "f")]),
    "kl_div": (lambda m, a, b: F(m).kl_div(a, b, reduction="batchmean"), [((2, 3), "f"), ((2, 3), "p")]),
    "kl_div_none": (lambda m, a, b: F(m).kl_div(a, b, reduction="none"), [((2, 3), "f"), ((2, 3), "p")]),
    "ctc_loss": (lambda m, lp, tg, il, tl: F(m).ctc_loss(_lsm(m, lp), tg, il, tl),
                 [((6, 2, 4), "f"), ((2, 3), ("c", 1)), ((2,), ("c", 6)), ((2,), ("c", 3))]),
    "grid_sample": (lambda m, a, g: F(m).grid_sample(a, g, align_corners=False),
                    [((1, 2, 4, 5), "f"), ((1, 3, 3, 2), "f")]),
    "affine_grid": (lambda m, t: F(m).affine_grid(t, [1, 2, 4, 5], align_corners=False), [((1, 2, 3), "f")]),
    "cross_entropy": (lambda m, a, t: F(m).cross_entropy(a, t), [((4, 3), "f"), ((4,), "i")]),
    "cross_entropy_2d": (lambda m, a, t: F(m).cross_entropy(a, t), [((2, 3, 4, 5), "f"), ((2, 4, 5), "i")]),
    "cross_entropy_prob": (lambda m, a, t: F(m).cross_entropy(a, t), [((4, 3), "f"), ((4, 3), "p")]),
    "cross_entropy_weight": (lambda m, a, t, w: F(m).cross_entropy(a, t, weight=w),
                             [((4, 3), "f"), ((4,), "i"), ((3,), "p")]),
    "nll_loss": (lambda m, a, t: F(m).nll_loss(a, t), [((4, 3), "f"), ((4,), "i")]),
    "nll_loss_weight": (lambda m, a, t, w: F(m).nll_loss(a, t, weight=w), [((4, 3), "f"), ((4,), "i"), ((3,), "p")]),
    "bilinear": (lambda m, a, b, w, c: F(m).bilinear(a, b, w, c),
                 [((4, 3), "f"), ((4, 2), "f"), ((5, 3, 2), "f"), ((5,), "f")]),
    "embedding_bag": (lambda m, i, w, o: F(m).embedding_bag(i, w, o),
                      [((6,), "i"), ((3, 4), "f"), ((2,), ("c", 0))]),
    "embedding_bag_2d": (lambda m, i, w: F(m).embedding_bag(i, w), [((2, 3), "i"), ((3, 4), "f")]),
    "embedding_bag_psw": (lambda m, i, w, p: F(m).embedding_bag(i, w, per_sample_weights=p, mode="sum"),
                          [((2, 3), "i"), ((3, 4), "f"), ((2, 3), "f")]),
    "embedding": (lambda m, i, w: F(m).embedding(i, w), [((2, 3), "i"), ((3, 4), "f")]),
    "pdist": (lambda m, a: F(m).pdist(a), [((4, 3), "f")]),
    "cosine_similarity": (lambda m, a, b: F(m).cosine_similarity(a, b), [((4, 3), "f"), ((4, 3), "f")]),
    "pairwise_distance": (lambda m, a, b: F(m).pairwise_distance(a, b), [((4, 3), "f"), ((4, 3), "f")]),
    "triplet_margin_loss": (lambda m, a, p, n: F(m).triplet_margin_loss(a, p, n),
                            [((4, 3), "f"), ((4, 3), "f"), ((4, 3), "f")]),
    "margin_ranking_loss": (lambda m, a, b, t: F(m).margin_ranking_loss(a, b, t),
                            [((4,), "f"), ((4,), "f"), ((4,), ("c", 1.0))]),
    "cosine_embedding_loss": (lambda m, a, b, t: F(m).cosine_embedding_loss(a, b, t),
                              [((4, 3), "f"), ((4, 3), "f"), ((4,), ("c", 1.0))]),
    "binary_cross_entropy": (lambda m, a, t: F(m).binary_cross_entropy(a.sigmoid(), t), [((4, 3), "f"), ((4, 3), "p")]),
    "mse_loss": (lambda m, a, t: F(m).mse_loss(a, t), [((4, 3), "f"), ((4, 3), "f")]),
}


def _arg(m, shape, kind, seed):
    if kind == "i":
        return m.tensor(np.arange(int(np.prod(shape))).reshape(shape) % 2).long()
    if isinstance(kind, tuple):
        v = kind[1]
        return m.full(shape, v, dtype=m.int64 if isinstance(v, int) else m.float32)
    return mk(m, shape, "float32", seed, positive=kind == "p")


def _shape_variants(shape):
    """Wrong versions of ``shape``: one dim fewer, one more, and each dim one larger (and, for size > 1, one
    smaller)."""
    out = []
    if shape:
        out.append(("rank-1", shape[1:]))
    out.append(("rank+1", (2,) + shape))
    for d, s in enumerate(shape):
        out.append((f"dim{d}+1", shape[:d] + (s + 1,) + shape[d + 1:]))
        if s > 1:
            out.append((f"dim{d}-1", shape[:d] + (s - 1,) + shape[d + 1:]))
    return out


def _shape_case(op, pos, shape):
    fn, args = SHAPE_OPS[op]

    def run(m):
        ts = [_arg(m, shape if j == pos else s, k, j) for j, (s, k) in enumerate(args)]
        return fn(m, *ts)
    return run


SHAPE_CASES = [(f"{op}-valid", _shape_case(op, -1, None)) for op in SHAPE_OPS] + [
    (f"{op}-arg{pos}-{tag}", _shape_case(op, pos, bad))
    for op, (_, args) in SHAPE_OPS.items() for pos, (shape, _) in enumerate(args)
    for tag, bad in _shape_variants(shape)]


@pytest.mark.parametrize("cid,fn", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_shape_refusals_as_torch(cid, fn):
    check(cid, fn)


# ---------------------------------------------------------------------------------------------------- 3. allclose

def _close_args():
    vals = {
        "f32": lambda m: m.tensor([1.0, 2.0]), "f64": lambda m: m.tensor([1.0, 2.0], dtype=m.float64),
        "f16": lambda m: m.tensor([1.0, 2.0], dtype=m.float16), "i64": lambda m: m.tensor([1, 2]),
        "i32": lambda m: m.tensor([1, 2], dtype=m.int32), "bool": lambda m: m.tensor([True, False]),
        "c64": lambda m: m.tensor([1 + 0j, 2]), "f32_0d": lambda m: m.tensor(1.0), "f32_3": lambda m: m.ones(3),
        "float": lambda m: 1.0, "int": lambda m: 1, "list": lambda m: [1.0, 2.0], "none": lambda m: None,
    }
    cases = []
    for fname in ("allclose", "isclose"):
        for a in vals:
            for b in vals:
                if a in ("f32", "i64") or b in ("f32", "i64"):
                    cases.append((f"{fname}-{a}-{b}",
                                  lambda m, f=fname, a=vals[a], b=vals[b]: getattr(m, f)(a(m), b(m))))
        for kw in ({"rtol": -1e-5}, {"atol": -1e-8}, {"rtol": -1.0, "atol": -1.0}, {"rtol": 0.0, "atol": 0.0},
                   {"rtol": "x"}, {"atol": None}, {"equal_nan": 1}, {"rtol": math.inf}, {"atol": math.nan}):
            tag = "_".join(f"{k}={v}" for k, v in kw.items())
            cases.append((f"{fname}-{tag}", lambda m, f=fname, kw=kw: getattr(m, f)(
                m.tensor([1.0, 2.0]), m.tensor([1.0, 2.5]), **kw)))
            cases.append((f"{fname}-int-{tag}", lambda m, f=fname, kw=kw: getattr(m, f)(
                m.tensor([1, 2]), m.tensor([1, 3]), **kw)))
        cases.append((f"{fname}-method", lambda m, f=fname: getattr(m.tensor([1.0]), f)(m.tensor([1.0], dtype=m.float64))))
        cases.append((f"{fname}-method_scalar", lambda m, f=fname: getattr(m.tensor([1.0]), f)(1.0)))
    return cases


CLOSE_CASES = _close_args()


@pytest.mark.parametrize("cid,fn", CLOSE_CASES, ids=[c[0] for c in CLOSE_CASES])
def test_allclose_argument_rules_as_torch(cid, fn):
    check(cid, fn, message=True)


# ---------------------------------------------------------------------------------------------------- 4. in-place

# methods whose arguments are not found by trying the candidates (or whose call has no tensor effect to compare)
SPECIAL_ARGS = {
    "apply_": lambda m, x: (lambda v: v * 2,),
    "map_": lambda m, x: (x.detach().clone(), lambda a, b: a + b),
    "map2_": lambda m, x: (x.detach().clone(), x.detach().clone(), lambda a, b, c: a + b + c),
    "as_strided_": lambda m, x: ((2, 2), (1, 1)),
    "resize_": lambda m, x: ((12,),),
    "resize_as_": lambda m, x: (m.zeros(12),),
    "index_put_": lambda m, x: ((m.tensor([0, 1]),), m.tensor(1.0)),
    "index_reduce_": lambda m, x: (0, m.tensor([0, 1]), m.ones(2, 4), "prod"),
    "scatter_reduce_": lambda m, x: (0, m.zeros(3, 4, dtype=m.int64), m.ones(3, 4), "sum"),
    "put_": lambda m, x: (m.tensor([0, 1]), m.tensor([1.0, 2.0])),
    "masked_scatter_": lambda m, x: (m.ones(3, 4, dtype=m.bool), m.ones(3, 4)),
    "polygamma_": lambda m, x: (1,),
    "mvlgamma_": lambda m, x: (1,),
    "renorm_": lambda m, x: (2, 0, 1.0),
    "fill_diagonal_": lambda m, x: (1.0,),
    "random_": lambda m, x: (0, 5),
    "addbmm_": lambda m, x: (m.ones(2, 3, 5), m.ones(2, 5, 4)),
    "baddbmm_": lambda m, x: (m.ones(3, 3, 3), m.ones(3, 3, 4)),
    "addmm_": lambda m, x: (m.ones(3, 5), m.ones(5, 4)),
    "addr_": lambda m, x: (m.ones(3), m.ones(4)),
    # no float arguments make these succeed (a leaf requiring grad is floating): torch's refusal is compared
    "addmv_": lambda m, x: (m.ones(3, 4), m.ones(4)),
    **{n: (lambda m, x: (x.detach().clone(),)) for n in (
        "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_", "bitwise_right_shift_", "gcd_",
        "lcm_")},
    "bitwise_not_": lambda m, x: (),
}


def _candidates(m, x):
    o = mk(m, x.shape, "float32", seed=5, positive=True)
    i = m.zeros(2, dtype=m.int64)
    return [(), (o,), (0.5,), (0,), (0, 1), (o, o), (o, 0.5), (0, i, o[:2]), (0, i, 1.0),
            (x.detach() > 0.5, 1.0), (m.ones(4),), (m.ones(4, 4),), (0, m.zeros(3, 4, dtype=m.int64), o)]


def _find_args(name):
    """Arguments that make ``torch.Tensor.<name>`` succeed on a plain (3, 4) float tensor, as a function of the
    library: tried in order on torch."""
    if name in SPECIAL_ARGS:
        return SPECIAL_ARGS[name]
    for k in range(len(_candidates(torch, torch.ones(3, 4)))):
        def args(m, x, k=k):
            return _candidates(m, x)[k]
        x = mk(torch, (3, 4), "float32", positive=True)
        ok, _ = _run(lambda m: getattr(x, name)(*args(torch, x)), torch)
        if ok:
            return args
    return None


INPLACE = sorted(n for n in dir(tt.Tensor) if n.endswith("_") and not n.startswith("_") and hasattr(torch.Tensor, n))


def _state(x):
    return x._version, np.asarray(x.detach().float().numpy() if str(x.dtype).endswith("bfloat16")
                                  else x.detach().numpy()).copy()


def _inplace_case(name, xd, argfn, leaf_grad, message):
    """The call's outcome compared with torch; where both raise, the tensor is unchanged (values and version)."""
    def run(m):
        x = mk(m, (3, 4), xd, positive=True, requires_grad=leaf_grad)
        args = argfn(m, x)
        before = _state(x)
        try:
            r = getattr(x, name)(*args)
        except Exception:
            after = _state(x)
            assert after[0] == before[0], f"{name}: version {before[0]} -> {after[0]} after the raise"
            assert np.array_equal(after[1], before[1], equal_nan=True), f"{name}: values changed by a failing call"
            raise
        if name in RANDOM:  # another generator: only the shape and dtype are comparable
            return tuple(x.shape), str(x.dtype)
        return r if isinstance(r, (m.Tensor, tuple)) else x
    return run


RANDOM = {"bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_", "normal_", "random_", "uniform_"}


LEAF_CASES = [(f"{n}-leaf", n) for n in INPLACE]


@pytest.mark.parametrize("cid,name", LEAF_CASES, ids=[c[0] for c in LEAF_CASES])
def test_inplace_on_leaf_requiring_grad_as_torch(cid, name):
    argfn = _find_args(name)
    assert argfn is not None, f"no candidate arguments make torch.Tensor.{name} succeed: add it to SPECIAL_ARGS"
    check(cid, _inplace_case(name, "float32", argfn, True, True), message=True)


# in-place methods that combine the tensor with one other operand (tensor or number)
BINARY_INPLACE = [n for n in INPLACE if n[:-1] in (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "pow", "remainder",
    "fmod", "atan2", "arctan2", "hypot", "copysign", "xlogy", "nextafter", "ldexp", "lerp", "clamp_min",
    "clamp_max", "logical_and", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "lt", "gt", "ne", "ge", "le",
    "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "igamma", "igammac", "masked_fill", "fill", "copy")]
OTHERS = {"float_scalar": lambda m: 1.5, "int_scalar": lambda m: 2, "bool_scalar": lambda m: True,
          "float_tensor": lambda m: mk(m, (3, 4), "float32", seed=3, positive=True),
          "double_0d": lambda m: m.tensor(1.5, dtype=m.float64),
          "int_tensor": lambda m: mk(m, (3, 4), "int64", seed=3, positive=True),
          "bool_tensor": lambda m: mk(m, (3, 4), "bool", seed=3),
          "complex_scalar": lambda m: 1 + 1j}
UNARY_INPLACE = [n for n in INPLACE if n not in BINARY_INPLACE and _find_args(n) is not None
                 and _find_args(n)(torch, torch.ones(3, 4)) == ()]


def _binary_args(name, other):
    def args(m, x):
        o = OTHERS[other](m)
        if name == "lerp_":
            return (o, 0.5)
        if name == "masked_fill_":
            return (m.ones(3, 4, dtype=m.bool), o)
        return (o,)
    return args


CAST_CASES = (
    [(f"{n}-{xd}-{o}", n, xd, _binary_args(n, o)) for n in BINARY_INPLACE
     for xd in ("int64", "int32", "uint8", "bool", "float16") for o in OTHERS]
    + [(f"{n}-{xd}", n, xd, None) for n in UNARY_INPLACE for xd in ("int64", "int16", "uint8", "bool", "float16")])


@pytest.mark.parametrize("cid,name,xd,argfn", CAST_CASES, ids=[c[0] for c in CAST_CASES])
def test_inplace_result_dtype_refusals_as_torch(cid, name, xd, argfn):
    # the cast refusal's message is compared in full: it names both dtypes
    check(cid, _inplace_case(name, xd, argfn or _find_args(name), False, False),
          message=lambda e: "can't be cast to the desired output type" in str(e))


# thousands of cheap cases: CI runs a sample (TINYTORCH_SAMPLE, tests/conftest.py), a local run all of them
pytestmark = pytest.mark.sweep
