"""``DTensor`` and ``distribute_tensor`` (``torch.distributed.tensor._api``).

A DTensor is a Tensor subclass whose own shape, stride and dtype are the global tensor's (its body is a
``meta`` tensor: it holds no data) and which keeps this rank's piece in ``_local_tensor``, with the mesh and the
placements that say which piece that is. ``to_local()`` returns the piece; ``redistribute`` changes placements
with collectives of :mod:`tinytorch.distributed` over the mesh dimensions' process groups (Shard -> Replicate:
all-gather; Partial -> Replicate: all-reduce; Replicate -> Shard: a local chunk; Shard -> Shard: gather, then
chunk); ``full_tensor()`` is the all-Replicate redistribution's local tensor. These are differentiable on the
local tensors (autograd sees local pieces; the gradient of a redistribution is the reverse redistribution, with
Partial taken as Replicate, as PyTorch's). Tensor operations on a DTensor other than shape queries, ``detach``,
``clone``, ``contiguous``, ``to`` and ``requires_grad_`` raise NotImplementedError (tinytorch does not propagate
shardings through ops): apply them to ``to_local()`` or ``full_tensor()``. Source: PyTorch's
``torch/distributed/tensor/_api.py`` and ``_redistribute.py``.
"""
from ..._tensor import Tensor
from ...autograd.function import Function
from ..device_mesh import _current_mesh
from ._utils import _compute_local_shape_and_global_offset, compute_global_tensor_info
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = ["DTensor", "distribute_tensor"]

_REDUCE_OPS = {"sum": "SUM", "avg": "AVG", "min": "MIN", "max": "MAX", "product": "PRODUCT", "band": "BAND",
               "bor": "BOR", "bxor": "BXOR"}


def _dist():
    from ... import distributed
    return distributed


class _Spec:
    """What a DTensor is: its mesh, placements (a tuple, one per mesh dimension) and global shape and stride."""

    __slots__ = ("mesh", "placements", "shape", "stride")

    def __init__(self, mesh, placements, shape, stride):
        self.mesh, self.placements, self.shape, self.stride = mesh, tuple(placements), tuple(shape), tuple(stride)


def _assert_no_mixed_partial_types(placements):
    ops = {p.reduce_op for p in placements if isinstance(p, Partial)}
    if len(ops) > 1 and ops != {"sum", "avg"}:
        raise ValueError(f"Mixed Partial reduce types are not supported in the same placement list. Found reduce "
                         f"ops: {ops}. Please ensure all Partial placements use the same reduce operation.")


def _normalize(placements, ndim):
    """Shard dims made non-negative for a tensor of ``ndim`` dimensions."""
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Placement objects, got {type(p).__name__}")
        if isinstance(p, _StridedShard) and p.dim < 0:
            p = _StridedShard(p.dim + ndim, split_factor=p.split_factor)
        elif isinstance(p, Shard) and p.dim < 0:
            p = Shard(p.dim + ndim)
        out.append(p)
    return out


def _wrap(local, spec):
    """A DTensor of ``spec`` over ``local`` (which it keeps as is: autograd goes through it)."""
    from ..._ops.creation import empty_strided
    from ...overrides import DisableTorchFunctionSubclass, _instance_made
    with DisableTorchFunctionSubclass():
        body = empty_strided(spec.shape, spec.stride, dtype=local.dtype, device="meta")
    body.__class__ = DTensor
    _instance_made(DTensor)  # from now on the public functions consult __torch_function__ (which refuses ops)
    body._local_tensor = local
    body._spec = spec
    body.requires_grad = local.requires_grad
    return body


# ---- redistribution on local tensors ------------------------------------------------------------------------------
def _size_before(spec_shape, mesh, coord, placements, upto, dim):
    """The size of tensor dimension ``dim`` after the placements of mesh dims ``< upto`` (this rank's share)."""
    shape, _ = _compute_local_shape_and_global_offset(spec_shape, mesh.shape, coord, list(placements[:upto]),
                                                      skip_offset=True)
    return shape[dim]


