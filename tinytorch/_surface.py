"""The Tensor surface, built in one place from the op declarations.

Op modules declare each op's spellings where the op is written: the ``torch.*`` function is the module's public
function, and ``@method("name")`` (``tinytorch/_ops/_util.py``) declares the Tensor method, into the registry
``TENSOR_METHODS``; ``tinytorch/_variants.py`` declares the other spellings PyTorch has (aliases, in-place
``op_`` variants, ``torch.op_`` functions). ``install`` runs once, from ``tinytorch/__init__.py`` after every op
module is loaded: it sets every declared method on ``Tensor``, then gives every public function and method the
NumPy keyword spellings (``axis=``, ``keepdims=``) PyTorch's argument parser accepts. A name declared twice for
different functions fails at its declaration, so no import order decides which one wins. Once every namespace
exists (the end of ``tinytorch/__init__.py``), ``translate_namespace_errors`` gives their public functions
PyTorch's exception types for bad arguments that trip Python code before any op's check.
"""
from . import _dtype as _dt
from . import autograd
from ._ops._util import TENSOR_METHODS
from ._ops.creation import empty, tensor
from ._print import tensor_repr
from ._tensor import Tensor, _new
from .serialization import _rebuild

# Tensor methods that need the layers above the Tensor data model (factories, the autograd API, printing,
# pickling): written here, installed with the op methods.


def _tensor_new(cls, *args, **kwargs):
    """``Tensor(data)`` / ``Tensor(*sizes)``: the legacy constructor (a copy of ``data``, or uninitialised)."""
    if len(args) == 1 and not isinstance(args[0], int):
        src = tensor(args[0], dtype=_dt.get_default_dtype() if not isinstance(args[0], Tensor) else None)
    else:
        src = empty(*args, **kwargs)
    t = _new(src._storage, src._shape, src._stride, src._offset, src.dtype, src._nat, cls)
    return t


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into the ``.grad`` of the graph's leaves. See ``autograd.backward``."""
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _repr(self):
    return tensor_repr(self)


def _reduce_ex(self, proto):
    return (_rebuild, (self.detach().numpy(force=True).copy(), self.dtype.name, self.requires_grad))


def _as_subclass(self, cls):
    """``self``'s memory as an instance of ``cls`` (a Tensor subclass), still attached to the autograd graph
    (``Tensor.as_subclass``). TypeError, as PyTorch's, for a class that does not inherit from Tensor."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    from .overrides import DisableTorchFunctionSubclass
    with DisableTorchFunctionSubclass():
        out = Tensor.view_as(self, self) if self.requires_grad else \
            _new(self._storage, self._shape, self._stride, self._offset, self.dtype, self._nat)
    out.__class__ = cls
    from .overrides import _instance_made
    _instance_made(cls)
    return out


def _untyped_storage(self):
    """The bytes of the memory this tensor views (``torch.UntypedStorage``); ``data_ptr()`` and ``nbytes()`` are
    those of the whole storage, shared by every view of it."""
    from .storage import UntypedStorage
    return UntypedStorage._wrap(self._storage)


def _typed_storage(self):
    from .storage import TypedStorage, UntypedStorage
    return TypedStorage._wrap(UntypedStorage._wrap(self._storage), self.dtype)


def _storage_method(self):
    """The memory this tensor views as elements of its dtype (``torch.TypedStorage``, deprecated in PyTorch, which
    warns once, as this does)."""
    from .storage import _warn_typed_storage_removal
    _warn_typed_storage_removal()
    return _typed_storage(self)


def _is_pinned(self, device=None):
    """Whether this host tensor is in page-locked memory: tinytorch allocates none, so False."""
    return False


def _pin_memory(self, device=None):
    """A copy in page-locked host memory, for fast copies to an accelerator. tinytorch's accelerators copy from
    ordinary host memory, so with an accelerator this is a copy; without one, RuntimeError as PyTorch's."""
    from . import accelerator
    if not accelerator.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self.clone()


def _init_subclass(cls, **kwargs):
    from .overrides import _subclass_defined
    _subclass_defined(cls)


def _install_torch_function():
    from .overrides import tensor_torch_function
    Tensor.__torch_function__ = classmethod(tensor_torch_function)
    Tensor.__init_subclass__ = classmethod(_init_subclass)


