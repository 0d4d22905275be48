"""``torch.fx.graph_module``: GraphModule, an ``nn.Module`` whose ``forward`` is generated from a Graph.

The module holds the submodules and attributes the graph's ``call_module``/``get_attr`` nodes name (copied from
the traced root, intermediate paths as plain ``Module``s), so it has the root's parameters and state_dict.
Assigning ``.graph`` or calling ``recompile()`` regenerates ``.code`` and ``forward``. Each instance has its own
class (``forward`` is set on it), named after the traced module. Pickling stores the generated code and re-traces
it on load; deepcopy copies the graph. Written after PyTorch's ``torch/fx/graph_module.py``.
"""
import copy
import itertools
import linecache

from ..nn import Module
from .._tensor import Tensor
from ..nn import Parameter
from .graph import Graph, _custom_builtins

__all__ = ["GraphModule"]

_USER_PRESERVED_ATTRIBUTES_KEY = "_user_preserved_attributes"
_next_id = itertools.count()


def _exec_with_source(src, globals):
    # each generated forward gets its own file name in linecache, so tracebacks and inspect show its lines
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals)


def _forward_from_src(src, globals):
    globals_copy = dict(globals)
    _exec_with_source(src, globals_copy)
    fn = globals_copy["forward"]
    del globals_copy["forward"]
    return fn


def _copy_attr(from_module, to_module, target):
    """Install ``from_module``'s attribute at dotted path ``target`` on ``to_module`` (the same object;
    missing intermediate modules are created as plain ``Module``s; a plain tensor becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # the whole subtree is already installed
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    """Install ``from_obj`` at dotted path ``target`` on ``to_module`` (intermediate ``Module``s created)."""
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class _CodeOnlyModule(Module):
    """A Module made of a given ``__dict__`` (the body of a pickled or copied GraphModule)."""

    def __init__(self, body):
        super().__init__()
        self.__dict__ = body


def _deserialize_graph_module(body, src, globals, class_name):
    """Rebuild a pickled GraphModule: its forward from the stored source, its graph by tracing that forward
    with every submodule a leaf."""
    from ._symbolic_trace import Tracer
    forward = _forward_from_src(src, {**_custom_builtins(), **globals})

    class CodeOnlyModule(Module):
        def __init__(self, body):
            super().__init__()
            self.__dict__ = body

    CodeOnlyModule.forward = forward

    class KeepModules(Tracer):
        def is_leaf_module(self, _, __):
            return True

    com = CodeOnlyModule(body)
    tracer = KeepModules()
    graph = tracer.trace(com)
    gm = GraphModule(com, graph, class_name=class_name)
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


class GraphModule(Module):
    """An ``nn.Module`` generated from ``graph`` (see the module docstring).

    ``root``: the module the graph's ``get_attr``/``call_module`` targets are copied from, or a dict from
    target path to object. RuntimeError when a target is missing from a dict root or ``root`` is neither.
    """

    def __new__(cls, *args, **kwargs):
        # a class per instance: ``forward`` is a class attribute (so ``Module.__call__`` finds it) and
        # differs between instances
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError("Node " + str(node) + " referenced target " + node.target
                                           + " but that target was not provided in ``root``!")
                    targets.append(node.target)
            targets.sort(key=lambda t: t.count("."))
            for t in targets:
                _assign_attr(root[t], self, t)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if self.graph._tracer_cls and "<locals>" not in self.graph._tracer_cls.__qualname__:
            self._tracer_cls = self.graph._tracer_cls
        self._tracer_extras = {}
        if self.graph._tracer_extras:
            self._tracer_extras = self.graph._tracer_extras
        self.meta = {}
        self._replace_hooks = []
        self._create_node_hooks = []
        self._erase_node_hooks = []

    __jit_unused_properties__ = ["graph"]

    @property
    def graph(self):
        """The Graph the code is generated from; assigning one regenerates ``code`` and ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of the generated ``forward``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerate ``code`` and ``forward`` from ``graph`` (after editing the graph). Returns the
        ``PythonCode``."""
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def add_submodule(self, target, m):
        """Install module ``m`` at dotted path ``target``, creating plain intermediate Modules. Returns False
        when a path element exists and is not a Module (nothing installed)."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at dotted path ``target``. Returns False when it does not exist or is not a
        Module."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Remove every submodule no ``call_module``/``get_attr`` node reaches (nor any ancestor of one)."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                for i in range(1, len(fullpath) + 1):
                    used.add(".".join(fullpath[:i]))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                        for name, _ in submod.named_modules():
                            if name != "":
                                used.add(node.target + "." + name)
                    except AttributeError:
                        pass
        to_delete = [name for name, _ in self.named_modules() if name not in used and name != ""]
        for name in to_delete:
            self.delete_submodule(name)

    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False):
        """The module as a class definition (its generated ``forward``, nested GraphModules likewise);
        printed when ``print_output``, and returned."""
        verbose = self._readable_code()
        module_code = "\n".join(("    " + line) if line.strip() else "" for line in verbose.lstrip("\n").split("\n"))
        s = f"class {self._get_name()}(torch.nn.Module):\n{module_code}"
        for name, sub in self.named_children():
            if isinstance(sub, GraphModule):
                inner = sub.print_readable(print_output=False)
                s += "\n" + "\n".join("    " + line for line in inner.split("\n")).replace(
                    f"class {sub._get_name()}(", f"class {name}(", 1)
        if print_output:
            print(s)
        return s

    def _readable_code(self):
        # torch's verbose code notes where each run of nodes came from; traces here record no stack traces
        lines = self._code.lstrip("\n").split("\n")
        out, noted = [], False
        for line in lines:
            body = line.strip()
            if line.startswith("    ") and not noted and body and not body.startswith("return") \
                    and not _is_placeholder_line(body, self._graph):
                out.append("    # No stacktrace found for following nodes")
                noted = True
            out.append(line)
        return "\n".join(out)

    def _get_name(self):
        return type(self).__name__

    def __str__(self):
        orig = super().__str__()
        return "\n".join([orig, self._code, "# To see more debug info, please use `graph_module.print_readable()`"])

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        self._deepcopy_init()(res, fake, fake.__dict__["_graph"])
        for attr in ("_state_dict_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                     "_replace_hooks", "_create_node_hooks", "_erase_node_hooks"):
            if attr in self.__dict__:
                setattr(res, attr, copy.deepcopy(self.__dict__[attr], memo))
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        if _USER_PRESERVED_ATTRIBUTES_KEY in res.meta:
            for name, value in res.meta[_USER_PRESERVED_ATTRIBUTES_KEY].items():
                setattr(res, name, value)
        return res

    def _deepcopy_init(self):
        return GraphModule.__init__

    def __reduce__(self):
        body = dict(self.__dict__)
        python_code = self.recompile()
        body.pop("_graph", None)
        reserved = _custom_builtins()
        globals_ = {k: v for k, v in python_code.globals.items() if k not in reserved}
        # as torch's: the rebuilt module's class is named GraphModule, whatever the traced one was called
        return (_deserialize_graph_module, (body, python_code.src, globals_, "GraphModule"))

    def __reduce_ex__(self, proto):
        return self.__reduce__()


def _is_placeholder_line(body, graph):
    for n in graph.nodes:
        if n.op == "placeholder" and body.startswith(f"{n.name} = "):
            return True
    return False
