"""Data movement and indexing: cat, flip, tril/triu, gather, index_select, advanced indexing, index_put, scatter
and index_add.

As on the opencl device, the ops whose targets depend on data compute the element offsets on the host from the
index values (read back once, as PyTorch reads back a boolean mask) and run a gather kernel or a segmented scatter
kernel: the targets are sorted, each invocation owns one target and folds its values in index order, so duplicates
combine deterministically and equal the cpu backend's results."""
import numpy as np

from ... import _dtype as _dt
from ..._strides import contiguous_strides
from . import wgsl
from .runtime import KERNELS, STORAGE, WGArray, _is_arr


@KERNELS.register("cat")
def _cat(be, *ts, dim):
    ref = next((t for t in ts if t.ndim != 1 or t.shape[0] != 0), ts[0])
    ts = [t for t in ts if t.ndim == ref.ndim]
    shape = list(ref.shape)
    shape[dim] = sum(t.shape[dim] for t in ts)
    out = be._empty(tuple(shape), ts[0].dtype, ts[0].buf.dev)
    pos = 0
    for t in ts:
        n = t.shape[dim]
        if n:
            be.copy_(out.view(t.shape, out.strides, out.offset + pos * out.strides[dim]), t)
        pos += n
    return out


@KERNELS.register("flip")
def _flip(be, a, dims):
    off, st = a.offset, list(a.strides)
    for d in dims:
        d %= a.ndim
        if a.shape[d]:
            off += (a.shape[d] - 1) * st[d]
        st[d] = -st[d]
    return be._copy(a.view(a.shape, st, off))


def _tri(be, a, diagonal, which):
    cond = "(c0 - c1 <= s0)" if which == "tril" else "(c0 - c1 >= s0)"
    zero = "false" if a.dtype.name == "bool" else f"{wgsl.value_type(a.dtype)}(0)"
    x = "(x0 != 0)" if a.dtype.name == "bool" else "x0"
    return be._ew(which, f"select({zero}, {x}, {cond})", [a], [(diagonal, _dt.int32)], a.dtype, a.shape,
                  coords=True)


KERNELS.add("tril", lambda be, a, diagonal: _tri(be, a, diagonal, "tril"))
KERNELS.add("triu", lambda be, a, diagonal: _tri(be, a, diagonal, "triu"))


@KERNELS.register("gather")
def _gather(be, a, index, dim):
    st = list(a.strides)
    sdim = st[dim] if a.ndim else 0
    if a.ndim:
        st[dim] = 0
    av = a.view(index.shape, st) if a.ndim else a.view(index.shape, [0] * index.ndim)
    return be._ew("gather", wgsl.load(a.dtype, "A0[p1 + x1 * s0]"), [av, index], [(sdim, _dt.int32)], a.dtype,
                  index.shape, ptr=(0,))


@KERNELS.register("index_select")
def _index_select(be, a, index, dim):
    if a.ndim == 0:
        return be._copy(a)
    shape = list(a.shape)
    shape[dim] = index.shape[0] if index.ndim else 1
    st = list(a.strides)
    sdim = st[dim]
    st[dim] = 0
    iv = index.view(shape, [index.strides[0] if (d == dim and index.ndim) else 0 for d in range(a.ndim)])
    return be._ew("index_select", wgsl.load(a.dtype, "A0[p1 + x1 * s0]"), [a.view(shape, st), iv],
                  [(sdim, _dt.int32)], a.dtype, shape, ptr=(0,))


def _upload(be, arr, dev):
    """A device int32 array of the host integer array ``arr`` (element offsets: they fit the 32-bit indices)."""
    arr = np.ascontiguousarray(arr, dtype=np.int32)
    buf = be._alloc(arr.size, _dt.int32, dev)
    if arr.size:
        dev.write(buf.mem, arr)
    return WGArray(buf, _dt.int32, arr.shape, contiguous_strides(arr.shape), 0)


def _take(be, a, sel):
    """out[i] = a's storage at element offsets ``sel`` (a host integer array); shape of ``sel``."""
    s = _upload(be, sel.reshape(-1), a.buf.dev)
    base = a.view(sel.shape, [0] * sel.ndim, 0)
    return be._ew("take", wgsl.load(a.dtype, "A0[x1]"), [base, s.view(sel.shape, contiguous_strides(sel.shape))],
                  [], a.dtype, sel.shape, ptr=(0,))


def _offsets(a):
    """Host array of ``a``'s element offsets into its buffer, shape of ``a``."""
    offs = np.full(a.shape, a.offset, np.int64)
    for d, (n, s) in enumerate(zip(a.shape, a.strides)):
        sh = [1] * a.ndim
        sh[d] = n
        offs = offs + (np.arange(n, dtype=np.int64) * s).reshape(sh)
    return offs


