"""``tinytorch.utils``: data loading, activation checkpointing, hook handles and ``model_zoo.load_url``."""
from . import checkpoint, data, hooks, model_zoo
