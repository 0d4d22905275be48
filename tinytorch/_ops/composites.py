"""More of ``torch``'s functions, each written in existing ops, so every backend runs them and autograd
differentiates them through those ops (no kernels, no backward formulas of their own).

Signatures, defaults and results follow the PyTorch 2.x documentation of the function of the same name.
"""
import builtins
import collections
import math

from .. import _dtype as _dt
from .. import _strides
from .._tensor import Size, Tensor
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
    from .reduce import _nonempty_dim
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"kthvalue_cpu\" not implemented for "
                                  f"'{'ComplexFloat' if input.dtype is _dt.complex64 else 'ComplexDouble'}'")
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
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")  # nanquantile says quantile() too
    scalar_q = not isinstance(q, Tensor)
    qt = input.new_tensor([q]) if scalar_q else q.to(input.dtype).reshape(-1)
    if ((qt < 0) | (qt > 1)).any().item():
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if dim is not None and input.ndim == 0:
        _strides.wrap_dim(dim, 0)
        dim = None  # a 0-d input: its one element, whatever keepdim says
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
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
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
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if builtins.any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def _tril_size(row, col, offset):
    """Elements of the lower triangle (diagonal ``offset``) of a row x col matrix (ATen's get_tril_size)."""
    if row == 0 or col == 0:
        return 0
    m_first = builtins.min(col, 1 + offset) if offset > 0 else int(row + offset > 0)
    m_last = builtins.max(0, builtins.min(col, row + offset))
    n_all = builtins.max(0, builtins.min(row, row + offset))
    n_trap = m_last - m_first + 1
    size = (m_first + m_last) * n_trap >> 1
    if n_all - n_trap > 0:
        size += (n_all - n_trap) * col
    return size


