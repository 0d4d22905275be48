"""Linear algebra: matmul (batched, broadcast), mm, bmm, addmm, baddbmm, dot, outer, addr, cross, einsum,
tensordot; matrix helpers (diag, diag_embed, diagflat, fill_diagonal_, trace, kron, vander, cdist)."""
import builtins

from .._dispatch import autocast_op, defop, dispatch, refuse
from .. import _strides
from .. import _dtype as _dt
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from .._geometry import parse_einsum as _parse_einsum
from ._util import method
from .reduce import _sum_op


def _matmul_meta(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    if a._shape[-1] != b._shape[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_strides.numel(a._shape[:-1])}x"
                           f"{a._shape[-1]} and {b._shape[-2]}x{b._shape[-1]})")
    if len(b._shape) == 2:  # a matrix on the right (linear's weight, the backward's products): a's batch dims
        return [(a._shape[:-1] + b._shape[-1:], a.dtype)], [None, None]
    batch = _strides.broadcast_shapes(a._shape[:-2], b._shape[:-2])
    return [(batch + (a._shape[-2], b._shape[-1]), a.dtype)], [None, None]


def _transposed(t):
    """True when ``t`` is the transpose of a contiguous matrix (e.g. ``weight.t()`` in ``linear``)."""
    return t.ndim == 2 and t._stride[0] == 1 and t._stride[1] == t._shape[0] and t._shape[0] > 1


def _matmul_bw(c, g):
    a, b = c.inputs
    ga = gb = None
    if c.next_edges[0] is not None:
        # give the gradient the input's layout, so its .grad is contiguous without a copy (as PyTorch's mm does)
        # a is saved only when b needs its gradient: without it, the plain layout
        ga = matmul(b, g.mT).mT if a is not None and _transposed(a) else matmul(g, b.mT)
    if c.next_edges[1] is not None:
        gb = matmul(g.mT, a).mT if b is not None and _transposed(b) and g.ndim == 2 and a.ndim == 2 else matmul(a.mT, g)
    return ga, gb


# mm's formulas: self's names mat2 only, mat2's names self only; each is saved for the other's gradient
_matmul_op = defop("matmul", _matmul_meta, _matmul_bw, save_inputs=((0, (1,)), (1, (0,))),
    refused=refuse(("bool",), NotImplementedError, "\"addmm_impl_cpu_\" not implemented for '{T}'"))


