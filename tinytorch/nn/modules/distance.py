"""Distance modules at PyTorch's module path ``torch.nn.modules.distance``."""
from .loss import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
