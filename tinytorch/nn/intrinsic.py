"""``torch.nn.intrinsic``: the older name of ``torch.ao.nn.intrinsic``; the same fused containers."""
from ..ao.nn.intrinsic import *  # noqa: F401,F403
from ..ao.nn.intrinsic import __all__  # noqa: F401
