"""``torch.distributed.tensor``: DTensor, a tensor laid out over a DeviceMesh with Shard / Replicate / Partial
placements, on tinytorch's MPI process groups. See :mod:`tinytorch.distributed.tensor._api` for what a DTensor
supports (construction, ``to_local``, ``redistribute``, ``full_tensor``) and what it refuses (operators)."""
from ..device_mesh import DeviceMesh, init_device_mesh  # noqa: F401  (PyTorch's module has them too)
from ._api import DTensor, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard  # noqa: F401

__all__ = ["DTensor", "distribute_tensor", "Shard", "Replicate", "Partial", "Placement"]
