"""NaN, +-inf and huge finite values through sorting, selection, scans, bucketing and normalization: differential
tests against PyTorch (the spec). PyTorch orders NaN as the largest value (an ascending sort puts NaNs last, a
descending one first, stably), reductions propagate NaN (argmax/argmin point at the first NaN), cummax/cummin keep
the index of the latest NaN, median returns the first NaN and its index, nanmedian/nanquantile skip NaNs, and
searchsorted runs a binary search whose comparisons treat NaN as the largest value.

The module runs on the kernels the process loaded (native unless ``TINYTORCH_NATIVE=0``); when those are the
native ones, ``test_numpy_fallback_path`` reruns the whole module in a subprocess with ``TINYTORCH_NATIVE=0``, so
both kernel paths are checked by one ``pytest tests/test_nan_ordering.py``.

Where PyTorch's own choice is unspecified (the order of equal elements in an unsorted topk, or which of several
equal elements kthvalue/median/topk report, which depends on std::nth_element) the tests check the returned index
against the returned value instead of against PyTorch's index."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

NAN, INF = float("nan"), float("inf")
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]

# rows with NaNs among ties, an all-NaN row, infinities with signed zeros, huge finite values (inf in float16)
ROWS = np.array([
    [1.0, NAN, 3.0, NAN, -INF, 1.0, INF, 0.0, -0.0, NAN, 3.0],
    [NAN] * 11,
    [INF, -INF, 0.0, -0.0, INF, -INF, 2.5, -2.5, 1.0, -1.0, 0.0],
    [1e38, -1e38, 3e38, -3e38, 1e38, 0.5, -0.5, 2.0, 3e38, NAN, -1e38],
    [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0],
])
# distinct values apart from NaN: the index of any selected non-NaN element is unique
DISTINCT = np.array([
    [0.5, NAN, -2.0, INF, 7.0, NAN, -INF, 3.0, 1.25],
    [NAN, 4.0, 2.0, -1.0, -3.0, 6.0, 8.0, 0.25, NAN],
    [9.0, -9.0, 1e38, -1e38, 5.0, -5.0, 0.0, NAN, 2.0],
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
])
INT_ROWS = np.array([[3, 1, 2, 3, 0, 1, 5, 2, 0], [7, 7, 7, 1, 1, 4, 4, 9, 0], [0, 1, 2, 3, 4, 5, 6, 7, 8]])


def pair(values, dtype):
    """The same values as a tinytorch and a torch tensor of ``dtype`` (built from float64, so both round alike)."""
    a = np.asarray(values, dtype=np.float64 if dtype in FLOATS else np.int64)
    return tt.tensor(a).to(getattr(tt, dtype)), torch.tensor(a).to(getattr(torch, dtype))


def as_np(t):
    if isinstance(t, tt.Tensor):
        t = t.detach()
        return t.float().numpy().astype(np.float64) if t.dtype is tt.bfloat16 else t.numpy()
    t = t.detach()
    return t.float().numpy().astype(np.float64) if t.dtype == torch.bfloat16 else t.numpy()


def same(x, y, msg="", rtol=0.0, atol=0.0, signed_zero=True):
    """Shape, dtype and values (NaN equal to NaN; exact unless a tolerance is given; zeros' signs compared)."""
    assert isinstance(x, tt.Tensor), f"{msg}: not a tensor: {type(x)}"
    assert tuple(x.shape) == tuple(y.shape), f"{msg}: shape {tuple(x.shape)} != torch {tuple(y.shape)}"
    assert str(x.dtype) == str(y.dtype), f"{msg}: dtype {x.dtype} != torch {y.dtype}"
    a, b = as_np(x), as_np(y)
    if rtol or atol:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=msg)
    else:
        np.testing.assert_array_equal(a, b, err_msg=msg)
    if signed_zero and a.dtype.kind == "f":
        z = (b == 0)
        np.testing.assert_array_equal(np.signbit(a[z]), np.signbit(b[z]), err_msg=f"{msg}: signs of zeros")


def same_indexed(x, vals, idx, dim, msg):
    """``idx`` points at ``vals`` in ``x`` along ``dim`` (for results whose tie order PyTorch leaves unspecified)."""
    g = x.gather(dim, idx if idx.ndim == x.ndim else idx.unsqueeze(dim))
    g = g if idx.ndim == x.ndim else g.squeeze(dim)
    np.testing.assert_array_equal(as_np(g), as_np(vals), err_msg=f"{msg}: indices do not point at the values")


def unique_in_row(xr, vals, dim):
    """Mask of selected values that occur once in their row (not NaN): there the index is determined."""
    a, v = as_np(xr), as_np(vals)
    a = np.moveaxis(a, dim, -1)
    v = np.moveaxis(v, dim, -1) if v.ndim == a.ndim else v[..., None]
    counts = (a[..., None, :] == v[..., :, None]).sum(-1)
    m = counts == 1
    return np.moveaxis(m, -1, dim) if as_np(vals).ndim == a.ndim else m[..., 0]