_UPPER = {"__new__": staticmethod(_tensor_new), "backward": _backward, "__repr__": _repr, "__reduce_ex__": _reduce_ex,
          "as_subclass": _as_subclass, "is_pinned": _is_pinned, "pin_memory": _pin_memory,
          "untyped_storage": _untyped_storage, "storage": _storage_method, "_typed_storage": _typed_storage}


def install(torch_namespace):
    """Set every declared Tensor method, then add the NumPy keyword spellings. Raises RuntimeError when a
    declared method would replace one written in ``Tensor``'s class body (two definitions of one name)."""
    own = vars(Tensor)
    for name, fn in TENSOR_METHODS.items():
        if name in own and own[name] is not fn:
            raise RuntimeError(f"Tensor.{name} is written in tinytorch/_tensor.py and declared by "
                               f"{fn.__module__}.{fn.__qualname__}")
        setattr(Tensor, name, fn)
    for name, fn in _UPPER.items():
        setattr(Tensor, name, fn)
    _install_torch_function()
    _alias_numpy_kwargs(torch_namespace)


# ---- NumPy-style keyword spellings --------------------------------------------------------------------------
# PyTorch's argument parser accepts ``axis=`` for any parameter named ``dim`` and ``keepdims=`` for ``keepdim``
# in every native function (``torch.*``, ``Tensor.*``, ``torch.linalg/special/fft.*``). Functions that PyTorch
# writes in Python do not get the aliases; these are they (by namespace).
_NUMPY_KW = {"axis": "dim", "keepdims": "keepdim"}
_NO_NUMPY_KW = {"torch": {"norm", "split", "unique", "unique_consecutive", "stft", "istft"},
                "Tensor": {"norm", "split", "unflatten", "unique", "unique_consecutive", "stft", "istft"}}


def _with_numpy_kwargs(fn, qualname):
    """``fn`` accepting ``axis=`` / ``keepdims=`` for its ``dim`` / ``keepdim`` parameters (PyTorch's
    ``numpy_compatibility_arg_names``); giving both spellings is a TypeError, as in PyTorch."""
    import functools
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    renames = {a: d for a, d in _NUMPY_KW.items() if d in params and a not in params
               and params[d].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    if not renames:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for alias, name in renames.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{qualname}() got an unexpected keyword argument '{alias}'")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)
    return wrapper


def _alias_numpy_kwargs(torch_namespace):
    """Give every public function of the torch, linalg, special and fft namespaces and every Tensor method
    the NumPy keyword spellings (one pass at import, so no op needs its own ``axis`` parameter)."""
    import types
    from . import fft, linalg, special
    for ns, label in ((torch_namespace, "torch"), (linalg, "linalg"), (special, "special"), (fft, "fft")):
        skip = _NO_NUMPY_KW.get(label, ())
        d = vars(ns)
        for name, fn in list(d.items()):
            if name.startswith("_") or name in skip or not isinstance(fn, types.FunctionType):
                continue
            setattr(ns, name, _with_numpy_kwargs(fn, name))
    skip = _NO_NUMPY_KW["Tensor"]
    for name, fn in list(vars(Tensor).items()):
        if name.startswith("_") or name in skip or not isinstance(fn, types.FunctionType):
            continue
        setattr(Tensor, name, _with_numpy_kwargs(fn, f"Tensor.{name}"))


# ---- PyTorch's exception types for the public functions ---------------------------------------------------------
# ``tinytorch.overrides`` sets this to its handler ``f(public_function, args, kwargs)`` once a Tensor subclass or a
# mode uses the ``__torch_function__`` protocol (it returns NotImplemented when the call is not routed); None until
# then, so the normal path pays one global read.
_torch_function_hook = None


# Parameters with a bool default that PyTorch does not read as a bool itself: its Python code only tests their
# truth (``if inplace:``), so any value is accepted there and must be here too.
_TRUTH_TESTED = frozenset({"inplace", "return_indices", "antialias", "hard", "return_complex", "onesided",
                           "normalized", "center", "recompute_scale_factor", "align_corners", "_stacklevel",
                           "is_causal", "need_weights", "average_attn_weights", "batch_first", "size_average",
                           "reduce", "full", "log_target", "check_finite", "strict", "out"})


def _bool_parameters(fn):
    """(position, name) of ``fn``'s parameters whose default is a bool: PyTorch's argument parser reads those
    as ``bool`` and refuses any other type (``keepdim='yes'``, ``ceil_mode=None``); position is None for a
    keyword-only one."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    out = []
    for i, p in enumerate(params):
        if type(p.default) is bool and p.name not in _TRUTH_TESTED and \
                p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            out.append((i if p.kind is p.POSITIONAL_OR_KEYWORD else None, p.name))
    return tuple(out)


# PyTorch's Scalar parameters (a number of any kind): an int outside int64 is an OverflowError there, where an
# ``int`` parameter (a dim, a count, an offset) gives ValueError "Overflow when unpacking long long"
_SCALAR_PARAMETERS = frozenset({"other", "alpha", "beta", "value", "fill_value", "min", "max", "exponent", "self",
                                "input", "start", "end", "step", "threshold", "lambd", "scalar", "tensor1",
                                "tensor2", "weight", "p", "lower", "upper", "base", "lr", "eps", "momentum",
                                "weight_decay", "dampening"})


def _parameter_names(fn):
    """The names of ``fn``'s positional parameters, then ``"*name"`` for its ``*name`` parameter if it has one."""
    import inspect
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)) + \
        tuple("*" + p.name for p in params if p.kind is p.VAR_POSITIONAL)


