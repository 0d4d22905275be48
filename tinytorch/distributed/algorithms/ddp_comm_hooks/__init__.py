"""``torch.distributed.algorithms.ddp_comm_hooks``: communication hooks for
``DistributedDataParallel.register_comm_hook``: ``default_hooks`` (all-reduce, fp16 / bf16 compression) and
``powerSGD_hook`` (PowerSGD low-rank compression)."""
from . import default_hooks, powerSGD_hook  # noqa: F401

__all__ = ["default_hooks", "powerSGD_hook"]
