"""Reductions and scans: sum, prod, amax/amin, aminmax, max/min (values, indices), arg*, all/any, mean,
var/std, cov/corrcoef, logsumexp, norm, renorm, cumsum/cumprod, cummax/cummin, logcumsumexp, diff, trapezoid.

Sorting and what is computed from it (sort, topk, median, kthvalue, quantile, mode, searchsorted, isin) is in
``sorting.py``; unique, bincount and the histograms in ``summary_ops.py``."""
import builtins
import collections
import math

from .._dispatch import COMPLEX_DTYPES, autocast_op, defop, dispatch, refuse
from .. import _strides
from .. import _dtype as _dt
from .._tensor import Tensor
from ._util import SCALAR_NAMES, Unset, as_dims, check_arg, method
from .pointwise import abs, exp, isnan, log, sqrt, where
from .unary import _float

_FLOAT = 2


def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _expand_back(g, shape, dims, keepdim):
    """Broadcast a reduced gradient back to ``shape``."""
    if not keepdim and dims:
        for d in sorted(dims):
            g = g.unsqueeze(d)
    return g.expand(shape)


def _check_keepdim(keepdim, op):
    if not isinstance(keepdim, bool):
        raise TypeError(f"{op}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")


def _red_meta(name, kind):
    def meta(a, dims, keepdim, dtype=None):
        _check_keepdim(keepdim, name)
        if kind == "sum":
            out = dtype or (_dt.int64 if a.dtype.category < _FLOAT else a.dtype)
        elif kind == "bool":
            out = _dt.uint8 if a.dtype is _dt.uint8 else _dt.bool  # PyTorch keeps uint8 for all/any
        else:
            out = a.dtype
        if kind == "minmax":
            for d in dims:
                _nonempty_dim(a, d, name)
        return [(_reduced_shape(a._shape, dims, keepdim), out)], [None]
    return meta


def _nonempty_dim(a, d, op):
    """IndexError (PyTorch's) when reducing ``a`` along its dim ``d`` of size 0 by an op without identity."""
    if a.ndim and a._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


def _no_dim_on_empty(a, op, exc=RuntimeError):
    """The error of a full reduction without identity (max, argmax, ...) of an empty tensor."""
    if a.numel() == 0:
        tail = " Specify the reduction dim with the 'dim' argument." if exc is RuntimeError else ""
        raise exc(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.{tail}")


def _sum_bw(c, g):
    return _expand_back(g, c.shapes[0], c.kw["dims"], c.kw["keepdim"])


_sum_op = defop("sum", _red_meta("sum", "sum"), _sum_bw, save_inputs=False, complex_grad=True, reduction=True)


def _dims_of(input, dim, op):
    """The reduced dims, wrapped and checked (IndexError out of range, RuntimeError for a repeated dim). A 0-d
    tensor accepts dim 0 and -1 as PyTorch does; they name no real dim, so nothing is reduced."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(input.ndim))
    dims = _strides.wrap_dims(as_dims(dim), input.ndim, op)
    return dims if input.ndim else ()


class _AllDims:
    """``sum``'s default ``dim``: no dim given (then ``keepdim`` may not be given either, as PyTorch's overloads)."""

    def __repr__(self):
        return "None"


_ALL_DIMS = _AllDims()
_NO_KEEPDIM = _AllDims()  # keepdim not given (an explicit None is refused, as PyTorch's bool parameter)


@method("sum")
def sum(input, dim=_ALL_DIMS, keepdim=_NO_KEEPDIM, *, dtype=None):
    """Sum over ``dim`` (int, tuple, or all). Integer/bool inputs sum to int64. Mirrors ``torch.sum``:
    TypeError for ``keepdim`` without ``dim`` (the all-elements overload has no keepdim)."""
    if keepdim is not _NO_KEEPDIM and keepdim.__class__ is not bool:
        raise TypeError(f"sum(): argument 'keepdim' must be bool, not {type(keepdim).__name__}")
    if dim is _ALL_DIMS:
        if keepdim is not _NO_KEEPDIM:
            raise TypeError("sum() received an invalid combination of arguments - got (Tensor, keepdim=bool), but "
                            "expected one of: (Tensor input, *, torch.dtype dtype = None), (Tensor input, tuple of "
                            "ints dim, bool keepdim = False, *, torch.dtype dtype = None)")
        dim = None
    keepdim = keepdim is True
    return dispatch(_sum_op, (input,), {"dims": _dims_of(input, dim, "sum"), "keepdim": keepdim,
                                        "dtype": _dt.as_dtype(dtype, "sum")})


@method("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero (``torch.nansum``); complex input or dtype is refused, as PyTorch's CPU kernel."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    dt = _dt.as_dtype(dtype, "nansum")
    if dt is not None and dt.is_complex:
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_dt._SCALAR_TYPE[dt.name]}\'')
    if input.dtype.is_floating_point:  # only floats hold NaN (an integer input sums as is, to int64)
        input = where(input != input, 0.0, input)
    return sum(input, dim, keepdim, dtype=dtype)


@method("sum_to_size")
def sum_to_size(input, *size):
    """Sum broadcast dims so the result has ``size`` (which must be expandable to ``input``'s shape)."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)
    shp = input._shape
    if size == shp:
        return input
    lead = len(shp) - len(size)
    if lead < 0:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shp)}}}.")
    dims = list(range(lead)) + [i + lead for i, s in enumerate(size) if s == 1 and shp[i + lead] != 1]
    for i, s in enumerate(size):
        if s != 1 and s != shp[i + lead]:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shp)}}}.")
    r = sum(input, dims, keepdim=True) if dims else input
    return r.reshape(size)


@method("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over ``dim``; RuntimeError for integer inputs without ``dtype`` (as PyTorch)."""
    dt = _dt.as_dtype(dtype, "mean") or input.dtype
    if dt.category < _FLOAT:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_type_word(input.dtype)}")
    dims = _dims_of(input, dim, "mean")
    n = _strides.numel(input._shape[d] for d in dims)
    s = sum(input, dims, keepdim, dtype=dt)
    return s / n if n else s * float("nan")


def _type_word(d):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(
        d.name, d.name.capitalize())


