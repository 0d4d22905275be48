"""``torch.library``: defining operators from Python, over tinytorch's op registry.

An op defined here (``custom_op``, ``Library.define``, ``define``) is an ``Op`` in ``tinytorch._dispatch.OPS``
under its qualified name (``mylib::foo``, ``mylib::foo.out``), reached as ``torch.ops.mylib.foo``. Calls go
through the dispatcher: the arguments are bound to the op's schema (PyTorch's checks and messages), the kernel is
the one registered for the tensors' device type (``register_kernel``, ``Library.impl(name, fn, "CPU")``) or for
every device (``custom_op``'s function, ``CompositeExplicitAutograd``), or a decomposition whose own ops carry
autograd (``CompositeImplicitAutograd``); ``register_fake`` serves ``meta`` tensors. When grad mode is on and an
input requires grad, the call is one autograd node running ``register_autograd``'s backward (without one,
backward raises PyTorch's error). Kernels get tinytorch tensors; inside ``tinytorch.compile`` the ops a kernel
calls are recorded like any other.

Dispatch keys understood by ``Library.impl``: the device keys (``CPU``, ``CUDA``, ``Meta``, ...: a device type's
kernel), ``CompositeExplicitAutograd`` (every device), ``CompositeImplicitAutograd`` (a decomposition),
``Autograd``/``Autograd<Device>`` (a kernel that does its own autograd, called while grad mode is on; the
``autograd.Function`` it uses turns grad mode off, so the op called inside reaches the device kernel). Ops of
namespaces tinytorch implements itself (``aten``, ``prim``) cannot be overridden from here.

Source: https://pytorch.org/docs/stable/library.html
"""
from . import _ops_namespace as _ns
from ._schema import infer_schema, parse_op_name, parse_schema

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract", "register_fake", "register_kernel",
           "register_autograd", "custom_op", "CustomOpDef", "infer_schema", "opcheck"]

_RESERVED = {"prim", "prims", "aten", "at"}
_keep_alive = []  # the libraries made by the module-level functions live as long as the process, as PyTorch's
_DEF_NAMESPACES = set()
_OPDEFS = {}  # qualname -> CustomOpDef


