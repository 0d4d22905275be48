"""View ops: new (shape, strides, offset) over the same Storage, identical for every backend.

Each view op is a pure metadata function plus a backward formula. Slicing-like views (basic
indexing, narrow, select, diagonal, as_strided) share one backward: scatter the gradient into
zeros at the view's geometry relative to a contiguous input (``as_strided_scatter``).
"""
import builtins
import operator

from .. import _strides
from .._dtype import _SCALAR_TYPE  # noqa: F401  (other op modules import it from here)
from .._dispatch import defop, dispatch
from .._tensor import Tensor
from ..autograd.grad_mode import _state
from ._util import check_arg, method


def _given_geometry(x, size, stride_):
    """Geometry of a view whose function computed it (view, expand, squeeze ...): passed as attributes."""
    return size, stride_, x._offset


def _view_op(name, backward, geometry=None, meta=_given_geometry):
    """Declare a view op. Its meta gives the view's ``(shape, strides, offset)`` over the input's storage:
    ``meta(x, **attributes)``, or ``geometry(shape, strides, offset, **attributes)`` of the input (the form the
    slicing views share with their backward); the dispatcher's view step builds the tensor."""
    if geometry is not None:
        def meta(x, **kw):
            return geometry(x._shape, x._stride, x._offset, **kw)
    return defop(name, meta, backward, save_inputs=False, view=True)


def _geometry_backward(meta_fn):
    """Backward of a slicing view: zeros of the input's shape with ``g`` written at the view's place."""
    def bw(c, g):
        shp = c.shapes[0]
        size, stride, off = meta_fn(shp, _strides.contiguous_strides(shp), 0, **c.kw)
        return _into_zeros(shp, g, size, stride, off)
    return bw


def _into_zeros(shape, g, size, stride, offset):
    """Zeros of ``shape`` with ``g`` written at the geometry: ``as_strided_scatter`` on fresh zeros, which
    needs no copy of the zeros when no graph is being built (the usual backward)."""
    from .creation import zeros
    out = zeros(shape, dtype=g.dtype, device=g.device)
    if _state.enabled and g.requires_grad:
        return as_strided_scatter(out, g, size, stride, offset)
    as_strided(out, size, stride, offset)._write(g)
    return out


# ---- as_strided and its scatter -------------------------------------------------------------------
def _as_strided_meta(shape, stride, offset, size, stride_, storage_offset):
    return tuple(size), tuple(stride_), storage_offset


def _non_overlapping(size, stride):
    """Whether no two indices of the geometry reach the same element (sufficient test: with dims sorted by
    stride, each stride exceeds the span of the dims below it)."""
    span = 0
    for n, st in sorted(((n, st) for n, st in zip(size, stride) if n > 1), key=lambda p: p[1]):
        if st <= span:
            return False
        span += (n - 1) * st
    return True


def _as_strided_bw(c, g):
    kw = c.kw
    shape, in_stride = c.shapes[0], kw["in_stride"]
    size, stride, off = kw["size"], kw["stride"], kw["rel_offset"]
    if (_strides.numel(shape) <= 1 or in_stride == _strides.contiguous_strides(shape)) and \
            _non_overlapping(size, stride):
        return _into_zeros(shape, g, size, stride, off)
    # general case (as torch's as_strided_backward): sum the gradient onto the storage positions the view
    # read, where overlapping windows meet several times, then gather the input's elements by its own strides
    import numpy as np
    from .creation import _from_host, zeros
    from .. import _dtype as _dt
    if not _non_overlapping(shape, in_stride):
        raise RuntimeError("as_strided: the derivative for an input whose own elements overlap in memory (e.g. "
                           "an expanded tensor) is not implemented; call .contiguous() before as_strided")
    pos = np.full(size, off, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(size) - d - 1))
    in_lo = min(0, builtins.sum(min(0, (n - 1) * st) for n, st in zip(shape, in_stride)))
    in_hi = builtins.sum(max(0, (n - 1) * st) for n, st in zip(shape, in_stride))
    lo = min(in_lo, int(pos.min()) if pos.size else 0)
    hi = max(in_hi, int(pos.max()) if pos.size else 0)
    idx = _from_host((pos - lo).reshape(-1), _dt.int64, g.device)
    storage = zeros((hi - lo + 1,), dtype=g.dtype, device=g.device).index_add(0, idx, g.reshape(-1))
    return storage.as_strided(shape, in_stride, storage._offset - lo).contiguous()


