"""The compiler: ``tinytorch.compile`` / ``torch.compiler`` (capture at the dispatcher, graphs, generated kernels).

Where things are: ``lazy.py`` records the ops a compiled function sends through the dispatcher (lazy tensors,
graph breaks) as a graph of the records of ``ir.py``; ``passes.py`` lists the passes (dead-code elimination,
fusion, memory planning); ``fusion.py`` groups elementwise kernels; ``graph.py`` turns a recording into a cached
``Plan`` and writes the function that runs it; ``codegen_cpp.py`` generates, compiles and caches the fused kernels'
C++ on ``cpu``, ``codegen_opencl.py`` their OpenCL C on ``opencl`` and ``cuda``; ``guards.py`` guards the Python
state a replay depends on; ``api.py`` is ``compile``, the modes, replays and their tensor guards, and the
statistics and logs of recompiles and graph breaks; ``config.py`` holds the settings ``torch._dynamo.config`` names.
"""
from .api import (compile, disable, is_compiling, reset, set_logs, stats, CompiledFunction, OptimizedModule,
                  allow_in_graph, cudagraph_mark_step_begin, is_exporting)
from .lazy import Unsupported
from . import config

__all__ = ["compile", "disable", "is_compiling", "reset", "set_logs", "stats", "Unsupported", "CompiledFunction",
           "OptimizedModule", "allow_in_graph", "cudagraph_mark_step_begin", "is_exporting", "is_dynamo_compiling",
           "config"]


def is_dynamo_compiling():
    """As ``torch.compiler.is_dynamo_compiling``: whether a capture is running."""
    return is_compiling()
