"""The ``cpu`` backend: storages are flat NumPy arrays and kernels are NumPy calls.

This is the reference backend: every primitive op has a kernel here, and a few composite ops
(softmax, log_softmax) register kernels for speed. Kernels get ``ndarray`` views and must return
arrays that do not alias their inputs.
"""
import ctypes
import functools
import math
import os
import sys

import numpy as np

from .._strides import contiguous_strides as _contig
from .base import Backend

# erf in float64: the C library's erf (what PyTorch's CPU kernel calls), element by element; float32 has a
# vectorized rational approximation below
_erf_libm = np.frompyfunc(math.erf, 1, 1)


def _erf_exact(x):
    return np.asarray(_erf_libm(x), dtype=x.dtype)


# erfinv: Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011),
# evaluated in float64 and refined by Newton steps, so float64 results are accurate to the last bits and float32
# ones round correctly (the OpenCL backend's kernel starts from the same approximation). Near +-1, erf(x) - y
# cancels to nothing, so there the steps solve log erfc(|x|) = log(1 - |y|) instead, whose derivative stays
# moderate all the way to 1 - 2^-53.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682)
_erfc_libm = np.frompyfunc(math.erfc, 1, 1)
_TWO_OVER_SQRT_PI = 1.1283791670955126


def _erfinv(a):
    y = np.asarray(a, np.float64)
    t = np.abs(y)
    inside = t < 1
    t = np.where(inside, t, 0.0)
    w = -np.log((1.0 - t) * (1.0 + t))
    wc, wt = w - 2.5, np.sqrt(w) - 3.0
    pc, pt = np.full_like(w, _ERFINV_CENTRAL[0]), np.full_like(w, _ERFINV_TAIL[0])
    for cc, ct in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        pc = cc + pc * wc
        pt = ct + pt * wt
    x = np.where(w < 5.0, pc, pt) * t
    near_one = t >= 0.5
    log_target = np.log(np.where(near_one, 1.0 - t, 1.0))
    for _ in range(4):  # the tail's start is an extrapolation past 1 - 2^-24: one more step than float32 needs
        d = _TWO_OVER_SQRT_PI * np.exp(-x * x)
        ec = np.asarray(_erfc_libm(np.where(near_one, x, 0.0)), np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            step_tail = (np.log(ec) - log_target) * ec / d
        step_central = (np.asarray(_erf_libm(x), np.float64) - t) / d
        x = x + np.where(near_one, step_tail, -step_central)
    # erfinv(+-1) = +-inf; outside [-1, 1] (and at NaN) it is NaN
    x = np.where(inside, np.copysign(x, y), np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan))
    return x.astype(a.dtype, copy=False)


def _keep_freed_host_memory():
    """Make glibc's malloc keep freed blocks of up to 32 MB for reuse instead of returning them to the OS.

    By default glibc serves blocks above 128 KB with fresh ``mmap`` pages and gives them back on ``free``, so
    each large temporary (im2col columns, activations) page-faults on first touch: on this project's VMs that
    halved the LeNet train step. Raising the mmap and trim thresholds gives NumPy's allocations the reuse a
    caching allocator gives PyTorch's GPU tensors. Returns True when applied; ``TINYTORCH_MALLOC_TUNING=0`` opts
    out, and other C libraries are left alone.
    """
    if not sys.platform.startswith("linux") or os.environ.get("TINYTORCH_MALLOC_TUNING", "1") == "0":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # pragma: no cover - musl and other C libraries
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 256 << 20))


MALLOC_TUNED = _keep_freed_host_memory()


def _quiet():
    return np.errstate(all="ignore")


def _f(fn):
    """Wrap a NumPy function so IEEE warnings are silent, as in PyTorch (inf/nan are results, not errors)."""
    def k(*a, **kw):
        with _quiet():
            return fn(*a, **kw)
    k.__name__ = getattr(fn, "__name__", "kernel")
    return k


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


def _int_zero_check(a, b):
    if np.asarray(b).dtype.kind in "iub" and np.asarray(a).dtype.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _div(a, b, rounding_mode=None):
    if rounding_mode is not None:
        _int_zero_check(a, b)
    if rounding_mode is None:
        return np.true_divide(a, b)
    if rounding_mode == "trunc":
        if np.issubdtype(np.result_type(a, b), np.integer):
            q = np.floor_divide(a, b)
            r = np.remainder(a, b)
            return np.where((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)), q + 1, q)
        return np.trunc(np.true_divide(a, b))
    return np.floor_divide(a, b)


def _sort(a, dim, descending, stable=False):
    if descending:
        # a stable ascending sort of the reversed axis, read backwards: ties keep their order, NaN comes first
        # (PyTorch's NaN is the largest value), and no negation that wraps unsigned or minimum integers
        n = a.shape[dim]
        idx = (n - 1) - np.flip(np.argsort(np.flip(a, axis=dim), axis=dim, kind="stable"), axis=dim)
    else:
        idx = np.argsort(a, axis=dim, kind="stable")
    return np.take_along_axis(a, idx, dim), idx.astype(np.int64)


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


def _gather(a, index, dim):
    if index.shape != a.shape:  # torch.gather allows index smaller than input in dims != dim
        a = a[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))]
    return np.take_along_axis(a, index, dim)


