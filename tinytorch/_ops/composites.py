"""More of ``torch``'s functions, each written in existing ops, so every backend runs them and autograd
differentiates them through those ops (no kernels, no backward formulas of their own).

Signatures, defaults and results follow the PyTorch 2.x documentation of the function of the same name.
"""
import builtins
import collections
import math

from .. import _dtype as _dt
from .. import _strides
from .._tensor import Tensor
from ._util import method

_cummax = collections.namedtuple("cummax", ["values", "indices"])
_cummin = collections.namedtuple("cummin", ["values", "indices"])
_kthvalue = collections.namedtuple("kthvalue", ["values", "indices"])
_aminmax = collections.namedtuple("aminmax", ["min", "max"])


def _float(x):
    return x if x.dtype.is_floating_point else x.to(_dt.get_default_dtype())


# ---- pointwise ---------------------------------------------------------------------------------------------
@method("asinh")
def asinh(input):
    """Inverse hyperbolic sine, ``sign(x) * log(|x| + sqrt(x^2 + 1))`` (``torch.asinh``)."""
    from .pointwise import log1p, sqrt, where
    x = _float(input)
    a = x.abs()
    # log1p(a + a^2 / (1 + sqrt(1 + a^2))) keeps precision near 0; the where keeps the gradient 1 at x = 0
    r = log1p(a + a * a / (1 + sqrt(a * a + 1)))
    return where(x < 0, -r, r) if x.numel() else r


@method("acosh")
def acosh(input):
    """Inverse hyperbolic cosine, ``log(x + sqrt(x^2 - 1))`` for x >= 1, NaN below (``torch.acosh``)."""
    from .pointwise import log, sqrt
    x = _float(input)
    return log(x + sqrt(x * x - 1))


@method("atanh")
def atanh(input):
    """Inverse hyperbolic tangent, ``0.5 * log1p(2x / (1 - x))`` (``torch.atanh``)."""
    from .pointwise import log1p
    x = _float(input)
    return log1p(2 * x / (1 - x)) * 0.5


arcsinh, arccosh, arctanh = asinh, acosh, atanh
for _n, _f in (("arcsinh", asinh), ("arccosh", acosh), ("arctanh", atanh)):
    method(_n)(_f)


@method("erfc")
def erfc(input):
    """``1 - erf(x)`` (``torch.erfc``)."""
    from .pointwise import erf
    return 1 - erf(_float(input))


@method("deg2rad")
def deg2rad(input):
    """Degrees to radians (``torch.deg2rad``)."""
    return _float(input) * (math.pi / 180)


@method("rad2deg")
def rad2deg(input):
    """Radians to degrees (``torch.rad2deg``)."""
    return _float(input) * (180 / math.pi)


@method("hypot")
def hypot(input, other):
    """``sqrt(input^2 + other^2)`` elementwise, broadcast (``torch.hypot``)."""
    from .pointwise import sqrt
    return sqrt(input * input + other * other)


@method("logaddexp")
def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow (``torch.logaddexp``)."""
    from .pointwise import exp, log1p, maximum, where
    m = maximum(input, other)
    d = -(input - other).abs()
    r = m + log1p(exp(d))
    return where(d.isnan() & (input == other), input, r)  # both -inf or both +inf: the value itself


@method("logaddexp2")
def logaddexp2(input, other):
    """``log2(2^input + 2^other)`` (``torch.logaddexp2``)."""
    return logaddexp(input * math.log(2.0), other * math.log(2.0)) / math.log(2.0)


@method("sinc")
def sinc(input):
    """Normalized sinc, ``sin(pi x) / (pi x)`` with 1 at 0 (``torch.sinc``)."""
    from .pointwise import sin, where
    x = _float(input)
    px = x * math.pi
    safe = where(x == 0, 1.0, px)
    return where(x == 0, 1.0, sin(safe) / safe)


@method("copysign")
def copysign(input, other):
    """|input| with the sign bit of ``other`` (``torch.copysign``)."""
    from .pointwise import where
    x = _float(input) if isinstance(input, Tensor) else input
    if not isinstance(other, Tensor):
        return where(signbit(x.new_tensor(other)), -x.abs(), x.abs())
    r = where(signbit(other), -x.abs(), x.abs())
    # adds exactly -0.0 / +0.0 (sign-preserving) so that ``other`` gets PyTorch's zero gradient
    return r + where(other.isfinite(), other * 0, -0.0)


@method("signbit")
def signbit(input):
    """True where the sign bit is set (negative numbers, -0.0, NaN with the bit) (``torch.signbit``)."""
    if not input.dtype.is_floating_point:
        return input < 0
    from .pointwise import where
    # -0.0 has the sign bit: 1 / -0.0 = -inf
    return (input < 0) | ((input == 0) & (1 / where(input == 0, input, 1.0) < 0))


@method("float_power")
def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (``torch.float_power``)."""
    base = input.double() if isinstance(input, Tensor) else input
    exp = exponent.double() if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor):
        base = exp.new_tensor(base)
    return base ** exp


