"""``torch.quantization``: the older name of ``torch.ao.quantization`` (PyTorch keeps it as a re-export);
the same objects."""
from .ao.quantization import *  # noqa: F401,F403
from .ao.quantization import __all__  # noqa: F401
