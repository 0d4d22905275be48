"""Indexing: getitem / setitem (basic and advanced), gather, scatter, scatter_reduce, index_select,
index_add / index_copy / index_fill / index_reduce, masked ops, take / put, select / slice / diagonal_scatter."""
import builtins

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from ..autograd.grad_mode import _state
from .._tensor import Tensor
from ._util import SCALAR_NAMES, check_scalar_fits, defop_on_cpu, method
from .movement import basic_index

_INT_TYPES = (int, np.integer)


def _to_index_tensor(x, like):
    from .creation import tensor
    t = tensor(x, device=like.device)
    if t.dtype.is_floating_point:
        t = t.to(_dt.int64)  # PyTorch turns a list of floats into long indices (truncating)
    return t


def _sequence_as_tuple(idx):
    """PyTorch's (and old NumPy's) rule: a list shorter than 32 holding a tensor, a sequence, a slice, None
    or Ellipsis indexes like the tuple of its items, so ``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``."""
    if len(idx) >= 32:
        return False
    return any(isinstance(it, (Tensor, list, tuple, slice, np.ndarray)) or it is None or it is Ellipsis for it in idx)


def _parse_index(self, idx):
    """Split an index into a spec (ints, slices, None, ('t', k) placeholders) and its index tensors."""
    if isinstance(idx, list) and _sequence_as_tuple(idx):
        import warnings
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                      "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                      "tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                      "result", UserWarning, stacklevel=3)
        idx = tuple(idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for it in idx:
        if isinstance(it, Tensor):
            if it.ndim == 0 and it.dtype.is_int and it.dtype is not _dt.uint8:
                items.append(int(it.item()))  # any 0-d integer tensor is an int index (a 0-d byte one a mask)
            else:
                if it.dtype not in (_dt.int64, _dt.int32, _dt.uint8, _dt.bool):
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                if it.dtype is _dt.uint8:
                    # a byte tensor is a mask, as in PyTorch (deprecated there, hence the warning)
                    import warnings
                    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                                  "instead.", UserWarning, stacklevel=3)
                    it = it != 0
                items.append(it)
        elif isinstance(it, bool) or isinstance(it, np.bool_):
            items.append(_to_index_tensor(bool(it), self))
        elif isinstance(it, _INT_TYPES):
            items.append(int(it))
        elif isinstance(it, slice):
            items.append(slice(*(v.item() if isinstance(v, Tensor) else v for v in (it.start, it.stop, it.step))))
        elif it is None or it is Ellipsis:
            items.append(it)
        elif isinstance(it, (list, np.ndarray)):
            items.append(_to_index_tensor(it, self))
        elif isinstance(it, str):
            raise TypeError("new(): invalid data type 'str'")  # PyTorch tries to make an index tensor of it
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(it).__name__})")
    consumed = sum(it.ndim if isinstance(it, Tensor) and it.dtype is _dt.bool else
                   (0 if it is None or it is Ellipsis else 1) for it in items)
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    spec, tensors = [], []
    dim = 0
    expanded = False
    for it in items:
        if it is Ellipsis:
            # PyTorch allows several: the first stands for the dims the other items leave, the later ones are
            # then empty (x[..., 0, ...] is x[:, :, 0])
            k = 0 if expanded else self.ndim - consumed
            expanded = True
            spec.extend([slice(None)] * k)
            dim += k
        elif isinstance(it, Tensor):
            if it.dtype is _dt.bool:
                for j, s in enumerate(it._shape):
                    if s != self._shape[dim + j]:
                        raise IndexError(f"The shape of the mask {list(it._shape)} at index {j} does not match the "
                                         f"shape of the indexed tensor {list(self._shape)} at index {dim + j}")
                dim += it.ndim
            else:
                size = self._shape[dim]
                if it.numel():
                    lo, hi = int(it.min().item()), int(it.max().item())
                    if lo < -size or hi >= size:
                        bad = hi if hi >= size else lo
                        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
                dim += 1
            spec.append(("t", len(tensors)))
            # cpu index tensors may index any device's tensor, as in PyTorch
            tensors.append(it if it._storage.device == self._storage.device else it.to(self.device))
        else:
            spec.append(it)
            if it is not None:
                dim += 1
    if len(tensors) > 1:
        _check_index_broadcast(tensors)
    return tuple(spec), tensors


def _check_index_broadcast(tensors):
    """PyTorch's IndexError when the index tensors do not broadcast; a mask counts as one index of shape
    [number of Trues] per dim it covers (its nonzero() coordinates)."""
    shapes = []
    for t in tensors:
        if t.dtype is _dt.bool:
            shapes.extend([(int(t.sum().item()),)] * t.ndim)
        else:
            shapes.append(tuple(t._shape))
    try:
        _strides.broadcast_shapes(*shapes)
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(sh)) for sh in shapes)) from None


def _split_spec(self, spec, tensors):
    """PyTorch's order of indexing: ints, slices and None make a view first; the index tensors then index that
    view, at the dims they land on. So ``x[0, :, [1, 2]]`` is ``x[0][:, [1, 2]]`` (shape (3, 2) for x of
    shape (2, 3, 4)), where NumPy would treat the int as one more advanced index. Returns the view and the
    spec for the tensors (placeholders and full slices only)."""
    full = slice(None)
    if all(isinstance(it, tuple) or it == full for it in spec):
        return self, spec
    basic, adv = [], []
    for it in spec:
        if isinstance(it, tuple):
            t = tensors[it[1]]
            basic.extend([full] * (t.ndim if t.dtype is _dt.bool else 1))  # the dims the tensor consumes
            adv.append(it)
        elif it is None or isinstance(it, slice):
            basic.append(it)
            adv.append(full)
        else:
            basic.append(it)
    return basic_index(self, tuple(basic)), tuple(adv)