# ---------------------------------------------------------------------------------------------------- sorting

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [False, True])
def test_sort_nan_largest_and_stable(dtype, dim, descending, stable):
    x, y = pair(ROWS, dtype)
    a, b = x.sort(dim=dim, descending=descending, stable=stable), y.sort(dim=dim, descending=descending,
                                                                          stable=stable)
    same(a.values, b.values, "values")
    same(a.indices, b.indices, "indices")
    same(tt.argsort(x, dim=dim, descending=descending, stable=stable),
         torch.argsort(y, dim=dim, descending=descending, stable=stable), "argsort")


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_msort_and_noncontiguous_sort(dtype):
    data = ROWS if dtype in FLOATS else INT_ROWS
    x, y = pair(data, dtype)
    same(tt.msort(x), torch.msort(y), "msort")
    same(tt.msort(x.t()), torch.msort(y.t()), "msort of a transpose")
    same(x.t().sort(0, descending=True).indices, y.t().sort(0, descending=True).indices, "sort of a transpose")


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_integers_stable(dtype, descending):
    x, y = pair(INT_ROWS, dtype)
    a, b = x.sort(dim=-1, descending=descending, stable=True), y.sort(dim=-1, descending=descending, stable=True)
    same(a.values, b.values, "values")
    same(a.indices, b.indices, "indices")


# ------------------------------------------------------------------------------------------------------ topk

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3, 6, 9])
def test_topk_sorted_nan_is_largest(dtype, largest, k):
    x, y = pair(DISTINCT, dtype)
    a, b = x.topk(k, -1, largest, True), y.topk(k, -1, largest, True)
    same(a.values, b.values, "values")
    same_indexed(x, a.values, a.indices, -1, "topk")
    # NaNs tie among themselves (their order is std::nth_element's); any other value occurs once in its row
    det = ~np.isnan(as_np(b.values))
    np.testing.assert_array_equal(as_np(a.indices)[det], as_np(b.indices)[det])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_topk_unsorted_selects_the_same_set(dtype, largest, dim):
    x, y = pair(ROWS, dtype)
    k = 3
    a, b = x.topk(k, dim, largest, False), y.topk(k, dim, largest, False)
    assert tuple(a.values.shape) == tuple(b.values.shape) and a.indices.dtype is tt.int64
    # the order of an unsorted topk is unspecified: compare the selected multisets, NaNs included
    same(a.values.sort(dim).values, b.values.sort(dim).values, "selected values", signed_zero=False)
    same_indexed(x, a.values, a.indices, dim, "unsorted topk")


@pytest.mark.parametrize("dtype", INTS)
def test_topk_integers(dtype):
    x, y = pair(INT_ROWS, dtype)
    for largest in (True, False):
        a, b = x.topk(4, -1, largest), y.topk(4, -1, largest)
        same(a.values, b.values, "values")
        same_indexed(x, a.values, a.indices, -1, "topk")


# --------------------------------------------------------------------------------- max / min / arg / amax

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1])
def test_max_min_propagate_nan_with_first_nan_index(dtype, dim):
    x, y = pair(ROWS, dtype)
    for name in ("max", "min"):
        a, b = getattr(x, name)(dim), getattr(y, name)(dim)
        same(a.values, b.values, f"{name} values", signed_zero=False)
        det = unique_in_row(y, b.values, dim) | np.isnan(as_np(b.values))
        np.testing.assert_array_equal(as_np(a.indices)[det], as_np(b.indices)[det], err_msg=f"{name} indices")
        same_indexed(x, a.values, a.indices, dim, name)
        same(getattr(x, name)(), getattr(y, name)(), f"{name}()", signed_zero=False)
    for name in ("argmax", "argmin"):
        det = np.isnan(as_np(y)).any(dim)  # NaN rows: the first NaN, a determined index
        a, b = as_np(getattr(x, name)(dim)), as_np(getattr(y, name)(dim))
        np.testing.assert_array_equal(a[det], b[det], err_msg=name)
        same(getattr(x, name)(), getattr(y, name)(), f"{name}()")
    for name in ("amax", "amin"):
        same(getattr(tt, name)(x, dim), getattr(torch, name)(y, dim), name, signed_zero=False)
    a, b = tt.aminmax(x, dim=dim), torch.aminmax(y, dim=dim)
    same(a.min, b.min, "aminmax min", signed_zero=False)
    same(a.max, b.max, "aminmax max", signed_zero=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [3, 64, 1000])