@method("isneginf")
def isneginf(input):
    """True where input is -inf (``torch.isneginf``)."""
    return input.isinf() & (input < 0) if input.dtype.is_floating_point else input != input


@method("isposinf")
def isposinf(input):
    """True where input is +inf (``torch.isposinf``)."""
    return input.isinf() & (input > 0) if input.dtype.is_floating_point else input != input


@method("isreal")
def isreal(input):
    """True where the imaginary part is 0 (every element of a real tensor) (``torch.isreal``)."""
    if input.dtype.is_complex:
        from .complex import imag
        return imag(input) == 0
    return (input == input) | (input != input)


# ---- reductions and scans -----------------------------------------------------------------------------------
def _scan_extreme(input, dim, take_max):
    """Running max/min with the index of the (last) extreme so far, as ``torch.cummax`` / ``cummin``."""
    from .creation import arange
    from .pointwise import where
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        return input.clone(), input.new_zeros((), dtype=_dt.int64)
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
            # ties move the index to the later element; a NaN takes over and stays (PyTorch's rule)
            better = (x >= cur) if take_max else (x <= cur)
            if input.dtype.is_floating_point:
                better = (better | x.isnan()) & ~cur.isnan()
            cur = where(better, x, cur)
            cur_i = where(better, i, cur_i)
        vals.append(cur)
        idxs.append(cur_i)
    from .shape import stack
    return stack(vals, d), stack(idxs, d)


@method("cummax")
def cummax(input, dim):
    """(values, indices) of the running maximum along ``dim`` (``torch.cummax``); NaN propagates."""
    return _cummax(*_scan_extreme(input, dim, True))


@method("cummin")
def cummin(input, dim):
    """(values, indices) of the running minimum along ``dim`` (``torch.cummin``); NaN propagates."""
    return _cummin(*_scan_extreme(input, dim, False))


