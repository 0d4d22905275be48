"""``torch.distributed._tensor``: DTensor's old import path, kept by PyTorch for backward compatibility (and
still used by Lightning); the same objects as :mod:`tinytorch.distributed.tensor`, whose ``_utils`` and
``placement_types`` modules are also reachable under this name."""
import sys

from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor import DTensor, Partial, Placement, Replicate, Shard, distribute_tensor
from ..tensor import _utils, placement_types

for _name, _mod in (("_utils", _utils), ("placement_types", placement_types)):
    sys.modules.setdefault(f"{__name__}.{_name}", _mod)

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "init_device_mesh", "Shard", "Replicate", "Partial",
           "Placement"]
