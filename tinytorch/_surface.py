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


def _native_surface_call():
    from .backends.cpu.native import _C
    return getattr(_C, "surface_call", None) if _C is not None else None


_surface_call = _native_surface_call()


# Parameters with a bool default that PyTorch does not read as a bool itself: its Python code only tests their
# truth (``if inplace:``), so any value is accepted there and must be here too.
_TRUTH_TESTED = frozenset({"inplace", "return_indices", "antialias", "hard", "return_complex", "onesided",
                           "normalized", "center", "recompute_scale_factor", "align_corners", "_stacklevel",
                           "is_causal", "need_weights", "average_attn_weights", "batch_first", "size_average",
                           "reduce", "full", "log_target", "check_finite", "strict", "out"})


def _bool_parameters(fn, native=True):
    """(position, name, kind) of ``fn``'s parameters that PyTorch's argument parser types strictly; position is
    None for a keyword-only one. ``kind`` "bool": the default is a bool, so the parser reads a ``bool`` and
    refuses any other type (``keepdim='yes'``, ``ceil_mode=None``). For a native function (``native``) also
    ``kind`` "Number"/"int"/"float": the default is a number, so the parameter is not optional there and None is
    refused (``alpha=None``, ``dim=None`` where the dim defaults to -1); and "Tensor": a required parameter,
    which no schema lets be None except the ones ``_NONE_ACCEPTED`` names."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return ()
    out = []
    for i, p in enumerate(params):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        pos = i if p.kind is p.POSITIONAL_OR_KEYWORD else None
        d = p.default
        if type(d) is bool:
            if p.name not in _TRUTH_TESTED:
                out.append((pos, p.name, "bool"))
        elif not native or p.name in _NONE_ACCEPTED:
            continue
        elif type(d) in (int, float):
            # the Scalar parameters' type is "Number"; ``step`` is a Scalar only in arange/range, which parse
            # their own arguments, and an int elsewhere (``slice_scatter``)
            out.append((pos, p.name, "Number" if p.name in _SCALAR_PARAMETERS and p.name != "step" and
                        type(d) is int else type(d).__name__))
        elif d is p.empty and pos is not None:
            out.append((pos, p.name, "Tensor"))
    return tuple(out)


# functions whose ``other`` is a Tensor in every PyTorch overload (no Scalar one): None gets the single-type message
_TENSOR_ONLY_OTHER = frozenset({"isclose", "allclose", "equal", "dist", "kron", "dot", "vdot", "mm", "bmm", "matmul",
                                "inner", "outer", "ger", "cross", "mv", "tensordot", "cdist", "copy_", "masked_scatter"})


# parameters of native functions whose schema type is optional although they are required or default to a number
# (``Tensor? weight``, ``float? nan=0.0``): None is a value there
_NONE_ACCEPTED = frozenset({"weight", "bias", "running_mean", "running_var", "fill_value", "generator", "data", "nan",
                            "memory_format", "dtype", "device", "layout", "out"})


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
    for i, pname, kind in bools:
        if i is not None and i < len(args):
            v = args[i]
        elif pname in kwargs:
            v = kwargs[pname]
        else:
            continue
        if kind == "bool" and v.__class__ is not bool or v is None and kind != "bool":
            if pname in ("other", "value") and kind == "Tensor" and name not in _TENSOR_ONLY_OTHER:
                # a Tensor and a Scalar overload: the parser names both
                got = ", ".join(type(a).__name__ for a in args[offset:])
                raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                                f"expected one of:\n * (Tensor {pname})\n * (Number {pname})")
            where = f" (position {i + 1 - offset})" if i is not None and i < len(args) else ""
            raise TypeError(f"{name}(): argument '{pname}'{where} must be {kind}, not {type(v).__name__}")


def translated_errors(fn, name=None, method=False, native=True, out_also=False):
    """``fn`` raising PyTorch's exceptions where its Python code trips over a bad argument before any op's
    check runs: an AttributeError on a non-tensor argument (``mm(x, 1.5)`` reads ``1.5.ndim``) becomes
    TypeError naming the function and the position, and NumPy's MemoryError (or its ValueError for a size
    that overflows) becomes PyTorch's allocation RuntimeError. A parameter with a bool default must get a bool
    (TypeError otherwise, as PyTorch's argument parser). ``method``: ``fn`` is a Tensor method (positions in
    messages do not count ``self``). ``native``: PyTorch's own function is native, so every int argument must
    fit int64 (``nn.functional``'s are Python code that passes some arguments on unread). One extra call frame;
    the failure paths run only once something was raised. With the native kernels, the checks of a call that
    passes them all run in C (``_C.surface_call``, ``csrc/surface.cpp``); this Python wrapper is the reference,
    and takes every other call."""
    import functools
    name = name or getattr(fn, "__name__", "function")
    # a function that words its own argument errors (PyTorch's "invalid combination of arguments" for an
    # overloaded signature) says ``_parses_arguments``: it checks its bools itself
    bools = () if getattr(fn, "_parses_arguments", False) else _bool_parameters(fn, native)
    offset = 1 if method else 0
    names = _parameter_names(fn) if native else None
    out_at = _out_parameter(fn)  # None: no ``out``; -1: keyword-only; else its position
    declared = out_at is not None  # the function sees ``out`` too (to check it before computing, as ``polar``)
    if out_at is None and out_also:
        out_at = -1
    factory = name in _FACTORIES
    # a function that parses its own arguments (linspace's overloads) words its pin_memory errors itself
    pin = name in _PIN_MEMORY and not getattr(fn, "_parses_arguments", False)
    if pin:
        bools = tuple(b for b in bools if b[1] != "pin_memory")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _torch_function_hook is not None:
            r = _torch_function_hook(public, args, kwargs)
            if r is not NotImplemented:
                return r
        if pin and "pin_memory" in kwargs:
            _check_pin_memory(name, kwargs.pop("pin_memory"))
        if bools:
            _check_bools(name, bools, args, kwargs, offset)
        if names is not None:
            _check_int64(args, kwargs, names, name)
        if out_at is not None and (kwargs and "out" in kwargs or len(args) > out_at >= 0):
            args, kwargs, out = _take_out(name, args, kwargs, out_at, factory, declared)
            if out is not None:
                from ._dispatch import write_out
                return write_out(name, out, call(args, kwargs), args + tuple(kwargs.values()))
        return call(args, kwargs)

    def call(args, kwargs):
        try:
            return fn(*args, **kwargs)
        except (AttributeError, TypeError, MemoryError, ValueError) as e:
            return on_error(args, kwargs, e)

    def on_error(args, kwargs, e):
        """PyTorch's exception (or a ``__torch_function__`` handler's result) for ``e``, raised by ``fn``."""
        kwargs = kwargs or {}
        if isinstance(e, (AttributeError, TypeError)):
            from .overrides import _after_failure
            r = _after_failure(public, args, kwargs)  # a tensor-like argument with __torch_function__
            if r is not NotImplemented:
                return r
            if not isinstance(e, AttributeError):
                raise e
            from ._dispatch import argument_type_error
            err = argument_type_error(name, args[offset:], kwargs, getattr(e, "obj", e))
            if err is not None:
                raise err from None
            raise e
        from ._storage import translate_alloc_error
        err = translate_alloc_error(e)
        if err is None:
            raise e
        raise err from None

    public = wrapper
    if _surface_call is not None:
        # the checks in C (_C.surface_call) for a call that passes them all; any other call runs ``wrapper``
        spec = (fn, wrapper, on_error, globals(), tuple((-1 if i is None else i, p, k == "bool") for i, p, k in bools),
                names is not None, -2 if out_at is None else out_at, pin)

        @functools.wraps(fn)
        def public(*args, **kwargs):
            return _surface_call(spec, args, kwargs)
    public._translated = True
    if out_also and _out_parameter(fn) is None:
        import inspect
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
        params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
        public.__signature__ = sig.replace(parameters=params)
    return public


# the functions of ``torch`` whose PyTorch signature takes ``out=`` although tinytorch's Python signature does not
# spell it (the surface adds it: ``_dispatch.write_out`` writes the result, as for the ones that do). Functions
# where only some overloads take it (``sum(x, dim, out=)`` but not ``sum(x, out=)``) spell it themselves or not.
_OUT_ALSO = frozenset({"addcdiv", "addcmul", "addmm", "addmv", "addr", "all", "amax", "amin", "aminmax",
                         "any", "baddbmm", "bernoulli", "bitwise_and", "bitwise_left_shift", "bitwise_not",
                         "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bmm", "bucketize", "ceil",
                         "cholesky", "clamp", "clamp_max", "clamp_min", "clip", "column_stack", "conj_physical",
                         "copysign", "cos", "cosh", "cross", "cummax", "cummin", "cumprod", "cumsum", "deg2rad",
                         "diag", "digamma", "dot", "dstack", "eq", "erf", "erfc", "erfinv", "exp", "exp2",
                         "expm1", "fix", "float_power", "floor", "floor_divide", "fmax", "fmin", "fmod", "frac",
                         "gather", "gcd", "ge", "ger", "greater", "greater_equal", "gt", "heaviside", "histc",
                         "hstack", "hypot", "i0", "index_select", "inner", "inverse", "isin", "isneginf",
                         "isposinf", "kron", "kthvalue", "lcm", "ldexp", "le", "lerp", "less", "less_equal",
                         "lgamma", "log", "log1p", "logaddexp", "logaddexp2", "logcumsumexp", "logical_and",
                         "logical_not", "logical_or", "logit", "logsumexp", "lt", "masked_select",
                         "matrix_power", "maximum", "mean", "minimum", "mm", "mode", "mul", "multinomial",
                         "multiply", "mv", "mvlgamma", "nan_to_num", "nanmean", "nanquantile", "narrow_copy",
                         "ne", "neg", "negative", "nonzero", "normal", "not_equal", "outer", "polygamma", "pow",
                         "quantile", "randint", "randperm", "range", "reciprocal", "remainder", "renorm",
                         "round", "row_stack", "rsqrt", "scatter", "searchsorted", "sgn", "sigmoid", "sign",
                         "signbit", "sin", "sinc", "sinh", "sort", "sqrt", "std", "std_mean", "take_along_dim",
                         "tan", "tanh", "topk", "tril", "triu", "trunc", "var", "var_mean", "vdot", "vstack",
                         "where", "xlogy"})


# the public functions whose PyTorch schema takes ``bool? pin_memory=None`` (native_functions.yaml; not the
# deprecated ``range``, whose Python binding refuses it): the wrapper reads it for every one of them, whether or not
# the function itself names it
_PIN_MEMORY = frozenset({
    "arange", "bartlett_window", "blackman_window", "empty", "empty_like", "empty_strided", "eye", "full",
    "full_like", "hamming_window", "hann_window", "kaiser_window", "linspace", "logspace", "normal", "ones",
    "ones_like", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like", "randperm",
    "scalar_tensor", "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "sparse_bsr_tensor",
    "sparse_bsc_tensor", "sparse_compressed_tensor", "tril_indices", "triu_indices", "zeros", "zeros_like",
    "new_empty", "new_empty_strided", "new_full", "new_ones", "new_zeros"})


def _check_pin_memory(op, pin_memory):
    """``pin_memory`` as PyTorch's factories read it: None and False pin nothing; True needs a pinned-memory
    allocator (an accelerator's), which no tinytorch device has, RuntimeError; another type, TypeError."""
    if pin_memory is not None and pin_memory.__class__ is not bool:
        raise TypeError(f"{op}(): argument 'pin_memory' must be bool, not {type(pin_memory).__name__}")
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
                           "allocator is available on this system.")


