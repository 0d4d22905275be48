"""``torch.fx.node``: the Node, one operation of an FX Graph, and the helpers that walk its arguments.

A Node is one line of the generated ``forward``: ``op`` is one of ``placeholder`` (a function input),
``get_attr`` (a parameter/buffer/attribute of the root module), ``call_function`` (a free function such as
``torch.relu`` or ``operator.add``), ``call_method`` (a method of its first argument, e.g. ``x.view``),
``call_module`` (a submodule's ``forward``) and ``output`` (the return value). Its ``args``/``kwargs`` may hold
other Nodes, nested in tuples, lists, dicts and slices; every Node knows its ``users`` (the Nodes whose arguments
name it), kept right by the ``args``/``kwargs`` setters. Written after PyTorch's ``torch/fx/node.py``.
"""
import builtins
import operator
import types
from typing import Any, Callable, Dict, Optional, Tuple, Union

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect", "Argument", "Target"]

Target = Union[Callable[..., Any], str]
BaseArgumentTypes = Union[str, int, float, bool, complex, None, slice, range, "Node"]
Argument = Optional[Union[Tuple[Any, ...], list, Dict[str, Any], slice, range, "Node", BaseArgumentTypes]]

_legal_ops = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# functions whose calls must survive dead-code elimination even when nothing reads their result
_side_effectful_functions = set()


def has_side_effect(fn):
    """Mark ``fn`` (returned unchanged) as side-effectful: its ``call_function`` nodes are kept by
    ``Graph.eliminate_dead_code`` even without users."""
    _side_effectful_functions.add(fn)
    return fn


def _find_module_of_method(orig_method):
    name = orig_method.__name__
    module = orig_method.__module__
    if module is not None:
        return module
    import tinytorch
    for guess in (tinytorch, tinytorch.nn.functional):
        if getattr(guess, name, None) is orig_method:
            return guess.__name__
    raise RuntimeError(f"cannot find module for {orig_method}")


def _public_module_name(module):
    # code and printouts name tinytorch's namespaces as PyTorch's, the names the programs we run spell them by
    if module == "tinytorch" or module.startswith("tinytorch."):
        return "torch" + module[len("tinytorch"):]
    return module


def _fn_name(func):
    """The name a function is known by: for tinytorch's public functions the public name ``pickle_by_public_name``
    gave them (an alias such as ``torch.arctan`` wraps the function named ``atan``), else ``__name__``."""
    if (getattr(func, "__module__", None) or "").startswith("tinytorch"):
        q = getattr(func, "__qualname__", "")
        if q and q.isidentifier():
            return q
    return func.__name__


def _get_qualified_name(func):
    """The dotted name ``func`` is reached by in generated code: ``getattr`` for builtins,
    ``torch.Tensor.add`` for Tensor methods, ``torch.relu``, ``operator.add``, ``mymodule.fn``."""
    if getattr(builtins, func.__name__, None) is func:
        return func.__name__
    from .._tensor import Tensor
    if getattr(Tensor, func.__name__, None) is func and isinstance(func, types.FunctionType) \
            and func.__module__.startswith("tinytorch"):
        return f"torch.Tensor.{func.__name__}"
    name = _fn_name(func)
    if name == "<lambda>":
        import inspect
        try:
            name = inspect.getsource(func).split("=")[0].strip()
        except Exception as e:
            raise RuntimeError("Unable to represent lambda") from e
    return f"{_public_module_name(_find_module_of_method(func))}.{name}"


def _type_repr(obj):
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return f"{_public_module_name(obj.__module__)}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    if isinstance(obj, types.FunctionType):
        return obj.__name__
    return repr(obj)