def _scatter(a, index, src, dim, reduce=None):
    out = a.copy()
    if np.ndim(src) == 0:
        src = np.broadcast_to(src, index.shape)
    else:
        src = src[tuple(slice(0, s) for s in index.shape)]
    if reduce is None and index.shape == a.shape:
        np.put_along_axis(out, index, src, dim)
        return out
    if reduce == "add" and out.dtype.kind == "f" and index.size:
        # bincount over flat offsets is several times faster than np.add.at; it sums in float64
        offs = index * out.strides[dim] // out.itemsize
        for d, n in enumerate(index.shape):
            if d != dim:
                offs = offs + (np.arange(n) * (out.strides[d] // out.itemsize)).reshape((-1,) + (1,) * (index.ndim - d - 1))
        flat = out.reshape(-1)
        flat += np.bincount(offs.reshape(-1), np.asarray(src, np.float64).reshape(-1), out.size).astype(out.dtype)
        return out
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    idx = tuple(idx)
    if reduce is None:
        out[idx] = src
    elif reduce == "add":
        np.add.at(out, idx, src)
    else:
        np.multiply.at(out, idx, src)
    return out


def _scatter_reduce(a, index, src, dim, reduce, include_self):
    out = a.copy()
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    idx = tuple(idx)
    ufunc = {"amax": np.maximum, "amin": np.minimum, "prod": np.multiply}[reduce]
    if not include_self:  # start the touched positions from the reduction's identity
        if reduce == "prod":
            ident = 1
        elif out.dtype.kind == "f":
            ident = -np.inf if reduce == "amax" else np.inf
        elif out.dtype.kind == "b":
            ident = reduce == "amin"
        else:
            info = np.iinfo(out.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[idx] = ident
    ufunc.at(out, idx, src)
    return out


def _index_add(a, index, src, dim, alpha=1):
    out = a.copy()
    moved = np.moveaxis(out, dim, 0)
    s = np.moveaxis(src * alpha if alpha != 1 else src, dim, 0)
    if index.size > 8 and out.dtype.kind != "b":
        # sort the rows by destination and sum each run with one reduceat: 5x faster than np.add.at on an
        # embedding gradient (2048 rows into 65)
        order = np.argsort(index, kind="stable")
        si = index[order]
        starts = np.flatnonzero(np.concatenate(([True], si[1:] != si[:-1])))
        moved[si[starts]] += np.add.reduceat(s[order], starts, axis=0)
    else:
        np.add.at(moved, index, s)
    return out


def _index(a, *indices, spec):
    return np.array(a[_build_index(indices, spec)], copy=True, order="C")


def _build_index(indices, spec):
    # spec: tuple of ('t', k) tensor placeholders or python slices / None / Ellipsis / ints
    return tuple(indices[s[1]] if isinstance(s, tuple) else s for s in spec)


def _index_put(a, values, *indices, spec, accumulate=False):
    out = a.copy()
    idx = _build_index(indices, spec)
    if accumulate:
        np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _pad_hw(x, top, bottom, left, right, value):
    """(N, C, H, W) -> (N, C, top+H+bottom, left+W+right), the border filled with ``value`` (np.pad costs
    ~10x this in its generic set-up on small images)."""
    n, c, h, w = x.shape
    out = np.full((n, c, top + h + bottom, left + w + right), value, x.dtype) if value else \
        np.zeros((n, c, top + h + bottom, left + w + right), x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


def _im2col(x, kernel_size, dilation, padding, stride):
    # x: (N, C, H, W) -> (C*kh*kw, N, L): the layout that makes convolution one GEMM
    kh, kw = kernel_size
    dh, dw = dilation
    ph, pw = padding
    sh, sw = stride
    if ph or pw:
        x = _pad_hw(x, ph, ph, pw, pw, 0)
    n, c, h, w = x.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    s = x.strides
    cols = np.lib.stride_tricks.as_strided(
        x, (c, kh, kw, n, oh, ow), (s[1], s[2] * dh, s[3] * dw, s[0], s[2] * sh, s[3] * sw), writeable=False)
    return np.ascontiguousarray(cols).reshape(c * kh * kw, n, oh * ow)


def _col2im(cols, output_size, kernel_size, dilation, padding, stride):
    # cols: (C*kh*kw, N, L) -> (N, C, H, W): the adjoint of _im2col (overlaps are summed)
    kh, kw = kernel_size
    dh, dw = dilation
    ph, pw = padding
    sh, sw = stride
    h, w = output_size
    n = cols.shape[1]
    c = cols.shape[0] // (kh * kw)
    hp, wp = h + 2 * ph, w + 2 * pw
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    cols = cols.reshape(c, kh, kw, n, oh, ow)
    out = np.zeros((c, n, hp, wp), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw] += cols[:, i, j]
    return np.ascontiguousarray(out[:, :, ph: ph + h, pw: pw + w].transpose(1, 0, 2, 3))


def _shifted_exp_sum(x, dim):
    """exp(x - max) and its sum along ``dim``, the max-shifted form that cannot overflow (rows of -inf are
    left unshifted; a row with +inf or NaN comes out NaN, as in torch)."""
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(m == -np.inf, 0, m)
    e = np.exp(x - m)
    return e, _fsum(e, (dim,), True), m


def _exp_sum(x, dim):
    """(e, s, m) with e = exp(x - m), s = sum(e) along ``dim`` and a per-row shift m (0 where allowed).

    A row max over a short last axis costs NumPy ~200 ns a row (1.7 ms of a (8192, 64) attention softmax), so
    rows are first taken unshifted: exp(x) needs no max, and when a row's sum s lies in [1, inf) the unshifted
    exps and s carry the same float32 relative precision as the shifted ones (no entry whose probability is
    above the subnormal range overflows or goes subnormal). Only rows outside that range (overflow, NaN, all
    entries very negative) are redone with the max shift; when most rows are, the whole array is. Used by
    softmax only: log_softmax needs the shift for its exact zeros."""
    if not (x.dtype.type in (np.float32, np.float64) and dim % x.ndim == x.ndim - 1 and x.flags.c_contiguous
            and x.size >= 4096):
        return _shifted_exp_sum(x, dim)
    e = np.exp(x)
    s = _fsum(e, (dim,), True)
    bad = ~((s >= 1) & (s < np.inf))
    m = np.zeros_like(s)
    nbad = np.count_nonzero(bad)
    if nbad * 4 > bad.size:
        return _shifted_exp_sum(x, dim)
    if nbad:
        rows = np.flatnonzero(bad)
        c = x.shape[-1]
        es, ss, ms = _shifted_exp_sum(x.reshape(-1, c)[rows], -1)
        e.reshape(-1, c)[rows] = es
        s.reshape(-1)[rows] = ss[:, 0]
        m.reshape(-1)[rows] = ms[:, 0]
    return e, s, m


def _log_softmax(x, dim):
    # always max-shifted: unshifted, x - log(sum(exp(x))) loses the exact 0 of a dominant entry (and the
    # absolute accuracy of log-probabilities near 0, i.e. of small cross-entropy losses)
    if x.size == 0:  # nothing to normalize (and a row max of no elements has no value)
        return np.empty_like(x)
    with _quiet():
        _, s, m = _shifted_exp_sum(x, dim)
        out = x - m
        out -= np.log(s)
        return out


def _softmax(x, dim):
    if x.size == 0:
        return np.empty_like(x)
    with _quiet():
        e, s, _ = _exp_sum(x, dim)
        e /= s
        return e


def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    from .._geometry import pool_geometry
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    oh, ow, eh, ew = pool_geometry(h, w, kernel_size, stride, padding, dilation, ceil_mode)
    floating = x.dtype.kind == "f"
    if ph or pw or eh or ew:
        low = -np.inf if floating else np.iinfo(x.dtype).min
        x = _pad_hw(x, ph, ph + eh, pw, pw + ew, low)
    # one pass per window offset (kh*kw vectorized compares); ``code`` records which offset won, so the index
    # is computed once at the end
    if (sh, sw) == (kh, kw) and (dh, dw) == (1, 1):
        # disjoint windows: one permuting copy puts each window offset in a contiguous plane, so the compares
        # below run on contiguous arrays (strided slices cost ~10x more per element)
        planes = np.ascontiguousarray(
            x[:, :, :oh * kh, :ow * kw].reshape(n, c, oh, kh, ow, kw).transpose(3, 5, 0, 1, 2, 4))
        window = lambda i, j: planes[i, j]  # noqa: E731
    else:
        window = lambda i, j: x[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,  # noqa: E731
                                j * dw: j * dw + sw * (ow - 1) + 1: sw]
    best, code = _pool_argmax(window, kh, kw, False)
    if floating and np.isnan(best).any():  # np.maximum propagates NaN, so only windows holding one show it
        best, code = _pool_argmax(window, kh, kw, True)
    # the winner's flat input index: code = i * kw + j names offset (i * dh, j * dw) of the window, so the index
    # is code * dw + (code // kw) * (dh * w - kw * dw) + base (arithmetic on the small codes: np.take with
    # uint8 indices costs ~15 ns an element, 5x this)
    base = (np.arange(oh).reshape(oh, 1) * sh - ph) * w + np.arange(ow) * sw - pw
    idx = np.multiply(code // kw if kw > 1 else code, dh * w - kw * dw, dtype=np.int64)
    if dw == 1:
        idx += code
    else:
        idx += np.multiply(code, dw, dtype=np.int64)
    idx += base
    if ph or pw or eh or ew:
        from .._geometry import first_valid_tap
        # a window holding nothing above the padding value reports its first real element, as PyTorch
        np.copyto(idx, np.broadcast_to(first_valid_tap(oh, ow, h, w, stride, padding, dilation), idx.shape),
                  where=best == low)
    return best, idx


def _pool_argmax(window, kh, kw, nan_rule):
    """Max over the kh*kw window offsets (``window(i, j)`` gives one offset's values for every window) and the
    flat offset number that won: the first maximum, or the last NaN when ``nan_rule``, as PyTorch."""
    best = code = None
    t = -1
    for i in range(kh):
        for j in range(kw):
            sl = window(i, j)
            t += 1
            if best is None:
                best = sl.copy()
                code = np.zeros(best.shape, np.uint8 if kh * kw < 256 else np.int32)
                better = np.empty(best.shape, bool)
                continue
            np.greater(sl, best, out=better)
            if nan_rule:
                better |= np.isnan(sl)  # PyTorch: a NaN takes the window (the last NaN wins)
                np.copyto(best, sl, where=better)
            else:
                np.maximum(best, sl, out=best)
            # updates come in increasing t, so the last winner is the largest t * better
            if code.dtype == np.uint8:
                flags = better.view(np.uint8)
                flags *= np.uint8(t)
                np.maximum(code, flags, out=code)
            else:
                np.maximum(code, better * np.int32(t), out=code)
    return best, code


def _max_pool2d_backward(g, idx, input_shape, disjoint):
    # the gradient of each window goes to its winner: a put when windows are disjoint, a sum otherwise
    n, c, h, w = input_shape
    flat = idx.reshape(n * c, -1) + (np.arange(n * c, dtype=np.int64) * (h * w))[:, None]
    out = np.zeros(n * c * h * w, g.dtype)
    if disjoint:
        out[flat.reshape(-1)] = g.reshape(-1)
    else:
        out += np.bincount(flat.reshape(-1), np.asarray(g, np.float64).reshape(-1), out.size).astype(g.dtype)
    return out.reshape(input_shape)


# erf for float32 as a rational function of x^2 on [-c, c], c = erfinv(1 - 2^-24) (beyond it erf rounds to
# +-1): the minimax fit used by XLA and Eigen for float32, max abs error 3.4e-7 here. Evaluated in chunks
# that stay in cache, it is vectorized where the C library's erf runs element by element.
_ERF_P = np.array([0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
                   1.128379143519084], np.float32)
_ERF_Q = np.array([-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
                   0.11098505178285362, 0.49746925110067538, 1.0], np.float32)
# Past erfinv(1 - 2^-24) = 3.7439 the fit is an extrapolation that crosses 1 at ~3.851: clipping the input at
# 3.86 and the result to [-1, 1] makes erf exactly +-1 there, as float32 rounding of the true erf is, so
# 1 + erf(x) is exactly 0 for very negative x (GELU's Phi underflows to 0, as in torch)
_ERF_CLIP = np.float32(3.86)
_CHUNK = 1 << 15


def _erf32_into(x, out):
    np.clip(x, -_ERF_CLIP, _ERF_CLIP, out=out)
    x2 = out * out
    p = x2 * _ERF_P[0]
    for c in _ERF_P[1:-1]:
        p += c
        p *= x2
    p += _ERF_P[-1]
    q = x2 * _ERF_Q[0]
    for c in _ERF_Q[1:-1]:
        q += c
        q *= x2
    q += _ERF_Q[-1]
    out *= p
    out /= q
    np.clip(out, -1, 1, out=out)


def _erf(a):
    if a.dtype == np.float32:
        xf = np.ascontiguousarray(a).reshape(-1)
        out = np.empty_like(xf)
        for i in range(0, xf.size, _CHUNK):
            _erf32_into(xf[i:i + _CHUNK], out[i:i + _CHUNK])
        return out.reshape(a.shape)
    return np.asarray(_erf_exact(a), dtype=a.dtype)


def _phi32(x, pdf_times_x=False):
    """Phi(x) = 0.5 * (1 + erf(x / sqrt 2)) of a float32 array; with ``pdf_times_x`` adds x * phi(x)."""
    xf = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(xf)
    for i in range(0, xf.size, _CHUNK):
        xc, oc = xf[i:i + _CHUNK], out[i:i + _CHUNK]
        _erf32_into(xc * np.float32(0.7071067811865476), oc)
        oc += 1
        oc *= np.float32(0.5)
        if pdf_times_x:
            e = xc * xc
            e *= np.float32(-0.5)
            np.exp(e, out=e)
            e *= xc
            e *= np.float32(0.3989422804014327)
            oc += e
    return out.reshape(x.shape)


def _phi(x):
    """The standard normal CDF, 0.5 * (1 + erf(x / sqrt 2)): the C library's erf in float64, the rational erf in float32."""
    if x.dtype == np.float32:
        return _phi32(x)
    out = np.asarray(_erf_exact(x * np.asarray(0.7071067811865476, x.dtype)), x.dtype)
    out += 1
    out *= np.asarray(0.5, x.dtype)
    return out


def _gelu(x, approximate):
    if approximate == "tanh":
        inner = x * x
        inner *= 0.044715
        inner += 1
        inner *= x
        inner *= 0.7978845608028654
        out = np.tanh(inner)
        out += 1
        out *= 0.5
    else:
        out = _phi(x)
    with np.errstate(invalid="ignore"):  # +-inf * Phi: NaN, quietly, as torch
        out *= x
    return out


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def _threshold_backward(g, x, threshold):
    with _quiet():  # a NaN input compares False without a warning, as in PyTorch
        below = np.less_equal(x, threshold)
    if g.dtype.kind == "f" or g.dtype.itemsize == 2 and g.dtype.kind == "V":  # incl. ml_dtypes' bfloat16
        # clear the bits below the threshold: exact as np.where (a NaN gradient there becomes 0, which g * mask
        # would keep) and 3x faster than np.where on a random mask
        it = _SAME_SIZE_INT[g.dtype.itemsize]
        keep = np.subtract(below.view(np.uint8), 1, dtype=it)  # 0 below the threshold, all ones above
        return np.bitwise_and(g.view(it), keep).view(g.dtype)
    return np.where(below, np.zeros((), g.dtype), g)


def _gelu_backward(g, x, approximate):
    if approximate == "tanh":
        x2 = x * x
        t = np.tanh((x2 * 0.044715 + 1) * x * 0.7978845608028654)
        d = (1 - t * t) * (x2 * 0.134145 + 1)
        d *= x * (0.5 * 0.7978845608028654)
        d += 0.5 * (1 + t)
    elif x.dtype == np.float32:
        with np.errstate(invalid="ignore", over="ignore"):
            d = _phi32(x, pdf_times_x=True)
    else:
        d = np.exp(x * x * np.asarray(-0.5, x.dtype))
        d *= x
        d *= np.asarray(0.3989422804014327, x.dtype)
        d += _phi(x)
    d *= g
    return d


def _gelu_backward_from_output(g, x, out):
    # g * (Phi(x) + x phi(x)) with Phi(x) = out / x from the saved forward output, in cache-sized chunks
    dt = x.dtype
    work = np.float32 if dt.itemsize < 4 else dt
    xf = np.ascontiguousarray(x, dtype=work).reshape(-1)
    of = np.ascontiguousarray(out, dtype=work).reshape(-1)
    gf = np.ascontiguousarray(np.broadcast_to(g, x.shape), dtype=work).reshape(-1)
    res = np.empty_like(xf)
    c = np.asarray(0.3989422804014327, work)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for i in range(0, xf.size, _CHUNK):
            xc, rc = xf[i:i + _CHUNK], res[i:i + _CHUNK]
            np.divide(of[i:i + _CHUNK], xc, out=rc)
            tiny = np.abs(xc) < 1e-30  # Phi rounds to 0.5 there, and out / x loses digits or is 0 / 0
            if tiny.any():
                rc[tiny] = 0.5
            e = xc * xc
            e *= np.asarray(-0.5, work)
            np.exp(e, out=e)
            e *= xc
            e *= c
            rc += e
            rc *= gf[i:i + _CHUNK]
    return res.reshape(x.shape).astype(dt, copy=False)


_SPLIT_K = 4096


def _matmul(a, b):
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] >= 2 * _SPLIT_K and a.shape[1] >= 16 * max(a.shape[0], b.shape[1]):
        # long thin products (convolution weight gradients: K = N*H*W): OpenBLAS runs them on one core at a
        # few GFLOP/s; summing GEMMs over K blocks is ~3x faster
        k = a.shape[1]
        out = np.matmul(a[:, :_SPLIT_K], b[:_SPLIT_K])
        for i in range(_SPLIT_K, k, _SPLIT_K):
            out += np.matmul(a[:, i:i + _SPLIT_K], b[i:i + _SPLIT_K])
        return out
    if a.ndim == 2 and b.ndim == 2 and 32 <= a.shape[0] * a.shape[1] <= 160 and b.shape[1] >= 16384:
        # a tiny left factor times very wide columns (the first convolution of a CNN: (6, 25) @ (25, N*H*W)):
        # OpenBLAS takes 2-6x longer on it than on the same GEMM split into column blocks that stay in cache
        out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
        for i in range(0, b.shape[1], 4096):
            np.matmul(a, b[:, i:i + 4096], out=out[:, i:i + 4096])
        return out
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1:
        # K = 1 (weight gradients at batch size 1): NumPy's matmul is ~5x slower than the broadcast product
        return np.multiply(a, b)
    if b.ndim > 2 and b.strides[-1] != b.itemsize and b.size >= 4096:
        # a batched right factor with transposed matrices (attention's q @ k^T): NumPy's stacked matmul runs
        # 2-3x slower on it than on a contiguous copy, copy included
        b = np.ascontiguousarray(b)
    if a.ndim > 2 and b.ndim == 2 and a.size:
        # one (N*M, K) @ (K, P) GEMM instead of NumPy's loop of N small ones (2x faster for GPT-sized inputs)
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    return np.matmul(a, b)


def _layer_norm(x, w, b, normalized_ndim, eps):
    axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
    xa = x.astype(np.float32) if x.dtype.itemsize < 4 else x  # half precision accumulates in float32, as torch
    inv_n = 1.0 / max(math.prod(x.shape[x.ndim - normalized_ndim:]), 1)
    mean = _fsum(xa, axes, True) * np.asarray(inv_n, xa.dtype)
    out = xa - mean
    var = _fsum(np.square(out), axes, True) * np.asarray(inv_n, xa.dtype)
    var += eps
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    out *= rstd
    if w is not None:
        out *= w
    if b is not None:
        out += b
    return out.astype(x.dtype, copy=False), mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)


def _layer_norm_backward(g, x, mean, rstd, w, normalized_ndim, need):
    axes = tuple(range(x.ndim - normalized_ndim, x.ndim))
    lead = tuple(range(x.ndim - normalized_ndim))
    wshape = x.shape[x.ndim - normalized_ndim:]
    xhat = x - mean
    xhat *= rstd
    gx = gw = gb = None
    if need[1]:
        gw = _fsum(g * xhat, lead) if lead else g * xhat
    if need[2]:
        gb = _fsum(g, lead) if lead else g.copy()
    if need[0]:
        inv_n = np.asarray(1.0 / max(math.prod(wshape), 1), x.dtype)
        gxh = g * w if w is not None else g.copy()
        a = _fsum(gxh, axes, True) * inv_n
        bb = _fsum(gxh * xhat, axes, True) * inv_n
        gxh -= a
        xhat *= bb
        gxh -= xhat
        gxh *= rstd
        gx = gxh
    z = np.zeros(wshape, x.dtype)
    return (gx if gx is not None else np.zeros_like(x)), (gw if gw is not None else z), (gb if gb is not None else z)


def _linear(x, w, b):
    out = _matmul(x, w.T)
    if b is not None:
        out += b
    return out


def _log_softmax_backward(g, out, dim):
    return g - np.exp(out) * _fsum(g, (dim,), True)


def _softmax_backward(g, out, dim):
    go = g * out
    go -= out * _fsum(go, (dim,), True)
    return go


def _nll_weights(t, w, c, ignore_index, dtype):
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    if safe.size:
        lo, hi = safe.min(), safe.max()
        if lo < 0 or hi >= c:
            raise IndexError(f"Target {hi if hi >= c else lo} is out of bounds.")
    ww = valid.astype(dtype) if w is None else np.where(valid, w[safe], 0).astype(dtype)
    return safe, ww


def _nll_loss(x, t, w, ignore_index, reduction):
    safe, ww = _nll_weights(t, w, x.shape[1], ignore_index, x.dtype)
    loss = x[np.arange(len(safe)), safe] * -ww
    if reduction == "none":
        return loss
    with _quiet():
        return np.asarray(loss.sum() / ww.sum() if reduction == "mean" else loss.sum(), dtype=x.dtype)


def _nll_loss_backward(g, t, w, num_classes, ignore_index, reduction):
    safe, ww = _nll_weights(t, w, num_classes, ignore_index, g.dtype)
    out = np.zeros((len(safe), num_classes), g.dtype)
    with _quiet():
        out[np.arange(len(safe)), safe] = -ww * (g / ww.sum() if reduction == "mean" else g)
    return out


def _np_dt(dtype, a):
    if dtype is not None:
        return dtype.np
    return np.int64 if a.dtype.kind in "biu" else None


def _sum(a, dims, keepdim, dtype):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV" and (dtype is None or dtype.np == a.dtype):
        # float16 / bfloat16: accumulate in float32 and round once, as PyTorch's CPU reduction
        return _fsum(a.astype(np.float32), _ax(dims), keepdim).astype(a.dtype)
    if dtype is None or dtype.np == a.dtype:
        return _fsum(a, _ax(dims), keepdim) if a.dtype.kind == "f" else \
            np.sum(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a))
    return np.sum(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a))


def _rand(shape, dtype):
    raise NotImplementedError


def _cumop(fn):
    def k(a, dim, dtype):
        return fn(a, axis=dim, dtype=_np_dt(dtype, a))
    return k


def _round(a, decimals=0):
    return np.round(a, decimals)


_CONST_CHUNK = 1 << 16
_zeros_cache = {}


def _bound(fn, a, v, out=None):
    """``fn(a, v)`` for np.maximum / np.minimum and a Python scalar ``v``.

    NumPy's SIMD loops for maximum/minimum only take two contiguous operands: with a scalar (a stride-0
    operand) they run an element-wise loop ~3x slower, so the scalar is expanded to a constant block that
    the array is walked against in chunks."""
    if not (isinstance(v, (int, float)) and a.dtype.kind in "fiu" and a.size >= 256 and a.flags.c_contiguous):
        return fn(a, v, out=out) if out is not None else fn(a, v)
    dt = a.dtype if out is None else out.dtype
    if np.result_type(a, v) != dt:  # NEP 50: a scalar that does not fit the array's dtype changes the result
        return fn(a, v, out=out) if out is not None else fn(a, v)
    m = min(a.size, _CONST_CHUNK)
    if v == 0 and not (dt.kind == "f" and math.copysign(1.0, v) < 0):
        c = _zeros_cache.get(dt)
        if c is None:
            c = _zeros_cache[dt] = np.zeros(_CONST_CHUNK, dt)
            c.flags.writeable = False
        c = c[:m]
    else:
        c = np.full(m, v, dt)
    if out is None:
        out = np.empty(a.shape, dt)
    af, of = a.reshape(-1), out.reshape(-1)
    for i in range(0, af.size, m):
        j = min(i + m, af.size)
        fn(af[i:j], c[:j - i], out=of[i:j])
    return out


def _relu(a):
    return _bound(np.maximum, a, 0)


def _clamp(a, lo, hi):
    with _quiet():
        out = a
        if lo is not None:
            out = _bound(np.maximum, out, lo)
        if hi is not None:
            # the max's result can be written over (not for 0-d input: NumPy then returns a scalar)
            out = _bound(np.minimum, out, hi, out=out if out is not a and isinstance(out, np.ndarray) else None)
        return np.array(out, copy=True) if out is a else out


def _pow(a, b):
    with _quiet():
        if np.issubdtype(np.result_type(a, b), np.integer) and np.any(np.asarray(b) < 0):
            if np.ndim(b) == 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            # PyTorch: x ** -n is 1 for x == 1, +-1 for x == -1, 0 otherwise
            neg = b < 0
            safe = np.power(a, np.where(neg, 0, b))
            sign_one = np.where(np.asarray(b) % 2 == 0, 1, -1)
            return np.where(neg, np.where(a == 1, 1, np.where(a == -1, sign_one, 0)), safe).astype(safe.dtype)
        return np.power(a, b)


def _remainder(a, b):
    _int_zero_check(a, b)
    with _quiet():
        return np.remainder(a, b)


def _fmod(a, b):
    _int_zero_check(a, b)
    with _quiet():
        return np.fmod(a, b)


def _einsum(*ops, equation):
    dt = ops[0].dtype if ops else None
    if dt is not None and (dt.kind == "V" or dt == np.float16):
        # np.einsum has no bfloat16 loop and a slow float16 one: accumulate in float32, as torch does
        return np.einsum(equation, *(o.astype(np.float32) for o in ops), optimize=len(ops) > 2).astype(dt)
    return np.einsum(equation, *ops, optimize=len(ops) > 2)


def _nan_to_num(a, nan, posinf, neginf):
    return np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)


