"""Reductions: sum, prod, amax/amin, all/any and the arg reductions (max_dim, min_dim, argmax, argmin).

One workgroup of ``L`` invocations per output element: each invocation folds every L-th reduced element (through
the reduced dims' strides, so views need no copy), then a tree in workgroup memory combines the L partial results.
"""
import math

from ... import _dtype as _dt
from ..opencl.codegen import _collapse
from . import wgsl
from .runtime import KERNELS, STORAGE

L = 64
_MAXG = 65535


def _isf(dt):
    return dt.is_floating_point


def _reduce(be, a, dims, keepdim, init, combine, acc_t, out_dtype, name, arg=False, val="x", nan_eq=False):
    """Reduce ``a`` over ``dims``: ``acc = combine`` folds value ``v`` (``val`` of the loaded ``x``) into ``acc``
    (of WGSL type ``acc_t``, starting at ``init``). With ``arg``, ``combine`` is the condition for ``v`` at
    position ``j`` to replace the current best; ties keep the smaller position. Returns out (and int64 indices)."""
    dims = sorted({d % a.ndim for d in dims}) if a.ndim else []
    kept = [d for d in range(a.ndim) if d not in dims]
    dev = a.buf.dev
    oshape_k = [a.shape[d] for d in kept]
    oshape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim)) if keepdim else tuple(oshape_k)
    nout = math.prod(oshape_k)
    R = math.prod(a.shape[d] for d in dims)
    out = be._empty(oshape, out_dtype, dev)
    idx = be._empty(oshape, _dt.int64, dev) if arg else None
    if nout == 0:
        return (out, idx) if arg else out
    ks, kst = _collapse(oshape_k, [[a.strides[d] for d in kept]])
    rs, rst = _collapse([a.shape[d] for d in dims], [[a.strides[d] for d in dims]])
    mk, mr = max(wgsl.MAXD, len(ks)), max(wgsl.MAXD, len(rs))
    words = [0] * (4 + 2 * mk + 2 * mr)
    words[0:4] = [len(ks), len(rs), R, a.offset]
    words[4:4 + len(ks)] = ks
    words[4 + mk:4 + mk + len(ks)] = kst[0]
    words[4 + 2 * mk:4 + 2 * mk + len(rs)] = rs
    words[4 + 2 * mk + mr:4 + 2 * mk + mr + len(rs)] = rst[0]
    ct = wgsl.value_type(a.dtype)
    key = ("reduce", name, a.dtype.name, out_dtype.name, acc_t, mk, mr, arg, val, init, combine)

    def source():
        decl = wgsl.bindings(out_dtype, [a.dtype])
        if arg:  # the indices: a second output, bound after the parameters
            decl += "@group(0) @binding(3) var<storage, read_write> oi: array<i32>;\n"
        same = "(v == acc || (isnan_(v) && isnan_(acc)))" if _isf(a.dtype) else "(v == acc)"
        if arg:
            fold = f"if (ai < 0 || {combine}) {{ acc = v; ai = j; }}"
            tree = (f"let v = sh[lid + s]; let j = si[lid + s]; "
                    f"if (j >= 0 && (ai < 0 || ({combine}) || ({same} && j < ai))) {{ acc = v; ai = j; }} "
                    "sh[lid] = acc; si[lid] = ai;")
            store = f"out[o] = {wgsl.store(out_dtype, 'acc')}; oi[o] = ai;"
        else:
            fold = f"acc = {combine};"
            tree = f"let v = sh[lid + s]; acc = {combine}; sh[lid] = acc;"
            store = f"out[o] = {wgsl.store(out_dtype, 'acc')};"
        return (wgsl.header(a.dtype, out_dtype) + decl + wgsl.helpers(ct) +
                f"var<workgroup> sh: array<{acc_t}, {L}>;\nvar<workgroup> si: array<i32, {L}>;\n"
                f"@compute @workgroup_size({L})\nfn main(@builtin(workgroup_id) wid: vec3<u32>, "
                "@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {\n"
                " let o = i32(wid.y * nw.x + wid.x); let lid = i32(lid3.x);\n"
                f" let nout = P[{4 + 2 * mk + 2 * mr}];\n"
                " var r = o; var base = P[3];\n"
                f" for (var d = 0; d < P[0]; d++) {{ let c = r % P[4 + d]; r = r / P[4 + d]; base += c * P[{4 + mk} + d]; }}\n"
                f" var acc: {acc_t} = {init}; var ai = -1;\n"
                f" if (o < nout) {{ for (var j = lid; j < P[2]; j += {L}) {{\n"
                "  var q = j; var off = 0;\n"
                f"  for (var d = 0; d < P[1]; d++) {{ let c = q % P[{4 + 2 * mk} + d]; q = q / P[{4 + 2 * mk} + d]; "
                f"off += c * P[{4 + 2 * mk + mr} + d]; }}\n"
                f"  let x = {wgsl.load(a.dtype, 'A0[base + off]')}; let v = {acc_t}({val}); {fold}\n }} }}\n"
                " sh[lid] = acc; si[lid] = ai; workgroupBarrier();\n"
                f" for (var s = {L // 2}; s > 0; s = s / 2) {{\n  if (lid < s) {{ {tree} }}\n"
                "  workgroupBarrier(); acc = sh[lid]; ai = si[lid];\n }\n"
                f" if (lid == 0 && o < nout) {{ {store} }}\n}}\n")
    pipe = dev.pipeline(key, source)
    gx = min(nout, _MAXG)
    gy = -(-nout // gx)
    bufs = [out.buf.mem, a.buf.mem, dev.param_buffer(words + [nout])] + ([idx.buf.mem] if arg else [])
    dev.launch(pipe, bufs, (gx, gy, 1))
    return (out, idx) if arg else out


def _red(name):
    def k(be, a, dims, keepdim, dtype=None):
        dt = a.dtype
        f = _isf(dt)
        if name in ("sum", "prod"):
            out_dt = dtype or (dt if f else _dt.int64)
            acc = "f32" if _isf(out_dt) else "i32"
            init = f"{acc}(0)" if name == "sum" else f"{acc}(1)"
            comb = "acc + v" if name == "sum" else "acc * v"
            return _reduce(be, a, dims, keepdim, init, comb, acc, out_dt, name)
        if name in ("all", "any"):
            init = "1" if name == "all" else "0"
            comb = "(acc & v)" if name == "all" else "(acc | v)"
            val = "select(0, 1, x != CT(0) || isnan_(x))" if f else "select(0, 1, x != 0)"
            return _reduce(be, a, dims, keepdim, init, comb, "i32", _dt.bool, name, val=val)
        fn = "max" if name == "amax" else "min"
        vt = wgsl.value_type(dt)
        if f:
            init = "inf_()" if fn == "min" else "-inf_()"
            op = ">" if fn == "max" else "<"
            comb = f"select(select(acc, v, v {op} acc), select(acc, v, isnan_(v)), isnan_(v) || isnan_(acc))"
        else:
            init = {"max": "-2147483647 - 1", "min": "2147483647"}[fn] if dt.name != "bool" else \
                ("0" if fn == "max" else "1")
            comb = f"{fn}(acc, v)"
        return _reduce(be, a, dims, keepdim, init, comb, vt, dt, name)
    return k


for _n in ("sum", "prod", "amax", "amin", "all", "any"):
    KERNELS.add(_n, _red(_n))


def _arg_red(fn, values):
    def k(be, a, dim, keepdim):
        dt = a.dtype
        f = _isf(dt)
        op = ">" if fn == "max" else "<"
        comb = f"((isnan_(v) && !isnan_(acc)) || (!isnan_(acc) && v {op} acc))" if f else f"(v {op} acc)"
        vt = wgsl.value_type(dt)
        init = f"{vt}(0)"
        if a.ndim == 0:
            vals, idx = _reduce(be, a.view((1,), (0,)), (0,), False, init, comb, vt, dt, "arg" + fn, arg=True)
            vals, idx = vals.view((), ()), idx.view((), ())
        else:
            vals, idx = _reduce(be, a, (dim,), keepdim, init, comb, vt, dt, "arg" + fn, arg=True)
        return (vals, idx) if values else idx
    return k


KERNELS.add("max_dim", _arg_red("max", True))
KERNELS.add("min_dim", _arg_red("min", True))
KERNELS.add("argmax", _arg_red("max", False))
KERNELS.add("argmin", _arg_red("min", False))


def any_nonzero(be, a):
    """Whether any element of the bool array ``a`` is true (read back to the host)."""
    r = _red("any")(be, a, tuple(range(a.ndim)), False)
    return bool(be.to_numpy(r))



def _scan(name):
    def k(be, a, dim, dtype=None):
        out_dt = dtype or (a.dtype if _isf(a.dtype) else _dt.int64)
        if a.ndim == 0:
            return be.cast(a, out_dt)
        n = a.shape[dim]
        perm = [d for d in range(a.ndim) if d != dim] + [dim]
        src = a.permute(perm)
        dev = a.buf.dev
        out = be._empty(src.shape, out_dt, dev)
        rows = math.prod(src.shape[:-1])
        if rows and n:
            # one invocation per row, its strided start from the elementwise index code over the rows
            rshape = src.shape[:-1] or (1,)
            rin = src.view(rshape, src.strides[:-1] or (0,))
            rout = out.view(rshape, out.strides[:-1] or (0,))
            cs, cst = _collapse(list(rshape), [list(rout.strides), list(rin.strides)])
            if not cs:
                cs, cst = [1], [[0], [0]]
            m = max(wgsl.MAXD, len(cs))
            words = wgsl.meta(cs, cst, [rout.offset, rin.offset], m)
            acc = "f32" if _isf(out_dt) else "i32"
            op = "+" if name == "sum" else "*"
            nw = len(words)

            def source():
                return (wgsl.header(a.dtype, out_dt) + wgsl.bindings(out_dt, [a.dtype]) + wgsl.GID +
                        " if (gid >= P[1]) { return; }\n" + wgsl.index_code(2, m) +
                        f"\n let n = P[{nw}]; let sa = P[{nw + 1}]; let so = P[{nw + 2}];\n"
                        f" var acc = {acc}({0 if name == 'sum' else 1});\n"
                        f" for (var k = 0; k < n; k++) {{ acc = acc {op} {acc}({wgsl.load(a.dtype, 'A0[p1 + k * sa]')}); "
                        f"out[p0 + k * so] = {wgsl.store(out_dt, 'acc')}; }}\n}}\n")
            pipe = dev.pipeline(("scan", name, a.dtype.name, out_dt.name, m), source)
            dev.launch(pipe, [out.buf.mem, a.buf.mem, dev.param_buffer(list(words) + [n, src.strides[-1], 1])],
                       dev.groups_1d(rows))
        inv = [0] * a.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        return out.permute(inv)
    return k


KERNELS.add("cumsum", _scan("sum"))
KERNELS.add("cumprod", _scan("prod"))


def _sort_impl(be, a, dim, descending):
    """Rank sort: each element's rank in its row (ties in index order, so stable; NaN sorts as the largest value,
    as in PyTorch) is its position. O(n^2) per row, but one parallel pass with no synchronisation."""
    if a.ndim == 0:
        a = a.view((1,), (0,))
    n = a.shape[dim]
    perm = [d for d in range(a.ndim) if d != dim] + [dim]
    src = be._copy(a.permute(perm))
    dev = a.buf.dev
    vals = be._empty(src.shape, a.dtype, dev)
    idx = be._empty(src.shape, _dt.int64, dev)
    if src.size:
        if _isf(a.dtype):
            lt = "((!isnan_(x) && isnan_(y)) || x < y)" if not descending else "((isnan_(x) && !isnan_(y)) || x > y)"
            eq = "(x == y || (isnan_(x) && isnan_(y)))"
        else:
            lt = "(x < y)" if not descending else "(x > y)"
            eq = "(x == y)"
        st = STORAGE[a.dtype.name]

        def source():
            return (wgsl.header(a.dtype) +
                    f"@group(0) @binding(0) var<storage, read_write> vals: array<{st}>;\n"
                    "@group(0) @binding(1) var<storage, read_write> idx: array<i32>;\n"
                    f"@group(0) @binding(2) var<storage, read> A0: array<{st}>;\n"
                    "@group(0) @binding(3) var<storage, read> P: array<i32>;\n" +
                    wgsl.helpers(wgsl.value_type(a.dtype)) + wgsl.GID +
                    " let n = P[0]; if (gid >= P[1]) { return; }\n"
                    " let row = gid / n; let i = gid % n; let base = row * n;\n"
                    f" let y = {wgsl.load(a.dtype, 'A0[base + i]')}; var r = 0;\n"
                    f" for (var j = 0; j < n; j++) {{ let x = {wgsl.load(a.dtype, 'A0[base + j]')}; "
                    f"if ({lt} || ({eq} && j < i)) {{ r++; }} }}\n"
                    " vals[base + r] = A0[base + i]; idx[base + r] = i;\n}\n")
        pipe = dev.pipeline(("sort", a.dtype.name, descending), source)
        dev.launch(pipe, [vals.buf.mem, idx.buf.mem, src.buf.mem, dev.param_buffer([n, src.size])],
                   dev.groups_1d(src.size))
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
