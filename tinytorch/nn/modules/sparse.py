"""Embedding modules at PyTorch's module path ``torch.nn.modules.sparse``."""
from .layers import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
