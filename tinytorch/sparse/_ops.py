"""Sparse ops: what an op call with a sparse argument runs (``sparse_call``, the dispatcher's hook), plus the
conversions and constructors the public functions use.

Every sparse op is index bookkeeping (new index tensors, computed without autograd) plus a dense function of
its inputs' value tensors (``_apply``): the function runs on detached copies under a small local graph, and the
op's node hands the incoming gradient to that graph (``autograd.grad``), so each op's derivative comes from the
dense ops it is written in. A sparse input's gradient is sparse with that input's indices, as PyTorch's
(``sparse_mask``); where PyTorch gives another gradient (``torch.mm``'s dense one) an op says so.
"""
import builtins

from .. import _dtype as _dt
from .. import _layout
from ..autograd.engine import Node, edge_of
from ..autograd.grad_mode import _state, enable_grad
from .._tensor import Tensor
from ._tensor import _layout_name, coo, csr, dispatch_key, is_sparse


def _tt():
    import tinytorch
    return tinytorch


# ---- autograd ------------------------------------------------------------------------------------------------

class SparseNode(Node):
    """The graph node of one sparse op call: ``backward(grad)`` gives one gradient (or None) per input."""

    __slots__ = ("_name", "_backward")

    def __init__(self, name, edges, backward):
        Node.__init__(self, edges)
        self._name, self._backward = name, backward

    def name(self):
        return self._name

    def apply(self, grads):
        if self._backward is None:
            from .._dispatch import _raise_released
            _raise_released()
        return self._backward(grads[0])

    def release(self):
        self._backward = None


def _leaf(x):
    """The dense tensor a sparse op's function reads for input ``x``: its values, or ``x`` itself."""
    return x._sp_values if is_sparse(x) else x


def _apply(name, inputs, fn, build, grads=None):
    """``build(fn(*leaves))``: ``leaves`` are the inputs' value tensors (dense inputs as they are); ``build``
    wraps the dense result (into a sparse tensor, or not). With grad mode on and an input requiring grad, the
    output gets a ``SparseNode`` named ``name``: the incoming gradient, read at the output's positions, is
    pulled back through ``fn``; a sparse input's gradient is sparse over its own indices. ``grads`` maps an
    input position to a function of the incoming gradient that replaces that input's gradient."""
    need = [x.requires_grad for x in inputs]
    if not (_state.enabled and builtins.any(need)):
        return build(fn(*[_leaf(x) for x in inputs]))
    ins = [_leaf(x).detach().requires_grad_() if n else _leaf(x).detach() for x, n in zip(inputs, need)]
    with enable_grad():
        r = fn(*ins)
    out = build(r.detach())
    from ..autograd import grad as _grad
    wrt = [i for i, n in enumerate(need) if n and not (grads and i in grads)]
    pattern = out.detach() if is_sparse(out) else None  # the output's indices, without a cycle through its node

    def backward(g):
        res = [None] * len(inputs)
        if wrt:
            gr = _values_at(g, pattern) if pattern is not None else (to_dense(g) if is_sparse(g) else g)
            got = _grad([r], [ins[i] for i in wrt], [gr.to(r.dtype)], retain_graph=True, allow_unused=True)
            for i, gi in zip(wrt, got):
                if gi is not None:
                    res[i] = grad_like(inputs[i], gi) if is_sparse(inputs[i]) else gi
        for i, f in (grads or {}).items():
            if need[i]:
                res[i] = f(g)
        return res
    out.grad_fn = SparseNode(name, tuple(edge_of(x) if n else None for x, n in zip(inputs, need)), backward)
    out.requires_grad = True
    return out


def _through(x, f=None):
    """The ``grads`` entry of an op linear in its sparse input ``x`` (a copy, a cast, a scaling, a transpose):
    the incoming gradient, dense or sparse, goes back through the op's adjoint ``f`` unmasked, as PyTorch's
    (the mask comes only where a sparse tensor meets a dense one: ``to_dense``, ``sparse.mm``)."""
    def back(g):
        g = f(g) if f is not None else g
        if g.dtype is not x.dtype:
            g = g.to(x.dtype)
        return g.to(x.device) if g.device != x.device else g
    return back


def _in_layout(x):
    """The adjoint of a layout conversion: the gradient (dense or sparse) in ``x``'s layout, as PyTorch's."""
    return _through(x, lambda g: to_layout(g, x.layout))


