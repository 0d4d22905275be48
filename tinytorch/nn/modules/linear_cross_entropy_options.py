"""``LinearCrossEntropyOptions`` at PyTorch's module path ``torch.nn.modules.linear_cross_entropy_options``."""
from .loss import LinearCrossEntropyOptions

__all__ = ["LinearCrossEntropyOptions"]