def _index_meta(a, *tensors, spec):
    return [(None, a.dtype)], [None] + [None] * len(tensors)


def _index_bw(c, g):
    from .creation import zeros
    tensors = c.inputs[1:]
    return (index_put(zeros(c.shapes[0], dtype=g.dtype, device=g.device), g, tensors, c.kw["spec"], True),) + \
        (None,) * len(tensors)


# the indices only: self enters through its sizes (PyTorch's IndexBackward saves no input), so only they are
# version-checked and ``y[:, i] += 1`` (a read, then a write into y) differentiates as in PyTorch
_index_op = defop("index", _index_meta, _index_bw, save_inputs=lambda n, edges, kw: set(range(1, n)),
                  complex_grad=True)


def _index_put_meta(a, values, *tensors, spec, accumulate=False):
    if values.ndim:  # a 0-d value broadcasts to anything
        r = _index_result_shape(a._shape, spec, tensors)
        v = values._shape
        if len(v) > len(r) or builtins.any(x != 1 and x != y for x, y in zip(reversed(v), reversed(r))):
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(v)} cannot be broadcast to indexing "
                               f"result of shape {list(r)}")
    return [(a._shape, a.dtype)], [None, a.dtype] + [None] * len(tensors)


def _index_result_shape(shape, spec, tensors):
    """The shape ``a[spec]`` has under NumPy's advanced-indexing rules (what the kernel computes): the
    broadcast index shape replaces adjacent advanced indices in place, or goes first when they are apart."""
    adv, out, bshapes = [], [], []
    i = 0
    for it in spec:
        if isinstance(it, tuple) or (isinstance(it, int) and not isinstance(it, bool)):
            t = tensors[it[1]] if isinstance(it, tuple) else None
            if t is not None and t.dtype is _dt.bool:
                bshapes.append((int(t.sum().item()),))
                i += t.ndim
            else:
                bshapes.append(t._shape if t is not None else ())
                i += 1
            adv.append(len(out))
            out.append(None)
        elif it is None:
            out.append(1)
        else:
            out.append(len(range(*it.indices(shape[i]))))
            i += 1
    out.extend(shape[i:])
    rest = [n for n in out if n is not None]
    if not adv:
        return tuple(rest)
    b = _strides.broadcast_shapes(*bshapes)
    if adv == list(range(adv[0], adv[0] + len(adv))):
        return tuple(rest[:adv[0]]) + b + tuple(rest[adv[0]:])
    return b + tuple(rest)


def _index_put_bw(c, g):
    from .creation import zeros
    a, values, *tensors = c.inputs
    spec = c.kw["spec"]
    ga = g if c.kw["accumulate"] else index_put(g, zeros((), dtype=g.dtype, device=g.device), tensors, spec, False)
    gv = dispatch(_index_op, (g, *tensors), {"spec": spec})
    return (ga, gv) + (None,) * len(tensors)


# the indices only (self's formula takes only values' shape and dtype, for zeros_like)
_index_put_op = defop("index_put", _index_put_meta, _index_put_bw, save_inputs=lambda n, edges, kw: set(range(2, n)))


def index_put(input, values, tensors, spec, accumulate=False):
    """Out-of-place ``input[spec] = values`` (or ``+=`` with ``accumulate``) for advanced indices."""
    if not isinstance(values, Tensor):
        from .creation import tensor
        values = tensor(values, dtype=input.dtype, device=input.device)
    return dispatch(_index_put_op, (input, values, *tensors), {"spec": spec, "accumulate": accumulate})


def _check_0d_int(self, idx):
    """PyTorch's messages for a lone int indexing a 0-d tensor."""
    if not self.ndim and isinstance(idx, int) and not isinstance(idx, bool):
        if idx:
            raise IndexError(f"index {idx} is out of bounds for dimension 0 with size 0")
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                         "in C++ to convert a 0-dim tensor to a number")


def getitem(self, idx):
    """``self[idx]``: a view for ints/slices/None/Ellipsis; a copy with integer or boolean tensor indices."""
    if isinstance(idx, int) and not isinstance(idx, bool):
        from .movement import select
        _check_0d_int(self, idx)
        if idx < -self._shape[0] or idx >= self._shape[0]:
            raise IndexError(f"index {idx} is out of bounds for dimension 0 with size {self._shape[0]}")
        return select(self, 0, idx)
    if isinstance(idx, slice) and not self.ndim:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    spec, tensors = _parse_index(self, idx)
    if not tensors:
        return basic_index(self, spec)
    view, spec = _split_spec(self, spec, tensors)
    return dispatch(_index_op, (view, *tensors), {"spec": spec})