def _values_at(g, x):
    """The gradient ``g`` of sparse ``x`` (sparse or dense) read at ``x``'s stored positions: (nnz, *dense)."""
    if is_sparse(g):
        if g._layout is x._layout and g._sp_indices is x._sp_indices and g._crow is x._crow and g._col is x._col:
            return g._sp_values
        g = to_dense(g)
    return g[tuple(coo_indices(x))]


def grad_like(s, gv):
    """The gradient of sparse ``s`` given ``gv``, the gradient of its stored values: sparse over ``s``'s
    positions, each position once (duplicates of an uncoalesced ``s`` share one gradient, as the tensor only
    sees their sum), as PyTorch's."""
    if s._layout is not _layout.sparse_coo or s._coalesced or s._sp_indices._shape[1] == 0:
        return like(s, gv)
    idx = s._sp_indices
    sizes = s._shape[:idx._shape[0]]
    uniq, inv = _tt().unique(_linear(idx, sizes), sorted=True, return_inverse=True)
    first = _tt().zeros((uniq._shape[0],) + gv._shape[1:], dtype=gv.dtype, device=gv.device)
    return coo(_unlinear(uniq, sizes), first.index_put((inv,), gv), s._shape, True)


def like(s, values):
    """A sparse tensor with ``s``'s layout, shape and indices, holding ``values``."""
    if s._layout is _layout.sparse_coo:
        return coo(s._sp_indices, values, s._shape, s._coalesced)
    return csr(s._crow, s._col, values, s._shape)


# ---- structure -----------------------------------------------------------------------------------------------

def sparse_dim(s):
    """Dims of sparse ``s`` addressed by its indices (2 for CSR)."""
    return s._sp_indices._shape[0] if s._layout is _layout.sparse_coo else 2


def coo_indices(s):
    """(sparse_dim, nnz) int64 coordinates of ``s``'s stored values (a CSR tensor's rows expanded)."""
    if s._layout is _layout.sparse_coo:
        return s._sp_indices
    t = _tt()
    rows = t.repeat_interleave(t.arange(s._shape[0], device=s.device), s._crow.diff())
    return t.stack([rows, s._col])


def _linear(idx, sizes):
    key = idx[0]
    for d in range(1, len(sizes)):
        key = key * sizes[d] + idx[d]
    return key


def _unlinear(key, sizes):
    rows = []
    for s in reversed(sizes[1:]):
        rows.append(key % s)
        key = key.div(s, rounding_mode="floor")
    rows.append(key)
    return _tt().stack(rows[::-1]) if rows else key.reshape(0, key._shape[0])


def _segment_sum(v, inv, n):
    """Row ``j`` of the result: the sum of the rows ``i`` of ``v`` with ``inv[i] == j`` (n rows)."""
    return _tt().zeros((n,) + v._shape[1:], dtype=v.dtype, device=v.device).index_add(0, inv, v)


def coalesce(s):
    """``Tensor.coalesce``: duplicates summed, indices sorted (``s`` itself when already coalesced)."""
    if s.layout is not _layout.sparse_coo:
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {_layout_name(s)}")
    if s._coalesced:
        return s
    idx = s._sp_indices
    k = idx._shape[0]
    if idx._shape[1] == 0:
        return _apply("CoalesceBackward0", [s], lambda v: v.clone(), lambda r: coo(idx, r, s._shape, True),
                      {0: _through(s)})
    sizes = s._shape[:k]
    uniq, inv = _tt().unique(_linear(idx, sizes), sorted=True, return_inverse=True)
    new = _unlinear(uniq, sizes)
    n = uniq._shape[0]
    return _apply("CoalesceBackward0", [s], lambda v: _segment_sum(v, inv, n),
                  lambda r: coo(new, r, s._shape, True), {0: _through(s)})


def to_dense(s, dtype=None):
    """The dense tensor ``s`` stands for (duplicates summed); its gradient is sparse over ``s``'s indices."""
    out = _apply("ToDenseBackward0", [s], lambda v: _densify(s, v), lambda r: r)
    return out if dtype is None else out.to(dtype)


def _densify(s, v):
    """The dense tensor of ``s``'s shape holding values ``v`` at ``s``'s positions (duplicates summed)."""
    z = _tt().zeros(s._shape, dtype=v.dtype, device=v.device)
    return z.index_put(tuple(coo_indices(s)), v, accumulate=True) if v._shape[0] else z


