"""Fold / Unfold at PyTorch's module path ``torch.nn.modules.fold``."""
from .layers import Fold, Unfold

__all__ = ["Fold", "Unfold"]
