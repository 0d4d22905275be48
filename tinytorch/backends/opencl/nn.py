"""Fused nn kernels: (log-)softmax and its gradient, layer norm, nll loss, and the convolution and pooling
primitives (im2col, col2im, max_pool2d with indices and its gradient)."""
import math

import numpy as np

from ... import _dtype as _dt
from .codegen import MAXD, _collapse, _ct, _isf, _struct
from .index import _segmented
from .runtime import _LOCAL, KERNELS, _group_size


def _softmax(be, a, dim, log):
    """Row-wise (log-)softmax in one kernel: one work-group per row (max, sum of exp, write)."""
    dim %= max(a.ndim, 1)
    if a.ndim == 0:
        return be._ew("softmax0", "(CT)0" if log else "(CT)1", [a], [], a.dtype, ())
    dev = a.buf.dev
    perm = [d for d in range(a.ndim) if d != dim] + [dim]
    src = a.permute(perm)
    out = be._empty(src.shape, a.dtype, dev)
    n = src.shape[-1]
    rows = math.prod(src.shape[:-1])
    if rows and n:
        rs, rst = _collapse(list(src.shape[:-1]), [list(src.strides[:-1])])
        m = max(MAXD, len(rs))
        meta = np.zeros(4 + 2 * m, np.int64)
        meta[0], meta[1], meta[2], meta[3] = len(rs), n, src.strides[-1], src.offset
        meta[4:4 + len(rs)] = rs
        meta[4 + m:4 + m + len(rs)] = rst[0]
        L = _group_size(n, dev)
        key = ("softmax", a.dtype.name, log, m, L)

        def source():
            kk = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{4 + d}]; r /= P.v[{4 + d}]; base += c * P.v[{4 + m + d}]; }}\n"
                         for d in range(m))
            fin = "(x - mx) - log(s)" if log else "exp(x - mx) / s"
            return (_struct(len(meta)) + f"typedef {_ct(a.dtype)} T;\n"
                    f"__kernel void k(__global T* out, __global const T* a, Params P) {{\n"
                    f" long o = get_group_id(0); int lid = get_local_id(0); long r = o, base = P.v[3];\n{kk}"
                    f" const long n = P.v[1], s1 = P.v[2];\n __local T sh[{L}];\n"
                    f" T mx = -INFINITY; for (long j = lid; j < n; j += {L}) {{ T x = a[base + j * s1]; mx = (isnan(x) || x > mx) ? x : mx; }}\n"
                    f" sh[lid] = mx; barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ T y = sh[lid + s]; if (isnan(y) || y > sh[lid]) sh[lid] = y; }} barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                    f" mx = sh[0]; if (mx == -INFINITY) mx = 0; barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" T s = 0; for (long j = lid; j < n; j += {L}) s += exp(a[base + j * s1] - mx);\n"
                    f" sh[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                    f" s = sh[0];\n"
                    f" for (long j = lid; j < n; j += {L}) {{ T x = a[base + j * s1]; out[o * n + j] = {fin}; }}\n}}\n")
        k = dev.kernel(key, source)
        dev.launch(k, (rows * L,), (L,), [out.buf.mem, a.buf.mem, meta])
    inv = [0] * a.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return out.permute(inv)


KERNELS.add("softmax", lambda be, a, dim: _softmax(be, a, dim, False))
KERNELS.add("log_softmax", lambda be, a, dim: _softmax(be, a, dim, True))


