"""Summaries whose output size depends on the data (as ATen's Unique, SummaryOps and Histogram): unique,
unique_consecutive, bincount, histc, histogram."""
import builtins
import collections
import math

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from .._tensor import Tensor
from ._util import check_arg, check_dtype, method


def _grad_enabled():
    from ..autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def _unique_values_bw(c, g):
    raise NotImplementedError("the derivative for '_unique2' is not implemented.")


# the values of unique(x) for an x that requires grad: x's node with a backward that refuses, as PyTorch's
_unique_values_op = defop("_unique2", lambda a, vals: ([(vals._shape, vals.dtype)], [None, None]),
                          _unique_values_bw, decomp=lambda a, vals: vals, save_inputs=False)


def _unique_floats(a):
    """(values, inverse, counts) of a 1-D float array as PyTorch's unique: ascending, NaNs last and each NaN a
    value of its own (NaN != NaN), the inverse numbering equal NaNs in input order (a stable sort)."""
    import numpy as np
    from ..backends.cpu.reduce import sort_indices
    order = sort_indices(a, 0, False)
    s = a[order]
    new = np.ones(s.shape, bool)
    new[1:] = s[1:] != s[:-1]
    group = np.cumsum(new) - 1
    inv = np.empty(a.shape, np.int64)
    inv[order] = group
    starts = np.flatnonzero(new)
    return s[starts], inv, np.diff(np.append(starts, s.size)).astype(np.int64)


def _refuse_complex(input, dim):
    """PyTorch's unique kernels are compiled for real dtypes only (NumPy would order complex numbers)."""
    if input.dtype.is_complex:
        kernel = "unique" if dim is None else "unique_dim"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt._SCALAR_TYPE[input.dtype.name]}\'')