def _check_int64(args, kwargs, names, fname=""):
    """PyTorch's error for a Python int outside int64 given as an argument: its argument parser converts every
    int to a 64-bit one before the function runs. Ints in a ``*sizes`` parameter are PyTorch's int list, whose
    unpacking error is a TypeError."""
    var = names[-1] if names and names[-1][:1] == "*" else None
    for i, v in enumerate(args):
        if v.__class__ is int and not -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
            if var is not None and i >= len(names) - 1:
                raise TypeError(f"{fname}(): argument '{var[1:]}' failed to unpack the object at pos "
                                f"{i - len(names) + 2} with error \"Overflow when unpacking long long\"")
            _int64_error(names[i] if i < len(names) else "", v, fname)
    for k, v in kwargs.items():
        if v.__class__ is int and not -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
            _int64_error(k, v, fname)


# ``start``/``end``/``step`` are Scalars only in the range factories; elsewhere (narrow, slice_scatter,
# unfold) they are int64 (SymInt) parameters
_RANGE_PARAMETERS = frozenset({"start", "end", "step"})
_RANGE_FACTORIES = frozenset({"arange", "range", "linspace", "logspace"})


# scatter's third argument is a Tensor src or a Number value (one overload each)
_SCALAR_SRC = frozenset({"scatter", "scatter_"})


def _int64_error(name, v, fname=""):
    if name in _SCALAR_PARAMETERS and (name not in _RANGE_PARAMETERS or fname in _RANGE_FACTORIES) or \
            name == "src" and fname in _SCALAR_SRC:
        if 0 < v < 0x10000000000000000:
            return  # a Scalar also holds a uint64: PyTorch accepts 2**63 <= v < 2**64 there
        raise OverflowError("int too big to convert" if v > 0 else "can't convert negative int to unsigned")
    raise ValueError("Overflow when unpacking long long")


def _check_bools(name, bools, args, kwargs, offset):
    for i, pname in bools:
        if i is not None and i < len(args):
            v = args[i]
        elif pname in kwargs:
            v = kwargs[pname]
        else:
            continue
        if v.__class__ is not bool:
            where = f" (position {i + 1 - offset})" if i is not None and i < len(args) else ""
            raise TypeError(f"{name}(): argument '{pname}'{where} must be bool, not {type(v).__name__}")