def dense_to_coo(x, k):
    """Dense ``x`` as a coalesced COO tensor with ``k`` sparse dims (a slice over the other dims is stored when
    any of its elements is nonzero)."""
    if not 0 < k <= x.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{x.ndim}] range, but {k} is given"
                           if k > x.ndim or k < 0 else "tinytorch: to_sparse(0) (no sparse dims) is not supported")
    m = x.detach() != 0
    if x.ndim > k:
        m = m.flatten(k).any(-1)
    idx = m.nonzero().t().contiguous()
    return _apply("ToSparseBackward0", [x], lambda d: d[tuple(idx)], lambda r: coo(idx, r, x._shape, True))


def coo_to_csr(s):
    """2-D COO ``s`` (no dense dims) as CSR; rows in order, duplicates summed."""
    if s.ndim != 2 or sparse_dim(s) != 2:
        raise RuntimeError("tinytorch: only 2-D sparse tensors without dense dims convert to sparse_csr, got "
                           f"a {s.ndim}-D tensor with {sparse_dim(s)} sparse dims")
    c = coalesce(s)
    t = _tt()
    row, col = c._sp_indices
    counts = t.bincount(row, minlength=s._shape[0])
    crow = t.cat([t.zeros(1, dtype=_dt.int64, device=s.device), counts.cumsum(0)])
    return _apply("ToSparseCsrBackward0", [c], lambda v: v.view_as(v), lambda r: csr(crow, col.contiguous(), r,
                                                                                        s._shape),
                  {0: _in_layout(c)})


def csr_to_coo(s):
    idx = coo_indices(s)
    return _apply("ToSparseCooBackward0", [s], lambda v: v.view_as(v), lambda r: coo(idx, r, s._shape, True),
                  {0: _in_layout(s)})


def to_layout(x, layout):
    """``x`` (dense or sparse) in ``layout``."""
    if x.layout is layout:
        return x
    if layout is _layout.strided:
        return to_dense(x)
    if layout is _layout.sparse_coo:
        return csr_to_coo(x) if is_sparse(x) else dense_to_coo(x, x.ndim)
    return coo_to_csr(x if is_sparse(x) else dense_to_coo(x, x.ndim))


# ---- the dispatcher's hook ------------------------------------------------------------------------------------

_ATEN = {"to_dtype": "_to_copy", "to_copy": "_to_copy", "index": "index.Tensor", "clone": "clone"}


def _not_supported(name, key):
    aten = "aten::" + _ATEN.get(name, name)
    return NotImplementedError(
        f"Could not run '{aten}' with arguments from the '{key}' backend. This could be because the operator "
        "doesn't exist for this backend, or was omitted during the selective/custom build process (if using "
        "custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        "https://fburl.com/ptmfixes for possible resolutions.")


def sparse_call(op, args, kw):
    """Run dispatcher op ``op`` on ``args`` of which at least one is sparse: its sparse implementation, the
    decomposition of a composite op (whose inner ops come back here), or PyTorch's NotImplementedError."""
    impl = IMPLS.get(op.name)
    csr_arg = next((a for a in args if is_sparse(a) and a._layout is _layout.sparse_csr), None)
    if csr_arg is not None and op.name not in _CSR_OK and op.elementwise:
        raise RuntimeError("unsupported tensor layout: SparseCsr")  # PyTorch's CSR elementwise fallback says so
    if impl is None:
        if op.meta is None and not op.mutates:
            return op.decomp(*args, **kw)
        raise _not_supported(op.name, dispatch_key(next(a for a in args if is_sparse(a))))
    if csr_arg is not None and op.name not in _CSR_OK:
        raise _not_supported(op.name, dispatch_key(csr_arg))
    return impl(*args, **kw)


def _csr_back(fn):
    """An op on a CSR tensor computed on its COO form, its sparse result turned back into CSR."""
    def run(*args, **kw):
        csr_in = builtins.any(is_sparse(a) and a._layout is _layout.sparse_csr for a in args)
        args = tuple(csr_to_coo(a) if is_sparse(a) and a._layout is _layout.sparse_csr else a for a in args)
        out = fn(*args, **kw)
        return coo_to_csr(out) if csr_in and is_sparse(out) else out
    run.__name__ = fn.__name__
    return run


def _is_scalar(x):
    return not isinstance(x, Tensor) or (not is_sparse(x) and x.ndim == 0)


def _sizes(a):
    return list(a._shape)


def _add(a, b, alpha=1, _sign=1, _name="AddBackward0"):
    t = _tt()
    if is_sparse(a) and not is_sparse(b):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if a._shape != b._shape:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but {_sizes(a)} != {_sizes(b)}")
    scale = alpha * _sign
    if not is_sparse(a):  # dense + sparse: dense (its type promotion is the dense add's)
        return _apply(_name, [a, b], lambda d, v: t.add(d, _densify(b, v), alpha=scale), lambda r: r,
                      {1: _through(b, lambda g: g * scale)})
    if sparse_dim(a) != sparse_dim(b):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same sparse dimensions, but got "
                           f"{sparse_dim(a)} != {sparse_dim(b)}")
    dtype = _dt.promote_types(a.dtype, b.dtype)
    idx = t.cat([a._sp_indices, b._sp_indices], 1)
    k = sparse_dim(a)
    if idx._shape[1]:
        uniq, inv = t.unique(_linear(idx, a._shape[:k]), sorted=True, return_inverse=True)
        new, n = _unlinear(uniq, a._shape[:k]), uniq._shape[0]
    else:
        inv, new, n = idx[0], idx, 0

    def fn(va, vb):
        v = t.cat([va.to(dtype), vb.to(dtype) * scale if scale != 1 else vb.to(dtype)])
        return _segment_sum(v, inv, n)
    return _apply(_name, [a, b], fn, lambda r: coo(new, r, a._shape, True),
                  {0: _through(a), 1: _through(b, lambda g: g * scale)})


