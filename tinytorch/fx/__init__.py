"""``torch.fx``: capture a module's forward as a graph of ops, edit it, and generate code from it.

``symbolic_trace(module)`` records what ``forward`` does into a ``Graph`` of ``Node``s and returns a
``GraphModule`` whose ``forward`` is Python code generated from that graph; ``Tracer`` customises tracing
(leaf modules, proxies), ``Interpreter``/``Transformer`` run or rewrite a graph node by node,
``subgraph_rewriter.replace_pattern`` replaces matches of one traced function with another, and
``passes.shape_prop.ShapeProp`` records each node's tensor shapes. The API and printed forms are PyTorch's
(``torch/fx``); tinytorch's functions see Proxy arguments through ``Proxy.__torch_function__``
(``tinytorch/overrides.py``).
"""
from . import immutable_collections  # noqa: F401
from .graph import Graph, CodeGen  # noqa: F401
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_arg  # noqa: F401
from .proxy import Proxy
from ._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from .subgraph_rewriter import replace_pattern
from . import passes  # noqa: F401
from .node import _register_side_effects

_register_side_effects()

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node", "Proxy",
           "replace_pattern", "has_side_effect", "map_arg", "PH", "ProxyableClassMeta", "CodeGen"]