def setitem(self, idx, value):
    """``self[idx] = value`` in place (writes through views; version counter bumped), as PyTorch's
    ``THPVariable_setitem``: ``value`` is a tensor or a Python number (TypeError for anything else; a number is
    range-checked for self's dtype); leading size-1 dims of ``value`` are dropped, then it broadcasts to
    ``self[idx]``'s shape (RuntimeError: expand's message for ints/slices/None/Ellipsis, index_put's shape
    mismatch for tensor indices). With tensor indices a tensor value must have self's dtype, except a one-element
    value under a single mask (PyTorch's masked_fill_ route); with basic indices it is converted."""
    if isinstance(idx, Tensor) and idx.dtype is _dt.uint8 and not isinstance(value, Tensor):
        self._check_inplace()
        # PyTorch fills through masked_fill_ here, which takes bool masks only
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    value = _setitem_value(self, value)
    if idx is False:
        return  # PyTorch writes nothing for a lone False, whatever the value's shape
    _check_0d_int(self, idx)
    # a lone True is self.unsqueeze(0), written as a view (PyTorch's copy_to), not a mask
    spec, tensors = ((None,) + (slice(None),) * self.ndim, []) if idx is True else _parse_index(self, idx)
    if _state.enabled and self.requires_grad and self.grad_fn is None:
        # PyTorch's check runs on what it writes: self itself, or a view of it (int, partial slice, None)
        view = builtins.any(it is None or not isinstance(it, (slice, tuple)) or
                            (isinstance(it, slice) and it != slice(None)) for it in spec)
        raise RuntimeError(f"a {'view of a ' if view else ''}leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    if value.ndim and value._shape[0] == 1:
        lead = 0
        while lead < value.ndim and value._shape[lead] == 1:
            lead += 1
        value = value.reshape(value._shape[lead:])
    if not tensors:
        dst = basic_index(self, spec)
        if value.ndim and value._shape != dst._shape:
            value = value.expand(dst._shape)  # expand's RuntimeError names the shapes as PyTorch's copy_to does
        dst._write(value)
        return
    view, spec = _split_spec(self, spec, tensors)
    if value.dtype is not self.dtype:
        if len(tensors) == 1 and tensors[0].dtype is _dt.bool and value.numel() == 1:
            value = value.to(self.dtype)  # PyTorch's masked_fill_ route converts a one-element value
        else:
            _index_put_dtype(self, value)
    view._write(index_put(_original_self(view, value), value, tensors, spec, False))


# C++ type names in PyTorch's "value cannot be converted" message
_CONVERT_NAME = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t",
                 "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def _setitem_value(self, value):
    """The tensor ``value`` stands for in ``self[...] = value``: a tensor as is; a Python bool, int, float or
    complex (or NumPy integer) as a 0-d tensor of self's dtype, with PyTorch's checks: ValueError for an int
    outside int64, RuntimeError for a value the dtype cannot hold (bool, float16 and bfloat16 take anything;
    uint8 also takes negatives down to -255, which wrap)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.integer) and not isinstance(value, np.bool_):
        value = int(value)
    if not isinstance(value, (bool, int, float, complex)):
        t = type(value)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise TypeError(f"can't assign a {name} to a {self.type()}")
    if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    d = self.dtype
    if not isinstance(value, bool) and d.name in _CONVERT_NAME and _overflows(value, d):
        raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAME[d.name]} without overflow")
    from .creation import tensor
    # through the number's own 64-bit dtype: one rounding to d, and int -> uint8 wraps instead of raising
    own = _dt.bool if isinstance(value, bool) else _dt.int64 if isinstance(value, int) else \
        _dt.float64 if isinstance(value, float) else _dt.complex128
    if own.is_floating_point and d.is_floating_point:
        own = d
    t = tensor(value, dtype=own, device=self.device)
    return t if t.dtype is d else t.to(d)


def _overflows(v, d):
    """PyTorch's ``c10::overflows`` for a Python number converted to dtype ``d`` (not bool/float16/bfloat16)."""
    import math
    if isinstance(v, complex):
        if d.is_complex:
            return False
        if v.imag != 0:
            return True
        v = v.real
    if d.is_complex:
        v = builtins.abs(v) if isinstance(v, float) else v
        d = _dt.float32 if d is _dt.complex64 else _dt.float64
    if d.is_floating_point:
        return isinstance(v, float) and math.isfinite(v) and builtins.abs(v) > _dt.finfo(d).max
    info = _dt.iinfo(d)
    if isinstance(v, float):
        return math.isnan(v) or math.isinf(v) or v < info.min or v > info.max
    lo = -info.max if d is _dt.uint8 else info.min  # negatives wrap into unsigned types (two's complement)
    return v < lo or v > info.max


def _original_self(self, value):
    """The tensor an in-place index_put reads: a copy when a graph is recorded, because the node saves its
    input and the write that follows would change it (PyTorch's original_self)."""
    from ..autograd.grad_mode import _state
    if _state.enabled and (self.requires_grad or (isinstance(value, Tensor) and value.requires_grad)):
        return self.clone()
    return self


method("__getitem__")(getitem)
method("__setitem__")(setitem)


@method("index_put_")
def index_put_(self, indices, values, accumulate=False):
    """``self[indices] = values`` (``+=`` when ``accumulate``) in place; ``indices`` a tuple of tensors;
    ``values`` of self's dtype (RuntimeError otherwise, as PyTorch)."""
    _index_put_dtype(self, values)
    self._check_inplace()
    spec, tensors = _parse_index(self, tuple(indices))
    return self._write(index_put(_original_self(self, values), values, tensors, spec, accumulate))


@method("index_put")
def _index_put_method(self, indices, values, accumulate=False):
    """Out-of-place ``index_put_`` (``Tensor.index_put``)."""
    _index_put_dtype(self, values)
    spec, tensors = _parse_index(self, tuple(indices))
    return index_put(self, values, tensors, spec, accumulate)


def _index_put_dtype(self, values):
    if isinstance(values, Tensor) and values.dtype is not self.dtype:
        from .movement import _SCALAR_TYPE as w
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {w[self.dtype.name]} "
                           f"for the destination and {w[values.dtype.name]} for the source.")


# ---- gather / scatter ------------------------------------------------------------------------------------
def _check_index(name, input, dim, index, src=None):
    """PyTorch's gather/scatter checks: an int32/int64 index of input's rank, no larger than input (and src)
    outside ``dim``, entries in [0, size of dim); a tensor src of input's dtype."""
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"{'scatter' if name.startswith('scatter') else name}(): Expected dtype int32/int64 for "
                           "index")
    if isinstance(src, Tensor) and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(index.ndim):
        if d != dim and index._shape[d] > input._shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index._shape)} to be "
                               f"smaller than self {list(input._shape)} apart from dimension {dim}")
    if isinstance(src, Tensor):
        for d in range(index.ndim):
            if index._shape[d] > src._shape[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index {list(index._shape)} to be "
                                   f"smaller than src {list(src._shape)}")
    if index.numel():
        size = input._shape[dim] if input.ndim else 1
        bounds = _index_bounds(index)
        if bounds is None:
            return  # computed by a compiled function's graph, not yet run: the kernel checks it when the graph runs
        lo, hi = bounds
        if lo < 0 or hi >= size:  # PyTorch's gather/scatter take no negative indices
            # PyTorch's kernel names the first bad index it meets (in order, for a 1-D index)
            a = index.numpy(force=True).reshape(-1)
            bad = int(a[(a < 0) | (a >= size)][0])
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _gather_meta(a, index, dim):
    return [(index._shape, a.dtype)], [None, None]


