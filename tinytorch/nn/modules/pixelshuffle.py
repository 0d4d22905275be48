"""Pixel (un)shuffle modules at PyTorch's module path ``torch.nn.modules.pixelshuffle``."""
from .layers import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
