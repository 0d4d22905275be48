"""Upsampling modules at PyTorch's module path ``torch.nn.modules.upsampling``."""
from .layers import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
