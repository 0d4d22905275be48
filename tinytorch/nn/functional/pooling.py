"""Max, average, power-average and fractional max pooling, and max unpooling (adaptive pooling is in
``pooling_adaptive``). Windows are reshapes where they tile the input, else im2col."""
import math

from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ..._ops.creation import ones, zeros
from ..._ops.nn import im2col
from ..._ops.shape import pad as _pad
from ..._ops._util import check_dtype
from ._utils import _pair, _scalar_name
from .activation import relu
from .conv import _int_tuple


def _pool_check(name, nd, kernel_size, stride, padding, dilation=1, int32=True):
    """PyTorch's checks of a pooling window over ``nd`` dims, made before anything is computed: RuntimeError
    for a zero stride, a kernel size <= 0, a negative stride or padding, a dilation <= 0 (TypeError /
    RuntimeError for non-int elements / a wrong length, as for convolutions). With ``int32`` (ATen's 2-D and
    3-D pooling kernels, which narrow the geometry to C int) RuntimeError for a value outside int32."""
    if name in ("max_pool2d", "avg_pool2d", "max_pool3d", "avg_pool3d"):
        # ATen's own length checks of these pools' int lists, with their messages
        count = "two" if nd == 2 else "three"
        either = "" if name == "avg_pool3d" else "either "
        for arg, v, how in (("kernel_size", kernel_size, f"{either}be a single int"),
                            ("stride", stride, f"{either}be omitted, a single int"),
                            ("padding", padding, f"{either}be a single int"),
                            ("dilation", dilation, "be either a single int")):
            if arg == "dilation" and name.startswith("avg"):
                continue
            if isinstance(v, (tuple, list)) and len(v):
                _int_tuple(name, arg, v, len(v))  # the parser's element checks come before the length check
            if isinstance(v, (tuple, list)) and len(v) not in (1, nd) and not (arg == "stride" and not len(v)):
                raise RuntimeError(f"{name}: {arg} must {how}, or a tuple of {count} ints")
    k = _int_tuple(name, "kernel_size", kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not len(stride)) else \
        _int_tuple(name, "stride", stride, nd)
    p = _int_tuple(name, "padding", padding, nd)
    d = _int_tuple(name, "dilation", dilation, nd)
    if int32 and any(not -2 ** 31 <= v < 2 ** 31 for v in k + s + p + d):
        raise RuntimeError("value cannot be converted to type int without overflow")
    labels = ("T", "H", "W")[3 - max(nd, 2):]
    full = lambda t: (1,) * (len(labels) - nd) + t  # noqa: E731  (1-D pools are 2-D ones with a unit height)
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{a}: {v}" for a, v in zip(labels, full(k))))
    if any(v < 0 for v in s):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{a}: {v}" for a, v in zip(labels, full(s))))
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{a}: {v}" for a, v in zip(labels, full(d))))
    return k, s, p, d


def _check_divisor(name, divisor_override):
    """PyTorch's parse of ``divisor_override`` (an optional C int64, never 0): TypeError for a non-int (bool
    and float included), ValueError outside int64, RuntimeError for 0."""
    if divisor_override is None:
        return
    if isinstance(divisor_override, (bool, float)) or not hasattr(type(divisor_override), "__index__"):
        raise TypeError(f"{name}(): argument 'divisor_override' must be int, not {type(divisor_override).__name__}")
    if not -2 ** 63 <= int(divisor_override) < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")


