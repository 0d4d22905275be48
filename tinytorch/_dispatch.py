"""The one op path.

``dispatch(op, args, kw)`` is what every tinytorch op goes through:

1. device check: all tensor arguments on one device (0-dim cpu tensors may join any device);
2. ``op.meta``: argument checks, type promotion and the output shape/dtype; it also says which
   dtype each tensor argument is cast to before the kernel sees it;
3. the kernel the device's backend registered for ``op.name`` — or, when the backend has none,
   ``op.decomp``, the op written in other tinytorch ops (which then record their own graph);
4. autograd: when grad mode is on and an input requires grad, an ``OpNode`` that runs
   ``op.backward`` (a formula written in tinytorch ops, so it is itself differentiable).

Kernels never see autograd or ``Tensor``; they get backend-native arrays and keyword attributes.
"""
from . import _strides
from .autograd.engine import Node, edge_of
from .autograd.grad_mode import _state
from .autograd.graph import _hooks as _saved_hooks
from .device import get_backend

OPS = {}
_EMPTY = {}
Tensor = None  # set by _tensor.py (import cycle)


class Op:
    """An op definition: name, meta function, backward formula, optional decomposition.

    meta(*args, **kw) -> (outs, casts): ``outs`` is a list of (shape, dtype) per output,
    ``casts`` the dtype each positional argument is cast to (None: left as is).
    backward(ctx, grad) -> one gradient (or None) per positional argument; ``ctx.inputs``,
    ``ctx.out``, ``ctx.kw``, ``ctx.shapes``, ``ctx.outs`` give what was saved. Gradients
    are summed to the input's shape and cast to its dtype by the node, so formulas may
    return broadcast-shaped gradients. Only output 0 is differentiable.
    """

    __slots__ = ("name", "meta", "backward", "decomp", "save_inputs", "save_output", "inplace_ok", "refused")

    def __init__(self, name, meta, backward=None, decomp=None, save_inputs=True, save_output=False):
        self.name = name
        self.refused = REFUSED_DTYPES.get(name)
        self.meta = meta
        self.backward = backward
        self.decomp = decomp
        self.save_inputs = save_inputs
        self.save_output = save_output

    def __repr__(self):
        return f"Op({self.name})"


# PyTorch compiles each CPU kernel for a set of dtypes (the AT_DISPATCH_* macro around it) and refuses the
# others; NumPy's kernels accept more. The ops whose set is narrower, by op name: {dtype name: (exception type,
# message)}, checked in ``dispatch`` on the dtype the op computes in (its first cast dtype, else its first tensor
# argument's), before any kernel runs. ``{T}`` is PyTorch's scalar type name ('Bool', 'ComplexFloat').
_NI = NotImplementedError
_COMPLEX = ("complex64", "complex128")


def _refuse(dtypes, exc, msg):
    return {d: (exc, msg) for d in dtypes}


