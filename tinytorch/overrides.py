"""``torch.overrides``: the ``__torch_function__`` protocol, for Tensor subclasses, tensor-like objects and modes.

An argument whose type defines ``__torch_function__`` (every Tensor subclass inherits ``Tensor.__torch_function__``
unless it sets ``_disabled_torch_function_impl``, as ``nn.Parameter`` does), or an active ``TorchFunctionMode``,
routes a public function or Tensor method to ``__torch_function__(func, types, args, kwargs)``: the mode first
(innermost), then the arguments' types, subclasses before their bases, else left to right. The default
``Tensor.__torch_function__`` runs ``func`` with subclass dispatch disabled and returns tensors as the subclass.

What it costs, and where it is checked: a plain ``Tensor``'s methods are the methods themselves until a mode is
entered (then every method is wrapped until the last mode exits); a dispatchable subclass gets the wrapped methods
in its own class dictionary when it is defined; the public functions of the ``torch`` namespaces read one global
(``tinytorch._surface._torch_function_hook``), set once the first dispatchable subclass or mode exists. A
non-Tensor object with ``__torch_function__`` passed to a public function is found when the function fails on it.
Properties (``shape``, ``grad``) are not routed. Source: PyTorch's ``torch/overrides.py`` and its "Extending
torch with a Tensor-like type" notes.
"""
import functools

