"""The compiler's settings, under the names ``torch._dynamo.config`` gives them (``tinytorch._dynamo.config`` is
this module): only settings tinytorch's compiler reads are here.

recompile_limit: distinct graphs one compiled function may record (new shapes, dtypes or Python values each make
one) before it runs eagerly from then on, with a warning (PyTorch's default, 8). ``cache_size_limit`` is its older
name: reading or setting either is the same setting, as in PyTorch.
"""
import sys
import types

recompile_limit = 8


class _Config(types.ModuleType):
    @property
    def cache_size_limit(self):
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value):
        self.recompile_limit = value


sys.modules[__name__].__class__ = _Config