def _format_arg(arg, max_list_len=float("inf")):
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"({items}{',' if len(arg) == 1 else ''}{more})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation of a Graph (see the module docstring for the ``op`` kinds).

    Created by ``Graph.create_node`` (or its ``placeholder``/``call_function``/... helpers), never directly by
    user code. ``name`` is unique in the graph and is the variable the generated code assigns; ``users`` maps
    each Node reading this one to None; ``meta`` is a free dict that passes (``ShapeProp``) fill.
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _legal_ops:
            raise AssertionError(f"Unknown op {op}")
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a str is expected")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a Callable is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self._args = ()
        self._kwargs = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._sort_key = ()
        self._repr_fn = None
        self.meta = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list of the graph's nodes ----
    @property
    def next(self):
        """The Node after this one in the graph's order."""
        return self._next

    @property
    def prev(self):
        """The Node before this one in the graph's order."""
        return self._prev

    def prepend(self, x):
        """Move (or insert) Node ``x`` to just before this one in the graph's order; both must be in one graph."""
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        if self is x:
            raise AssertionError("Cannot prepend a node to itself")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Move (or insert) Node ``x`` to just after this one in the graph's order."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    def __gt__(self, other):
        return self._order() > other._order()

    def __lt__(self, other):
        return self._order() < other._order()

    def __ge__(self, other):
        return self > other or self == other

    def __le__(self, other):
        return self < other or self == other

    def _order(self):
        i, n = 0, self
        while n.op != "root":
            n = n._prev
            i += 1
        return i

    # ---- arguments ----
    @property
    def args(self):
        """The positional arguments (a tuple; Nodes inside stand for their values)."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The keyword arguments (a dict; Nodes inside stand for their values)."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The Nodes this one reads, each once, in the order they appear in ``args`` then ``kwargs``."""
        return list(self._input_nodes.keys())

    def update_arg(self, idx, arg):
        """Set positional argument ``idx`` to ``arg``, keeping ``users`` right."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Insert ``arg`` at position ``idx`` of ``args``, keeping ``users`` right."""
        self.args = self.args[:idx] + (arg,) + self.args[idx:]

    def update_kwarg(self, key, arg):
        """Set keyword argument ``key`` to ``arg``, keeping ``users`` right."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(new_args, self._note_input)
        self._kwargs = map_aggregate(new_kwargs, self._note_input)
        for n in self._input_nodes:
            n.users.setdefault(self)

    def _note_input(self, a):
        if isinstance(a, Node):
            self._input_nodes.setdefault(a)
        return a

    @property
    def stack_trace(self):
        """The user code line that produced this node, when the tracer recorded one (``meta['stack_trace']``)."""
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ---- rewiring ----
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Make every user of this Node read ``replace_with`` instead (those for which ``delete_user_cb(user)``
        holds); returns the list of users changed. With ``propagate_meta`` the meta dict is copied over
        (``replace_with.meta`` must be empty)."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb(user):
                user.replace_input_with(self, replace_with)
                changed.append(user)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Swap every occurrence of Node ``old_input`` in this Node's arguments for ``new_input``."""
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random=True):
        """Whether removing this node could change the program: placeholders, outputs, calls of side-effectful
        functions, and calls of submodules marked ``_is_impure``."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_module":
            root = self.graph.owning_module
            if root is not None:
                return getattr(root.get_submodule(self.target), "_is_impure", False)
        return False

    # ---- printing ----
    def __repr__(self):
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        if hasattr(target, "__module__"):
            name = getattr(target, "__name__", None)
            if name is None:
                return _get_qualified_name(target)
            if target.__module__ == "builtins":
                return f"builtins.{name}"
            if target.__module__ == "_operator":
                return f"operator.{name}"
        return _get_qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None, *, include_tensor_metadata=False):
        """This node as one line of ``str(graph)``, e.g.
        ``%add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})``. With
        ``placeholder_names`` (a list), a placeholder is appended there and None returned instead."""
        if self.op == "placeholder":
            arg_str = self.target
            if self.type:
                arg_str += f": {_type_repr(self.type)}"
            if placeholder_names:
                placeholder_names.append(arg_str)
                return None
            typename = f"{_type_repr(self.type)} " if self.type else ""
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return f"%{self.name} : {typename}[num_users={len(self.users)}] = {self.op}[target={self.target}]{default}"
        if self.op == "get_attr":
            typename = f"{_type_repr(self.type)} " if self.type is not None else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")


def map_arg(a, fn):
    """Apply ``fn`` to each Node in ``a`` (an Argument: Nodes nested in tuples, lists, dicts, slices),
    rebuilding the containers; other values are kept."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a`` (values inside tuples, lists, dicts and slices), rebuilding the
    containers; lists and dicts come back as ``immutable_list`` / ``immutable_dict``, named tuples keep their type."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(e, fn) for e in a)
        return t if not hasattr(a, "_fields") else type(a)(*t)
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


# ``x[i] = v`` on a traced value writes into ``x``, and an assertion checks: both survive dead-code elimination
_side_effectful_functions.add(operator.setitem)


def _register_side_effects():
    import tinytorch
    from ._symbolic_trace import _assert_is_none
    _side_effectful_functions.update((tinytorch._assert, _assert_is_none))
