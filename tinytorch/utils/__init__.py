"""``tinytorch.utils``: data loading."""
from . import data