@method("logcumsumexp")
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` computed stably (``torch.logcumsumexp``)."""
    from .pointwise import exp, log, where
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    m = input.amax(d, keepdim=True).detach() if input.numel() else input.sum(d, keepdim=True)
    m = where(m.isinf(), 0.0, m)
    return log(exp(input - m).cumsum(d)) + m


@method("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    """(values, indices) of the k-th smallest element along ``dim`` (1-based k) (``torch.kthvalue``)."""
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    n = input._shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    v, i = input.sort(d, stable=True) if input.ndim else (input, input.new_zeros((), dtype=_dt.int64))
    if input.ndim:
        v, i = v.narrow(d, k - 1, 1), i.narrow(d, k - 1, 1)
        if not keepdim:
            v, i = v.squeeze(d), i.squeeze(d)
    return _kthvalue(v, i)


@method("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over all elements or along ``dim`` (``torch.aminmax``)."""
    if dim is None:
        return _aminmax(input.amin(), input.amax()) if not keepdim else _aminmax(
            input.amin(tuple(range(input.ndim)), keepdim=True), input.amax(tuple(range(input.ndim)), keepdim=True))
    return _aminmax(input.amin(dim, keepdim), input.amax(dim, keepdim))


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    from .pointwise import where
    from .shape import stack
    op = "nanquantile" if ignore_nan else "quantile"
    if interpolation not in ("linear", "lower", "higher", "nearest", "midpoint"):
        raise ValueError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qt = input.new_tensor([q]) if scalar_q else q.to(input.dtype).reshape(-1)
    if ((qt < 0) | (qt > 1)).any().item():
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _strides.wrap_dim(dim, input.ndim)
    s = x.sort(d).values  # NaNs sort last
    nan = x.isnan()
    valid = (~nan).sum(d, keepdim=True) if ignore_nan else nan.sum(d, keepdim=True) * 0 + x._shape[d]
    last = (valid - 1).clamp(min=0)
    outs = []
    for j in range(qt.numel()):
        pos = (valid - 1).to(x.dtype) * qt[j]  # a tensor: linear interpolation is differentiable in q too
        if interpolation == "lower":
            pos = pos.floor()
        elif interpolation == "higher":
            pos = pos.ceil()
        elif interpolation == "nearest":
            pos = pos.round()  # half to even, as PyTorch
        lo = pos.floor().long().clamp(min=0)
        hi = pos.ceil().long().clamp(min=0)
        lo, hi = where(lo > last, last, lo), where(hi > last, last, hi)
        a, b = s.gather(d, lo), s.gather(d, hi)
        w = where(hi > lo, 0.5, 0.0).to(x.dtype) if interpolation == "midpoint" else pos - lo.to(x.dtype)
        v = a + (b - a) * w
        # no value to take (all NaN), or any NaN for quantile: NaN, as PyTorch
        v = where((valid == 0) if ignore_nan else nan.any(d, keepdim=True), float("nan"), v)
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


@method("msort")
def msort(input):
    """Sort along the first dim (``torch.msort``)."""
    return input.sort(0).values


@method("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along ``dim``, with optional ``prepend`` / ``append`` (``torch.diff``)."""
    from .shape import cat
    d = _strides.wrap_dim(dim, input.ndim)
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


@method("dist")
def dist(input, other, p=2):
    """p-norm of ``input - other`` (``torch.dist``)."""
    return (input - other).norm(p)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Trapezoid rule along ``dim`` with sample points ``x`` or spacing ``dx`` (default 1) (``torch.trapezoid``)."""
    d = _strides.wrap_dim(dim, y.ndim)
    n = y._shape[d]
    if n == 0:
        return y.sum(d)
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * 0.5
    if x is not None:
        return (mid * diff(x, dim=dim if x.ndim > 1 else -1)).sum(d)
    return mid.sum(d) * (1 if dx is None else dx)


trapz = trapezoid


# ---- shape and indexing -------------------------------------------------------------------------------------
@method("ravel")
def ravel(input):
    """The elements as a 1-D tensor (a view when possible) (``torch.ravel``)."""
    return input.reshape(-1)


@method("rot90")
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first towards the second axis)."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = (_strides.wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip((d0, d1))
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def _split_at(input, indices_or_sections, dim, name, min_ndim):
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, int):
        if input._shape[dim] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input._shape[dim]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
    from .movement import tensor_split
    return tensor_split(input, indices_or_sections, dim)


@method("hsplit")
def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for 1-D input) (``torch.hsplit``)."""
    return _split_at(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


@method("vsplit")
def vsplit(input, indices_or_sections):
    """Split along dim 0 of an at-least-2-D tensor (``torch.vsplit``)."""
    return _split_at(input, indices_or_sections, 0, "vsplit", 2)


@method("dsplit")
def dsplit(input, indices_or_sections):
    """Split along dim 2 of an at-least-3-D tensor (``torch.dsplit``)."""
    return _split_at(input, indices_or_sections, 2, "dsplit", 3)


def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dim (``torch.atleast_1d``)."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(t.reshape(1) if t.ndim == 0 else t for t in ts)
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dims (new leading dims) (``torch.atleast_2d``)."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = tuple(t.reshape((1,) * (2 - t.ndim) + tuple(t._shape)) if t.ndim < 2 else t for t in ts)
    return out[0] if len(out) == 1 else out


def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1) (``torch.atleast_3d``)."""
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors

    def up(t):
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        if t.ndim == 2:
            return t.unsqueeze(-1)
        return t
    out = tuple(up(t) for t in ts)
    return out[0] if len(out) == 1 else out


def row_stack(tensors):
    """``vstack`` (``torch.row_stack``)."""
    from .shape import vstack
    return vstack(tensors)


@method("diagflat")
def diagflat(input, offset=0):
    """A 2-D tensor with the flattened input on diagonal ``offset`` (``torch.diagflat``)."""
    from .linalg import diag
    return diag(input.reshape(-1), offset)


def block_diag(*tensors):
    """Tensors (0-, 1- or 2-D) placed along the diagonal of a zero matrix (``torch.block_diag``)."""
    from .creation import zeros
    from .shape import cat
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    if not mats:
        return zeros(0, 0)
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _dt.promote_types(dt, m.dtype)
    cols = builtins.sum(m._shape[1] for m in mats)
    rows, left = [], 0
    for m in mats:
        parts = []
        if left:
            parts.append(zeros(m._shape[0], left, dtype=dt, device=m.device))
        parts.append(m.to(dt))
        right = cols - left - m._shape[1]
        if right:
            parts.append(zeros(m._shape[0], right, dtype=dt, device=m.device))
        rows.append(cat(parts, 1))
        left += m._shape[1]
    return cat(rows, 0)


def cartesian_prod(*tensors):
    """All combinations of the 1-D inputs as rows, like itertools.product (``torch.cartesian_prod``)."""
    from .shape import meshgrid, stack
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row, col, offset, lower, dtype, device):
    from .creation import _from_host
    import numpy as np
    r, c = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return _from_host(np.stack([r, c]).astype(np.int64), dtype or _dt.int64, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the lower triangle of a row x col matrix (``torch.tril_indices``)."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the upper triangle of a row x col matrix (``torch.triu_indices``)."""
    return _tri_indices(row, col, offset, False, dtype, device)


@method("cross")
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the first size-3 dim when None, as ``torch.cross``)."""
    from .shape import stack
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
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


@method("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``)."""
    from .linalg import outer
    o = outer(vec1, vec2)
    return (input * beta if beta != 1 else input) + (o * alpha if alpha != 1 else o) if beta != 0 else o * alpha


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Indices where ``input`` would be inserted into the last dim of ``sorted_sequence`` to keep it sorted
    (``torch.searchsorted``); ``right``/``side='right'`` puts equal values after. Not differentiable."""
    if side is not None:
        right = side == "right"
    seq = sorted_sequence if sorter is None else sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    v = seq.new_tensor(input) if scalar else input
    if seq.ndim == 1:
        cmp = (seq <= v.unsqueeze(-1)) if right else (seq < v.unsqueeze(-1))
    else:
        cmp = (seq.unsqueeze(-2) <= v.unsqueeze(-1)) if right else (seq.unsqueeze(-2) < v.unsqueeze(-1))
    r = cmp.sum(-1)
    return r.to(_dt.int32) if out_int32 else r


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Bucket index of each element for 1-D ``boundaries`` (``torch.bucketize``; ``right`` as documented there)."""
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


__all__ = ["asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "erfc", "deg2rad", "rad2deg", "hypot",
           "logaddexp", "logaddexp2", "sinc", "copysign", "signbit", "float_power", "isneginf", "isposinf",
           "isreal", "cummax", "cummin", "logcumsumexp", "kthvalue", "aminmax", "quantile", "nanquantile", "msort",
           "diff", "dist", "trapezoid", "trapz", "ravel", "rot90", "hsplit", "vsplit", "dsplit",
           "atleast_1d", "atleast_2d", "atleast_3d", "row_stack", "diagflat", "block_diag", "cartesian_prod",
           "tril_indices", "triu_indices", "cross", "addr", "searchsorted", "bucketize"]
