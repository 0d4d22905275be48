"""``torch.sparse``: sparse COO and CSR tensors (``tinytorch/sparse/_tensor.py``), their ops
(``tinytorch/sparse/_ops.py``, reached through the dispatcher for every op given a sparse argument), the
constructors ``sparse_coo_tensor`` / ``sparse_csr_tensor``, the Tensor methods of sparse tensors, and this
namespace's ``mm``, ``addmm``, ``sum``, ``softmax``, ``log_softmax``."""
from .. import _dispatch
from .. import _dtype as _dt
from .. import _layout
from .._ops._util import method
from .._tensor import Tensor
from ..device import as_device
from . import _ops
from ._ops import coalesce as _coalesce, to_dense as _to_dense
from ._tensor import _layout_name, coo, csr, is_sparse

_dispatch.sparse_call = _ops.sparse_call

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax"]


def _tt():
    import tinytorch
    return tinytorch


def _as_tensor(x, dtype=None):
    return x if isinstance(x, Tensor) else _tt().tensor(x, dtype=dtype)


def _finish(out, requires_grad):
    if requires_grad:
        if not (out.dtype.is_floating_point or out.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out.requires_grad_(True)
    return out


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor (``torch.sparse_coo_tensor``): ``indices`` (sparse_dim, nnz), any integer type
    (made int64), ``values`` (nnz, *dense_shape); ``size`` defaults to the smallest that holds the indices.
    Duplicates are kept until ``coalesce``. RuntimeError for malformed indices, an nnz mismatch, a size of the
    wrong rank, and (``check_invariants=True``) an index out of range; a gradient flowing into the result
    reaches ``values`` (sparse over ``indices``)."""
    indices = _as_tensor(indices)
    values = _as_tensor(values)
    if size is not None and indices.ndim >= 1 and values.ndim >= 1 and \
            len(size) != indices._shape[0] + values.ndim - 1:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {indices._shape[0]}, dense_dim = {values.ndim - 1}")
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices._shape)}")
    dev = as_device(device) if device is not None else values.device
    indices = indices.detach().to(dev).to(_dt.int64)
    if dtype is not None:
        values = values.to(_dt.as_dtype(dtype, "sparse_coo_tensor"))
    values = values.to(dev)
    k, nnz = indices._shape
    if values.ndim == 0 or values._shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from "
                           f"values: {values._shape[0] if values.ndim else 1}")
    dense = tuple(values._shape[1:])
    if size is None:
        sp = (indices.amax(1) + 1).tolist() if nnz else [0] * k
        size = tuple(sp) + dense
    else:
        size = tuple(int(s) for s in size)
        if check_invariants and nnz:
            lo, hi = indices.amin(1).tolist(), indices.amax(1).tolist()
            for d in range(k):
                if lo[d] < 0:
                    raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
                if hi[d] >= size[d]:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but "
                                       f"found index {hi[d]}")
    out = _ops._apply("SparseCooTensorWithDimsAndTensorsBackward0", [values], lambda v: v.view_as(v),
                      lambda r: coo(indices, r, size, bool(is_coalesced) or nnz == 0))
    return _finish(out, requires_grad)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """A 2-D sparse CSR tensor (``torch.sparse_csr_tensor``): ``crow_indices`` (rows + 1,), ``col_indices`` and
    ``values`` (nnz,); ``size`` defaults to (rows, largest column + 1). RuntimeError when the parts disagree."""
    crow, col, values = _as_tensor(crow_indices), _as_tensor(col_indices), _as_tensor(values)
    dev = as_device(device) if device is not None else values.device
    if dtype is not None:
        values = values.to(_dt.as_dtype(dtype, "sparse_csr_tensor"))
    crow, col, values = crow.detach().to(dev).to(_dt.int64), col.detach().to(dev).to(_dt.int64), values.to(dev)
    if crow.ndim != 1 or col.ndim != 1 or values.ndim != 1:
        raise RuntimeError("tinytorch: sparse_csr_tensor takes 1-D crow_indices, col_indices and values (no batch "
                           "or dense dims)")
    if col._shape[0] != values._shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, but got "
                           f"{col._shape[0]} and {values._shape[0]}")
    rows = crow._shape[0] - 1
    if size is None:
        size = (rows, int(col.max()) + 1 if col._shape[0] else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2 or size[0] != rows:
        raise RuntimeError(f"tinytorch: sparse_csr_tensor: size {list(size)} does not fit crow_indices of "
                           f"{crow._shape[0]} elements")
    out = _ops._apply("SparseCompressedTensorBackward0", [values], lambda v: v.view_as(v),
                      lambda r: csr(crow, col, r, size))
    return _finish(out, requires_grad)


# ---- Tensor methods (one definition each, for dense and sparse tensors) ----------------------------------------

def _want(t, layout, name):
    if t.layout is not layout:
        what = "sparse coordinate" if layout is _layout.sparse_coo else "sparse row compressed"
        raise RuntimeError(f"{name} expected {what} tensor layout but got {_layout_name(t)}")


@method("to_dense")
def to_dense(self, dtype=None, *, masked_grad=None):
    """The dense tensor ``self`` stands for (``self`` when already dense); differentiable."""
    if not is_sparse(self):
        return self if dtype is None else self.to(dtype)
    return _to_dense(self, dtype)


@method("to_sparse")
def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """``self`` as a sparse tensor: COO with ``sparse_dim`` sparse dims (default all), or ``layout``."""
    if layout is not None and layout is not _layout.sparse_coo:
        return _ops.to_layout(self, layout)
    if is_sparse(self):
        if sparse_dim is not None and sparse_dim != _ops.sparse_dim(self):
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self."
                               "sparse_dim() is not supported")
        return _ops.to_layout(self, _layout.sparse_coo)
    return _ops.dense_to_coo(self, self.ndim if sparse_dim is None else sparse_dim)


@method("to_sparse_coo")
def to_sparse_coo(self):
    """``self`` as a COO tensor (``to_sparse()``)."""
    return _ops.to_layout(self, _layout.sparse_coo)


@method("to_sparse_csr")
def to_sparse_csr(self, dense_dim=None):
    """``self`` (2-D) as a CSR tensor."""
    return _ops.to_layout(self, _layout.sparse_csr)


@method("coalesce")
def coalesce(self):
    """The COO tensor with duplicates summed and indices sorted (``self`` when already coalesced)."""
    return _coalesce(self)


@method("is_coalesced")
def is_coalesced(self):
    """Whether COO ``self`` is known to have sorted, unique indices."""
    _want(self, _layout.sparse_coo, "is_coalesced")
    return self._coalesced


def _check_coalesced(self, what):
    if not self._coalesced:
        raise RuntimeError(f"Cannot get {what} on an uncoalesced tensor, please call .coalesce() first")


@method("indices")
def indices(self):
    """The (sparse_dim, nnz) int64 indices of coalesced COO ``self``."""
    _want(self, _layout.sparse_coo, "indices")
    _check_coalesced(self, "indices")
    return self._sp_indices


@method("values")
def values(self):
    """The stored values of coalesced COO or CSR ``self``; differentiable (the gradient is sparse)."""
    if not is_sparse(self):
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    if self._layout is _layout.sparse_coo:
        _check_coalesced(self, "values")
    return _ops._apply("ValuesBackward0", [self], lambda v: v.view_as(v), lambda r: r)


def _backend_error(self, name):
    from ._tensor import dispatch_key
    key = dispatch_key(self) if is_sparse(self) else self.device.type.upper()
    return _ops._not_supported(name, key)


@method("_indices")
def _indices(self):
    """The indices of COO ``self`` as stored (coalesced or not)."""
    if not is_sparse(self) or self._layout is not _layout.sparse_coo:
        raise _backend_error(self, "_indices")
    return self._sp_indices


@method("_values")
def _values(self):
    """The values of COO ``self`` as stored (not differentiable)."""
    if not is_sparse(self) or self._layout is not _layout.sparse_coo:
        raise _backend_error(self, "_values")
    return self._sp_values


@method("crow_indices")
def crow_indices(self):
    """The compressed row indices (rows + 1,) of CSR ``self``."""
    _want(self, _layout.sparse_csr, "crow_indices")
    return self._crow


@method("col_indices")
def col_indices(self):
    """The column indices (nnz,) of CSR ``self``."""
    _want(self, _layout.sparse_csr, "col_indices")
    return self._col


@method("_nnz")
def _nnz(self):
    """The number of stored values of sparse ``self``."""
    if not is_sparse(self):
        raise _backend_error(self, "_nnz")
    return self._sp_values._shape[0]


@method("sparse_dim")
def sparse_dim(self):
    """Dims addressed by indices (0 for a dense tensor)."""
    return _ops.sparse_dim(self) if is_sparse(self) else 0


@method("dense_dim")
def dense_dim(self):
    """Dims of each stored value (all of them for a dense tensor)."""
    return self.ndim - sparse_dim(self)


# ---- torch.sparse and the top-level products ---------------------------------------------------------------------

def mm(mat1, mat2, reduce=None):
    """``torch.sparse.mm``: ``mat1 @ mat2`` where ``mat1`` is sparse (COO or CSR) and ``mat2`` dense (a dense
    result) or sparse (a sparse COO result). ``mat1``'s gradient is sparse over its indices (PyTorch's
    SparseAddmmBackward0). Dense operands give the dense product."""
    if reduce is not None:
        raise RuntimeError("tinytorch: torch.sparse.mm's reduce argument is not supported")
    if not is_sparse(mat1) and not is_sparse(mat2):
        return _tt().mm(mat1, mat2)
    return _ops.matmul(mat1, mat2, dense_grad=False)


def spmm(input, mat2):
    """``torch.spmm``: ``torch.mm`` of a sparse (or dense) matrix and a dense one."""
    return _tt().mm(input, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``torch.sparse.addmm``: ``beta * mat + alpha * (mat1 @ mat2)`` with ``mat1`` sparse, ``mat`` and ``mat2``
    dense; differentiable in all three (``mat1``'s gradient sparse, as ``torch.sparse.mm``)."""
    prod = mm(mat1, mat2)
    prod = prod * alpha if alpha != 1 else prod
    return mat * beta + prod if beta != 1 else mat + prod