def test_argmax_first_nan_on_long_rows(dtype, n):
    # long rows take the native loops' vector paths; NaNs at several positions, the first decides
    a = np.linspace(-1, 1, 4 * n).reshape(4, n)
    a[0, n // 2] = a[0, n - 1] = NAN
    a[1, n - 1] = NAN
    a[2, 0] = NAN
    a[3, 1] = INF
    x, y = pair(a, dtype)
    for name in ("argmax", "argmin"):
        same(getattr(x, name)(1), getattr(y, name)(1), name)
        same(getattr(x, name)(), getattr(y, name)(), name)
    for name in ("max", "min"):
        same(getattr(x, name)(1).indices, getattr(y, name)(1).indices, name)
        same(getattr(x, name)(1).values, getattr(y, name)(1).values, name)
        same(getattr(x.t(), name)(0).indices, getattr(y.t(), name)(0).indices, f"{name} over dim 0")
    same(x.amax(1), y.amax(1), "amax")
    same(x.t().amin(0), y.t().amin(0), "amin over dim 0")
    same(x.sum(1), y.sum(1), "sum", rtol=2e-2 if dtype in ("float16", "bfloat16") else 1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_maximum_minimum_propagate_and_fmax_fmin_ignore_nan(dtype):
    x, y = pair([NAN, 1.0, -2.0, 3.0, NAN, -INF, 0.0], dtype)
    u, v = pair([0.0, NAN, NAN, 1.0, NAN, INF, -0.0], dtype)
    for name in ("maximum", "minimum", "fmax", "fmin"):
        same(getattr(tt, name)(x, u), getattr(torch, name)(y, v), name, signed_zero=False)


# ------------------------------------------------------------------------------ median, kthvalue, mode

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, None])
def test_median_returns_first_nan_and_nanmedian_skips_it(dtype, dim):
    for data in (DISTINCT, ROWS):
        x, y = pair(data, dtype)
        if dim is None:
            same(x.median(), y.median(), "median()", signed_zero=False)
            same(x.nanmedian(), y.nanmedian(), "nanmedian()", signed_zero=False)
            continue
        for name in ("median", "nanmedian"):
            a, b = getattr(x, name)(dim), getattr(y, name)(dim)
            same(a.values, b.values, f"{name} values", signed_zero=False)
            same_indexed(x, a.values, a.indices, dim, name)
            # PyTorch's median breaks ties by index (the stable order), and a NaN median is the first NaN: every
            # index is determined; nanmedian of an all-NaN row partitions NaNs with an inconsistent comparator
            det = np.ones(b.values.shape, bool) if name == "median" else ~np.isnan(as_np(b.values))
            np.testing.assert_array_equal(as_np(a.indices)[det], as_np(b.indices)[det], err_msg=f"{name} indices")
            k = getattr(x, name)(dim, keepdim=True)
            same(k.values, getattr(y, name)(dim, keepdim=True).values, f"{name} keepdim", signed_zero=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", [1, 2, 5, 8, 9])
def test_kthvalue_counts_nan_as_largest(dtype, k):
    x, y = pair(DISTINCT, dtype)
    a, b = x.kthvalue(k, 1), y.kthvalue(k, 1)
    same(a.values, b.values, "values")
    same_indexed(x, a.values, a.indices, 1, "kthvalue")
    det = ~np.isnan(as_np(b.values))
    np.testing.assert_array_equal(as_np(a.indices)[det], as_np(b.indices)[det])
    same(x.t().kthvalue(k, 0).values, y.t().kthvalue(k, 0).values, "kthvalue over dim 0")


@pytest.mark.parametrize("dtype", INTS)
def test_median_kthvalue_mode_integers(dtype):
    x, y = pair(INT_ROWS, dtype)
    same(x.median(), y.median(), "median()")
    same(x.median(1).values, y.median(1).values, "median values")
    same(x.median(1).indices, y.median(1).indices, "median indices (ties broken by index)")
    same(x.nanmedian(1).values, y.nanmedian(1).values, "nanmedian values")
    same(x.kthvalue(3, 1).values, y.kthvalue(3, 1).values, "kthvalue values")
    a, b = x.mode(1), y.mode(1)
    same(a.values, b.values, "mode values")
    same(a.indices, b.indices, "mode indices")


@pytest.mark.parametrize("dtype", FLOATS)
def test_mode_counts_each_nan_apart(dtype):
    # NaN != NaN: every NaN is its own value of count 1. (PyTorch's mode std::sorts with `<`, for which NaN is
    # equivalent to everything, so where NaNs and values of count 1 tie for the mode its answer is an artifact of
    # libstdc++'s sort order, e.g. NaN for [nan, 2, nan, 2, 3]; such rows are not compared.)
    data = [[NAN, NAN, 1.0, 1.0, NAN], [2.0, 2.0, NAN, 3.0, NAN], [0.0, -0.0, INF, INF, 0.0], [NAN] * 5]
    x, y = pair(data, dtype)
    a, b = x.mode(1), y.mode(1)
    same(a.values, b.values, "mode values", signed_zero=False)
    rows = ~np.isnan(as_np(b.values))  # a NaN mode (all counts 1): which NaN is the sort's business
    np.testing.assert_array_equal(as_np(a.indices)[rows], as_np(b.indices)[rows], err_msg="mode indices")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_nan_and_inf(dtype, interpolation):
    data = [[1.0, NAN, 3.0, 2.0], [NAN] * 4, [-INF, 1.0, INF, 2.0], [1e38, 3e38, -1e38, 0.0]]
    x, y = pair(data, dtype)
    q = [0.0, 0.3, 0.5, 1.0]
    for name in ("quantile", "nanquantile"):
        for dim in (None, 0, 1):
            same(getattr(x, name)(tt.tensor(q, dtype=x.dtype), dim=dim, interpolation=interpolation),
                 getattr(y, name)(torch.tensor(q, dtype=y.dtype), dim=dim, interpolation=interpolation),
                 f"{name} dim={dim}", rtol=1e-6, signed_zero=False)


@pytest.mark.parametrize("case", ["float16", "bfloat16", "int64", "nan_q", "nan_q_tensor", "q_dtype", "q_2d",
                                  "interpolation", "scalar_q_first", "empty"])
def test_quantile_errors_nan_q_and_dtypes(case):
    dtype = case if case in ("float16", "bfloat16", "int64") else "float32"
    x, y = pair([1.0, 3.0, 2.0], dtype)
    q, kw = 0.5, {}
    if case == "nan_q":
        q = NAN
    elif case in ("nan_q_tensor", "q_dtype", "q_2d"):
        vals = [[0.5]] if case == "q_2d" else [0.5, NAN]
        q = (np.array(vals), "float64" if case == "q_dtype" else dtype)
    elif case == "interpolation":
        x, y = pair([1, 3, 2], "int64")
        kw = {"interpolation": "q"}
    elif case == "scalar_q_first":
        q, kw = 1.5, {"interpolation": "q"}
    elif case == "empty":
        x, y = tt.zeros(0, dtype=tt.int64), torch.zeros(0, dtype=torch.int64)
    for name in ("quantile", "nanquantile"):
        qs = (tt.tensor(q[0]).to(getattr(tt, q[1])), torch.tensor(q[0]).to(getattr(torch, q[1]))) \
            if isinstance(q, tuple) else (q, q)
        with pytest.raises(RuntimeError) as ours:
            getattr(tt, name)(x, qs[0], **kw)
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch, name)(y, qs[1], **kw)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sort_topk_inner_dim_of_3d(dtype):
    a = np.stack([ROWS[:, :6], ROWS[:, 5:]])  # (2, 5, 6): NaNs, ties and infinities down dim 1
    x, y = pair(a, dtype)
    for descending in (False, True):
        p, q = x.sort(1, descending), y.sort(1, descending)
        same(p.values, q.values, "values")
        same(p.indices, q.indices, "indices")
    p, q = x.topk(2, 1), y.topk(2, 1)
    same(p.values, q.values, "topk values", signed_zero=False)
    same_indexed(x, p.values, p.indices, 1, "topk")
    same(x.median(1).values, y.median(1).values, "median", signed_zero=False)
    same(x.median(1).indices, y.median(1).indices, "median indices")