def _softmax_backward(be, g, out, dim, log):
    """The (log-)softmax gradient in one kernel, one work-group per row: s = sum(g) (log) or sum(g * out),
    then g - exp(out) * s (log) or out * (g - s)."""
    dim %= max(out.ndim, 1)
    if out.ndim == 0:
        return be._ew("softmax_bw0", "(OT)0", [out], [], out.dtype, ())
    dev = out.buf.dev
    perm = [d for d in range(out.ndim) if d != dim] + [dim]
    gs, os_ = (x if x.is_contiguous() else be._copy(x) for x in (be._expand(g, out.shape).permute(perm),
                                                                     out.permute(perm)))
    res = be._empty(os_.shape, out.dtype, dev)
    n = os_.shape[-1]
    rows = math.prod(os_.shape[:-1])
    if rows and n:
        L = _group_size(n, dev)
        key = ("softmax_backward", out.dtype.name, log, L)

        def source():
            term = "x" if log else "x * y"
            fin = "x - exp(y) * s" if log else "y * (x - s)"
            return (f"typedef {_ct(out.dtype)} T;\n"
                    f"__kernel void k(__global T* res, __global const T* g, long go, __global const T* o, long oo,"
                    f" long n) {{\n long base = get_group_id(0) * n; int lid = get_local_id(0);\n"
                    f" __local T sh[{L}];\n"
                    f" T s = 0; for (long j = lid; j < n; j += {L}) {{ T x = g[go + base + j], y = o[oo + base + j];"
                    f" s += {term}; }}\n"
                    f" sh[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                    f" s = sh[0];\n"
                    f" for (long j = lid; j < n; j += {L}) {{ T x = g[go + base + j], y = o[oo + base + j];"
                    f" res[base + j] = {fin}; }}\n}}\n")
        k = dev.kernel(key, source)
        dev.launch(k, (rows * L,), (L,), [res.buf.mem, gs.buf.mem, np.int64(gs.offset), os_.buf.mem,
                                           np.int64(os_.offset), np.int64(n)])
    inv = [0] * out.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return res.permute(inv)


KERNELS.add("softmax_backward", lambda be, g, out, dim: _softmax_backward(be, g, out, dim, False))
KERNELS.add("log_softmax_backward", lambda be, g, out, dim: _softmax_backward(be, g, out, dim, True))


@KERNELS.register("native_layer_norm")
def _layer_norm(be, a, w, b, normalized_ndim, eps):
    """(out, mean, rstd) in one kernel: one work-group per row of the normalized dims (mean, variance, write)."""
    dev = a.buf.dev
    if not a.is_contiguous():
        a = be._copy(a)
    n = math.prod(a.shape[a.ndim - normalized_ndim:])
    rows = math.prod(a.shape[:a.ndim - normalized_ndim])
    stat_shape = a.shape[:a.ndim - normalized_ndim] + (1,) * normalized_ndim
    out = be._empty(a.shape, a.dtype, dev)
    mean, rstd = be._empty(stat_shape, a.dtype, dev), be._empty(stat_shape, a.dtype, dev)
    if rows and n:
        w = w if w is None or w.is_contiguous() else be._copy(w)
        b = b if b is None or b.is_contiguous() else be._copy(b)
        L = _group_size(n, dev)

        def source():
            red = (f" sh[lid] = acc; barrier(CLK_LOCAL_MEM_FENCE);\n"
                   f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; "
                   f"barrier(CLK_LOCAL_MEM_FENCE); }}\n")
            return (f"typedef {_ct(a.dtype)} T;\n"
                    f"__kernel void k(__global T* out, __global T* mo, __global T* ro, __global const T* a, long ao,"
                    f" __global const T* w, long wo, __global const T* b, long bo, long n, T eps, int flags) {{\n"
                    f" long o = get_group_id(0); int lid = get_local_id(0); __local T sh[{L}];\n"
                    f" __global const T* x = a + ao + o * n;\n"
                    f" T acc = 0; for (long j = lid; j < n; j += {L}) acc += x[j];\n{red}"
                    f" T mean = sh[0] / n; barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" acc = 0; for (long j = lid; j < n; j += {L}) {{ T d = x[j] - mean; acc += d * d; }}\n{red}"
                    f" T rstd = rsqrt(sh[0] / n + eps);\n"
                    f" if (lid == 0) {{ mo[o] = mean; ro[o] = rstd; }}\n"
                    f" for (long j = lid; j < n; j += {L}) {{ T y = (x[j] - mean) * rstd;"
                    f" if (flags & 1) y *= w[wo + j]; if (flags & 2) y += b[bo + j]; out[o * n + j] = y; }}\n}}\n")
        k = dev.kernel(("layer_norm", a.dtype.name, L), source)
        dev.launch(k, (rows * L,), (L,), [
            out.buf.mem, mean.buf.mem, rstd.buf.mem, a.buf.mem, np.int64(a.offset),
            (w if w is not None else a).buf.mem, np.int64(w.offset if w is not None else 0),
            (b if b is not None else a).buf.mem, np.int64(b.offset if b is not None else 0),
            np.int64(n), a.dtype.np.type(eps), np.int32((w is not None) | ((b is not None) << 1))])
    return out, mean, rstd


