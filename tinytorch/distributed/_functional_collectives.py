"""``torch.distributed._functional_collectives``: collectives that return a new tensor instead of writing into
their argument. tinytorch's collectives finish before returning (MPI requests are waited on), so the results are
ready tensors and ``wait_tensor`` returns its argument. ``group`` may be a ProcessGroup, a 1-d DeviceMesh, or a
``(DeviceMesh, mesh_dim)`` pair. ``all_to_all_single`` (and its ``_autograd`` name) is differentiable: its
gradient is the all-to-all of the gradient with the split sizes swapped. Source: PyTorch's
``torch/distributed/_functional_collectives.py``.
"""
from ..autograd.function import Function

__all__ = ["wait_tensor", "broadcast", "all_reduce", "all_gather_tensor", "reduce_scatter_tensor",
           "all_to_all_single", "all_to_all_single_autograd"]

_OPS = {"sum": "SUM", "avg": "AVG", "min": "MIN", "max": "MAX", "product": "PRODUCT", "band": "BAND", "bor": "BOR",
        "bxor": "BXOR"}


def _dist():
    from .. import distributed
    return distributed


def _resolve_group(group):
    from .device_mesh import DeviceMesh
    dist = _dist()
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(f"Only 1D mesh is supported, but got {group.ndim}D mesh: pass (mesh, mesh_dim)")
        return group.get_group()
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    if group is None or isinstance(group, dist.ProcessGroup):
        return group
    raise ValueError(f"Unsupported group type: {type(group).__name__}, {group} (tinytorch takes a ProcessGroup, a "
                     "DeviceMesh or (DeviceMesh, mesh_dim))")


def _op(reduceOp):
    dist = _dist()
    if isinstance(reduceOp, str):
        name = _OPS.get(reduceOp.lower())
        if name is None:
            raise ValueError(f"Unrecognized reduce op: {reduceOp}")
        return getattr(dist.ReduceOp, name)
    return reduceOp


def wait_tensor(tensor):
    """Wait for a functional collective's result: tinytorch's are complete when returned, so ``tensor``."""
    return tensor


def broadcast(self, src, group, tag=""):
    """A copy of global rank ``src``'s ``self`` on every rank of ``group``."""
    out = self.detach().clone()
    _dist().broadcast(out, src=src, group=_resolve_group(group))
    return out


def all_reduce(self, reduceOp, group, tag=""):
    """``self`` reduced over ``group`` with ``reduceOp`` (``"sum"``, ``"avg"``, ``"max"``, ...), a new tensor;
    ``self`` is left unchanged."""
    out = self.detach().clone()
    _dist().all_reduce(out, op=_op(reduceOp), group=_resolve_group(group))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    """Every rank's ``self`` concatenated along ``gather_dim`` in rank order."""
    from .._ops.shape import cat
    pg = _resolve_group(group)
    n = _dist().get_world_size(pg)
    parts = [self.detach().new_empty(self.shape) for _ in range(n)]
    _dist().all_gather(parts, self.detach().contiguous(), group=pg)
    return cat(parts, dim=gather_dim)


def reduce_scatter_tensor(self, reduceOp, scatter_dim, group, tag=""):
    """``self`` reduced over ``group``, then split into equal blocks along ``scatter_dim``: rank r gets block
    r. ValueError when the group size does not divide that dimension."""
    pg = _resolve_group(group)
    n = _dist().get_world_size(pg)
    size = self.shape[scatter_dim]
    if size % n:
        raise ValueError(f"input dimension {scatter_dim} ({size}) must be a multiple of group_size {n}")
    blocks = self.detach().movedim(scatter_dim, 0).contiguous()
    out = blocks.new_empty((size // n,) + tuple(blocks.shape[1:]))
    _dist().reduce_scatter_tensor(out, blocks, op=_op(reduceOp), group=pg)
    return out.movedim(0, scatter_dim).contiguous()


def _a2a(x, output_split_sizes, input_split_sizes, pg):
    n = _dist().get_world_size(pg)
    rows = sum(output_split_sizes) if output_split_sizes is not None else x.shape[0]
    if output_split_sizes is None and x.shape[0] % n:
        raise ValueError(f"all_to_all_single: dim 0 ({x.shape[0]}) is not divisible by the group size {n}")
    out = x.new_empty((rows,) + tuple(x.shape[1:]))
    _dist().all_to_all_single(out, x.detach().contiguous(), output_split_sizes, input_split_sizes, group=pg)
    return out


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, pg):
        """The all-to-all of ``x``."""
        ctx.splits, ctx.pg = (output_split_sizes, input_split_sizes), pg
        return _a2a(x, output_split_sizes, input_split_sizes, pg)

    @staticmethod
    def backward(ctx, grad):
        """The all-to-all of the gradient with the split sizes swapped."""
        out_sizes, in_sizes = ctx.splits
        return _a2a(grad, in_sizes, out_sizes, ctx.pg), None, None, None


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """Rank r's rows ``input_split_sizes[k]`` (block k along dim 0) go to rank k; the result holds the blocks
    received, in rank order (``output_split_sizes[k]`` rows from rank k). Both split lists or neither (equal
    blocks): AssertionError otherwise. Differentiable."""
    if (output_split_sizes is None) != (input_split_sizes is None):
        raise AssertionError("output_split_sizes and input_split_sizes must either be specified together or both "
                             "set to None")
    for sizes, what in ((output_split_sizes, "output"), (input_split_sizes, "input")):
        if sizes is not None and not all(isinstance(s, int) for s in sizes):
            raise AssertionError(f"All {what}_split_sizes must be int or SymInt, got {sizes}")
    return _AllToAll.apply(self, output_split_sizes, input_split_sizes, _resolve_group(group))


all_to_all_single_autograd = all_to_all_single