from ._tensor import Tensor

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "handle_torch_function",
           "TorchFunctionMode", "is_tensor_like", "is_tensor_method_or_property"]


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """``torch._C._disabled_torch_function_impl``: as a class's ``__torch_function__``, it opts the class out of
    the protocol (its instances are treated as plain tensors)."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


class _State:
    subclass_disabled = False  # inside DisableTorchFunctionSubclass: only modes dispatch
    all_disabled = False  # inside DisableTorchFunction: nothing dispatches
    modes = []


_state = _State()


def _dispatchable(obj):
    tf = getattr(type(obj), "__torch_function__", None)
    return tf is not None and type(obj) is not Tensor and getattr(tf, "__func__", tf) is not _disabled_torch_function_impl


def _overloaded_args(args, kwargs):
    """The distinct arguments whose types dispatch, subclasses before their bases, else in argument order (list and
    tuple arguments are looked into, one level deep)."""
    found, types = [], []

    def see(a):
        if type(a) is Tensor or a is None or type(a) in (int, float, bool, str) or not _dispatchable(a):
            return
        t = type(a)
        if t in types:
            return
        at = len(found)
        for i, other in enumerate(types):
            if issubclass(t, other):
                at = i
                break
        found.insert(at, a)
        types.insert(at, t)

    for a in args:
        if isinstance(a, (list, tuple)):
            for b in a:
                see(b)
        else:
            see(a)
    for a in kwargs.values():
        see(a)
    return found


def _run_handlers(func, overloaded, args, kwargs):
    types = tuple(type(a) for a in overloaded)
    if _state.modes and not _state.all_disabled:
        mode = _state.modes.pop()
        try:
            result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            _state.modes.append(mode)
        if result is not NotImplemented:
            return result
    for a in overloaded:
        result = type(a).__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(func, "__name__", str(func))
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in overloaded]}")


def _should_dispatch(args, kwargs):
    """(dispatch?, overloaded arguments) for a call now."""
    if _state.all_disabled:
        return False, ()
    overloaded = () if _state.subclass_disabled else _overloaded_args(args, kwargs)
    return bool(_state.modes) or bool(overloaded), overloaded


def _namespace_hook(func, args, kwargs):
    """What a public function's wrapper calls while the protocol is in use: the handlers' result, or
    NotImplemented to run the function itself."""
    go, overloaded = _should_dispatch(args, kwargs)
    if not go:
        return NotImplemented
    return _run_handlers(func, overloaded, args, kwargs)


def _after_failure(func, args, kwargs):
    """A public function failed: if a non-Tensor argument implements ``__torch_function__``, its handler's result
    (a tensor-like duck type is only found this way); else NotImplemented."""
    if _state.all_disabled or _state.subclass_disabled:
        return NotImplemented
    overloaded = [a for a in _overloaded_args(args, kwargs) if not isinstance(a, Tensor)]
    if not overloaded:
        return NotImplemented
    return _run_handlers(func, overloaded, args, kwargs)


# ---- Tensor methods ------------------------------------------------------------------------------------------------
# Names that are not routed: construction, pickling, printing and the protocol itself.
_NOT_ROUTED = frozenset({"__new__", "__init__", "__init_subclass__", "__torch_function__", "__reduce_ex__",
                         "__reduce__", "__setstate__", "__getstate__", "__repr__", "__deepcopy__", "__copy__",
                         "__class_getitem__", "__dir__", "__sizeof__", "__hash__", "as_subclass", "__getattr__",
                         "__format__", "__array__", "__array_wrap__", "__dlpack__", "__dlpack_device__",
                         "_native", "_alias", "_from_native", "data_ptr", "__weakref__"})


def _method_wrapper(name, base):
    @functools.wraps(base)
    def method(*args, **kwargs):
        if _state.all_disabled:
            return base(*args, **kwargs)
        go, overloaded = _should_dispatch(args, kwargs)
        if not go:
            return base(*args, **kwargs)
        return _run_handlers(getattr(Tensor, name), overloaded, args, kwargs)
    method._torch_function_base = base
    return method


def _routed_methods():
    import types
    return {n: f for n, f in vars(Tensor).items()
            if n not in _NOT_ROUTED and isinstance(f, types.FunctionType) and not hasattr(f, "_torch_function_base")
            and not (n.startswith("_") and not n.startswith("__"))}


_base_methods = {}


# Who needs the public functions to consult the protocol: an instance of a dispatching subclass has existed, a mode
# is active, or torch.fx is tracing / holds Proxies. The hook is on exactly while one of them does, so defining a
# subclass (``nn.attention.bias.CausalBias`` is one, at import) costs the other functions nothing.
_DISPATCHING = set()  # Tensor subclasses whose __torch_function__ is not the disabled one
_users = {"instances": False, "fx": False}


def _refresh_hook():
    from . import _surface
    on = _users["instances"] or _users["fx"] or bool(_state.modes)
    _surface._torch_function_hook = _namespace_hook if on else None


def _set_fx_active(active):
    """torch.fx: a trace runs or a Proxy is alive (``active``), or neither any more."""
    _users["fx"] = bool(active)
    _refresh_hook()


def _instance_made(cls):
    """An instance of ``cls`` was made (``Tensor.__new__``, ``as_subclass``): a dispatching class turns the hook on
    for good (its instances may live anywhere)."""
    if not _users["instances"] and cls in _DISPATCHING:
        _users["instances"] = True
        _refresh_hook()


def _subclass_defined(cls):
    """``Tensor.__init_subclass__``: a class that dispatches gets the routed methods it inherits from Tensor."""
    tf = getattr(cls, "__torch_function__", None)
    if getattr(tf, "__func__", tf) is _disabled_torch_function_impl:
        return
    # Tensor's methods as they are now: a class defined while tinytorch is imported (CausalBias) comes before the
    # surface has wrapped them with their argument checks
    for name, base in _routed_methods().items():
        if getattr(cls, name, None) is base:
            setattr(cls, name, _method_wrapper(name, base))
    _DISPATCHING.add(cls)


def _push_mode(mode):
    if not _state.modes:
        # the methods to put back when the last mode is popped: Tensor's as they are now (a copy taken earlier
        # could predate the surface's wrappers, and popping would then drop their argument checks)
        _base_methods.clear()
        _base_methods.update(_routed_methods())
        for name, base in _base_methods.items():
            setattr(Tensor, name, _method_wrapper(name, base))
    _state.modes.append(mode)
    _refresh_hook()


def _pop_mode():
    mode = _state.modes.pop()
    if not _state.modes:
        for name, base in _base_methods.items():
            setattr(Tensor, name, base)
    _refresh_hook()
    return mode


from . import _tensor as _tensor_module  # noqa: E402
_tensor_module._subclass_instance_made = _instance_made


# ---- public API -----------------------------------------------------------------------------------------------------
class DisableTorchFunctionSubclass:
    """``torch._C.DisableTorchFunctionSubclass``: inside, arguments' ``__torch_function__`` are not consulted
    (modes still are); what a ``__torch_function__`` uses to run the real function."""

    def __enter__(self):
        self._prev = _state.subclass_disabled
        _state.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        _state.subclass_disabled = self._prev
        return False


class DisableTorchFunction:
    """``torch._C.DisableTorchFunction``: inside, neither arguments nor modes are consulted."""

    def __enter__(self):
        self._prev = _state.all_disabled
        _state.all_disabled = True
        return self

    def __exit__(self, *exc):
        _state.all_disabled = self._prev
        return False


class TorchFunctionMode:
    """A context manager that sees every public tinytorch function and Tensor method called inside it.

    Subclass it and define ``__torch_function__(self, func, types, args=(), kwargs=None)``; inside the handler the
    mode is inactive, so calling ``func(*args, **kwargs)`` runs the function (or the next outer mode). Modes nest.
    """

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _pop_mode()
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _get_current_function_mode():
    return _state.modes[-1] if _state.modes else None


def _get_current_function_mode_stack():
    return list(_state.modes)


def _is_torch_function_mode_enabled():
    return bool(_state.modes) and not _state.all_disabled


def has_torch_function(relevant_args):
    """True when a call with ``relevant_args`` (an iterable) would be routed to a ``__torch_function__``: a mode is
    active or an argument's type dispatches (exact Tensors and Parameters do not)."""
    return _should_dispatch(tuple(relevant_args), {})[0]


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Route ``public_api(*args, **kwargs)`` to the ``__torch_function__`` of the mode or of ``relevant_args``
    (call only when ``has_torch_function(relevant_args)``); TypeError when every handler returns NotImplemented."""
    overloaded = () if _state.subclass_disabled else _overloaded_args(tuple(relevant_args), {})
    return _run_handlers(public_api, overloaded, args, kwargs)


def is_tensor_like(inp):
    """True for a Tensor (or subclass) or an object whose type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    """True for a function that is a Tensor method or a property getter of Tensor."""
    return func in vars(Tensor).values() or getattr(func, "__name__", None) == "__get__"


def _convert(ret, cls):
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(_convert(r, cls) for r in ret) if not hasattr(ret, "_fields") else \
            type(ret)(*(_convert(r, cls) for r in ret))
    return ret


def tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch disabled and return tensors as ``cls``
    (NotImplemented when another argument's type is not a ``cls`` base, so that type's handler runs)."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
        return _convert(ret, cls)
