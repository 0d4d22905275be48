"""Shape ops: cat / stack and their h/v/d/column/row spellings, atleast_Nd, flip, rot90, roll, repeat, tile,
repeat_interleave, tril, triu, pad, meshgrid, cartesian_prod, combinations, block_diag; ravel, the
hsplit / vsplit / dsplit and split_with_sizes views, narrow_copy, broadcast_shapes, unravel_index."""
import builtins
import math

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from .._tensor import Size, Tensor
from ._util import check_arg, method


def _cat_meta(*ts, dim):
    ref = next((t for t in ts if not (t.ndim == 1 and t._shape[0] == 0)), ts[0])
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = _dt.promote_types(dt, t.dtype)
    total = 0
    for i, t in enumerate(ts):
        if t.ndim == 1 and t._shape[0] == 0 and ref.ndim != 1:
            continue  # legacy: empty 1-D tensors are skipped
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}")
        for d in range(t.ndim):
            if d != dim and t._shape[d] != ref._shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size "
                                   f"{ref._shape[d]} but got size {t._shape[d]} for tensor number {i} in the list.")
        total += t._shape[dim]
    shape = ref._shape[:dim] + (total,) + ref._shape[dim + 1:]
    return [(shape, dt)], [dt] * len(ts)


def _cat_bw(c, g):
    d = c.kw["dim"]
    out, start = [], 0
    for shp in c.shapes:
        if len(shp) == 1 and shp[0] == 0 and g.ndim != 1:
            out.append(None)
            continue
        out.append(g.narrow(d, start, shp[d]))
        start += shp[d]
    return tuple(out)


_cat_op = defop("cat", _cat_meta, _cat_bw, save_inputs=False, complex_grad=True)


def cat(tensors, dim=0, *, out=None):
    """Concatenate tensors along existing dim ``dim`` (dtypes promote). RuntimeError on size mismatch."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    legacy = [t.ndim == 1 and t._shape[0] == 0 for t in tensors]  # torch skips 1-D empty tensors in cat
    ref = next((t for t, e in zip(tensors, legacy) if not e), tensors[0])
    d = _strides.wrap_dim(dim, ref.ndim)
    if any(legacy) and not all(legacy):
        dt = _dt.result_type_of(list(tensors), [])  # they still take part in type promotion
        r = dispatch(_cat_op, tuple(t for t, e in zip(tensors, legacy) if not e), {"dim": d})
        r = r if r.dtype is dt else r.to(dt)
    else:
        r = dispatch(_cat_op, tensors, {"dim": d})
    return r


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    """Stack same-shaped tensors along a new dim ``dim``."""
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t._shape != tensors[0]._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0]._shape)} at "
                               f"entry 0 and {list(t._shape)} at entry {i}")
    d = _strides.wrap_dim(dim, tensors[0].ndim + 1)
    return cat([t.unsqueeze(d) for t in tensors], d, out=out)


def _non_empty(tensors, name):
    if isinstance(tensors, (list, tuple)) and not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors):
    """``tensors`` concatenated along dim 1 (dim 0 when the first is 1-D) (``torch.hstack``)."""
    _non_empty(tensors, "hstack")
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """``tensors`` (1-D ones as rows) concatenated along dim 0 (``torch.vstack``)."""
    _non_empty(tensors, "vstack")
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def dstack(tensors):
    """``tensors`` (at least 3-D) concatenated along dim 2 (``torch.dstack``)."""
    _non_empty(tensors, "dstack")
    return cat([t.reshape(1, -1, 1) if t.ndim == 1 else (t.unsqueeze(-1) if t.ndim == 2 else t) for t in tensors], 2)


def column_stack(tensors):
    """``tensors`` (0-/1-D ones as columns) concatenated along dim 1 (``torch.column_stack``)."""
    _non_empty(tensors, "column_stack")
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


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


def _flip_meta(a, dims):
    return [(a._shape, a.dtype)], [None]


_flip_op = defop("flip", _flip_meta, lambda c, g: flip(g, c.kw["dims"]), save_inputs=False,
                complex_grad=True)


def flip(input, dims):
    """Reverse the order of elements along ``dims`` (a tuple of ints) (``torch.flip``; a copy, as tinytorch
    has no negative strides). TypeError for a bare int, as torch."""
    if isinstance(dims, int):
        raise TypeError("flip(): argument 'dims' (position 2) must be tuple of ints, not int")
    dims = _strides.wrap_dims(tuple(dims), input.ndim, "flip")
    if input.ndim == 0:
        return input.clone()
    return dispatch(_flip_op, (input,), {"dims": dims})


@method("flip")
def _flip_method(self, *dims, **kw):
    """``Tensor.flip(*dims)``: dims as varargs or one sequence (``dims=`` keyword too)."""
    if "dims" in kw:
        dims = kw.pop("dims")
    elif len(dims) == 1 and not isinstance(dims[0], int):
        dims = dims[0]
    if kw:
        raise TypeError(f"flip() got an unexpected keyword argument '{next(iter(kw))}'")
    return flip(self, (dims,) if isinstance(dims, int) else dims)


def fliplr(input):
    """``input`` flipped left-right (dim 1), a copy (``torch.fliplr``); RuntimeError below 2 dims."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """``input`` flipped up-down (dim 0), a copy (``torch.flipud``); RuntimeError for 0-d input."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


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


