"""``torch.ops``: operators by qualified name, over tinytorch's op registry (``_dispatch.OPS``).

``torch.ops.<ns>.<op>`` is an ``OpOverloadPacket``; ``.default`` (or ``.<overload>``) an ``OpOverload``. Calling
either sends the call through the dispatcher (``_dispatch.dispatch``), so autocast, autograd, devices and the
compiler's recording see it.

Two kinds of op are found here:
- ops defined from Python (``torch.library.custom_op``, ``Library.define``): each overload is an ``OpRecord``
  (its schema, kernels per device, fake kernel, autograd formula) whose ``Op`` is in ``OPS`` under its qualified
  name; its decomposition, ``OpRecord.run``, binds the arguments to the schema, picks the kernel for the device
  and wraps the call in an autograd node when an input requires grad;
- ``torch.ops.aten.<name>``: tinytorch's own op of that name, called through its public function
  (``tinytorch.<name>`` or the ``Tensor`` method), whose Python argument handling stands for ATen's overload
  resolution. tinytorch keeps no ATen schemas, so these overloads have no ``_schema``; the overload names
  accepted are ATen's common ones (``_ATEN_OVERLOADS``), each calling that one function.

``torch.ops.load_library`` loads a shared library with ctypes (OSError as PyTorch's when it cannot), refusing a
PyTorch C++ extension: its ops register with libtorch's C++ dispatcher, which tinytorch does not have.
"""
import ctypes
import os
import types

from . import _dispatch
from ._schema import parse_schema

_RECORDS = {}  # "ns::name" -> {overload name: OpRecord}


def _dispatch_type(dev):
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta"}.get(dev, dev.upper() if dev else "CPU")