@method("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over the non-NaN elements (``torch.nanmean``), in ``dtype`` when given (the input is cast first).
    RuntimeError for an integral, bool or complex input, or an integral ``dtype``, as PyTorch."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{SCALAR_NAMES[input.dtype.name]}")
    dt = _dt.as_dtype(dtype, "nanmean")
    if dt is not None and not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_type_word(dt)}")
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dt is not None and dt.is_complex:  # the cast input reaches the nansum kernel, which has no complex loop
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{SCALAR_NAMES[dt.name]}'")
    if dt is not None and dt is not input.dtype:
        input = input.to(dt)
    notnan = (input == input)
    return nansum(input, dim, keepdim) / sum(notnan, dim, keepdim)


def _prod_bw(c, g):
    x = c.inputs[0]
    c.out  # saved (PyTorch's prod_backward reads result): a modified result is an error
    dims = c.kw["dims"]
    if x.ndim == 0:
        return g
    if len(dims) != 1:
        # full reduction: treat as a product over one flattened dim
        flat = x.reshape(-1)
        gi = _prod_grad_1d(flat, g.reshape(()).expand(flat._shape), 0)
        return gi.reshape(x._shape)
    d = dims[0]
    gexp = _expand_back(g, x._shape, dims, c.kw["keepdim"])
    return _prod_grad_1d(x, gexp, d)


def _prod_grad_1d(x, g, d):
    # d prod / d x_i = prod_{j<i} x_j * prod_{j>i} x_j: exclusive cumprods from both ends (zero-safe)
    from .shape import cat, flip
    from .creation import ones
    one = ones(x._shape[:d] + (1,) + x._shape[d + 1:], dtype=x.dtype, device=x.device)
    left = cat([one, cumprod(x, d).narrow(d, 0, x._shape[d] - 1)], d)
    right = flip(cat([one, cumprod(flip(x, (d,)), d).narrow(d, 0, x._shape[d] - 1)], d), (d,))
    return g * left * right


_prod_op = defop("prod", _red_meta("prod", "sum"), _prod_bw, save_output=True, reduction=True)  # self, result


class _AllElements:
    """Default of ``prod``'s ``dim``: not given (reduce every element); unlike None, which PyTorch refuses."""
    def __repr__(self):
        return "None"


_ALL = _AllElements()


@method("prod")
@autocast_op("fp32")
def prod(input, dim=_ALL, keepdim=False, *, dtype=None):
    """Product over one ``dim`` (or all elements). Integer inputs give int64 (``torch.prod``).

    TypeError, as PyTorch's parser, for a ``dim`` given that is not an int: ``prod(x, None)`` (PyTorch has no
    dim=None form; the default here only stands for "not given")."""
    if dim is not _ALL:
        check_arg("prod", "dim", 2, dim, "int")
    dims = tuple(range(input.ndim)) if dim is _ALL else _dims_of(input, _strides.wrap_dim(dim, input.ndim), "prod")
    return dispatch(_prod_op, (input,), {"dims": dims, "keepdim": keepdim, "dtype": _dt.as_dtype(dtype, "prod")})


def _amax_bw(c, g):
    x = c.inputs[0]
    dims, keepdim = c.kw["dims"], c.kw["keepdim"]
    out = _expand_back(c.out, x._shape, dims, keepdim)
    mask = (x == out)
    cnt = sum(mask, dims, keepdim=True)
    return _expand_back(g, x._shape, dims, keepdim) * mask / cnt


_amax_op = defop("amax", _red_meta("amax", "minmax"), _amax_bw, save_output=True,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"max_values_cpu\" not implemented for '{T}'"), reduction=True)
_amin_op = defop("amin", _red_meta("amin", "minmax"), _amax_bw, save_output=True,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"min_values_cpu\" not implemented for '{T}'"), reduction=True)


@method("amax")
def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (all dims when empty); the gradient is shared evenly among ties. RuntimeError for
    an empty input without ``dim``, IndexError when a reduced dim has size 0 (as ``torch.amax``)."""
    if dim is None or dim == () or dim == []:
        _no_dim_on_empty(input, "amax")
    return dispatch(_amax_op, (input,), {"dims": _dims_of(input, dim, "amax"), "keepdim": keepdim})


@method("amin")
def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (all dims when empty); the gradient is shared evenly among ties. RuntimeError for
    an empty input without ``dim``, IndexError when a reduced dim has size 0 (as ``torch.amin``)."""
    if dim is None or dim == () or dim == []:
        _no_dim_on_empty(input, "amin")
    return dispatch(_amin_op, (input,), {"dims": _dims_of(input, dim, "amin"), "keepdim": keepdim})


_aminmax = collections.namedtuple("aminmax", ["min", "max"])


@method("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over all elements or along ``dim`` (``torch.aminmax``)."""
    if dim is None:
        return _aminmax(input.amin(), input.amax()) if not keepdim else _aminmax(
            input.amin(tuple(range(input.ndim)), keepdim=True), input.amax(tuple(range(input.ndim)), keepdim=True))
    return _aminmax(input.amin(dim, keepdim), input.amax(dim, keepdim))


def _evenly_bw(c, g):
    # PyTorch's evenly_distribute_backward: a NaN result's gradient is shared by the input's NaNs, any other
    # result's by the elements equal to it
    from .pointwise import isnan, where
    x, v = c.inputs
    mask = isnan(x) if bool(isnan(v).item()) else x == v
    return where(mask, g / mask.sum(), 0.0), None


# the value of max() / min() / median() over all elements (computed without autograd) tied to the input with
# that backward; amax over all dims keeps its own (scale_grad_by_count, NaN for a NaN result), as PyTorch
_evenly_op = defop("evenly_selected", lambda a, v: ([(v._shape, v.dtype)], [None, None]), _evenly_bw,
                   decomp=lambda a, v: v)


def _evenly_selected(input, value):
    """``value`` (a 0-d element of ``input`` found without autograd) with the gradient of torch's max(),
    min() and median() over all elements."""
    return dispatch(_evenly_op, (input, value.detach())) if input.requires_grad else value


def _index_red_meta(name):
    def meta(a, dim, keepdim):
        _check_keepdim(keepdim, name)
        _nonempty_dim(a, dim, name)
        shape = _reduced_shape(a._shape, (dim,), keepdim) if a.ndim else ()
        return [(shape, a.dtype), (shape, _dt.int64)], [None]
    return meta


def _max_dim_bw(c, g):
    _, idx = c.out
    d, keepdim = c.kw["dim"], c.kw["keepdim"]
    if not keepdim and len(c.shapes[0]):
        g, idx = g.unsqueeze(d), idx.unsqueeze(d)
    from .creation import zeros
    from .indexing import scatter
    return scatter(zeros(c.shapes[0], dtype=g.dtype, device=g.device), d, idx, g)


# indices only (value_selecting_reduction_backward)
_max_dim_op = defop("max_dim", _index_red_meta("max"), _max_dim_bw, save_inputs=False, save_output=(1,), reduction=True,
    refused=refuse(COMPLEX_DTYPES, RuntimeError, "max(): does not support complex input"))
_min_dim_op = defop("min_dim", _index_red_meta("min"), _max_dim_bw, save_inputs=False, save_output=(1,), reduction=True,
    refused=refuse(COMPLEX_DTYPES, RuntimeError, "min(): does not support complex input"))

max_ret = collections.namedtuple("max", ["values", "indices"])
min_ret = collections.namedtuple("min", ["values", "indices"])


_NO_DIM = Unset("<no dim>")
_UNBIASED = Unset("True")
_NO_X = Unset("<no x>")
_DX = Unset("1")


def _given_dim(op, dim):
    """``dim`` as given, or None when not given; TypeError for an explicit None (PyTorch's overloads of
    ``max``/``min`` take an int dim or none)."""
    if dim is _NO_DIM:
        return None
    if dim is None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, NoneType), but expected "
                        f"one of:\n * (Tensor input, *, Tensor out = None)\n * (Tensor input, Tensor other, *, Tensor "
                        f"out = None)\n * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")
    return dim


