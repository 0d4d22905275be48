"""``torch.fx.graph``: the Graph, an ordered list of Nodes, and the Python code it generates.

A Graph is a doubly linked list of Nodes around a sentinel ``root`` node; new nodes go at the insert point
(the end, unless ``inserting_before``/``inserting_after`` moved it). ``python_code`` turns the graph into the
source of a ``forward`` function, as PyTorch's FX writes it (same variable names, ``torch.relu(x)`` for free
functions, ``x.view(...)`` for methods, ``a + b`` for operators, ``;  x = None`` after a value's last use), which
``GraphModule`` compiles. Written after PyTorch's ``torch/fx/graph.py``.
"""
import builtins
import copy
import inspect
import keyword
import math
import re
import types
from contextlib import contextmanager

from .node import Node, _fn_name, _get_qualified_name, _type_repr, map_arg

__all__ = ["Graph", "PythonCode", "CodeGen"]

_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)  # generated names must not shadow a builtin

_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}", "truediv": "{} / {}",
    "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}", "lshift": "{} << {}", "rshift": "{} >> {}",
    "and_": "{} & {}", "or_": "{} | {}", "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = {"eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
                 "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}", **reflectable_magic_methods}
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}", "imod": "{} %= {}",
    "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}", "ipow": "{} **= {}", "irshift": "{} >>= {}",
    "isub": "{} -= {}", "itruediv": "{} /= {}", "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


def _custom_builtins():
    # objects whose repr is not valid Python without an import: every generated module gets them as globals
    import tinytorch
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "torch": tinytorch,
            "device": tinytorch.device}


_builtins_added = []


def _reserved(candidate, default):
    # the custom builtins join the reserved names on first use (tinytorch is still importing when this loads)
    if not _builtins_added:
        _illegal_names.update(_custom_builtins())
        _builtins_added.append(True)
    return _illegal_names.get(candidate, default)


def _snake_case(s):
    """``pascalCase`` -> ``pascal_case``, ``ALL_CAPS`` -> ``all_caps`` (node names from targets)."""
    return _snake_case_sub.sub(r"_\1", s).lower()


def _is_magic(x):
    return x.startswith("__") and x.endswith("__")


def _is_from_torch(obj):
    if isinstance(obj, types.ModuleType):
        return False  # ``torch`` itself is a global of the generated code (under the swap, a mirror object)
    module = getattr(obj, "__module__", None)
    if module is not None:
        return module == "tinytorch" or module.startswith("tinytorch.")
    return False


def _format_target(base, target):
    r = base
    for e in target.split("."):
        r = f"{r}.{e}" if e.isidentifier() else f'getattr({r}, "{e}")'
    return r


class _Namespace:
    """Unique names for the values of one graph: each object gets one name, no name twice, and no name shadows
    a builtin or keyword unless it is that very builtin."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _reserved(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        existing = self._obj_to_name.setdefault(obj, name)
        if existing is not name:
            raise AssertionError("obj is already associated")


class _node_list:
    """The nodes of a graph in order (or reversed): iterable, sized, and reversible."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)  # the current node may be erased by the loop body
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _node_list(self.graph, "_next" if self.direction == "_prev" else "_prev")


class PythonCode:
    """What ``Graph.python_code`` returns: ``src`` (the source of ``forward``) and ``globals`` (the objects the
    source names that are not builtins)."""

    def __init__(self, src, globals, _lineno_map=None):
        self.src = src
        self.globals = globals
        self._lineno_map = _lineno_map


