"""Convolution and pooling primitives: im2col / col2im (convolution and its gradients are GEMMs around them) and
max pooling with indices and its backward. One invocation per output row or element, the index math inline; the
window geometry (kernel size, dilation, padding, stride) is compiled in as constants, one pipeline per geometry."""
import numpy as np

from ... import _dtype as _dt
from . import wgsl
from .index import _segmented
from .runtime import KERNELS, STORAGE

_NAMES = ("kh", "kw", "dh", "dw", "ph", "pw", "sh", "sw")


def _meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, strides=(0, 0, 0, 0), offset=0):
    """The parameter block: N C H W, the geometry, oh ow, the input's (n, c, h, w) strides and offset."""
    return [n, c, h, w, *kernel_size, *dilation, *padding, *stride, oh, ow, *strides, offset, 0]


def _run(be, dev, name, dt, body, words, bufs, n, extra="", x_dtype=None):
    """Launch ``body`` over ``n`` invocations (``g`` the invocation, ``out``/``X``/``P`` bound, ``extra`` more
    bindings from 3 on); the geometry of ``words`` is compiled in."""
    geom = tuple(int(v) for v in words[4:12])
    x_dtype = x_dtype or dt
    vt = wgsl.value_type(dt)

    def source():
        consts = "".join(f"const {k}: i32 = {v};\n" for k, v in zip(_NAMES, geom))
        return (wgsl.header(dt, x_dtype) + consts + f"alias T = {STORAGE[dt.name]};\n" +
                f"@group(0) @binding(0) var<storage, read_write> out: array<{STORAGE[dt.name]}>;\n"
                f"@group(0) @binding(1) var<storage, read> X: array<{STORAGE[x_dtype.name]}>;\n"
                "@group(0) @binding(2) var<storage, read> P: array<i32>;\n" + extra +
                wgsl.helpers(vt) + wgsl.GID + " let g = gid;\n"
                " let N = P[0]; let C = P[1]; let H = P[2]; let W = P[3]; let oh = P[12]; let ow = P[13];\n"
                + body + "}\n")
    pipe = dev.pipeline((name, dt.name, x_dtype.name) + geom, source)
    dev.launch(pipe, bufs[:2] + [dev.param_buffer(words)] + bufs[2:], dev.groups_1d(n))


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
        body = (" if (g >= C * kh * kw * N * oh) { return; }\n"
                " let y = g % oh; var t = g / oh; let b = t % N; t = t / N; let kj = t % kw; t = t / kw;"
                " let ki = t % kh; let c = t / kh;\n"
                " let o = g * ow; let iy = y * sh - ph + ki * dh;\n"
                " if (iy < 0 || iy >= H) { for (var q = 0; q < ow; q++) { out[o + q] = T(0); } return; }\n"
                " let base = P[18] + b * P[14] + c * P[15] + iy * P[16];\n"
                " for (var q = 0; q < ow; q++) { let ix = q * sw - pw + kj * dw; var v = T(0);"
                " if (ix >= 0 && ix < W) { v = X[base + ix * P[17]]; } out[o + q] = v; }\n")
        words = _meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
        _run(be, dev, "im2col", x.dtype, body, words, [out.buf.mem, x.buf.mem], rows)
    return out