def _nll_source(dt, backward):
    """One work-group does all N samples: per-sample weights (0 for ignore_index, class weight if given),
    their sum, then the loss (forward) or the gradient (backward, after zero-filling its (N, C) output)."""
    L = _LOCAL
    red = (" sh[lid] = acc; barrier(CLK_LOCAL_MEM_FENCE);\n"
           f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n")
    head = (f"typedef {_ct(dt)} T;\n"
            "inline T wt(long t, long C, long ig, __global const T* w, long wo, int hw) {\n"
            " return (t == ig || t < 0 || t >= C) ? (T)0 : (hw ? w[wo + t] : (T)1); }\n")
    if not backward:
        return head + (
            "__kernel void k(__global T* out, __global long* bad, __global const T* x, long xo, long sx0, long sx1,"
            " __global const long* tg, long to, long st, __global const T* w, long wo, int hw, long N, long C,"
            " long ig, int red) {\n"
            f" int lid = get_local_id(0); __local T sh[{L}]; __local long shb[{L}];\n"
            " T acc = 0, ws = 0; long b = -1;\n"
            f" for (long i = lid; i < N; i += {L}) {{ long t = tg[to + i * st];\n"
            "  if (t != ig && (t < 0 || t >= C)) b = t;\n"
            "  T wi = wt(t, C, ig, w, wo, hw); T li = wi == 0 ? (T)0 : -x[xo + i * sx0 + t * sx1] * wi;\n"
            "  if (red == 0) out[i] = li; acc += li; ws += wi; }\n"
            " shb[lid] = b;\n" + red + " T total = sh[0]; barrier(CLK_LOCAL_MEM_FENCE); acc = ws;\n" + red +
            " if (lid == 0) { long bb = -1; for (int j = 0; j < " + str(L) + "; ++j) if (shb[j] != -1) bb = shb[j];\n"
            "  bad[0] = bb; if (red == 1) out[0] = total / sh[0]; if (red == 2) out[0] = total; }\n}\n")
    return head + (
        "__kernel void k(__global T* out, __global const T* g, long go, long sg, __global const long* tg, long to,"
        " long st, __global const T* w, long wo, int hw, long N, long C, long ig, int red) {\n"
        f" int lid = get_local_id(0); __local T sh[{L}];\n"
        f" for (long j = lid; j < N * C; j += {L}) out[j] = 0;\n"
        " T acc = 0; if (red == 1) { for (long i = lid; i < N; i += " + str(L) + ") acc += wt(tg[to + i * st], C, ig, w, wo, hw);\n"
        + red + " }\n T ws = red == 1 ? sh[0] : (T)1;\n barrier(CLK_GLOBAL_MEM_FENCE);\n"
        f" for (long i = lid; i < N; i += {L}) {{ long t = tg[to + i * st]; T wi = wt(t, C, ig, w, wo, hw);\n"
        "  if (wi != 0) out[i * C + t] = -wi * g[go + i * sg] / ws; }\n}\n")


@KERNELS.register("nll_loss")
def _nll_loss(be, x, t, w, ignore_index, reduction):
    dev = x.buf.dev
    n, c = x.shape
    red = {"none": 0, "mean": 1, "sum": 2}[reduction]
    out = be._empty((n,) if red == 0 else (), x.dtype, dev)
    if n == 0:
        return be._ew("fill", "(OT)NAN" if red == 1 else "(OT)0", [], [], x.dtype, (), out=out) if red else out
    w = w if w is None or w.is_contiguous() else be._copy(w)
    bad = be._empty((1,), _dt.int64, dev)
    k = dev.kernel(("nll_loss", x.dtype.name), lambda: _nll_source(x.dtype, False))
    dev.launch(k, (_LOCAL,), (_LOCAL,), [
        out.buf.mem, bad.buf.mem, x.buf.mem, np.int64(x.offset), np.int64(x.strides[0]),
        np.int64(x.strides[1]), t.buf.mem, np.int64(t.offset), np.int64(t.strides[0]),
        (w if w is not None else x).buf.mem, np.int64(w.offset if w is not None else 0),
        np.int32(w is not None), np.int64(n), np.int64(c), np.int64(ignore_index), np.int32(red)])
    graph = getattr(dev, "capturing", None)
    if graph is not None:
        # inside a CUDA graph capture the host cannot read: the graph runs the check after each replay
        graph.checks.append(lambda: _check_targets(be, bad))
    else:
        _check_targets(be, bad)
    return out


def _check_targets(be, bad):
    b = int(be.to_numpy(bad)[0])  # the one host sync: out-of-range targets raise here, as on cpu
    if b != -1:
        raise IndexError(f"Target {b} is out of bounds.")


@KERNELS.register("nll_loss_backward")
def _nll_loss_backward(be, g, t, w, num_classes, ignore_index, reduction):
    dev = g.buf.dev
    n = t.shape[0]
    out = be._empty((n, num_classes), g.dtype, dev)
    if out.size == 0:
        return out
    w = w if w is None or w.is_contiguous() else be._copy(w)
    k = dev.kernel(("nll_loss_backward", g.dtype.name), lambda: _nll_source(g.dtype, True))
    dev.launch(k, (_LOCAL,), (_LOCAL,), [
        out.buf.mem, g.buf.mem, np.int64(g.offset), np.int64(g.strides[0] if g.ndim else 0),
        t.buf.mem, np.int64(t.offset), np.int64(t.strides[0]),
        (w if w is not None else g).buf.mem, np.int64(w.offset if w is not None else 0),
        np.int32(w is not None), np.int64(n), np.int64(num_classes), np.int64(ignore_index),
        np.int32({"none": 0, "mean": 1, "sum": 2}[reduction])])
    return out


# ---- convolution and pooling primitives: one work-item per output row or element, index math inline ----
_GEOM = "const long N = P.v[0], C = P.v[1], H = P.v[2], W = P.v[3], oh = P.v[12], ow = P.v[13];\n"


def _geom_kernel(name, dt, body, meta, extra="", ptr_types=("T", "T")):
    # the window geometry is compiled in (one build per kernel size / stride / padding / dilation):
    # constant strides turn the index divisions into shifts and multiplies, which CPU drivers need
    consts = "".join(f"#define {n} {int(v)}L\n" for n, v in zip(("kh", "kw", "dh", "dw", "ph", "pw", "sh", "sw"),
                                                              meta[4:12]))
    src = (_struct(20) + consts + f"typedef {_ct(dt)} T;\n"
           f"__kernel void k(__global {ptr_types[0]}* out, __global const {ptr_types[1]}* X, Params P{extra}) {{\n"
           f" long g = get_global_id(0);\n" + _GEOM + body + "}\n")
    return src


def _run_geom(dev, key, source, args, n):
    key = key + tuple(int(v) for v in args[2][4:12])
    k = dev.kernel(key, source)
    dev.launch_1d(k, n, args)


def _geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, strides=(0, 0, 0, 0), offset=0):
    meta = np.zeros(20, np.int64)
    meta[:14] = [n, c, h, w, *kernel_size, *dilation, *padding, *stride, oh, ow]
    meta[14:18] = strides
    meta[18] = offset
    return meta