_as_strided_op = _view_op("as_strided", _as_strided_bw,
                          meta=lambda x, size, stride, rel_offset, in_stride: (size, stride, x._offset + rel_offset))


@method("as_strided")
def as_strided(input, size, stride, storage_offset=None):
    """A view with explicit ``size``, ``stride`` and ``storage_offset`` over ``input``'s storage.

    TypeError for a size, stride or offset that is not an int64 (as PyTorch's argument parser); RuntimeError for
    negative sizes or strides, a storage extent past int64, or a view that would read outside the storage.
    Mirrors ``torch.as_strided``.
    """
    size, stride = _shape_arg((size,), "as_strided", "size"), _shape_arg((stride,), "as_strided", "stride")
    if storage_offset is not None:
        if isinstance(storage_offset, bool) or not isinstance(storage_offset, (builtins.int, Tensor)):
            raise TypeError(f"as_strided(): argument 'storage_offset' (position 3) must be int, not "
                            f"{type(storage_offset).__name__}")
        storage_offset = _shape_arg((storage_offset,), "as_strided", "storage_offset")[0]
    off = input._offset if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} vs {len(stride)}")
    if builtins.any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    # PyTorch computes the storage the view needs in int64 before anything else, so a negative size or an
    # extent past int64 overflows there
    if builtins.any(s < 0 for s in size) or (_strides.numel(size) and
                                             builtins.sum((s - 1) * st for s, st in zip(size, stride)) >= 2 ** 63):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if _strides.numel(size):
        hi = off + builtins.sum((s - 1) * st for s, st in zip(size, stride))
        if hi >= input._storage.size or off < 0 or builtins.any(st < 0 for st in stride):
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off} "
                               f"out of bounds for storage of size {input._storage.size}")
    return dispatch(_as_strided_op, (input,), {"size": size, "stride": stride, "rel_offset": off - input._offset,
                                               "in_stride": input._stride})


def _as_strided_view(base, size, stride, rel_offset):
    return as_strided(base, size, stride, base._offset + rel_offset)


def _as_strided_scatter_meta(base, src, size, stride, storage_offset):
    if tuple(src._shape) != tuple(size):
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice of self. "
                           f"src size = {list(src._shape)}, slice size = {list(size)}")
    return [(base._shape, base.dtype)], [None, base.dtype]


def _as_strided_scatter_bw(c, g):
    from .creation import zeros
    kw = c.kw
    g = g.contiguous()
    gb = as_strided_scatter(g, zeros(kw["size"], dtype=g.dtype, device=g.device), kw["size"], kw["stride"],
                            kw["storage_offset"]) if c.next_edges[0] is not None else None
    gs = as_strided(g, kw["size"], kw["stride"], kw["storage_offset"] + g._offset)
    return gb, gs


def _as_strided_scatter_decomp(base, src, size, stride, storage_offset):
    out = base.clone()  # clone is contiguous, so the geometry applies to it directly
    as_strided(out, size, stride, storage_offset)._write(src)
    return out


_as_strided_scatter_op = defop("as_strided_scatter", _as_strided_scatter_meta, _as_strided_scatter_bw,
                               decomp=_as_strided_scatter_decomp, save_inputs=False, complex_grad=True)


