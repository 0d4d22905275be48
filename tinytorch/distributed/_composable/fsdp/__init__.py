"""``torch.distributed._composable.fsdp``: FSDP2's older import path, the same objects as
:mod:`tinytorch.distributed.fsdp` (``fully_shard`` raises NotImplementedError there)."""
from ...fsdp import CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]
