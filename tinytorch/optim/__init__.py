"""``tinytorch.optim``: Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD,
LBFGS, Adafactor and ``lr_scheduler``."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .adafactor import Adafactor
from .muon import Muon
from . import swa_utils  # noqa: F401
from . import lr_scheduler
