"""Reductions (sum, prod, amax/amin, all/any, arg reductions), scans (cumsum, cumprod), sort and topk."""
import math

import numpy as np

from ... import _dtype as _dt
from ..._strides import contiguous_strides
from .codegen import MAXD, _collapse, _ct, _isf, _lim, _max_expr, _struct
from .runtime import KERNELS, _group_size


# A reduction of few outputs over many elements (a whole-tensor sum) would give one work-group all the work: it is
# split over the device's ``reduce_groups`` work-groups per output (SPLIT_GROUPS unless the device says more: a GPU
# needs many groups in flight), whose partial results a second pass combines (PyTorch's CUDA reductions split the
# same way). Below SPLIT_MIN elements per output one pass is as fast.
SPLIT_MIN, SPLIT_GROUPS = 1 << 16, 256


def _reduce(be, a, dims, keepdim, init, combine, final, acc_ct, out_dtype, name, arg=False, val="x"):
    dims = sorted({d % a.ndim for d in dims}) if a.ndim else []
    kept = [d for d in range(a.ndim) if d not in dims]
    R = math.prod(a.shape[d] for d in dims)
    nout = math.prod(a.shape[d] for d in kept)
    groups = getattr(a.buf.dev, "reduce_groups", SPLIT_GROUPS)
    if not arg and final == "acc" and R >= SPLIT_MIN and 0 < nout < groups:
        # pass 1: (kept..., groups) partial results in the output dtype; pass 2 combines them
        part = _reduce_pass(be, a, dims, False, init, combine, "acc", acc_ct, out_dtype, name, False, val, groups)
        out = _reduce_pass(be, part, [part.ndim - 1], False, init, combine, "acc", acc_ct, out_dtype, name, False,
                           "x", 1)
        if keepdim:
            shape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim))
            out = out.view(shape, contiguous_strides(shape))
        return out
    return _reduce_pass(be, a, dims, keepdim, init, combine, final, acc_ct, out_dtype, name, arg, val, 1)


def _reduce_pass(be, a, dims, keepdim, init, combine, final, acc_ct, out_dtype, name, arg, val, groups):
    """One reduction kernel: ``groups`` work-groups per output each reduce every ``groups``-th chunk of the
    reduced elements; with ``groups`` > 1 the output gets a last dim of that size (the partial results)."""
    dims = sorted({d % a.ndim for d in dims}) if a.ndim else []
    kept = [d for d in range(a.ndim) if d not in dims]
    dev = a.buf.dev
    oshape_k = [a.shape[d] for d in kept]
    oshape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim)) if keepdim else tuple(oshape_k)
    if groups > 1:
        oshape = oshape + (groups,)
    nout = math.prod(oshape_k)
    R = math.prod(a.shape[d] for d in dims)
    out = be._empty(oshape, out_dtype, dev)
    idx_out = be._empty(oshape, _dt.int64, dev) if arg else None
    if nout == 0:
        return (out, idx_out) if arg else out
    ks, kst = _collapse(oshape_k, [[a.strides[d] for d in kept]])
    rs, rst = _collapse([a.shape[d] for d in dims], [[a.strides[d] for d in dims]])
    mk, mr = max(MAXD, len(ks)), max(MAXD, len(rs))
    meta = np.zeros(4 + 2 * mk + 2 * mr, np.int64)
    meta[0], meta[1], meta[2], meta[3] = len(ks), len(rs), R, a.offset
    meta[4:4 + len(ks)] = ks
    meta[4 + mk:4 + mk + len(ks)] = kst[0]
    meta[4 + 2 * mk:4 + 2 * mk + len(rs)] = rs
    meta[4 + 2 * mk + mr:4 + 2 * mk + mr + len(rs)] = rst[0]
    # many outputs: one work-item each and no barriers (CPU drivers emulate work-group barriers slowly)
    L = 1 if nout >= 64 and R <= 4096 and groups == 1 else _group_size(R, dev)
    G = groups
    key = ("reduce", name, a.dtype.name, out_dtype.name, acc_ct, mk, mr, L, arg, val, init, combine, G)

    def source():
        kk = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{4 + d}]; r /= P.v[{4 + d}]; base += c * P.v[{4 + mk + d}]; }}\n"
                     for d in range(mk))
        rr = "".join(f"if (P.v[1] > {d}) {{ long c = q % P.v[{4 + 2 * mk + d}]; q /= P.v[{4 + 2 * mk + d}]; "
                     f"off += c * P.v[{4 + 2 * mk + mr + d}]; }}\n" for d in range(mr))
        if arg:
            upd = f"if ({combine}) {{ acc = v; ai = j; }}"
            tree = (f"for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ ACC v = sh[lid + s]; long j = si[lid + s]; "
                    f"if (({combine}) || (v == acc || (isnan_(v) && isnan_(acc))) && j < ai) {{ acc = v; ai = j; }} "
                    f"sh[lid] = acc; si[lid] = ai; }} barrier(CLK_LOCAL_MEM_FENCE); acc = sh[lid]; ai = si[lid]; }}")
            store = "out[o] = (OT)acc; oi[o] = ai;"
            extra = ", __global long* oi"
            shi = f"__local long si[{L}]; long ai = 0x7fffffffffffffffL;"
            shset = "si[lid] = ai;"
        else:
            upd = f"acc = {combine};"
            tree = (f"for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ ACC v = sh[lid + s]; acc = {combine}; "
                    f"sh[lid] = acc; }} barrier(CLK_LOCAL_MEM_FENCE); acc = sh[lid]; }}")
            store = f"out[o * {G} + part] = (OT)({final});"
            extra = shi = shset = ""
        isnan_def = "#define isnan_(x) isnan(x)\n" if _isf(a.dtype) else "#define isnan_(x) 0\n"
        return (_struct(len(meta)) + f"typedef {_ct(a.dtype)} IT;\ntypedef {acc_ct} ACC;\ntypedef {_ct(out_dtype)} OT;\n"
                + isnan_def +
                f"__kernel void k(__global OT* out, __global const IT* a, Params P{extra}) {{\n"
                f" long o = get_group_id(0) / {G}, part = get_group_id(0) % {G}; int lid = get_local_id(0);\n"
                f" long r = o, base = P.v[3];\n{kk}"
                f" ACC acc = {init}; {shi}\n"
                f" for (long j = part * {L} + lid; j < P.v[2]; j += {G * L}) {{ long q = j, off = 0;\n"
                f"  if (P.v[1] == 1) off = j * P.v[{4 + 2 * mk + mr}]; else {{\n{rr} }}\n"
                f"  IT x = a[base + off]; ACC v = (ACC)({val}); {upd} }}\n"
                f" __local ACC sh[{L}]; sh[lid] = acc; {shset} barrier(CLK_LOCAL_MEM_FENCE);\n"
                f" {tree}\n if (lid == 0) {{ {store} }}\n}}\n")
    k = dev.kernel(key, source)
    args = [out.buf.mem, a.buf.mem, meta] + ([idx_out.buf.mem] if arg else [])
    dev.launch(k, (nout * G * L,), (L,), args)
    return (out, idx_out) if arg else out