def _gather_bw(c, g):
    from .creation import zeros
    a, index = c.inputs
    return scatter_add(zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.kw["dim"], index, g), None


_gather_op = defop("gather", _gather_meta, _gather_bw, complex_grad=True)


@method("gather")
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` (for dim 0), shape of ``index`` (``torch.gather``)."""
    d = _strides.wrap_dim(dim, input.ndim)
    _check_index("gather", input, d, index)
    if input.ndim == 0:  # a 0-d input acts as a 1-element vector (PyTorch); the result has index's shape
        return gather(input.reshape(1), 0, index.reshape(-1)).reshape(index._shape)
    return dispatch(_gather_op, (input, index), {"dim": d})


def _scatter_meta(a, index, src, dim, reduce=None):
    return [(a._shape, a.dtype)], [None, None, a.dtype if isinstance(src, Tensor) else None]


def _scatter_bw(c, g):
    a, index, src = c.inputs
    d = c.kw["dim"]
    if c.kw.get("reduce") == "add":
        ga = g
    else:
        ga = scatter(g, d, index, 0.0)
    # src itself is never saved; the index of scatter_add only when src needs its gradient
    gs = gather(g, d, index) if len(c.next_edges) > 2 and c.next_edges[2] is not None else None
    return ga, None, gs


# the index; for scatter_add (reduce="add") only when src needs its gradient, as it is named by src's formula only
_scatter_op = defop("scatter", _scatter_meta, _scatter_bw, save_inputs=lambda n, edges, kw: {1} if kw.get(
    "reduce") != "add" or (n > 2 and edges[2] is not None) else set())


@method("scatter")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with ``src`` (tensor or scalar ``value``) written at ``index`` along ``dim``."""
    given = src if src is not None else value
    if given is None or not isinstance(given, (Tensor, int, float, complex)):
        # PyTorch's overloads take a Tensor src or a Number value: anything else matches none of them
        raise TypeError(f"scatter() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}, {type(index).__name__}, {type(given).__name__}), but expected one "
                        f"of:\n * (Tensor input, int dim, Tensor index, Tensor src)\n"
                        f" * (Tensor input, int dim, Tensor index, Tensor src, *, str reduce)\n"
                        f" * (Tensor input, int dim, Tensor index, Number value)\n"
                        f" * (Tensor input, int dim, Tensor index, Number value, *, str reduce)")
    if not isinstance(given, Tensor):
        check_scalar_fits(given, input.dtype)
    src = given
    d = _strides.wrap_dim(dim, input.ndim)
    _check_index("scatter", input, d, index, src)
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
    return dispatch(_scatter_op, (input, index, src), {"dim": d, "reduce": reduce} if reduce else {"dim": d})


@method("scatter_add")
def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (duplicates accumulate); TypeError
    when ``src`` is not a tensor, as PyTorch."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 4) must be Tensor, not {type(src).__name__}")
    d = _strides.wrap_dim(dim, input.ndim)
    _check_index("scatter_add", input, d, index, src)
    return dispatch(_scatter_op, (input, index, src), {"dim": d, "reduce": "add"})


method("scatter_")(lambda self, dim, index, src=None, *, value=None, reduce=None: self._inplace(
    scatter, dim, index, src, value=value, reduce=reduce))
method("scatter_add_")(lambda self, dim, index, src: self._inplace(scatter_add, dim, index, src))


# ---- scatter_reduce: sum and mean from scatter_add; amax, amin and prod from one op (cpu kernel) -------------
def _scatter_reduce_meta(a, index, src, dim, reduce, include_self):
    return [(a._shape, a.dtype)], [None, None, None]


def _scatter_reduce_bw(c, g):
    from .pointwise import where
    a, index, src = c.inputs
    out = c.out
    d, reduce, include_self = c.kw["dim"], c.kw["reduce"], c.kw["include_self"]
    touched = scatter_add(_zeros_of(a), d, index, src.new_ones(index.shape, dtype=a.dtype)) > 0
    if reduce == "prod":
        if bool((src == 0).any()) or (include_self and bool(((a == 0) & touched).any())):
            raise NotImplementedError("scatter_reduce: the gradient of reduce='prod' with zero elements is not "
                                      "implemented in tinytorch")
        ga = where(touched, g * out / where(a == 0, 1, a), g) if include_self else where(touched, 0, g)
        gs = gather(g * out, d, index) / src
        return ga, None, gs
    # amax / amin: the gradient is shared evenly by every element equal to the result (PyTorch's rule)
    hit_src = (src == gather(out, d, index)).to(g.dtype)
    hit_self = ((a == out) & touched).to(g.dtype) if include_self else None
    count = scatter_add(_zeros_of(a), d, index, hit_src)
    if hit_self is not None:
        count = count + hit_self
    safe = where(count == 0, 1, count)
    gs = gather(g / safe, d, index) * hit_src
    ga = where(touched, g * hit_self / safe, g) if include_self else where(touched, 0, g)
    return ga, None, gs


def _zeros_of(a):
    """Zeros of ``a``'s shape, dtype and device."""
    from .creation import zeros
    return zeros(a._shape, dtype=a.dtype, device=a.device)


_SR_OPS = {}
defop_on_cpu("scatter_reduce", _scatter_reduce_meta, _scatter_reduce_bw, _SR_OPS, save_output=True)


@method("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with the elements of ``src`` reduced into the positions ``index`` along ``dim``
    (``torch.scatter_reduce``): reduce is 'sum', 'prod', 'mean', 'amax' or 'amin'; with
    ``include_self=False`` the values of ``input`` at positions that receive something are left out.
    Positions that receive nothing keep ``input``. Gradients follow PyTorch (amax/amin share it evenly among
    ties). RuntimeError for an unknown reduce or mismatched dtypes."""
    from .pointwise import where
    if not isinstance(reduce, str):
        raise TypeError(f"scatter_reduce(): argument 'reduce' (position 4) must be str, not {type(reduce).__name__}")
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if (reduce == "mean" and input.dtype is _dt.bool) or (reduce in ("amax", "amin") and input.dtype.is_complex):
        raise NotImplementedError(f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not implemented for "
                                  f"'{SCALAR_NAMES[input.dtype.name]}'")
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    _check_index("scatter_reduce", input, d, index, src)
    if reduce in ("sum", "mean"):
        # counted in int64: a complex count could not be compared with 0
        ones = src.new_ones(index.shape, dtype=_dt.int64)
        count = scatter_add(_zeros_of(input).to(_dt.int64), d, index, ones)
        base = input if include_self else where(count > 0, 0, input)
        total = scatter_add(base, d, index, src[tuple(slice(0, n) for n in index.shape)])
        if reduce == "sum":
            return total
        n = count + 1 if include_self else where(count > 0, count, 1)
        return total / n if input.dtype.is_floating_point or input.dtype.is_complex else total // n
    return dispatch(_SR_OPS["scatter_reduce"], (input, index, src[tuple(slice(0, n) for n in index.shape)]),
                    {"dim": d, "reduce": reduce, "include_self": include_self})


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    if not isinstance(reduce, str):
        raise TypeError(f"scatter_reduce_(): argument 'reduce' (position 4) must be str, not {type(reduce).__name__}")
    return self._inplace(scatter_reduce, dim, index, src, reduce, include_self=include_self)


method("scatter_reduce_")(_scatter_reduce_)


@method("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduces the slices of ``source`` along ``dim`` into the slices of ``input`` named by the 1-D ``index``
    with 'prod', 'mean', 'amax' or 'amin', counting input's own slice unless ``include_self`` is False
    (``torch.index_reduce``): ``scatter_reduce`` with the index spread along ``dim``. Same shape as input.
    Checks in PyTorch's order: TypeError for a non-str reduce, RuntimeError for an unknown one, IndexError for a
    bad dim or an index of more than one dim, RuntimeError for a non-int index, a source of another dtype or a
    count of indices other than ``source.size(dim)``, IndexError for an index out of range."""
    if not isinstance(reduce, str):
        raise TypeError(f"index_reduce(): argument 'reduce' (position 4) must be str, not {type(reduce).__name__}")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _strides.wrap_dim(dim, builtins.max(input.ndim, 1))
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{SCALAR_NAMES[index.dtype.name]} and size: {list(index._shape)}")
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{SCALAR_NAMES[index.dtype.name]}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_reduce_(): self ({SCALAR_NAMES[input.dtype.name]}) and source "
                           f"({SCALAR_NAMES[source.dtype.name]}) must have the same scalar type")
    n_src = source._shape[d] if source.ndim else 1
    if index.numel() != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    if index.numel():
        bounds = _index_bounds(index)
        size = input._shape[d] if input.ndim else 1
        if bounds is not None and (bounds[0] < 0 or bounds[1] >= size):
            raise IndexError("index out of range in self")
    if input.ndim == 0 or source.ndim == 0:
        if input.ndim != source.ndim:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                               f"Got self.shape = {list(input._shape)} source.shape = {list(source._shape)}")
        return index_reduce(input.reshape(1), 0, index.reshape(1), source.reshape(1), reduce,
                            include_self=include_self).reshape(())
    shape = [1] * source.ndim
    shape[d] = index.numel()
    return input.scatter_reduce(d, index.reshape(shape).expand(source._shape), source, reduce,
                                include_self=include_self)


method("index_reduce_")(lambda self, dim, index, source, reduce, *, include_self=True: self._inplace(
    lambda x: index_reduce(x, dim, index, source, reduce, include_self=include_self)))


def _index_select_meta(a, index, dim):
    shape = a._shape[:dim] + (index.numel(),) + a._shape[dim + 1:] if a.ndim else ()
    return [(shape, a.dtype)], [None, None]


def _index_select_bw(c, g):
    from .creation import zeros
    a, index = c.inputs
    return index_add(zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.kw["dim"], index, g), None


_index_select_op = defop("index_select", _index_select_meta, _index_select_bw, save_inputs=(1,),  # index
                        complex_grad=True)


def _index_bounds(index):
    """(min, max) of a non-empty index tensor, computed on the host; None when a compiled function's graph has not
    computed it yet or the index is on the meta device."""
    if getattr(index._storage, "recording", None) is not None or index.device.type == "meta":
        return None  # a meta index has no values to check, as in PyTorch
    a = index.numpy(force=True)  # a copy from a device: one transfer, not two reductions and two syncs
    return int(a.min()), int(a.max())


def _check_1d_index(name, input, dim, index, bounds=True):
    if index.dtype not in (_dt.int64, _dt.int32):
        if name == "index_select":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index but got: {SCALAR_NAMES[index.dtype.name]}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    size = input._shape[dim] if input.ndim else 1
    if not bounds or name == "index_add" and input.ndim > 1 and input.numel() == 0:
        return  # PyTorch's kernel returns before reading any index when a matrix input has no elements
    if index.numel():
        if name == "index_select" and size == 0 and input.ndim > 1:
            # PyTorch's kernel checks the selected dim is non-empty before it looks at any index
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        bounds = _index_bounds(index)
        if bounds is None:
            return  # computed by a compiled function's graph, not yet run: the kernel checks it when the graph runs
        lo, hi = bounds
        if lo < 0 or hi >= size:
            # PyTorch's kernels differ: an IndexError from index_select along dim 0 and from index_add on a
            # vector, a RuntimeError otherwise
            exc = IndexError if (dim == 0 if name == "index_select" else input.ndim <= 1) else RuntimeError
            raise exc(f"{name}(): index out of range in self: index {hi if hi >= size else lo} for "
                      f"dimension {dim} with size {size}")


@method("index_select")
def index_select(input, dim, index):
    """Entries of ``input`` at the 1-D ``index`` along ``dim`` (a copy)."""
    d = _strides.wrap_dim(dim, input.ndim)
    _check_1d_index("index_select", input, d, index)
    if input.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
        return index_select(input.reshape(1), 0, index.reshape(-1)).reshape(())
    return dispatch(_index_select_op, (input, index.reshape(-1)), {"dim": d})


def _index_add_meta(a, index, src, dim, alpha=1):
    if src.dtype is not a.dtype:
        from .movement import _SCALAR_TYPE as w
        raise RuntimeError(f"index_add_(): self ({w[a.dtype.name]}) and source ({w[src.dtype.name]}) must have the "
                           "same scalar type")
    # PyTorch's index_func_meta_impl checks, in its order
    if dim != 0 and dim >= src.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {dim} is out of bounds of the source tensor with dim "
                           f"{src.ndim}")
    n_src = src._shape[dim] if src.ndim else 1
    if index.numel() != n_src:
        raise RuntimeError(f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): "
                           f"({n_src}), for dim: {dim}")
    exp = a._shape[:dim] + (index.numel(),) + a._shape[dim + 1:]
    if src._shape != exp and not (a.ndim == 0 and src.numel() == 1):
        raise RuntimeError(f"index_add_(): Expected source to have shape {list(exp)}, got {list(src._shape)}")
    return [(a._shape, a.dtype)], [None, None, a.dtype]


def _index_add_bw(c, g):
    a, index, src = c.inputs
    alpha = c.kw.get("alpha", 1)
    if c.next_edges[2] is None:  # index and source are saved only for source's gradient
        return g, None, None
    gs = index_select(g, c.kw["dim"], index)
    return g, None, (gs * alpha if alpha != 1 else gs)


# index and source (for its shape, in PyTorch's formula) are saved only for source's gradient
_index_add_op = defop("index_add", _index_add_meta, _index_add_bw, save_inputs=((1, (2,)), (2, (2,))))


@method("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at the 1-D ``index`` along ``dim``. ``alpha``: a
    number or a 0-d tensor (TypeError otherwise; RuntimeError for a complex one into a real input)."""
    if isinstance(alpha, Tensor) and alpha.ndim == 0:
        alpha = alpha.item()
    if not isinstance(alpha, (int, float, complex)):
        raise TypeError(f"index_add(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    check_scalar_fits(alpha, input.dtype)
    d = _strides.wrap_dim(dim, input.ndim)
    _check_1d_index("index_add", input, d, index, bounds=False)
    if not isinstance(source, Tensor):
        raise TypeError(f"index_add(): argument 'source' (position 3) must be Tensor, not {type(source).__name__}")
    _index_add_meta(input, index, source, d)  # source's checks come before the index's bounds (PyTorch)
    _check_1d_index("index_add", input, d, index)
    if input.ndim > 1 and input.numel() == 0 and index.numel():
        # nothing is written and PyTorch reads no index: the kernel gets none
        index, source = index[:0], source.narrow(d, 0, 0)
    return dispatch(_index_add_op, (input, index, source), {"dim": d, "alpha": alpha})


def _index_add_(self, dim, index, source, *, alpha=1):
    if not isinstance(alpha, (int, float, complex, Tensor)):
        raise TypeError(f"index_add_(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    return self._inplace(index_add, dim, index, source, alpha=alpha)


method("index_add_")(_index_add_)


def _empty_dim_write(op, input, d, index):
    """PyTorch's checks of index_copy / index_fill on an input with no elements. Its kernel restrides the input
    to the index's length along ``d`` with stride 0: when that dim is empty and the restrided shape has
    elements, the view needs memory the input does not have (RuntimeError from setStorage). Otherwise nothing
    is written and no index is checked. True when there is nothing to do."""
    if input.numel():
        return False
    n = index.numel()
    if input.ndim and input._shape[d] == 0 and n:
        sizes = list(input._shape)
        sizes[d] = n
        strides = list(input._stride)
        strides[d] = 0
        if 0 not in sizes:
            isz = input.element_size()
            need = isz * (1 + builtins.sum((sz - 1) * st for sz, st in zip(sizes, strides)))
            raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and itemsize {isz} "
                               f"requiring a storage size of {need} are out of bounds for storage of size 0")
    return True


@method("index_copy")
def index_copy(input, dim, index, source):
    """``input`` with the slices ``index`` of ``dim`` replaced by those of ``source`` (``torch.index_copy``).
    Differentiable in input (zero where overwritten) and source. RuntimeError for a non-int64 index or a source
    of another dtype or a source whose slices differ from input's; IndexError (as PyTorch) for an index of more
    than one dim, a source of another rank (unless one is 0-d) or a count of indices other than
    ``source.size(dim)``."""
    if isinstance(index, Tensor) and index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    _long_index("index_copy_", index)
    if input.ndim and source.ndim and input.ndim != source.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    n_src = source._shape[d] if source.ndim else 1
    if index.numel() != n_src:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) "
                         f"({n_src})")
    rest_in = [s for i, s in enumerate(input._shape) if i != d]
    rest_src = [s for i, s in enumerate(source._shape) if i != d]
    if input.ndim and source.ndim and rest_in != rest_src:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                           f"slice shape: {' '.join(map(str, rest_in))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, rest_src))} at dimension {d}.")
    if source.dtype is not input.dtype:
        from .movement import _SCALAR_TYPE as w
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{w[input.dtype.name]} and (source) {w[source.dtype.name]}")
    if _empty_dim_write("index_copy_", input, d, index):
        return input.clone()
    n = input._shape[d] if input.ndim else 1
    bounds = _index_bounds(index) if index.numel() else None
    if bounds is not None and (bounds[0] < 0 or bounds[1] >= n):
        # checked here (PyTorch's index_copy takes no negative index): NumPy would wrap one, or raise its own
        # IndexError for one past the end
        bad = bounds[1] if bounds[1] >= n else bounds[0]
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {n}")
    if input.ndim == 0:
        out = input.reshape(1).clone()
        out[index.reshape(-1)] = source.reshape(-1)
        return out.reshape(())
    sl = (slice(None),) * d + (index.reshape(-1),)  # a 0-d index names one slice, kept as a dim of source
    out = input.clone()
    out[sl] = source
    return out


method("index_copy_")(lambda self, dim, index, source: self._inplace(index_copy, dim, index, source))


@method("index_fill")
def index_fill(input, dim, index, value):
    """A copy of ``input`` with entries at ``index`` along ``dim`` set to the scalar ``value`` (a number or a
    0-d tensor); ``index`` a 0-d or 1-D int64 tensor, negative entries counting from the end (``torch.index_fill``).
    IndexError for a wrong index dtype or an entry out of range, RuntimeError for a value with dims."""
    d = _strides.wrap_dim(dim, input.ndim)
    from .creation import zeros
    from .pointwise import where
    if index.dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                           "dimension(s).")
    if isinstance(value, Tensor) and value.dtype.is_complex and not input.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    check_scalar_fits(value, input.dtype)
    if _empty_dim_write("index_fill_", input, d, index):
        return input.clone()
    n = input._shape[d] if input.ndim else 1
    if index.numel():
        bounds = _index_bounds(index)
        lo, hi = bounds if bounds is not None else (0, 0)  # a pending index: the kernel checks it when it runs
        if lo < -n or hi >= n:
            raise IndexError(f"index {hi if hi >= n else lo} is out of bounds for dimension {d} with size {n}")
        index = where(index < 0, index + n, index)
    mask = index_add(zeros(n, dtype=_dt.int64, device=input.device), 0, index.reshape(-1),
                     zeros(index.numel(), dtype=_dt.int64, device=input.device) + 1) > 0
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = n
    return where(mask.reshape(shape), value, input).to(input.dtype)


method("index_fill_")(lambda self, dim, index, value: self._inplace(index_fill, dim, index, value))


@method("masked_fill")
def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` where the bool ``mask`` (broadcastable) is True."""
    if mask.dtype is not _dt.bool:
        from .creation import _CPP_NAMES
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_NAMES.get(mask.dtype.name, mask.dtype.name)}")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    check_scalar_fits(value, input.dtype)
    from .pointwise import where
    r = where(mask, value, input)
    return r if r.dtype is input.dtype else r.to(input.dtype)


method("masked_fill_")(lambda self, mask, value: self._inplace(masked_fill, mask, value))


@method("masked_select")
def masked_select(input, mask):
    """1-D tensor of the elements of ``input`` where ``mask`` (broadcast together) is True."""
    if mask.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return dispatch(_masked_select_op, (input, mask))


def _masked_select_decomp(input, mask):
    shape = _strides.broadcast_shapes(input._shape, mask._shape)
    return getitem(input.expand(shape), mask.expand(shape))


def _masked_select_meta(input, mask):
    _strides.broadcast_shapes(input._shape, mask._shape)
    return [(None, input.dtype)], [None, None]  # its length depends on the mask's values


def _masked_select_bw(c, g):
    # masked_select_backward: the gradient scattered, in order, into zeros at the mask's True positions
    from .creation import zeros
    input, mask = c.inputs
    shape = _strides.broadcast_shapes(input._shape, mask._shape)
    return zeros(shape, dtype=g.dtype, device=g.device).masked_scatter(mask.expand(shape), g), None


# self and mask saved whenever a graph is recorded (masked_select_backward names both)
_masked_select_op = defop("masked_select", _masked_select_meta, _masked_select_bw, decomp=_masked_select_decomp,
                          complex_grad=True)


@method("masked_scatter")
def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` is True filled, in order, with the leading elements of
    ``source`` (``torch.masked_scatter``). ``input`` and ``mask`` broadcast together (the result has their
    broadcast shape). RuntimeError for a source of another dtype, a mask that is not bool, or a source with
    fewer elements than the mask has True entries."""
    return _masked_scatter(input, mask, source, False)