def _sub(a, b, alpha=1):
    if is_sparse(a) and not is_sparse(b):
        raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")
    return _add(a, b, alpha, -1, "SubBackward0")


def _mul(a, b):
    t = _tt()
    if is_sparse(a) and is_sparse(b):
        if a.ndim != b.ndim or sparse_dim(a) != sparse_dim(b) or a._shape[:sparse_dim(a)] != b._shape[:sparse_dim(b)]:
            raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with equal dimensionality, "
                               "number of sparse dimensions, and shape of sparse dimensions")
        ca, cb = coalesce(a), coalesce(b)
        k = sparse_dim(a)
        ka, kb = _linear(ca._sp_indices, a._shape[:k]), _linear(cb._sp_indices, a._shape[:k])
        if kb._shape[0]:
            pos = t.searchsorted(kb, ka).clamp(max=kb._shape[0] - 1)
            hit = kb[pos] == ka
        else:
            pos = hit = t.zeros(ka._shape[0], dtype=_dt.bool, device=a.device)
        sel, pb = hit.nonzero().flatten(), pos[hit]
        idx = ca._sp_indices[:, sel]
        return _apply("MulBackward0", [ca, cb], lambda va, vb: va[sel] * vb[pb],
                      lambda r: coo(idx, r, a._shape, True))
    s, d = (a, b) if is_sparse(a) else (b, a)
    if _is_scalar(d):
        if isinstance(d, Tensor):
            return _apply("MulBackward0", [s, d], lambda v, x: v * x, lambda r: like(s, r),
                          {0: _through(s, lambda g: g * d.detach())})
        return _apply("MulBackward0", [s], lambda v: v * d, lambda r: like(s, r), {0: _through(s, lambda g: g * d)})
    t.broadcast_shapes(d._shape, s._shape)  # PyTorch's message names the dense operand first
    idx = tuple(coo_indices(s))
    # the dense operand broadcast to the sparse one's shape, read at its stored positions
    return _apply("MulBackward0", [s, d], lambda v, x: v * x.expand(s._shape)[idx], lambda r: like(s, r))


def _div(a, b, rounding_mode=None):
    if not _is_scalar(b):
        raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                           f"{_sizes(b)} for divisor)")
    t = _tt()
    if isinstance(b, Tensor):
        return _apply("DivBackward0", [a, b], lambda v, x: t.div(v, x, rounding_mode=rounding_mode),
                      lambda r: like(a, r), None if rounding_mode else {0: _through(a, lambda g: g / b.detach())})
    return _apply("DivBackward0", [a], lambda v: t.div(v, b, rounding_mode=rounding_mode), lambda r: like(a, r),
                  None if rounding_mode else {0: _through(a, lambda g: g / b)})


def _unary(name):
    def run(x):
        t = _tt()
        if name != "neg" and x._layout is _layout.sparse_coo:
            x = coalesce(x)  # f(a) + f(b) is not f(a + b): duplicates are summed first, as PyTorch does
        return _apply(name[:1].upper() + name[1:] + "Backward0", [x], getattr(t, name), lambda r: like(x, r),
                      {0: _through(x, lambda g: -g)} if name == "neg" else None)
    run.__name__ = name
    return run


