"""Sorting and the functions computed from a sort (as ATen's Sorting and Bucketization): sort, argsort,
topk, msort, median / nanmedian, kthvalue, mode, quantile / nanquantile, searchsorted, bucketize, isin."""
import collections

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import COMPLEX_DTYPES, defop, dispatch, refuse
from .._tensor import Tensor
from ._util import check_arg, method
from .reduce import _nonempty_dim, _zeros_idx

sort_ret = collections.namedtuple("sort", ["values", "indices"])
topk_ret = collections.namedtuple("topk", ["values", "indices"])
median_ret = collections.namedtuple("median", ["values", "indices"])

_kthvalue = collections.namedtuple("kthvalue", ["values", "indices"])


def _sort_meta(a, dim, descending, stable=False):
    return [(a._shape, a.dtype), (a._shape, _dt.int64)], [None]


def _scatter_back(c, g):
    _, idx = c.out
    from .creation import zeros
    from .indexing import scatter
    return scatter(zeros(c.shapes[0], dtype=g.dtype, device=g.device), c.kw["dim"], idx, g)


_sort_op = defop("sort", _sort_meta, _scatter_back, save_inputs=False, save_output=(1,),  # indices
    refused=refuse(COMPLEX_DTYPES, RuntimeError, " Sort does not support complex dtypes on CPU"))


@method("sort")
def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) sorted along ``dim`` (stable sort, so ties keep their order). TypeError, as PyTorch's
    parser, when ``descending``/``stable`` are not bools."""
    check_arg("sort", "descending", None, descending, "bool")
    check_arg("sort", "stable", None, stable, "bool")
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return sort_ret(input.clone(), _zeros_idx(input))
    return sort_ret(*dispatch(_sort_op, (input,), {"dim": d, "descending": descending}))


@method("argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    """Indices that sort ``input`` along ``dim`` (int64)."""
    return sort(input, dim, descending, stable).indices


def _topk_meta(a, k, dim, largest, sorted):
    n = a._shape[dim]
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not {type(k).__name__}")
    if k < 0 or k > n:
        raise RuntimeError(f"selected index k out of range (k = {k}, size of dim {dim} = {n})")
    shape = a._shape[:dim] + (k,) + a._shape[dim + 1:]
    return [(shape, a.dtype), (shape, _dt.int64)], [None]


_topk_op = defop("topk", _topk_meta, _scatter_back, save_inputs=False, save_output=(1,),  # indices
    refused={**refuse(COMPLEX_DTYPES, RuntimeError, " topk does not support complex dtypes on CPU"),
             **refuse(("bool",), RuntimeError, "topk does not support bool dtypes on CPU")})


@method("topk")
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices (``torch.topk``). A 0-d input
    is its own top element (any k in [0, 1], as PyTorch); RuntimeError for k outside [0, size of dim]."""
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        if not isinstance(k, int) or not 0 <= k <= 1:
            raise RuntimeError(f"selected index k out of range (k = {k}, size of dim {d} = 1)")
        return topk_ret(input.clone(), _zeros_idx(input))
    return topk_ret(*dispatch(_topk_op, (input,), {"k": k, "dim": d, "largest": largest, "sorted": sorted}))


_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