@method("matmul")
@autocast_op("lower")
def matmul(input, other, *, out=None):
    """Matrix product with NumPy/PyTorch semantics: 1-D operands are promoted and squeezed, batch dims
    broadcast. RuntimeError on shape or dtype mismatch (``torch.matmul``)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor")
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    a = input.unsqueeze(0) if input.ndim == 1 else input
    b = other.unsqueeze(-1) if other.ndim == 1 else other
    if input.ndim == 1 and other.ndim == 1 and input._shape[0] != other._shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input._shape[0]}] and src "
                           f"[{other._shape[0]}] to have the same number of elements, but got {input._shape[0]} and "
                           f"{other._shape[0]} elements respectively")
    r = dispatch(_matmul_op, (a, b))
    if other.ndim == 1:
        r = r.squeeze(-1)
    if input.ndim == 1:
        r = r.squeeze(-2 if other.ndim > 1 else -1)
    return r


method("__matmul__")(matmul)
method("__rmatmul__")(lambda self, other: matmul(other, self))


def _linear_meta(x, w, b):
    if x.dtype is not w.dtype or (b is not None and b.dtype is not x.dtype):
        other = w.dtype if x.dtype is not w.dtype else b.dtype
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {x.dtype} != {other}")
    if w.ndim != 2 or x.ndim == 0 or x._shape[-1] != w._shape[1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_strides.numel(x._shape[:-1])}x"
                           f"{x._shape[-1] if x.ndim else 1} and {w._shape[-1]}x{w._shape[0]})")
    shape = x._shape[:-1] + (w._shape[0],)
    if b is not None:
        _strides.broadcast_shapes(shape, b._shape)
    return [(shape, x.dtype)], [None, None, None]


def _linear_bw(c, g):
    x, w, b = c.inputs
    gx = gw = gb = None
    edges = c.next_edges
    if g.ndim < 2:  # a 1-D input: matmul's vector rules
        if edges[0] is not None:
            gx = matmul(g, w)
        if edges[1] is not None:
            gw = matmul(g.unsqueeze(1), x.unsqueeze(0))
        if len(edges) > 2 and edges[2] is not None:
            gb = g
        return gx, gw, gb
    # the ops themselves, not their public functions: the shapes are known to agree (the forward checked them)
    if edges[0] is not None:
        gx = dispatch(_matmul_op, (g, w))
    if edges[1] is not None:
        # explicit row counts: reshape(-1, 0) cannot infer -1 for an empty tensor
        g2 = g.reshape(_strides.numel(g._shape[:-1]), g._shape[-1]) if g.ndim != 2 else g
        x2 = x.reshape(_strides.numel(x._shape[:-1]), x._shape[-1]) if x.ndim != 2 else x
        gw = dispatch(_matmul_op, (g2.mT, x2))
    if len(edges) > 2 and edges[2] is not None:
        # the bias's gradient summed here to its shape: the node's sum_to_size would add a reshape (and .grad a copy)
        gb = dispatch(_sum_op, (g,), {"dims": tuple(range(g.ndim - 1)), "keepdim": False, "dtype": None}) \
            if len(c.shapes[2]) == 1 else g
    return gx, gw, gb


def _linear_decomp(x, w, b):
    out = matmul(x, w.t())
    return out + b if b is not None else out


# torch's linear is addmm / matmul: input saved for weight's gradient, weight for input's, bias never
_linear_op = defop("linear", _linear_meta, _linear_bw, decomp=_linear_decomp, save_inputs=((0, (1,)), (1, (0,))),
    refused=refuse(("bool",), NotImplementedError, "\"addmm_impl_cpu_\" not implemented for '{T}'"))


@autocast_op("lower")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: input (*, in), weight (out, in), bias (out,) or None -> (*, out).

    One op (a fused kernel where the backend has one). RuntimeError on shape or dtype mismatch
    (``torch.nn.functional.linear``).
    """
    return dispatch(_linear_op, (input, weight, bias))


@method("mm")
@autocast_op("lower")
def mm(input, mat2):
    """2-D matrix product (RuntimeError unless both are matrices)."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    return matmul(input, mat2)


@method("bmm")
@autocast_op("lower")
def bmm(input, mat2):
    """Batched matrix product of (b, n, m) and (b, m, p) tensors."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    if input._shape[0] != mat2._shape[0] or input._shape[2] != mat2._shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{input._shape[0]}, "
                           f"{input._shape[2]}] but got: [{mat2._shape[0]}, {mat2._shape[1]}].")
    return matmul(input, mat2)


@method("mv")
@autocast_op("off")
def mv(input, vec):
    """Matrix @ vector: (n, m) x (m,) -> (n,) (``torch.mv``); RuntimeError for other ranks or sizes."""
    _mv_check(None, input, vec)
    return matmul(input, vec)


def _mv_check(out, mat, vec):
    """PyTorch's addmv checks: a 2-D matrix and a 1-D vector of matching size, one dtype."""
    for a in (mat, vec) if out is None else (out, mat, vec):
        if not isinstance(a, Tensor):
            raise TypeError(f"mv(): argument must be Tensor, not {type(a).__name__}")
    if mat.ndim != 2 or vec.ndim != 1 or (out is not None and out.ndim > 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {1 if out is None else out.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat._shape[1] != vec._shape[0] or (out is not None and out.ndim == 1 and out._shape[0] not in (1, mat._shape[0])):
        n = mat._shape[0] if out is None or out.ndim == 0 else out._shape[0]
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({mat._shape[0]}x{mat._shape[1]}), vec "
                           f"({vec._shape[0]})")
    dts = [a.dtype for a in ((mat, vec) if out is None else (out, mat, vec))]
    if builtins.any(d is not dts[0] for d in dts):
        words = [_dt_word(d) for d in ([vec.dtype] + dts if out is None else dts)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {words[0]}, {words[1]}, and "
                           f"{words[2]}")


def _batch2_size2(batch1, batch2):
    """PyTorch's baddbmm/addbmm read ``batch2.size(2)`` (for the result's shape) before checking ranks: an
    IndexError when batch2 has fewer than 3 dims and batch1 has 3."""
    if batch1.ndim == 3 and batch2.ndim < 3:
        if batch2.ndim == 0:
            raise IndexError("Dimension specified as 2 but tensor has no dimensions")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-batch2.ndim}, {batch2.ndim - 1}], "
                         "but got 2)")


