"""Instance normalization modules at PyTorch's module path ``torch.nn.modules.instancenorm``."""
from .layers import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm  # noqa: F401
from .lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]
