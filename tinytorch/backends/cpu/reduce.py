"""Reductions, scans and sorts of the ``cpu`` backend."""
import functools
import math

import numpy as np

from .registry import KERNELS, _quiet


def _ax(dims):
    return None if dims is None else tuple(dims)


@functools.lru_cache(maxsize=256)
def _ones(n, dtype):
    v = np.ones(n, dtype)
    v.flags.writeable = False
    return v


def _fsum(a, axes, keepdims=False):
    """Sum of a float array over ``axes`` (a tuple of non-negative dims, or None for all).

    When ``a`` is a C-contiguous float32/float64 array and ``axes`` is a leading or trailing block of dims, the
    sum is one GEMV with a ones vector: BLAS runs it 2.5-6x faster than ``np.add.reduce`` (whose per-row loop
    costs ~200 ns a row on short rows: a (8192, 64) row sum takes 575 us, the GEMV 92 us) with the same
    float32 accuracy (blocked partial sums, like NumPy's pairwise sum)."""
    if a.size < 64:
        # np.add.reduce is np.sum without its Python wrapper (1.3 us of a 2.4 us small sum); a 0-d array's dim
        # 0 or -1 names no real dim
        return np.add.reduce(a, axis=axes if a.ndim or axes is None else (), keepdims=keepdims)
    nd = a.ndim
    axes = tuple(range(nd)) if axes is None else tuple(d % nd for d in axes) if nd else ()
    if a.dtype.type in (np.float32, np.float64) and a.flags.c_contiguous and a.size >= 64 and axes:
        k = len(axes)
        srt = sorted(axes)
        if all(a.shape[d] == 1 for d in axes):  # nothing to add (a GEMV with K = 1 is slow in OpenBLAS)
            return a.copy() if keepdims else a.reshape(tuple(n for d, n in enumerate(a.shape) if d not in axes)).copy()
        if srt == list(range(nd - k, nd)):
            lead = a.shape[:nd - k]
            out = a.reshape(math.prod(lead), -1) @ _ones(math.prod(a.shape[nd - k:]), a.dtype)
            return out.reshape(lead + (1,) * k if keepdims else lead)
        if srt == list(range(k)):
            trail = a.shape[k:]
            out = _ones(math.prod(a.shape[:k]), a.dtype) @ a.reshape(-1, math.prod(trail))
            return out.reshape((1,) * k + trail if keepdims else trail)
        i = next(d for d in range(nd) if d not in axes)  # leading block [0, i), trailing block [j, nd)
        j = max(d for d in range(nd) if d not in axes) + 1
        if srt == list(range(i)) + list(range(j, nd)):
            # a leading and a trailing block (NCHW -> C, a convolution bias's gradient): two GEMVs
            lead, mid, trail = math.prod(a.shape[:i]), a.shape[i:j], math.prod(a.shape[j:])
            out = _ones(lead, a.dtype) @ (a.reshape(lead, -1, trail) @ _ones(trail, a.dtype))
            return out.reshape((1,) * i + mid + (1,) * (nd - j) if keepdims else mid)
    elif a.dtype.type in (np.float32, np.float64) and a.size >= 64 and axes and nd > 1:
        order = sorted(range(nd), key=lambda d: -a.strides[d])
        am = a.transpose(order)
        if am.flags.c_contiguous:
            # a dense permuted layout (a transposed or channels-last result): sum it in memory order
            pos = {d: q for q, d in enumerate(order)}
            out = _fsum(am, tuple(pos[d] for d in axes), True).transpose(np.argsort(order))
            return out if keepdims else out.reshape(tuple(n for d, n in enumerate(a.shape) if d not in axes))
    return np.sum(a, axis=axes, keepdims=keepdims)


def sort_keys(a):
    """An array that sorts as ``a`` in PyTorch's order, NaN the largest value: NumPy's own float sorts put NaNs
    last already, but ml_dtypes' bfloat16 compares NaN as unordered and leaves it (and what follows) in place, so
    bfloat16 sorts as float32 (exact, and the same order). The one comparator of sort, argsort, msort, topk,
    kthvalue, median, mode and quantile."""
    return a.astype(np.float32) if a.dtype.kind == "V" or a.dtype.name == "bfloat16" else a


def sort_indices(a, dim, descending):
    """Stable argsort of ``a`` along ``dim`` in PyTorch's order (NaN largest; equal values and NaNs keep their
    order in both directions), as int64."""
    k = sort_keys(a)
    if descending:
        # a stable ascending sort of the reversed axis, read backwards: ties keep their order, NaN comes first
        # (PyTorch's NaN is the largest value), and no negation that wraps unsigned or minimum integers
        n = a.shape[dim]
        idx = (n - 1) - np.flip(np.argsort(np.flip(k, axis=dim), axis=dim, kind="stable"), axis=dim)
    else:
        idx = np.argsort(k, axis=dim, kind="stable")
    return idx.astype(np.int64, copy=False)


@KERNELS.register("sort")
def _sort(a, dim, descending, stable=False):
    idx = sort_indices(a, dim, descending)
    return np.take_along_axis(a, idx, dim), idx


@KERNELS.register("topk")
def _topk(a, k, dim, largest, sorted):
    v, i = _sort(a, dim, largest)
    sl = [slice(None)] * a.ndim
    sl[dim] = slice(0, k)
    sl = tuple(sl)
    return np.ascontiguousarray(v[sl]), np.ascontiguousarray(i[sl])


