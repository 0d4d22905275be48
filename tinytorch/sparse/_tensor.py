"""The sparse tensor: a Tensor whose layout is ``sparse_coo`` or ``sparse_csr``, holding dense index and value
tensors instead of a strided view of a Storage (PyTorch's ``SparseTensorImpl`` / ``SparseCsrTensorImpl``).

COO: ``indices`` (sparse_dim, nnz) int64 and ``values`` (nnz, *dense_shape); the tensor is the sum of
``values[k]`` at position ``indices[:, k]`` (duplicates add up until ``coalesce``). CSR (2-D, no dense dims):
``crow_indices`` (rows + 1,), ``col_indices`` (nnz,) and ``values`` (nnz,), rows in order.

Its ``_storage`` is a stand-in (``SparseStorage``) whose ``sparse`` flag makes the dispatcher hand every op
call with a sparse argument to ``tinytorch/sparse/_ops.py`` (PyTorch's SparseCPU dispatch key): no kernel ever
sees a sparse tensor. Sparse ops are compositions of dense tinytorch ops on the index and value tensors, so
they run on every device.
"""
import numpy as np

from .. import _dtype as _dt
from .. import _layout
from .._print import PRINT_OPTS, _body
from .._storage import Storage
from .._tensor import Tensor, _new
from ..device import get_backend
from ..overrides import _disabled_torch_function_impl

_KEY_NAMES = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "opencl": "OpenCL"}


class SparseBackend:
    """What ``Tensor._inplace`` and the dispatcher's in-place step see as a sparse tensor's backend: no kernels,
    so every in-place op on a sparse tensor is computed out of place and written back by ``copy_``."""

    kernels = {}
    inplace_kernels = {}
    shape_only = False
    sparse = True

    def __init__(self, device):
        self.device = device
        self.dense = get_backend(device)


class SparseStorage(Storage):
    """The stand-in storage of a sparse tensor: its device, dtype and version counter, no memory."""

    __slots__ = ()
    sparse = True

    def __init__(self, dtype, device):
        Storage.__init__(self, None, dtype, device, 0, SparseBackend(device))


def dispatch_key(t):
    """PyTorch's backend name for sparse tensor ``t`` in error messages: 'SparseCPU', 'SparseCsrCPU' ..."""
    dev = _KEY_NAMES.get(t.device.type, t.device.type)
    return ("Sparse" if t._layout is _layout.sparse_coo else "SparseCsr") + dev


def _layout_name(t):
    """PyTorch's layout spelling in messages: 'Strided', 'Sparse', 'SparseCsr'."""
    lay = t.layout
    return "Strided" if lay is _layout.strided else "Sparse" if lay is _layout.sparse_coo else "SparseCsr"


class SparseTensor(Tensor):
    """A sparse COO or CSR tensor (see the module docstring). Built by ``sparse_coo_tensor``,
    ``sparse_csr_tensor``, ``Tensor.to_sparse*``; its ops live in ``tinytorch/sparse/_ops.py``."""

    # a sparse tensor is a plain torch.Tensor in PyTorch: this class takes no part in __torch_function__
    __torch_function__ = _disabled_torch_function_impl

    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse(self):
        return self._layout is _layout.sparse_coo

    @property
    def is_sparse_csr(self):
        return self._layout is _layout.sparse_csr

    def _alias(self):
        t = _make(self._layout, self._shape, self._sp_values, self._sp_indices, self._crow, self._col,
                  self._coalesced)
        t._storage = self._storage  # one version counter, as PyTorch's shallow copies
        return t

    def detach(self):
        """A sparse tensor sharing indices and values with ``self``, outside the graph."""
        return self._alias()

    def is_contiguous(self, memory_format=None):
        return False  # PyTorch's answer for every sparse tensor

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def item(self):
        """The single value of a one-element sparse tensor (its dense sum), RuntimeError otherwise."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = self.detach()
        new._sp_values = self._sp_values.clone()
        if self._sp_indices is not None:
            new._sp_indices = self._sp_indices.clone()
        else:
            new._crow, new._col = self._crow.clone(), self._col.clone()
        new.requires_grad = self.requires_grad
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        parts = (self._sp_indices,) if self._sp_indices is not None else (self._crow, self._col)
        return (_rebuild, (self._layout._name, tuple(p.detach() for p in parts), self._sp_values.detach(),
                           self._shape, self.requires_grad))

    def __repr__(self):
        return sparse_repr(self)


def _rebuild(layout_name, parts, values, shape, requires_grad):
    t = _make(getattr(_layout, layout_name), shape, values, *(parts if len(parts) == 1 else (None,) + parts))
    t.requires_grad = requires_grad
    return t


def _make(layout, shape, values, indices=None, crow=None, col=None, coalesced=False):
    """A SparseTensor of ``layout`` and ``shape`` over the given dense parts (no checks, no autograd)."""
    t = _new(SparseStorage(values.dtype, values.device), tuple(shape), (0,) * len(shape), 0, values.dtype,
             None, SparseTensor)
    t._layout = layout
    t._sp_values = values
    t._sp_indices = indices
    t._crow, t._col = crow, col
    t._coalesced = coalesced
    return t


def coo(indices, values, shape, coalesced=False):
    """A COO tensor over ``indices`` (sparse_dim, nnz) and ``values`` (nnz, *dense); no checks."""
    return _make(_layout.sparse_coo, shape, values, indices, coalesced=coalesced)


def csr(crow, col, values, shape):
    """A 2-D CSR tensor over ``crow`` (rows + 1,), ``col`` and ``values`` (nnz,); no checks."""
    return _make(_layout.sparse_csr, shape, values, None, crow, col)


def is_sparse(t):
    """True for a sparse (COO or CSR) tensor."""
    return isinstance(t, Tensor) and t._storage.sparse


# ---- printing ------------------------------------------------------------------------------------------------

def _part(t, indent):
    """A dense part (indices or values) as PyTorch's ``_tensor_str`` prints it inside a sparse repr."""
    if t.numel() == 0:
        return "[]" + ", size=" + str(tuple(t._shape))
    a = t.detach().numpy(force=True)
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or t.dtype is _dt.bfloat16:
        a = a.astype(np.float32)
    return _body(a, indent)


def sparse_repr(t):
    """``repr`` of a sparse tensor, as ``torch/_tensor_str.py`` prints it: the parts, then size, nnz, dtype
    (when not a default one), layout and autograd suffixes (a COO tensor's start on a new line)."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _dt.get_default_dtype()
    suffixes.append(f"size={tuple(t._shape)}")
    suffixes.append(f"nnz={t._sp_values._shape[0]}")
    if t.dtype not in (default, default.to_complex(), _dt.int64, _dt.bool):
        suffixes.append(f"dtype={t.dtype}")
    if t._layout is _layout.sparse_coo:
        names = (("indices=tensor(", t._sp_indices),)
    else:
        names = (("crow_indices=tensor(", t._crow), ("col_indices=tensor(", t._col))
    names += (("values=tensor(", t._sp_values),)
    text = ("),\n" + " " * indent).join(p + _part(x, indent + len(p)) for p, x in names) + ")"
    suffixes.append(f"layout={t._layout}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = [prefix + text]
    last = len(out[0]) - out[0].rfind("\n") + 1
    force = t._layout is _layout.sparse_coo
    for s in suffixes:
        if force or last + len(s) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
            force = False
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