def test_isin_never_matches_nan():
    for dtype in ("float32", "float64", "bfloat16"):
        x, y = pair([NAN, 1.0, INF, -INF, 2.0], dtype)
        u, v = pair([NAN, INF, 2.0], dtype)
        same(tt.isin(x, u), torch.isin(y, v), "isin")
        same(tt.isin(x, u, invert=True), torch.isin(y, v, invert=True), "isin invert")


# -------------------------------------------------------------------------------------------------- scans

@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
@pytest.mark.parametrize("dim", [0, 1])
def test_cummax_cummin_nan_sticks_with_latest_index(dtype, dim):
    if dtype == "bool":
        x, y = tt.tensor(INT_ROWS % 2 == 0), torch.tensor(INT_ROWS % 2 == 0)
    else:
        x, y = pair(ROWS if dtype in FLOATS else INT_ROWS, dtype)
    for name in ("cummax", "cummin"):
        a, b = getattr(x, name)(dim), getattr(y, name)(dim)
        same(a.values, b.values, f"{name} values", signed_zero=False)
        same(a.indices, b.indices, f"{name} indices")


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp_cumsum_cumprod_with_nan_and_inf(dtype):
    data = [[-INF, -INF, 1.0, NAN, 2.0], [INF, 1.0, -INF, 0.0, 2.0], [-INF, INF, INF, 1.0, NAN],
            [1e38, 3e38, -INF, 0.0, 3e38], [1e30, -1e30, 2.0, 1e30, 5.0], [0.5, -1.0, 2.0, 3.0, -2.0]]
    x, y = pair(data, dtype)
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-6
    for dim in (0, 1):
        same(x.logcumsumexp(dim), y.logcumsumexp(dim), f"logcumsumexp dim={dim}", rtol=tol, signed_zero=False)
    for name in ("cumsum", "cumprod"):
        same(getattr(x, name)(1), getattr(y, name)(1), name, rtol=tol, signed_zero=False)


