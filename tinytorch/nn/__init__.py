"""``tinytorch.nn``: modules, functional, init, parameters and utilities (PyTorch's ``torch.nn``)."""
from .parameter import Parameter, Buffer, UninitializedBuffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import Module
from . import functional, init, utils
from . import parallel  # noqa: E402
from . import attention, intrinsic, quantized  # noqa: E402,F401
from .parallel import DataParallel  # noqa: E402,F401