def _sum(x, dims=None, keepdim=False, dtype=None):
    """``Tensor.sum`` of a sparse tensor: over every dim, a dense 0-dim tensor whose gradient is dense, as
    PyTorch's; over some dims, ``torch.sparse.sum``'s result."""
    if dims is None or len(dims) == x.ndim:
        if keepdim:
            raise _not_supported("sum.dim_IntList", dispatch_key(x))
        return _apply("SumBackward0", [x], lambda v: v.sum(dtype=dtype), lambda r: r,
                      grads={0: lambda g: g.expand(x._shape).to(x.dtype)})
    if x._layout is _layout.sparse_csr:
        raise RuntimeError(f"reduction operations on CSR tensors with keepdim={keepdim} is unsupported")
    if keepdim:
        raise _not_supported("sum.dim_IntList", dispatch_key(x))
    return sparse_sum(x, dims, dtype)


def sparse_sum(x, dims=None, dtype=None):
    """``torch.sparse.sum``: the sum over ``dims`` (all when None) of COO ``x``; a dense tensor when every
    sparse dim is summed, else a coalesced COO tensor. Gradient sparse over ``x``'s indices."""
    t = _tt()
    if dims is None:
        return _apply("SparseSumBackward0", [x], lambda v: v.sum(dtype=dtype), lambda r: r)
    k = sparse_dim(x)
    dims = sorted({d % x.ndim if x.ndim else d for d in dims})
    sp = [d for d in dims if d < k]
    dn = [d - k + 1 for d in dims if d >= k]  # value dims (dim 0 of the values is nnz)
    keep = [d for d in range(k) if d not in sp]
    shape = tuple(s for d, s in enumerate(x._shape) if d not in dims)

    def reduce_dense(v):
        v = v.sum(dn) if dn else v
        return v.to(dtype) if dtype is not None else v
    if not keep:
        return _apply("SparseSumBackward0", [x], lambda v: reduce_dense(v).sum(0), lambda r: r)
    idx = x._sp_indices[keep]
    sizes = tuple(x._shape[d] for d in keep)
    if idx._shape[1]:
        uniq, inv = t.unique(_linear(idx, sizes), sorted=True, return_inverse=True)
        new, n = _unlinear(uniq, sizes), uniq._shape[0]
    else:
        inv, new, n = idx[0], idx, 0
    return _apply("SparseSumBackward0", [x], lambda v: _segment_sum(reduce_dense(v), inv, n),
                  lambda r: coo(new, r, shape, True))


def _check_mm(s, d, sparse_first):
    if s.ndim != 2 or sparse_dim(s) != 2:
        raise RuntimeError(f"tinytorch: the sparse matrix of a product must be 2-D with 2 sparse dims, got "
                           f"{s.ndim}-D with {sparse_dim(s)} sparse dims")
    if d.ndim != 2:
        raise RuntimeError(f"{'mat2' if sparse_first else 'self'} must be a matrix")
    if s.dtype is not d.dtype:
        a, b = (s, d) if sparse_first else (d, s)
        raise RuntimeError(f"expected scalar type {_dt_name(a.dtype)} but found {_dt_name(b.dtype)}")
    if sparse_first and d._shape[0] != s._shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._shape[1]}, got {d._shape[0]}")
    if not sparse_first and d._shape[1] != s._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d._shape[0]}x{d._shape[1]} and "
                           f"{s._shape[0]}x{s._shape[1]})")


def _dt_name(dt):
    from .._dispatch import _TYPE_NAMES
    return _TYPE_NAMES[dt.name]


def spmm(s, d, dense_grad):
    """Sparse ``s`` (n, k) times dense ``d`` (k, p): dense (n, p), each stored value's row of ``d`` scaled and
    added into its output row. ``dense_grad``: ``s``'s gradient is dense (``torch.mm``) instead of sparse over
    its indices (``torch.sparse.mm``)."""
    _check_mm(s, d, True)
    t = _tt()
    row, col = coo_indices(s)
    n, p = s._shape[0], d._shape[1]

    def fn(v, x):
        z = t.zeros((n, p), dtype=x.dtype, device=x.device)
        return z.index_add(0, row, v.unsqueeze(1) * x.index_select(0, col))
    grads = {0: lambda g: t.mm(g, d.detach().t())} if dense_grad else None
    return _apply("MmBackward0" if dense_grad else "SparseAddmmBackward0", [s, d], fn, lambda r: r, grads)