@method("max")
def max(input, dim=_NO_DIM, keepdim=False, *, out=None):
    """``max(input)``: the maximum; ``max(input, dim)``: (values, indices); ``max(input, other)``: maximum."""
    if isinstance(dim, Tensor):
        from .pointwise import maximum
        return maximum(input, dim)
    dim = _given_dim("max", dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if input.dtype.is_complex:  # PyTorch's full reduction is its own kernel, named in the message
            raise NotImplementedError(f"\"max_all\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")
        return _evenly_selected(input, amax(input.detach()))
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return max_ret(input.clone(), _zeros_idx(input))
    return max_ret(*dispatch(_max_dim_op, (input,), {"dim": d, "keepdim": keepdim}))


@method("min")
def min(input, dim=_NO_DIM, keepdim=False, *, out=None):
    """``min(input)``: the minimum; ``min(input, dim)``: (values, indices); ``min(input, other)``: minimum."""
    if isinstance(dim, Tensor):
        from .pointwise import minimum
        return minimum(input, dim)
    dim = _given_dim("min", dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if input.dtype.is_complex:  # PyTorch's full reduction is its own kernel, named in the message
            raise NotImplementedError(f"\"min_all\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")
        return _evenly_selected(input, amin(input.detach()))
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return min_ret(input.clone(), _zeros_idx(input))
    return min_ret(*dispatch(_min_dim_op, (input,), {"dim": d, "keepdim": keepdim}))


def _zeros_idx(input):
    from .creation import zeros
    return zeros((), dtype=_dt.int64, device=input.device)


def _arg_meta(name):
    def meta(a, dim, keepdim):
        _check_keepdim(keepdim, name)
        _nonempty_dim(a, dim, name)
        return [(_reduced_shape(a._shape, (dim,), keepdim) if a.ndim else (), _dt.int64)], [None]
    return meta


_argmax_op = defop("argmax", _arg_meta("argmax"),
    refused={**refuse(("bool",), RuntimeError, "argmax(): does not support bool input"),
             **refuse(COMPLEX_DTYPES, RuntimeError, "argmax(): does not support complex input")}, reduction=True)
_argmin_op = defop("argmin", _arg_meta("argmin"),
    refused={**refuse(("bool",), RuntimeError, "argmin(): does not support bool input"),
             **refuse(COMPLEX_DTYPES, RuntimeError, "argmin(): does not support complex input")}, reduction=True)


@method("argmax")
def argmax(input, dim=None, keepdim=False):
    """Index of the maximum (over the flattened input when ``dim`` is None), int64."""
    if dim is None:
        _no_dim_on_empty(input, "argmax", IndexError)
        r = dispatch(_argmax_op, (input.reshape(-1),), {"dim": 0, "keepdim": False})
        return r.reshape((1,) * input.ndim) if keepdim else r
    return dispatch(_argmax_op, (input,), {"dim": _strides.wrap_dim(dim, input.ndim), "keepdim": keepdim})


@method("argmin")
def argmin(input, dim=None, keepdim=False):
    """Index of the minimum (over the flattened input when ``dim`` is None), int64."""
    if dim is None:
        _no_dim_on_empty(input, "argmin", IndexError)
        r = dispatch(_argmin_op, (input.reshape(-1),), {"dim": 0, "keepdim": False})
        return r.reshape((1,) * input.ndim) if keepdim else r
    return dispatch(_argmin_op, (input,), {"dim": _strides.wrap_dim(dim, input.ndim), "keepdim": keepdim})


_all_op = defop("all", _red_meta("all", "bool"), reduction=True)
_any_op = defop("any", _red_meta("any", "bool"), reduction=True)


@method("all")
def all(input, dim=None, keepdim=False):
    """True where every element over ``dim`` is nonzero (bool result). An empty ``dim`` list reduces nothing
    (PyTorch's all/any, unlike sum)."""
    dims = () if isinstance(dim, (tuple, list)) and not dim else _dims_of(input, dim, "all")
    return dispatch(_all_op, (input,), {"dims": dims, "keepdim": keepdim})


@method("any")
def any(input, dim=None, keepdim=False):
    """True where some element over ``dim`` is nonzero (bool result). An empty ``dim`` list reduces nothing."""
    dims = () if isinstance(dim, (tuple, list)) and not dim else _dims_of(input, dim, "any")
    return dispatch(_any_op, (input,), {"dims": dims, "keepdim": keepdim})




def _check_unbiased(op, unbiased):
    """``unbiased`` as given (a bool) or None when not given; TypeError for anything else (None included), as
    PyTorch's argument parser."""
    if unbiased is _UNBIASED:
        return None
    if not isinstance(unbiased, bool):
        raise TypeError(f"{op}() received an invalid combination of arguments - got (Tensor, "
                        f"unbiased={type(unbiased).__name__}), but expected one of:\n"
                        f" * (Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False)\n"
                        f" * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
                        f"bool keepdim = False)\n * (Tensor input, bool unbiased = True)")
    return unbiased


def _scaled_var(input, dim, unbiased, keepdim, correction, op):
    """(s, v) with var = s**2 * v: the deviations from the mean are divided by s, the power of two at or below
    their largest magnitude along the reduced dims, before squaring, so the squares never overflow where the variance (for ``var``) or
    the deviation (for ``std``) itself does not (PyTorch accumulates in double). s is detached: the variance
    does not depend on it. Complex input gives the variance of the moduli of the deviations, real."""
    if isinstance(dim, bool) and unbiased is None:  # PyTorch's (input, bool unbiased) overload: std(x, True)
        dim, unbiased = None, dim
    corr = correction if correction is not None else (0 if unbiased is False else 1)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _dims_of(input, dim, op)
    n = _strides.numel(input._shape[d] for d in dims) if input.ndim else 1
    dev = input - mean(input, dims, keepdim=True)
    if dev.dtype.is_complex:
        dev = abs(dev)
    if dev.numel() == 0:
        return None, sum(dev * dev, dims, keepdim) / builtins.max(n - corr, 0)
    sc = amax(abs(dev), dims, keepdim=True).detach()
    sc = where((sc == 0) | ~sc.isfinite(), 1.0, sc)  # zero, inf or NaN spread: the plain formula says it
    sc = sc.log2().floor().exp2()  # a power of two: scaling is exact, so values match the unscaled formula
    dev = dev / sc
    v = sum(dev * dev, dims, keepdim) / builtins.max(n - corr, 0)
    return (sc if keepdim or not dims else sc.squeeze(dims)), v


def _var_std_op(input, dim, unbiased, keepdim, correction, op):
    """var / std of a real floating input as one op saving what PyTorch's node saves (``natives.var_std``)."""
    from .natives import var_std
    if isinstance(dim, bool) and unbiased is None:  # PyTorch's (input, bool unbiased) overload: std(x, True)
        dim, unbiased = None, dim
    corr = correction if correction is not None else (0 if unbiased is False else 1)
    return var_std(input, _dims_of(input, dim, op), corr, keepdim, op == "std")


@method("var")
def var(input, dim=None, unbiased=_UNBIASED, keepdim=False, *, correction=None):
    """Variance over ``dim`` with Bessel's ``correction`` (default 1; ``unbiased=False`` means 0); real for
    complex input. RuntimeError for integer input, as ``torch.var``."""
    unbiased = _check_unbiased("var", unbiased)
    if input.dtype.is_floating_point:
        return _var_std_op(input, dim, unbiased, keepdim, correction, "var")
    sc, v = _scaled_var(input, dim, unbiased, keepdim, correction, "var")
    return v if sc is None else v * (sc * sc)


@method("std")
def std(input, dim=None, unbiased=_UNBIASED, keepdim=False, *, correction=None):
    """Standard deviation: ``sqrt(var(...))`` with the same arguments (computed as scale * sqrt(scaled
    variance), so it is finite wherever the result is)."""
    unbiased = _check_unbiased("std", unbiased)
    if input.dtype.is_floating_point:
        return _var_std_op(input, dim, unbiased, keepdim, correction, "std")
    sc, v = _scaled_var(input, dim, unbiased, keepdim, correction, "std")
    return sqrt(v) if sc is None else sqrt(v) * sc


def _welford_mean(input, dim, keepdim):
    """The mean PyTorch's ``var_mean``/``std_mean`` give: ATen computes it with Welford's update
    (``mean += (x - mean) / n``) in the reduction's element order, so an infinite element that is not the last
    one makes the mean NaN (the next update takes inf - inf), where the plain mean is +/-inf. Its parallel
    chunks combine with the same formula, which gives the same rule."""
    m = mean(input, dim, keepdim)
    if not input.dtype.is_floating_point or input.numel() == 0 or bool(input.isfinite().all()):
        return m
    dims = _dims_of(input, dim, "mean")
    kept = [d for d in range(input.ndim) if d not in dims]
    x = input.detach().permute(kept + list(dims)).reshape([input._shape[d] for d in kept] + [-1])
    early = ~x.narrow(-1, 0, x._shape[-1] - 1).isfinite()  # non-finite before the last element
    return where(early.any(-1).reshape(m._shape), float("nan"), m)


def var_mean(input, dim=None, unbiased=_UNBIASED, keepdim=False, *, correction=None):
    """(variance, mean) over ``dim`` (``torch.var_mean``): the mean as PyTorch's Welford reduction gives it
    (NaN when an infinite element is not the last one reduced)."""
    _check_unbiased("var_mean", unbiased)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("var_mean only support floating point and complex dtypes")
    return var(input, dim, unbiased, keepdim, correction=correction), _welford_mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=_UNBIASED, keepdim=False, *, correction=None):
    """(standard deviation, mean) over ``dim`` (``torch.std_mean``): the mean as PyTorch's Welford reduction
    gives it (NaN when an infinite element is not the last one reduced)."""
    _check_unbiased("std_mean", unbiased)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std_mean only support floating point and complex dtypes")
    return std(input, dim, unbiased, keepdim, correction=correction), _welford_mean(input, dim, keepdim)


def _cov_weights(kind, w, n):
    """PyTorch's checks of one weights tensor of ``cov`` against ``n`` observations."""
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with {w.ndim} "
                           "dimensions")
    ok = (not w.dtype.is_floating_point and not w.dtype.is_complex and w.dtype is not _dt.bool) \
        if kind == "fweights" else w.dtype.is_floating_point
    if not ok:
        want = "integral" if kind == "fweights" else "floating point"
        raise RuntimeError(f"cov(): expected {kind} to have {want} dtype but got {kind} with "
                           f"{SCALAR_NAMES[w.dtype.name]} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n and builtins.bool((w.min() < 0).item()):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@method("cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (V, N) or of a 1-D input (``torch.cov``),
    with optional integer frequency weights and float observation weights (N,); size-1 dims of the result are
    squeezed. Differentiable. As PyTorch: TypeError for a non-int ``correction``; RuntimeError for more than 2
    dims, bool input, weights of more than 1 dim, of the wrong dtype or length, negative or summing to zero. When
    the degrees of freedom are <= 0 it warns and divides by 0 (inf, or NaN where the sum is 0)."""
    import warnings
    from .reduce import sum as _sum
    check_arg("cov", "correction", None, correction, "int")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = _float(input if input.ndim == 2 else input.reshape(1, -1))
    n = x._shape[1]
    w = None
    if fweights is not None:
        _cov_weights("fweights", fweights, n)
        w = fweights
    if aweights is not None:
        _cov_weights("aweights", aweights, n)
        w = aweights if w is None else w * aweights
    if w is None:
        wsum = n
        avg = x.mean(1)
    else:
        wsum = _sum(w)
        if not builtins.bool((wsum != 0).item()):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = _sum(x * w, 1) / wsum
    if w is not None and correction != 0 and aweights is not None:
        norm = wsum - correction * _sum(w * aweights) / wsum
    else:
        norm = wsum - correction
    if builtins.bool(norm <= 0) if isinstance(norm, int) else builtins.bool((norm <= 0).item()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        from .creation import zeros_like
        # +0, not norm * 0: a negative norm times 0 is -0, which flips the sign of the infinities
        norm = 0.0 if isinstance(norm, int) else zeros_like(norm)
    xm = x - avg.unsqueeze(1)
    c = xm.matmul((xm * w if w is not None else xm).t().conj() if xm.dtype.is_complex else
                  (xm * w if w is not None else xm).t())
    from .pointwise import true_divide
    return true_divide(c, norm).squeeze()


@method("corrcoef")
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (``torch.corrcoef``), clipped to [-1, 1] (real
    and imaginary parts apart for complex input); a single variable gives c / c (1, or NaN for a zero, infinite
    or NaN variance). The same input checks as ``cov``."""
    from .pointwise import sqrt
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    if d.dtype.is_complex:
        from .complex import real
        d = real(d)
    d = sqrt(d)
    c = c / d.unsqueeze(1) / d.unsqueeze(0)
    if c.dtype.is_complex:
        from .complex import complex as _complex, imag, real
        return _complex(real(c).clamp(-1, 1), imag(c).clamp(-1, 1))
    return c.clamp(-1, 1)


def _logsumexp_meta(input, dims, keepdim):
    shape = tuple(1 if k in dims else n for k, n in enumerate(input._shape)) if keepdim else \
        tuple(n for k, n in enumerate(input._shape) if k not in dims)
    return [(shape, input.dtype)], [None]


def _logsumexp_decomp(input, dims, keepdim):
    if input.numel() == 0:
        return log(sum(exp(input), dims, keepdim))
    if input.dtype.is_complex:
        from .complex import real
        m = amax(real(input), dims, keepdim=True)
    else:
        m = amax(input, dims, keepdim=True)
    m = where(m.isinf(), 0.0, m)
    r = log(sum(exp(input - m), dims, keepdim=True)) + m
    return r if keepdim else r.squeeze(dims)


def _logsumexp_bw(c, g):
    """derivatives.yaml ``logsumexp_backward``: g * exp(input - result), the result broadcast back over the
    reduced dims (so an input equal to the result gets exactly g, as in PyTorch, even where rounding made the
    sum of the weights exceed 1)."""
    x, out, dims = c.inputs[0], c.out, c.kw["dims"]
    if not c.kw["keepdim"] and dims:
        g, out = _unsqueeze(g, dims), _unsqueeze(out, dims)
    w = exp(x - out)
    return (g * (w.conj() if w.dtype.is_complex else w),)


def _unsqueeze(t, dims):
    for d in sorted(dims):
        t = t.unsqueeze(d)
    return t


_logsumexp_op = defop("logsumexp", _logsumexp_meta, _logsumexp_bw, decomp=_logsumexp_decomp, save_output=True,
                      complex_grad=True, reduction=True)


@method("logsumexp")
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably (``torch.logsumexp``): the max subtracted first (for complex
    input the max of the real parts, so the imaginary parts are kept as PyTorch does; a +-inf max is not
    subtracted, so all -inf gives -inf and an inf gives inf). Integer inputs compute in the default float
    dtype; an empty reduction gives -inf. ``dim=()`` without keepdim on a tensor with dims raises PyTorch's
    RuntimeError (its output check sees the kept dims); with keepdim it reduces every dim."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0 and input.ndim and not keepdim:
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{', '.join('1' * input.ndim)}]")
    dims = _dims_of(input, dim, "logsumexp")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = input.to(_dt.get_default_dtype())
    return dispatch(_logsumexp_op, (input,), {"dims": dims, "keepdim": keepdim})


