"""``tinytorch.utils``: data loading, activation checkpointing and pytrees (``_pytree``, which PyTorch also has
loaded once ``import torch`` returns, so ``torch.utils._pytree.tree_map`` works without a separate import)."""
from . import _pytree, checkpoint, data
