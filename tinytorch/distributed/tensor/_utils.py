"""Shape arithmetic of DTensor placements (``torch.distributed.tensor._utils``): which piece of the global tensor a
rank holds, and the global shape and stride a set of local shards describes. Pure integer arithmetic over the
mesh's shape and this rank's coordinate. Source: PyTorch's ``torch/distributed/tensor/_utils.py`` and its C++
``_DTensor_compute_global_tensor_info``."""
from .placement_types import Partial, Replicate, Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset", "compute_global_tensor_info", "compute_local_tensor_info"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """``(local_shape, global_offset)`` of the current rank's piece of a tensor of ``global_shape`` laid out on
    ``mesh`` with ``placements`` (one per mesh dimension): the piece's shape, and per tensor dimension the global
    index of its first element (0 on dimensions that are not sharded). With ``skip_offset=True`` the offset is
    ``()``. A rank outside the mesh gets ``((0,), ())``. An empty piece's offset is the dimension's size.

    Example: a (2, 5) tensor on a (2, 2) mesh with ``(Shard(1), Shard(1))``: ranks 0..3 get ((2, 2), (0, 0)),
    ((2, 1), (0, 2)), ((2, 1), (0, 3)), ((2, 1), (0, 4))."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    return _compute_local_shape_and_global_offset(global_shape, mesh.shape, list(coordinate), placements,
                                                  skip_offset)


def _compute_local_shape_and_global_offset(global_shape, mesh_shape, my_coordinate, placements, skip_offset=False):
    """:func:`compute_local_shape_and_global_offset` for a mesh given by its shape and this rank's coordinate on it
    (a list, or a function from mesh dimension to coordinate). Placements are applied left to right; each
    shard placement splits what the previous ones left of that tensor dimension, so the global indices a rank
    holds are tracked per dimension (``_StridedShard`` pieces are not contiguous)."""
    lookup = my_coordinate if callable(my_coordinate) else my_coordinate.__getitem__
    local_shape = list(global_shape)
    held = {}  # tensor dim -> the global indices this rank holds along it (a range, or a list for strided)
    for mesh_dim, placement in enumerate(placements):
        if not isinstance(placement, (Shard, _StridedShard)):
            continue
        dim = placement.dim
        if dim >= len(local_shape):
            raise AssertionError(f"Sharding dim {dim} greater than tensor ndim {len(local_shape)}")
        rank = lookup(mesh_dim)
        before = held.get(dim, range(global_shape[dim]))
        if isinstance(placement, _StridedShard):
            size, idx = placement.local_shard_size_and_offset(local_shape[dim], mesh_shape[mesh_dim], rank, 1)
            picked = [before[i] for i in idx]
        else:
            size, off = Shard.local_shard_size_and_offset(local_shape[dim], mesh_shape[mesh_dim], rank)
            picked = before[off:off + size]
        local_shape[dim] = size
        # an empty piece starts at the dimension's end, whatever the earlier pieces were
        held[dim] = picked if size else range(global_shape[dim], global_shape[dim] + 1)
    if skip_offset:
        return tuple(local_shape), ()
    offset = [0] * len(global_shape)
    for dim, idx in held.items():
        offset[dim] = idx[0]
    return tuple(local_shape), tuple(offset)


def compute_global_tensor_info(tensor, mesh, placements):
    """``(global_shape, global_stride)`` (two lists) of the DTensor whose local piece on every rank is ``tensor``,
    assuming every rank's piece has the same shape (even sharding): a ``Shard(d)`` on a mesh dimension of size n
    multiplies dimension d by n, and every stride at least as large as d's by n. Replicate and Partial change
    nothing. RuntimeError for other placements (``_StridedShard`` among them, as in PyTorch)."""
    shape = list(tensor.shape)
    stride = list(tensor.stride())
    for mesh_dim, placement in enumerate(placements):
        n = mesh.size(mesh_dim)
        if type(placement) is Shard or (isinstance(placement, Shard) and not isinstance(placement, _StridedShard)):
            d = placement.dim
            if d < 0 or d >= len(shape):
                raise RuntimeError(f"Shard placements should have negative dims normalized in the user-facing "
                                   f"APIs: {placement}")
            shape[d] *= n
            for i in range(len(stride)):
                if i != d and stride[i] >= stride[d]:
                    stride[i] *= n
        elif not isinstance(placement, (Replicate, Partial)):
            raise RuntimeError(f"placement type {type(placement).__name__} not supported!")
    return shape, stride


def compute_local_tensor_info(global_tensor, mesh, placements):
    """``(local_shape, local_stride)`` (two lists) of one rank's piece of ``global_tensor`` when it is sharded
    evenly with ``placements``: a shard placement on a mesh dimension of size n divides its tensor dimension by n
    and every stride at least n times that dimension's stride by n. AssertionError for a negative shard dim, a
    dim past the tensor's, or a dimension n does not divide; RuntimeError for an unknown placement."""
    shape = list(global_tensor.shape)
    stride = list(global_tensor.stride())
    for mesh_dim, placement in enumerate(placements):
        n = mesh.size(mesh_dim)
        if isinstance(placement, (Shard, _StridedShard)):
            d = placement.dim
            if d < 0:
                raise AssertionError("Shard placements should have negative dims normalized in the user-facing "
                                     f"APIs: {placement}")
            if d >= len(shape):
                raise AssertionError(f"Sharding dim {d} greater than tensor ndim {len(shape)} for placement "
                                     f"number {mesh_dim}.")
            if shape[d] % n:
                raise AssertionError(f"Global dim {shape[d]} not divisible by mesh size {n}")
            shape[d] //= n
            for i in range(len(stride)):
                if i != d and stride[i] >= stride[d] * n:
                    stride[i] //= n
        elif not isinstance(placement, (Replicate, Partial)):
            raise RuntimeError(f"placement type {type(placement)} not supported!")
    return shape, stride
