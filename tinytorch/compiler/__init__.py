"""The compiler: ``tinytorch.compile`` / ``torch.compiler`` (capture at the dispatcher, graphs, generated kernels).

Where things are: ``lazy.py`` records the ops a compiled function sends through the dispatcher (lazy tensors,
graph breaks); ``graph.py`` turns a recording into a cached ``Plan`` (dead-code elimination, memory planning, the
interpreter that runs it); ``fusion.py`` groups elementwise kernels; ``codegen_cpp.py`` generates, compiles and
caches their C++ on ``cpu``; ``api.py`` is ``compile``, the two modes and the guards of a replay.
"""
from .api import compile, disable, is_compiling, reset, CompiledFunction, OptimizedModule
from .lazy import Unsupported

__all__ = ["compile", "disable", "is_compiling", "reset", "Unsupported", "CompiledFunction", "OptimizedModule"]


def is_dynamo_compiling():
    """As ``torch.compiler.is_dynamo_compiling``: whether a capture is running."""
    return is_compiling()