# factory functions: the dtype (and device) of an ``out=`` tensor is the result's, unless ``dtype`` is given
_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace", "eye", "rand",
                        "randn", "randint", "randperm"})


def _out_parameter(fn):
    """Where ``fn`` takes ``out``: its position (``torch.norm``'s is positional), -1 for keyword-only, None for
    none."""
    import inspect
    try:
        p = inspect.signature(fn).parameters.get("out")
    except (TypeError, ValueError):
        return None
    if p is None or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
        return None
    return list(inspect.signature(fn).parameters).index("out") if p.kind is p.POSITIONAL_OR_KEYWORD else -1


def _take_out(name, args, kwargs, out_at, factory, declared):
    """The call's arguments and ``out`` (None when not given): the function computes its result and
    ``_dispatch.write_out`` writes it, one rule for every function. A function that ``declared`` ``out`` still gets
    it, to check it before computing (``polar``'s exact dtype); one that did not gets the arguments without it. A
    factory gets ``out``'s dtype and device (PyTorch's factories take them from ``out``); any other function
    refuses ``out`` when a graph would be recorded."""
    if out_at >= 0 and len(args) > out_at:
        out = args[out_at]
        if not declared:
            args = args[:out_at] + (None,) + args[out_at + 1:]
    else:
        out = kwargs["out"]
        if not declared:
            kwargs = dict(kwargs)
            del kwargs["out"]
    if out is None:
        return args, kwargs, None
    if factory:
        if isinstance(out, Tensor):
            kwargs = dict(kwargs)
            if kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype
            if kwargs.get("device") is None:
                kwargs["device"] = out.device
    else:
        from ._dispatch import check_out_grad
        check_out_grad(name, args, kwargs)
    return args, kwargs, out


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
            setattr(ns, name, translated_errors(fn, name, native=not ns.__name__.endswith("nn.functional"),
                                                out_also=ns.__name__ == "tinytorch" and name in _OUT_ALSO))
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