def fallthrough_kernel():
    """A marker for ``Library.impl``: registered for a dispatch key, the key is skipped (its kernel removed) and
    the call falls through to the next kernel."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "XPU": "xpu", "MPS": "mps", "HIP": "hip",
                "XLA": "xla", "PrivateUse1": "privateuseone"}


def _key_target(key):
    """What a dispatch key names in an ``OpRecord``: ('device', type), ('default',), ('composite',),
    ('autograd',). NotImplementedError for keys tinytorch has no counterpart of."""
    if key in _DEVICE_KEYS:
        return ("device", _DEVICE_KEYS[key])
    if key == "CompositeExplicitAutograd":
        return ("default",)
    if key in ("CompositeImplicitAutograd", ""):
        return ("composite",)
    if key == "Autograd" or key.startswith("Autograd") and key[len("Autograd"):] in _DEVICE_KEYS:
        return ("autograd",)
    raise NotImplementedError(f"tinytorch.library: dispatch key {key!r} has no counterpart in tinytorch's "
                              "dispatcher (device keys, CompositeExplicitAutograd, CompositeImplicitAutograd and "
                              "Autograd are understood)")


def _device_key(device_type):
    if device_type == "default":
        return "CompositeExplicitAutograd"
    for k, v in _DEVICE_KEYS.items():
        if v == device_type:
            return k
    if isinstance(device_type, str) and device_type.isidentifier():
        return device_type  # a backend tinytorch registered under that name: its device type is the key
    raise ValueError(f"unknown device type {device_type!r}")


def _is_dispatch_key(typ):
    try:
        _key_target(typ)
        return typ != ""
    except NotImplementedError:
        return False


class Library:
    """A set of op definitions and kernels for namespace ``ns`` (``torch.library.Library``). ``kind``: "DEF"
    (the namespace's one defining library), "FRAGMENT" (more definitions for it) or "IMPL" (kernels only);
    ``dispatch_key`` the default key of ``impl``. ``_destroy()`` (or dropping the object) removes what it
    registered. ValueError for another kind or a DEF/FRAGMENT of a reserved namespace (``aten`` ...)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of "
                    "your definitions in a single TORCH_LIBRARY block.  If you were trying to specify "
                    "implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really "
                    "intended to define operators for a single namespace in a distributed way, you can use "
                    "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._defs = []  # OpRecords it defined
        self._impls = []  # (record, target, previous kernel) it registered
        self._alive = True

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define the op of ``schema`` (``name[.overload](args) -> returns``, without the namespace) in this
        library's namespace; returns its name. RuntimeError for a schema that does not parse (PyTorch's parser
        messages), an invalid ``alias_analysis`` or a name and overload defined already."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        self._check_alive()
        parsed = parse_schema(schema)
        name = parsed.name
        if "::" in name:
            ns = name.split("::")[0]
            if ns != self.ns:
                raise RuntimeError(f"Explicitly provided namespace ({ns}) in schema string does not match namespace "
                                   f"of enclosing TORCH_LIBRARY block ({self.ns}).  Move this definition to the "
                                   "(unique) TORCH_LIBRARY block corresponding to this namespace (and consider "
                                   "deleting the namespace from your schema string.)")
            full = schema
        else:
            full = f"{self.ns}::{schema.lstrip()}"
        rec = _ns.define(full, self)
        self._defs.append(rec)
        return rec.name + (f".{parsed.overload_name}" if parsed.overload_name else "")

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register ``fn`` as the kernel of ``op_name`` (``name[.overload]`` in this namespace, or an
        ``OpOverload``) for ``dispatch_key`` (default: the library's; none: CompositeImplicitAutograd).
        ``fallthrough_kernel`` removes the key's kernel. TypeError when ``fn`` is not callable; RuntimeError when
        the op is not defined, or a kernel exists and ``allow_override`` is False; NotImplementedError for
        ``with_keyset`` (tinytorch has no dispatch key sets) and for ops tinytorch implements itself."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        self._check_alive()
        if with_keyset:
            raise NotImplementedError("tinytorch.library: with_keyset=True needs dispatch key sets, which "
                                      "tinytorch's dispatcher does not have")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        if isinstance(op_name, _ns.OpOverload):
            qual = op_name.name()
        elif isinstance(op_name, str):
            qual = op_name if "::" in op_name else f"{self.ns}::{op_name}"
        else:
            raise RuntimeError(f"impl should be passed either a name or an OpOverload object as the first "
                               f"argument, got {type(op_name)}")
        ns = qual.split("::")[0]
        if ns != self.ns and not isinstance(op_name, _ns.OpOverload):
            raise ValueError(f"This library ({self.ns}) may only register kernels for its own namespace, got {qual}")
        if ns in _RESERVED:
            raise NotImplementedError(f"tinytorch.library: {qual} is one of tinytorch's own ops; its kernels are "
                                      "tinytorch's backends' and cannot be replaced from Python")
        rec = _ns.lookup(qual)
        target = _key_target(dispatch_key)
        prev = _get_kernel(rec, target)
        if prev is not None and not allow_override and fn is not fallthrough_kernel:
            raise RuntimeError(f"This is not allowed since there's already a kernel registered from python "
                               f"overriding {qual.split('::')[1]}'s behavior for {dispatch_key or 'CompositeImplicitAutograd'} "
                               f"dispatch key and {self.ns} namespace.")
        _set_kernel(rec, target, None if fn is fallthrough_kernel else fn)
        self._impls.append((rec, target, prev))

    def _check_alive(self):
        if not self._alive:
            raise AssertionError("Library object has been destroyed")

    def _destroy(self):
        """Remove every op this library defined and every kernel it registered."""
        if not self._alive:
            return
        self._alive = False
        for rec, target, prev in reversed(self._impls):
            _set_kernel(rec, target, prev)
        self._impls.clear()
        for rec in self._defs:
            _ns.undefine(rec)
        self._defs.clear()
        if self.kind == "DEF":
            _DEF_NAMESPACES.discard(self.ns)

    def __del__(self):
        try:
            self._destroy()
        except Exception:  # interpreter shutdown: the modules it needs may be gone
            pass


def _get_kernel(rec, target):
    kind = target[0]
    if kind == "device":
        return rec.fake if target[1] == "meta" and "meta" not in rec.kernels else rec.kernels.get(target[1])
    if kind == "default":
        return rec.kernels.get(None)
    if kind == "composite":
        return rec.composite
    return rec.autograd_kernel


def _set_kernel(rec, target, fn):
    kind = target[0]
    if kind in ("device", "default"):
        key = target[1] if kind == "device" else None
        if fn is None:
            rec.kernels.pop(key, None)
        else:
            rec.kernels[key] = fn
    elif kind == "composite":
        rec.composite = fn
    else:
        rec.autograd_kernel = fn


def _library_for(namespace, lib):
    if lib is not None:
        return lib
    use = Library(namespace, "FRAGMENT")
    _keep_alive.append(use)
    return use


def _qualname_of(op, where):
    if isinstance(op, CustomOpDef):
        return op._qualname
    if isinstance(op, _ns.OpOverload):
        return op.name()
    if isinstance(op, _ns.OpOverloadPacket):
        return op._qualified_op_name
    if isinstance(op, str):
        return op
    raise ValueError(f"{where}(op): expected op to be a CustomOpDef, an OpOverload, or a str, got {type(op)}")


def define(qualname, schema, *, lib=None, tags=()):
    """Define op ``qualname`` (``ns::name``) with ``schema`` (``(Tensor x) -> Tensor``) (``torch.library.define``).
    ValueError when ``qualname`` has no namespace or ``schema`` carries a name."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    ns, name, overload = parse_op_name(qualname)
    if schema.lstrip()[:1] != "(":
        raise ValueError(f"define(qualname, schema, ...): expected schema to look like e.g. \"(Tensor x) -> Tensor\" "
                         f"but got \"{schema}\"")
    use = _library_for(ns, lib)
    use.define(name + (f".{overload}" if overload else "") + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` as the kernel of ``qualname`` for ``types`` (``torch.library.impl``): device types
    ("cpu", "cuda", "default": every device) or dispatch key names, one or a sequence; with ``func`` None, a
    decorator."""
    if isinstance(types, str):
        types = (types,)
    keys = [t if _is_dispatch_key(t) else _device_key(t) for t in types]

    def register(fn):
        qual = _qualname_of(qualname, "impl")
        ns = qual.split("::")[0]
        use = _library_for(ns, lib)
        for k in keys:
            use.impl(qual, fn, k)
        return fn
    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as ``op``'s kernel for ``device_types`` (a device type, a sequence of them, or None: every
    device) (``torch.library.register_kernel``); with ``func`` None, a decorator."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    if device_types is None:
        device_types = "CompositeExplicitAutograd"
    return impl(op, device_types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """Register ``func``, the op's computation on tensors without data (``torch.library.register_fake``): it runs
    for ``meta`` tensors (shapes and dtypes only). With ``func`` None, a decorator. RuntimeError when the op has
    one already and ``allow_override`` is False."""
    qual = _qualname_of(op, "register_fake")

    def register(fn):
        try:
            rec = _ns.lookup(qual)
        except RuntimeError:  # defined by a C++ extension tinytorch cannot load: see _ops_namespace.PENDING_FAKES
            ns, name, overload = parse_op_name(qual)
            _ns.PENDING_FAKES[f"{ns}::{name}.{overload or 'default'}"] = fn
            return fn
        if rec.fake is not None and not allow_override and rec.custom is None:
            raise RuntimeError(f"register_fake(...): the operator {qual} already has an fake impl registered")
        rec.fake = fn
        return fn
    return register if func is None else register(func)


impl_abstract = register_fake  # the name before PyTorch 2.4


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register ``backward(ctx, *grads)`` (and ``setup_context(ctx, inputs, output)``, or with keyword-only
    arguments ``setup_context(ctx, inputs, keyword_only_inputs, output)``) as ``op``'s derivative
    (``torch.library.register_autograd``). RuntimeError, as PyTorch's, for an op that is not functional (it
    mutates an argument or returns nothing)."""
    qual = _qualname_of(op, "register_autograd")
    rec = _ns.lookup(qual)
    _check_functional(rec)
    if any(a.kwarg_only and a.type.startswith("Tensor") for a in rec.schema.arguments):
        raise NotImplementedError(f"register_autograd with kwarg-only Tensor args. In the original definition of "
                                  f"the op, please make your tensors not kwarg-only. Got: {rec.schema}")
    rec.backward, rec.setup_context = backward, setup_context


def _check_functional(rec, owner=None):
    s = rec.schema
    aliased = any(r.alias_info is not None and not r.alias_info.is_write for r in s.returns)
    if s.is_mutable or (not s.returns and not aliased):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {owner or rec} with "
                           f"schema {s}. Please create a functional operator and register an autograd formula "
                           "for that.")


class CustomOpDef:
    """The op ``custom_op`` makes (``torch._library.custom_ops.CustomOpDef``): call it like the function; add a
    kernel per device (``register_kernel``), a fake kernel (``register_fake``) and a derivative
    (``register_autograd``)."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._schema, self._init_fn = namespace, name, schema, fn
        old = _OPDEFS.get(self._qualname)
        if old is not None:  # redefining a custom op replaces it, as PyTorch's
            old._lib._destroy()
        self._lib = Library(namespace, "FRAGMENT")
        self._lib.define(name + schema)
        self._record = _ns.lookup(self._qualname)
        self._record.custom = self
        s = self._record.schema
        if any(a.kwarg_only and a.type.startswith("Tensor") for a in s.arguments):
            self._lib._destroy()
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name}{schema}")
        self._opoverload = getattr(getattr(_ns.ops, namespace), name).default
        _OPDEFS[self._qualname] = self
        self.__name__ = getattr(fn, "__name__", name)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """``fn`` becomes the kernel for ``device_types`` (a device type, a sequence of them, or None: every
        device); a decorator when ``fn`` is None. ValueError, as PyTorch's, for a device kernel of an op without
        tensor arguments and without a ``device`` argument to pick it by."""
        if device_types is not None and not any(a.type.startswith("Tensor") for a in self._record.schema.arguments) \
                and not any(a.type.rstrip("?") == "Device" for a in self._record.schema.arguments):
            raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                             "argument")
        types = [device_types] if device_types is None or isinstance(device_types, str) else list(device_types)

        def inner(f):
            for t in types:
                self._record.kernels[t] = f
            return f
        return inner if fn is None else inner(fn)

    def register_fake(self, fn, /):
        """``fn`` computes the op on tensors without data (``meta`` tensors): output shapes and dtypes."""
        self._record.fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``backward(ctx, *grads)`` returns one gradient per positional input; ``setup_context(ctx, inputs,
        output)`` (with keyword-only arguments: ``setup_context(ctx, inputs, keyword_only_inputs, output)``) saves
        what it needs, at forward time. RuntimeError for an op that mutates its arguments or returns nothing."""
        _check_functional(self._record, self)
        self._record.backward, self._record.setup_context = backward, setup_context


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` an operator ``name`` (``"mylib::foo"``) (``torch.library.custom_op``): a ``CustomOpDef``, an op
    in tinytorch's registry reached as ``torch.ops.mylib.foo``, whose kernel is ``fn`` for ``device_types`` (None:
    every device). ``mutates_args``: the names of the arguments ``fn`` writes, or ``"unknown"``. ``schema``: given,
    or inferred from ``fn``'s annotations (``infer_schema``: ValueError for a missing or unsupported one). With
    ``fn`` None, a decorator. ValueError when ``schema``'s write annotations disagree with ``mutates_args``, or
    ``name`` is not ``namespace::name``."""
    def inner(f):
        schema_str = infer_schema(f, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = name.split("::")
        if schema is not None:
            parsed = parse_schema(schema, allow_no_name=True)
            expected = {a.name for a in parsed.arguments if a.alias_info is not None and a.alias_info.is_write}
            if expected != set(mutates_args):
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {expected}which is "
                                 "different from what was provided to us in `mutates_args`. Please make these "
                                 "consistent.")
        result = CustomOpDef(namespace, opname, schema_str, f)
        result.register_kernel(device_types)(f)
        return result
    return inner if fn is None else inner(fn)


