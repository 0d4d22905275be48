"""The compiler: ``tinytorch.compile`` / ``torch.compiler`` (capture at the dispatcher, graphs, generated kernels).

Where things are: ``lazy.py`` records the ops a compiled function sends through the dispatcher (lazy tensors,
graph breaks); ``graph.py`` turns a recording into a cached ``Plan`` (dead-code elimination, memory planning, the
interpreter that runs it); ``fusion.py`` groups elementwise kernels; ``codegen_cpp.py`` generates, compiles and
caches their C++ on ``cpu``; ``guards.py`` guards the Python state a replay depends on; ``api.py`` is ``compile``, the modes, replays and their
tensor guards, and the statistics and logs of recompiles and graph breaks.
"""
from .api import compile, disable, is_compiling, reset, set_logs, stats, CompiledFunction, OptimizedModule
from .lazy import Unsupported

__all__ = ["compile", "disable", "is_compiling", "reset", "set_logs", "stats", "Unsupported", "CompiledFunction",
           "OptimizedModule"]


def is_dynamo_compiling():
    """As ``torch.compiler.is_dynamo_compiling``: whether a capture is running."""
    return is_compiling()