def _masked_scatter(input, mask, source, inplace):
    if source.dtype is not input.dtype:
        # (PyTorch's message lacks the space after "got")
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{SCALAR_NAMES[input.dtype.name]} and {SCALAR_NAMES[source.dtype.name]}")
    if mask.dtype is not _dt.bool:
        # checked before the mask is counted or used as an index (NumPy would refuse a float mask itself)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{SCALAR_NAMES[mask.dtype.name]}")
    if not inplace and tuple(mask._shape) != tuple(input._shape):
        # the out-of-place form broadcasts self with the mask; the in-place one only expands the mask
        input = input.expand(_strides.broadcast_shapes(input._shape, mask._shape))
    m = mask.expand(input._shape) if tuple(mask._shape) != tuple(input._shape) else mask
    k = int(m.sum().item())
    if source.numel() < k:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    out = input.clone()
    out[m] = source.reshape(-1)[:k]
    return out


def _masked_scatter_self(input, mask, source):
    return _masked_scatter(input, mask, source, True)


_masked_scatter_self.__name__ = "masked_scatter"  # _inplace names the op "masked_scatter_" in its messages
method("masked_scatter_")(lambda self, mask, source: self._inplace(_masked_scatter_self, mask, source))


@method("nonzero")
def nonzero(input, *, as_tuple=False):
    """Indices of nonzero elements: (n, ndim) int64, or a tuple of 1-D index tensors with ``as_tuple``."""
    from .creation import _from_host
    a = input.detach().numpy(force=True)
    idx = np.nonzero(a) if a.ndim else (np.nonzero(np.atleast_1d(a))[0],)
    if as_tuple:
        return tuple(_from_host(np.ascontiguousarray(i, dtype=np.int64), _dt.int64, input.device) for i in idx)
    arr = np.stack(idx, axis=1).astype(np.int64) if a.ndim else np.zeros((len(idx[0]), 0), np.int64)
    return _from_host(arr, _dt.int64, input.device)


