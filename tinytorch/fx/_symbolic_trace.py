"""``torch.fx._symbolic_trace``: the Tracer, ``symbolic_trace`` and ``wrap``.

``Tracer.trace(root)`` runs ``root.forward`` with Proxies for its inputs and records what it does into a Graph.
While it runs, ``nn.Module.__call__`` and ``nn.Module.__getattr__`` are patched (class attributes, restored
afterwards) so a submodule call becomes ``Tracer.call_module`` (a ``call_module`` node for a leaf module, else
its forward traced through) and a parameter read becomes a ``get_attr`` node; functions registered with ``wrap``
(and the ``autowrap`` functions, ``math.*`` by default) are patched in their modules' globals so a call with a
Proxy argument stays one ``call_function`` node. Written after PyTorch's ``torch/fx/_symbolic_trace.py``.
"""
import builtins
import collections
import functools
import inspect
import math
import types
import warnings

from ..nn import Module, Parameter, Sequential
from .._tensor import Tensor
from .graph import Graph
from .proxy import ParameterProxy, TracerBase, _base_types, _find_proxy, _hook_off, _hook_on

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "ProxyableClassMeta"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

# (id(globals dict), function name) -> globals dict, filled by ``wrap`` at module import time
_wrapped_fns_to_patch = {}


def _assert_is_none(value, msg):
    """The check a ``concrete_args`` entry of None leaves in the graph. AssertionError when ``value`` is not None."""
    assert value is None, msg


class _PH:
    """``PH``: a placeholder value in ``concrete_args`` (that part of the argument stays an input)."""

    def __repr__(self):
        return "PH"


PH = _PH()


class ProxyableClassMeta(type):
    """Metaclass whose instances' construction is recorded when an argument is a Proxy (the class itself
    becomes the ``call_function`` target)."""

    def __call__(cls, *args, **kwargs):
        p = _find_proxy(args, kwargs)
        if p is not None:
            return p.tracer.create_proxy("call_function", cls, args, kwargs)
        return super().__call__(*args, **kwargs)


def _patch_function(fn, nargs):
    # a forward with *args/**kwargs/keyword-only parameters is called with every input positional
    co = fn.__code__
    new_co = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                        co_flags=co.co_flags & ~HAS_VARSTUFF)
    return types.FunctionType(new_co, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


class _Patcher:
    """Attribute patches made for one trace, undone in reverse order on exit; the Proxy hook of tinytorch's
    public functions is switched on meanwhile."""

    def __init__(self):
        self.patches = []
        self.visited = set()

    def __enter__(self):
        return self

    def patch(self, frame_dict, name, new_fn, deduplicate=True):
        new_fn.__fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches.append(("del", frame_dict, name, None))
        elif getattr(frame_dict[name], "__fx_already_patched", False):
            return
        else:
            self.patches.append(("set", frame_dict, name, frame_dict[name]))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        new_fn.__fx_already_patched = deduplicate
        orig = getattr(cls, name)
        if getattr(orig, "__fx_already_patched", False):
            return
        had_own = name in cls.__dict__
        self.patches.append(("attr", cls, name, orig if had_own else _MISSING))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        if id(thing) in self.visited:
            return False
        self.visited.add(id(thing))
        return True

    def __exit__(self, *exc):
        while self.patches:
            kind, where, name, orig = self.patches.pop()
            if kind == "del":
                where.pop(name, None)
            elif kind == "set":
                where[name] = orig
            elif orig is _MISSING:
                delattr(where, name)
            else:
                setattr(where, name, orig)
        self.visited.clear()


_MISSING = object()


def _create_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            out.node.meta["is_wrapped"] = True
            return out
        return orig_fn(*args, **kwargs)
    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
        if name not in frame_dict and hasattr(builtins, name):
            orig = getattr(builtins, name)
        else:
            orig = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig))


def _autowrap_check(patcher, frame_dict, function_ids):
    if patcher.visit_once(frame_dict):
        for name, value in list(frame_dict.items()):
            if not name.startswith("_") and callable(value) and id(value) in function_ids:
                patcher.patch(frame_dict, name, _create_wrapped_func(value))


def wrap(fn_or_name):
    """Make a module-level function a leaf of tracing: called with a Proxy argument it is recorded as one
    ``call_function`` node instead of being traced through. Call at module scope, with the function or its
    name (``torch.fx.wrap('len')`` wraps the builtin for that module). Returns its argument.
    NotImplementedError when not called at the top level of a module."""
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if callable(fn_or_name):
        if not hasattr(fn_or_name, "__code__"):
            raise AssertionError("wrap: a callable must be a Python function")
        name = fn_or_name.__code__.co_name
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError("wrap must be called with the name of a function or the function itself")
    _wrapped_fns_to_patch[(id(frame.f_globals), name)] = frame.f_globals
    return fn_or_name