class OpRecord:
    """One overload of an op defined from Python: ``schema`` (a ``FunctionSchema``), ``kernels`` (device type ->
    function; ``None`` for every device: PyTorch's CompositeExplicitAutograd), ``composite`` (a
    CompositeImplicitAutograd kernel: autograd comes from the ops it calls), ``fake`` (``register_fake``'s
    function, run for ``meta`` tensors), ``backward``/``setup_context`` (``register_autograd``), ``custom`` (the
    ``CustomOpDef`` that made it, if any), and ``op``, the ``Op`` record in the registry."""

    def __init__(self, schema, lib=None):
        self.schema = schema
        self.ns, self.name = schema.name.split("::")
        self.overload = schema.overload_name or "default"
        self.qualname = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        self.kernels = {}
        self.composite = None
        self.fake = None
        self.backward = self.setup_context = None
        self.custom = None
        self.autograd_kernel = None  # a kernel registered for the Autograd key: it does its own autograd
        self.lib = lib
        self.mutated = [i for i, a in enumerate(schema.arguments) if a.alias_info is not None and
                        a.alias_info.is_write]
        self.op = _dispatch.Op(self.qualname, None, decomp=self.run)
        self._fn_class = None

    def __str__(self):
        return f"{self.ns}.{self.name}.{self.overload}"

    __repr__ = __str__

    # ---- the kernel the dispatcher runs ---------------------------------------------------------------------
    def run(self, *args, **kwargs):
        """The op's body in the dispatcher: the arguments bound to the schema, then the composite kernel, or the
        device's kernel (under an autograd node when grad mode is on and an input requires grad), the written
        arguments' version counters bumped."""
        args, kw = self.schema.bind(args, kwargs)
        from ._modes import _state
        if self.autograd_kernel is not None and _state.enabled:
            return self.autograd_kernel(*args, **kw)
        from ._tensor import Tensor
        tensors = [t for a in (*args, *kw.values()) for t in (a if isinstance(a, (list, tuple)) else (a,))
                   if isinstance(t, Tensor)]
        dev = _dispatch.device_of(tensors, self.qualname) if tensors else self._device_arg(args, kw)
        dtype = dev.type if dev is not None else "cpu"
        kernel = self.kernels.get(dtype)
        if kernel is None and dtype == "meta" and self.fake is not None:
            kernel = self.fake
        if kernel is None and self.composite is not None:
            return self.composite(*args, **kw)
        if kernel is None:
            kernel = self.kernels.get(None)
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.schema.name}' with arguments from the '{_dispatch_type(dtype)}' backend. "
                f"This could be because the operator doesn't exist for this backend. '{self.schema.name}' is only "
                f"available for these backends: [{', '.join(self._backends())}].")
        if _state.enabled and any(t.requires_grad for t in tensors):
            return self._function_class().apply(*args, _Keywords(kernel, kw))
        return self.call_kernel(kernel, args, kw)

    def _stripped(self, args, kw):
        """The arguments a Python kernel receives, as PyTorch passes them: trailing positional arguments and
        keyword-only ones that equal their defaults are left out (the kernel's own defaults stand for them)."""
        params = [a for a in self.schema.arguments if not a.kwarg_only]
        n = len(args)
        while n and params[n - 1].has_default_value() and _is_default(args[n - 1], params[n - 1].default_value):
            n -= 1
        defaults = {a.name: a for a in self.schema.arguments if a.kwarg_only}
        kw = {k: v for k, v in kw.items()
              if not (defaults[k].has_default_value() and _is_default(v, defaults[k].default_value))}
        return args[:n], kw

    def call_kernel(self, kernel, args, kw):
        from .autograd.grad_mode import no_grad
        pargs, pkw = self._stripped(args, kw)
        with no_grad():
            out = kernel(*pargs, **pkw)
        self._check_result(kernel, args, kw, out)
        for i in self.mutated:
            a = args[i] if i < len(args) else kw.get(self.schema.arguments[i].name)
            for t in (a if isinstance(a, (list, tuple)) else (a,)):
                if t is not None:
                    t._storage._version[0] += 1
        return out

    def _check_result(self, kernel, args, kw, out):
        """PyTorch's rule for a functional op: no output is an input or shares its memory."""
        from ._tensor import Tensor
        outs = out if isinstance(out, (tuple, list)) else (out,)
        ins = [t for a in (*args, *kw.values()) for t in (a if isinstance(a, (list, tuple)) else (a,))
               if isinstance(t, Tensor)]
        stores = {id(t._storage) for t in ins}
        seen = set()
        for o in outs:
            if not isinstance(o, Tensor):
                continue
            if id(o._storage) in stores or id(o._storage) in seen:
                import inspect
                raise RuntimeError(
                    f"{self.name} (with implementation in {inspect.getmodule(kernel)}): The output of this custom "
                    "operator (1) must not also be an input to this custom operator and (2) may not alias any "
                    "inputs to this custom operator or other returns. The most common way to trigger this error "
                    "is if we have y = custom_op(x) and y and x are the same Tensor. Please instead return a "
                    "clone of the offending output tensor(s) (e.g. return x.clone()) or refactor the custom "
                    "operator to not return y.")
            seen.add(id(o._storage))

    def _device_arg(self, args, kw):
        from .device import device
        for a, v in zip([a for a in self.schema.arguments if not a.kwarg_only], args):
            if a.type.rstrip("?") == "Device" and v is not None:
                return device(v)
        for a in self.schema.arguments:
            if a.kwarg_only and a.type.rstrip("?") == "Device" and kw.get(a.name) is not None:
                return device(kw[a.name])
        return None

    def _backends(self):
        names = [_dispatch_type(k) for k in self.kernels if k is not None]
        if None in self.kernels or self.composite is not None:
            names.append("CompositeExplicitAutograd" if None in self.kernels else "CompositeImplicitAutograd")
        if self.fake is not None:
            names.append("Meta")
        return names

    def _function_class(self):
        """The autograd.Function a call requiring grad runs through (PyTorch's ``GeneratedBackwardFor_...``):
        forward runs the kernel, ``setup_context`` saves what the registered backward needs, backward runs it."""
        if self._fn_class is not None:
            return self._fn_class
        from .autograd.function import Function
        rec = self
        kw_only = any(a.kwarg_only for a in self.schema.arguments)

        def forward(ctx, *args):
            keywords = args[-1]
            args = args[:-1]
            out = rec.call_kernel(keywords.kernel, args, keywords.kw)
            if rec.setup_context is not None:
                if kw_only:
                    rec.setup_context(ctx=ctx, inputs=args, keyword_only_inputs=keywords.kw, output=out)
                else:
                    rec.setup_context(ctx=ctx, inputs=args, output=out)
            return out

        def backward(ctx, *grads):
            if rec.backward is None:
                raise RuntimeError(f"Trying to backward through {rec} but no autograd formula was registered. "
                                   "Please use register_autograd to add one.")
            needs = ctx.needs_input_grad
            ctx.needs_input_grad = needs[:-1]
            try:
                res = rec.backward(ctx, *grads)
            finally:
                ctx.needs_input_grad = needs
            return (*res, None) if isinstance(res, tuple) else (res, None)

        name = f"GeneratedBackwardFor_{self.ns}_{self.name}_{self.overload}"
        self._fn_class = type(name, (Function,), {"forward": staticmethod(forward),
                                                  "backward": staticmethod(backward)})
        return self._fn_class


def _is_default(v, default):
    from ._tensor import Tensor
    if isinstance(v, Tensor) or isinstance(default, Tensor):
        return False
    try:
        return bool(v == default) and type(v) is not bool or v is default
    except Exception:  # values without a plain equality
        return False


