"""``torch.fx.proxy``: the Proxy, the stand-in value a traced function computes with.

While a module is traced its inputs are Proxies; every operation on one (an operator, a method call, an attribute
read, a ``torch.*`` function with a Proxy argument) records a Node in the tracer's graph and returns a Proxy for
that Node's value. ``torch.*`` functions see Proxies through the ``__torch_function__`` protocol
(``tinytorch/overrides.py``), whose check before each public function fx switches on only while a trace runs or a
Proxy is alive (see the end of this file). Written after PyTorch's ``torch/fx/proxy.py``.
"""
import dis
import enum
import inspect
import operator

from .. import _surface
from .graph import Graph, magic_methods, reflectable_magic_methods
from .node import Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute", "ParameterProxy"]


class TraceError(ValueError):
    """Raised when traced code does something a symbolic value cannot stand in for (control flow on it,
    iterating it)."""


_BASE_TYPES = []


def _base_types():
    if not _BASE_TYPES:
        from .._dtype import dtype
        from .._tensor import Tensor
        from ..device import device
        _BASE_TYPES.extend((str, int, float, bool, complex, dtype, Tensor, device, range))
    return tuple(_BASE_TYPES)


class TracerBase:
    """What every tracer shares: turning call sites into Nodes (``create_node``/``create_proxy``) and
    arguments into graph Arguments (``create_arg``)."""

    graph: Graph
    record_stack_traces = False
    trace_asserts = False
    proxy_buttons_enabled = True
    scope = None
    module_stack = None

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Add a Node of ``kind`` to the graph (``args``/``kwargs`` already Arguments)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        """The Proxy standing for ``node``'s value."""
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Record a call (``kind``: 'call_function', 'call_method', 'call_module', 'get_attr', 'placeholder',
        'output') of ``target`` with ``args``/``kwargs`` (which may hold Proxies) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise AssertionError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        if self.record_stack_traces and not node.stack_trace:
            node.stack_trace = _user_stack()
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Lower a traced value to a graph Argument: a Proxy to its Node, containers element-wise (dict keys may
        not be Nodes), constants as themselves. NotImplementedError for a value the graph cannot hold."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(e) for e in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _base_types()) or isinstance(a, enum.Enum) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        """``bool(proxy)``: control flow on a traced value; TraceError (a custom tracer may decide instead)."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        """``iter(proxy)``: TraceError (the length of a traced value is unknown)."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or"
                         " as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the"
                         " Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        """``proxy.keys()`` (what ``**proxy`` calls): a recorded ``keys`` method call."""
        return Attribute(obj, "keys")()


def _user_stack():
    import traceback
    frames = [f for f in traceback.extract_stack() if "tinytorch/fx" not in f.filename.replace("\\", "/")]
    return "".join(traceback.format_list(frames[-1:]))


class GraphAppendingTracer(TracerBase):
    """The tracer of a bare ``Proxy(node)``: records into ``node``'s graph."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """A traced value: the result of ``node``. Operations on it record Nodes through ``tracer`` (default: a
    ``GraphAppendingTracer`` of the node's graph) and return Proxies."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node
        _proxy_born()

    def __del__(self):
        _proxy_died()

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # attribute reads are lazy: ``x.view(...)`` records one call_method, not a getattr and a call
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d
        _proxy_born()

    def __deepcopy__(self, memo):
        import copy
        new = Proxy.__new__(Proxy)
        memo[id(self)] = new
        new.__dict__ = copy.deepcopy(self.__dict__, memo)
        _proxy_born()
        return new

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # ``a, b = proxy`` is allowed: the unpacking instruction of the caller gives the length
        frame = inspect.currentframe().f_back
        insts = list(dis.get_instructions(frame.f_code))
        from bisect import bisect_left
        idx = bisect_left(insts, frame.f_lasti, key=lambda i: i.offset)
        if idx < len(insts) and insts[idx].opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(insts[idx].argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        """A public tinytorch function called with a Proxy argument: recorded as a ``call_function`` node of it
        (a Tensor method reached through the protocol as a ``call_method`` node). RuntimeError when Proxies of
        different tracers meet."""
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, Proxy):
                tracers[a.tracer] = None
            return a

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while trying to trace "
                               f"operations {orig_method}")
        tracer = next(iter(tracers))
        from ..overrides import is_tensor_method_or_property
        if is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class Attribute(Proxy):
    """``proxy.attr``: becomes ``proxy.attr(...)`` (one call_method node) when called, or a ``getattr`` node
    when its value is used."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None
        _proxy_born()

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class ParameterProxy(Proxy):
    """The Proxy of a parameter (``param_shapes_constant`` tracing): ``shape``, ``size()``, ``dim()``,
    ``ndim``, ``numel()`` read the real parameter instead of being recorded."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self, dim=None):
        return self.param.size() if dim is None else self.param.size(dim)

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


def _magic(method):
    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", getattr(operator, method), args, kwargs)
    impl.__name__ = method
    return impl


def _reflected(method):
    def impl(self, lhs):
        return self.tracer.create_proxy("call_function", getattr(operator, method), (lhs, self), {})
    impl.__name__ = f"__r{method.strip('_')}__"
    return impl


for _m in magic_methods:
    setattr(Proxy, f"__{_m.strip('_')}__", _magic(_m))
for _m in reflectable_magic_methods:
    setattr(Proxy, f"__r{_m.strip('_')}__", _reflected(_m))
del _m


# ---- how tinytorch's public functions see a Proxy ----------------------------------------------------------
# Proxy implements ``__torch_function__`` (``tinytorch/overrides.py``), as PyTorch's does. The public functions
# consult that protocol before running only while ``tinytorch._surface._torch_function_hook`` is set; fx sets it
# while a trace runs or any Proxy is alive (a Proxy made by hand, ``Proxy(graph.placeholder('x'))``, works with
# ``torch.*`` functions), and clears it afterwards unless the protocol itself needs it (a dispatching Tensor
# subclass or a mode exists), so plain tinytorch code does not pay for the check.
_live = [0]  # Proxies alive
_tracing = [0]  # traces and transforms running


def _hook_needed():
    from ..overrides import _set_fx_active
    _set_fx_active(True)


def _hook_released():
    if _live[0] <= 0 and _tracing[0] <= 0:
        from ..overrides import _set_fx_active
        _set_fx_active(False)


def _hook_on():
    """A trace starts: public functions look for Proxy arguments until the matching ``_hook_off``."""
    _tracing[0] += 1
    _hook_needed()


def _hook_off():
    _tracing[0] -= 1
    _hook_released()


def _proxy_born():
    _live[0] += 1
    _hook_needed()


def _proxy_died():
    try:
        _live[0] = max(_live[0] - 1, 0)
        _hook_released()
    except Exception:  # interpreter shutdown: modules may already be torn down
        pass


def _find_proxy(args, kwargs):
    """The first Proxy inside ``args``/``kwargs`` (looked for through tuples, lists, dicts, slices), else None."""
    found = []

    def see(a):
        if not found and isinstance(a, Proxy):
            found.append(a)
        return a

    map_aggregate(args, see)
    map_aggregate(kwargs, see)
    return found[0] if found else None