def test_logcumsumexp_gradient_stays_finite_over_huge_ranges():
    a = np.array([[-800.0, 800.0, 0.0, 1.0], [0.5, 1.5, -INF, 2.0]])  # exp(-1600) underflows double
    grads = []
    for mod in (tt, torch):
        x = mod.tensor(a, requires_grad=True)
        x.logcumsumexp(1).sum().backward()
        grads.append(x.grad)
    same(grads[0], grads[1], "gradient", rtol=1e-12, signed_zero=False)


# ------------------------------------------------------------------------------------ searchsorted, bucketize

SEQS = [
    [-INF, 1.0, 2.0, INF, NAN, NAN],
    [-INF, -INF, 0.0, 0.0, 3.0, INF, INF],
    [1.0, 2.0, 3.0, NAN],
    [NAN, NAN, NAN],
    [0.5],
]
VALUES = [NAN, INF, -INF, 1.0, 5.0, 0.0, -0.0, 2.0, 1e38, -1e38]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("seq", range(len(SEQS)))
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_with_nan_and_inf(dtype, seq, right):
    s, t = pair(SEQS[seq], dtype)
    v, w = pair(VALUES, dtype)
    same(tt.searchsorted(s, v, right=right), torch.searchsorted(t, w, right=right), "searchsorted")
    side = "right" if right else "left"
    same(tt.searchsorted(s, v, side=side, out_int32=True), torch.searchsorted(t, w, side=side, out_int32=True),
         "side=, out_int32")
    same(tt.bucketize(v, s, right=right), torch.bucketize(w, t, right=right), "bucketize")
    for val in (NAN, INF, 2.0):
        same(tt.searchsorted(s, val, right=right), torch.searchsorted(t, val, right=right), f"scalar {val}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_searchsorted_batched_and_sorter(dtype):
    rows = [[3.0, NAN, -INF, 1.0, INF], [NAN, 2.0, NAN, 0.0, -1.0]]
    s, t = pair(rows, dtype)
    order = torch.argsort(t, dim=-1, stable=True)  # NaNs last: a sorter that sorts
    v, w = pair([[NAN, 1.0, 5.0], [INF, NAN, -0.0]], dtype)
    for right in (False, True):
        same(tt.searchsorted(s, v, right=right, sorter=tt.tensor(order.numpy())),
             torch.searchsorted(t, w, right=right, sorter=order), f"sorter right={right}")
        ss, ts = s.sort(-1).values, t.sort(-1).values
        same(tt.searchsorted(ss, v, right=right), torch.searchsorted(ts, w, right=right), "batched")


SEARCH_ERRORS = {
    "leading_dims": lambda m, s: m.searchsorted(s, m.tensor([[1.0], [2.0], [3.0]])),
    "rank": lambda m, s: m.searchsorted(s, m.tensor([1.0, 2.0])),
    "side": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), side="middle"),
    "side_right": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), side="left", right=True),
    "sorter_size": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), sorter=m.tensor([0, 1])),
    "sorter_dtype": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), sorter=m.tensor([0.0, 1.0, 2.0])),
    "sorter_range": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), sorter=m.tensor([0, 1, 5])),
    "sorter_negative": lambda m, s: m.searchsorted(s[0], m.tensor([1.0]), sorter=m.tensor([0, -1, 2])),
    "scalar_value": lambda m, s: m.searchsorted(s, m.tensor(1.0)),
    "scalar_boundaries": lambda m, s: m.searchsorted(m.tensor(1.0), m.tensor([1.0])),
    "bucketize_rank": lambda m, s: m.bucketize(m.tensor([1.0]), s),
}


@pytest.mark.parametrize("case", sorted(SEARCH_ERRORS))
def test_searchsorted_errors_match_torch(case):
    s = [[1.0, 2.0, 3.0], [1.0, NAN, NAN]]
    with pytest.raises(RuntimeError) as ours:
        SEARCH_ERRORS[case](tt, tt.tensor(s))
    with pytest.raises(RuntimeError) as theirs:
        SEARCH_ERRORS[case](torch, torch.tensor(s))
    assert str(ours.value) == str(theirs.value)


