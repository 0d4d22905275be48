"""``nn.parallel.DistributedDataParallel``: needs a process group, which tinytorch does not have."""
from ..modules.module import Module


class DistributedDataParallel(Module):
    """Raises the ValueError PyTorch raises without an initialized process group (see ``tinytorch.distributed``)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, *args, **kwargs):
        from ...distributed import _NOT_INIT
        raise ValueError(_NOT_INIT)