def as_strided_scatter(input, src, size, stride, storage_offset=0):
    """A copy of contiguous-laid-out ``input`` with ``src`` written at the given geometry (``torch.as_strided_scatter``)."""
    return dispatch(_as_strided_scatter_op, (input, src),
                    {"size": tuple(size), "stride": tuple(stride), "storage_offset": storage_offset})


# ---- reshaping views --------------------------------------------------------------------------------
_view_opdef = _view_op("view", lambda c, g: g.reshape(c.shapes[0]))


def _shape_arg(shape, op="view", arg="size"):
    """A size / dims argument given as varargs or one sequence, as a tuple of Python ints. TypeError (as
    PyTorch's argument parser) for an element that is not an integer (a float, NaN, a string)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    out = []
    for i, s in enumerate(shape):
        if isinstance(s, Tensor) and s.ndim == 0 and not (s.dtype.is_floating_point or s.dtype.is_complex):
            s = s.item()
        try:
            v = operator.index(s)
        except TypeError:
            raise TypeError(f"{op}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error \"type "
                            f"must be tuple of ints,but got {type(s).__name__}\"") from None
        if not -2 ** 63 <= v < 2 ** 63:
            # PyTorch's parser unpacks each size into a C int64 before the op sees it
            raise TypeError(f"{op}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                            "\"Overflow when unpacking long long\"")
        out.append(v)
    return tuple(out)


@method("view")
def view(input, *shape, **kwargs):
    """A view with a new shape (one dim may be -1), or ``view(dtype)`` / ``view(dtype=dtype)``: the same memory read
    as ``dtype``. RuntimeError when the strides don't allow it (use ``reshape``). Mirrors ``Tensor.view``."""
    if kwargs:
        if shape or set(kwargs) - {"dtype", "size"} or len(kwargs) > 1:
            raise TypeError(f"view() received an invalid combination of arguments - got ({len(shape)} positional, "
                            f"keywords {sorted(kwargs)})")
        shape = (kwargs.get("dtype", kwargs.get("size")),)
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)) and hasattr(shape[0], "itemsize"):
        return _view_dtype(input, shape[0])
    if len(shape) == 1 and isinstance(shape[0], type) and shape[0] in (float, builtins.int, bool, complex):
        from .. import _dtype as _dt  # a Python type is a dtype, as in PyTorch: view(int) reads int64
        return _view_dtype(input, _dt.as_dtype(shape[0], "view"))
    shape = _strides.infer_size(_shape_arg(shape), input.numel())
    if shape == input._shape:
        st = input._stride
    else:
        st = _strides.view_strides(input._shape, input._stride, shape)
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return dispatch(_view_opdef, (input,), {"size": shape, "stride_": st})