class Tracer(TracerBase):
    """Records a module's (or function's) forward into a Graph (see the module docstring).

    ``autowrap_modules``: modules whose public functions stay leaf calls (default ``(math,)``);
    ``autowrap_functions``: functions that do; ``param_shapes_constant``: parameter shapes are read, not traced.
    Subclasses customise ``is_leaf_module``, ``call_module``, ``create_proxy``, ``create_arg``, ``getattr``.
    """

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {id(v) for m in autowrap_modules for k, v in m.__dict__.items()
                                       if not k.startswith("_") and callable(v)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = None
        self.module_stack = collections.OrderedDict()
        self.num_calls = {}
        self.node_name_to_scope = {}
        self._qualname_counter = collections.defaultdict(int)
        self.traced_func_name = "forward"

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        if self.module_stack:
            node.meta["nn_module_stack"] = collections.OrderedDict(self.module_stack)
        return node

    def get_fresh_qualname(self, prefix):
        """A name ``{prefix}{i}`` not yet an attribute of the root module."""
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    def create_arg(self, a):
        """As ``TracerBase.create_arg``, plus: a parameter, buffer or submodule of the root becomes a ``get_attr``
        node of its path; another tensor constant is stored on the root as ``_tensor_constant{i}`` and read by
        ``get_attr``; a named tuple becomes a call of its class. NameError for a parameter of another module."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", n, (), {})
        elif isinstance(a, Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return self.create_node("call_function", a.__class__, tuple(self.create_arg(e) for e in a), {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m, module_qualified_name):
        """Whether ``m`` is recorded as one ``call_module`` node rather than traced through: tinytorch's own
        ``nn`` modules (PyTorch's ``torch.nn`` ones) except ``Sequential``."""
        mod = type(m).__module__ or ""
        return (mod.startswith("tinytorch.nn") or mod.startswith("torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The dotted path of submodule ``mod`` in the root. NameError when it is not installed there."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """A call of submodule ``m``: a ``call_module`` node for a leaf, else ``forward`` traced through."""
        module_qualified_name = self.path_of_module(m)
        key = module_qualified_name
        self.module_stack[key] = (module_qualified_name, type(m))
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """What ``module.attr`` gives while tracing: for a parameter of the root, a (cached) ``get_attr``
        Proxy; anything else as is."""
        if isinstance(attr_val, Parameter):
            for n, p in self.root.named_parameters():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node, n=n, p=p):
                                return ParameterProxy(self, node, n, p)
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {},
                                                                     proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
        return attr_val

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """The Proxies (and concrete values) ``root_fn`` is called with: a placeholder per parameter, ``*name`` /
        ``**name`` for variadic ones. Returns the function to call (rewritten to take them all positionally when
        it has variadic or keyword-only parameters) and the argument list."""
        fn = inspect.unwrap(root_fn)
        co = fn.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn)
        arg_names = [next(names_iter) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(concrete_args) != len(arg_names):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} "
                                   "concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))

        def placeholder(name):
            return self._proxy_placeholder(name, concrete_args, sig, fn)

        args.extend(placeholder(n) for n in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(placeholder("*" + next(names_iter)))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(placeholder("**" + next(names_iter)))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn):
        if concrete_args is not None and name in concrete_args:
            value = concrete_args[name]
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
            out = self.create_proxy("placeholder", f"{name}_1", default, {})
            if value is PH:
                return out
            # a specialised input stays an input of the graph (the signature is kept), checked against the value
            # the code was specialised for
            import tinytorch
            if type(value) is bool or (type(value) in _base_types() and not isinstance(value, Tensor)):
                tinytorch._assert(out == value,
                                  f"{name} has been specialized to have value {value} but got another value")
            elif value is None:
                self.create_proxy("call_function", _assert_is_none,
                                  (out, f"{name} has been specialized to have value None but got another value"), {})
            else:
                warnings.warn(f"Was not able to add assertion to guarantee correct input {name} to specialized "
                              "function. It is up to the user to make sure that your inputs match the inputs you "
                              "specialized the function with.")
            return value
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=getattr(fn, "__annotations__", {}).get(name, None))

    def trace(self, root, concrete_args=None):
        """Trace ``root`` (an ``nn.Module`` or a function) and return the Graph. ``concrete_args`` (dict by
        parameter name, or tuple) fixes some inputs to values (``PH`` keeps one an input)."""
        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self.root_module_name = root._get_name() if hasattr(root, "_get_name") else type(root).__name__
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        tracer_cls = getattr(self, "__class__", None)
        self.graph = Graph(tracer_cls=tracer_cls)
        if hasattr(fn, "__code__"):
            self.graph._co_fields = {"co_name": fn.__code__.co_name, "co_filename": fn.__code__.co_filename,
                                     "co_firstlineno": fn.__code__.co_firstlineno}
        self.tensor_attrs = {}

        def collect_tensor_attrs(m, prefix):
            for k, v in m.__dict__.items():
                if isinstance(v, Tensor):
                    self.tensor_attrs[v] = ".".join(prefix + [k])
            for k, v in m.named_children():
                collect_tensor_attrs(v, prefix + [k])

        collect_tensor_attrs(self.root, [])
        if not isinstance(fn, types.FunctionType):
            raise AssertionError(f"trace expects a Python function or an nn.Module, got {type(fn)}")
        fn_globals = fn.__globals__
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        parameter_proxy_cache = {}
        orig_getattr = Module.__getattr__
        orig_call = Module.__call__
        tracer = self

        @functools.wraps(orig_getattr)
        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        @functools.wraps(orig_call)
        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)
            _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                            tracer._autowrap_function_ids)
            return tracer.call_module(mod, forward, args, kwargs)

        try:
            with _Patcher() as patcher:
                patcher.patch_method(Module, "__getattr__", module_getattr_wrapper, deduplicate=False)
                patcher.patch_method(Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                _hook_on()
                try:
                    result = fn(*args)
                    self.create_node("output", "output", (self.create_arg(result),), {},
                                     type_expr=fn.__annotations__.get("return", None))
                finally:
                    _hook_off()
        finally:
            self.submodule_paths = None
        return self.graph

    def __deepcopy__(self, memo):
        import copy
        new = object.__new__(type(self))
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if k in ("_autowrap_search", "root") else copy.deepcopy(v, memo)
        return new


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (an ``nn.Module`` or a function) with a default ``Tracer`` and return a ``GraphModule``
    whose generated ``forward`` does what ``root`` did for Proxy-traceable code."""
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
