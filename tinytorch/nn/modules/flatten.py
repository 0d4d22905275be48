"""Flatten / Unflatten at PyTorch's module path ``torch.nn.modules.flatten``."""
from .linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