def _gather(local, placement, group, n, size_before):
    """Undo ``placement`` (Shard or _StridedShard) over a group of ``n`` ranks: every rank's piece, padded to the
    largest along the dim for the all-gather, then put back in order."""
    from ..._ops.creation import tensor as make_tensor, zeros
    from ..._ops.shape import cat
    d = placement.dim
    if isinstance(placement, _StridedShard):
        idx = placement._indices(size_before, n)
        sizes = [len(i) for i in idx]
    else:
        sizes = [Shard.local_shard_size_and_offset(size_before, n, r)[0] for r in range(n)]
    longest = max(sizes)
    shape = list(local.shape)
    shape[d] = longest
    buf = zeros(shape, dtype=local.dtype, device=local.device)
    buf.narrow(d, 0, local.shape[d]).copy_(local)
    outs = [zeros(shape, dtype=local.dtype, device=local.device) for _ in range(n)]
    _dist().all_gather(outs, buf, group=group)
    whole = cat([o.narrow(d, 0, s) for o, s in zip(outs, sizes)], dim=d)
    if isinstance(placement, _StridedShard):
        order = [i for piece in idx for i in piece]
        inverse = [0] * len(order)
        for k, i in enumerate(order):
            inverse[i] = k
        whole = whole.index_select(d, make_tensor(inverse, dtype=__import__("tinytorch").int64,
                                                  device=local.device))
    return whole


def _reduce(local, placement, group):
    op = _REDUCE_OPS.get(placement.reduce_op)
    if op is None:
        raise ValueError(f"Partial reduce_op {placement.reduce_op!r} is not one of {sorted(_REDUCE_OPS)}")
    out = local.clone()
    _dist().all_reduce(out, op=getattr(_dist().ReduceOp, op), group=group)
    return out


def _transform(local, spec, dst):
    """This rank's local tensor for placements ``dst`` from ``local`` laid out as ``spec``. Mesh dims that change
    (and later ones sharding a tensor dim an earlier changing one touches) are first made Replicate, right to
    left (all-gather / all-reduce), then given their new placement, left to right (a local chunk): the order in
    which left-to-right sharding composes."""
    mesh, src = spec.mesh, list(spec.placements)
    coord = mesh.get_coordinate()
    if coord is None:
        return local
    changed = {i for i in range(mesh.ndim) if src[i] != dst[i]}
    grew = True
    while grew:
        grew = False
        for j in range(mesh.ndim):
            if j in changed or not isinstance(src[j], (Shard, _StridedShard)):
                continue
            d = src[j].dim
            for i in changed:
                if i < j and any(isinstance(p, (Shard, _StridedShard)) and p.dim == d for p in (src[i], dst[i])):
                    changed.add(j)
                    grew = True
                    break
    cur = list(src)
    for i in sorted(changed, reverse=True):
        p = cur[i]
        if isinstance(p, (Shard, _StridedShard)):
            before = _size_before(spec.shape, mesh, list(coord), cur, i, p.dim)
            local = _gather(local, p, mesh.get_group(i), mesh.size(i), before)
        elif isinstance(p, Partial):
            local = _reduce(local, p, mesh.get_group(i))
        cur[i] = Replicate()
    for i in sorted(changed):
        p = dst[i]
        if isinstance(p, (Shard, _StridedShard)):
            local = p._split(local, mesh.size(i))[coord[i]].contiguous()
        cur[i] = p
    return local


def _grad_placements(placements):
    return tuple(Replicate() if isinstance(p, Partial) else p for p in placements)


class _Redistribute(Function):
    """The local-tensor side of ``redistribute``: forward moves ``local`` from ``spec`` to ``dst``; backward
    moves the gradient back (Partial sources get a Replicate gradient)."""

    @staticmethod
    def forward(ctx, local, spec, dst):
        """This rank's piece for placements ``dst`` of the DTensor ``spec`` whose piece is ``local``."""
        ctx.spec, ctx.dst = spec, dst
        return _transform(local, spec, dst)

    @staticmethod
    def backward(ctx, grad):
        """The gradient moved back to the source placements (Partial ones as Replicate)."""
        spec = ctx.spec
        back = _Spec(spec.mesh, ctx.dst, spec.shape, spec.stride)
        return _transform(grad, back, list(_grad_placements(spec.placements))), None, None


# ---- DTensor ---------------------------------------------------------------------------------------------------------
_SHAPE_QUERIES = frozenset({"size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous",
                            "element_size", "is_floating_point", "is_complex", "is_signed", "__len__",
                            "storage_offset"})


# public functions that only read metadata (answered from the global shape and dtype)
_NAMESPACE_QUERIES = frozenset({"is_tensor", "numel", "is_floating_point", "is_complex", "is_same_size"})