def dense_spmm(d, s):
    """Dense ``d`` (n, k) times sparse ``s`` (k, m): dense (n, m)."""
    _check_mm(s, d, False)
    t = _tt()
    row, col = coo_indices(s)
    n, m = d._shape[0], s._shape[1]

    def fn(x, v):
        z = t.zeros((n, m), dtype=x.dtype, device=x.device)
        return z.index_add(1, col, x.index_select(1, row) * v)
    return _apply("MmBackward0", [d, s], fn, lambda r: r, {1: lambda g: t.mm(d.detach().t(), g)})


def matmul(a, b, dense_grad=True):
    """The product of two matrices of which one or both are sparse (both: a sparse COO result)."""
    if is_sparse(a) and is_sparse(b):
        return dense_to_coo(spmm(a, to_dense(b), dense_grad), 2)
    return spmm(a, b, dense_grad) if is_sparse(a) else dense_spmm(a, b)


def _permute(x, dims):
    k = sparse_dim(x)
    moved = [i for i, d in enumerate(dims) if d != i]
    if any(i >= k for i in moved):
        d0, d1 = (moved + [0, 0])[:2]
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: {k}, d0: {d0}, "
                           f"d1: {d1}")
    if x._layout is _layout.sparse_csr:
        raise _not_supported("permute", dispatch_key(x))
    idx = x._sp_indices[list(dims[:k])]
    shape = tuple(x._shape[d] for d in dims)
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return _apply("TransposeBackward0", [x], lambda v: v.view_as(v),
                  lambda r: coo(idx, r, shape, not moved and x._coalesced), {0: _through(x, lambda g: g.permute(inverse))})


def _to_dtype(x, dtype):
    return _apply("ToCopyBackward0", [x], lambda v: v.to(dtype), lambda r: like(x, r), {0: _through(x)})


def _to_copy(x, device, to):
    parts = {k: getattr(x, k) for k in ("_sp_indices", "_crow", "_col")}
    moved = {k: (v.to(to) if v is not None else None) for k, v in parts.items()}

    def build(r):
        if x._layout is _layout.sparse_coo:
            return coo(moved["_sp_indices"], r, x._shape, x._coalesced)
        return csr(moved["_crow"], moved["_col"], r, x._shape)
    return _apply("ToCopyBackward0", [x], lambda v: v.to(to), build, {0: _through(x)})


def _clone(x):
    out = _apply("CloneBackward0", [x], lambda v: v.clone(), lambda r: like(x, r), {0: _through(x)})
    if x._layout is _layout.sparse_coo:
        out._sp_indices = x._sp_indices.clone()
    else:
        out._crow, out._col = x._crow.clone(), x._col.clone()
    return out


def _copy(dst, src, op="copy_"):
    """The write step for a sparse destination (``copy_`` and every in-place op on a sparse tensor): ``dst``
    takes ``src``'s indices and values (and, for autograd, its history); a dense destination takes the dense
    form of a sparse ``src``."""
    if not is_sparse(dst):
        return dst.copy_(to_dense(src))
    if not is_sparse(src):
        raise _not_supported("copy_", dispatch_key(dst))
    if dst._shape != src._shape:
        raise RuntimeError(f"{op}: sizes do not match: {_sizes(dst)} and {_sizes(src)}")
    if src._layout is not dst._layout:
        src = to_layout(src, dst._layout)
    if src.device != dst.device or src.dtype is not dst.dtype:
        src = src.to(dst.device).to(dst.dtype)
    dst._sp_indices, dst._crow, dst._col = src._sp_indices, src._crow, src._col
    dst._sp_values, dst._coalesced = src._sp_values, src._coalesced
    dst._storage._version[0] += 1
    if _state.enabled and src.requires_grad:
        dst.grad_fn, dst._output_nr, dst.requires_grad = src.grad_fn, src._output_nr, True
    return dst


IMPLS = {
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "sum": _sum, "matmul": matmul, "permute": _permute,
    "to_dtype": _to_dtype, "to_copy": _to_copy, "clone": _clone, "copy_": _copy,
}
# zero-preserving elementwise ops PyTorch runs on the values alone
_UNARY = ("neg", "abs", "sin", "sqrt", "tanh", "relu", "sign", "floor", "ceil", "trunc", "expm1", "log1p")
for _n in _UNARY:
    IMPLS[_n] = _unary(_n)
# ops a CSR tensor takes (through its COO form where the result is sparse); PyTorch's CSR has no sub, div
_CSR_OK = {"add", "mul", "sum", "matmul", "to_dtype", "to_copy", "clone", "copy_"} | set(_UNARY)
for _n in ("add", "mul"):
    IMPLS[_n] = _csr_back(IMPLS[_n])