@method("norm")
def _norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default): p in {'fro', number, inf, -inf}. A complex input
    gives the norm of the moduli, in the matching real dtype (as PyTorch)."""
    if dtype is not None:
        input = input.to(dtype)
    if p is None:
        p = "fro"
    if isinstance(p, str) and p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        from .movement import _SCALAR_TYPE
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_SCALAR_TYPE.get(input.dtype.name, input.dtype.name)}")
    if input.dtype.is_complex and p != "nuc":
        input = abs(input)
    if input.dtype.itemsize == 2 and input.dtype.is_floating_point and p != "nuc":
        # float16 / bfloat16: powers, sum and root in float32, rounded once (PyTorch's CPU norm accumulates in float)
        return _norm(input.float(), p, dim, keepdim).to(input.dtype)
    if isinstance(p, (int, float)) and (p < 0 or p == math.inf) and input.numel() == 0:
        _no_identity_norm(input, p, dim)
    if p != "nuc":
        from .natives import vector_norm as _vector_norm  # one op saving input and result, as PyTorch's
        return _vector_norm(input, 2 if p == "fro" else p, _dims_of(input, dim, "linalg.vector_norm"), keepdim)
    return _norm_by_order(input, p, dim, keepdim)


def _norm_by_order(input, p, dim, keepdim):
    """The p-norm of a real floating ``input`` written in reductions (``norm``'s decomposition)."""
    if p == "fro" or p == 2:
        return _root(sum(input * input, dim, keepdim), 2, input.requires_grad)
    if p == "nuc":  # the sum of singular values of the matrices in the last two dims (or ``dim``)
        from .lapack import matrix_norm
        dims = tuple(range(input.ndim)) if dim is None else tuple(dim)
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        return matrix_norm(input, "nuc", dims, keepdim)
    a = abs(input)
    if p == math.inf:
        return amax(a, dim if dim is not None else (), keepdim)
    if p == -math.inf:
        return amin(a, dim if dim is not None else (), keepdim)
    if p == 0:
        return sum(a != 0, dim, keepdim).to(input.dtype)
    if p == 1:
        return sum(a, dim, keepdim)
    return _root(sum(a ** p, dim, keepdim), p, input.requires_grad)


def _no_identity_norm(input, p, dim):
    """RuntimeError (PyTorch's) for an inf or negative-order norm over an empty reduction: max, min and
    negative powers have no identity."""
    word = str(int(p)) if math.isfinite(p) and p == int(p) else str(p)
    head = f"linalg.vector_norm cannot compute the {word} norm on "
    if dim is None:
        raise RuntimeError(head + "an empty tensor because the operation does not have an identity")
    for d in _dims_of(input, dim, "linalg.vector_norm"):
        if input._shape[d] == 0:
            raise RuntimeError(head + f"the dimension {d}because this dimension is empty and the operation does not "
                               "have an identity")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over ``dim`` (all elements by default), p in {'fro', 'nuc', number, inf, -inf}, written
    into ``out`` when given (``torch.norm``; ``Tensor.norm`` is the same without ``out``)."""
    r = _norm(input, p, dim, keepdim, dtype)
    return r


def _root(s, p, safe):
    """s ** (1/p); with ``safe``, a zero norm gets gradient 0 (as PyTorch's norm backward) instead of NaN."""
    from .pointwise import where
    r = (lambda v: sqrt(v)) if p == 2 else (lambda v: v ** (1.0 / p))
    if not safe or p < 1:
        return r(s)
    zero = s == 0
    return where(zero, 0.0, r(where(zero, 1.0, s)))


@method("renorm")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled so its ``p``-norm is at most ``maxnorm`` (``torch.renorm``).
    RuntimeError, as PyTorch, for p <= 0 or NaN, maxnorm < 0 or NaN, an input of less than 2 dims, and an
    input that is not floating point or complex."""
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _strides.wrap_dim(dim, input.ndim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_dt._SCALAR_TYPE[input.dtype.name]}")
    others = tuple(i for i in range(input.ndim) if i != d)
    if math.isinf(p):
        if input.numel() == 0:
            if builtins.any(input._shape[i] == 0 for i in others):
                _no_identity_norm(input, p, others)
            return input.clone()
        # the inf-norm of a slice is its largest magnitude; |x|^inf summed would be inf for any entry above 1
        norms = input.abs().amax(others, keepdim=True)
    else:
        norms = input.abs().pow(p).sum(others, keepdim=True).pow(1.0 / p)
    from .pointwise import where
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * scale.to(input.dtype)


method("renorm_")(lambda self, p, dim, maxnorm: self._inplace(renorm, p, dim, maxnorm))


def _scan_meta(a, dim, dtype=None):
    out = dtype or (_dt.int64 if a.dtype.category < _FLOAT else a.dtype)
    return [(a._shape, out)], [None]


def _cumsum_bw(c, g):
    from .shape import flip
    d = c.kw["dim"]
    return flip(cumsum(flip(g, (d,)), d), (d,))


def _cumprod_bw(c, g):
    from .shape import flip
    x = c.inputs[0]
    d = c.kw["dim"]
    out = c.out
    return flip(cumsum(flip(g * out, (d,)), d), (d,)) / x


_cumsum_op = defop("cumsum", _scan_meta, _cumsum_bw, save_inputs=False)
_cumprod_op = defop("cumprod", _scan_meta, _cumprod_bw, save_output=True)  # self, result


def _scan(op, name, input, dim, dtype):
    """cumsum / cumprod: ATen's CPU scan has no bool kernel, and accumulates float16 / bfloat16 in float (each
    output rounded once), so a reduced-precision cumprod runs in float32 on the input cast to the result dtype
    (cumsum keeps its own kernel, whose overflow to inf already matches)."""
    dtype = _dt.as_dtype(dtype, name)
    d = _strides.wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return input.clone() if dtype is None else input.to(dtype)
    if dtype is _dt.bool:
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
    out = dtype or input.dtype
    if name == "cumprod" and out in (_dt.float16, _dt.bfloat16):
        return dispatch(op, (input.to(out).float(),), {"dim": d, "dtype": None}).to(out)
    return dispatch(op, (input,), {"dim": d, "dtype": dtype})


@method("cumsum")
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim`` (same shape; integer inputs give int64; ``dtype``: cast first).
    NotImplementedError for a bool result, as PyTorch's CPU kernel."""
    return _scan(_cumsum_op, "cumsum", input, dim, dtype)


@method("cumprod")
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim`` (same shape; integer inputs give int64; ``dtype``: cast first).
    NotImplementedError for a bool result, as PyTorch's CPU kernel."""
    return _scan(_cumprod_op, "cumprod", input, dim, dtype)


def _scan_inplace(fn):
    def scan_(self, dim, *, dtype=None):
        dtype = _dt.as_dtype(dtype, fn.__name__ + "_")
        if dtype is not None and dtype is not self.dtype:
            from .creation import _CPP_NAMES
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_CPP_NAMES[self.dtype.name]} and output "
                               f"tensor dtype {_CPP_NAMES[dtype.name]} should match")
        return self._inplace(fn, dim, dtype=self.dtype)  # the scan runs in self's dtype
    scan_.__name__ = fn.__name__ + "_"
    scan_.__doc__ = f"In-place ``{fn.__name__}`` (``dtype``, if given, must be self's: RuntimeError otherwise)."
    return scan_


