"""``torch.fx.interpreter``: run a graph node by node (``Interpreter``) or rebuild it (``Transformer``).

``Interpreter.run(*args)`` executes a GraphModule's graph with one method per node kind (``placeholder``,
``get_attr``, ``call_function``, ``call_method``, ``call_module``, ``output``), so a subclass changes what one
kind does (profiling, shape propagation, replacing ops). ``Transformer`` runs the graph on Proxies instead,
producing a new GraphModule: override a method to emit something else for that node. Written after PyTorch's
``torch/fx/interpreter.py``.
"""
import inspect
from contextlib import contextmanager

from .graph import Graph
from .node import map_aggregate, map_arg
from .proxy import Proxy, _hook_off, _hook_on
from ._symbolic_trace import Tracer

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) node by node. ``env`` maps each node to its value;
    with ``garbage_collect_values`` a value is dropped after its last use."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        if graph is not None:
            self.graph = graph
        else:
            self.graph = self.module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.current_node = None
        if garbage_collect_values:
            last_use, self.user_to_last_uses = {}, {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in last_use:
                        last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the graph with ``args`` as the placeholders' values (``initial_env`` may give some nodes' values
        up front) and return the output's value."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # given by initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    if isinstance(e.args, tuple) and e.args and isinstance(e.args[0], str):
                        e.args = (msg,) + e.args[1:]
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def boxed_run(self, args_list):
        """``run`` with the arguments in a list, which is cleared (so the caller drops its references)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    @contextmanager
    def _set_current_node(self, node):
        old, self.current_node = self.current_node, node
        try:
            yield
        finally:
            self.current_node = old

    def run_node(self, n):
        """Run one node: fetch its argument values and call the method named by its ``op``."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)

    def placeholder(self, target, args, kwargs):
        """The next positional input (all the rest for ``*name``), or the default in ``args``.
        RuntimeError when an input without a default is missing."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed "
                               "in!") from si

    def get_attr(self, target, args, kwargs):
        """The module attribute at dotted path ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        """Call the submodule at dotted path ``target``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        """The graph's return value."""
        return args[0]

    def fetch_attr(self, target):
        """The attribute at dotted path ``target`` of the module. RuntimeError when missing."""
        atoms = target.split(".")
        obj = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n):
        """``n``'s args and kwargs with every Node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """``args`` with each Node replaced by its value in ``env``. RuntimeError for a Node not computed yet."""
        def load(a):
            if a not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {a}! Run Graph.lint() to diagnose "
                                   "such issues")
            return self.env[a]
        return map_arg(args, load)


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, _, __):
        return True


class Transformer(Interpreter):
    """Runs the graph on Proxies, recording a new graph: ``transform()`` returns it as a GraphModule.
    Each node is re-emitted as is unless a subclass overrides its kind's method."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph._codegen = module.graph._codegen
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """The new GraphModule (the original module's attributes, the new graph)."""
        from .graph_module import GraphModule
        _hook_on()
        try:
            result = super().run(enable_io_processing=False)
        finally:
            _hook_off()
        if result is not None:
            new_out = self.new_graph.output(map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a))
            old_out = list(self.graph.nodes)[-1]
            new_out.meta.update(old_out.meta)
        return GraphModule(self.module, self.new_graph)
