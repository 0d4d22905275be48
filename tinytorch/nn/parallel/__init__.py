"""``torch.nn.parallel``: ``DataParallel``. tinytorch runs one device per process, so it has no replicas to
scatter to; ``DistributedDataParallel`` needs ``torch.distributed``, which tinytorch does not have."""
from .data_parallel import DataParallel

__all__ = ["DataParallel"]
