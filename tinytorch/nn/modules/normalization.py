"""Normalization modules at PyTorch's module path ``torch.nn.modules.normalization``."""
from .layers import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]
