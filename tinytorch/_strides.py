"""Pure shape / stride / broadcasting math. No backend and no tensor touches anything here."""
import builtins


_CONTIG = {}


def contiguous_strides(shape):
    """Row-major strides (in elements) for ``shape`` (memoised: shapes repeat across training steps)."""
    r = _CONTIG.get(shape)
    if r is not None:
        return r
    r = _contiguous_strides(shape)
    if len(_CONTIG) < 4096:
        _CONTIG[shape] = r
    return r


def _contiguous_strides(shape):
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= builtins.max(shape[i], 1)
    return tuple(strides)


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def is_contiguous(shape, strides):
    """PyTorch's rule: dims of size 1 may carry any stride; a tensor with no elements is contiguous."""
    if 0 in shape:
        return True  # whatever its strides (an empty ndarray's are all 0)
    expected = 1
    for size, st in zip(reversed(shape), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and st != expected:
            return False
        expected *= size
    return True


def broadcast_shapes(*shapes, op=None):
    """The broadcast shape of ``shapes``; RuntimeError with PyTorch's message when they don't match."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # the common case (same-shape operands): nothing to broadcast
        return tuple(shapes[0])
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        # right to left, as PyTorch's infer_size: the message names the last mismatching dim
        for i in range(len(s) - 1, -1, -1):
            d = s[i]
            j = off + i
            o = out[j]
            if o == d or d == 1:
                continue
            if o == 1:
                out[j] = d
            else:
                raise RuntimeError(
                    f"{op + ': ' if op else ''}The size of tensor a ({o}) must match the size of tensor b ({d}) "
                    f"at non-singleton dimension {j}")
    return tuple(out)


def wrap_dim(dim, ndim, op=None):
    """Normalize a possibly negative ``dim``; IndexError with PyTorch's message when out of range."""
    if dim.__class__ is int and -ndim <= dim < ndim:  # the common case, checked first: every op wraps its dims
        return dim + ndim if dim < 0 else dim
    if not isinstance(dim, int):
        raise TypeError(f"{op or 'dim'}: dim must be an int, got {type(dim).__name__}")
    if not -2 ** 63 <= dim < 2 ** 63:
        # PyTorch's argument parser reads a dim into an int64 before any range check
        raise ValueError("Overflow when unpacking long long")
    n = builtins.max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim, op=None):
    if dims is None:
        return tuple(range(ndim))
    if dims.__class__ is int and -ndim <= dims < ndim:
        return (dims + ndim if dims < 0 else dims,)
    if isinstance(dims, int):
        dims = (dims,)
    for i, d in enumerate(dims):
        if isinstance(d, int) and not -2 ** 63 <= d < 2 ** 63:
            raise TypeError(f"{op or 'dim'}(): argument 'dim' failed to unpack the object at pos {i + 1} with error "
                            "\"Overflow when unpacking long long\"")
    out = tuple(wrap_dim(d, ndim, op) for d in dims)
    if len(set(out)) != len(out):
        rep = next(d for i, d in enumerate(out) if d in out[:i])
        raise RuntimeError(f"dim {rep} appears multiple times in the list of dims")
    return out


def infer_size(shape, n, op="view"):
    """Resolve one ``-1`` in ``shape`` for a tensor of ``n`` elements."""
    shape = tuple(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    if neg:
        rest = numel(s for s in shape if s != -1)
        if rest == 0 or n % rest:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
        shape = shape[:neg[0]] + (n // rest,) + shape[neg[0] + 1:]
    if numel(shape) != n:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    return shape


def view_strides(old_shape, old_strides, new_shape):
    """Strides that let ``new_shape`` view memory laid out as (old_shape, old_strides), or None.

    Port of the idea behind ATen's ``computeStride``: chunks of old dims that are contiguous with one
    another may be split or merged freely.
    """
    if numel(old_shape) == 0 or not old_shape:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)
