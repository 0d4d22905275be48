"""``tinytorch.optim``: Optimizer, SGD, Adam, AdamW and ``lr_scheduler``."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from . import lr_scheduler