def test_searchsorted_python_numbers_and_empty_boundaries():
    for seq, vals in (([0.1, 0.2, 0.3], [0.1, 0.2, 0.3, 0.25, NAN, INF]), ([1, 2, 3], [2, 2.5, 0.5, NAN, INF])):
        for dtype in (["float64", "float32"] if isinstance(seq[0], float) else ["int64", "int32"]):
            s, t = pair(seq, dtype)
            for v in vals:
                for right in (False, True):
                    same(tt.searchsorted(s, v, right=right), torch.searchsorted(t, v, right=right), f"{dtype} {v}")
                    same(tt.bucketize(v, s, right=right), torch.bucketize(v, t, right=right), f"bucketize {v}")
    same(tt.searchsorted(tt.zeros(2, 0), tt.zeros(2, 3)), torch.searchsorted(torch.zeros(2, 0), torch.zeros(2, 3)),
         "empty boundaries")
    same(tt.searchsorted(tt.zeros(0), tt.zeros(3), out_int32=True),
         torch.searchsorted(torch.zeros(0), torch.zeros(3), out_int32=True), "empty 1-d boundaries")


@pytest.mark.parametrize("dtype", INTS)
def test_searchsorted_integers(dtype):
    s, t = pair([0, 1, 1, 3, 5, 5, 8], dtype)
    v, w = pair([0, 1, 2, 5, 9, 3], dtype)
    for right in (False, True):
        same(tt.searchsorted(s, v, right=right), torch.searchsorted(t, w, right=right), "searchsorted")
        same(tt.bucketize(v, s, right=right, out_int32=True), torch.bucketize(w, t, right=right, out_int32=True),
             "bucketize")


# ------------------------------------------------------------------------------------- pointwise: sign, clamp

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 70])
def test_sign_sgn_of_nan_and_inf(dtype, n):
    # PyTorch's CPU sign is (0 < x) - (x < 0): NaN gives 0, on every path (vector loop and tail)
    a = np.resize(np.array([NAN, -0.0, 0.0, -INF, INF, 1e38, -1e-38, 2.0]), n)
    x, y = pair(a, dtype)
    same(tt.sign(x), torch.sign(y), "sign", signed_zero=False)
    same(tt.sgn(x), torch.sgn(y), "sgn", signed_zero=False)
    same(x[::2].sign(), y[::2].sign(), "sign of a strided view", signed_zero=False)


def test_sgn_complex_nan():
    z = np.array([complex(NAN, 0), complex(3, 4), 0j, complex(INF, 0)], dtype=np.complex64)
    a, b = tt.sgn(tt.tensor(z)), torch.sgn(torch.tensor(z))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", FLOATS)
def test_clamp_with_nan_bounds_and_nan_input(dtype):
    x, y = pair([NAN, 1.0, 5.0, -INF, INF, 2.5], dtype)
    for kw in ({"min": NAN}, {"max": NAN}, {"min": 2.0, "max": 3.0}, {"min": NAN, "max": 3.0}, {"min": 3.0, "max": 2.0},
               {"min": -INF}, {"max": INF}):
        same(tt.clamp(x, **kw), torch.clamp(y, **kw), f"clamp {kw}", signed_zero=False)
    lo, tlo = pair([NAN, 0.0, 6.0, 0.0, NAN, 3.0], dtype)
    hi, thi = pair([1.0, NAN, 4.0, NAN, 1.0, NAN], dtype)
    same(tt.clamp(x, lo, hi), torch.clamp(y, tlo, thi), "tensor bounds")
    same(tt.clamp(x, min=lo), torch.clamp(y, min=tlo), "tensor min")
    same(tt.clamp(x, max=hi), torch.clamp(y, max=thi), "tensor max")