@KERNELS.register("im2col")
def _im2col(be, x, kernel_size, dilation, padding, stride):
    n, c, h, w = x.shape
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    dev = x.buf.dev
    out = be._empty((c * kh * kw, n, oh * ow), x.dtype, dev)
    rows = c * kh * kw * n * oh
    if out.size:
        body = (" if (g >= C * kh * kw * N * oh) return;\n"
                " long y = g % oh, t = g / oh; long b = t % N; t /= N; long kj = t % kw; t /= kw;"
                " long ki = t % kh, c = t / kh;\n"
                " __global T* o = out + g * ow; long iy = y * sh - ph + ki * dh;\n"
                " if (iy < 0 || iy >= H) { for (long q = 0; q < ow; ++q) o[q] = 0; return; }\n"
                " long base = P.v[18] + b * P.v[14] + c * P.v[15] + iy * P.v[16];\n"
                " for (long q = 0; q < ow; ++q) { long ix = q * sw - pw + kj * dw;"
                " o[q] = (ix >= 0 && ix < W) ? X[base + ix * P.v[17]] : (T)0; }\n")
        meta = _geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
        _run_geom(dev, ("im2col", x.dtype.name), lambda: _geom_kernel("im2col", x.dtype, body, meta),
                  [out.buf.mem, x.buf.mem, meta], rows)
    return out