def _is_namespace_query(func):
    # the public functions are named by the namespace they are reached from (tinytorch/_surface.py)
    return getattr(func, "__name__", None) in _NAMESPACE_QUERIES and getattr(func, "__module__", None) == "tinytorch"


def _as_method(func):
    """The Tensor method name ``func`` is, or None for a namespace function."""
    from ... import overrides
    name = getattr(func, "__name__", None)
    if name is None:
        return None
    if getattr(Tensor, name, None) is func or overrides._base_methods.get(name) is func:
        return name
    return None


def _refused_property(name):
    def get(self):
        raise NotImplementedError(f"Tensor.{name} is not implemented for DTensor in tinytorch (it does not propagate "
                                  f"shardings through operators): call .to_local() or .full_tensor() and take "
                                  f".{name} of that")
    return property(get, doc=f"Not implemented for DTensor (NotImplementedError): take ``.{name}`` of "
                             "``to_local()`` or ``full_tensor()``.")


class DTensor(Tensor):
    """A tensor laid out over a DeviceMesh (``torch.distributed.tensor.DTensor``): ``shape``, ``stride()``,
    ``dtype`` and ``ndim`` are the global tensor's; ``device`` and ``requires_grad`` are the local piece's.
    Build one with :meth:`from_local` or :func:`distribute_tensor`."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("DTensor(...) is internal: build a DTensor with DTensor.from_local(local_tensor, "
                        "device_mesh, placements) or distribute_tensor(tensor, device_mesh, placements)")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ...overrides import DisableTorchFunctionSubclass
        kwargs = kwargs or {}
        name = _as_method(func)
        if name in _SHAPE_QUERIES or (name is None and _is_namespace_query(func)):
            with DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if name in _LOCAL_METHODS and args and isinstance(args[0], DTensor):
            return _LOCAL_METHODS[name](*args, **kwargs)
        label = f"Tensor.{name}" if name else f"torch.{getattr(func, '__name__', func)}"
        raise NotImplementedError(
            f"{label} is not implemented for DTensor in tinytorch (it does not propagate shardings through "
            "operators): call .to_local() to work on this rank's piece, or .full_tensor() to gather the whole "
            "tensor, and apply the operation to that")

    # ---- construction ----
    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None,
                   grad_placements=None):
        """A DTensor whose piece on this rank is ``local_tensor`` (every rank calls it with its piece).

        ``placements`` (default: Replicate on every mesh dim) say how the pieces make the global tensor; its
        shape and stride are ``shape`` and ``stride`` when both are given, else computed as if every rank's
        piece had this one's shape. ``run_check=True`` broadcasts Replicate pieces from the first rank of each
        mesh dimension (it does not compare the ranks' shapes, as PyTorch's also does). ``grad_placements`` is
        accepted; gradients always take the forward placements (Partial as Replicate). The local tensor is moved to the mesh's device type. Autograd flows from the DTensor's
        ``to_local()`` back into ``local_tensor``. RuntimeError for a DTensor input or only one of shape/stride;
        ValueError for mixed Partial reduce ops or a placement count other than ``device_mesh.ndim``."""
        if isinstance(local_tensor, DTensor):
            raise RuntimeError(f"the local_tensor argument only accepts torch.Tensor but got "
                               f"{type(local_tensor)} value.")
        mesh = device_mesh or _current_mesh()
        if mesh.device_type != local_tensor.device.type and not local_tensor.is_meta:
            local_tensor = local_tensor.to(mesh.device_type)
        placements = [Replicate() for _ in range(mesh.ndim)] if placements is None else \
            _normalize(placements, local_tensor.ndim)
        if len(placements) != mesh.ndim:
            raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements "
                             f"length: {len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
        _assert_no_mixed_partial_types(placements)
        if shape and stride:
            gshape, gstride = tuple(shape), tuple(stride)
        elif not shape and not stride:
            gshape, gstride = compute_global_tensor_info(local_tensor, mesh, placements)
        else:
            raise RuntimeError(f"Found shape:{shape}, stride:{stride}.",
                               "Please pass both shape and stride at the same time.")
        if not mesh._is_current_rank_part_of_mesh():
            local_tensor = local_tensor.new_empty(0, requires_grad=local_tensor.requires_grad)
        elif run_check:
            from ...autograd.grad_mode import no_grad
            for i, p in enumerate(placements):
                if p.is_replicate():
                    with no_grad():
                        fresh = local_tensor.detach().contiguous().clone()
                        _dist().broadcast(fresh, group=mesh.get_group(i), group_src=0)
                    # keep the autograd link to the caller's tensor while taking the broadcast values
                    local_tensor = local_tensor + (fresh - local_tensor.detach()) if local_tensor.requires_grad \
                        else fresh
        return _wrap(local_tensor.view_as(local_tensor), _Spec(mesh, placements, gshape, gstride))

    # ---- conversions ----
    def to_local(self, *, grad_placements=None):
        """This rank's piece (the tensor itself, not a copy; in the autograd graph of the DTensor's source).
        ``grad_placements`` is accepted and unused: the piece's gradient is its own."""
        return self._local_tensor

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False, forward_dtype=None,
                     backward_dtype=None):
        """A DTensor with the same global value laid out with ``placements`` on the same mesh, moved with
        collectives (see the module's docstring). RuntimeError without ``placements``, for a placement count
        other than the mesh's ndim, or for a new Partial placement (internal in PyTorch);
        NotImplementedError for another mesh. ``forward_dtype`` casts the local tensor first; ``async_op`` is
        accepted (tinytorch's collectives have finished when this returns); ``backward_dtype`` is ignored."""
        mesh = device_mesh or self._spec.mesh
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        if mesh != self._spec.mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        placements = _normalize(list(placements), len(self._spec.shape))
        if len(placements) != mesh.ndim:
            raise RuntimeError(f"redistribute: expected {mesh.ndim} placements (one per mesh dimension), got "
                               f"{len(placements)}")
        for i, p in enumerate(placements):
            if p.is_partial() and self._spec.placements[i] != p:
                raise RuntimeError(f"Can not redistribute from {self._spec.placements[i]} to {p}, "
                                   "redistributing to Partial is for internal use only!")
        local = self._local_tensor
        if forward_dtype is not None and forward_dtype != local.dtype:
            local = local.to(forward_dtype)
        if tuple(placements) == self._spec.placements:
            return _wrap(local.view_as(local), _Spec(mesh, placements, self._spec.shape, self._spec.stride))
        out = _Redistribute.apply(local, self._spec, placements)
        return _wrap(out, _Spec(mesh, placements, self._spec.shape, self._spec.stride))

    def full_tensor(self, *, grad_placements=None):
        """The whole global tensor on every rank (all-gathers shards, all-reduces partial values); a plain
        Tensor, differentiable (each rank's gradient flows back to its own piece; ``grad_placements`` is
        accepted and unused)."""
        return self.redistribute(placements=[Replicate()] * self._spec.mesh.ndim).to_local()

    # ---- attributes ----
    @property
    def device_mesh(self):
        """The DeviceMesh the tensor is laid out on."""
        return self._spec.mesh

    @property
    def placements(self):
        """The placements, a tuple with one per mesh dimension."""
        return self._spec.placements

    @property
    def device(self):
        """The local piece's device."""
        return self._local_tensor.device

    @property
    def is_cpu(self):
        """Whether the local piece is on the cpu."""
        return self._local_tensor.is_cpu

    @property
    def is_cuda(self):
        """Whether the local piece is on a cuda device."""
        return self._local_tensor.is_cuda

    @property
    def is_mps(self):
        """Whether the local piece is on an mps device."""
        return self._local_tensor.is_mps

    @property
    def is_xpu(self):
        """Whether the local piece is on an xpu device."""
        return self._local_tensor.is_xpu

    T, mT, H, mH, real, imag = (_refused_property(n) for n in ("T", "mT", "H", "mH", "real", "imag"))

    @property
    def is_meta(self):
        """Whether the local piece is a meta tensor."""
        return self._local_tensor.is_meta

    def get_device(self):
        """The local piece's device index (-1 on the cpu)."""
        return self._local_tensor.get_device()

    @property
    def grad(self):
        """The local piece's gradient as a DTensor of the same layout (Partial read as Replicate), or None."""
        g = self._local_tensor.grad
        if g is None:
            return None
        spec = self._spec
        return _wrap(g, _Spec(spec.mesh, _grad_placements(spec.placements), spec.shape, spec.stride))

    @grad.setter
    def grad(self, value):
        """Set the local piece's gradient (from a DTensor's local piece, or a plain tensor)."""
        self._local_tensor.grad = value.to_local() if isinstance(value, DTensor) else value

    def __repr__(self):
        return (f"DTensor(local_tensor={self._local_tensor}, device_mesh={self._spec.mesh}, "
                f"placements={self._spec.placements})")

    def __deepcopy__(self, memo):
        import copy
        if id(self) in memo:
            return memo[id(self)]
        out = _wrap(copy.deepcopy(self._local_tensor, memo), self._spec)  # the mesh is shared, not copied
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, proto):
        raise TypeError("tinytorch cannot pickle a DTensor (its device mesh holds communicators): save "
                        "dtensor.to_local() or dtensor.full_tensor()")