# ---------------------------------------------------------------------------------------- unique, histc

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_unique_treats_each_nan_as_distinct(dtype):
    x, y = pair([NAN, 1.0, NAN, 1.0, INF, -INF, NAN], dtype)
    a = tt.unique(x, return_inverse=True, return_counts=True)
    b = torch.unique(y, return_inverse=True, return_counts=True)
    for p, q, what in zip(a, b, ("values", "inverse", "counts")):
        same(p, q, f"unique {what}")
    c, d = pair([NAN, NAN, 1.0, 1.0, NAN, 2.0], dtype)
    a = tt.unique_consecutive(c, return_inverse=True, return_counts=True)
    b = torch.unique_consecutive(d, return_inverse=True, return_counts=True)
    for p, q, what in zip(a, b, ("values", "inverse", "counts")):
        same(p, q, f"unique_consecutive {what}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_with_inf_and_nan(dtype):
    x, y = pair([1.0, INF, -INF, 2.0, 3.0, NAN, 0.0], dtype)
    same(tt.histc(x, bins=4, min=0, max=3), torch.histc(y, bins=4, min=0, max=3), "histc in range")
    u, v = pair([1e38, -1e38, 3e37, 0.0, 1.0, 5e37], "float32")  # (x - min) * bins overflows float32
    same(tt.histc(u, bins=4), torch.histc(v, bins=4), "histc of huge values")
    u, v = pair([0.1, 0.2, 0.3, 0.7, 1.0, 0.5, 0.25, 0.75], dtype)  # bin edges: PyTorch's rounding order
    same(tt.histc(u, bins=4, min=0.1, max=1.0), torch.histc(v, bins=4, min=0.1, max=1.0), "histc edges")
    for data, kw in (([1.0, NAN, 2.0], {}), ([1.0, INF, 2.0], {}), ([1.0, 2.0], {"min": NAN, "max": 3}),
                     ([1.0, 2.0], {"min": 0, "max": INF})):
        u, v = pair(data, dtype)
        with pytest.raises(RuntimeError) as ours:
            tt.histc(u, bins=4, **kw)
        with pytest.raises(RuntimeError) as theirs:
            torch.histc(v, bins=4, **kw)
        assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------ softmax, attention, norms

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_rows_with_inf_and_nan(dtype, dim):
    data = [[-INF, -INF, -INF], [INF, 1.0, 0.0], [INF, INF, 0.0], [NAN, 1.0, 0.0], [1e38, -1e38, 0.0],
            [-INF, 0.0, 1.0]]
    x, y = pair(data, dtype)
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-6
    for name in ("softmax", "log_softmax"):
        same(getattr(tt, name)(x, dim), getattr(torch, name)(y, dim), name, rtol=tol, atol=tol, signed_zero=False)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_fully_masked_rows_and_nan(dtype):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 3, 4))
    x, y = pair(q, dtype)
    boolmask = np.array([[[True, False, True], [False, False, False], [True, True, True]]] * 2)[None]
    fmask = np.where(boolmask, 0.0, -INF)
    for m in (boolmask, fmask):
        mt = tt.tensor(m) if m.dtype == bool else tt.tensor(m).to(x.dtype)
        mo = torch.tensor(m) if m.dtype == bool else torch.tensor(m).to(y.dtype)
        same(tt.nn.functional.scaled_dot_product_attention(x, x, x, attn_mask=mt),
             torch.nn.functional.scaled_dot_product_attention(y, y, y, attn_mask=mo), "sdpa masked", rtol=1e-5,
             atol=1e-6, signed_zero=False)
    # a NaN value reaches every output row that weighs it, a fully masked row too (0 * NaN). (A NaN in a query
    # or key is left out: PyTorch's CPU flash kernel takes a row maximum with std::max on short rows, which
    # drops the NaN score and zeroes the row, but propagates it on rows of 8 keys and more.)
    vn = rng.standard_normal((1, 2, 3, 4))
    vn[0, 0, 1, 2] = NAN
    v, w = pair(vn, dtype)
    mt, mo = tt.tensor(boolmask), torch.tensor(boolmask)
    same(tt.nn.functional.scaled_dot_product_attention(x, x, v, attn_mask=mt),
         torch.nn.functional.scaled_dot_product_attention(y, y, w, attn_mask=mo), "sdpa NaN value", rtol=1e-5,
         atol=1e-6, signed_zero=False)


def test_sdpa_fully_masked_row_has_zero_gradient():
    q = np.random.default_rng(1).standard_normal((2, 3, 4))
    m = np.array([[True, True, False], [False, False, False], [True, False, False]])
    grads = []
    for mod in (tt, torch):
        x = mod.tensor(q, requires_grad=True)
        mod.nn.functional.scaled_dot_product_attention(x, x, x, attn_mask=mod.tensor(m)).sum().backward()
        grads.append(x.grad)
    same(grads[0], grads[1], "gradient", rtol=1e-6, atol=1e-9, signed_zero=False)