def _pool_windows(input, kernel_size, stride, padding, dilation, fill):
    """(N, C, H, W) -> windows (N, C, oh, ow, kh*kw), padding filled with ``fill``.

    Non-overlapping windows (stride == kernel, no padding or dilation) are a reshape/permute view;
    others go through im2col (``unfold2d``).
    """
    k = _pair(kernel_size)
    s = _pair(stride if stride is not None and stride != [] else kernel_size)
    p = _pair(padding)
    d = _pair(dilation)
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[0]}, kernel_size="
                           f"{k[0]} and dilation={d[0]}")
    n, c, h, w = input._shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")
    if k == s and p == (0, 0) and d == (1, 1):
        x = input[:, :, :oh * k[0], :ow * k[1]].reshape(n, c, oh, k[0], ow, k[1])
        return x.permute(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, k[0] * k[1])
    if p != (0, 0):
        input = _pad(input, (p[1], p[1], p[0], p[0]), value=fill)
    cols = im2col(input.reshape(n * c, 1, h + 2 * p[0], w + 2 * p[1]), k, d, (0, 0), s)  # (kk, N*C, L)
    return cols.reshape(k[0] * k[1], n, c, oh, ow).permute(1, 2, 3, 4, 0)


def _batched(fn, input, nd):
    if input.ndim == nd + 1:
        return fn(input.unsqueeze(0)).squeeze(0)
    return fn(input)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W) (``torch.nn.functional.max_pool2d``).

    Returns the pooled tensor, and with ``return_indices`` also the flat ``h * W + w`` index of each maximum.
    The gradient goes to the element that won each window (a NaN wins), as in PyTorch.
    """
    from ..._ops.nn import max_pool2d_with_indices
    k, s, padding, dilation = _pool_check("max_pool2d", 2, kernel_size, stride, padding, dilation)
    if input.ndim not in (3, 4) or 0 in input._shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input._shape)}")
    x = input.unsqueeze(0) if input.ndim == 3 else input
    out, idx = max_pool2d_with_indices(x, k, s, _pair(padding), _pair(dilation), ceil_mode)
    if input.ndim == 3:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L) (``torch.nn.functional.max_pool1d``)."""
    # ATen's 1-D max pool keeps the geometry in int64 (no int32 narrowing as in 2-D)
    (k,), (st,), (p,), (d,) = _pool_check("max_pool1d", 1, kernel_size, stride, padding, dilation, int32=False)
    if input.ndim not in (2, 3) or 0 in input._shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input._shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{_scalar_name(input.dtype)}'")
    # a stride past the last window start gives the same single window: capped, it fits the 2-D kernel's int32
    span = input._shape[-1] + 2 * p - d * (k - 1) - 1
    if 0 <= span < st and not ceil_mode:
        st = span + 1
    r = max_pool2d(input.unsqueeze(-2), (1, k), (1, st), (0, p), (1, d), ceil_mode, return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.functional.max_pool3d``).

    The max over each depth tap is a 2-D max pool; the taps are then compared and the winner gathered, so the
    gradient goes to one element per window and ``return_indices`` gives PyTorch's flat d*H*W + h*W + w index.
    """
    from ..._ops.creation import arange
    from ..._ops.nn import max_pool2d_with_indices, pool_out_size
    from ..._ops.shape import stack
    kernel_size, stride, padding, dilation = _pool_check("max_pool3d", 3, kernel_size, stride, padding, dilation)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"max_pool3d: Expected 4D or 5D tensor, but got {list(input._shape)}")
    empty = [i for i, n in enumerate(input._shape[-4:]) if n == 0]
    if empty:
        raise RuntimeError("max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to "
                           f"have positive length, but input has a shape of {list(input._shape)} and non-batch "
                           "dimension 0 has length zero!")  # (PyTorch's message names dimension 0 whichever)
    x = input.unsqueeze(0) if input.ndim == 4 else input
    k = _pair(kernel_size, 3)
    s = _pair(stride if stride is not None and stride != [] else kernel_size, 3)
    p, d = _pair(padding, 3), _pair(dilation, 3)
    if any(pi * 2 > ki for pi, ki in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[0]}, kernel_size="
                           f"{k[0]} and dilation={d[0]}")
    n, c, dd, h, w = x._shape
    od = pool_out_size(dd, k[0], s[0], p[0], d[0], ceil_mode)
    if od <= 0:
        raise RuntimeError(f"Given input size: ({c}x{dd}x{h}x{w}). Calculated output size is too small")
    need = (od - 1) * s[0] + d[0] * (k[0] - 1) + 1
    hi = max(0, need - dd - p[0])
    if p[0] or hi:
        x = _pad(x, (0, 0, 0, 0, p[0], hi), value=-math.inf)
    vals, idxs = [], []
    for i in range(k[0]):
        xs = x[:, :, i * d[0]:i * d[0] + s[0] * (od - 1) + 1:s[0]].reshape(n, c * od, h, w)
        v, ix = max_pool2d_with_indices(xs, k[1:], s[1:], p[1:], d[1:], ceil_mode)
        depth = arange(od, device=x.device) * s[0] + (i * d[0] - p[0])
        vals.append(v)
        idxs.append(ix.reshape((n, c, od) + ix._shape[2:]) + depth.reshape(od, 1, 1) * (h * w))
    v = stack(vals, 0)
    win = v.argmax(0, keepdim=True)
    out = v.gather(0, win).squeeze(0)
    out = out.reshape((n, c, od) + out._shape[2:])
    if input.ndim == 4:
        out = out.squeeze(0)
    if not return_indices:
        return out
    idx = stack(idxs, 0).reshape(v._shape).gather(0, win).squeeze(0).reshape(out._shape if input.ndim == 5 else
                                                                              (n,) + out._shape)
    return out, (idx.squeeze(0) if input.ndim == 4 else idx)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling (``torch.nn.functional.avg_pool2d``).

    With ``ceil_mode`` the last windows may run past the padded input; as in PyTorch they divide by the part
    of the window inside input + padding (``count_include_pad``) or inside the input alone.
    RuntimeError for a bad window (``_pool_check``).
    """
    kernel_size, stride, padding, _ = _pool_check("avg_pool2d", 2, kernel_size, stride, padding)
    _check_divisor("avg_pool2d", divisor_override)
    if input.dtype.name == "int64":
        # PyTorch's int64 kernel divides the window sums in C++ integers (truncating); float64 holds those sums
        # and quotients exactly for any realistic size
        return avg_pool2d(input.double(), kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override).trunc().long()
    if not input.dtype.is_floating_point:
        check_dtype("avg_pool2d", input.dtype, floating=True)
    if input.ndim < 3:  # PyTorch reads size(-3) first
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)")
    if input.ndim > 4 or 0 in input._shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input._shape)}")
    if ceil_mode:
        return _batched(lambda x: _avg_pool2d_ceil(x, kernel_size, stride, padding, count_include_pad,
                                                   divisor_override), input, 2)

    def f(x):
        win = _pool_windows(x, kernel_size, stride, padding, 1, 0.0)
        if divisor_override:
            return win.sum(-1) / divisor_override
        if count_include_pad or _pair(padding) == (0, 0):
            return win.mean(-1)
        ones_ = ones((1, 1) + x._shape[2:], dtype=x.dtype, device=x.device)
        cnt = _pool_windows(ones_, kernel_size, stride, padding, 1, 0.0).sum(-1)
        return win.sum(-1) / cnt
    return _batched(f, input, 2)