REFUSED_DTYPES = {
    "abs": _refuse(("bool",), _NI, "\"abs_cpu\" not implemented for '{T}'"),
    "amax": _refuse(_COMPLEX, _NI, "\"max_values_cpu\" not implemented for '{T}'"),
    "amin": _refuse(_COMPLEX, _NI, "\"min_values_cpu\" not implemented for '{T}'"),
    "argmax": {**_refuse(("bool",), RuntimeError, "argmax(): does not support bool input"),
               **_refuse(_COMPLEX, RuntimeError, "argmax(): does not support complex input")},
    "argmin": {**_refuse(("bool",), RuntimeError, "argmin(): does not support bool input"),
               **_refuse(_COMPLEX, RuntimeError, "argmin(): does not support complex input")},
    "bitwise_left_shift": _refuse(("bool",), _NI, "\"lshift_cpu\" not implemented for '{T}'"),
    "bitwise_right_shift": _refuse(("bool",), _NI, "\"rshift_cpu\" not implemented for '{T}'"),
    "ceil": {**_refuse(("bool",), _NI, "\"ceil_vml_cpu\" not implemented for '{T}'"),
             **_refuse(_COMPLEX, _NI, "ceil is not supported for complex inputs")},
    "floor": {**_refuse(("bool",), _NI, "\"floor_vml_cpu\" not implemented for '{T}'"),
              **_refuse(_COMPLEX, _NI, "floor is not supported for complex inputs")},
    "trunc": {**_refuse(("bool",), _NI, "\"trunc_vml_cpu\" not implemented for '{T}'"),
              **_refuse(_COMPLEX, _NI, "trunc is not supported for complex inputs")},
    "atan2": _refuse(_COMPLEX, _NI, "\"atan2_cpu\" not implemented for '{T}'"),
    "erf": _refuse(_COMPLEX, _NI, "\"erf_vml_cpu\" not implemented for '{T}'"),
    "round": _refuse(("bool",) + _COMPLEX, _NI, "\"round_vml_cpu\" not implemented for '{T}'"),
    "clamp": _refuse(_COMPLEX, _NI, "clamp is not supported for complex types"),
    "relu": {**_refuse(("bool",), RuntimeError, "Boolean inputs not supported for relu"),
             **_refuse(_COMPLEX, _NI, "clamp is not supported for complex types")},
    "digamma": _refuse(_COMPLEX, _NI, "\"digamma\" not implemented for '{T}'"),
    "erfinv": _refuse(_COMPLEX, _NI, "\"erfinv_vml_cpu\" not implemented for '{T}'"),
    "i0": _refuse(_COMPLEX, _NI, "\"i0_vml_cpu\" not implemented for '{T}'"),
    "lgamma": _refuse(_COMPLEX, _NI, "\"lgamma_vml_cpu\" not implemented for '{T}'"),
    "fmod": _refuse(("bool",) + _COMPLEX, _NI, "\"fmod_cpu\" not implemented for '{T}'"),
    "remainder": _refuse(("bool",) + _COMPLEX, _NI, "\"remainder_cpu\" not implemented for '{T}'"),
    "ge": _refuse(_COMPLEX, _NI, "\"ge_cpu\" not implemented for '{T}'"),
    "gt": _refuse(_COMPLEX, _NI, "\"gt_cpu\" not implemented for '{T}'"),
    "le": _refuse(_COMPLEX, _NI, "\"le_cpu\" not implemented for '{T}'"),
    "lt": _refuse(_COMPLEX, _NI, "\"lt_cpu\" not implemented for '{T}'"),
    "maximum": _refuse(_COMPLEX, RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": _refuse(_COMPLEX, RuntimeError, "minimum not implemented for complex tensors."),
    "sort": _refuse(_COMPLEX, RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": _refuse(_COMPLEX, RuntimeError, " topk does not support complex dtypes on CPU"),
    "matmul": _refuse(("bool",), _NI, "\"addmm_impl_cpu_\" not implemented for '{T}'"),
}
_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _check_refused(op, args, casts):
    """Raise PyTorch's exception when ``op`` computes in a dtype its PyTorch kernel is not compiled for."""
    # plain loops: this runs on every call of the listed ops, and generator expressions cost a microsecond
    dt = None
    for c in casts:
        if c is not None:
            dt = c
            break
    else:
        for a in args:
            if isinstance(a, Tensor):
                dt = a.dtype
                break
    if dt is not None:
        r = op.refused.get(dt.name)
        if r is not None:
            raise r[0](r[1].replace("{T}", _TYPE_NAMES.get(dt.name, dt.name)))


def defop(name, meta, backward=None, decomp=None, save_inputs=True, save_output=False):
    if name in OPS:
        raise RuntimeError(f"op {name} defined twice")
    op = Op(name, meta, backward, decomp, save_inputs, save_output)
    OPS[name] = op
    return op


def _check_version(t, expected, node, idx):
    if t._storage._version[0] != expected:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{t.type()} {list(t._shape)}], which is {'output' if idx < 0 else 'input'} {abs(idx) if idx >= 0 else 0} "
            f"of {node.name()}, is at version {t._storage._version[0]}; expected version {expected} instead. "
            "Hint: the operation that produced it has to be redone without the inplace change.")