method("cumsum_")(_scan_inplace(cumsum))
method("cumprod_")(_scan_inplace(cumprod))


_cummax = collections.namedtuple("cummax", ["values", "indices"])
_cummin = collections.namedtuple("cummin", ["values", "indices"])


def _scan_extreme(input, dim, take_max):
    """Running max/min with the index of the (last) extreme so far, as ``torch.cummax`` / ``cummin``."""
    from .creation import arange
    from .pointwise import where
    d = _strides.wrap_dim(dim, builtins.max(input.ndim, 1))
    if input.ndim == 0:
        return input.clone(), input.new_zeros((), dtype=_dt.int64)
    if input.numel() == 0:
        return input.clone(), input.new_zeros(input._shape, dtype=_dt.int64)
    n = input._shape[d]
    idx_shape = [1] * input.ndim
    idx_shape[d] = n
    pos = arange(n, device=input.device).reshape(idx_shape).expand(input._shape)
    vals, idxs = [], []
    cur = cur_i = None
    for k in range(n):
        x = input.select(d, k)
        i = pos.select(d, k)
        if cur is None:
            cur, cur_i = x, i
        else:
            # PyTorch's rule `x >= cur || isnan(x)`: ties move the index to the later element, a NaN takes over
            # and no number displaces it (x >= NaN is false), and each later NaN moves the index to itself
            better = (x >= cur) if take_max else (x <= cur)
            if input.dtype.is_floating_point:
                better = better | x.isnan()
            cur = where(better, x, cur)
            cur_i = where(better, i, cur_i)
        vals.append(cur)
        idxs.append(cur_i)
    from .shape import stack
    return stack(vals, d), stack(idxs, d)


