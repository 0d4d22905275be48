"""Padding modules at PyTorch's module path ``torch.nn.modules.padding``."""
from .layers import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                     ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                     ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