@method("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct elements (or distinct slices along ``dim``), in ascending order (``torch.unique``).

    Returns the values, plus the inverse indices (input's shape, or (size of dim,)) and the counts when asked.
    Not differentiable, as in PyTorch: the values of an input that requires grad require grad, and their
    backward raises NotImplementedError. TypeError when the flags are not bools.
    """
    import numpy as np
    from .creation import _from_host
    for name, v in (("sorted", sorted), ("return_inverse", return_inverse), ("return_counts", return_counts)):
        check_arg("_unique2", name, None, v, "bool")
    _refuse_complex(input, dim)
    a = input.detach().numpy(force=True)
    if dim is None and input.dtype.is_floating_point:
        vals, inv, cnt = _unique_floats(a.reshape(-1))
        inv = inv.reshape(a.shape)
    elif dim is None:
        vals, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
    else:
        d = _strides.wrap_dim(dim, input.ndim)
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    out = [_from_host(np.ascontiguousarray(vals), input.dtype, input.device)]
    if input.requires_grad and _grad_enabled():
        out[0] = dispatch(_unique_values_op, (input, out[0]))
    if return_inverse:
        out.append(_from_host(np.ascontiguousarray(inv, dtype=np.int64), _dt.int64, input.device))
    if return_counts:
        out.append(_from_host(cnt.astype(np.int64), _dt.int64, input.device))
    return out[0] if len(out) == 1 else tuple(out)


@method("bincount")
def bincount(input, weights=None, minlength=0):
    """Occurrences of each value 0..max(input) in a 1-D non-negative int tensor, or the sums of ``weights``
    (same length) at them (``torch.bincount``). Returns (max(max(input) + 1, minlength),): int64, or the
    weights' dtype (float64 for integer weights). RuntimeError for negative or non-1-D input."""
    from .creation import ones, zeros
    if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is _dt.bool:
        check_dtype("bincount_cpu", input.dtype, integral=True)  # PyTorch's kernel is integral only
    if input.ndim != 1 or (
            input.numel() and int(input.min().item()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights._shape[0] != input._shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = builtins.max(int(input.max().item()) + 1 if input.numel() else 0, minlength)
    dtype = _dt.int64 if weights is None else (weights.dtype if weights.dtype.is_floating_point else _dt.float64)
    src = ones(input._shape, dtype=dtype, device=input.device) if weights is None else weights.detach().to(dtype)
    return zeros(n, dtype=dtype, device=input.device).index_add(0, input.long(), src)


@method("histc")
def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` with ``bins`` equal-width bins over [min, max] (the data's range when
    min == max); elements outside are ignored (``torch.histc``). Returns (bins,) in input's dtype."""
    from .creation import ones, zeros
    from .indexing import masked_select
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"\"histogram_cpu\" not implemented for '{input.type()[:-6].replace('Tensor', '')}'")
    if bins <= 0:
        raise RuntimeError("torch.histc: bins must be > 0")
    x = input.detach().reshape(-1)
    lo, hi = float(min), float(max)
    from_data = lo == hi and x.numel()
    if from_data:
        lo, hi = float(x.min().item()), float(x.max().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if math.isinf(lo) or math.isinf(hi) or math.isnan(lo) or math.isnan(hi):
        def fmt(v):
            # C++'s ostream (6 significant digits); a NaN PyTorch's min/max computed is x86's default NaN, "-nan"
            if math.isnan(v):
                return "-nan" if from_data or math.copysign(1.0, v) < 0 else "nan"
            return f"{v:g}"
        raise RuntimeError(f"torch.histc: range of [{fmt(lo)}, {fmt(hi)}] is not finite")
    # the outer edges are those of PyTorch's linspace in the input's dtype: min and max rounded to it (bfloat16
    # keeps 8 bits), and every step below rounds to it too
    from .creation import tensor
    lo_t, hi_t = (tensor(v, dtype=input.dtype, device=input.device) for v in (lo, hi))
    x = masked_select(x, (x >= lo_t) & (x <= hi_t))
    # PyTorch's order, in the input's dtype: (x - min) * bins / (max - min). An overflow to inf lands in bin 0
    # there (x86 converts inf to the minimum int64, then clamped); here without NumPy's invalid-cast warning.
    from .pointwise import where
    p = (x - lo_t) * tensor(float(bins), dtype=input.dtype, device=input.device) / (hi_t - lo_t)
    b = where(p.isinf(), 0.0, p).floor().long().clamp(0, bins - 1)
    return zeros(bins, dtype=input.dtype, device=input.device).index_add(
        0, b, ones(b._shape, dtype=input.dtype, device=input.device))


@method("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``) to one (``torch.unique_consecutive``);
    with ``return_inverse`` the run number of each element, with ``return_counts`` the run lengths."""
    from .creation import tensor
    from .shape import cat
    _refuse_complex(input, dim)
    if dim is None:
        x = input.reshape(-1)
        change = x[1:] != x[:-1]
    else:
        d = _strides.wrap_dim(dim, input.ndim)
        x = input.movedim(d, 0)
        flat = x.reshape(x._shape[0], -1)
        change = (flat[1:] != flat[:-1]).any(1)
    n = x._shape[0]
    starts = cat([tensor([True], device=input.device), change]) if n else change
    out = x[starts]
    if dim is not None:
        out = out.movedim(0, d)
    res = [out]
    if return_inverse:
        inv = starts.long().cumsum(0) - 1
        res.append(inv.reshape(input._shape) if dim is None else inv)
    if return_counts:
        idx = starts.nonzero().reshape(-1)
        ends = cat([idx[1:], tensor([n], device=input.device)])
        res.append(ends - idx)
    return res[0] if len(res) == 1 else tuple(res)


histogram_result = collections.namedtuple("histogram", ["hist", "bin_edges"])


def _check_bin_edges(input, bins):
    """PyTorch's checks of a tensor of bin edges: 1-D, at least two edges, input's dtype (RuntimeError)."""
    from .creation import _CPP_NAMES
    if bins.ndim <= 1 and bins.numel() == 1:  # one edge (or a 0-d tensor): no bin
        raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
    if bins.ndim != 1:
        raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.ndim} "
                           "dimensions in the bins tensor for dimension 0")
    if bins.numel() == 0:
        raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                           "the bins tensor for dimension 0")
    if bins.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                           f"input with dtype {_CPP_NAMES[input.dtype.name]} and bins for dimension 0 with dtype "
                           f"{_CPP_NAMES[bins.dtype.name]}")


def _histogram_by_edges(x, edges, w):
    """Counts (or summed weights) of ``x`` per bin of ``edges`` as PyTorch's CPU kernel places them: elements
    outside [edges[0], edges[-1]] are dropped, the others go to bin ``upper_bound(edges, v) - 1`` (the last bin
    keeps its right edge). The binary search is the C++ ``std::upper_bound``'s, step for step, so edges that do
    not increase (which PyTorch does not check) give PyTorch's counts, where NumPy refuses them."""
    import numpy as np
    n = edges.size
    hist = np.zeros(max(n - 1, 0), dtype=np.float64)
    keep = (x >= edges[0]) & (x <= edges[-1])
    v = x[keep]
    first = np.zeros(v.shape, dtype=np.int64)
    count = np.full(v.shape, n, dtype=np.int64)
    while count.any():
        step = count // 2
        it = first + step
        right = (count > 0) & ~(v < edges[np.minimum(it, n - 1)])
        first = np.where(right, it + 1, first)
        count = np.where(right, count - step - 1, np.where(count > 0, step, 0))
    pos = first - 1
    pos = np.where(pos == n - 1, pos - 1, pos)
    if hist.size:
        np.add.at(hist, pos, 1.0 if w is None else w[keep])
    return hist


def _histogram_bw(c, g):
    raise RuntimeError("derivative for aten::histogram is not implemented")


def _histogram_meta(source, result):
    return [(result._shape, result.dtype)], [None, None]


# counts computed on the host, then attached to the graph of a tensor argument that requires grad by a node whose
# backward refuses: both outputs require grad as in PyTorch (whose derivative is "not implemented")
_histogram_op = defop("histogram", _histogram_meta, _histogram_bw, decomp=lambda source, result: result,
                      save_inputs=False)


def _histogram_outputs(hist, edges, *args):
    from ..autograd.grad_mode import _state
    source = next((a for a in args if isinstance(a, Tensor) and a.requires_grad), None)
    if source is not None and _state.enabled:
        hist, edges = dispatch(_histogram_op, (source, hist)), dispatch(_histogram_op, (source, edges))
    return histogram_result(hist, edges)


@method("histogram")
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Histogram of ``input`` (``torch.histogram``): ``bins`` an int (equal-width bins over ``range``, the data's
    min and max by default) or a 1-D tensor of increasing edges; optional per-element ``weight``; ``density``
    normalizes to a probability density. Returns (hist, bin_edges), both in input's floating dtype. Counting
    is NumPy's ``histogram`` on the host. Not differentiable: both outputs require grad when a tensor argument
    does, and backward through them raises RuntimeError, as PyTorch."""
    import numpy as np
    from .creation import tensor
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {input.dtype} and bins float")
    if not isinstance(bins, (Tensor, builtins.int)) or isinstance(bins, bool):
        raise TypeError(f"histogram() received an invalid combination of arguments - got ({type(bins).__name__}), "
                        "but expected one of: (Tensor bins, ...) or (int bins, ...)")
    if weight is not None:
        from .creation import _CPP_NAMES
        if tuple(weight._shape) != tuple(input._shape):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same shape, but got input({list(input._shape)}), and "
                               f"weight({list(weight._shape)})")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same dtype as "
                               f"the input tensor, but got weight with dtype {_CPP_NAMES[weight.dtype.name]} and "
                               f"input with dtype {_CPP_NAMES[input.dtype.name]}")
    x = input.detach().cpu().numpy().reshape(-1)
    w = None if weight is None else weight.detach().cpu().numpy().reshape(-1)
    if isinstance(bins, Tensor):
        _check_bin_edges(input, bins)
        edges = bins.detach().cpu().numpy()
        hist = _histogram_by_edges(x, edges, w)
        if density:
            with np.errstate(all="ignore"):
                hist = hist / (hist.sum() * np.diff(edges))
        return _histogram_outputs(tensor(hist, dtype=input.dtype, device=input.device),
                                  tensor(edges, dtype=input.dtype, device=input.device), input, weight, bins)
    b = int(bins)
    rng = None
    if range is not None:
        rng = (float(range[0]), float(range[1]))
    elif not isinstance(b, np.ndarray):
        rng = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    lo, hi = rng
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    if lo > hi or not (math.isfinite(lo) and math.isfinite(hi)):
        # NumPy's words for its range check, which this replaces
        np.histogram(x, b, range=rng)
    # PyTorch's edges: a linspace in the input's dtype; each element goes to the bin that bounds it among those
    # edges (NumPy's float64 edges put an element equal to a rounded edge in the bin before)
    from .creation import linspace
    edges = linspace(lo, hi, b + 1, dtype=input.dtype).cpu().numpy()
    hist = _histogram_by_edges(x, edges, w)
    if density:
        with np.errstate(all="ignore"):  # no element in range: 0 / 0, NaN as PyTorch, without NumPy's warning
            hist = hist / (hist.sum() * np.diff(edges))
    return _histogram_outputs(tensor(hist, dtype=input.dtype, device=input.device),
                              tensor(edges, dtype=input.dtype, device=input.device), input, weight)


__all__ = ["unique", "unique_consecutive", "bincount", "histc", "histogram"]
