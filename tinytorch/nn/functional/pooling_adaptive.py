"""Adaptive average and max pooling: windows from PyTorch's start/end index rule for a given output size."""
import math

from ... import _dtype as _dt
from ..._ops.creation import empty, zeros
from ._utils import _scalar_name
from .pooling import _batched


def _adaptive_bounds(n_in, n_out):
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_args(name, input, output_size, nd, kind):
    """The output sizes of an adaptive ``kind`` ('avg' / 'max') pooling over the last ``nd`` dims, after
    PyTorch's checks, all made before anything is computed or allocated: RuntimeError for the wrong rank, an
    ``output_size`` of the wrong length or with a negative element, an empty non-batch dim (for 'avg' only
    the pooled dims count), an output whose size overflows or cannot be allocated; TypeError for a non-int
    element; NotImplementedError for a non-floating input. None keeps the input's size; 0 is an empty output."""
    import operator
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {name})")
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input._shape)}")
    if output_size is None:
        # PyTorch's 2-D / 3-D wrappers take len() of it in Python; the 1-D ones hand it to the argument parser
        if nd == 1:
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, not NoneType")
        raise TypeError("object of type 'NoneType' has no len()")
    if isinstance(output_size, (tuple, list)):
        sizes = tuple(output_size)
        if nd == 1:  # the argument parser checks the elements before the kernel checks the length
            for i, o in enumerate(sizes):
                if o is None:
                    raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but found "
                                    f"element of type NoneType at pos {i}")
        if len(sizes) != nd:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(sizes)})" if nd == 1
                               else f"{name}(): internal error: output_size.size() must be {nd}" if kind == "max"
                               else f"{name}: output_size must be {nd}")
    else:
        sizes = (output_size,) * nd
    out = []
    for i, (o, n) in enumerate(zip(sizes, input._shape[-nd:])):
        if o is None and nd > 1:  # (only the 2-D / 3-D wrappers read None as "keep this size")
            out.append(n)
            continue
        if isinstance(o, bool) or isinstance(o, float):
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(o).__name__} at pos {i}")
        try:
            out.append(operator.index(o))
        except TypeError:
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(o).__name__} at pos {i}") from None
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    first = input.ndim - nd if kind == "avg" else input.ndim - nd - 1
    for d in range(max(first, input.ndim - nd - 1), input.ndim):
        if input._shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input._shape)} with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(input.dtype)}'")
    shape = tuple(input._shape[:-nd]) + tuple(out)
    numel = math.prod(shape)
    if numel > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if numel > 2 ** 24:
        # a big output is allocated now, before windows are visited one by one: one too big for memory fails
        # here at once, as PyTorch's allocation does, instead of after a long loop
        try:
            empty(shape, dtype=input.dtype, device=input.device)
        except MemoryError:
            raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                               f"{numel * input.dtype.itemsize} bytes.") from None
    return tuple(out)


def _adaptive_empty(input, sizes, with_indices):
    """The result of an adaptive pooling with no element: values still connected to input's graph."""
    shape = tuple(input._shape[:input.ndim - len(sizes)]) + tuple(sizes)
    vals = input.reshape(-1)[:0].reshape(shape)
    return (vals, zeros(shape, dtype=_dt.int64, device=input.device)) if with_indices else vals