@method("roll")
def roll(input, shifts, dims=None):
    """Roll elements along ``dims`` by ``shifts`` (flattened first when dims is None).

    RuntimeError for a shift below -2**62: PyTorch's SymInt reserves those int64 values for symbolic sizes and
    refuses them as concrete shifts. TypeError for a list entry outside int64 (PyTorch's int-list unpacking)."""
    for name, seq in (("shifts", shifts), ("dims", dims)):
        if isinstance(seq, (list, tuple)):
            for i, v in enumerate(seq):
                if isinstance(v, int) and not -(1 << 63) <= v < (1 << 63):
                    raise TypeError(f"roll(): argument '{name}' failed to unpack the object at pos {i + 1} with "
                                    f"error \"Overflow when unpacking long long\"")
    for s in ((shifts,) if isinstance(shifts, int) else tuple(shifts)):
        if isinstance(s, int) and s < -(1 << 62):
            raise RuntimeError(f"roll: SymIntArrayRef expected to contain only concrete integers (got shift {s})")
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input._shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    out = input
    for s, d in zip(shifts, dims):
        d = _strides.wrap_dim(d, input.ndim)
        n = input._shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out.clone() if out is input else out  # always a new tensor, as PyTorch (no alias of input)


@method("repeat")
def repeat(input, *sizes):
    """Tile ``input`` ``sizes`` times along each dim (leading new dims allowed), as ``Tensor.repeat``."""
    from .movement import _shape_arg
    sizes = _shape_arg(sizes, "repeat", "repeats")
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(sizes) - input.ndim) + input._shape
    if builtins.any(r < 0 for r in sizes):
        bad = [r * s for r, s in zip(sizes, shape)]
        neg = next(v for v in bad if v < 0) if builtins.any(v < 0 for v in bad) else next(r for r in sizes if r < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: {bad}")
    x = input.reshape(shape)
    inter, exp, final = [], [], []
    for r, s in zip(sizes, shape):
        inter += [1, s]
        exp += [r, s]
        final.append(r * s)
    return x.reshape(inter).expand(exp).reshape(final)


@method("tile")
def tile(input, dims):
    """``input.repeat(dims)`` with ``dims`` padded on the left with ones to input's ndim (``torch.tile``)."""
    from .movement import _shape_arg
    dims = _shape_arg((dims,) if isinstance(dims, int) else tuple(dims), "tile", "dims")
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


@method("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element ``repeats`` times (an int or a 1-D tensor of counts) along ``dim``."""
    from .creation import _from_host
    from .indexing import index_select
    check_arg("repeat_interleave", "output_size", None, output_size, "int?")
    if dim is None:
        input = input.reshape(-1)
        dim = 0
    d = _strides.wrap_dim(dim, input.ndim)
    n = input._shape[d]
    reps = repeats.detach().numpy(force=True) if isinstance(repeats, Tensor) else repeats
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype.is_floating_point or repeats.dtype.is_complex or repeats.dtype is _dt.bool:
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{repeats.type()[6:-6]}'")
        if repeats.ndim == 1 and repeats._shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats._shape[0]} and input.size(0) = {n}")
        if (reps < 0).any():
            raise RuntimeError("repeats can not be negative")
    elif not isinstance(repeats, int) or isinstance(repeats, bool):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not {type(repeats).__name__}")
    elif repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None:
        total = int(reps.sum()) if isinstance(repeats, Tensor) and repeats.ndim == 1 else n * int(reps)
        if output_size != total:
            raise RuntimeError("allocated size does not match required size" if isinstance(repeats, Tensor) else
                               f"repeat_interleave: Invalid output_size, expected {total} but got {output_size}")
    # the output length in Python ints: NumPy's own product wraps past int64 and then crashes the interpreter
    total = sum(int(r) for r in np.ravel(reps).tolist()) if isinstance(repeats, Tensor) and repeats.ndim == 1 \
        else n * int(reps)
    if total >= 1 << 63:
        raise RuntimeError("numel: integer multiplication overflow")
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    return index_select(input, d, _from_host(idx, _dt.int64, input.device))


def _tri_meta(a, diagonal):
    if a.ndim < 2:
        raise RuntimeError("tril/triu: input tensor must have at least 2 dimensions")
    return [(a._shape, a.dtype)], [None]


_tril_op = defop("tril", _tri_meta, lambda c, g: tril(g, c.kw["diagonal"]), save_inputs=False, complex_grad=True)
_triu_op = defop("triu", _tri_meta, lambda c, g: triu(g, c.kw["diagonal"]), save_inputs=False, complex_grad=True)


@method("tril")
def tril(input, diagonal=0):
    """Lower triangle of the last two dims (others zeroed), ``torch.tril``."""
    check_arg("tril", "diagonal", 2, diagonal, "int")
    return dispatch(_tril_op, (input,), {"diagonal": diagonal})


@method("triu")
def triu(input, diagonal=0):
    """Upper triangle of the last two dims (others zeroed), ``torch.triu``."""
    check_arg("triu", "diagonal", 2, diagonal, "int")
    return dispatch(_triu_op, (input,), {"diagonal": diagonal})


method("tril_")(lambda self, diagonal=0: self._inplace(tril, diagonal))
method("triu_")(lambda self, diagonal=0: self._inplace(triu, diagonal))


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad)//2`` dims: ``pad = (left_last, right_last, left_prev, right_prev, ...)``.

    mode 'constant' (negative pads crop), 'reflect', 'replicate' or 'circular'. Mirrors
    ``torch.nn.functional.pad``; written in cat / narrow / index_select so it is differentiable on
    every backend.
    """
    from .creation import _from_host, full
    from .indexing import index_select
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
        if mode != "circular":
            # ATen's check_valid_input: only a batch dim (of a (k + 2)-d input) may be empty
            first = 1 if input.ndim == k + 2 else 0
            if builtins.any(n == 0 for n in input._shape[first:]):
                raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                                   f"other non-zero dimensions for input, but got: {list(input._shape)}")
        for i in range(k):
            n, lo, hi = input._shape[input.ndim - 1 - i], pad[2 * i], pad[2 * i + 1]
            if mode == "circular" and (lo > n or hi > n):
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if mode == "reflect" and (lo >= n or hi >= n):
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {input.ndim - 1 - i} of "
                                   f"input {list(input._shape)}")
    def wrapped(v):  # ATen sums the sizes in int64, which wraps
        return (v + 2 ** 63) % 2 ** 64 - 2 ** 63
    if mode == "replicate" and k >= 2:
        sizes = [input._shape[input.ndim - k + j] for j in range(k)]  # (D,) H, W
        outs = [wrapped(n + pad[2 * (k - 1 - j)] + pad[2 * (k - 1 - j) + 1]) for j, n in enumerate(sizes)]
        if builtins.all(o < 1 for o in outs):
            # replication_pad2d / 3d check the dims together, with their own message
            if k == 2:
                raise RuntimeError(f"input (H: {sizes[0]}, W: {sizes[1]} ) is too small. Calculated output H: "
                                   f"{outs[0]} W: {outs[1]}")
            raise RuntimeError(f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. Calculated output "
                               f"D: {outs[0]} H: {outs[1]} W: {outs[2]}")
        if builtins.any(o < 0 for o in outs):
            # (that check passes when one dim is still positive: the allocation refuses the negative size)
            shape = list(input._shape[:input.ndim - k]) + outs
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: {shape}")
    out = input
    for i in range(k):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = out._shape[d]
        if mode == "constant":
            if lo < 0:
                out, lo, n = out.narrow(d, -lo, n + lo), 0, n + lo
            if hi < 0:
                out, hi = out.narrow(d, 0, n + hi), 0
            parts = []
            for k in (lo, hi):
                shp = list(out._shape)
                shp[d] = k
                parts.append(full(tuple(shp), 0 if value is None else value, dtype=out.dtype, device=out.device))
            if lo or hi:
                out = cat([parts[0], out, parts[1]], d)
            continue
        # a negative pad crops: reflect and replicate index the padded extension of the input at positions
        # -lo .. n + hi - 1 (ATen's mapping); circular crops first and wraps within what is left (ATen's too)
        if (mode == "reflect" or mode == "replicate" and k == 1) and wrapped(n + lo + hi) <= 0:
            label = "DHW"[d - input.ndim] if d >= input.ndim - 3 else d
            raise RuntimeError(f"input ({label}: {n}) is too small. Calculated output {label}: {wrapped(n + lo + hi)}")
        v = np.arange(-lo, n + hi)
        if mode == "reflect":
            idx = np.where(v < 0, -v, np.where(v > n - 1, 2 * (n - 1) - v, v))
        elif mode == "replicate":
            idx = np.clip(v, 0, n - 1)
        elif mode == "circular":
            if n + lo + hi < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            start, m = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
            idx = np.arange(-max(lo, 0), m + max(hi, 0)) % m + start if m > 0 else np.zeros(0, np.int64)
        out = index_select(out, d, _from_host(idx.astype(np.int64), _dt.int64, input.device))
    return out


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-D tensors; ``indexing`` 'ij' (matrix) or 'xy' (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    shape = tuple(t.numel() for t in tensors)
    if indexing == "xy" and len(tensors) >= 2:
        shape = (shape[1], shape[0]) + shape[2:]
    out = []
    for i, t in enumerate(tensors):
        j = i
        if indexing == "xy" and len(tensors) >= 2 and i < 2:
            j = 1 - i
        v = [1] * len(tensors)
        v[j] = -1
        out.append(t.reshape(v).expand(shape))
    return tuple(out)


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


# ---- views and splits: ravel, hsplit / vsplit / dsplit, split_with_sizes, unsafe_*, narrow_copy ---------------
@method("ravel")
def ravel(input):
    """The elements as a 1-D tensor (a view when possible) (``torch.ravel``)."""
    return input.reshape(-1)


def _split_at(input, indices_or_sections, dim, name, min_ndim):
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, int):
        if indices_or_sections == 0 or input._shape[dim] % indices_or_sections:
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


@method("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    """``split`` with explicit sizes that must add up to the size of ``dim`` (RuntimeError otherwise)."""
    d = _strides.wrap_dim(dim, input.ndim)
    if builtins.sum(split_sizes) != input._shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {input._shape[d]} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={list(split_sizes)}")
    return input.split(list(split_sizes), d)


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


@method("narrow_copy")
def narrow_copy(input, dim, start, length):
    """A contiguous copy of ``input.narrow(dim, start, length)`` (``torch.narrow_copy``). Its checks are
    PyTorch's copy kernel's, not narrow's: RuntimeError for a dim past the last one (IndexError for one before
    the first) and one "exceeds dimension size" RuntimeError for a negative length or a slice past the end."""
    if input.ndim and isinstance(dim, int) and not isinstance(dim, bool) and dim >= input.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    if input.ndim and isinstance(length, int) and isinstance(start, int) and length < 0:
        d = _strides.wrap_dim(dim, input.ndim)
        size = input._shape[d]
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        raise RuntimeError(f"start ({start + size if start < 0 else start}) + length ({length}) exceeds "
                           f"dimension size ({size}).")
    return input.narrow(dim, start, length).clone()


# ---- shapes and flat indices ------------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (``torch.broadcast_shapes``); RuntimeError when they
    do not."""
    return Size(_strides.broadcast_shapes(*(tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in shapes)))


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