def _view_dtype_geometry(shape, strides, offset, old, dtype):
    """Geometry of ``input.view(dtype)``: the bytes of ``input`` reinterpreted (``torch.Tensor.view(dtype)``).
    With a different element size the last dim scales by the size ratio, so it must have stride 1, and the last
    size, the other strides and the storage offset must divide evenly. RuntimeError naming both dtypes when the
    layout does not allow it."""
    new = dtype
    if old.itemsize != new.itemsize:
        what = f"to view {_SCALAR_TYPE.get(old.name, old.name)} as {_SCALAR_TYPE.get(new.name, new.name)} " \
               "(different element sizes)"
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if new.itemsize > old.itemsize:
            r = new.itemsize // old.itemsize
            if shape[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
            if strides[-1] != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
            if offset % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {offset}")
            for i, s_ in enumerate(strides[:-1]):
                if s_ % r:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s_}")
            shape = shape[:-1] + (shape[-1] // r,)
            strides = tuple(s_ // r for s_ in strides[:-1]) + (1,)
            offset //= r
        else:
            r = old.itemsize // new.itemsize
            if strides[-1] != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
            shape = shape[:-1] + (shape[-1] * r,)
            strides = tuple(s_ * r for s_ in strides[:-1]) + (1,)
            offset *= r
    return shape, strides, offset, new


# not differentiable (the result does not require grad), as in torch
_view_dtype_op = defop("view_dtype", lambda x, dtype: _view_dtype_geometry(x._shape, x._stride, x._offset, x.dtype,
                                                                            dtype),
                       save_inputs=False, view=True, differentiable=False)


def _view_dtype(input, dtype):
    """``input.view(dtype)`` (see ``_view_dtype_geometry``)."""
    return dispatch(_view_dtype_op, (input,), {"dtype": dtype})


@method("reshape")
def reshape(input, *shape):
    """A view when the strides allow it, else a contiguous copy, with the new shape (``torch.reshape``)."""
    shape = _strides.infer_size(_shape_arg(shape, "reshape", "shape"), input.numel())
    st = _strides.view_strides(input._shape, input._stride, shape)
    if st is None:
        return view(input.contiguous(), shape)
    return dispatch(_view_opdef, (input,), {"size": shape, "stride_": st})


method("view_as")(lambda self, other: view(self, other._shape))
method("reshape_as")(lambda self, other: reshape(self, other._shape))


@method("contiguous")
def contiguous(input, memory_format=None):
    """``input`` itself when contiguous, else a contiguous copy."""
    if _strides.is_contiguous(input._shape, input._stride):
        return input
    return input.clone()


@method("flatten")
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (``torch.flatten``); a 0-d input gives shape (1,)."""
    s = _strides.wrap_dim(start_dim, input.ndim)
    e = _strides.wrap_dim(end_dim, input.ndim)
    if input.ndim == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._shape
    return reshape(input, shp[:s] + (_strides.numel(shp[s:e + 1]),) + shp[e + 1:])


@method("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1) (``torch.unflatten``)."""
    if input.ndim == 0:
        raise RuntimeError(f"unflatten: Dimension specified as {dim} but tensor has no dimensions")
    d = _strides.wrap_dim(dim, input.ndim)
    sizes = _strides.infer_size(tuple(sizes), input._shape[d], "unflatten")
    return view(input, input._shape[:d] + sizes + input._shape[d + 1:])


_permute_op = _view_op("permute", lambda c, g: permute(g, _inverse_perm(c.kw["dims"])),
                       meta=lambda x, dims: (tuple([x._shape[d] for d in dims]), tuple([x._stride[d] for d in dims]),
                                             x._offset))


def _inverse_perm(p):
    inv = [0] * len(p)
    for i, d in enumerate(p):
        inv[d] = i
    return tuple(inv)


@method("permute")
def permute(input, *dims):
    """Reorder dims (a view). RuntimeError when ``dims`` is not a permutation of range(ndim)."""
    dims = _shape_arg(dims, "permute", "dims")
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(_strides.wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(_permute_op, (input,), {"dims": dims})


@method("transpose")
def transpose(input, dim0, dim1):
    """Swap two dims (a view), ``torch.transpose``."""
    n = input.ndim
    d0, d1 = _strides.wrap_dim(dim0, n), _strides.wrap_dim(dim1, n)
    if n == 0:
        return input
    p = list(range(n))
    p[d0], p[d1] = p[d1], p[d0]
    return dispatch(_permute_op, (input,), {"dims": tuple(p)})  # a permutation by construction: no checks


swapaxes = swapdims = transpose
method("swapaxes")(transpose)
method("swapdims")(transpose)


@method("t")
def t(input):
    """Transpose of a tensor with <= 2 dims (RuntimeError for more)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def _conj_if_complex(x):
    if x.dtype.is_complex:
        from .complex import conj
        return conj(x)
    return x


def _matrix_transpose(self, what):
    """``mT`` (``what``), ``mH`` or ``adjoint()``: the last two dims swapped, conjugated for the latter two.
    A 0-d tensor is its own transpose (PyTorch returns it, conjugated where asked); RuntimeError for 1-D."""
    conj = what != "mT"
    if self.ndim == 0:
        return _conj_if_complex(self) if conj else self
    if self.ndim < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    n = self.ndim
    t_ = dispatch(_permute_op, (self,), {"dims": tuple(range(n - 2)) + (n - 1, n - 2)})
    return _conj_if_complex(t_) if conj else t_


def _hermitian(self):
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
    return _conj_if_complex(transpose(self, 0, 1) if self.ndim == 2 else self)


method("T")(property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1)))))
method("mT")(property(lambda self: _matrix_transpose(self, "mT")))
method("mH")(property(lambda self: _matrix_transpose(self, "mH")))
method("H")(property(_hermitian))


@method("adjoint")
def adjoint(input):
    """The conjugate transpose of the last two dims, a view (``torch.adjoint``); a 0-d tensor is returned
    (conjugated if complex), RuntimeError for 1-D."""
    return _matrix_transpose(input, "adjoint()")


@method("movedim")
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination`` (``torch.movedim``)."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    n = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    src = [_strides.wrap_dim(d, n) for d in src]
    dst = [_strides.wrap_dim(d, n) for d in dst]
    for what, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({dims})")
    order = [d for d in range(n) if d not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(order)
    perm = [p if p is not None else next(it) for p in perm]
    return permute(input, perm)


moveaxis = movedim
method("moveaxis")(movedim)

_expand_op = _view_op("expand", lambda c, g: g)  # the node sums g back to the input's shape


@method("expand")
def expand(input, *sizes):
    """Broadcast to ``sizes`` without copying (stride 0 for new/expanded dims); -1 keeps a size."""
    sizes = _shape_arg(sizes, "expand")
    n, m = input.ndim, len(sizes)
    if m < n:
        raise RuntimeError(f"expand({input.type()}{{{list(input._shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({m}) must be greater or equal to the number of dimensions in the tensor ({n})")
    shape, stride = [], []
    for i, s in enumerate(sizes):
        j = i - (m - n)
        if j < 0:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   "dimension 0")
            shape.append(s)
            stride.append(0)
            continue
        cur = input._shape[j]
        if s < -1:
            # PyTorch refuses it when computing the numel of the (negative) target shape
            raise RuntimeError(f"expand: invalid size {s} at dim {i} of {list(sizes)}: numel: integer multiplication "
                               "overflow (sizes must be >= 0, or -1 to keep a size)")
        if s == -1 or s == cur:
            shape.append(cur)
            stride.append(input._stride[j])
        elif cur == 1:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input._shape)}")
    shape, stride = tuple(shape), tuple(stride)
    if _strides.numel(shape) >= 2 ** 63:
        raise RuntimeError("numel: integer multiplication overflow")
    if shape == input._shape:
        return input
    return dispatch(_expand_op, (input,), {"size": shape, "stride_": stride})


method("expand_as")(lambda self, other: expand(self, other._shape))


def broadcast_to(input, size):
    """``input.expand(size)`` (``torch.broadcast_to``)."""
    return expand(input, _shape_arg((size,), "broadcast_to"))


method("broadcast_to")(broadcast_to)


def broadcast_tensors(*tensors):
    """Expand all tensors to their common broadcast shape."""
    shape = _strides.broadcast_shapes(*(t._shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


class _AllDims:
    """Default of ``squeeze``'s ``dim``: not given (every size-1 dim); unlike None, which PyTorch refuses."""
    def __repr__(self):
        return "None"


_ALL_DIMS = _AllDims()


@method("squeeze")
def squeeze(input, dim=_ALL_DIMS):
    """Remove dims of size 1 (all, or those in ``dim``: an int or a tuple/list of ints), as a view.

    TypeError for a ``dim`` given as None or another non-int, as PyTorch's argument parser."""
    if dim is _ALL_DIMS:
        dims = [i for i, s in enumerate(input._shape) if s == 1]
    elif not isinstance(dim, (int, tuple, list)) or isinstance(dim, bool):
        raise TypeError(f"squeeze() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of:\n * (Tensor input)\n"
                        " * (Tensor input, int dim)\n * (Tensor input, tuple of ints dim)")
    else:
        dims = _strides.wrap_dims((dim,) if isinstance(dim, int) else tuple(dim), input.ndim, "squeeze")
        dims = [d for d in dims if input.ndim and input._shape[d] == 1]
    shape = tuple(s for i, s in enumerate(input._shape) if i not in dims)
    stride = tuple(s for i, s in enumerate(input._stride) if i not in dims)
    if shape == input._shape:
        return dispatch(_view_opdef, (input,), {"size": shape, "stride_": stride})
    return dispatch(_view_opdef, (input,), {"size": shape, "stride_": stride})


@method("unsqueeze")
def unsqueeze(input, dim):
    """Insert a dim of size 1 at ``dim`` (in range [-ndim-1, ndim])."""
    d = _strides.wrap_dim(dim, input.ndim + 1)
    shape = input._shape[:d] + (1,) + input._shape[d:]
    inner = input._stride[d] * input._shape[d] if d < input.ndim else 1
    stride = input._stride[:d] + (inner,) + input._stride[d:]
    return dispatch(_view_opdef, (input,), {"size": shape, "stride_": stride})


# ---- slicing views ----------------------------------------------------------------------------------
def _narrow_meta(shape, stride, offset, dim, start, length):
    return shape[:dim] + (length,) + shape[dim + 1:], stride, offset + start * stride[dim]


_narrow_op = _view_op("narrow", _geometry_backward(_narrow_meta), _narrow_meta)


def _split_meta(x, dim, sizes):
    """The geometries of ``split``'s views: consecutive pieces of ``sizes`` along ``dim`` (a list: one view op
    with several outputs)."""
    shape, stride, out, start = x._shape, x._stride, [], x._offset
    for s in sizes:
        out.append((shape[:dim] + (s,) + shape[dim + 1:], stride, start))
        start += s * stride[dim]
    return out


def _split_bw(c, grads):
    # every piece's gradient at once (PyTorch's SplitBackward0): one cat, where a piece at a time would add
    # input-sized zeros per piece
    from .creation import zeros
    from .shape import cat
    d, shape = c.kw["dim"], c.shapes[0]
    like = next(g for g in grads if g is not None)
    parts = [g if g is not None else zeros(shape[:d] + (s,) + shape[d + 1:], dtype=like.dtype, device=like.device)
             for g, s in zip(grads, c.kw["sizes"])]
    return cat(parts, d)


# two records of one op, for PyTorch's two node names (SplitBackward0 for a size, SplitWithSizesBackward0 for sizes)
_split_op = defop("split", _split_meta, _split_bw, save_inputs=False, view=True)
_split_sizes_op = defop("split_with_sizes", _split_meta, _split_bw, save_inputs=False, view=True)


@method("narrow")
def narrow(input, dim, start, length):
    """The slice ``start:start+length`` of dim ``dim`` as a view (``torch.narrow``)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _strides.wrap_dim(dim, input.ndim)
    size = input._shape[d]
    if isinstance(start, Tensor):
        start = start.item()
    for name, v in (("start", start), ("length", length)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"narrow(): argument '{name}' must be int, not {type(v).__name__}")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    kw = {"dim": d, "start": start, "length": length}
    return dispatch(_narrow_op, (input,), kw)


def _select_meta(shape, stride, offset, dim, index):
    return shape[:dim] + shape[dim + 1:], stride[:dim] + stride[dim + 1:], offset + index * stride[dim]


_select_op = _view_op("select", _geometry_backward(_select_meta), _select_meta)


@method("select")
def select(input, dim, index):
    """``input`` indexed at ``index`` along ``dim`` (that dim removed), a view. IndexError when out of range."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    if isinstance(index, Tensor) and index.ndim == 0 and not index.dtype.is_floating_point:
        index = index.item()
    if isinstance(index, bool) or not hasattr(index, "__index__") or isinstance(index, Tensor):
        raise TypeError(f"select(): argument 'index' (position 3) must be int, not {type(index).__name__}")
    index = operator.index(index)
    d = _strides.wrap_dim(dim, input.ndim)
    size = input._shape[d]
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input._shape)} at "
                         f"dimension {d}")
    kw = {"dim": d, "index": index % size}
    return dispatch(_select_op, (input,), kw)