class CodeGen:
    """How a graph's inputs and outputs become a function: ``gen_fn_def`` writes the ``def`` line from the
    placeholders, ``generate_output`` the ``return`` line. Subclasses may change the calling convention."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        if len(free_vars) == 0 or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def forward({', '.join(free_vars)}){maybe_return_annotation}:"

    def generate_output(self, output_args):
        return f"return {repr(output_args)}"

    def additional_globals(self):
        return []


class Graph:
    """The ops of a program, in order (see the module docstring). ``owning_module`` is the GraphModule the graph
    belongs to (None while free); ``tracer_cls`` the Tracer class that produced it."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields = {}

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The nodes in order: iterate, ``len()``, ``reversed()``. Erasing the node being visited is allowed."""
        return _node_list(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The nodes with ``op`` (and ``target``, when given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Add a Node at the insert point and return it. ``name`` (else a name made from ``target``) is made
        unique in the graph: ``add``, ``add_1``, ..."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def erase_node(self, to_erase):
        """Remove ``to_erase`` from the graph. RuntimeError if other nodes still use it."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    @contextmanager
    def _insert_point(self, insert):
        old, self._insert = self._insert, insert
        try:
            yield
        finally:
            self._insert = old

    def inserting_before(self, n=None):
        """Context manager: nodes created inside go just before ``n`` (None: at the start of the graph)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return self._insert_point(n.prepend)

    def inserting_after(self, n=None):
        """Context manager: nodes created inside go just after ``n`` (None: at the end of the graph)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return self._insert_point(n.append)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """An input of the function, named ``name`` (``default_value`` when the caller leaves it out)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """The value of attribute ``qualified_name`` (dotted) of the owning module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """A call of the submodule ``module_name`` (dotted path in the owning module)."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """A call of method ``method_name`` on ``args[0]`` with the rest of ``args``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """A call of the free function ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """The graph's return value (an Argument: Nodes nested in containers)."""
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy ``node`` (from any graph) into this one, its Node arguments mapped through ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = copy.copy(node.meta)
        return new

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy every node of graph ``g`` but its output into this graph; ``val_map`` maps ``g``'s nodes to the
        copies (filled in). Returns the copied output value (and the output node with ``return_output_node``)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if out is not None:
            value, old_out = out
            new_out = g.output(value, type_expr=getattr(old_out, "type", None))
            new_out.meta = copy.copy(old_out.meta)
        return g

    def _target_to_str(self, target):
        if callable(target):
            op = _fn_name(target)
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    # ---- passes ----
    def eliminate_dead_code(self, is_impure_node=None):
        """Erase every node whose value nothing uses and that has no side effect (``Node.is_impure``, or
        ``is_impure_node(node)`` when given), last to first. Returns whether the graph changed."""
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not impure(node) and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph is well formed: each node's arguments are nodes of this graph defined before it, the
        ``users`` bookkeeping agrees, names are unique, ops are legal, module targets exist. RuntimeError if not."""
        seen_names, seen = set(), set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was "
                                       "used as an argument! If you are copying nodes from another graph, make "
                                       "sure to use ``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered\n"
                                       f"{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is not among its users")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            seen.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    obj = self.owning_module
                    for i, atom in enumerate(node.target.split(".")):
                        if not hasattr(obj, atom):
                            seen_qualname = ".".join(node.target.split(".")[:i])
                            raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute "
                                               f"{atom} of {seen_qualname}")
                        obj = getattr(obj, atom)
                    if node.op == "call_module":
                        from ..nn import Module
                        if not isinstance(obj, Module):
                            raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen_qualname} does "
                                               "not reference an nn.Module")

    # ---- printing and code ----
    def __str__(self):
        placeholder_names = []
        return_typename = [""]
        lines = [n.format_node(placeholder_names) for n in self.nodes]
        head = f"graph({', '.join(placeholder_names)}){return_typename[0]}:"
        return "\n".join([head] + ["    " + s for s in lines if s])

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs), as ``torch.fx``'s (which needs the
        ``tabulate`` package: an ImportError naming it when missing)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. Run "
                  "`pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module, *, verbose=False):
        """The graph as Python source of ``forward`` (a ``PythonCode``). ``root_module`` is the name the code uses
        for the module that owns submodules and attributes (``self`` in a GraphModule)."""
        namespace = _Namespace()
        # a fresh namespace holding the node names, so the globals added below cannot take a node's name
        for node in self.nodes:
            namespace._used_names.add(node.name)
            namespace._obj_to_name[node] = node.name
        return self._gen_python_code(root_module, namespace)

    def _gen_python_code(self, root_module, namespace):
        free_vars, body = [], []
        globals_ = {}
        wrapped_fns = {}
        nodes = list(self.nodes)

        device_cls = _custom_builtins()["device"]

        def add_global(name_hint, obj):
            if _is_from_torch(obj) and obj is not device_cls:  # ``device(...)`` is spelt through its global
                return _get_qualified_name(obj)
            name = namespace.create_name(name_hint, obj)
            if name in globals_ and globals_[name] is not obj:
                raise AssertionError(f"Global name {name} already assigned to different object")
            globals_[name] = obj
            return name

        for name, obj in _custom_builtins().items():
            add_global(name, obj)

        def type_repr(o):
            if o == ():
                return "()"
            return add_global(_type_repr(o), o)

        def get_repr(arg):
            if isinstance(arg, Node):
                return repr(arg)
            from .._tensor import Tensor
            import enum
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                name = add_global(_get_qualified_name(type(arg)), type(arg))
                return f"{name}{repr(tuple(arg))}"
            if isinstance(arg, enum.Enum):
                cls = add_global(type(arg).__name__, type(arg))
                return f"{cls}.{arg.name}"
            if isinstance(arg, Tensor):
                return f"torch.Tensor(size={list(arg.size())}, dtype={str(arg.dtype).split('.')[-1]})"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({get_repr(arg[0])},)"
                return "(" + ", ".join(get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                return f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, {get_repr(arg.step)})"
            if isinstance(arg, dict):
                return "{" + ", ".join(f"{get_repr(k)}: {get_repr(v)}" for k, v in arg.items()) + "}"
            from .._dtype import dtype as _dtype
            if isinstance(arg, _dtype):
                return str(arg)
            if isinstance(arg, type):
                return add_global(_type_repr(arg), arg)
            return repr(arg)

        def format_args(args, kwargs):
            res = [get_repr(a) for a in args]
            res.extend(f"{k} = {get_repr(v)}" for k, v in kwargs.items())
            return ", ".join(res)

        # each value is deleted (``x = None``) right after its last use, so memory is freed as early as in eager
        last_use, uses_of = {}, {}
        for node in reversed(nodes):
            for inp in node._input_nodes:
                if inp not in last_use:
                    last_use[inp] = node
                    uses_of.setdefault(node, []).append(inp)

        def delete_unused(user):
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            to_delete = list(uses_of.get(user, []))
            if len(user.users) == 0:
                to_delete.append(user)
            if to_delete:
                body.append(f";  {' = '.join([repr(n) for n in to_delete] + ['None'])}\n")
            else:
                body.append("\n")

        ret_annotation = [""]

        def emit(node):
            ann = "" if node.type is None else f" : {type_repr(node.type)}"
            if node.op == "placeholder":
                default = "" if not node.args else f" = {get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{ann}{default}")
                raw = node.target.replace("*", "")
                if raw != repr(node):
                    body.append(f"{repr(node)} = {raw}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{ann} = {_format_target(get_repr(node.args[0]), node.target)}"
                            f"({format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                mod = getattr(node.target, "__module__", "")
                tname = getattr(node.target, "__name__", "")
                if mod == "_operator" and tname in magic_methods:
                    body.append(f"{repr(node)}{ann} = {magic_methods[tname].format(*(get_repr(a) for a in node.args))}")
                    return
                if mod == "_operator" and tname in inplace_methods:
                    body.append(f"{inplace_methods[tname].format(*(get_repr(a) for a in node.args))};  "
                                f"{repr(node)}{ann} = {get_repr(node.args[0])}")
                    return
                gname = add_global(_get_qualified_name(node.target), node.target)
                if (gname == "getattr" and isinstance(node.args, tuple) and len(node.args) == 2
                        and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                    body.append(f"{repr(node)}{ann} = {_format_target(get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{ann} = {gname}({format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(gname)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{ann} = {_format_target(root_module, node.target)}"
                            f"({format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{ann} = {_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    ret_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self._codegen.generate_output(_ReprAs(get_repr(node.args[0]))))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        for node in nodes:
            emit(node)
            delete_unused(node)
        if not body:
            body.append("pass\n")
        if wrapped_fns:
            from ._symbolic_trace import wrap
            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
        else:
            wrap_stmts = ""
        for name, value in self._codegen.additional_globals():
            add_global(name, value)
        prologue = self._codegen.gen_fn_def(free_vars, ret_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        return PythonCode(f"\n{wrap_stmts}\n\n{prologue}\n{code}", globals_)


class _ReprAs:
    """A value whose ``repr`` is given text: lets ``CodeGen.generate_output`` receive the output already
    written as source (Nodes by name, torch objects by their qualified names)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text