def _avg_pool2d_ceil(x, kernel_size, stride, padding, count_include_pad, divisor_override):
    import numpy as np
    from ..._ops.creation import _from_host
    from ..._ops.nn import pool_geometry
    k = _pair(kernel_size)
    s = _pair(stride if stride is not None and stride != [] else kernel_size)
    p = _pair(padding)
    n, c, h, w = x._shape
    oh, ow, eh, ew = pool_geometry(h, w, k, s, p, (1, 1), True)
    xp = _pad(x, (p[1], p[1] + ew, p[0], p[0] + eh))
    total = _pool_windows(xp, k, s, 0, 1, 0.0).sum(-1)
    if divisor_override:
        return total / divisor_override

    def counts(size, kk, ss, pp, o):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, size + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        return end - start
    div = np.outer(counts(h, k[0], s[0], p[0], oh), counts(w, k[1], s[1], p[1], ow))
    return total / _from_host(div.astype(x.dtype.np), x.dtype, x.device)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    (k,), (st,), (p,), _ = _pool_check("avg_pool1d", 1, kernel_size, stride, padding)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    return _batched(lambda x: avg_pool2d(x.unsqueeze(2), (1, k), (1, st), (0, p), ceil_mode,
                                         count_include_pad).squeeze(2), input, 1)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n, name):
    k = _pair(kernel_size, n)
    st = k if stride is None else _pair(stride, n)
    pd = _pair(padding, n)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: expected a {n + 1}D or {n + 2}D input, but got input of size: "
                           f"{list(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    # PyTorch's Python wrapper sizes the output from len(kernel_size), whatever ``n``: a longer kernel_size reads
    # past stride / padding (IndexError there too), a shorter one gives an output_size the kernel rejects below
    m = len(k)
    if len(st) < m or len(pd) < m:
        raise IndexError("tuple index out of range")
    spatial_in = input._shape[-m:] if m else ()
    default = [(spatial_in[d] - 1) * st[d] + k[d] - 2 * pd[d] for d in range(m)]
    if output_size is None:
        out = default
    else:
        out = list(output_size)
        if len(out) == m + 2:
            out = out[2:]
        if len(out) != m:
            raise ValueError(f"output_size should be a sequence containing {m} or {m + 2} elements, but it has a "
                             f"length of '{len(out)}'")
        for d in range(m):
            lo, hi = default[d] - st[d], default[d] + st[d]
            if not lo < out[d] < hi:
                raise ValueError(f'invalid output_size "{out}" (dim {d} must be between {lo} and {hi})')
    # ATen's unpooling kernels: int64 indices only, and values of floating dtypes (1-D runs the 2-D kernel)
    if indices.dtype is not _dt.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {_scalar_name(indices.dtype)}" if n < 3 else ""))
    # 1-D unpooling runs the 2-D kernel with a unit trailing dim appended to output_size
    kernel_len = len(out) + (1 if n == 1 else 0)
    if kernel_len != max(n, 2):
        raise RuntimeError("There should be exactly three elements (depth, height, width) in output_size, but got "
                           f"{kernel_len} elements." if n == 3 else "There should be exactly two elements (height, "
                           f"width) in output_size, but got {kernel_len} elements.")
    check_dtype("max_unpool3d" if n == 3 else "max_unpool2d", input.dtype, floating=True)
    lead = input._shape[:-n]
    flat_in = input.reshape(lead + (-1,))
    flat_idx = indices.reshape(lead + (-1,))
    size = math.prod(out)
    if flat_idx.numel() and (flat_idx.min().item() < 0 or flat_idx.max().item() >= size):
        raise RuntimeError(f"{name}: found an invalid max index {flat_idx.max().item()} (output volumes are of "
                           f"size {'x'.join(map(str, out))})")
    res = zeros(lead + (size,), dtype=input.dtype, device=input.device).scatter(-1, flat_idx, flat_in)
    return res.reshape(lead + tuple(out))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool1d``: the values of ``input`` (N, C, L) or (C, L) written at the positions
    ``indices`` (from ``max_pool1d(..., return_indices=True)``) of a zero output (``F.max_unpool1d``)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool2d`` (``F.max_unpool2d``): input and indices (N, C, H, W) or (C, H, W) ->
    zeros of the unpooled size with the values scattered to ``indices``. ValueError for an output_size out
    of range, RuntimeError for an index outside the output."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool3d`` (``F.max_unpool3d``), as ``max_unpool2d`` with three spatial dims."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d(..., return_indices=True)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d(..., return_indices=True)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d(..., return_indices=True)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum over the window of x^p)^(1/p)`` over (N, C, L) (``F.lp_pool1d``)."""
    if isinstance(norm_type, (int, float)) and abs(norm_type) == math.inf:
        # the limits of the power mean, as PyTorch: the largest |x| (inf) or the smallest (-inf) of each window
        if norm_type > 0:
            return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, H, W) (``F.lp_pool2d``)."""
    if isinstance(norm_type, (int, float)) and abs(norm_type) == math.inf:
        # the limits of the power mean, as PyTorch: the largest |x| (inf) or the smallest (-inf) of each window
        if norm_type > 0:
            return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    kh, kw = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def _window_sum3d(xp, k, s, out):
    """Sums over k-windows with stride s of an already padded (N, C, D, H, W) tensor: each depth tap is a
    2-D window sum (avg_pool2d with divisor 1) of a strided depth slice."""
    n, c = xp._shape[:2]
    total = 0
    for i in range(k[0]):
        xs = xp[:, :, i:i + s[0] * (out[0] - 1) + 1:s[0]]
        xs = xs.reshape((n, c * out[0]) + xs._shape[3:])
        total = total + avg_pool2d(xs, k[1:], s[1:], 0, False, True, 1)
    return total.reshape((n, c) + tuple(out))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.functional.avg_pool3d``).

    Windows are summed as depth taps of 2-D window sums; the divisor follows PyTorch: the window volume,
    or with ``ceil_mode`` / ``count_include_pad=False`` the part of the window inside input + padding /
    inside the input, or ``divisor_override``. RuntimeError for a padding above half the kernel.
    """
    from ..._ops.nn import pool_out_size
    kernel_size, stride, padding, _ = _pool_check("avg_pool3d", 3, kernel_size, stride, padding)
    _check_divisor("avg_pool3d", divisor_override)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"avg_pool3d: Expected 4D or 5D tensor, but got {list(input._shape)}")
    if input.dtype is _dt.int64:
        # ATen's int64 kernel divides the window sums in C++ integers (truncating), as avg_pool2d's
        return avg_pool3d(input.double(), kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override).trunc().long()
    if input.dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for '{_scalar_name(input.dtype)}'")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    k = _pair(kernel_size, 3)
    s = _pair(stride if stride is not None and stride != [] else kernel_size, 3)
    p = _pair(padding, 3)
    if any(pi * 2 > ki for pi, ki in zip(p, k)):
        raise RuntimeError("pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and "
                           "dilation=1".format(p[0], k[0]))
    sizes = x._shape[2:]
    out = [pool_out_size(sz, kk, ss, pp, 1, ceil_mode) for sz, kk, ss, pp in zip(sizes, k, s, p)]
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x._shape[1:]))}). Calculated output size is too "
                           "small")
    extra = [max(0, (o - 1) * ss + kk - (sz + 2 * pp)) for o, ss, kk, sz, pp in zip(out, s, k, sizes, p)]
    pads = []
    for pp, e in zip(reversed(p), reversed(extra)):
        pads += [pp, pp + e]
    total = _window_sum3d(_pad(x, tuple(pads)), k, s, out)
    if divisor_override:
        res = total / divisor_override
    elif count_include_pad and not any(extra):
        res = total / (k[0] * k[1] * k[2])
    else:
        # how many elements of each window lie inside input + padding (or inside the input alone)
        inner = ones((1, 1) + tuple(sizes), dtype=x.dtype, device=x.device)
        if count_include_pad:
            inner = _pad(inner, tuple(q for pp in reversed(p) for q in (pp, pp)), value=1.0)
            pads_c = [q for pp, e in zip(reversed(p), reversed(extra)) for q in (0, e)]
        else:
            pads_c = pads
        cnt = _window_sum3d(_pad(inner, tuple(pads_c)), k, s, out)
        res = total / cnt
    return res.squeeze(0) if input.ndim == 4 else res


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, D, H, W) (``F.lp_pool3d``)."""
    if isinstance(norm_type, (int, float)) and abs(norm_type) == math.inf:
        # the limits of the power mean, as PyTorch: the largest |x| (inf) or the smallest (-inf) of each window
        if norm_type > 0:
            return max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    kd, kh, kw = _pair(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


def _fractional_starts(sample, in_size, out_size, pool):
    """Window starts of fractional max pooling along one dim, as ATen's generate_intervals (arithmetic in the
    samples' dtype): int((i + u) * alpha) - int(u * alpha) for i < out - 1, alpha = (in - pool) / (out - 1),
    and in - pool for the last window."""
    import numpy as np
    u = np.asarray(sample)
    dt = u.dtype.type
    out = np.empty(u.shape + (out_size,), np.int64)
    if out_size > 1:
        alpha = dt(in_size - pool) / dt(out_size - 1)
        i = np.arange(out_size - 1, dtype=u.dtype)
        out[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[..., None]
    if out_size:
        out[..., -1] = in_size - pool
    return out


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    import numpy as np
    from ..._ops.creation import tensor
    from ..._ops.random import rand
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    sizes = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = _pair(output_ratio, nd)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    k, osz = _pair(kernel_size, nd), _pair(output_size, nd)
    of = "Ints" if nd == 2 else "three Ints"
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {of}")
    if len(osz) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {of}")
    dim_names = ("time", "height", "width")[3 - nd:]
    for d, (n_in, n_out, kk) in enumerate(zip(sizes, osz, k)):
        if n_out + kk - 1 > n_in:
            raise RuntimeError(f"{name}(): pool {dim_names[d]} {kk} too large relative to input {dim_names[d]} {n_in}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[:2]
    if _random_samples is None:
        _random_samples = rand(n, c, nd, dtype=x.dtype, device=x.device)
    u = _random_samples.detach().cpu().numpy()
    # ATen pairs the samples with the dims as (W, H) in 2-D and (T, H, W) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_fractional_starts(u[..., order[d]], sizes[d], osz[d], k[d]) for d in range(nd)]  # (N, C, out_d)
    if min(k) <= 0 or 0 in osz or 0 in (n, c):
        # an empty window (PyTorch accepts kernel sizes <= 0): ATen's scan leaves its initial -inf at the window's
        # first position
        from ..._ops.creation import full
        strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
        first = sum(starts[d].reshape([n, c] + [osz[e] if e == d else 1 for e in range(nd)]) * strides[d]
                    for d in range(nd)) + np.zeros((n, c) + tuple(osz), np.int64)
        inds = tensor(first, device=x.device)
        vals = full((n, c) + tuple(osz), -math.inf, dtype=x.dtype, device=x.device)
    else:
        # the flat input index of every element of every window: (N, C, *out, *k)
        strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
        flat = np.zeros((n, c) + tuple(osz) + tuple(k), np.int64)
        for d in range(nd):
            shape = [n, c] + [1] * (2 * nd)
            shape[2 + d] = osz[d]
            off = [1] * (2 + 2 * nd)
            off[2 + nd + d] = k[d]
            flat += (starts[d].reshape(shape) + np.arange(k[d]).reshape(off)) * strides[d]
        idx = tensor(flat.reshape(n, c, -1), device=x.device)
        windows = x.reshape(n, c, -1).gather(2, idx).reshape((n, c) + tuple(osz) + (int(np.prod(k)),))
        vals, arg = windows.max(-1)  # the first maximum, NaN winning, as ATen's scan
        inds = idx.reshape((n, c) + tuple(osz) + (int(np.prod(k)),)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        vals, inds = vals.squeeze(0), inds.squeeze(0)
    return vals, inds


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling (Graham, "Fractional Max-Pooling", 2014) over (N, C, H, W) or (C, H, W)
    (``torch.nn.functional.fractional_max_pool2d``): kernel_size windows at pseudo-random, overlapping starts
    chosen from ``_random_samples`` (N, C, 2) in [0, 1) (drawn with ``rand`` when None), giving
    ``output_size`` or int(size * ``output_ratio``) outputs. With ``return_indices`` also the flat h * W + w
    index of each maximum. ValueError without output_size and output_ratio; RuntimeError when a window would
    not fit."""
    vals, inds = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (vals, inds) if return_indices else vals


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of ``fractional_max_pool2d``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) with ``_random_samples`` (N, C, 3)
    (``torch.nn.functional.fractional_max_pool3d``); see ``fractional_max_pool2d``. Indices are flat
    t * H * W + h * W + w."""
    vals, inds = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (vals, inds) if return_indices else vals


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of ``fractional_max_pool3d``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