class OpNode(Node):
    """Graph node of one op call (PyTorch's ``<Name>Backward0``)."""

    __slots__ = ("op", "_inputs", "_versions", "kw", "_out", "_out_version", "shapes", "dtypes", "outs", "released",
                 "_unpack")

    def __init__(self, op, args, kw, out, outs, next_edges):
        Node.__init__(self, next_edges)
        self.op = op
        self.kw = kw
        self.outs = outs
        self.released = False
        T = Tensor
        shapes, dtypes = [], []
        for a in args:
            if isinstance(a, T):
                shapes.append(a._shape)
                dtypes.append(a.dtype)
            else:
                shapes.append(None)
                dtypes.append(None)
        self.shapes, self.dtypes = shapes, dtypes
        self._unpack = None
        if _saved_hooks.stack:
            self._save_packed(args, out)
            return
        if op.save_inputs:
            self._inputs = args
            self._versions = [a._storage._version[0] if isinstance(a, T) else 0 for a in args]
            if _state.inference_seen:
                _no_inference_saved(args)
        else:
            self._inputs = None
        if op.save_output:
            # multi-output ops (values, indices) keep all outputs; only the first is differentiable
            self._out = tuple(o._alias() for o in out) if isinstance(out, tuple) else out._alias()
            self._out_version = (out[0] if isinstance(out, tuple) else out)._storage._version[0]
        else:
            self._out = None

    def _save_packed(self, args, out):
        """Save through the active ``autograd.graph.saved_tensors_hooks`` (no version checks on those)."""
        T = Tensor
        from .autograd.graph import packer
        pack, self._unpack = packer()
        self._inputs = tuple((True, pack(a)) if isinstance(a, T) else (False, a) for a in args) \
            if self.op.save_inputs else None
        if self.op.save_output:
            outs = out if isinstance(out, tuple) else (out,)
            self._out = (isinstance(out, tuple), tuple(pack(o._alias()) for o in outs))
        else:
            self._out = None

    def name(self):
        n = self.op.name
        return "".join(p[:1].upper() + p[1:] for p in n.split("_")) + "Backward0"

    @property
    def inputs(self):
        if self.released:
            _raise_released()
        if self._inputs is None:
            raise RuntimeError(f"{self.op.name}: backward formula reads inputs but the op does not save them")
        if self._unpack is not None:
            return tuple(self._unpack(v) if packed else v for packed, v in self._inputs)
        T = Tensor
        for i, (a, v) in enumerate(zip(self._inputs, self._versions)):
            if isinstance(a, T) and a._storage._version[0] != v:
                _check_version(a, v, self, i)
        return self._inputs

    @property
    def out(self):
        if self.released:
            _raise_released()
        if self._unpack is not None:
            is_tuple, packed = self._out
            outs = tuple(self._unpack(p) for p in packed)
            return outs if is_tuple else outs[0]
        outs = self._out
        o = outs[0] if isinstance(outs, tuple) else outs
        if o._storage._version[0] != self._out_version:
            _check_version(o, self._out_version, self, -1)
        if _state.enabled and o.grad_fn is None:
            # double backward: the saved output is part of the graph again
            o.grad_fn = self
            o.requires_grad = True
        return outs

    def apply(self, grads):
        if self.released:
            _raise_released()
        g = grads[0]
        if g is None:
            return (None,) * len(self.next_edges)
        res = self.op.backward(self, g)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        out = []
        for gi, e, shp, dt in zip(res, self.next_edges, self.shapes, self.dtypes):
            if gi is None or e is None:
                out.append(None)
                continue
            if gi._shape != shp:
                gi = gi.sum_to_size(shp)
            if gi.dtype is not dt:
                if gi.dtype.is_complex and not dt.is_complex:
                    from ._ops.complex import real
                    gi = real(gi)  # a real input's gradient is the real part (PyTorch's convention)
                gi = gi.to(dt)
            out.append(gi)
        return out

    def release(self):
        self._inputs = None
        self._out = None
        self.released = True