def opcheck(op, args, kwargs=None, *, test_utils=("test_schema", "test_autograd_registration", "test_faketensor"),
            raise_exception=True, atol=None, rtol=None):
    """Check ``op`` (a ``CustomOpDef`` or ``OpOverload`` defined from Python) on a sample call
    (``torch.library.opcheck``); returns ``{test: "SUCCESS" or the exception}``, or raises the first failure when
    ``raise_exception``. Tests: ``test_schema`` (the arguments the schema does not mark as written keep their
    values and versions; outputs do not alias inputs), ``test_autograd_registration`` (with an input requiring
    grad, a device kernel without ``register_autograd`` is an error), ``test_faketensor`` (there is a fake kernel, and
    on ``meta`` copies of the arguments it gives the real outputs' shapes and dtypes). PyTorch's
    ``test_aot_dispatch_dynamic`` needs its AOTAutograd and is refused (ValueError), as an unknown name is."""
    import tinytorch
    from ._tensor import Tensor
    kwargs = kwargs or {}
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    for t in test_utils:
        if t not in ("test_schema", "test_autograd_registration", "test_faketensor"):
            raise ValueError(f"opcheck(op, ...): test_utils is expected to only contain test_schema, "
                             f"test_autograd_registration, test_faketensor (tinytorch), but got {t}")
    rec = _ns.lookup(_qualname_of(op, "opcheck"))
    call = op if callable(op) else rec.op

    def flat(x):
        return [t for a in x for t in (a if isinstance(a, (list, tuple)) else (a,)) if isinstance(t, Tensor)]

    results = {}

    def schema_test():
        pos, kw = rec.schema.bind(tuple(args), kwargs)
        written = {id(t) for i in rec.mutated for t in flat([pos[i] if i < len(pos) else
                                                            kw.get(rec.schema.arguments[i].name)])}
        ins = flat(list(pos) + list(kw.values()))
        before = [(t, t.detach().clone(), t._version) for t in ins if id(t) not in written]
        with tinytorch.no_grad():
            out = call(*args, **kwargs)
        for t, old, ver in before:
            if t._version != ver or not bool(tinytorch.equal(t.detach(), old)):
                raise RuntimeError(f"opcheck: {rec} mutated an argument its schema does not mark as written "
                                   f"(schema: {rec.schema})")
        return out

    def autograd_test():
        ins = flat(list(args) + list(kwargs.values()))
        if not any(t.requires_grad for t in ins) or rec.composite is not None or rec.autograd_kernel is not None:
            return
        if rec.backward is None and rec.kernels and not rec.schema.is_mutable:
            raise AssertionError(f"{rec}: the op has device kernels but no autograd formula (register_autograd), "
                                 "and an input requires grad: backward through it raises")

    def fake_test():
        if rec.fake is None:
            if rec.composite is not None:
                return  # a decomposition runs on meta tensors itself
            raise RuntimeError(f"There was no fake impl registered for {rec.custom or rec}. This is necessary for "
                               "torch.compile/export/fx tracing to work. Please use `register_fake` to add an fake "
                               "impl.")
        with tinytorch.no_grad():
            real = call(*args, **kwargs)

        def to_meta(a):
            if isinstance(a, Tensor):
                return a.detach().to("meta")
            if isinstance(a, (list, tuple)):
                return type(a)(to_meta(x) for x in a)
            return a
        with tinytorch.no_grad():
            fake = rec.fake(*[to_meta(a) for a in args], **{k: to_meta(v) for k, v in kwargs.items()})
        r, f = flat([real]), flat([fake])
        if len(r) != len(f) or any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(r, f)):
            raise AssertionError(f"{rec}: the fake kernel's outputs {[(tuple(b.shape), b.dtype) for b in f]} differ "
                                 f"from the real ones {[(tuple(a.shape), a.dtype) for a in r]}")

    tests = {"test_schema": schema_test, "test_autograd_registration": autograd_test, "test_faketensor": fake_test}
    for name in test_utils:
        try:
            tests[name]()
            results[name] = "SUCCESS"
        except Exception as e:
            if raise_exception:
                raise
            results[name] = e
    return results