class _Keywords:
    """The keyword-only arguments and the chosen kernel, passed to the generated Function as its last (non-tensor)
    argument, as PyTorch passes its ``Metadata``."""

    def __init__(self, kernel, kw):
        self.kernel, self.kw = kernel, kw


def define(schema_text, lib=None):
    """Add the op of ``schema_text`` (``ns::name[.overload](...) -> ...``) to the registry: RuntimeError, as
    PyTorch's, when that name and overload exist already. Returns its ``OpRecord``."""
    schema = parse_schema(schema_text)
    if "::" not in schema.name:
        raise ValueError(f"define: the schema's name must be qualified, ns::name (got {schema.name})")
    rec = OpRecord(schema, lib)
    overloads = _RECORDS.setdefault(schema.name, {})
    if rec.overload in overloads:
        raise RuntimeError(
            f"Tried to register an operator ({schema}) with the same name and overload name multiple times. Each "
            "overload's schema should only be registered with a single call to def(). Duplicate registration: "
            "tinytorch.library. Original registration: tinytorch.library")
    overloads[rec.overload] = rec
    _dispatch.OPS[rec.qualname] = rec.op
    rec.fake = PENDING_FAKES.pop(f"{schema.name}.{rec.overload}", rec.fake)
    return rec


# Fake kernels registered for ops no library has defined: tinytorch cannot load a PyTorch C++ extension (its ops
# register with libtorch's dispatcher), and a package such as torchvision registers Python fake kernels for the
# ops its extension would have defined while it imports. PyTorch raises there ("operator ... does not exist"); the
# kernel is kept here instead, for the op if it is defined later, so that the package's pure-Python parts import and
# its compiled ops fail when called, with the package's own message.
PENDING_FAKES = {}


def undefine(rec):
    """Remove ``rec`` from the registry (``Library._destroy``: the library's definitions go away with it)."""
    overloads = _RECORDS.get(rec.schema.name, {})
    if overloads.get(rec.overload) is rec:
        del overloads[rec.overload]
        if not overloads:
            del _RECORDS[rec.schema.name]
    if _dispatch.OPS.get(rec.qualname) is rec.op:
        del _dispatch.OPS[rec.qualname]


def lookup(qualname):
    """The ``OpRecord`` of ``ns::name[.overload]``; RuntimeError when it is not defined."""
    from ._schema import parse_op_name
    ns, name, overload = parse_op_name(qualname)
    rec = _RECORDS.get(f"{ns}::{name}", {}).get(overload or "default")
    if rec is None:
        raise RuntimeError(f"Could not find schema for {qualname}")
    return rec


class OpOverload:
    """One overload of an op (``torch._ops.OpOverload``): callable; ``_schema``, ``name()``
    (``ns::op[.overload]``), ``overloadpacket``, ``namespace``, ``_overloadname``."""

    def __init__(self, packet, overload, record=None, fn=None):
        self.overloadpacket = packet
        self._overloadname = overload
        self._record = record
        self._fn = fn
        self.namespace = packet._namespace
        self._opname = packet._opname
        self.__name__ = f"{packet._opname}.{overload}"
        self.__qualname__ = self.__name__
        self.__module__ = f"torch.ops.{packet._namespace}"

    @property
    def _schema(self):
        if self._record is None:
            raise AttributeError(f"tinytorch keeps no ATen schema for {self}: its aten ops are called through "
                                 "tinytorch's Python functions")
        return self._record.schema

    @property
    def _name(self):
        return self.name()

    def name(self):
        base = f"{self.namespace}::{self._opname}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        if self._record is not None:
            return _dispatch.dispatch(self._record.op, args, kwargs)
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload(op='{self.namespace}.{self._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self):
        return hash((self.namespace, self._opname, self._overloadname))

    def __eq__(self, other):
        return isinstance(other, OpOverload) and (other.namespace, other._opname, other._overloadname) == \
            (self.namespace, self._opname, self._overloadname)


# ATen's overload names of the ops tinytorch resolves by name: each calls the op's one Python function, whose
# argument handling picks what ATen's overload would (add.Tensor / add.Scalar: a tensor or a number ``other``)
_ATEN_OVERLOADS = ("default", "Tensor", "Scalar", "Tensor_Scalar", "Scalar_Tensor", "Tensor_Tensor", "int", "dim",
                   "dim_IntList", "self", "two", "using_ints", "using_sizes", "dims", "input", "names", "float",
                   "sizes", "other", "dim_int", "int_float", "float_int", "correction", "low", "memory_format")


class OpOverloadPacket:
    """All overloads of one op (``torch._ops.OpOverloadPacket``): callable (the default overload, or the one the
    arguments match), its overloads as attributes (``.default``), ``overloads()``, ``_qualified_op_name``."""

    def __init__(self, namespace, opname, fn=None):
        self._namespace, self._opname = namespace, opname
        self._qualified_op_name = f"{namespace}::{opname}"
        self.__name__ = opname
        self.__qualname__ = opname
        self.__module__ = f"torch.ops.{namespace}"
        self._fn = fn  # aten: tinytorch's function
        self._cache = {}

    def _records(self):
        return _RECORDS.get(self._qualified_op_name, {})

    def overloads(self):
        if self._fn is not None:
            return list(_ATEN_OVERLOADS)
        return list(self._records())

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(f"'{self}' can't have an overload name beginning with '__' and the underlying op "
                                 f"{self._qualified_op_name} has no attribute {key} either.")
        if self._fn is not None:
            if key not in _ATEN_OVERLOADS:
                raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
            return OpOverload(self, key, fn=self._fn)
        rec = self._records().get(key)
        if rec is None:
            raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")
        o = self._cache.get(key)
        if o is None or o._record is not rec:  # a redefined custom op gets a fresh overload
            o = self._cache[key] = OpOverload(self, key, rec)
        return o

    def __call__(self, *args, **kwargs):
        if self._fn is not None:
            return self._fn(*args, **kwargs)
        recs = self._records()
        if not recs:
            raise RuntimeError(f"{self._qualified_op_name} is no longer defined")
        if len(recs) == 1:
            return _dispatch.dispatch(next(iter(recs.values())).op, args, kwargs)
        errors = []
        for rec in recs.values():  # the first overload whose schema takes the arguments
            try:
                rec.schema.bind(args, kwargs)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            return _dispatch.dispatch(rec.op, args, kwargs)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any schema:\n" +
                           "\n\n".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._opname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}"

    def __hash__(self):
        return hash(self._qualified_op_name)


