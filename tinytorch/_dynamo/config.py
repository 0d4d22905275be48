"""``torch._dynamo.config`` is the compiler's settings module, ``tinytorch.compiler.config``: this module makes the
import of either name give that one module object, so a setting made through one is read through the other."""
import sys

from ..compiler import config as _config

sys.modules[__name__] = _config