def _tensor_arg(op, input):
    """TypeError, as PyTorch's argument parser, when ``input`` is not a Tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _expands_to(input, result):
    """PyTorch's check that the ``input`` of addmm/baddbmm/addr/addbmm expands to ``result``'s shape (its
    ``expand`` errors)."""
    if isinstance(input, Tensor) and tuple(input._shape) != tuple(result._shape):
        input.expand(result._shape)


@method("addmm")
@autocast_op("lower")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` (``torch.addmm``). RuntimeError when ``input`` does not expand
    to the product's shape (PyTorch expands it one way, it does not broadcast both)."""
    _tensor_arg("addmm", input)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if isinstance(m, Tensor) and m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    p = mm(mat1, mat2)
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dt_word(input.dtype)} and "
                           f"{_dt_word(mat2.dtype)}")
    _expands_to(input, p)
    if isinstance(alpha, float) and not (alpha - alpha == 0):  # inf or NaN
        # PyTorch's gemm scales the terms before it sums them: inf * a * b of mixed signs add up to NaN,
        # where inf * (sum) would be +-inf
        p = mm(mat1 * alpha, mat2)
    elif alpha != 1:
        p = p * alpha
    return p + (input * beta if beta != 1 else input) if beta != 0 else p


@method("baddbmm")
@autocast_op("lower")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for batches (``torch.baddbmm``). RuntimeError when ``input``
    does not expand to the product's shape."""
    _tensor_arg("baddbmm", input)
    _batch2_size2(batch1, batch2)
    if isinstance(batch1, Tensor) and isinstance(batch2, Tensor) and \
            (input.dtype is not batch1.dtype or batch1.dtype is not batch2.dtype):
        from .creation import _CPP_NAMES
        raise RuntimeError(f"Input dtypes must be the same, got: input {_CPP_NAMES[input.dtype.name]}, batch1: "
                           f"{_CPP_NAMES[batch1.dtype.name]}, batch2: {_CPP_NAMES[batch2.dtype.name]}")
    p = bmm(batch1, batch2)
    _expands_to(input, p)
    if alpha != 1:
        p = p * alpha
    return p + (input * beta if beta != 1 else input) if beta != 0 else p


@method("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` (``torch.addmv``); input broadcasts to (n,)."""
    _mv_check(input, mat, vec)
    return input * beta + matmul(mat, vec) * alpha


@method("dot")
@autocast_op("off")
def dot(input, other):
    """Inner product of two 1-D tensors of the same size (``torch.dot``)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {input.dtype.name.capitalize()}"
                           f" and {other.dtype.name.capitalize()}")
    return matmul(input, other)


vdot = dot


@method("inner")
def inner(input, other):
    """Sum of products over the last dims: (*a, n) x (*b, n) -> (*a, *b); a 0-d operand multiplies
    (``torch.inner``)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input._shape[-1] != other._shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input._shape)} and {list(other._shape)}")
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


@method("outer")
def outer(input, vec2):
    """Outer product of 1-D tensors: (n,) x (m,) -> (n, m) (``torch.outer``); RuntimeError for other ranks."""
    _outer_check(input, vec2, "outer", "self")
    return input.unsqueeze(-1) * vec2.unsqueeze(0)


def _outer_check(vec1, vec2, op, first):
    for name, v in ((first, vec1), ("vec2", vec2)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{op}(): argument '{'input' if name == 'self' else name}' must be Tensor, not "
                            f"{type(v).__name__}")
        if v.ndim != 1:
            raise RuntimeError(f"{op}: Expected 1-D argument {name}, but got {v.ndim}-D")


ger = outer