class _OpNamespace(types.ModuleType):
    """``torch.ops.<ns>``: its attributes are the ns's ops (``OpOverloadPacket``)."""

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name
        self._packets = {}

    def __iter__(self):
        return iter(self._packets)

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(f"Invalid attribute '{op_name}' for '_OpNamespace' '{self.name}'")
        p = self._packets.get(op_name)
        if p is not None:
            return p
        fn = None
        if self.name == "aten":
            fn = _aten_function(op_name)
            if fn is None:
                raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        elif f"{self.name}::{op_name}" not in _RECORDS:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        p = self._packets[op_name] = OpOverloadPacket(self.name, op_name, fn)
        return p


def _aten_function(name):
    """tinytorch's Python function for ATen op ``name``: an op of that name in the registry, called through the
    public function (``tinytorch.add``) or else the Tensor method (``Tensor.add_``); None when there is none."""
    import tinytorch
    if name not in _dispatch.OPS and name.rstrip("_") not in _dispatch.OPS:
        return None
    fn = getattr(tinytorch, name, None)
    if callable(fn) and not isinstance(fn, type):
        return fn
    meth = getattr(tinytorch.Tensor, name, None)
    if callable(meth):
        return meth
    return None


class _Ops(types.ModuleType):
    """``torch.ops``: ``torch.ops.<namespace>`` (an ``_OpNamespace``), ``load_library``, ``loaded_libraries``."""

    __file__ = "_ops.py"

    def __init__(self):
        super().__init__("torch.ops")
        self.loaded_libraries = set()
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ns = self._namespaces.get(name)
        if ns is None:
            ns = self._namespaces[name] = _OpNamespace(name)
        return ns

    def __iter__(self):
        return iter(self._namespaces)

    def load_library(self, path):
        """Load the shared library at ``path`` into the process (``torch.ops.load_library``) and add its real path
        to ``loaded_libraries``. OSError, PyTorch's ``Could not load this library: <path>``, when ctypes cannot
        load it — and for a PyTorch C++ extension (a library linked against libtorch/libc10): its ops register
        with libtorch's C++ dispatcher, which tinytorch does not have, so its ops could not be reached."""
        path = os.path.realpath(path)
        if _links_libtorch(path):
            raise OSError(f"Could not load this library: {path} (a PyTorch C++ extension: its ops register with "
                          "libtorch's dispatcher, which tinytorch does not have)")
        try:
            ctypes.CDLL(path)
        except Exception as e:
            raise OSError(f"Could not load this library: {path}") from e
        self.loaded_libraries.add(path)


def _links_libtorch(path):
    """Whether the ELF file at ``path`` names libtorch or libc10 among the libraries it needs (its dynamic string
    table holds their names)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if head != b"\x7fELF":
                return False
            f.seek(0)
            data = f.read()
    except OSError:
        return False
    return b"libc10.so" in data or b"libtorch_cpu.so" in data or b"libtorch.so" in data


ops = _Ops()
