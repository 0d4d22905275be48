"""``torch.distributed.fsdp.fully_sharded_data_parallel``: FSDP1's wrapper class, which tinytorch does not
implement (see :mod:`tinytorch.distributed.fsdp`)."""
from . import _UNSUPPORTED

__all__ = ["FullyShardedDataParallel"]


class FullyShardedDataParallel:
    """FSDP1's module wrapper. Constructing one raises NotImplementedError (tinytorch does not shard
    parameters); the class exists for ``isinstance`` checks, which are False."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_UNSUPPORTED.format(what="FullyShardedDataParallel (FSDP)"))