def _tri_indices(row, col, offset, lower, dtype, device):
    """The 2 x N indices of the lower (upper) triangle, computed row by row over only the rows that have
    some (so the work and memory are O(N), never O(row * col)); PyTorch's argument checks and its refusal of a
    result too large to allocate come first."""
    from .creation import _from_host
    from .._storage import check_alloc
    import numpy as np
    op = "tril_indices" if lower else "triu_indices"
    for v, name, pos in ((row, "row", 1), (col, "col", 2), (offset, "offset", 3)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    if dtype is not None and dtype is not _dt.int64 and dtype is not _dt.int32:  # PyTorch's kernels: these only
        from ..nn.functional import _scalar_name
        raise NotImplementedError(f"\"{op}\" not implemented for '{_scalar_name(dtype)}'")
    row, col, offset = int(row), int(col), int(offset)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    offset = builtins.max(-row - 1, builtins.min(offset, col + 1))  # beyond these, all or nothing
    n = _tril_size(row, col, offset) if lower else row * col - _tril_size(row, col, offset - 1)
    check_alloc((2, n), dtype or _dt.int64)
    if lower:
        i0 = builtins.max(0, -offset)  # rows above have no element; each row from here has at least one
        rows = np.arange(i0, builtins.min(row, i0 + n), dtype=np.int64)
        first = np.zeros_like(rows)
        counts = np.clip(rows + offset + 1, 0, col)
    else:
        rows = np.arange(0, builtins.max(0, builtins.min(row, col - offset, n)), dtype=np.int64)
        first = np.maximum(rows + offset, 0)
        counts = np.clip(col - first, 0, col)
    r = np.repeat(rows, counts)
    starts = np.cumsum(counts) - counts
    c = np.arange(r.size, dtype=np.int64) - np.repeat(starts - first, counts)
    return _from_host(np.stack([r, c]).astype(np.int64), dtype or _dt.int64, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the lower triangle of a row x col matrix (``torch.tril_indices``)."""
    return _tri_indices(row, col, offset, True, _dt.as_dtype(dtype, "tril_indices"), device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the upper triangle of a row x col matrix (``torch.triu_indices``)."""
    return _tri_indices(row, col, offset, False, _dt.as_dtype(dtype, "triu_indices"), device)


@method("cross")
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` (the first size-3 dim when None, as ``torch.cross``)."""
    from .shape import stack
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
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


@method("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (``torch.addr``)."""
    from .linalg import _outer_check, outer
    _outer_check(vec1, vec2, "addr", "vec1")
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


# ---- more pointwise, integer and statistics functions ----------------------------------------------------------
@method("heaviside")
def heaviside(input, values):
    """Step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (``torch.heaviside``).
    RuntimeError unless both have one dtype, as PyTorch. Not differentiable."""
    from .pointwise import where
    v = values if isinstance(values, Tensor) else input.new_tensor(values)
    if v.dtype is not input.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes: {input.dtype} "
                           f"and {v.dtype}")
    return where(input == 0, v, (input > 0).to(input.dtype)).detach()


def _int_pair(op, a, b):
    if a.dtype.is_floating_point or b.dtype.is_floating_point or a.dtype.is_complex or b.dtype.is_complex:
        raise RuntimeError(f"\"{op}_cpu\" not implemented for '{_dt.promote_types(a.dtype, b.dtype)}'")


@method("gcd")
def gcd(input, other):
    """Elementwise greatest common divisor of integer tensors, non-negative (``torch.gcd``), by Euclid's
    algorithm on whole tensors. RuntimeError for floating-point inputs."""
    from .pointwise import where, abs as _abs
    b = other if isinstance(other, Tensor) else input.new_tensor(other)
    _int_pair("gcd", input, b)
    x, y = _abs(input), _abs(b)
    x, y = x + y * 0, y + x * 0  # broadcast both to the result shape
    while bool((y != 0).any()):
        nz = y != 0
        r = where(nz, x.remainder(where(nz, y, 1)), 0)
        x, y = where(nz, y, x), r
    return x


@method("lcm")
def lcm(input, other):
    """Elementwise least common multiple of integer tensors, non-negative (``torch.lcm``); 0 when either is 0."""
    from .pointwise import where, abs as _abs
    b = other if isinstance(other, Tensor) else input.new_tensor(other)
    _int_pair("lcm", input, b)
    g = gcd(input, b)
    return where(g == 0, 0, _abs(input // where(g == 0, 1, g) * b))


for _n in ("gcd", "lcm"):
    method(_n + "_")(lambda self, other, _f=globals()[_n]: self._inplace(_f, other))


@method("ldexp")
def ldexp(input, other):
    """``input * 2 ** other`` (``torch.ldexp``), in the floating type of the result."""
    x = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(_dt.get_default_dtype())
    return x * (2.0 ** other if not isinstance(other, Tensor) else other.to(x.dtype).exp2())


method("ldexp_")(lambda self, other: self._inplace(ldexp, other))


@method("cov")
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance matrix of the variables in the rows of ``input`` (V, N) or of a 1-D input (``torch.cov``),
    with optional integer frequency weights and float observation weights (N,). Differentiable."""
    from .reduce import sum as _sum
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if input.ndim > 2:
        raise ValueError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                         f"{input.ndim} dimensions")
    x = _float(x)
    n = x._shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        wsum = float(n)
        avg = x.mean(1)
    else:
        wsum = _sum(w)
        avg = _sum(x * w, 1) / wsum
    if w is None:
        norm = wsum - correction
    elif correction == 0:
        norm = wsum
    elif aweights is None:
        norm = wsum - correction
    else:
        norm = wsum - correction * _sum(w * aweights.to(x.dtype)) / wsum
    xm = x - avg.unsqueeze(1)
    c = (xm * w if w is not None else xm).matmul(xm.t().conj() if xm.dtype.is_complex else xm.t())
    out = c / norm if not isinstance(norm, float) else (c / norm if norm > 0 else c * float("nan") if norm == 0
                                                         else c / norm)
    return out.squeeze() if input.ndim < 2 else out


@method("corrcoef")
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (``torch.corrcoef``), clipped to [-1, 1]."""
    from .pointwise import sqrt
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = sqrt(c.diagonal())
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


_mode = collections.namedtuple("mode", ["values", "indices"])


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


@method("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along ``dim``) to one (``torch.unique_consecutive``);
    with ``return_inverse`` the run number of each element, with ``return_counts`` the run lengths."""
    from .creation import tensor
    from .shape import cat
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


@method("matrix_power")
def matrix_power(input, n):
    """``input`` (*, m, m) to the integer power ``n`` by repeated squaring; n = 0 gives identity matrices and
    negative n powers of the inverse (``torch.linalg.matrix_power``). RuntimeError for non-square input."""
    from .creation import eye
    if input.ndim < 2 or input._shape[-1] != input._shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input._shape[-2] if input.ndim >= 2 else 1} by {input._shape[-1] if input.ndim else 1} "
                           "matrices")
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return eye(input._shape[-1], dtype=input.dtype, device=input.device).expand(input._shape).clone()
    if n < 0:
        from .lapack import inverse
        input, n = inverse(input), -n
    result, base = None, input
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


@method("fill_diagonal_")
def fill_diagonal_(input, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal of ``input`` in place (``Tensor.fill_diagonal_``); for a tall
    2-D matrix ``wrap`` restarts the diagonal every ``cols + 1`` rows, as NumPy's fill_diagonal. All dims of
    an input with more than two must be equal (RuntimeError otherwise)."""
    if input.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
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


def _scatter_into(input, src, view_of):
    """``input`` with ``view_of(copy)`` replaced by ``src``: a differentiable out-of-place view write."""
    out = input.clone()
    view_of(out).copy_(src)
    return out


@method("select_scatter")
def select_scatter(input, src, dim, index):
    """``input`` with ``input.select(dim, index)`` replaced by ``src`` (``torch.select_scatter``)."""
    return _scatter_into(input, src, lambda t: t.select(dim, index))


@method("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src`` (``torch.slice_scatter``)."""
    d = _strides.wrap_dim(dim, input.ndim)
    sl = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, lambda t: t[sl])


@method("diagonal_scatter")
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src`` (``torch.diagonal_scatter``)."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


@method("index_copy")
def index_copy(input, dim, index, source):
    """``input`` with the slices ``index`` of ``dim`` replaced by those of ``source`` (``torch.index_copy``).
    Differentiable in input (zero where overwritten) and source. RuntimeError for a source of another dtype."""
    if source.dtype is not input.dtype:
        from .movement import _SCALAR_TYPE as w
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{w[input.dtype.name]} and (source) {w[source.dtype.name]}")
    d = _strides.wrap_dim(dim, max(input.ndim, 1))
    sl = (slice(None),) * d + (index,)
    out = input.clone()
    out[sl] = source
    return out


method("index_copy_")(lambda self, dim, index, source: self._inplace(index_copy, dim, index, source))


@method("masked_scatter")
def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` (broadcast to input) is True filled, in order, with the
    leading elements of ``source`` (``torch.masked_scatter``)."""
    m = mask.expand(input._shape) if tuple(mask._shape) != tuple(input._shape) else mask
    k = int(m.sum().item())
    if source.numel() < k:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements as ones in mask")
    out = input.clone()
    out[m] = source.reshape(-1)[:k]
    return out


method("masked_scatter_")(lambda self, mask, source: self._inplace(masked_scatter, mask, source))


@method("renorm")
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled so its ``p``-norm is at most ``maxnorm`` (``torch.renorm``).
    RuntimeError for an input of less than 2 dims, as PyTorch."""
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _strides.wrap_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = input.abs().pow(p).sum(others, keepdim=True).pow(1.0 / p)
    from .pointwise import where
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * scale.to(input.dtype)


method("renorm_")(lambda self, p, dim, maxnorm: self._inplace(renorm, p, dim, maxnorm))


@method("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """``split`` with explicit sizes that must add up to the size of ``dim`` (RuntimeError otherwise)."""
    d = _strides.wrap_dim(dim, input.ndim)
    if builtins.sum(split_sizes) != input._shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input._shape[d]} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return input.split(list(split_sizes), d)


__all__ += ["heaviside", "gcd", "lcm", "ldexp", "cov", "corrcoef", "mode", "nanmedian", "unique_consecutive",
            "matrix_power", "select_scatter", "slice_scatter", "diagonal_scatter", "index_copy", "masked_scatter",
            "renorm", "split_with_sizes"]


# ---- creation helpers, windows, set membership -------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (``torch.broadcast_shapes``); RuntimeError when they
    do not."""
    return Size(_strides.broadcast_shapes(*(tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes)))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-dim tensor holding ``s`` in the default float dtype unless given (``torch.scalar_tensor``)."""
    from .creation import tensor
    return tensor(float(s) if dtype is None else s, dtype=dtype or _dt.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``torch.rsub``)."""
    return other - input * alpha if alpha != 1 else other - input


def _window(name, n, periodic, dtype, device, fn):
    from .creation import arange
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = dtype or _dt.get_default_dtype()
    if n == 1:
        from .creation import ones
        return ones(1, dtype=dt, device=device)
    m = n + 1 if periodic else n
    k = arange(n, dtype=_dt.float64)
    w = fn(k, m)
    return w.to(dt).to(device) if device is not None else w.to(dt)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` with N = window_length (+1 when periodic) (``torch.hann_window``)."""
    w = _window("hann_window", window_length, periodic, dtype, device,
                lambda k, m: 0.5 - 0.5 * (2 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False):
    """``i0(beta * sqrt(1 - (2k / (N - 1) - 1)^2)) / i0(beta)`` with N = window_length (+1 when periodic)
    (``torch.kaiser_window``; Kaiser & Schafer 1980)."""
    from .special import i0

    def fn(k, m):
        r = (k - (m - 1) / 2) / ((m - 1) / 2)
        return i0(beta * (1 - r * r).clamp(min=0).sqrt()) / i0(k.new_tensor(beta))
    w = _window("kaiser_window", window_length, periodic, dtype, device, fn)
    return w.requires_grad_(requires_grad) if requires_grad else w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None,
                   requires_grad=False):
    """``alpha - beta cos(2 pi k / (N - 1))`` (``torch.hamming_window``)."""
    w = _window("hamming_window", window_length, periodic, dtype, device,
                lambda k, m: alpha - beta * (2 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))`` (``torch.blackman_window``)."""
    w = _window("blackman_window", window_length, periodic, dtype, device,
                lambda k, m: 0.42 - 0.5 * (2 * math.pi * k / (m - 1)).cos() + 0.08 * (4 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``1 - |2 k / (N - 1) - 1|`` (``torch.bartlett_window``)."""
    w = _window("bartlett_window", window_length, periodic, dtype, device,
                lambda k, m: 1 - (2 * k / (m - 1) - 1).abs())
    return w.requires_grad_(requires_grad) if requires_grad else w


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Bool tensor of ``elements``' shape: True where the element occurs in ``test_elements``
    (``torch.isin``); either argument may be a scalar."""
    from .creation import tensor
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


def vander(x, N=None, increasing=False):
    """Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1) ... x ** 0`` (reversed when ``increasing``)
    (``torch.vander``)."""
    from .creation import arange
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


def unravel_index(indices, shape):
    """The coordinates of flat ``indices`` in an array of ``shape``, as a tuple of int64 tensors
    (``torch.unravel_index``). RuntimeError for out-of-range indices."""
    from .creation import tensor
    idx = indices if isinstance(indices, Tensor) else tensor(indices)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = _strides.numel(shape)
    if idx.numel() and (bool((idx < -n).any()) or bool((idx >= n).any())):
        raise RuntimeError("index out of bounds for the given shape")
    rem = idx.to(_dt.int64) % n if n else idx.to(_dt.int64)
    out = []
    for size in reversed(shape):
        out.append(rem % size)
        rem = rem // size
    return tuple(reversed(out))


def combinations(input, r=2, with_replacement=False):
    """All length-``r`` combinations of the elements of the 1-D ``input``, as rows of an (M, r) tensor in
    itertools order (``torch.combinations``). Differentiable (it gathers elements)."""
    import itertools
    from .creation import tensor
    from .._storage import check_alloc
    if not isinstance(input, Tensor):
        raise TypeError(f"combinations(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(r, int) or isinstance(r, bool):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    n = input._shape[0]
    # PyTorch builds an n ** r mask before selecting: refuse where it does, before enumerating anything
    if n > 1 and r * math.log2(n) >= 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={[n] * builtins.min(r, 8)}"
                           f"{'...' if r > 8 else ''}")
    check_alloc((n ** r if n > 1 else n,), _dt.bool)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(gen(range(n), r))
    if not rows:
        return input.new_empty((0,) if r else (0,)) if r == 0 else input.new_empty((0, r))
    return input[tensor(rows, dtype=_dt.int64, device=input.device)]


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Cumulative trapezoidal integral of ``y`` along ``dim`` (one element shorter than ``y`` there), with
    sample points ``x`` or spacing ``dx`` (default 1) (``torch.cumulative_trapezoid``)."""
    d = _strides.wrap_dim(dim, y.ndim)
    n = y._shape[d]
    avg = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2 if n > 1 else y.narrow(d, 0, 0)
    if x is not None:
        xd = x.narrow(-1 if x.ndim == 1 else d, 1, n - 1) - x.narrow(-1 if x.ndim == 1 else d, 0, n - 1)
        if x.ndim == 1:
            xd = xd.reshape((n - 1,) + (1,) * (y.ndim - 1 - d))
        avg = avg * xd
    elif dx is not None:
        avg = avg * dx
    return avg.cumsum(d)


@method("narrow_copy")
def narrow_copy(input, dim, start, length):
    """A contiguous copy of ``input.narrow(dim, start, length)`` (``torch.narrow_copy``)."""
    return input.narrow(dim, start, length).clone()


@method("put")
def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (or with ``accumulate`` added) at the flat ``index``
    positions of row-major ``input`` (``torch.put``). index: int64, as many elements as source."""
    from .indexing import _long_index
    _long_index("put_", index)
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


@method("unsafe_chunk")
def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (tinytorch's views are always safe to modify)."""
    return input.chunk(chunks, dim)


@method("unsafe_split")
def unsafe_split(input, split_size, dim=0):
    """``split`` (tinytorch's views are always safe to modify)."""
    return input.split(split_size, dim)


@method("unsafe_split_with_sizes")
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


__all__ += ["kaiser_window", "broadcast_shapes", "scalar_tensor", "rsub", "hann_window", "hamming_window", "blackman_window",
            "bartlett_window", "isin", "vander", "unravel_index", "combinations", "cumulative_trapezoid",
            "narrow_copy", "put", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"]


# ---- Tensor-method spellings of functions that exist elsewhere ------------------------------------------------
@method("hardshrink")
def _tensor_hardshrink(self, lambd=0.5):
    from ..nn.functional import hardshrink
    return hardshrink(self, lambd)


@method("prelu")
def _tensor_prelu(self, weight):
    from ..nn.functional import prelu
    return prelu(self, weight)


@method("cfloat")
def _cfloat(self, memory_format=None):
    """``self.to(torch.complex64)``."""
    return self.to(_dt.complex64)


@method("cdouble")
def _cdouble(self, memory_format=None):
    """``self.to(torch.complex128)``."""
    return self.to(_dt.complex128)


@method("new_empty_strided")
def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor of ``size`` and ``stride`` with self's dtype and device unless given."""
    from .creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


histogram_result = collections.namedtuple("histogram", ["hist", "bin_edges"])


@method("histogram")
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Histogram of ``input`` (``torch.histogram``): ``bins`` an int (equal-width bins over ``range``, the data's
    min and max by default) or a 1-D tensor of increasing edges; optional per-element ``weight``; ``density``
    normalizes to a probability density. Returns (hist, bin_edges), both in input's floating dtype. Counting
    is NumPy's ``histogram`` on the host (data-dependent, no gradient)."""
    import numpy as np
    from .creation import tensor
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the same dtype, but got "
                           f"input {input.dtype} and bins float")
    x = input.detach().cpu().numpy().reshape(-1)
    w = None if weight is None else weight.detach().cpu().numpy().reshape(-1)
    b = bins.detach().cpu().numpy() if isinstance(bins, Tensor) else int(bins)
    rng = None
    if range is not None:
        rng = (float(range[0]), float(range[1]))
    elif not isinstance(b, np.ndarray):
        rng = (float(x.min()), float(x.max())) if x.size else (0.0, 1.0)
    hist, edges = np.histogram(x, b, range=None if isinstance(b, np.ndarray) else rng, weights=w, density=density)
    return histogram_result(tensor(hist, dtype=input.dtype, device=input.device),
                            tensor(edges, dtype=input.dtype, device=input.device))


__all__ += ["histogram"]


@method("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduces the slices of ``source`` along ``dim`` into the slices of ``input`` named by the 1-D ``index``
    with 'prod', 'mean', 'amax' or 'amin', counting input's own slice unless ``include_self`` is False
    (``torch.index_reduce``): ``scatter_reduce`` with the index spread along ``dim``. Same shape as input."""
    d = _strides.wrap_dim(dim, builtins.max(source.ndim, 1))
    if index.ndim != 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, got {index.ndim}-D")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    shape = [1] * source.ndim
    shape[d] = index.numel()
    return input.scatter_reduce(d, index.reshape(shape).expand(source._shape), source, reduce,
                                include_self=include_self)


method("index_reduce_")(lambda self, dim, index, source, reduce, *, include_self=True: self._inplace(
    lambda x: index_reduce(x, dim, index, source, reduce, include_self=include_self)))


def _python_map(self, op, fn, *others):
    """Writes fn(self[i], other[i], ...) into self elementwise, in Python (``apply_`` / ``map_`` / ``map2_``)."""
    import numpy as np
    from .creation import tensor
    if self.device.type != "cpu":
        raise RuntimeError(f"{op} is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    args = [self.detach().numpy()] + [np.broadcast_to(o.detach().numpy(), self._shape) for o in others]
    out = np.vectorize(fn, otypes=[self.dtype.np])(*args) if self.numel() else args[0]
    self.copy_(tensor(out, dtype=self.dtype))
    return self


method("apply_")(lambda self, callable: _python_map(self, "apply_", callable))
method("map_")(lambda self, tensor, callable: _python_map(self, "map_", callable, tensor))
method("map2_")(lambda self, x, y, callable: _python_map(self, "map2_", callable, x, y))

__all__ += ["index_reduce"]