@KERNELS.register("col2im")
def _col2im(be, cols, output_size, kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    h, w = output_size
    ckk, n, _ = cols.shape
    c = ckk // (kh * kw)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    dev = cols.buf.dev
    if not cols.is_contiguous() or cols.offset:
        cols = be._copy(cols)
    out = be._empty((n, c, h, w), cols.dtype, dev)
    if out.size:
        acc = "f32" if cols.dtype.is_floating_point else "i32"
        # a gather over the windows that cover each pixel: no atomics, each output written once
        body = (" if (g >= N * C * H) { return; }\n"
                " let hh = g % H; let t = g / H; let c = t % C; let b = t / C;\n"
                f" for (var ww = 0; ww < W; ww++) {{ var acc = {acc}(0);\n"
                "  for (var ki = 0; ki < kh; ki++) { let yy = hh + ph - ki * dh;"
                " if (yy < 0 || yy % sh != 0) { continue; } let y = yy / sh; if (y >= oh) { continue; }\n"
                "   for (var kj = 0; kj < kw; kj++) { let xx = ww + pw - kj * dw;"
                " if (xx < 0 || xx % sw != 0) { continue; } let x = xx / sw; if (x >= ow) { continue; }\n"
                f"    acc += {acc}(X[(((c * kh + ki) * kw + kj) * N + b) * oh * ow + y * ow + x]); }} }}\n"
                "  out[g * W + ww] = T(acc); }\n")
        words = _meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow)
        _run(be, dev, "col2im", cols.dtype, body, words, [out.buf.mem, cols.buf.mem], n * c * h)
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
        vt = wgsl.value_type(x.dtype)
        nan = "isnan_(v)" if x.dtype.is_floating_point else "false"
        # PyTorch's rule: the first maximum wins, a NaN takes the window (the last NaN), padding never wins
        body = (" if (g >= N * C * oh * ow) { return; }\n"
                " let ox = g % ow; var t = g / ow; let oy = t % oh; t = t / oh; let c = t % C; let b = t / C;\n"
                f" let base = P[18] + b * P[14] + c * P[15]; var found = false; var best = {vt}(0); var bi = 0;\n"
                " for (var ki = 0; ki < kh; ki++) { let iy = oy * sh - ph + ki * dh; if (iy < 0 || iy >= H) { continue; }\n"
                "  for (var kj = 0; kj < kw; kj++) { let ix = ox * sw - pw + kj * dw; if (ix < 0 || ix >= W) { continue; }\n"
                f"   let v = {wgsl.load(x.dtype, 'X[base + iy * P[16] + ix * P[17]]')};"
                f" if (!found || v > best || {nan}) {{ best = v; bi = iy * W + ix; found = true; }} }} }}\n"
                f" out[g] = {wgsl.store(x.dtype, 'best')}; oi[g] = bi;\n")
        words = _meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
        _run(be, dev, "max_pool2d", x.dtype, body, words, [out.buf.mem, x.buf.mem, idx.buf.mem], out.size,
             extra="@group(0) @binding(3) var<storage, read_write> oi: array<i32>;\n")
    return out, idx


@KERNELS.register("max_pool2d_with_indices_backward")
def _max_pool2d_backward(be, g, idx, input_shape, disjoint):
    n, c, h, w = input_shape
    dev = g.buf.dev
    out = be._empty(tuple(input_shape), g.dtype, dev)
    be._ew("fill", "0", [], [], g.dtype, out.shape, out=out)
    if g.size == 0:
        return out
    g = g if g.is_contiguous() and not g.offset else be._copy(g)
    idx = idx if idx.is_contiguous() and not idx.offset else be._copy(idx)
    per = g.size // (n * c)
    if not disjoint:  # overlapping windows: several winners may share a pixel, so sum by segments
        flat = be.to_numpy(idx).reshape(n * c, -1) + (np.arange(n * c, dtype=np.int64) * (h * w))[:, None]
        return _segmented(be, out, flat, g, "add")
    # disjoint windows: each pixel wins at most once, so a plain scatter is exact
    body = (" if (g >= N * C * oh * ow) { return; }\n"
            " let nc = g / (oh * ow); out[nc * H * W + X[g]] = G[g];\n")
    words = _meta(n, c, h, w, (1, 1), (1, 1), (0, 0), (1, 1), 1, per)
    _run(be, dev, "max_pool2d_backward", g.dtype, body, words, [out.buf.mem, idx.buf.mem, g.buf.mem], g.size,
         extra=f"@group(0) @binding(3) var<storage, read> G: array<{STORAGE[g.dtype.name]}>;\n", x_dtype=_dt.int32)
    return out