def _cum_extreme(input, dim, take_max):
    if input.dtype.is_floating_point and input.ndim and input.numel():
        from .natives import cum_extreme  # one op saving input and indices, as PyTorch's
        return cum_extreme(input, _strides.wrap_dim(dim, input.ndim), take_max)
    return _scan_extreme(input, dim, take_max)


@method("cummax")
def cummax(input, dim):
    """(values, indices) of the running maximum along ``dim`` (``torch.cummax``); NaN propagates, its index is
    the latest NaN's."""
    return _cummax(*_cum_extreme(input, dim, True))


@method("cummin")
def cummin(input, dim):
    """(values, indices) of the running minimum along ``dim`` (``torch.cummin``); NaN propagates, its index is
    the latest NaN's."""
    return _cummin(*_cum_extreme(input, dim, False))


def _logcumsumexp_meta(a, dim):
    return [(a._shape, a.dtype)], [None]


def _logcumsumexp_scan(input, dim):
    """The running log-sum-exp as a scan of ``logaddexp`` (the decomposition for backends without a kernel):
    log2(n) doubling steps, each combining an element with the partial result ``step`` places back (-inf,
    the identity, before the start)."""
    from .binary import logaddexp
    from .shape import cat
    out, n, step = input, input._shape[dim], 1
    while step < n:
        pad = list(input._shape)
        pad[dim] = step
        back = cat([input.new_full(pad, -math.inf), out.narrow(dim, 0, n - step)], dim)
        out = logaddexp(out, back)
        step *= 2
    return out


