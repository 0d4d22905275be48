"""``tinytorch.utils``: data loading and activation checkpointing."""
from . import checkpoint, data