def _adaptive_pool2d(input, output_size, reduce):
    from ..._ops.shape import stack

    def f(x):
        n, c, h, w = x._shape
        oh, ow = output_size  # checked by the caller: ints, None resolved
        if h % oh == 0 and w % ow == 0:
            win = x.reshape(n, c, oh, h // oh, ow, w // ow)
            return reduce(reduce(win, 5), 3)
        rows = []
        for (h0, h1) in _adaptive_bounds(h, oh):
            cols = [reduce(reduce(x[:, :, h0:h1, w0:w1], 3), 2) for (w0, w1) in _adaptive_bounds(w, ow)]
            rows.append(stack(cols, -1))
        return stack(rows, -2)
    return _batched(f, input, 2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) to a fixed ``output_size`` (int or pair; None keeps a size,
    0 gives an empty output), with PyTorch's start/end index rule (``F.adaptive_avg_pool2d``). Errors as
    PyTorch's, raised before any work: see ``_adaptive_args``."""
    sizes = _adaptive_args("adaptive_avg_pool2d", input, output_size, 2, "avg")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    return _adaptive_pool2d(input, sizes, lambda t, d: t.mean(d))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` over (N, C, H, W) or (C, H, W); with ``return_indices`` also
    the flat ``h * W + w`` index of each maximum (``torch.nn.functional.adaptive_max_pool2d``). Errors as
    PyTorch's, raised before any work: see ``_adaptive_args``."""
    sizes = _adaptive_args("adaptive_max_pool2d", input, output_size, 2, "max")
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, sizes)
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    return _adaptive_pool2d(input, sizes, lambda t, d: t.amax(d))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """(values, flat h * W + w indices) of adaptive max pooling; the gradient goes to each window's maximum."""
    from ..._ops.shape import stack

    sizes = _adaptive_args("adaptive_max_pool2d", input, output_size, 2, "max")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, True)

    def f(x):
        n, c, h, w = x._shape
        oh, ow = sizes
        vals, idxs = [], []
        for (h0, h1) in _adaptive_bounds(h, oh):
            for (w0, w1) in _adaptive_bounds(w, ow):
                v, i = x[:, :, h0:h1, w0:w1].reshape(n, c, -1).max(-1)
                vals.append(v)
                idxs.append((h0 + i // (w1 - w0)) * w + w0 + i % (w1 - w0))
        return stack(vals, -1).reshape(n, c, oh, ow), stack(idxs, -1).reshape(n, c, oh, ow)
    if input.ndim == 3:
        v, i = f(input.unsqueeze(0))
        return v.squeeze(0), i.squeeze(0)
    return f(input)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling over (N, C, L) or (C, L) (``torch.nn.functional.adaptive_max_pool1d``)."""
    (o,) = _adaptive_args("adaptive_max_pool1d", input, output_size, 1, "max")
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, o)
    return _batched(lambda x: adaptive_max_pool2d(x.unsqueeze(2), (1, o)).squeeze(2), input, 1)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """(values, indices along L) of 1-D adaptive max pooling."""
    (o,) = _adaptive_args("adaptive_max_pool1d", input, output_size, 1, "max")
    x = input.unsqueeze(-2)
    v, i = adaptive_max_pool2d_with_indices(x, (1, o))
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (int or triple; None keeps a size),
    PyTorch's start/end window rule; with ``return_indices`` also the flat d * H * W + h * W + w index of each
    maximum (``torch.nn.functional.adaptive_max_pool3d``)."""
    sizes = _adaptive_args("adaptive_max_pool3d", input, output_size, 3, "max")
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, sizes)
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    from ..._ops.shape import stack

    def f(x):
        od, oh, ow = sizes
        for dim, o in ((2, od), (3, oh), (4, ow)):  # max is separable: one dim at a time
            size = x._shape[dim]
            if size % o == 0:
                x = x.reshape(x._shape[:dim] + (o, size // o) + x._shape[dim + 1:]).amax(dim + 1)
            else:
                x = stack([x.narrow(dim, a, b - a).amax(dim) for a, b in _adaptive_bounds(size, o)], dim)
        return x
    return _batched(f, input, 3)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """(values, flat d * H * W + h * W + w indices) of 3-D adaptive max pooling; the gradient goes to each
    window's maximum (the first one on ties)."""
    from ..._ops.shape import stack
    sizes = _adaptive_args("adaptive_max_pool3d", input, output_size, 3, "max")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, True)

    def f(x):
        n, c, d, h, w = x._shape
        od, oh, ow = sizes
        vals, idxs = [], []
        for d0, d1 in _adaptive_bounds(d, od):
            for h0, h1 in _adaptive_bounds(h, oh):
                for w0, w1 in _adaptive_bounds(w, ow):
                    v, i = x[:, :, d0:d1, h0:h1, w0:w1].reshape(n, c, -1).max(-1)
                    hw = (h1 - h0) * (w1 - w0)
                    dd, r = d0 + i // hw, i % hw
                    idxs.append((dd * h + h0 + r // (w1 - w0)) * w + w0 + r % (w1 - w0))
                    vals.append(v)
        return stack(vals, -1).reshape(n, c, od, oh, ow), stack(idxs, -1).reshape(n, c, od, oh, ow)
    if input.ndim == 4:
        v, i = f(input.unsqueeze(0))
        return v.squeeze(0), i.squeeze(0)
    if input.ndim != 5:
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    return f(input)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (int or triple; None keeps a
    size), with PyTorch's start/end index rule (``F.adaptive_avg_pool3d``). Box means are separable: the
    (H, W) pooling is adaptive_avg_pool2d, then D is pooled the same way."""
    od, oh, ow = sizes = _adaptive_args("adaptive_avg_pool3d", input, output_size, 3, "avg")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    x = input.unsqueeze(0) if input.ndim == 4 else input
    n, c, d, h, w = x._shape
    y = adaptive_avg_pool2d(x.reshape(n, c * d, h, w), (oh, ow)).reshape(n, c, d, oh * ow)
    y = adaptive_avg_pool2d(y, (od, oh * ow)).reshape(n, c, od, oh, ow)
    return y.squeeze(0) if input.ndim == 4 else y


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over (N, C, L) or (C, L) (``torch.nn.functional.adaptive_avg_pool1d``)."""
    (o,) = _adaptive_args("adaptive_avg_pool1d", input, output_size, 1, "avg")
    return _batched(lambda x: adaptive_avg_pool2d(x.unsqueeze(2), (1, o)).squeeze(2), input, 1)