@KERNELS.register("index")
def _index(be, a, *indices, spec):
    host = [be.to_numpy(i) for i in indices]
    idx = tuple(host[s[1]] if isinstance(s, tuple) else s for s in spec)
    return _take(be, a, np.ascontiguousarray(_offsets(a)[idx]))


def _segmented(be, out, targets, values, mode):
    """out.flat[targets[j]] (op)= values.flat[j] for all j; duplicates combine in j order."""
    targets = targets.reshape(-1)
    if targets.size == 0:
        return out
    dev = out.buf.dev
    order = np.argsort(targets, kind="stable")
    t_sorted = targets[order]
    starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
    seg = np.r_[starts, t_sorted.size]
    uniq = t_sorted[starts]
    vals = values if values.is_contiguous() else be._copy(values)
    o_d, s_d, u_d = (_upload(be, x, dev) for x in (order, seg, uniq))
    dt = out.dtype
    vt = wgsl.value_type(dt)
    combine = {"set": "v", "add": "acc + v", "multiply": "acc * v"}[mode]
    if dt.name == "bool":
        combine = {"set": "v", "add": "(acc | v)", "multiply": "(acc & v)"}[mode]
    st = STORAGE[dt.name]

    def source():
        return (wgsl.header(dt) +
                f"@group(0) @binding(0) var<storage, read_write> out: array<{st}>;\n"
                f"@group(0) @binding(1) var<storage, read> vals: array<{st}>;\n"
                "@group(0) @binding(2) var<storage, read> order: array<i32>;\n"
                "@group(0) @binding(3) var<storage, read> seg: array<i32>;\n"
                "@group(0) @binding(4) var<storage, read> tgt: array<i32>;\n"
                "@group(0) @binding(5) var<storage, read> P: array<i32>;\n" + wgsl.GID +
                " if (gid >= P[1]) { return; }\n"
                f" var acc = {wgsl.load(dt, 'out[tgt[gid]]')};\n"
                f" for (var j = seg[gid]; j < seg[gid + 1]; j++) {{ let v = {wgsl.load(dt, 'vals[P[0] + order[j]]')}; "
                f"acc = {combine}; }}\n"
                f" out[tgt[gid]] = {wgsl.store(dt, 'acc')};\n}}\n")
    pipe = dev.pipeline(("segmented", dt.name, mode, vt), source)
    dev.launch(pipe, [out.buf.mem, vals.buf.mem, o_d.buf.mem, s_d.buf.mem, u_d.buf.mem,
                      dev.param_buffer([vals.offset, uniq.size])], dev.groups_1d(uniq.size))
    return out


@KERNELS.register("index_put")
def _index_put(be, a, values, *indices, spec, accumulate=False):
    out = be._copy(a)
    host = [be.to_numpy(i) for i in indices]
    idx = tuple(host[s[1]] if isinstance(s, tuple) else s for s in spec)
    sel = np.arange(out.size, dtype=np.int64).reshape(out.shape)[idx]
    if values.ndim > sel.ndim or any(v != 1 and v != s for v, s in zip(values.shape[::-1], sel.shape[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(sel.shape)}")
    vals = be._copy(be._expand(values, sel.shape))
    return _segmented(be, out, sel, vals, "add" if accumulate else "set")


@KERNELS.register("scatter")
def _scatter(be, a, index, src, dim, reduce=None):
    out = be._copy(a)
    ih = be.to_numpy(index)
    if a.ndim == 0:
        tg = np.zeros(ih.shape, np.int64)
    else:
        grids = np.indices(ih.shape, dtype=np.int64)
        grids[dim] = ih % a.shape[dim]
        tg = sum(g * s for g, s in zip(grids, out.strides))
    if _is_arr(src):
        vals = be._copy(src.view(ih.shape, src.strides) if src.ndim else src.view(ih.shape, [0] * ih.ndim))
    else:
        vals = be._ew("fill", "s0", [], [(src, a.dtype)], a.dtype, ih.shape)
    return _segmented(be, out, np.asarray(tg, np.int64), vals, reduce or "set")


@KERNELS.register("index_add")
def _index_add(be, a, index, src, dim, alpha=1):
    out = be._copy(a)
    ih = be.to_numpy(index).reshape(-1)
    if a.ndim == 0:
        tg = np.zeros(src.shape, np.int64)
    else:
        grids = np.indices(src.shape, dtype=np.int64)
        grids[dim] = ih[grids[dim]] % a.shape[dim]
        tg = sum(g * s for g, s in zip(grids, out.strides))
    vals = be._ew("scale", "(x0 * s0)", [src], [(alpha, a.dtype)], a.dtype, src.shape) if alpha != 1 else src
    return _segmented(be, out, np.asarray(tg, np.int64), vals, "add")