def _red(name):
    def k(be, a, dims, keepdim, dtype=None):
        dt = a.dtype
        f = _isf(dt)
        if name in ("sum", "prod"):
            out_dt = dtype or (dt if f else _dt.int64)
            acc = _ct(out_dt)
            init = "(ACC)0" if name == "sum" else "(ACC)1"
            comb = "acc + v" if name == "sum" else "acc * v"
            return _reduce(be, a, dims, keepdim, init, comb, "acc", acc, out_dt, name)
        if name in ("all", "any"):
            init = "(ACC)1" if name == "all" else "(ACC)0"
            comb = "(ACC)(acc && v)" if name == "all" else "(ACC)(acc || v)"
            val = "(x != 0 || isnan(x))" if f else "(x != 0)"
            return _reduce(be, a, dims, keepdim, init, comb, "acc", "uchar", _dt.bool, name, val=val)
        fn = "max" if name == "amax" else "min"
        init = ("-INFINITY" if fn == "max" else "INFINITY") if f else \
            ({"max": _lim(dt, False), "min": _lim(dt, True)}[fn])
        return _reduce(be, a, dims, keepdim, init, _max_expr("acc", "v", f, fn), "acc", _ct(dt), dt, name)
    return k


for _n in ("sum", "prod", "amax", "amin", "all", "any"):
    KERNELS.add(_n, _red(_n))


def _arg_red(fn, values):
    def k(be, a, dim, keepdim):
        dt = a.dtype
        f = _isf(dt)
        op = ">" if fn == "max" else "<"
        comb = f"((isnan(v) && !isnan(acc)) || (!isnan(acc) && v {op} acc))" if f else f"(v {op} acc)"
        init = ("NAN" if False else ("-INFINITY" if fn == "max" else "INFINITY")) if f else \
            ({"max": _lim(dt, False), "min": _lim(dt, True)}[fn])
        # the first element always wins over the initial value (ties at the initial value included)
        comb = f"(ai == 0x7fffffffffffffffL || {comb})"
        if a.ndim == 0:
            a = a.view((1,), (0,))
            vals, idx = _reduce(be, a, (0,), False, init, comb, "acc", _ct(dt), dt, "arg" + fn, arg=True)
            vals, idx = vals.view((), ()), idx.view((), ())
        else:
            vals, idx = _reduce(be, a, (dim,), keepdim, init, comb, "acc", _ct(dt), dt, "arg" + fn, arg=True)
        return (vals, idx) if values else idx
    return k