def _max_dim(a, dim, keepdim, fn):
    n = a.shape[dim]
    if 1 < n <= 16 and a.size >= 64 * n:
        # short reduced axis (pooling windows): n elementwise passes beat argmax's per-row overhead.
        # Indices only grow, so max(idx, i * replaced) tracks the first extreme without np.where.
        cmp, ext = (np.greater, np.maximum) if fn == "max" else (np.less, np.minimum)
        sl = np.ascontiguousarray(np.moveaxis(a, dim, 0))
        val = sl[0]
        idx = np.zeros(val.shape, np.uint8)
        isf = a.dtype.kind == "f"
        for i in range(1, n):
            v = sl[i]
            upd = cmp(v, val)
            if isf:
                upd |= np.isnan(v) & ~np.isnan(val)  # the first NaN wins and stays, as in PyTorch
            val = ext(val, v) if not a.dtype == np.bool_ else (val | v if fn == "max" else val & v)
            idx = np.maximum(idx, upd.view(np.uint8) * np.uint8(i))
        val = np.array(val, copy=True) if val is sl[0] else val
        idx = idx.astype(np.int64)
        if keepdim:
            val, idx = np.expand_dims(val, dim), np.expand_dims(idx, dim)
        return val, idx
    if a.dtype.kind == "f":
        nanmask = np.isnan(a).any(axis=dim, keepdims=True)
    idx = (np.argmax if fn == "max" else np.argmin)(a, axis=dim, keepdims=True)
    if a.dtype.kind == "f" and nanmask.any():
        idx = np.where(nanmask, np.argmax(np.isnan(a), axis=dim, keepdims=True), idx)
    val = np.take_along_axis(a, idx, dim)
    if not keepdim:
        val, idx = val.squeeze(dim), idx.squeeze(dim)
    return val, idx.astype(np.int64)


def _quiet_bfloat16(kernel):
    """``kernel`` without the "invalid value" warning ml_dtypes' bfloat16 comparisons give at NaN (NumPy's own
    floats compare NaN silently; the results are right either way)."""
    def k(a, *args, **kw):
        if a.dtype.kind == "V":
            with _quiet():
                return kernel(a, *args, **kw)
        return kernel(a, *args, **kw)
    return k


def _np_dt(dtype, a):
    if dtype is not None:
        return dtype.np
    return np.int64 if a.dtype.kind in "biu" else None


@KERNELS.register("sum")
def _sum(a, dims, keepdim, dtype):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV" and (dtype is None or dtype.np == a.dtype):
        # float16 / bfloat16: accumulate in float32 and round once, as PyTorch's CPU reduction
        return _fsum(a.astype(np.float32), _ax(dims), keepdim).astype(a.dtype)
    if dtype is None or dtype.np == a.dtype:
        return _fsum(a, _ax(dims), keepdim) if a.dtype.kind == "f" else \
            np.sum(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a))
    return np.sum(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a))


def _cumop(fn):
    def k(a, dim, dtype):
        out = np.dtype(_np_dt(dtype, a) or a.dtype)
        if out.kind in "fcV":
            if a.dtype != out:
                a = a.astype(out)  # ``dtype``: the input is cast first, as PyTorch's scan of ``self.to(dtype)``
            # PyTorch's CPU scans accumulate in the accumulation type (double for float32, float for the half
            # types) and round each output: 1e38 + 3e38 + -inf is -inf there, not float32's inf + -inf = NaN
            acc = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}.get(
                out, np.float32 if out.itemsize == 2 else out)
            with _quiet():  # inf - inf and overflow are results (NaN, inf), not warnings, as in PyTorch
                return fn(a, axis=dim, dtype=acc).astype(out, copy=False)
        return fn(a, axis=dim, dtype=_np_dt(dtype, a))
    return k


@KERNELS.register("logcumsumexp")
def _logcumsumexp(a, dim):
    # NumPy's logaddexp has PyTorch's rules at +-inf and NaN; half-precision inputs accumulate in float32
    work = a.astype(np.float32) if a.dtype.itemsize < 4 else a
    with np.errstate(all="ignore"):
        return np.logaddexp.accumulate(work, axis=dim).astype(a.dtype, copy=False)


for _name, _kernel in {
    "prod": lambda a, dims, keepdim, dtype: np.prod(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a)),
    "amax": lambda a, dims, keepdim: np.amax(a, axis=_ax(dims), keepdims=keepdim),
    "amin": lambda a, dims, keepdim: np.amin(a, axis=_ax(dims), keepdims=keepdim),
    "max_dim": lambda a, dim, keepdim: _max_dim(a, dim, keepdim, "max"),
    "min_dim": lambda a, dim, keepdim: _max_dim(a, dim, keepdim, "min"),
    "argmax": lambda a, dim, keepdim: np.asarray(np.argmax(a, axis=dim, keepdims=keepdim), dtype=np.int64),
    "argmin": lambda a, dim, keepdim: np.asarray(np.argmin(a, axis=dim, keepdims=keepdim), dtype=np.int64),
    "all": lambda a, dims, keepdim: np.all(a, axis=_ax(dims), keepdims=keepdim),
    "any": lambda a, dims, keepdim: np.any(a, axis=_ax(dims), keepdims=keepdim),
    "cumsum": _cumop(np.cumsum), "cumprod": _cumop(np.cumprod),
}.items():
    if _name in ("amax", "amin", "max_dim", "min_dim", "argmax", "argmin"):
        _kernel = _quiet_bfloat16(_kernel)
    KERNELS.add(_name, _kernel)