@KERNELS.register("col2im")
def _col2im(be, cols, output_size, kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    h, w = output_size
    ckk, n, L = cols.shape
    c = ckk // (kh * kw)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    dev = cols.buf.dev
    if not cols.is_contiguous() or cols.offset:
        cols = be._copy(cols)
    out = be._empty((n, c, h, w), cols.dtype, dev)
    if out.size:
        # a gather over the windows that cover each pixel: no atomics, each output written once
        body = (" if (g >= N * C * H) return;\n"
                " long hh = g % H, t = g / H; long c = t % C, b = t / C;\n"
                " for (long ww = 0; ww < W; ++ww) { T acc = 0;\n"
                "  for (long ki = 0; ki < kh; ++ki) { long yy = hh + ph - ki * dh;"
                " if (yy < 0 || yy % sh) continue; long y = yy / sh; if (y >= oh) continue;\n"
                "   for (long kj = 0; kj < kw; ++kj) { long xx = ww + pw - kj * dw;"
                " if (xx < 0 || xx % sw) continue; long x = xx / sw; if (x >= ow) continue;\n"
                "    acc += X[(((c * kh + ki) * kw + kj) * N + b) * oh * ow + y * ow + x]; } }\n"
                "  out[g * W + ww] = acc; }\n")
        meta = _geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow)
        _run_geom(dev, ("col2im", cols.dtype.name), lambda: _geom_kernel("col2im", cols.dtype, body, meta),
                  [out.buf.mem, cols.buf.mem, meta], n * c * h)
    return out


@KERNELS.register("max_pool2d_with_indices")
def _max_pool2d(be, x, kernel_size, stride, padding, dilation, ceil_mode):
    from ..._geometry import pool_geometry
    n, c, h, w = x.shape
    oh, ow, _, _ = pool_geometry(h, w, kernel_size, stride, padding, dilation, ceil_mode)
    dev = x.buf.dev
    out = be._empty((n, c, oh, ow), x.dtype, dev)
    idx = be._empty((n, c, oh, ow), _dt.int64, dev)
    if out.size:
        nan = "isnan(v)" if _isf(x.dtype) else "0"
        # PyTorch's rule: the first maximum wins, a NaN takes the window (the last NaN), padding never wins
        body = (" if (g >= N * C * oh * ow) return;\n"
                " long ox = g % ow, t = g / ow; long oy = t % oh; t /= oh; long c = t % C, b = t / C;\n"
                " long base = P.v[18] + b * P.v[14] + c * P.v[15]; int found = 0; T best = 0; long bi = 0;\n"
                " for (long ki = 0; ki < kh; ++ki) { long iy = oy * sh - ph + ki * dh; if (iy < 0 || iy >= H) continue;\n"
                "  for (long kj = 0; kj < kw; ++kj) { long ix = ox * sw - pw + kj * dw; if (ix < 0 || ix >= W) continue;\n"
                f"   T v = X[base + iy * P.v[16] + ix * P.v[17]]; if (!found || v > best || {nan}) {{"
                " best = v; bi = iy * W + ix; found = 1; } } }\n"
                " out[g] = best; oi[g] = bi;\n")
        meta = _geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
        _run_geom(dev, ("max_pool2d", x.dtype.name),
                  lambda: _geom_kernel("max_pool2d", x.dtype, body, meta, extra=", __global long* oi"),
                  [out.buf.mem, x.buf.mem, meta, idx.buf.mem], out.size)
    return out, idx


@KERNELS.register("max_pool2d_with_indices_backward")
def _max_pool2d_backward(be, g, idx, input_shape, disjoint):
    n, c, h, w = input_shape
    dev = g.buf.dev
    out = be._empty(tuple(input_shape), g.dtype, dev)
    be._ew("fill", "(OT)0", [], [], g.dtype, out.shape, out=out)
    if g.size == 0:
        return out
    g = g if g.is_contiguous() and not g.offset else be._copy(g)
    idx = idx if idx.is_contiguous() and not idx.offset else be._copy(idx)
    per = g.size // (n * c)
    if not disjoint:  # overlapping windows: several winners may share a pixel, so sum by segments
        flat = be.to_numpy(idx).reshape(n * c, -1) + (np.arange(n * c, dtype=np.int64) * (h * w))[:, None]
        return _segmented(be, out, flat, g, "add")
    # disjoint windows: each pixel wins at most once, so a plain scatter is exact
    body = (" if (g >= N * C * oh * ow) return;\n"
            " long nc = g / (oh * ow); out[nc * H * W + X[g]] = G[g];\n")
    meta = _geom_meta(n, c, h, w, (1, 1), (1, 1), (0, 0), (1, 1), 1, per)
    _run_geom(dev, ("max_pool2d_backward", g.dtype.name),
              lambda: _geom_kernel("max_pool2d_backward", g.dtype, body, meta, extra=", __global const T* G",
                                   ptr_types=("T", "long")),
              [out.buf.mem, idx.buf.mem, meta, g.buf.mem], g.size)
    return out