KERNELS = {
    # pointwise, float
    "exp": _f(np.exp), "exp2": _f(np.exp2), "expm1": _f(np.expm1), "log": _f(np.log), "log2": _f(np.log2),
    "log10": _f(np.log10), "log1p": _f(np.log1p), "sqrt": _f(np.sqrt), "rsqrt": _f(lambda a: 1 / np.sqrt(a)),
    "sin": _f(np.sin), "cos": _f(np.cos), "tan": _f(np.tan), "asin": _f(np.arcsin), "acos": _f(np.arccos),
    "atan": _f(np.arctan), "sinh": _f(np.sinh), "cosh": _f(np.cosh), "tanh": _f(np.tanh),
    "sigmoid": _f(lambda a: 1 / (1 + np.exp(-a))), "reciprocal": _f(np.reciprocal),
    "erf": _f(_erf),
    "erfinv": _f(_erfinv),
    # pointwise, dtype-preserving
    "neg": np.negative, "abs": np.abs, "sign": _f(lambda a: a.copy() if a.dtype == np.bool_ else np.sign(a)), "floor": np.floor, "ceil": np.ceil,
    "round": _round, "trunc": np.trunc, "relu": _relu,
    "bitwise_not": lambda a: np.logical_not(a) if a.dtype == np.bool_ else np.invert(a),
    "logical_not": np.logical_not, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "nan_to_num": _nan_to_num,
    # binary
    "add": lambda a, b, alpha=1: np.add(a, b if alpha == 1 else np.multiply(b, alpha)),
    "sub": lambda a, b, alpha=1: np.subtract(a, b if alpha == 1 else np.multiply(b, alpha)),
    "mul": np.multiply, "div": _f(_div), "remainder": _remainder, "fmod": _fmod, "pow": _pow,
    "atan2": _f(np.arctan2), "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "where": lambda c, a, b: np.where(c, a, b), "clamp": _clamp,
    # reductions and scans
    "sum": _sum, "prod": lambda a, dims, keepdim, dtype: np.prod(a, axis=_ax(dims), keepdims=keepdim, dtype=_np_dt(dtype, a)),
    "amax": lambda a, dims, keepdim: np.amax(a, axis=_ax(dims), keepdims=keepdim),
    "amin": lambda a, dims, keepdim: np.amin(a, axis=_ax(dims), keepdims=keepdim),
    "max_dim": lambda a, dim, keepdim: _max_dim(a, dim, keepdim, "max"),
    "min_dim": lambda a, dim, keepdim: _max_dim(a, dim, keepdim, "min"),
    "argmax": lambda a, dim, keepdim: np.asarray(np.argmax(a, axis=dim, keepdims=keepdim), dtype=np.int64),
    "argmin": lambda a, dim, keepdim: np.asarray(np.argmin(a, axis=dim, keepdims=keepdim), dtype=np.int64),
    "all": lambda a, dims, keepdim: np.all(a, axis=_ax(dims), keepdims=keepdim),
    "any": lambda a, dims, keepdim: np.any(a, axis=_ax(dims), keepdims=keepdim),
    "cumsum": _cumop(np.cumsum), "cumprod": _cumop(np.cumprod),
    "sort": _sort, "topk": _topk,
    # linear algebra
    "matmul": _matmul, "einsum": _einsum, "linear": _linear, "max_pool2d_with_indices": _max_pool2d,
    "max_pool2d_with_indices_backward": _max_pool2d_backward,
    # copies, indexing, shape
    "clone": lambda a: a.copy(), "to_dtype": lambda a, dtype: a.astype(dtype.np), "flip": lambda a, dims: np.flip(a, dims).copy(),
    "cat": lambda *ts, dim: np.concatenate(ts, axis=dim),
    "gather": _gather, "scatter": _scatter, "index_add": _index_add, "scatter_reduce": _scatter_reduce,
    "index_select": lambda a, index, dim: np.take(a, index, axis=dim),
    "as_strided_scatter": None,
    "index": _index, "index_put": _index_put,
    "tril": lambda a, diagonal: np.tril(a, diagonal), "triu": lambda a, diagonal: np.triu(a, diagonal),
    # nn
    "im2col": _im2col, "col2im": _col2im, "log_softmax": _log_softmax, "softmax": _softmax,
    "log_softmax_backward": _log_softmax_backward, "softmax_backward": _softmax_backward,
    "gelu": _gelu, "gelu_backward": _gelu_backward, "threshold_backward": _threshold_backward,
    "nextafter": np.nextafter, "gelu_backward_from_output": _gelu_backward_from_output,
    "native_layer_norm": _layer_norm, "native_layer_norm_backward": _layer_norm_backward, "nll_loss": _nll_loss, "nll_loss_backward": _nll_loss_backward,
}
KERNELS = {k: v for k, v in KERNELS.items() if v is not None}