NORM_DATA = np.array([[1.0, NAN, 3.0, 2.0, 1.0, 0.0, 5.0, 4.0],
                      [INF, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                      [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5],
                      [1e15, -1e15, 2e15, 0.0, 1.0, 2.0, 3.0, 4.0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normalizations_with_nan_inf_and_huge_values(dtype):
    F, G = tt.nn.functional, torch.nn.functional
    x, y = pair(NORM_DATA, dtype)
    tol = dict(rtol=1e-4, atol=1e-5, signed_zero=False)
    same(F.layer_norm(x, (8,)), G.layer_norm(y, (8,)), "layer_norm", **tol)
    same(F.normalize(x, dim=1), G.normalize(y, dim=1), "normalize", **tol)
    same(F.normalize(x, dim=0), G.normalize(y, dim=0), "normalize dim 0", **tol)
    x4, y4 = x.reshape(2, 4, 4), y.reshape(2, 4, 4)
    same(F.group_norm(x4, 2), G.group_norm(y4, 2), "group_norm", **tol)
    same(F.instance_norm(x4), G.instance_norm(y4), "instance_norm", **tol)
    same(F.batch_norm(x, None, None, training=True), G.batch_norm(y, None, None, training=True), "batch_norm", **tol)
    same(x.var(1), y.var(1), "var", rtol=1e-5)
    same(x.std(0), y.std(0), "std", rtol=1e-5)


def test_variance_of_huge_float32_overflows_as_torch():
    # (The norms' own moments of such rows are left out: PyTorch's layer/group/batch norm combine Welford
    # partials per vector lane, where delta**2 * 0 makes NaN or not depending on the row length and on the
    # CPU's vector width (AVX2 or AVX-512); no rule independent of the machine to follow.)
    x, y = pair([[1e38, -1e38, 3e38, -3e38]], "float32")
    same(x.var(), y.var(), "var")
    same(x.std(1), y.std(1), "std")
    same(tt.nn.functional.normalize(x), torch.nn.functional.normalize(y), "normalize", signed_zero=False)
    same(x.norm(), y.norm(), "norm")
    same(tt.linalg.vector_norm(x, dim=1), torch.linalg.vector_norm(y, dim=1), "vector_norm")


# ------------------------------------------------------------------------------------- gradients at NaN

GRAD_A = [[1.0, NAN, 3.0, NAN], [2.0, 2.0, -INF, 1.0], [INF, 1.0, INF, 0.0]]
GRAD_B = [[NAN, 0.0, 3.0, 1.0], [2.0, 5.0, 1.0, NAN], [1.0, 1.0, INF, 0.0]]
GRAD_CASES = {
    "maximum": lambda m, a, b: m.maximum(a, b), "minimum": lambda m, a, b: m.minimum(a, b),
    "fmax": lambda m, a, b: m.fmax(a, b), "fmin": lambda m, a, b: m.fmin(a, b),
    "max_pair": lambda m, a, b: m.max(a, b),
    "max_all": lambda m, a, b: a.max(), "min_all": lambda m, a, b: a.min(), "median_all": lambda m, a, b: a.median(),
    "median_all_no_nan": lambda m, a, b: b[1:].nan_to_num(7.0).median(),
    "amax_dim": lambda m, a, b: a.amax(1), "amax_all": lambda m, a, b: a.amax(),
    "max_dim": lambda m, a, b: a.max(1).values,
    "median_dim": lambda m, a, b: a.median(1).values, "nanmedian_dim": lambda m, a, b: a.nanmedian(1).values,
    "clamp": lambda m, a, b: a.clamp(0, 2), "clamp_nan": lambda m, a, b: a.clamp(min=NAN),
    "clamp_tensor_min": lambda m, a, b: a.clamp(min=b), "clamp_tensor_max": lambda m, a, b: a.clamp(max=b),
    "clamp_tensor_both": lambda m, a, b: a.clamp(b, b.flip(1)),  # some min > max
    "clamp_tensor_row": lambda m, a, b: a.clamp(min=b[1]),  # a broadcast bound: its gradient summed
    "sort": lambda m, a, b: a.sort(1).values, "cummax": lambda m, a, b: a.cummax(1).values,
    "cummin": lambda m, a, b: a.cummin(0).values, "quantile": lambda m, a, b: a.quantile(0.5, 1),
    "nanquantile": lambda m, a, b: a.nanquantile(0.3, 1),
    "nanquantile_all_nan": lambda m, a, b: m.stack([a[0, 1:2], a[0, 3:]]).nanquantile(0.5, 1),
    "logsumexp": lambda m, a, b: a.logsumexp(1), "softmax": lambda m, a, b: a.softmax(1),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_through_nan_and_inf(case):
    grads = []
    for mod in (tt, torch):
        a = mod.tensor(GRAD_A, dtype=mod.float64, requires_grad=True)
        b = mod.tensor(GRAD_B, dtype=mod.float64, requires_grad=True)
        out = GRAD_CASES[case](mod, a, b)
        w = mod.arange(1.0, out.numel() + 1, dtype=mod.float64).reshape(out.shape)
        out.backward(w)
        grads.append([None if t.grad is None else t.grad for t in (a, b)])
    for mine, theirs, name in zip(grads[0], grads[1], "ab"):
        assert (mine is None) == (theirs is None) or (mine is not None and not as_np(mine).any()) or \
            (theirs is not None and not as_np(theirs).any()), f"{name}: gradient presence differs"
        if mine is not None and theirs is not None:
            same(mine, theirs, f"d/d{name}", rtol=1e-12, atol=1e-12, signed_zero=False)


# --------------------------------------------------------------------------------------- the other kernel path

@pytest.mark.skipif(os.environ.get("TINYTORCH_NATIVE", "1").strip() in ("0", "false", "off", "no"),
                    reason="this run is the NumPy path already")
def test_numpy_fallback_path():
    """The whole module again with the native kernels off (the NumPy kernels, the fallback and reference)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__)))  # the tinytorch under test, not another
    env = dict(os.environ, TINYTORCH_NATIVE="0",
               PYTHONPATH=os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", os.path.abspath(__file__)]
    r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


# thousands of cheap cases: CI runs a sample (TINYTORCH_SAMPLE, tests/conftest.py), a local run all of them
pytestmark = pytest.mark.sweep