def _same_layout(dt, local):
    return _wrap(local, dt._spec)


def _detach(self):
    return _same_layout(self, self._local_tensor.detach())


def _clone(self, *, memory_format=None):
    return _same_layout(self, self._local_tensor.clone())


def _contiguous(self, memory_format=None):
    return _same_layout(self, self._local_tensor.contiguous())


def _requires_grad_(self, requires_grad=True):
    self._local_tensor.requires_grad_(requires_grad)
    self.requires_grad = self._local_tensor.requires_grad
    return self


def _to(self, *args, **kwargs):
    local = self._local_tensor.to(*args, **kwargs)
    spec = self._spec
    if local.dtype != self._local_tensor.dtype:
        return _wrap(local, _Spec(spec.mesh, spec.placements, spec.shape, spec.stride))
    return self if local is self._local_tensor else _same_layout(self, local)


_LOCAL_METHODS = {"detach": _detach, "clone": _clone, "contiguous": _contiguous, "requires_grad_": _requires_grad_,
                  "to": _to}


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Lay the global ``tensor`` out on ``device_mesh`` (default: the mesh of the enclosing ``with mesh:``) with
    ``placements`` (default: Replicate on every mesh dim) and return the DTensor of this rank's piece
    (``torch.distributed.tensor.distribute_tensor``).

    The tensor of the rank at coordinate ``src_data_rank`` on every mesh dimension is the source of truth: it
    is broadcast along each mesh dimension first; ``src_data_rank=None`` uses each rank's own tensor without
    communicating. Shard pieces follow ``torch.chunk``; a Partial placement gets the value divided by the mesh
    dim's size for ``"sum"`` (kept as is for avg/min/max). The local piece is a leaf with the tensor's
    ``requires_grad``. RuntimeError for a non-leaf tensor; ValueError for a placement count other than
    ``device_mesh.ndim``, for mixed Partial reduce ops, or for a DTensor on another mesh or placements."""
    mesh = device_mesh or _current_mesh()
    if not tensor.is_leaf:
        raise RuntimeError("`distribute_tensor` should be used to distribute leaf tensors! but found non-leaf "
                           "tensor!")
    if placements is None:
        placements = [Replicate() for _ in range(mesh.ndim)]
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
    _assert_no_mixed_partial_types(placements)
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor.device_mesh} to a different "
                             f"device mesh {mesh}.")
        if tensor.placements != tuple(placements):
            raise ValueError(f"Cannot distribute a DTensor with placements {tensor.placements} to a different "
                             f"placements {placements}. do you want to call `redistribute` instead?")
        return tensor
    if mesh.device_type != tensor.device.type and not tensor.is_meta:
        tensor = tensor.to(mesh.device_type)
    placements = _normalize(placements, tensor.ndim)
    for p in placements:
        if isinstance(p, (Shard, _StridedShard)) and not 0 <= p.dim < tensor.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-tensor.ndim}, "
                             f"{tensor.ndim - 1}], but got {p.dim})")
    spec = _Spec(mesh, placements, tuple(tensor.shape), tuple(tensor.stride()))
    coord = mesh.get_coordinate()
    local = tensor.detach()
    if coord is None:
        local = local.new_empty(0)
    else:
        if src_data_rank is not None:
            local = local.contiguous().clone()
            for i in range(mesh.ndim):
                _dist().broadcast(local, group=mesh.get_group(i), group_src=src_data_rank)
        for i, p in enumerate(placements):
            if isinstance(p, (Shard, _StridedShard)):
                local = p._split(local, mesh.size(i))[coord[i]]
            elif isinstance(p, Partial):
                if p.reduce_op == "sum":
                    local = local / mesh.size(i)
                elif p.reduce_op not in ("avg", "min", "max"):
                    raise ValueError(f"Replicate to Partial({p.reduce_op}) conversion is not supported.")
        local = local.contiguous()
        if local._storage is tensor._storage:
            local = local.clone()
    local.requires_grad_(tensor.requires_grad)
    return _wrap(local, spec)