def sum(input, dim=None, dtype=None):
    """``torch.sparse.sum``: the sum of COO ``input`` over ``dim`` (int or sequence; all dims when None). A
    dense tensor when every sparse dim is summed, else a coalesced COO tensor; the gradient is sparse over
    ``input``'s indices. RuntimeError for a tensor that is not COO (PyTorch's message: it coalesces first)."""
    _want(input, _layout.sparse_coo, "coalesce")
    if dtype is not None:
        dtype = _dt.as_dtype(dtype, "sum")
    if dim is None:
        return _ops.sparse_sum(input, None, dtype)
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -input.ndim <= d < input.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                             f"{input.ndim - 1}], but got {d})")
    return _ops.sparse_sum(input, dims, dtype)


def _softmax(input, dim, dtype, log):
    t = _tt()
    _want(input, _layout.sparse_coo, "softmax")
    x = _coalesce(input if dtype is None else input.to(dtype))
    k = _ops.sparse_dim(x)
    dim = dim % x.ndim
    if dim >= k:
        raise RuntimeError("tinytorch: torch.sparse.softmax over a dense dim is not supported")
    others = [d for d in range(k) if d != dim]
    idx = x._sp_indices
    if others and idx._shape[1]:
        _, grp = t.unique(_ops._linear(idx[others], tuple(x._shape[d] for d in others)), return_inverse=True)
    else:
        grp = t.zeros(idx._shape[1], dtype=_dt.int64, device=x.device)
    n = int(grp.max()) + 1 if idx._shape[1] else 0

    def fn(v):
        # each line along ``dim`` normalises over its stored entries only (absent ones count as -inf)
        big = t.full((n,) + v._shape[1:], float("-inf"), dtype=v.dtype, device=v.device)
        m = big.scatter_reduce(0, grp.view((-1,) + (1,) * (v.ndim - 1)).expand(v._shape), v.detach(), "amax")
        z = v - m[grp]
        s = _ops._segment_sum(z.exp(), grp, n)[grp]
        return z - s.log() if log else z.exp() / s
    return _ops._apply("LogSoftmaxBackward0" if log else "SoftmaxBackward0", [x], fn,
                       lambda r: coo(idx, r, x._shape, True))


def softmax(input, dim, *, dtype=None):
    """``torch.sparse.softmax``: softmax along ``dim`` over the stored entries of COO ``input`` (unstored ones
    are -inf, so they stay unstored); a COO result with ``input``'s coalesced indices."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim, *, dtype=None):
    """``torch.sparse.log_softmax``: the logarithm of ``softmax``, over the stored entries."""
    return _softmax(input, dim, dtype, True)