KERNELS.add("max_dim", _arg_red("max", True))
KERNELS.add("min_dim", _arg_red("min", True))
KERNELS.add("argmax", _arg_red("max", False))
KERNELS.add("argmin", _arg_red("min", False))


def _scan(name):
    def k(be, a, dim, dtype=None):
        out_dt = dtype or (a.dtype if _isf(a.dtype) else _dt.int64)
        if a.ndim == 0:
            return be.cast(a, out_dt)
        n = a.shape[dim]
        perm = [d for d in range(a.ndim) if d != dim] + [dim]
        src = a.permute(perm)
        out = be._empty(src.shape, out_dt, a.buf.dev)
        rows = math.prod(src.shape[:-1])
        if rows and n:
            op = "+" if name == "sum" else "*"
            init = "0" if name == "sum" else "1"
            # one work-item per row; the row's strided start comes from the elementwise index code
            row_view = src.view(src.shape[:-1], src.strides[:-1])
            out_rows = out.view(src.shape[:-1], [s for s in out.strides[:-1]])
            be._ew("scan_" + name, f"scan_(A0, p1, s0, s1, (__global OT*)out, p0, {init})",
                   [row_view], [(n, _dt.int64), (src.strides[-1], _dt.int64)], out_dt, out_rows.shape,
                   out=out_rows, ptr=(0,), ct=_ct(out_dt),
                   helpers=(f"OT scan_(__global const {_ct(a.dtype)}* a, long p, long n, long s, __global OT* o, "
                            f"long q, OT acc) {{ for (long j = 0; j < n; ++j) {{ acc = acc {op} (OT)a[p + j * s]; "
                            f"o[q + j] = acc; }} return o[q]; }}\n"))
        inv = [0] * a.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        return out.permute(inv)
    return k


KERNELS.add("cumsum", _scan("sum"))
KERNELS.add("cumprod", _scan("prod"))


def _sort_impl(be, a, dim, descending):
    """Rank sort: each element's rank in its row (ties in index order, so stable; NaN sorts as the largest
    value, as in PyTorch) is its position. O(n^2) per row but one parallel pass."""
    if a.ndim == 0:
        a = a.view((1,), (0,))
    n = a.shape[dim]
    perm = [d for d in range(a.ndim) if d != dim] + [dim]
    src = be._copy(a.permute(perm))
    dev = a.buf.dev
    vals = be._empty(src.shape, a.dtype, dev)
    idx = be._empty(src.shape, _dt.int64, dev)
    if src.size:
        f = _isf(a.dtype)
        if f:
            lt = "((!isnan(x) && isnan(y)) || x < y)" if not descending else "((isnan(x) && !isnan(y)) || x > y)"
            eq = "(x == y || (isnan(x) && isnan(y)))"
        else:
            lt = "(x < y)" if not descending else "(x > y)"
            eq = "(x == y)"
        key = ("sort", a.dtype.name, descending)

        def source():
            return (f"typedef {_ct(a.dtype)} T;\n"
                    f"__kernel void k(__global T* vals, __global long* idx, __global const T* a, long n, long total) {{\n"
                    f" long g = get_global_id(0); if (g >= total) return; long row = g / n, i = g % n; __global const T* p = a + row * n;\n"
                    f" T y = p[i]; long r = 0;\n"
                    f" for (long j = 0; j < n; ++j) {{ T x = p[j]; if ({lt} || ({eq} && j < i)) ++r; }}\n"
                    f" vals[row * n + r] = y; idx[row * n + r] = i;\n}}\n")
        k = dev.kernel(key, source)
        dev.launch_1d(k, src.size, [vals.buf.mem, idx.buf.mem, src.buf.mem, np.int64(n), np.int64(src.size)])
    inv = [0] * a.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return vals.permute(inv), idx.permute(inv)


@KERNELS.register("sort")
def _sort(be, a, dim, descending, stable=False):
    v, i = _sort_impl(be, a, dim, descending)
    if a.ndim == 0:
        return v.view((), ()), i.view((), ())
    return v, i


@KERNELS.register("topk")
def _topk(be, a, k, dim, largest, sorted):
    v, i = _sort_impl(be, a, dim, largest)
    if a.ndim == 0:
        return be._copy(v.view((), ())), be._copy(i.view((), ()))
    shape = list(v.shape)
    shape[dim] = k
    return be._copy(v.view(shape, v.strides)), be._copy(i.view(shape, i.strides))