def _logcumsumexp_bw(c, g):
    """derivatives.yaml ``logcumsumexp_backward``: the gradient split by sign and carried as log-magnitudes, so
    large inputs give no overflow; each part is a reversed running log-sum-exp of log|g| - result."""
    from .shape import flip
    x, out, d = c.inputs[0], c.out, c.kw["dim"]
    if g.numel() <= 1:
        return (g,)
    lowest = _dt.finfo(g.dtype).min
    log_abs = g.abs().log()

    def part(mask):
        lg = where(mask, log_abs, lowest)
        return exp(flip(logcumsumexp(flip(lg - out, (d,)), d), (d,)) + x)
    return (part(g > 0) - part(g < 0),)


_logcumsumexp_op = defop("logcumsumexp", _logcumsumexp_meta, _logcumsumexp_bw, decomp=_logcumsumexp_scan,
                         save_output=True,
                         refused=refuse(("bool", "uint8", "int8", "int16", "int32", "int64") + COMPLEX_DTYPES,
                                        NotImplementedError, "\"logcumsumexp_out_cpu\" not implemented for '{T}'"))


@method("logcumsumexp")
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` (``torch.logcumsumexp``), same shape and dtype, floating inputs only
    (NotImplementedError for integer, bool and complex ones). Computed as a running ``logaddexp``, so large
    inputs do not overflow, +-inf combine as in PyTorch (inf + inf = inf, -inf + -inf = -inf) and a NaN
    carries to every later element; the gradient is PyTorch's sign-split formula."""
    d = _strides.wrap_dim(dim, builtins.max(input.ndim, 1))
    if input.ndim == 0:
        return dispatch(_logcumsumexp_op, (input.reshape(1),), {"dim": 0}).reshape(())
    return dispatch(_logcumsumexp_op, (input,), {"dim": d})


@method("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along ``dim``, with optional ``prepend`` / ``append`` (``torch.diff``)."""
    from .shape import cat
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _strides.wrap_dim(dim, input.ndim)
    for t in (prepend, append):
        if isinstance(t, Tensor) and t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        if isinstance(t, Tensor):
            for i, (a, b) in enumerate(zip(input._shape, t._shape)):
                if i != d and a != b:
                    raise RuntimeError(f"diff expects the shape of tensor to prepend or append to match that of input "
                                       f"except along the differencing dimension; input.size({i}) = {a}, but got "
                                       f"tensor.size({i}) = {b}")
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, input, append) if t is not None], d)
    for _ in range(n):
        m = x._shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = (a != b) if x.dtype is _dt.bool else a - b
    return x


def _dist_p(p):
    if not isinstance(p, (int, float, complex)) and not (isinstance(p, Tensor) and p.ndim == 0):
        raise TypeError(f"dist(): argument 'p' must be Number, not {type(p).__name__}")


def dist(input, other, p=2):
    """p-norm of ``input - other`` (``torch.dist``), the two broadcast together. TypeError for a non-tensor
    ``input`` or ``other`` or a non-number ``p``, as PyTorch's parser."""
    check_arg("dist", "input", 1, input, "Tensor")
    check_arg("dist", "other", 2, other, "Tensor")
    _dist_p(p)
    if isinstance(input, Tensor) and isinstance(other, Tensor) and input.dtype.is_floating_point \
            and other.dtype.is_floating_point and isinstance(p, (int, float)):
        from .natives import dist as _dist  # one op saving both operands and the result, as PyTorch's
        return _dist(input, other, p)
    return (input - other).norm(p)


@method("dist")
def _dist_method(self, other, p=2):
    """``Tensor.dist``: ``dist``, with the method's argument position in its TypeError."""
    check_arg("dist", "other", 1, other, "Tensor")
    _dist_p(p)
    return dist(self, other, p)


def _trapezoid_dx(y, x, d):
    """The spacings of sample points ``x`` along dim ``d`` of ``y``, as PyTorch lines them up: a 1-D ``x`` (one
    value per sample) along ``d``; an n-D ``x`` left-padded with ones to ``y``'s rank (one of higher rank is
    taken as it is) and differenced along ``d`` with clamped slices, so mismatched lengths surface as a
    broadcasting error of the product rather than being cut to fit."""
    if x.ndim == 1:
        if x._shape[0] != y._shape[d]:
            return None
        x = x.reshape(tuple(x._shape[0] if k == d else 1 for k in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + x._shape)
    lead = (slice(None),) * d
    return x[lead + (slice(1, None),)] - x[lead + (slice(0, -1),)]


def _trapezoid_ends(y, d):
    lead = (slice(None),) * d
    return y[lead + (slice(0, -1),)], y[lead + (slice(1, None),)]


def _trapezoid_args(op, y, x, dx):
    """(x, dx) with None for a missing one; TypeError for an explicit None (PyTorch's overloads take a Tensor ``x``
    or a number ``dx``, never None) or for both given."""
    if x is None or dx is None or x is not _NO_X and dx is not _DX:
        got = ", ".join(["Tensor"] + [f"{k}={type(v).__name__}" for k, v in (("x", x), ("dx", dx))
                                      if v is not _NO_X and v is not _DX])
        raise TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        f" * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, int dim = -1)")
    return (None if x is _NO_X else x), (None if dx is _DX else dx)


def trapezoid(y, x=_NO_X, *, dx=_DX, dim=-1):
    """Trapezoid rule along ``dim`` with sample points ``x`` or spacing ``dx`` (default 1) (``torch.trapezoid``).
    Zeros of ``y``'s dtype when ``y`` has no samples along ``dim``. As PyTorch: RuntimeError for bool input, for
    a 1-D ``x`` of another length than ``y`` along ``dim``, and when the spacings of an n-D ``x`` (left-padded
    to ``y``'s rank) do not broadcast with ``y``. Evaluated in PyTorch's order (sum of (y_i + y_i+1) * dx_i,
    then halved; for a constant spacing (sum y - (y_0 + y_n) / 2) * dx), so overflow happens where it does
    there."""
    x, dx = _trapezoid_args("trapezoid", y, x, dx)
    d = _strides.wrap_dim(dim, y.ndim)
    n = y._shape[d]
    if n == 0:
        from .creation import zeros
        return zeros(y._shape[:d] + y._shape[d + 1:], dtype=y.dtype, device=y.device)
    if y.dtype is _dt.bool or (x is not None and x.dtype is _dt.bool):
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"trapezoid: received a bool input for {which}, but bool is not supported")
    if x is not None:
        spacing = _trapezoid_dx(y, x, d)
        if spacing is None:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        left, right = _trapezoid_ends(y, d)
        return ((left + right) * spacing).sum(d) / 2.0
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * (1 if dx is None else dx)


trapz = trapezoid


def cumulative_trapezoid(y, x=_NO_X, *, dx=_DX, dim=-1):
    """Cumulative trapezoidal integral of ``y`` along ``dim`` (one element shorter than ``y`` there), with
    sample points ``x`` or spacing ``dx`` (default 1) (``torch.cumulative_trapezoid``). The same argument
    checks as ``trapezoid`` (bool input, the length of a 1-D ``x``, spacings that do not broadcast), in
    PyTorch's evaluation order."""
    x, dx = _trapezoid_args("cumulative_trapezoid", y, x, dx)
    d = _strides.wrap_dim(dim, y.ndim)
    if y.dtype is _dt.bool or (x is not None and x.dtype is _dt.bool):
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"cumulative_trapezoid: received a bool input for {which}, but bool is not supported")
    left, right = _trapezoid_ends(y, d)
    if x is not None:
        spacing = _trapezoid_dx(y, x, d)
        if spacing is None:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
        return ((left + right) * spacing).cumsum(d) / 2.0
    return ((1 if dx is None else dx) / 2.0 * (left + right)).cumsum(d)


@method("count_nonzero")
def count_nonzero(input, dim=None):
    """Number of non-zero elements (over ``dim``, an int or a tuple, or all of them), int64
    (``torch.count_nonzero``). TypeError for a non-tensor input, as PyTorch's parser."""
    check_arg("count_nonzero", "input", 1, input, "Tensor")
    return sum(input != 0, dim)


# ---- closeness -------------------------------------------------------------------------------------------------
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when ``isclose(input, other, rtol, atol, equal_nan)`` holds everywhere (``torch.allclose``); the
    same argument checks and errors as ``isclose``."""
    return builtins.bool(_isclose("allclose", input, other, rtol, atol, equal_nan).all())


@method("allclose")
def _allclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``Tensor.allclose``: ``allclose``, with the method's argument positions in its TypeErrors."""
    return builtins.bool(_isclose("allclose", self, other, rtol, atol, equal_nan, method=True).all())


@method("isclose")
def _isclose_method(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``Tensor.isclose``: ``isclose``, with the method's argument positions in its TypeErrors."""
    return _isclose("isclose", self, other, rtol, atol, equal_nan, method=True)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``input == other or |input - other| <= atol + |rtol * other|`` (the difference finite), a
    bool tensor of the broadcast shape (``torch.isclose``); with ``equal_nan`` two NaNs are close.

    Both must be tensors of one dtype (TypeError / RuntimeError "Float did not match Double", as PyTorch);
    rtol and atol must be >= 0 (RuntimeError). Integer and bool inputs compare in the default float dtype,
    floating ones in their own precision; zero tolerances reduce to equality.
    """
    return _isclose("isclose", input, other, rtol, atol, equal_nan)


def _isclose(op, input, other, rtol, atol, equal_nan, method=False):
    from .._dispatch import _TYPE_NAMES
    from .pointwise import isfinite
    if not method:
        check_arg(op, "input", 1, input, "Tensor")
    check_arg(op, "other", 1 if method else 2, other, "Tensor")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (isinstance(v, (int, float)) or isinstance(v, Tensor) and v.ndim == 0):
            raise TypeError(f"{op}(): argument '{name}' must be float, not {type(v).__name__}")
    rtol, atol = float(rtol), float(atol)
    if not isinstance(equal_nan, bool):
        raise TypeError(f"{op}(): argument 'equal_nan' must be bool, not {type(equal_nan).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_TYPE_NAMES[input.dtype.name]} did not match {_TYPE_NAMES[other.dtype.name]}")
    if not rtol >= 0:  # NaN fails too
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if not atol >= 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    close = input == other
    inexact = input.dtype.is_floating_point or input.dtype.is_complex
    if equal_nan and inexact:
        close = close | (isnan(input) & isnan(other))
    if rtol == 0 and atol == 0:
        return close
    if not inexact:  # an integer difference could wrap: PyTorch compares these in the default float dtype
        input, other = input.to(_dt.get_default_dtype()), other.to(_dt.get_default_dtype())
    allowed = atol + abs(rtol * other)
    actual = abs(input - other)
    return close | (isfinite(actual) & (actual <= allowed))


@method("equal")
def equal(input, other):
    """True when both have the same shape and elements."""
    return input.shape == other.shape and builtins.bool((input == other).all())