@method("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``)."""
    from .linalg import _outer_check, outer
    from ._util import check_arg
    check_arg("addr", "input", 1, input, "Tensor")
    _outer_check(vec1, vec2, "addr", "vec1")
    # the outer product in the result dtype, as PyTorch's kernel (float32 vectors of a float64 input
    # multiply in float64)
    dt = _dt.result_type_of((input, vec1, vec2))
    o = outer(vec1.to(dt), vec2.to(dt))
    _expands_to(input, o)
    return (input * beta if beta != 1 else input) + (o * alpha if alpha != 1 else o) if beta != 0 else o * alpha


@method("cross")
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the first size-3 dim when None, as ``torch.cross``)."""
    from .shape import stack
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype is not other.dtype and input.numel() and other.numel():
        from .movement import _SCALAR_TYPE as w
        raise RuntimeError(f"expected scalar type {w[input.dtype.name]} but found {w[other.dtype.name]}")
    if dim is None:
        dim = next((i for i, (a, b) in enumerate(zip(input._shape, other._shape)) if a == 3 and b == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    d = _strides.wrap_dim(dim, input.ndim)
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input._shape[d]} and "
                           f"{other._shape[d]}")
    a = [input.select(d, i) for i in range(3)]
    b = [other.select(d, i) for i in range(3)]
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], d)


def _einsum_meta(*ops, equation):
    ins, rhs = _parse_einsum(equation, ops)
    for i, op in enumerate(ops):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(op).__name__}")
        if op.dtype is not ops[0].dtype:
            raise RuntimeError(f"expected scalar type {_dt_word(ops[0].dtype)} but found {_dt_word(op.dtype)}")
    sizes = {}
    for i, (s, op) in enumerate(zip(ins, ops)):
        own = {}
        for ch, n in zip(s, op._shape):
            if ch in own and own[ch] != n:
                raise RuntimeError(f"einsum(): subscript {ch} is repeated for operand {i} but the sizes don't match, "
                                   f"{own[ch]} != {n}")
            own[ch] = n
        for ch, n in own.items():
            m = sizes.get(ch, 1)
            if m != n and n != 1 and m != 1:
                raise RuntimeError(f"einsum(): subscript {ch} has size {n} for operand {i} which does not broadcast "
                                   f"with previously seen size {m}")
            sizes[ch] = n if m == 1 else m  # a size-1 dim broadcasts (even against 0)
    dt = ops[0].dtype
    if len(ops) == 1 and set(ins[0]) - set(rhs) and dt.category < 2:
        dt = _dt.int64  # one operand with a summed subscript is torch.sum: integers and bools sum to int64
    return [(tuple(sizes[ch] for ch in rhs), dt)], [dt] * len(ops)


def _dt_word(d):
    from .movement import _SCALAR_TYPE
    return _SCALAR_TYPE.get(d.name, d.name)


def _einsum_bw(c, g):
    from .creation import eye
    import types
    ops = c.inputs  # an operand is saved only for the others' gradients: its own geometry comes from c.shapes
    ins, rhs = _parse_einsum(c.kw["equation"], [types.SimpleNamespace(ndim=len(shp)) for shp in c.shapes])
    grads = []
    for i, (s, op) in enumerate(zip(ins, c.shapes)):
        if c.next_edges[i] is None:
            grads.append(None)
            continue
        u = "".join(dict.fromkeys(s))  # s without repeats, in order of first occurrence
        others = [ins[j] for j in range(len(ops)) if j != i]
        avail = set(rhs).union(*others)
        target = "".join(ch for ch in u if ch in avail)
        eq = ",".join([rhs] + others) + "->" + target
        gi = einsum(eq, g, *[ops[j] for j in range(len(ops)) if j != i])
        if target != u:
            for k, ch in enumerate(u):
                if ch not in avail:
                    gi = gi.unsqueeze(k)
            gi = gi.expand(tuple(op[s.index(ch)] for ch in u))
        # a letter repeated in s (a diagonal, 'ii->i'): its gradient lives on that diagonal; each repeat gets a
        # new dim, masked by the identity against the letter's first dim
        for pos, ch in enumerate(s):
            first = s.index(ch)
            if first != pos:
                n = op[pos]
                gi = gi.unsqueeze(pos)
                shape = [1] * gi.ndim
                shape[first] = shape[pos] = n
                gi = gi * eye(n, dtype=gi.dtype, device=gi.device).reshape(shape)
        grads.append(gi)
    return tuple(grads)


# torch's einsum is products of its operands (bmm): each operand is saved for the others' gradients
_einsum_op = defop("einsum", _einsum_meta, _einsum_bw,
                   save_inputs=lambda n, edges, kw: {i for i in range(n)
                                                     if any(e is not None for j, e in enumerate(edges) if j != i)})


@autocast_op("lower")
def einsum(equation, *operands):
    """Einstein summation (``torch.einsum``), including '...' and implicit output."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for i, op in enumerate(operands):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(op).__name__}")
    # the kernel gets the checked equation with '...' spelled out, so it never parses anything itself
    ins, rhs = _parse_einsum(equation, operands)
    return dispatch(_einsum_op, tuple(operands), {"equation": ",".join(ins) + "->" + rhs})