@method("argwhere")
def argwhere(input):
    return nonzero(input)


@method("take")
def take(input, index):
    """Elements of the flattened ``input`` at ``index`` (shape of ``index``; an int64 tensor, RuntimeError
    otherwise, as ``torch.take``)."""
    _long_index("take", index)
    return dispatch(_take_op, (input, index))


def _take_bw(c, g):
    # take_backward: zeros like self with the gradient accumulated at the flat indices
    from .creation import zeros
    from .pointwise import where
    input, index = c.inputs
    n = input.numel()
    flat = index.reshape(-1)
    flat = where(flat < 0, flat + n, flat) if n else flat
    acc = zeros(n, dtype=g.dtype, device=g.device).index_add(0, flat, g.reshape(-1))
    return acc.reshape(input._shape), None


# self and index saved whenever a graph is recorded (take_backward names both)
_take_op = defop("take", lambda input, index: ([(index._shape, input.dtype)], [None, None]), _take_bw,
                 decomp=lambda input, index: getitem(input.reshape(-1), index), complex_grad=True)


@method("put")
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (or with ``accumulate`` added) at the flat ``index``
    positions of row-major ``input`` (``torch.put``). index: int64, as many elements as source."""
    _long_index("put_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{SCALAR_NAMES[input.dtype.name]} and source.dtype = {SCALAR_NAMES[source.dtype.name]}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    flat = input.reshape(-1).clone()
    idx = index.reshape(-1)
    src = source.reshape(-1)
    if accumulate:
        flat = flat.index_add(0, idx, src)
    else:
        flat[idx] = src
    return flat.reshape(input._shape)


method("put_")(lambda self, index, source, accumulate=False: self._inplace(put, index, source, accumulate))


def _long_index(op, index):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype is not _dt.int64:
        from .movement import _SCALAR_TYPE
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{_SCALAR_TYPE.get(index.dtype.name, index.dtype.name)}")


@method("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """The entries of ``input`` at ``indices`` along ``dim``, the two broadcast against each other in the other
    dims (``torch.take_along_dim``); with ``dim=None`` the flattened input at the flattened indices. As PyTorch:
    with a dim, ``indices`` must be int64 and of input's rank (RuntimeError); without one, both are flattened as
    views (RuntimeError for a layout that cannot be) and the indices may be int32 or int64."""
    if dim is None:
        return gather(input.view(-1), 0, indices.view(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    if indices.dtype is not _dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{SCALAR_NAMES[indices.dtype.name]}")
    if input.ndim == 0:
        # PyTorch wraps the dim against one dim, then finds none to broadcast along (whatever the dim given)
        _strides.wrap_dim(dim, 0)
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _strides.wrap_dim(dim, input.ndim)
    shp_i = list(input._shape)
    shp_x = list(indices._shape)
    shp_i[d] = shp_x[d] = 1
    b = _strides.broadcast_shapes(tuple(shp_i), tuple(shp_x))
    if input._shape[d] == 0 and indices._shape[d] != 0:
        # PyTorch's broadcasting of the two divides by input's empty size along dim
        raise RuntimeError("ZeroDivisionError")
    a_shape = list(b)
    a_shape[d] = input._shape[d]
    i_shape = list(b)
    i_shape[d] = indices._shape[d]
    return gather(input.expand(tuple(a_shape)), d, indices.expand(tuple(i_shape)))


# ---- out-of-place writes into a view: select_scatter, slice_scatter, diagonal_scatter -------------------
def _scatter_into(input, src, view_of, op=None):
    """``input`` with ``view_of(copy)`` replaced by ``src``: a differentiable out-of-place view write. With
    ``op`` (the PyTorch name), ``src`` must be a tensor of exactly the view's shape (PyTorch does not
    broadcast it): TypeError / RuntimeError otherwise, before anything is written."""
    if op is not None and not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' (position 2) must be Tensor, not {type(src).__name__}")
    out = input.clone()
    view = view_of(out)
    if op is not None and view._shape != src._shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src._shape)}, "
                           f"slice size = {list(view._shape)}")
    view.copy_(src)
    return out


@method("select_scatter")
def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (``torch.select_scatter``)."""
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


@method("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src`` (``torch.slice_scatter``);
    ``src`` must have the slice's shape. TypeError for a non-int step, RuntimeError for a step < 1."""
    if isinstance(step, bool) or not isinstance(step, int):
        raise TypeError(f"slice_scatter(): argument 'step' must be int, not {type(step).__name__}")
    if step < 1:
        raise RuntimeError("slice step must be positive")
    d = _strides.wrap_dim(dim, input.ndim)
    sl = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[sl], "slice_scatter")


@method("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src`` (``torch.diagonal_scatter``)."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))
