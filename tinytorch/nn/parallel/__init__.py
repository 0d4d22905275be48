"""``torch.nn.parallel``: ``DataParallel``. tinytorch runs one device per process, so it has no replicas to
scatter to; ``DistributedDataParallel`` needs a process group, which ``tinytorch.distributed`` does not have
(constructing it raises PyTorch's error for that case)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
