"""``tinytorch.utils``: data loading, activation checkpointing, hook handles, ``model_zoo.load_url`` and pytrees
(``_pytree``, which PyTorch also has loaded once ``import torch`` returns, so ``torch.utils._pytree.tree_map`` works
without a separate import)."""
from . import _pytree, checkpoint, data, hooks, model_zoo