def _no_inference_saved(args):
    for a in args:
        if isinstance(a, Tensor) and a._storage.inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                "in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                "tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def _raise_released():
    raise RuntimeError(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
        "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
        "if you need to access saved tensors after calling backward.")


def device_of(args, op_name):
    """The common device of the tensor arguments (PyTorch's rule: 0-dim cpu tensors join any device)."""
    T = Tensor
    dev = None
    soft = False  # dev so far comes only from 0-dim cpu tensors
    for a in args:
        if isinstance(a, T):
            d = a._storage.device
            if dev is None:
                dev, soft = d, d.type == "cpu" and not a._shape
            elif d != dev:
                if d.type == "cpu" and not a._shape:
                    continue
                if soft:
                    dev, soft = d, False
                    continue
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but found at least two devices, {dev} and {d}! "
                    f"(when checking argument for op {op_name})")
            elif soft and a._shape:
                soft = False
    return dev


def dispatch(op, args, kw=None):
    """Run ``op`` on positional ``args`` (tensors and scalars) and keyword attributes ``kw``."""
    if kw is None:
        kw = _EMPTY
    T = Tensor
    dev = backend = None
    for a in args:
        if isinstance(a, T):
            st = a._storage
            if dev is None:
                dev, backend = st.device, st.backend
            elif st.device is not dev:
                dev = device_of(args, op.name)
                backend = get_backend(dev)
                break
    if dev is None:
        if args and not any(isinstance(v, T) for v in kw.values()):
            # no tensor at all (sigmoid(1.5)): PyTorch's ops take their input as a Tensor
            raise TypeError(f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        backend = _cpu_backend()
    try:
        outs, casts = op.meta(*args, **kw)
    except AttributeError as e:
        _raise_argument_type(op, args, kw, e)
        raise
    if op.refused is not None:
        _check_refused(op, args, casts)
    if backend.shape_only:
        return _shape_only(op, args, kw, outs, backend, dev)
    kern = backend.kernels.get(op.name)
    if kern is None:
        if op.decomp is None:
            raise NotImplementedError(
                f"Could not run '{op.name}' with arguments from the '{backend.name}' backend: the backend registers "
                f"no kernel for it and the op has no decomposition")
        if op.backward is None or not _state.enabled:
            return op.decomp(*args, **kw)  # autograd, if any, comes from the primitives
        _state.enabled = False
        try:
            result = op.decomp(*args, **kw)
        finally:
            _state.enabled = True
        return _record(op, args, kw, result, outs)
    natives = []
    for a, c in zip(args, casts):
        if isinstance(a, T):
            if a._storage.device is not dev:  # a 0-dim cpu tensor joining another device's op
                natives.append(a.item())
                continue
            nat = a._native()
            if c is not None and a.dtype is not c:
                nat = backend.cast(nat, c)
            natives.append(nat)
        else:
            natives.append(a)
    try:
        res = kern(*natives, **kw)
    except (MemoryError, ValueError, AttributeError, TypeError) as e:
        _raise_kernel_error(op, args, kw, e)
        raise
    if len(outs) == 1:
        shape, dtype = outs[0]
        result = T._from_native(backend, dev, res, dtype, shape)
        results = None
    else:
        results = tuple(T._from_native(backend, dev, r, dt, shp) for r, (shp, dt) in zip(res, outs))
        result = results[0]
    if _state.enabled and op.backward is not None:
        _record(op, args, kw, result if results is None else results, outs)
    return result if results is None else results


def argument_type_error(name, args, kw, obj):
    """PyTorch's TypeError for ``obj``, a non-tensor value found where ``name`` expects a tensor, when ``obj``
    is one of the call's arguments (or an element of a list/tuple argument: ``stack([x, 'a'])``); else None."""
    if isinstance(obj, Tensor):
        return None
    for i, a in enumerate(args):
        if a is obj:
            return TypeError(f"{name}(): argument at position {i + 1} must be Tensor, not {type(a).__name__}")
        if type(a) in (list, tuple):
            for j, x in enumerate(a):
                if x is obj:
                    return TypeError(f"expected Tensor as element {j} in argument {i}, but got {type(x).__name__}")
    for k, a in kw.items():
        if a is obj:
            return TypeError(f"{name}(): argument '{k}' must be Tensor, not {type(a).__name__}")
    return None


def _raise_argument_type(op, args, kw, e):
    """PyTorch's TypeError when ``e``, an AttributeError raised while checking or running ``op``, comes from a
    non-tensor value given where a tensor is expected (``mm(x, 1.5)``: ``'float' object has no attribute
    'ndim'``). Every op's tensor arguments are checked here, once, instead of in each meta function; an
    AttributeError of any other origin is left as it is."""
    err = argument_type_error(op.name, args, kw, getattr(e, "obj", e))
    if err is not None:
        raise err from None


_SCALAR_TYPES = (int, float, complex, bool)


def _raise_kernel_error(op, args, kw, e):
    """PyTorch's exception for an allocation NumPy could not serve inside a kernel, or for a non-tensor argument
    the kernel tripped over (``add(x, None)``: NumPy's TypeError from inside the kernel)."""
    if isinstance(e, AttributeError):
        _raise_argument_type(op, args, kw, e)
        return
    if isinstance(e, TypeError):
        for i, a in enumerate(args):
            # only the argument NumPy's message names ('NoneType' in add(x, None)), not a legitimate None
            if (a is None or isinstance(a, (str, list, tuple, dict))) and f"'{type(a).__name__}'" in str(e):
                raise TypeError(f"{op.name}(): argument at position {i + 1} must be Tensor or Number, not "
                                f"{type(a).__name__}") from None
        return
    from ._storage import translate_alloc_error
    err = translate_alloc_error(e)
    if err is not None:
        raise err from None


def _shape_only(op, args, kw, outs, backend, dev):
    """Outputs of ``op`` on a device without data (meta): built from the meta function alone."""
    from ._storage import Storage
    from ._tensor import _new
    res = []
    for shape, dtype in outs:
        if shape is None:
            raise NotImplementedError(f"{op.name}: the output shape depends on the data, which a '{dev}' tensor "
                                      "does not have")
        nat, buf = backend.empty(shape, dtype)
        res.append(_new(Storage(buf, dtype, dev, buf.size, backend), shape, nat.strides, 0, dtype, nat))
    result = res[0] if len(res) == 1 else tuple(res)
    if _state.enabled and op.backward is not None:
        _record(op, args, kw, result, outs)
    return result


def _record(op, args, kw, result, outs):
    """Attach an OpNode to ``result`` when an input requires grad (grad mode is known to be on)."""
    T = Tensor
    first = result[0] if isinstance(result, tuple) else result
    if not first.dtype.is_floating_point:
        if not first.dtype.is_complex:
            return result
        _complex_grad_check(op, args)
    needed = False
    edges = []
    for a in args:
        if isinstance(a, T) and a.requires_grad:
            if a.dtype.is_complex:
                _complex_grad_check(op, args)
            needed = True
            edges.append((a.grad_fn, a._output_nr) if a.grad_fn is not None else edge_of(a))
        else:
            edges.append(None)
    if needed:
        first.grad_fn = OpNode(op, args, kw, result, outs, tuple(edges))
        first.requires_grad = True
    return result


# ops whose backward formula is right for complex tensors (conjugate Wirtinger derivatives, as in PyTorch)
COMPLEX_GRAD = {"add", "sub", "neg", "mul", "div", "exp", "abs", "sum", "cat", "flip", "tril", "triu", "to_dtype",
                "to_copy", "clone", "index", "index_select", "gather", "as_strided_scatter", "where"}


def _complex_grad_check(op, args):
    if op.name in COMPLEX_GRAD:
        return
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            raise NotImplementedError(f"{op.name}: the derivative for complex tensors is not implemented in "
                                      "tinytorch; compute it on real and imaginary parts instead")


_cpu = []


def _cpu_backend():
    if not _cpu:
        _cpu.append(get_backend("cpu"))
    return _cpu[0]


# ---- helpers shared by op meta functions -------------------------------------------------------

def same_shape(*shapes):
    return _strides.broadcast_shapes(*shapes)