@method("median")
def median(input, dim=None, keepdim=False):
    """Lower median (``torch.median``): over all elements (NaN for an empty input), or (values, indices) along
    ``dim`` (IndexError when that dim has size 0). Any NaN makes the median NaN; along ``dim`` its index is the
    first NaN's, as PyTorch. NotImplementedError for bool input, as PyTorch."""
    if input.dtype is _dt.bool or input.dtype.is_complex:
        raise NotImplementedError(f"\"{'median_cpu' if dim is None else 'median_out'}\" not implemented for "
                                  f"'{'Bool' if input.dtype is _dt.bool else _COMPLEX_NAMES[input.dtype.name]}'")
    from .pointwise import isnan, where
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            from .creation import full
            return full((), float("nan"), dtype=input.dtype, device=input.device)
        s = sort(flat.detach()).values
        last = s[-1]  # NaNs sort last: the largest element is NaN when any is
        from .reduce import _evenly_selected
        return _evenly_selected(input, where(isnan(last), last, s[(flat.numel() - 1) // 2]))
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return median_ret(input.clone(), _zeros_idx(input))
    _nonempty_dim(input, d, "median")
    i = sort(input.detach(), d).indices
    n = input._shape[d]
    # the stable sort puts the first NaN (in input order) at position count(non-NaN); without NaN, the middle
    numbers = (~isnan(input)).sum(d, keepdim=True)
    pos = where(numbers < n, numbers, (n - 1) // 2)
    i = i.gather(d, pos)
    # read by advanced indexing, whose node saves the indices only: like PyTorch's median (value-selecting
    # backward) the gradient then needs the returned indices and not the input
    from .creation import arange
    where_ = [arange(n_, device=input.device).reshape([-1 if k == j else 1 for k in range(input.ndim)])
              for j, n_ in enumerate(input._shape)]
    where_[d] = i
    v = input[tuple(where_)]
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return median_ret(v, i)


@method("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest element along ``dim`` (1-based k) (``torch.kthvalue``)."""
    from .reduce import _nonempty_dim
    if input.dtype.is_complex or input.dtype is _dt.bool:
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for "
                                  f"'{'Bool' if input.dtype is _dt.bool else _COMPLEX_NAMES[input.dtype.name]}'")
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    _nonempty_dim(input, d, "kthvalue")
    n = input._shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    v, i = input.sort(d, stable=True) if input.ndim else (input, input.new_zeros((), dtype=_dt.int64))
    if input.ndim:
        v, i = v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)
        if not keepdim:
            v, i = v.squeeze(d), i.squeeze(d)
    return _kthvalue(v, i)


@method("msort")
def msort(input):
    """Sort along the first dim (``torch.msort``)."""
    return input.sort(0).values


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    from .pointwise import where
    from .shape import stack
    # PyTorch's checks, in its order; nanquantile's messages say quantile() too
    scalar_q = not isinstance(q, Tensor)
    if scalar_q and not 0 <= q <= 1:  # a NaN q fails this too
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dt.float32, _dt.float64):  # float16 / bfloat16 too, as PyTorch's CPU
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not scalar_q and q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    qt = input.new_tensor([q]) if scalar_q else q.reshape(-1)
    if not scalar_q and not ((qt >= 0) & (qt <= 1)).all().item():  # NaN q values too
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is not None and input.ndim == 0:
        _strides.wrap_dim(dim, 0)
        dim = None  # a 0-d input: its one element, whatever keepdim says
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _strides.wrap_dim(dim, input.ndim)
    s = x.sort(d).values  # NaNs sort last
    n = x._shape[d]
    nan = x.isnan()
    outs = []
    for j in range(qt.numel()):
        # PyTorch's ranks: nanquantile counts the non-NaN values (an all-NaN slice takes rank 0, a NaN);
        # quantile takes the last rank, a NaN, wherever the slice has one (so the gradient reaches that NaN)
        if ignore_nan:
            rank = qt[j] * ((~nan).sum(d, keepdim=True) - 1).to(x.dtype)
            rank = where(rank < 0, 0.0, rank)
        else:
            rank = where(nan.any(d, keepdim=True), float(n - 1), qt[j] * (n - 1))
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()  # half to even, as PyTorch
        lo = rank.detach().floor().long()
        a = s.gather(d, lo)
        if interpolation in ("linear", "midpoint"):
            b = s.gather(d, rank.detach().ceil().long())
            w = (rank - lo.to(x.dtype)) if interpolation == "linear" else a.new_full((), 0.5)
            # PyTorch's lerp, whose two halves keep an infinite end (-inf..1 at 0.9 is -inf, not -inf + inf)
            v = where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
        else:
            v = a  # lower / higher / nearest: a sorted element itself (an infinity stays one)
        if not keepdim:
            v = v.squeeze(d)
        elif dim is None:
            v = v.reshape((1,) * input.ndim)
        outs.append(v)
    return outs[0] if scalar_q else stack(outs, 0)


@method("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """q-th quantiles (q a float or 1-D tensor in [0, 1]) over all elements or along ``dim``
    (``torch.quantile``); interpolation linear, lower, higher, nearest or midpoint. A NaN gives NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@method("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaNs; a row of NaNs only gives NaN (``torch.nanquantile``)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


_mode = collections.namedtuple("mode", ["values", "indices"])


def _libstdcxx_sort(a):
    """``a`` (a list of (value, index) pairs) sorted as GCC's std::sort orders it with a comparator on the value
    alone: introsort (median-of-three pivot, unguarded partition) down to runs of 16, then insertion sort. With
    NaNs, which ``<`` leaves unordered, this order is the algorithm's, not a sorted one; PyTorch's CPU mode reads
    its result from it. (A recursion deep enough for the heapsort fallback is finished by a stable sort.)"""
    a = list(a)

    def lt(x, y):
        return x[0] < y[0]

    def unguarded_linear_insert(last):
        val = a[last]
        nxt = last - 1
        while nxt >= 0 and lt(val, a[nxt]):
            a[last] = a[nxt]
            last, nxt = nxt, nxt - 1
        a[last] = val

    def insertion_sort(first, last):
        for i in range(first + 1, last):
            if lt(a[i], a[first]):
                val = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                unguarded_linear_insert(i)

    def move_median_to_first(result, x, y, z):
        if lt(a[x], a[y]):
            m = y if lt(a[y], a[z]) else z if lt(a[x], a[z]) else x
        else:
            m = x if lt(a[x], a[z]) else z if lt(a[y], a[z]) else y
        a[result], a[m] = a[m], a[result]

    def unguarded_partition(first, last, pivot):
        while True:
            while first < len(a) - 1 and lt(a[first], a[pivot]):
                first += 1
            last -= 1
            while last > 0 and lt(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            a[first], a[last] = a[last], a[first]
            first += 1

    def introsort(first, last, depth):
        while last - first > 16:
            if depth == 0:
                a[first:last] = sorted(a[first:last], key=lambda p: (p[0] != p[0], p[0]))
                return
            depth -= 1
            mid = first + (last - first) // 2
            move_median_to_first(first, first + 1, mid, last - 1)
            cut = unguarded_partition(first + 1, last, first)
            introsort(cut, last, depth)
            last = cut

    n = len(a)
    if n > 1:
        introsort(0, n, 2 * (n.bit_length() - 1))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                unguarded_linear_insert(i)
        else:
            insertion_sort(0, n)
    return a


def _mode_of_sorted(pairs):
    """The index ATen's CPU mode returns for its sorted (value, index) pairs: the last pair of the first longest
    run of equal values (NaN equals nothing, so each is a run of one)."""
    best, best_i, run = 0, 0, 0
    for i, (v, idx) in enumerate(pairs):
        run += 1
        if i == len(pairs) - 1 or v != pairs[i + 1][0]:
            if run > best:
                best, best_i = run, idx
            run = 0
    return best_i


@method("mode")
def mode(input, dim=-1, keepdim=False):
    """Most frequent value along ``dim`` (the smallest among ties) and the index of its last occurrence
    (``torch.mode``), as a (values, indices) named tuple."""
    from .creation import arange
    from .reduce import _nonempty_dim
    x = input if input.ndim else input.reshape(1)
    d = _strides.wrap_dim(dim, input.ndim)
    _nonempty_dim(input, d, "mode")
    xs = x.movedim(d, -1)
    vals, order = xs.sort(-1)
    eq = vals.unsqueeze(-1) == vals.unsqueeze(-2)  # (..., n, n): how often each sorted value occurs
    counts = eq.sum(-1)
    best = counts.max(-1, keepdim=True).values
    # first sorted position with the highest count: the smallest of the most frequent values
    n = vals._shape[-1]
    pos = (counts == best).long() * (n - arange(n, device=x.device))
    first = pos.argmax(-1, keepdim=True)
    same = xs == vals.gather(-1, first)
    last = (same.long() * arange(n, device=x.device)).argmax(-1, keepdim=True)
    host = xs.detach().numpy(force=True)
    if host.size and (x.dtype.is_floating_point or n > 16):
        # ATen reads the mode off std::sort's order. That sort is unstable past 16 elements (which of equal
        # values ends its run depends on the introsort's steps) and, comparing with ``<`` alone, leaves NaNs where
        # its steps put them: such rows are sorted as GCC's std::sort does (rows past 16 only while the tensor
        # is small enough for a per-element Python sort: 2^16 elements)
        rows = host.reshape(-1, n)
        nan_rows = np.nonzero(np.isnan(rows).any(-1) if x.dtype.is_floating_point
                              else np.zeros(rows.shape[0], bool))[0]
        if n > 16 and host.size <= 1 << 16:
            nan_rows = np.arange(rows.shape[0])
        if nan_rows.size:
            idx = last.numpy(force=True).reshape(-1).copy()
            for r in nan_rows.tolist():
                idx[r] = _mode_of_sorted(_libstdcxx_sort([(v, i) for i, v in enumerate(rows[r].tolist())]))
            from .creation import tensor
            last = tensor(idx.reshape(last._shape), dtype=_dt.int64, device=x.device)
    value = xs.gather(-1, last)  # the gradient goes to the returned index, as PyTorch's
    value, last = value.squeeze(-1), last.squeeze(-1)
    if keepdim:
        value, last = value.unsqueeze(-1).movedim(-1, d), last.unsqueeze(-1).movedim(-1, d)
    if input.ndim == 0:
        value, last = value.reshape(()), last.reshape(())
    return _mode(value, last)


@method("nanmedian")
def nanmedian(input, dim=None, keepdim=False):
    """Median ignoring NaNs (the lower of the two middle values), over all elements or along ``dim`` with
    (values, indices) (``torch.nanmedian``). All-NaN slices give NaN."""
    from .pointwise import isnan
    if dim is None:
        flat = input.reshape(-1)
        keep = flat[~isnan(flat)]
        return keep.median() if keep.numel() else flat.new_tensor(float("nan"))
    from .reduce import _nonempty_dim
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    _nonempty_dim(input, d, "median")  # PyTorch's nanmedian names median in this message
    x = input if input.ndim else input.reshape(1)
    vals, order = x.sort(d)  # NaNs sort last
    k = ((~isnan(x)).sum(d, keepdim=True) - 1).clamp(min=0) // 2
    v = vals.gather(d, k)
    i = order.gather(d, k)
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    if input.ndim == 0:
        v, i = v.reshape(()), i.reshape(())
    return collections.namedtuple("nanmedian", ["values", "indices"])(v, i)


def _searchsorted_checks(seq, input, right, side, sorter):
    """PyTorch's searchsorted_pre_check, in its order and with its messages (RuntimeError)."""
    def dims(t):
        return "[" + ", ".join(str(k) for k in t._shape) + "]"
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                               f"while right was True")
    if sorter is not None:
        if sorter._shape != seq._shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {dims(seq)}and got sorter tensor {dims(sorter)}")
        if sorter.dtype is not _dt.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{_dt._SCALAR_TYPE[sorter.dtype.name]}")
        if sorter.numel() and not ((sorter >= 0) & (sorter < sorter._shape[-1])).all().item():
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    if isinstance(input, Tensor) and input.ndim == 0 and seq.ndim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({seq.ndim}) and input value's dim(0) numel(1)")
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim != 1 and isinstance(input, Tensor) and (input.ndim != seq.ndim or
                                                         input._shape[:-1] != seq._shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {dims(seq)} and input value tensor {dims(input)}")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices where ``input`` would be inserted into the last dim of ``sorted_sequence`` to keep it sorted
    (``torch.searchsorted``); ``right``/``side='right'`` puts equal values after. Not differentiable.

    The same binary search as PyTorch's, so NaN and infinities land where PyTorch puts them: the left search
    moves right while ``not seq[mid] >= v`` and the right one while ``not seq[mid] > v``, which makes a NaN value
    go past everything and a NaN in the sequence (sorted last) count as larger than any value."""
    from .pointwise import where
    _searchsorted_checks(sorted_sequence, input, right, side, sorter)
    if side is not None:
        right = side == "right"
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    if isinstance(input, Tensor):
        v = input
    elif seq.dtype.is_floating_point or not isinstance(input, float):
        v = seq.new_tensor(input)  # a Python number compares in the sequence's dtype (it is a wrapped number)
    else:
        from .creation import tensor
        v = tensor(input, device=seq.device)  # a float against integers: the default float dtype
    n = seq._shape[-1]
    start = v.new_zeros(v._shape, dtype=_dt.int64)
    if n == 0:
        return start.to(_dt.int32) if out_int32 else start
    end = start + n
    if seq.ndim > 1:
        rows = seq.reshape(-1, n)
        flat_v = v.reshape(rows._shape[0], -1)
        start, end = start.reshape(flat_v._shape), end.reshape(flat_v._shape)
    for _ in range(n.bit_length()):  # enough halvings to close every [start, end) of size <= n
        mid = start + ((end - start) >> 1)
        at = mid.clamp(max=max(n - 1, 0))
        mv = rows.gather(-1, at) if seq.ndim > 1 else seq.reshape(-1)[at]
        vv = flat_v if seq.ndim > 1 else v
        go = ~(mv > vv) if right else ~(mv >= vv)
        live = start < end
        start = where(live & go, mid + 1, start)
        end = where(live & ~go, mid, end)
    r = start.reshape(v._shape)
    return r.to(_dt.int32) if out_int32 else r


def _is_scalar(v):
    """A Python or NumPy number: what PyTorch's ``Scalar`` parameters take."""
    return isinstance(v, (int, float, complex, np.number, np.bool_))


def _overload_error(op, args, sigs):
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    return TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected one of: "
                     f"{sigs}")


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Bucket index of each element for 1-D ``boundaries`` (``torch.bucketize``; ``right`` as documented there).
    RuntimeError for boundaries of another rank; TypeError (PyTorch's overloads) unless ``boundaries`` is a tensor
    and ``input`` a tensor or a number."""
    if not isinstance(boundaries, Tensor) or not (isinstance(input, Tensor) or _is_scalar(input)):
        raise _overload_error("bucketize", (input, boundaries), "(Tensor input, Tensor boundaries, *, bool out_int32 "
                              "= False, bool right = False, Tensor out = None), (Number self, Tensor boundaries, *, "
                              "bool out_int32 = False, bool right = False)")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Bool tensor of ``elements``' shape: True where the element occurs in ``test_elements``
    (``torch.isin``); either argument (not both) may be a number, as PyTorch's overloads (TypeError otherwise).
    RuntimeError for bool or complex inputs, which PyTorch's kernel does not take."""
    from .creation import tensor
    te, tt_ = isinstance(elements, Tensor), isinstance(test_elements, Tensor)
    if not ((te or _is_scalar(elements)) and (tt_ or _is_scalar(test_elements)) and (te or tt_)):
        raise _overload_error("isin", (elements, test_elements), "(Tensor elements, Tensor test_elements, *, bool "
                              "assume_unique = False, bool invert = False, Tensor out = None), (Number element, "
                              "Tensor test_elements, ...), (Tensor elements, Number test_element, ...)")
    for v in (elements, test_elements):
        d = v.dtype if isinstance(v, Tensor) else _dt.scalar_dtype(v)
        if d is _dt.bool or d.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_dt._SCALAR_TYPE[d.name]}")
    e = elements if isinstance(elements, Tensor) else tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements, device=e.device)
    t = t.reshape(-1)
    if t.numel() == 0:
        hit = (e != e) & (e == e)  # all False, of e's shape
    else:
        s = t.sort().values
        pos = searchsorted(s, e.reshape(-1)).clamp(max=s.numel() - 1)
        hit = (s[pos] == e.reshape(-1)).reshape(e._shape)
    return ~hit if invert else hit


__all__ = ["sort", "argsort", "topk", "median", "sort_ret", "topk_ret", "median_ret", "kthvalue", "msort", "quantile",
           "nanquantile", "mode", "nanmedian", "searchsorted", "bucketize", "isin"]