@autocast_op("lower")
def tensordot(a, b, dims=2, out=None):
    """Sum over the last ``dims`` dims of ``a`` and the first of ``b`` (or explicit dim lists); written into
    ``out`` when given (``torch.tensordot``; the surface's ``out=`` step writes it)."""
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = [list(d) if isinstance(d, (list, tuple)) else [d] for d in dims]
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a._shape[d]
    am = a.permute(fa + da).reshape(_strides.numel([a._shape[d] for d in fa]), k)
    bm = b.permute(db + fb).reshape(k, _strides.numel([b._shape[d] for d in fb]))
    return matmul(am, bm).reshape([a._shape[d] for d in fa] + [b._shape[d] for d in fb])


# ---- matrix helpers: diag, diag_embed, trace, kron, cdist ------------------------------------------------
@method("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose ``offset`` diagonal (in dims dim1, dim2 of the result) holds the last dim of ``input``
    (``torch.diag_embed``): (*, n) -> (*, n + |offset|, n + |offset|)."""
    from .creation import eye, zeros
    from .pointwise import where
    from .shape import pad
    n = input._shape[-1]
    # (*, n, n): row i holds x_i at i; a where, not a product with eye, so inf and NaN leave the zeros zero
    m = where(eye(n, dtype=_dt.bool, device=input.device), input.unsqueeze(-1),
              zeros((), dtype=input.dtype, device=input.device))
    k = abs(offset)
    if k:
        m = pad(m, (k, 0, 0, k) if offset > 0 else (0, k, k, 0))
    nd = m.ndim
    d1, d2 = _strides.wrap_dim(dim1, nd), _strides.wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return m.movedim((nd - 2, nd - 1), (d1, d2))


@method("diag")
def diag(input, diagonal=0):
    """1-D input: the square matrix with ``input`` on its ``diagonal``; 2-D input: a copy of that diagonal
    (``torch.diag``). RuntimeError for other ranks, TypeError for a non-int ``diagonal``."""
    from ._util import check_arg
    import operator
    diagonal = operator.index(check_arg("diag", "diagonal", 2, diagonal, "int"))
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@method("diagflat")
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal ``offset`` (``torch.diagflat``)."""
    from .linalg import diag
    return diag(input.reshape(-1), offset)


@method("fill_diagonal_")
def fill_diagonal_(input, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal of ``input`` in place (``Tensor.fill_diagonal_``); for a tall
    2-D matrix ``wrap`` restarts the diagonal every ``cols + 1`` rows, as NumPy's fill_diagonal. All dims of
    an input with more than two must be equal (RuntimeError otherwise)."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.requires_grad and input.grad_fn is None and _grad_state.enabled:
        # PyTorch writes through a strided view of the input, so its leaf check names a view
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if input.ndim > 2 and len(set(input._shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    from .creation import arange
    if input.ndim == 2:
        rows, cols = input._shape
        n = min(rows, cols)
        r = arange(n, device=input.device)
        if wrap and rows > cols + 1:
            r = arange(0, rows, device=input.device)
            keep = (r % (cols + 1)) < cols
            r = r[keep]
            input[r, r % (cols + 1)] = fill_value
            return input
        input[r, r] = fill_value
        return input
    r = arange(input._shape[0], device=input.device)
    input[(r,) * input.ndim] = fill_value
    return input


@method("trace")
@autocast_op("fp32")
def trace(input):
    """Sum of the main diagonal of a matrix (``torch.trace``); integer input sums to int64."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype is _dt.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return input.diagonal().sum()


def _iter_output_strides(shape, operands):
    """The strides of the output PyTorch's TensorIterator allocates for an elementwise op over ``operands``
    ((shape, strides) pairs of ``shape``'s rank): dims sorted fastest-first by the operands' strides (the first
    operand with unequal, non-broadcast strides decides; equal strides put the smaller dim first), by insertion
    sort from the reversed order, then laid out densely in that order."""
    nd = len(shape)
    if nd <= 1:
        return _strides.contiguous_strides(tuple(shape))
    ops = [tuple(0 if s == 1 and shape[k] != 1 else st for k, (s, st) in enumerate(zip(sh, sts)))
           for sh, sts in operands]

    def should_swap(d0, d1):
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, acc = [0] * nd, 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


@method("kron")
def kron(input, other):
    """Kronecker product (``torch.kron``): the block tensor whose block i is input[i] * other; shapes are
    left-padded with ones to a common rank and multiplied dim by dim.

    PyTorch forms the interleaved product (a0, b0, a1, b1, ...) with an elementwise multiply, whose output
    follows the inputs' memory layout, and then *views* it as (a0 b0, a1 b1, ...); for inputs laid out
    out of row-major order (a transposed matrix) that view is impossible and PyTorch raises the view's
    RuntimeError, so this raises it too."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + input._shape)
    b = other.reshape((1,) * (nd - other.ndim) + other._shape)
    a = a.reshape(tuple(s for d in a._shape for s in (d, 1)))
    b = b.reshape(tuple(s for d in b._shape for s in (1, d)))
    result_shape = tuple(x * y for x, y in zip(a._shape[::2], b._shape[1::2]))
    prod_shape = tuple(max(x, y) for x, y in zip(a._shape, b._shape))
    if 0 not in a._shape and 0 not in b._shape:  # an empty product views as anything
        laid = _iter_output_strides(prod_shape, [(a._shape, a.stride()), (b._shape, b.stride())])
        if _strides.view_strides(prod_shape, laid, result_shape) is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return (a * b).reshape(result_shape)


def vander(x, N=None, increasing=False):
    """Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1) ... x ** 0`` (reversed when ``increasing``)
    (``torch.vander``)."""
    from .creation import arange
    if N is not None and (isinstance(N, bool) or not isinstance(N, int)):
        raise TypeError(f"vander(): argument 'N' must be int, not {type(N).__name__}")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    p = arange(n, device=x.device)
    if not increasing:
        p = p.flip(0)
    base = x if x.dtype.is_floating_point or x.dtype.is_complex else x.to(_dt.int64)
    return base.unsqueeze(1) ** p.to(base.dtype if base.dtype.is_floating_point else _dt.int64).unsqueeze(0)


@autocast_op("fp32")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise ``p``-norm distances between the rows of x1 (*, P, M) and x2 (*, R, M) -> (*, P, R)
    (``torch.cdist``). Computed from the differences, so it is exact (PyTorch may use a matmul shortcut for
    p = 2); the gradient at a zero distance is 0. ValueError for an unknown ``compute_mode``; RuntimeError for
    ranks below 2, non-floating or mismatched dtypes, a negative or NaN ``p``; NotImplementedError for float16 /
    bfloat16 (PyTorch's CPU kernel has neither)."""
    from .lapack import vector_norm
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2} got: "
                           f"{min(x1.ndim, x2.ndim) if x1.ndim < 2 else x2.ndim}D")
    for i, x in ((1, x1), (2, x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{i} got: {_dt_word(x.dtype)}")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._shape[-1]} X2: "
                           f"{x2._shape[-1]}")
    if x1.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_dt_word(x1.dtype)}'")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_dt_word(x1.dtype)} but found {_dt_word(x2.dtype)}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)
