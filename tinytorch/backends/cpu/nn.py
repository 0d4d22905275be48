"""Neural-network kernels of the ``cpu`` backend, all of composite ops (a backend may skip them): im2col /
col2im (convolution as one GEMM), softmax and log_softmax, max pooling with indices, GELU, layer norm, NLL
loss, and their gradients."""
import math

import numpy as np

from .reduce import _fsum
from .registry import KERNELS, _quiet
from .special import _CHUNK, _phi, _phi32


def _pad_hw(x, top, bottom, left, right, value):
    """(N, C, H, W) -> (N, C, top+H+bottom, left+W+right), the border filled with ``value`` (np.pad costs
    ~10x this in its generic set-up on small images)."""
    n, c, h, w = x.shape
    out = np.full((n, c, top + h + bottom, left + w + right), value, x.dtype) if value else \
        np.zeros((n, c, top + h + bottom, left + w + right), x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


@KERNELS.register("im2col")
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


@KERNELS.register("col2im")
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


@KERNELS.register("log_softmax")
def _log_softmax(x, dim):
    # always max-shifted: unshifted, x - log(sum(exp(x))) loses the exact 0 of a dominant entry (and the
    # absolute accuracy of log-probabilities near 0, i.e. of small cross-entropy losses)
    if x.size == 0:  # nothing to normalize (and a row max of no elements has no value)
        return np.empty_like(x)
    if x.dtype.itemsize < 4:  # float16 / bfloat16: in float32, rounded once, as ATen's kernel
        return _log_softmax(x.astype(np.float32), dim).astype(x.dtype)
    with _quiet():
        _, s, m = _shifted_exp_sum(x, dim)
        out = x - m
        out -= np.log(s)
        return out


@KERNELS.register("softmax")
def _softmax(x, dim):
    if x.size == 0:
        return np.empty_like(x)
    if x.dtype.itemsize < 4:
        return _softmax(x.astype(np.float32), dim).astype(x.dtype)
    with _quiet():
        e, s, _ = _exp_sum(x, dim)
        e /= s
        return e


@KERNELS.register("max_pool2d_with_indices")
def _max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode):
    from ..._geometry import pool_geometry
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
        from ..._geometry import first_valid_tap
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


@KERNELS.register("max_pool2d_with_indices_backward")
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


@KERNELS.register("gelu")
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


@KERNELS.register("threshold_backward")
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


@KERNELS.register("gelu_backward")
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


@KERNELS.register("gelu_backward_from_output")
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


@KERNELS.register("native_layer_norm")
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


@KERNELS.register("native_layer_norm_backward")
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


@KERNELS.register("log_softmax_backward")
def _log_softmax_backward(g, out, dim):
    return g - np.exp(out) * _fsum(g, (dim,), True)


@KERNELS.register("softmax_backward")
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


@KERNELS.register("nll_loss")
def _nll_loss(x, t, w, ignore_index, reduction):
    safe, ww = _nll_weights(t, w, x.shape[1], ignore_index, x.dtype)
    loss = x[np.arange(len(safe)), safe] * -ww
    if reduction == "none":
        return loss
    with _quiet():
        return np.asarray(loss.sum() / ww.sum() if reduction == "mean" else loss.sum(), dtype=x.dtype)


@KERNELS.register("nll_loss_backward")
def _nll_loss_backward(g, t, w, num_classes, ignore_index, reduction):
    safe, ww = _nll_weights(t, w, num_classes, ignore_index, g.dtype)
    out = np.zeros((len(safe), num_classes), g.dtype)
    with _quiet():
        out[np.arange(len(safe)), safe] = -ww * (g / ww.sum() if reduction == "mean" else g)
    return out