def _diagonal_meta(shape, stride, offset, offset_, dim1, dim2):
    n1, n2 = shape[dim1], shape[dim2]
    if offset_ >= 0:
        n = builtins.max(builtins.min(n1, n2 - offset_), 0)
        off = offset + (offset_ * stride[dim2] if n else 0)
    else:
        n = builtins.max(builtins.min(n1 + offset_, n2), 0)
        off = offset + (-offset_ * stride[dim1] if n else 0)
    keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
    return (tuple(shape[i] for i in keep) + (n,), tuple(stride[i] for i in keep) + (stride[dim1] + stride[dim2],),
            off)


_diagonal_op = _view_op("diagonal", _geometry_backward(_diagonal_meta), _diagonal_meta)


@method("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims (dim1, dim2) as a view, appended as the last dim (``torch.diagonal``). TypeError for
    a non-int offset or dim (a bool included), as PyTorch's argument parser."""
    offset, dim1, dim2 = (operator.index(check_arg("diagonal", name, pos, v, "int"))
                          for name, pos, v in (("offset", 2, offset), ("dim1", 3, dim1), ("dim2", 4, dim2)))
    d1, d2 = _strides.wrap_dim(dim1, input.ndim), _strides.wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    kw = {"offset_": offset, "dim1": d1, "dim2": d2}
    return dispatch(_diagonal_op, (input,), kw)


def _wrap_int64(v):
    """``v`` as PyTorch's int64 arithmetic leaves it (two's complement wrap-around)."""
    return (v + 0x8000000000000000) % 0x10000000000000000 - 0x8000000000000000


def _unfold_meta(shape, stride, offset, dim, size, step):
    n = (shape[dim] - size) // step + 1
    # PyTorch multiplies in int64: a step so large that only one window fits can wrap the (unused) stride
    return (shape[:dim] + (n,) + shape[dim + 1:] + (size,), stride[:dim] + (_wrap_int64(stride[dim] * step),)
            + stride[dim + 1:] + (stride[dim],), offset)


def _unfold_bw(c, g):
    # windows overlap when step < size: scatter each window position separately and sum
    from .creation import zeros
    shp = c.shapes[0]
    kw = c.kw
    cs = _strides.contiguous_strides(shp)
    size, stride, off = _unfold_meta(shp, cs, 0, **kw)
    out = zeros(shp, dtype=g.dtype, device=g.device)
    for k in range(kw["size"]):
        out = out + as_strided_scatter(zeros(shp, dtype=g.dtype, device=g.device), select(g, -1, k), size[:-1],
                                       stride[:-1], off + k * cs[kw["dim"]])
    return out


_unfold_op = _view_op("unfold", _unfold_bw, _unfold_meta)


@method("unfold")
def unfold(input, dimension, size, step):
    """All windows of ``size`` with ``step`` along ``dimension``, as a view with a new last dim (``Tensor.unfold``)."""
    for name, pos, v in (("dimension", 1, dimension), ("size", 2, size), ("step", 3, step)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"unfold(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    d = _strides.wrap_dim(dimension, input.ndim)
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > (input._shape[d] if input.ndim else 1):
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {input._shape[d] if input.ndim else 1} "
                           f"but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        # a 0-d tensor unfolds as one element: its only window is itself (or empty for size 0)
        return narrow(input.reshape(1), 0, 0, size)
    if input.ndim and _wrap_int64(input._stride[d] * step) < 0:
        # the int64 product wrapped negative: PyTorch's view refuses the stride
        strides = list(_unfold_meta(input._shape, input._stride, 0, d, size, step)[1])
        if -(1 << 63) in strides:  # int64's minimum is SymInt's reserved value
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {-(1 << 63)}")
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {strides}")
    kw = {"dim": d, "size": size, "step": step}
    return dispatch(_unfold_op, (input,), kw)


def _basic_index_meta(shape, stride, offset, spec):
    out_shape, out_stride = [], []
    d = 0
    for it in spec:
        if it is None:
            out_shape.append(1)
            out_stride.append(None)  # filled below, as unsqueeze does
        elif isinstance(it, slice):
            size = shape[d]
            start, stop, step = it.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            n = builtins.max(0, (stop - start + step - 1) // step)
            if n:
                offset += start * stride[d]
            out_shape.append(n)
            out_stride.append(stride[d] * step)
            d += 1
        else:
            size = shape[d]
            i = it + size if it < 0 else it
            if not 0 <= i < size:
                raise IndexError(f"index {it} is out of bounds for dimension {d} with size {size}")
            offset += i * stride[d]
            d += 1
    out_shape.extend(shape[d:])
    out_stride.extend(stride[d:])
    for i in range(len(out_stride) - 1, -1, -1):
        if out_stride[i] is None:
            out_stride[i] = out_stride[i + 1] * out_shape[i + 1] if i + 1 < len(out_stride) else 1
    return tuple(out_shape), tuple(out_stride), offset


_basic_index_op = _view_op("slice", _geometry_backward(_basic_index_meta), _basic_index_meta)


def basic_index(input, spec):
    """View for an index made of ints, slices and None (Ellipsis already expanded)."""
    return dispatch(_basic_index_op, (input,), {"spec": spec})


# ---- splitting ------------------------------------------------------------------------------------------
def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive chunks of ``split_size`` (last may be smaller) or of the given section sizes."""
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _strides.wrap_dim(dim, tensor.ndim)
    n = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [builtins.min(s, n - i) for i in range(0, n, s)] if n else [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    op = _split_op if isinstance(split_size_or_sections, int) else _split_sizes_op
    return tuple(dispatch(op, (tensor,), {"dim": d, "sizes": tuple(sizes)}))


@method("split")
def _split_method(self, split_size, dim=0):
    """``Tensor.split(split_size, dim=0)``: ``torch.split`` with the method's argument name."""
    return split(self, split_size, dim)


@method("chunk")
def chunk(input, chunks, dim=0):
    """Split into ``chunks`` views of equal size (the last may be smaller), as ``torch.chunk``."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _strides.wrap_dim(dim, input.ndim)
    n = input._shape[d]
    # PyTorch's int64 arithmetic: a count near 2**63 wraps the sum, and its division truncates toward zero,
    # leaving a split size of 0 that split refuses
    total = _wrap_int64(n + chunks - 1)
    size = total // chunks if total >= 0 else -(-total // chunks)
    if n == 0 and size == 0:
        # an empty dim gives ``chunks`` empty pieces (PyTorch splits it into that many sizes of 0)
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, size, d)


@method("tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    """Views splitting ``dim`` into ``n`` near-equal sections or at the given indices (``torch.tensor_split``)."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _strides.wrap_dim(dim, input.ndim)
    n = input._shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        idx = [0] + [builtins.min(builtins.max(i, 0), n) for i in indices_or_sections] + [n]
        sizes = [builtins.max(b - a, 0) for a, b in zip(idx, idx[1:])]
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, builtins.min(start, n), s))
        start += s
    return tuple(out)


@method("unbind")
def unbind(input, dim=0):
    """All slices along ``dim`` (that dim removed), as views."""
    d = _strides.wrap_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input._shape[d]))