def _rows(be, name, inputs, dim, out_dtype, body):
    """One invocation per row along ``dim`` of the inputs (same shape): ``body`` reads element k of input j as
    ``ld{j}(k)`` (f32) and writes ``out[p0 + k * so]``; ``n`` is the row length. Returns the output."""
    from ..opencl.codegen import _collapse
    a = inputs[0]
    dim = dim % a.ndim if a.ndim else 0
    scalar = a.ndim == 0
    if scalar:  # a 0-dim tensor is one row of one element
        inputs = [x.view((1,), (0,)) for x in inputs]
        a = inputs[0]
    dev = a.buf.dev
    out = be._empty(a.shape, out_dtype, dev)
    if not out.size:
        return out.view((), ()) if scalar else out
    n = a.shape[dim]
    kept = [d for d in range(a.ndim) if d != dim]
    rshape = [a.shape[d] for d in kept] or [1]
    strides = [[out.strides[d] for d in kept] or [0]] + [[x.strides[d] for d in kept] or [0] for x in inputs]
    cs, cst = _collapse(rshape, strides)
    if not cs:
        cs, cst = [1], [[0] for _ in strides]
    m = max(wgsl.MAXD, len(cs))
    words = list(wgsl.meta(cs, cst, [out.offset] + [x.offset for x in inputs], m))
    nw = len(words)
    words += [n, out.strides[dim]] + [x.strides[dim] for x in inputs]
    rows = out.size // n
    dts = [x.dtype for x in inputs]
    lds = "".join(f" let sa{j} = P[{nw + 2 + j}];\n" for j in range(len(inputs)))

    def source():
        fns = "".join(f"fn ld{j}(base: i32, k: i32, s: i32) -> f32 {{ return f32(A{j}[base + k * s]); }}\n"
                      for j in range(len(inputs)))
        return (wgsl.header(out_dtype, *dts) + wgsl.bindings(out_dtype, dts) + wgsl.helpers("f32") + fns + wgsl.GID +
                " if (gid >= P[1]) { return; }\n" + wgsl.index_code(1 + len(inputs), m, nd=len(cs)) +
                f"\n let n = P[{nw}]; let so = P[{nw + 1}];\n" + lds + body + "}\n")
    pipe = dev.pipeline((name, out_dtype.name) + tuple(d.name for d in dts) + (m, len(cs)), source)
    dev.launch(pipe, [out.buf.mem] + [x.buf.mem for x in inputs] + [dev.param_buffer(words)],
               dev.groups_1d(rows))
    return out.view((), ()) if scalar else out


def _softmax(be, a, dim, log):
    # the row's maximum (NaN propagates), the sum of exponentials shifted by it, then each element
    st = STORAGE[a.dtype.name]
    res = "(v - mx) - log(s)" if log else "exp(v - mx) / s"
    body = (" var mx = -inf_();\n"
            " for (var k = 0; k < n; k++) { let v = ld0(p1, k, sa0); mx = select(select(mx, v, v > mx), v, isnan_(v)); }\n"
            " var s = 0.0;\n"
            " for (var k = 0; k < n; k++) { s += exp(ld0(p1, k, sa0) - mx); }\n"
            f" for (var k = 0; k < n; k++) {{ let v = ld0(p1, k, sa0); out[p0 + k * so] = {st}({res}); }}\n")
    return _rows(be, "log_softmax" if log else "softmax", [a], dim, a.dtype, body)


def _softmax_backward(be, g, out, dim, log):
    # softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g)
    st = STORAGE[g.dtype.name]
    if log:
        red, res = "ld0(p1, k, sa0)", "ld0(p1, k, sa0) - exp(ld1(p2, k, sa1)) * s"
    else:
        red, res = "ld0(p1, k, sa0) * ld1(p2, k, sa1)", "ld1(p2, k, sa1) * (ld0(p1, k, sa0) - s)"
    body = (f" var s = 0.0;\n for (var k = 0; k < n; k++) {{ s += {red}; }}\n"
            f" for (var k = 0; k < n; k++) {{ out[p0 + k * so] = {st}({res}); }}\n")
    return _rows(be, "log_softmax_backward" if log else "softmax_backward", [g, out], dim, g.dtype, body)


KERNELS.add("softmax", lambda be, a, dim: _softmax(be, a, dim, False))
KERNELS.add("log_softmax", lambda be, a, dim: _softmax(be, a, dim, True))
KERNELS.add("softmax_backward", lambda be, g, out, dim: _softmax_backward(be, g, out, dim, False))
KERNELS.add("log_softmax_backward", lambda be, g, out, dim: _softmax_backward(be, g, out, dim, True))