def translated_errors(fn, name=None, method=False, native=True):
    """``fn`` raising PyTorch's exceptions where its Python code trips over a bad argument before any op's
    check runs: an AttributeError on a non-tensor argument (``mm(x, 1.5)`` reads ``1.5.ndim``) becomes
    TypeError naming the function and the position, and NumPy's MemoryError (or its ValueError for a size
    that overflows) becomes PyTorch's allocation RuntimeError. A parameter with a bool default must get a bool
    (TypeError otherwise, as PyTorch's argument parser). ``method``: ``fn`` is a Tensor method (positions in
    messages do not count ``self``). ``native``: PyTorch's own function is native, so every int argument must
    fit int64 (``nn.functional``'s are Python code that passes some arguments on unread). One extra call frame;
    the failure paths run only once something was raised."""
    import functools
    name = name or getattr(fn, "__name__", "function")
    # a function that words its own argument errors (PyTorch's "invalid combination of arguments" for an
    # overloaded signature) says ``_parses_arguments``: it checks its bools itself
    bools = () if getattr(fn, "_parses_arguments", False) else _bool_parameters(fn)
    offset = 1 if method else 0
    names = _parameter_names(fn) if native else None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _torch_function_hook is not None:
            r = _torch_function_hook(wrapper, args, kwargs)
            if r is not NotImplemented:
                return r
        if bools:
            _check_bools(name, bools, args, kwargs, offset)
        if names is not None:
            _check_int64(args, kwargs, names, name)
        try:
            return fn(*args, **kwargs)
        except (AttributeError, TypeError) as e:
            from .overrides import _after_failure
            r = _after_failure(wrapper, args, kwargs)  # a tensor-like argument with __torch_function__
            if r is not NotImplemented:
                return r
            if not isinstance(e, AttributeError):
                raise
            from ._dispatch import argument_type_error
            err = argument_type_error(name, args[offset:], kwargs, getattr(e, "obj", e))
            if err is not None:
                raise err from None
            raise
        except (MemoryError, ValueError) as e:
            from ._storage import translate_alloc_error
            err = translate_alloc_error(e)
            if err is None:
                raise
            raise err from None
    wrapper._translated = True
    return wrapper


def translate_namespace_errors(*namespaces):
    """Wrap every public function of ``namespaces`` (modules) and every public Tensor method with
    ``translated_errors``, once: the last step of building the surface, run by ``tinytorch/__init__.py`` once
    every namespace exists."""
    import types
    for ns in namespaces:
        for name, fn in list(vars(ns).items()):
            if name.startswith("_") or not isinstance(fn, types.FunctionType) or getattr(fn, "_translated", False):
                continue
            mod = getattr(fn, "__module__", "") or ""
            if not mod.startswith("tinytorch"):
                continue  # re-exported helpers of other libraries (math, numpy) are left alone
            if mod != ns.__name__ and not any(part.startswith("_") for part in mod.split(".")):
                # a re-export of another public module's function (``tinytorch.vmap`` is ``tinytorch.func.vmap``)
                # stays that very object; transforms also run user code, whose own errors are not translated
                continue
            setattr(ns, name, translated_errors(fn, name, native=not ns.__name__.endswith("nn.functional")))
    for name, fn in list(vars(Tensor).items()):
        # the public methods; operators (``__add__``) and the hot properties stay one frame
        if name.startswith("_") or not isinstance(fn, types.FunctionType) or getattr(fn, "_translated", False) or \
                name in _UNTRANSLATED_METHODS:
            continue
        setattr(Tensor, name, translated_errors(fn, name, method=True))


# methods that take no tensor argument and run per step in training loops: kept without the extra frame
_UNTRANSLATED_METHODS = frozenset({"dim", "size", "numel", "item", "tolist", "numpy", "data_ptr", "stride",
                                   "is_contiguous", "element_size", "storage_offset", "backward", "register_hook",
                                   "requires_grad_", "detach", "detach_", "retain_grad", "zero_", "__init__"})


def pickle_by_public_name(*namespaces):
    """Give each public function of ``namespaces`` (modules) that pickle cannot find by its ``__module__`` and
    ``__qualname__`` (a wrapper from this module keeps the wrapped function's, which names the unwrapped function
    in ``tinytorch/_ops``) the namespace and the public name instead: pickle stores a function by reference, so a
    module holding ``F.relu`` pickles, as with torch's functions. The first namespace that exposes a function
    names it. Run last, once every wrapper is in place."""
    import importlib
    import types
    for ns in namespaces:
        for name, fn in list(vars(ns).items()):
            if name.startswith("_") or not isinstance(fn, types.FunctionType):
                continue
            mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
            try:
                found = importlib.import_module(mod)
                for part in qual.split("."):
                    found = getattr(found, part)
            except (ImportError, AttributeError, TypeError, ValueError):
                found = None
            if found is not fn and (mod or "").startswith("tinytorch"):
                fn.__module__, fn.__qualname__ = ns.__name__, name