def _pack(batch, *parts):
    # multi-output LAPACK ops hand back one flat-packed array (see tinytorch/_ops/lapack.py)
    return np.concatenate([p.reshape(batch + (-1,)) for p in parts], axis=-1)


def _eigh(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO)
    return _pack(a.shape[:-2], w, v)


def _eig(a):
    w, v = np.linalg.eig(a)  # NumPy returns a real dtype when every eigenvalue is real; torch is always complex
    ct = np.result_type(a.dtype, np.complex64)
    return _pack(a.shape[:-2], w.astype(ct, copy=False), v.astype(ct, copy=False))


def _svd(a, full_matrices):
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return _pack(a.shape[:-2], u, s, vh)


def _qr(a, mode):
    q, r = np.linalg.qr(a, mode="reduced" if mode == "r" else mode)
    return _pack(a.shape[:-2], q, r)


def _lu_factor(a):
    """LU with partial pivoting of (..., m, n) ``a`` (LAPACK getrf's algorithm, unblocked): the packed factor
    (unit-lower L below the diagonal, U on and above it), the 1-based row interchanges (int32), and info (the
    1-based index of the first zero pivot, else 0). NumPy has no getrf, so the column loop is here: each step
    is a vectorized pivot search, row swap and rank-1 update over the whole batch."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    A = np.array(a, dtype=a.dtype, copy=True).reshape(-1, m, n)
    B, k = A.shape[0], min(m, n)
    piv = np.empty((B, k), np.int32)
    info = np.zeros(B, np.int32)
    rows = np.arange(B)
    with _quiet():
        for j in range(k):
            p = j + np.argmax(np.abs(A[:, j:, j]), axis=1)  # first largest |a_ij|, as LAPACK's i?amax
            piv[:, j] = p + 1
            swap = p != j
            if swap.any():
                r, pr = rows[swap], p[swap]
                tmp = A[r, j].copy()
                A[r, j] = A[r, pr]
                A[r, pr] = tmp
            d = A[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            A[:, j + 1:, j] /= np.where(zero, 1, d)[:, None]
            A[:, j + 1:, j + 1:] -= A[:, j + 1:, j:j + 1] * A[:, j:j + 1, j + 1:]
    return A.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


_lgamma_np = np.frompyfunc(math.lgamma, 1, 1)


def _gamma_pq(a, x):
    """The regularized incomplete gamma functions (P(a, x), Q(a, x) = 1 - P) of float64 arrays: the power series
    for P where x < a + 1, Lentz's continued fraction for Q otherwise (Numerical Recipes 6.2); each branch's
    own function is exact to rounding (so the smaller of P and Q keeps its relative accuracy) and the other is
    1 minus it. torch's values at the edges (a = 0, x = 0, x = inf), NaN for negative arguments. Used by the
    ``igamma`` kernel and by the Gamma distribution's implicit reparameterization gradient."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    P = np.full(a.shape, np.nan)
    Q = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a >= 0) & (x >= 0) & ~((a == 0) & (x == 0)) & ~(np.isinf(a) & np.isinf(x))
        one = ok & ((a == 0) | np.isposinf(x))
        zero = ok & ((x == 0) | np.isposinf(a))
        P[one], Q[one], P[zero], Q[zero] = 1.0, 0.0, 0.0, 1.0
        reg = ok & (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        ar, xr = a[reg], x[reg]
        pre = np.exp(ar * np.log(xr) - xr - _lgamma_np(ar).astype(np.float64))
        ser = xr < ar + 1
        # series: P = pre * sum_n x^n / (a (a+1) ... (a+n))
        sa, sx = ar[ser], xr[ser]
        term = 1.0 / sa
        total = term.copy()
        ap = sa.copy()
        live = np.ones(sa.shape, bool)
        while live.any():
            ap[live] += 1
            term[live] *= sx[live] / ap[live]
            total[live] += term[live]
            live &= np.abs(term) > np.abs(total) * 1e-17
        p_ser = total * pre[ser]
        # continued fraction (modified Lentz): Q = pre * h
        ca, cx = ar[~ser], xr[~ser]
        tiny = 1e-300
        b = cx + 1 - ca
        c = np.full(ca.shape, 1 / tiny)
        d = 1 / b
        h = d.copy()
        live = np.ones(ca.shape, bool)
        i = 0
        while live.any():
            i += 1
            idx = np.flatnonzero(live)
            an = -i * (i - ca[idx])
            b[idx] += 2
            dl = an * d[idx] + b[idx]
            dl[np.abs(dl) < tiny] = tiny
            cl = b[idx] + an / c[idx]
            cl[np.abs(cl) < tiny] = tiny
            dl = 1 / dl
            delta = dl * cl
            d[idx], c[idx] = dl, cl
            h[idx] *= delta
            live[idx[np.abs(delta - 1) < 1e-16]] = False
        q_cf = h * pre[~ser]
        pr, qr = np.empty(ar.shape), np.empty(ar.shape)
        pr[ser], qr[ser] = p_ser, 1 - p_ser
        pr[~ser], qr[~ser] = 1 - q_cf, q_cf
        P[reg], Q[reg] = pr, qr
    return P, Q


def _igamma(a, x, upper):
    """P(a, x), or Q(a, x) with ``upper``, in the dtype of the inputs (computed in float64)."""
    P, Q = _gamma_pq(a, x)
    return (Q if upper else P).astype(np.result_type(a, x), copy=False)


def _lapack(fn):
    def k(a):
        with _quiet():
            return np.asarray(fn(a), dtype=a.dtype)
    return k


def _fft_c2c(a, dims, norm, forward):
    return (np.fft.fftn if forward else np.fft.ifftn)(a, axes=dims, norm=norm).astype(a.dtype, copy=False)


def _fft_r2c(a, dims, norm, onesided):
    out = (np.fft.rfftn if onesided else np.fft.fftn)(a, axes=dims, norm=norm)
    return out.astype(np.complex64 if a.dtype == np.float32 else np.complex128, copy=False)


def _fft_c2r(a, dims, norm, last_dim_size):
    s = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    out = np.fft.irfftn(a, s=s, axes=dims, norm=norm)
    return out.astype(np.float32 if a.dtype == np.complex64 else np.float64, copy=False)


KERNELS.update({
    "real": lambda a: np.ascontiguousarray(a.real), "imag": lambda a: np.ascontiguousarray(a.imag),
    "conj": np.conjugate, "view_as_real": lambda a: np.stack([a.real, a.imag], -1),
    "view_as_complex": lambda a: (a[..., 0] + 1j * a[..., 1]).astype(
        np.complex128 if a.dtype == np.float64 else np.complex64),
    "fft_c2c": _fft_c2c, "fft_r2c": _fft_r2c, "fft_c2r": _fft_c2r,
    "linalg_inv": _lapack(np.linalg.inv), "linalg_det": _lapack(np.linalg.det),
    "linalg_cholesky": _lapack(np.linalg.cholesky), "linalg_solve": lambda a, b: np.linalg.solve(a, b),
    "linalg_eigh": _eigh, "linalg_eig": _eig, "linalg_svd": _svd, "linalg_qr": _qr, "linalg_lu_factor": _lu_factor,
    "igamma": _igamma,
})


def _dense(shape, strides, isz):
    expected = isz
    for n, st in sorted(zip(shape, strides), key=lambda p: p[1]):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


def _ufunc_inplace(uf):
    def k(dst, other, alpha=1, rounding_mode=None):
        if rounding_mode is not None:
            raise NotImplementedError  # not reached: div_ with rounding_mode has no in-place kernel
        with _quiet():
            uf(dst, other if alpha == 1 else np.multiply(other, alpha), out=dst, casting="unsafe")
    return k


def _adam_step(p, g, m, v, vmax, lr, beta1, beta2, eps, step, weight_decay, decoupled):
    # the update of tinytorch.optim.Adam/AdamW written with out= so it makes two temporaries, not ten
    if weight_decay:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + p * weight_decay
    tmp = np.multiply(g, 1 - beta1)
    m *= beta1
    m += tmp
    np.multiply(g, g, out=tmp)
    tmp *= 1 - beta2
    v *= beta2
    v += tmp
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    denom = np.sqrt(v)
    denom /= math.sqrt(1 - beta2 ** step)
    denom += eps
    np.divide(m, denom, out=tmp)
    tmp *= -lr / (1 - beta1 ** step)
    p += tmp


def _sgd_momentum_step(p, g, buf, lr, momentum, weight_decay):
    # tinytorch.optim.SGD with momentum, no dampening, no Nesterov, after the first step
    if weight_decay:
        g = g + p * weight_decay
    buf *= momentum
    buf += g
    p -= buf * lr if lr != 1 else buf


INPLACE_KERNELS = {"add": _ufunc_inplace(np.add), "sub": _ufunc_inplace(np.subtract),
                   "mul": _ufunc_inplace(np.multiply), "div": _ufunc_inplace(np.true_divide),
                   # optional fused optimizer updates (tinytorch.optim falls back to in-place ops without them)
                   "adam_step": _adam_step, "sgd_momentum_step": _sgd_momentum_step}


class NumpyBackend(Backend):
    """NumPy on the host: the default ``cpu`` device."""

    def __init__(self):
        self.kernels = dict(KERNELS)
        self.inplace_kernels = dict(INPLACE_KERNELS)

    def alloc(self, numel, dtype):
        """A flat uninitialised buffer; a size the host cannot hold is PyTorch's allocator RuntimeError, raised
        before NumPy tries."""
        from .._storage import check_alloc
        check_alloc((numel,), dtype)
        return np.empty(numel, dtype=dtype.np)

    def from_numpy(self, arr, device=None):
        return arr

    def to_numpy(self, native):
        return np.array(native, copy=True)

    def reinterpret(self, buf, old_dtype, new_dtype):
        nbytes = buf.size * buf.itemsize
        keep = nbytes - nbytes % new_dtype.itemsize  # whole elements of the new dtype
        return buf[:keep // buf.itemsize].view(new_dtype.np)

    def view(self, buf, dtype, shape, strides, offset):
        isz = buf.itemsize
        if 0 in shape:
            # an empty view reads no memory: its offset may lie past a (possibly empty) buffer's end, which
            # NumPy refuses, so it is built at offset 0
            offset = 0
        return np.ndarray(shape, buf.dtype, buf, offset * isz, tuple(s * isz for s in strides))

    def wrap(self, native, dtype):
        a = native
        if type(a) is not np.ndarray:
            a = np.asarray(a)
        if a.dtype is not dtype.np and a.dtype != dtype.np:
            a = a.astype(dtype.np)
        if a.flags.c_contiguous:
            return a, a.reshape(-1), _contig(a.shape), 0
        isz = a.itemsize
        if a.size and all(s > 0 for s in a.strides) and _dense(a.shape, a.strides, isz):
            # a dense permuted layout (NumPy keeps its inputs' memory order): keep it, as PyTorch's
            # TensorIterator does, instead of copying to row-major
            return a, a.ravel(order="K"), tuple(s // isz for s in a.strides), 0
        a = np.ascontiguousarray(a)
        return a, a.reshape(-1), _contig(a.shape), 0

    def cast(self, native, dtype):
        return native.astype(dtype.np)

    def copy_(self, dst, src):
        np.copyto(dst, src, casting="unsafe")
