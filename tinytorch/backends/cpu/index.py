"""Copies, indexing and shape kernels of the ``cpu`` backend: gather / scatter, advanced indexing (``index``,
``index_put``), ``index_select`` / ``index_add``, ``cat``, ``flip``, ``tril`` / ``triu``."""
import numpy as np

from .registry import KERNELS


@KERNELS.register("gather")
def _gather(a, index, dim):
    if index.shape != a.shape:  # torch.gather allows index smaller than input in dims != dim
        a = a[tuple(slice(0, s) if d != dim else slice(None) for d, s in enumerate(index.shape))]
    return np.take_along_axis(a, index, dim)


@KERNELS.register("scatter")
def _scatter(a, index, src, dim, reduce=None):
    out = a.copy()
    if np.ndim(src) == 0:
        src = np.broadcast_to(src, index.shape)
    else:
        src = src[tuple(slice(0, s) for s in index.shape)]
    if reduce is None and index.shape == a.shape:
        np.put_along_axis(out, index, src, dim)
        return out
    if reduce == "add" and out.dtype.kind == "f" and index.size:
        # bincount over flat offsets is several times faster than np.add.at; it sums in float64
        offs = index * out.strides[dim] // out.itemsize
        for d, n in enumerate(index.shape):
            if d != dim:
                offs = offs + (np.arange(n) * (out.strides[d] // out.itemsize)).reshape((-1,) + (1,) * (index.ndim - d - 1))
        flat = out.reshape(-1)
        flat += np.bincount(offs.reshape(-1), np.asarray(src, np.float64).reshape(-1), out.size).astype(out.dtype)
        return out
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    idx = tuple(idx)
    if reduce is None:
        out[idx] = src
    elif reduce == "add":
        np.add.at(out, idx, src)
    else:
        np.multiply.at(out, idx, src)
    return out


@KERNELS.register("scatter_reduce")
def _scatter_reduce(a, index, src, dim, reduce, include_self):
    out = a.copy()
    idx = list(np.indices(index.shape, sparse=True))
    idx[dim] = index
    idx = tuple(idx)
    ufunc = {"amax": np.maximum, "amin": np.minimum, "prod": np.multiply}[reduce]
    if not include_self:  # start the touched positions from the reduction's identity
        if reduce == "prod":
            ident = 1
        elif out.dtype.kind == "f":
            ident = -np.inf if reduce == "amax" else np.inf
        elif out.dtype.kind == "b":
            ident = reduce == "amin"
        else:
            info = np.iinfo(out.dtype)
            ident = info.min if reduce == "amax" else info.max
        out[idx] = ident
    ufunc.at(out, idx, src)
    return out


@KERNELS.register("index_add")
def _index_add(a, index, src, dim, alpha=1):
    out = a.copy()
    moved = np.moveaxis(out, dim, 0)
    s = np.moveaxis(src * alpha if alpha != 1 else src, dim, 0)
    if index.size > 8 and out.dtype.kind != "b":
        # sort the rows by destination and sum each run with one reduceat: 5x faster than np.add.at on an
        # embedding gradient (2048 rows into 65)
        order = np.argsort(index, kind="stable")
        si = index[order]
        starts = np.flatnonzero(np.concatenate(([True], si[1:] != si[:-1])))
        moved[si[starts]] += np.add.reduceat(s[order], starts, axis=0)
    else:
        np.add.at(moved, index, s)
    return out


@KERNELS.register("index")
def _index(a, *indices, spec):
    return np.array(a[_build_index(indices, spec)], copy=True, order="C")


def _build_index(indices, spec):
    # spec: tuple of ('t', k) tensor placeholders or python slices / None / Ellipsis / ints
    return tuple(indices[s[1]] if isinstance(s, tuple) else s for s in spec)


@KERNELS.register("index_put")
def _index_put(a, values, *indices, spec, accumulate=False):
    out = a.copy()
    idx = _build_index(indices, spec)
    if accumulate:
        np.add.at(out, idx, values)
    else:
        out[idx] = values
    return out


def _to_dtype(a, dtype):
    t = np.dtype(dtype.np)
    if a.dtype.kind in "fV" and (t.kind not in "fcV" or t.itemsize < a.dtype.itemsize):
        # a value out of the target's range (1e38 to float16: inf) or a NaN to an integer is a result in
        # PyTorch, not a warning
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(t)
    return a.astype(t)


for _name, _kernel in {
    "clone": lambda a: a.copy(), "to_dtype": _to_dtype,
    "flip": lambda a, dims: np.flip(a, dims).copy(),
    "cat": lambda *ts, dim: np.concatenate(ts, axis=dim),
    "index_select": lambda a, index, dim: np.take(a, index, axis=dim),
    "tril": lambda a, diagonal: np.tril(a, diagonal), "triu": lambda a, diagonal: np.triu(a, diagonal),
}.items():
    KERNELS.add(_name, _kernel)
