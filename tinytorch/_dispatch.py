"""The one op path.

``dispatch(op, args, kw, out=None)`` is what every tinytorch op goes through. An op is declared once, as an
``Op`` record (``defop``), and its flags choose the steps:

0. autocast: when autocast is on and the op has a policy (``Op.autocast``), its floating arguments are cast;
   a composite op (no ``meta``) then runs its decomposition, whose ops take this path one by one;
1. device check: all tensor arguments on one device (0-dim cpu tensors may join any device);
2. ``op.meta``: argument checks, type promotion and the output shape/dtype; it also says which
   dtype each tensor argument is cast to before the kernel sees it; for a view op (``Op.view``) it gives the
   view's geometry instead and no kernel runs (the view step, inline in ``dispatch``);
3. the kernel the device's backend registered for ``op.name`` — or, when the backend has none,
   ``op.decomp``, the op written in other tinytorch ops (which then record their own graph); an op that
   ``mutates`` its arguments (a fused optimizer update) gets their version counters bumped;
4. autograd: when grad mode is on and an input requires grad, an ``OpNode`` that runs
   ``op.backward`` (a formula written in tinytorch ops, so it is itself differentiable);
5. with ``out`` (in-place ops, ``out=``): the result is written into it by the backend's in-place kernel or the
   write step (``write``), which every in-place write and ``copy_`` ends in.

Kernels never see autograd or ``Tensor``; they get backend-native arrays and keyword attributes.
"""
import functools
from typing import Any, Callable, Dict, Optional, Tuple

from . import _strides
from .autograd.engine import Node, edge_of
from ._modes import _ac, _lazy, _suspended, _state
from .autograd.graph import _hooks as _saved_hooks
from ._dtype import float32 as _float32
from .device import get_backend, register_backend as _register_device

OPS = {}
_EMPTY = {}
Tensor = None  # set by _tensor.py (import cycle)
_new = None  # _tensor._new, likewise
_observer = None  # while a profiler or FLOP counter listens: autograd/profiler.py's _observe, which wraps each call
# ``sparse_call(op, args, kw)``: how an op runs when an argument is a sparse tensor (PyTorch's SparseCPU dispatch
# key): set by tinytorch/sparse, which holds the sparse implementations and raises PyTorch's error for the rest
sparse_call = None


def _fusible_ops():
    from .kernels.formulas import fusible_ops
    return fusible_ops()


class Op:
    """The record of one op: everything the dispatcher needs to know about it, declared once where the op is
    written (PyTorch's ``native_functions.yaml`` entry plus its ``derivatives.yaml`` entry).

    meta(*args, **kw) -> (outs, casts): ``outs`` is a list of (shape, dtype) per output,
    ``casts`` the dtype each positional argument is cast to (None: left as is). For a view op, meta returns
    the view's geometry ``(shape, strides, offset)`` instead.
    backward(ctx, grad) -> one gradient (or None) per positional argument; ``ctx.inputs``,
    ``ctx.out``, ``ctx.kw``, ``ctx.shapes``, ``ctx.outs`` give what was saved. Gradients
    are summed to the input's shape and cast to its dtype by the node, so formulas may
    return broadcast-shaped gradients. Only output 0 is differentiable.
    decomp(*args, **kw): the op written in other ops; runs where a backend has no kernel for it.

    What the node saves for ``backward`` (PyTorch's saved variables: what its ``derivatives.yaml`` formulas name):
    ``save_inputs`` / ``save_output`` are True (every tensor argument / every output), False (none) or a tuple of
    entries, each a position (saved whenever a graph is recorded) or ``(position, needers)``: saved only when an
    argument at one of the positions ``needers`` requires grad, as PyTorch saves ``other`` for ``mul`` only when
    ``self`` needs its gradient; or a callable ``spec(n, next_edges, kw)`` -> the positions saved. A saved tensor modified in place before backward makes reading ``ctx.inputs`` /
    ``ctx.out`` raise PyTorch's error; a tensor argument not saved reads as None there, and an output not saved
    as None in the ``ctx.out`` tuple.

    Flags:
      complex_grad  the backward formula is right for complex inputs (conjugate Wirtinger derivatives, as
                    PyTorch's); other ops refuse to record a graph through complex tensors;
      view          the output shares the input's storage: no kernel, only new geometry (``meta``);
      mutates       indices of the arguments (tensors or lists of tensors) the op writes in place (fused
                    optimizer updates); its kernel returns nothing and the dispatcher bumps those tensors'
                    version counters;
      autocast      None, or the policy under ``autocast``: 'lower' / 'fp32' (arguments cast first) / 'off'
                    (set by ``autocast_op``); the dispatcher's autocast step applies it;
      differentiable  False for an op PyTorch gives no gradient (its output never requires grad, even when its
                    decomposition is made of differentiable ops);
      refused       {dtype name: (exception type, message)}: dtypes PyTorch's kernel is not compiled for
                    (``refuse(dtypes, exception, message)`` builds it);
      elementwise   each output element depends only on the input elements at its position (PyTorch's
                    ``tags: pointwise``): the compiler predicts its output's memory order from its inputs'
                    (``compiler/lazy.py``);
      fusible       it has a formula marked fusible in ``kernels/formulas.py`` (set from there unless given): the
                    compiler may fuse it into a generated kernel (``compiler/fusion.py``);
      reduction     it reduces dims of its input (sum, amax, argmax, all ...).

    An op without ``meta`` is a composite: the dispatcher applies its autocast policy and runs ``decomp``, whose
    ops then take the path one by one (``autocast_op`` declares these).
    """

    __slots__ = ("name", "meta", "backward", "decomp", "save_inputs", "save_output", "refused", "complex_grad",
                 "view", "mutates", "autocast", "differentiable", "special", "elementwise", "fusible", "reduction")

    def __init__(self, name: str, meta: Optional[Callable[..., Any]], backward: Optional[Callable[..., Any]] = None,
                 decomp: Optional[Callable[..., Any]] = None, save_inputs: Any = True, save_output: Any = False,
                 *, complex_grad: bool = False, view: bool = False, mutates: Tuple[int, ...] = (),
                 autocast: Optional[str] = None, differentiable: bool = True,
                 refused: Optional[Dict[str, Tuple[type, str]]] = None, elementwise: bool = False,
                 fusible: Optional[bool] = None, reduction: bool = False):
        self.name = name
        self.refused = refused
        self.meta = meta
        self.backward = backward
        self.decomp = decomp
        self.save_inputs = save_inputs
        self.save_output = save_output
        self.complex_grad = complex_grad
        self.view = view
        self.mutates = tuple(mutates)
        self.autocast = autocast
        self.differentiable = differentiable
        self.elementwise = elementwise
        self.fusible = (name in _fusible_ops()) if fusible is None else fusible
        self.reduction = reduction
        self.special = autocast is not None or meta is None or view or bool(mutates)  # steps before the common path

    def __repr__(self):
        return f"Op({self.name})"


# PyTorch compiles each CPU kernel for a set of dtypes (the AT_DISPATCH_* macro around it) and refuses the
# others; NumPy's kernels accept more. An op whose set is narrower declares the rest with its ``refused`` flag,
# {dtype name: (exception type, message)}, checked in ``dispatch`` on the dtype the op computes in (its first cast
# dtype, else its first tensor argument's), before any kernel runs. ``{T}`` is PyTorch's scalar type name.
COMPLEX_DTYPES = ("complex64", "complex128")


def refuse(dtypes, exc, msg):
    """The ``refused`` flag of an op: each dtype name of ``dtypes`` -> (exception type, message)."""
    return {d: (exc, msg) for d in dtypes}


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


def defop(name: str, meta: Optional[Callable[..., Any]], backward: Optional[Callable[..., Any]] = None,
          decomp: Optional[Callable[..., Any]] = None, save_inputs: bool = True, save_output: bool = False,
          **flags: Any) -> Op:
    """Declare op ``name`` (see ``Op`` for the parts and ``flags``) and add it to the registry ``OPS``.
    RuntimeError when the name is taken: an op is declared once."""
    if name in OPS:
        raise RuntimeError(f"op {name} defined twice")
    op = Op(name, meta, backward, decomp, save_inputs, save_output, **flags)
    OPS[name] = op
    return op


def _check_version(t, expected, node, idx):
    if t._storage._version[0] != expected:
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[{t.type()} {list(t._shape)}], which is {'output' if idx < 0 else 'input'} "
            f"{idx if idx >= 0 else -1 - idx} "
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
        si = op.save_inputs
        if si:
            if si is not True:
                args = _kept(args, si, next_edges, kw)
            self._inputs = args
            self._versions = [a._storage._version[0] if isinstance(a, T) else 0 for a in args]
            if _state.inference_seen:
                _no_inference_saved(args)
        else:
            self._inputs = None
        so = op.save_output
        if so:
            # multi-output ops (values, indices) keep their outputs as a tuple; only the first is differentiable
            if isinstance(out, tuple):
                kept = out if so is True else _kept(out, so, next_edges, kw)
                self._out = tuple(None if o is None else o._alias() for o in kept)
                self._out_version = tuple(None if o is None else o._storage._version[0] for o in kept)
            else:
                self._out = out._alias()
                self._out_version = out._storage._version[0]
        else:
            self._out = None

    def _save_packed(self, args, out):
        """Save through the active ``autograd.graph.saved_tensors_hooks`` (no version checks on those)."""
        T = Tensor
        from .autograd.graph import packer
        pack, self._unpack = packer()
        si, so = self.op.save_inputs, self.op.save_output
        if si and si is not True:
            args = _kept(args, si, self.next_edges, self.kw)
        self._inputs = tuple((True, pack(a)) if isinstance(a, T) else (False, a) for a in args) if si else None
        if so:
            outs = out if isinstance(out, tuple) else (out,)
            if so is not True and isinstance(out, tuple):
                outs = _kept(outs, so, self.next_edges, self.kw)
            self._out = (isinstance(out, tuple), tuple(None if o is None else pack(o._alias()) for o in outs))
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
            outs = tuple(None if p is None else self._unpack(p) for p in packed)
            return outs if is_tuple else outs[0]
        outs = self._out
        if isinstance(outs, tuple):
            for k, (o, v) in enumerate(zip(outs, self._out_version)):
                if o is not None and o._storage._version[0] != v:
                    _check_version(o, v, self, -1 - k)
            o = outs[0]
            if o is None:
                return outs
        else:
            o = outs
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
        g = grads[0] if len(grads) == 1 else grads  # a node of several outputs (split) gets them all
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
                    gi = dispatch(OPS["real"], (gi,))  # a real input's gradient is the real part (PyTorch's)
                gi = gi.to(dt)
            out.append(gi)
        return out

    def release(self):
        self._inputs = None
        self._out = None
        self.released = True


def _kept(values, spec, next_edges, kw):
    """``values`` (an op's arguments or outputs) with None at the positions ``spec`` does not save for this call:
    a spec entry is a position, or ``(position, needers)`` saved only when an argument at one of ``needers``
    requires grad (its edge is set). A callable spec (for ops with a variable number of arguments, or whose saved
    set depends on an attribute) is ``spec(len(values), next_edges, kw)`` -> the positions saved."""
    if callable(spec):
        keep = spec(len(values), next_edges, kw)
        return tuple(v if i in keep or not isinstance(v, Tensor) else None for i, v in enumerate(values))
    keep = set()
    for e in spec:
        if type(e) is int:
            keep.add(e)
        elif any(next_edges[j] is not None for j in e[1] if j < len(next_edges)):
            keep.add(e[0])
    return tuple(v if i in keep or not isinstance(v, Tensor) else None for i, v in enumerate(values))


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


def dispatch(op, args, kw=None, out=None, _observed=False):
    """Run ``op`` on positional ``args`` (tensors and scalars) and keyword attributes ``kw``.

    The steps (module docstring) depend on the op's flags: a view op only gets new geometry over its input's
    storage; a composite runs its decomposition; with ``out`` (a Tensor) the result is written into it, through
    the backend's in-place kernel when ``out`` is the first argument (``Tensor.add_``), else by the op ``copy_``
    (the write step, ``write``); an op that ``mutates`` its arguments (a fused optimizer update) returns None.
    ``_observed`` is set by the profiler's wrapper (``_observer``) when it runs the call it has recorded.
    """
    if _observer is not None and not _observed:  # the one test profiling costs when off
        return _observer(op, args, kw, out)
    if kw is None:
        kw = _EMPTY
    if op.special:  # one test on the common path: a view, an autocast policy, a composite or a mutating op
        if op.view:  # the view step (inline: views are frequent and cheap)
            x = args[0]
            if x._storage.sparse:
                return sparse_call(op, args, kw)
            geometry = op.meta(x, **kw)
            if geometry.__class__ is list:  # several views (split)
                return _views(op, x, kw, geometry)
            if len(geometry) == 3:
                t = _new(x._storage, geometry[0], geometry[1], geometry[2], x.dtype)
            else:  # a fourth element: the dtype the view reinterprets the memory as
                t = _new(x._storage if geometry[3] is x.dtype else _reinterpret(x._storage, geometry[3]),
                         geometry[0], geometry[1], geometry[2], geometry[3])
            t._base = x._base if x._base is not None else x
            if x.requires_grad and _state.enabled and op.backward is not None:
                _record_view(op, x, kw, t)
            return t
        for a in args:
            if isinstance(a, Tensor) and a._storage.sparse:
                return sparse_call(op, args, kw)
        if op.autocast is not None and _ac.active:
            if op.autocast == "off":
                with _suspended():
                    return dispatch(op, args, kw, out, True)
            args, kw = _autocast(op, args, kw)
        if op.meta is None:  # a composite: its decomposition's ops take the path one by one
            return op.decomp(*args, **kw)
        if op.mutates:
            return _mutate(op, args, kw)
    if out is not None:
        return _into(op, args, kw, out)
    T = Tensor
    dev = backend = None
    grad = False  # whether an input requires grad: only then can the autograd record step attach a node
    for a in args:
        if isinstance(a, T):
            if a.requires_grad:
                grad = True
            st = a._storage
            if st.sparse:
                return sparse_call(op, args, kw)
            if dev is None:
                dev, backend = st.device, st.backend
            elif st.device is not dev:
                dev = device_of(args, op.name)
                backend = get_backend(dev)
                grad = any(isinstance(x, T) and x.requires_grad for x in args)
                break
    if dev is None:
        if args and not any(isinstance(v, T) for v in kw.values()):
            # no tensor at all (sigmoid(1.5)): PyTorch's ops take their input as a Tensor
            raise TypeError(f"{op.name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        backend = _cpu_backend()
    try:
        outs, casts = op.meta(*args, **kw) if kw else op.meta(*args)
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
        if not _state.enabled or op.backward is None and op.differentiable:
            return op.decomp(*args, **kw)  # autograd, if any, comes from the primitives
        _state.enabled = False
        try:
            result = op.decomp(*args, **kw)
        finally:
            _state.enabled = True
        return result if op.backward is None else _record(op, args, kw, result, outs)
    if _lazy.active:  # inside a compiled function: the call is recorded, its kernel runs when the graph does
        result = _lazy.recording.record(op, args, kw, outs, casts, backend, dev, kern)
        if result is not None:
            if grad and _state.enabled and op.backward is not None:
                _record(op, args, kw, result, outs)
            return result
    natives = []
    for a, c in zip(args, casts):
        if isinstance(a, T):
            if a._storage.device is not dev:  # a 0-dim cpu tensor joining another device's op
                natives.append(a.item())
                continue
            nat = a._nat
            if nat is None:
                nat = a._native()
            if c is not None and a.dtype is not c:
                nat = backend.cast(nat, c)
            natives.append(nat)
        else:
            natives.append(a)
    try:
        res = kern(*natives, **kw) if kw else kern(*natives)
    except (MemoryError, ValueError, AttributeError, TypeError) as e:
        _raise_kernel_error(op, args, kw, e)
        raise
    if len(outs) == 1:
        shape, dtype = outs[0]
        result = T._from_native(backend, dev, res, dtype, shape)
        if grad and _state.enabled and op.backward is not None:
            _record(op, args, kw, result, outs)
        return result
    results = tuple(T._from_native(backend, dev, r, dt, shp) for r, (shp, dt) in zip(res, outs))
    if grad and _state.enabled and op.backward is not None:
        _record(op, args, kw, results, outs)
    return results


def _views(op, x, kw, geometries):
    """The view step of a view op with several outputs (``split``): a list of views of ``x``, one per geometry,
    sharing one graph node (its output ``i`` is view ``i``), as PyTorch's ``SplitBackward0``."""
    base = x._base if x._base is not None else x
    outs = []
    for shape, stride, offset in geometries:
        t = _new(x._storage, shape, stride, offset, x.dtype)
        t._base = base
        outs.append(t)
    if x.requires_grad and _state.enabled and op.backward is not None:
        node = OpNode(op, (x,), kw, None, None, (edge_of(x),))
        node.n_outputs = len(outs)
        for i, t in enumerate(outs):
            t.grad_fn, t._output_nr, t.requires_grad = node, i, True
    return outs


def _record_view(op, x, kw, t):
    """The autograd step of a view op: ``t`` (the view of ``x``) gets its node (grad mode on, ``x`` requires grad)."""
    t.grad_fn = OpNode(op, (x,), kw, t, None, (edge_of(x),))
    t.requires_grad = True


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


def _complex_grad_check(op, args):
    if op.complex_grad:
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


def register_backend(name, backend):
    """Register ``backend`` (a ``tinytorch.backends.base.Backend``) as device type ``name``
    (``tinytorch.register_backend``). After this, ``tinytorch.device(name)``, ``tensor.to(name)`` and every op
    whose kernel or decomposition chain reaches the backend's kernels work on it. RuntimeError at once when a
    kernel is registered under a name that is no op (``Backend.check_kernels``); ValueError for a name that is
    not an identifier."""
    if isinstance(name, str) and name.isidentifier():
        backend.name = name  # named before the check, so its message names the backend
        backend.check_kernels(OPS)
    return _register_device(name, backend)


# ---- the view, in-place and write steps of the one path ---------------------------------------------------------

def _reinterpret(st, dtype):
    """A Storage over ``st``'s memory whose elements are ``dtype`` (NotImplementedError from a backend that cannot
    reinterpret its buffers); writes through either bump the one version counter."""
    from ._storage import Storage
    s = Storage(st.backend.reinterpret(st.buf, st.dtype, dtype), dtype, st.device,
                st.size * st.dtype.itemsize // dtype.itemsize, st.backend)
    s._version = st._version
    s.inference = st.inference
    return s


def _mutate(op, args, kw):
    """An op that writes its arguments in place (``Op.mutates``: a fused optimizer update) and returns None: the
    backend's kernel when every tensor argument is on one device in the first one's dtype (kernels write native
    buffers as they are), else the decomposition. An argument may be a list of tensors (a multi-tensor update
    over a param group, as PyTorch's ``_fused_adam_``): its tensors are written, checked and bumped alike, and
    the kernel gets a list of native buffers. Written leaves that require grad are refused (with grad mode on)
    as any in-place op refuses them; the written tensors' version counters are bumped."""
    tensors = [t for a in args for t in (a if type(a) in (list, tuple) else (a,)) if isinstance(t, Tensor)]
    if not tensors:  # an empty param group
        return None
    written = [t for i in op.mutates for t in (args[i] if type(args[i]) in (list, tuple) else (args[i],))
               if isinstance(t, Tensor)]
    for t in written:
        if t.requires_grad or t._storage.inference:
            t._check_inplace()
            t._check_inference_write()
    dev = tensors[0]._storage.device
    kern = get_backend(dev).kernels.get(op.name) if _writable_natives(tensors, dev) else None
    if kern is None:
        dev = device_of(tensors, op.name)  # tensors on two devices (beyond 0-dim cpu ones) are an error
        if op.decomp is None:
            raise NotImplementedError(f"Could not run '{op.name}' on the '{dev}' device: no kernel and no "
                                      "decomposition")
        op.decomp(*args, **kw)
        return None
    if _lazy.active:
        _lazy.recording.record_mutation(op.name, kern, args, kw)
    else:
        kern(*[a._native() if isinstance(a, Tensor) else
               [t if t is None else t._native() for t in a] if type(a) in (list, tuple) else a for a in args], **kw)
    for t in written:
        t._storage._version[0] += 1
    return None


def _writable_natives(tensors, dev):
    """Whether a mutating op's kernel may run: every tensor argument on ``dev`` in the first one's dtype, but for
    0-dim float32 tensors (an optimizer's step counts, float32 whatever the parameters' dtype, as PyTorch's), which
    may also be on the cpu when ``dev`` is another device (PyTorch keeps them there: the kernel reads them on the
    host)."""
    dt = tensors[0].dtype
    for a in tensors:
        step = not a._shape and a.dtype is _float32
        if a._storage.device is not dev and not (step and a._storage.device.type == "cpu") or \
                a.dtype is not dt and not step:
            return False
    return True


def _into(op, args, kw, out):
    """``op(*args)`` written into ``out``. When ``out`` is ``args[0]`` (an in-place op) and no graph is recorded,
    the backend's in-place kernel for the op, if it has one, writes straight into ``out`` (one pass instead of
    two); when a graph is recorded, the op reads a copy of ``out``, as the node may save its input."""
    if out is args[0]:
        if _state.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args):
            out._check_inplace()
            args = (out.clone(),) + tuple(args[1:])
        else:
            ik = out._storage.backend.inplace_kernels.get(op.name)
            if ik is not None and _inplace_direct(op, ik, out, args[1:], kw):
                return out
    return dispatch(COPY_OP, (out, dispatch(op, args, kw)), {"op": op.name + "_"})


def _inplace_direct(op, kernel, self, args, kw):
    dev = self._storage.device
    natives = []
    for a in args:
        if isinstance(a, Tensor):
            if a._storage.device is not dev or a._storage.sparse:  # a sparse operand: computed, then written
                return False
            natives.append(None if _lazy.active else a._native())
        else:
            natives.append(a)
    outs, _ = op.meta(self, *args, **kw)
    if len(outs) != 1 or outs[0][0] != self._shape or outs[0][1] is not self.dtype or _overlaps_itself(self):
        return False
    self._check_inference_write()
    if _lazy.active:
        _lazy.recording.record_mutation(op.name + "_", kernel, (self,) + tuple(args), kw)
    else:
        kernel(self._native(), *natives, **kw)
    self._storage._version[0] += 1
    return True


def check_out_grad(name, args, kw):
    """PyTorch's refusal of ``out=`` in a recorded graph: an op writing into ``out`` has no derivative, so with
    grad mode on no tensor argument (nor one inside a list argument) may require grad."""
    if not _state.enabled:
        return
    for a in (*args, *kw.values()):
        if isinstance(a, Tensor) and a.requires_grad or \
                type(a) in (list, tuple) and any(isinstance(x, Tensor) and x.requires_grad for x in a):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")


def _out_bool(name, o, r, inputs):
    if o.dtype is not _bool_dtype():
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


def _out_bool_or_uint8(name, o, r, inputs):
    if o.dtype.name not in ("bool", "uint8"):
        raise RuntimeError(f"{name} only supports bool tensor for result, got: {_TYPE_NAMES[o.dtype.name]}")


def _out_exact(name, o, r, inputs):
    if o.dtype is not r.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {r.dtype.name.replace('float32', 'float')}, but got "
                           f"{o.dtype.name} instead")


def _out_index_dtype(name, o, r, inputs):
    if o.dtype.name not in ("int32", "int64"):
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got "
                           f"{_TYPE_NAMES[o.dtype.name]}")


def _out_no_overlap(name, o, r, inputs):
    st = o._storage
    if any(isinstance(t, Tensor) and t._storage is st for t in inputs):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor refer "
                           "to a single memory location. Please clone() the tensor before performing the operation.")


def _bool_dtype():
    from ._dtype import bool as b
    return b


# ``out`` rules of single PyTorch kernels beyond the common cast rule (``write_out``): bool-only results
# (``signbit``'s "does not support non-boolean outputs"), exact dtypes, and the kernels that call
# ``at::assert_no_overlap(result, input)`` (a gather cannot write into what it reads)
_OUT_RULES = {"signbit": _out_bool, "isposinf": _out_bool, "isneginf": _out_bool, "isin": _out_exact,
              "all": _out_bool_or_uint8, "any": _out_bool_or_uint8, "searchsorted": _out_index_dtype,
              "bucketize": _out_index_dtype, "float_power": _out_exact, "gather": _out_no_overlap,
              "index_select": _out_no_overlap, "masked_select": _out_no_overlap, "take_along_dim": _out_no_overlap,
              "cross": _out_no_overlap, "take": _out_no_overlap}


def write_out(name, out, result, inputs=()):
    """The ``out=`` step: ``result`` (a Tensor, or a tuple of them for ops with several outputs) written into
    ``out`` (a Tensor, or a tuple/list of as many) with PyTorch's rules, and ``out`` returned (a tuple result
    keeps its named-tuple type). Every public function's ``out=`` argument ends here (``_surface`` passes it).

    - ``out`` of another shape is resized to the result's (a UserWarning when it had elements: PyTorch
      deprecates resizing a non-empty ``out``); memory borrowed from NumPy cannot grow (RuntimeError).
    - The result's dtype must cast to ``out``'s without changing kind (float into int, int into bool: RuntimeError
      "result type Float can't be cast to the desired output type Long"); the device must be ``out``'s.
    - TypeError for an ``out`` that is not a Tensor (not a tuple of Tensors for a tuple result) and for a tuple
      of the wrong length. Every ``out`` is checked before any is written, so a refused call changes nothing.
    - The functions of ``_OUT_RULES`` add their own rule (a bool-only result, no memory shared with ``inputs``,
      the call's tensor arguments), as their PyTorch kernels do.
    """
    import warnings
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        if len(out) != len(result):
            raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
        outs, results = tuple(out), result
    else:
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        outs, results = (out,), (result,)
    for o, r in zip(outs, results):
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(o).__name__}")
        if not isinstance(r, Tensor):
            return result  # a value that is not a tensor (a Python number) has no ``out`` to fill
        rule = _OUT_RULES.get(name)
        if rule is not None:
            rule(name, o, r, inputs)
        if not _can_cast(r.dtype, o.dtype):
            raise RuntimeError(f"result type {_TYPE_NAMES[r.dtype.name]} can't be cast to the desired output "
                               f"type {_TYPE_NAMES[o.dtype.name]}")
        if o.device != r.device:
            raise RuntimeError(f"Expected out tensor to have device {r.device}, but got {o.device} instead")
        if o._shape != r._shape and not o._storage.resizable and \
                o._offset + _strides.numel(r._shape) > o._storage.size:
            raise RuntimeError("Trying to resize storage that is not resizable")
    for o, r in zip(outs, results):
        if o._shape != r._shape:
            if o.numel():
                warnings.warn(f"An output with one or more elements was resized since it had shape {list(o._shape)}, "
                              f"which does not match the required output shape {list(r._shape)}. This behavior is "
                              "deprecated, and in a future PyTorch release outputs will not be resized unless they "
                              "have zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, "
                              "to zero elements with t.resize_(0).", UserWarning, stacklevel=3)
            o.resize_(r._shape)
        dispatch(COPY_OP, (o, r), {"op": name})
    if isinstance(result, tuple):
        return type(result)(*outs) if hasattr(result, "_fields") else outs
    return out


def _overlaps_itself(t):
    for s, st in zip(t._shape, t._stride):
        if st == 0 and s > 1:
            return True
    return False


def _can_cast(frm, to):
    return frm.category <= to.category


def write(dst, src, op="copy_"):
    """The write step: ``src`` (a tensor, broadcast to ``dst``'s shape and cast to its dtype) into ``dst``'s
    memory; bumps the version counter and splices the autograd graph (PyTorch's ``copy_`` and, for a view,
    CopySlices). Every in-place op, ``out=`` argument and ``copy_`` ends here. ``op`` names the op in errors."""
    if src._shape != dst._shape:
        try:
            bshape = _strides.broadcast_shapes(dst._shape, src._shape)
        except RuntimeError:
            bshape = None
        if bshape != dst._shape:
            raise RuntimeError(f"output with shape {list(dst._shape)} doesn't match the broadcast shape "
                               f"{list(bshape or src._shape)}")
    if src.dtype is not dst.dtype and op != "copy_" and not _can_cast(src.dtype, dst.dtype):
        raise RuntimeError(f"result type {_TYPE_NAMES[src.dtype.name]} can't be cast to the desired output "
                           f"type {_TYPE_NAMES[dst.dtype.name]}")
    if dst.numel() and _overlaps_itself(dst):
        # PyTorch's assert_no_internal_overlap: a written-to tensor with a stride-0 dim (an expanded one)
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    dst._check_inference_write()
    dst._check_multi_view()
    sb = dst._storage.backend
    if src._storage.device != dst._storage.device:
        src = src.to(dst._storage.device)
    if _lazy.active:
        _lazy.recording.record_copy(dst, src)
    else:
        sb.copy_(dst._native(), src._native())
    dst._storage._version[0] += 1
    if _state.enabled and (src.requires_grad or dst.requires_grad):
        if src.dtype is not dst.dtype:
            src = src.to(dst.dtype)
        if src._shape != dst._shape:
            src = src.expand(dst._shape)
        base = dst._base
        if base is not None and (base.requires_grad or src.requires_grad):
            _copy_slices(dst, base, src)
        elif src.requires_grad:
            if src.grad_fn is None:  # src is a leaf: route through an identity op to keep the edge
                src = dispatch(OPS["clone"], (src,))
            dst.grad_fn, dst._output_nr, dst.requires_grad = src.grad_fn, src._output_nr, True
        else:  # overwritten by a constant: no gradient flows to the old history
            dst.grad_fn, dst.requires_grad = None, False
    return dst


# Every write into an existing tensor is this op: in-place ops, ``out=`` and ``Tensor.copy_``. Its body is the
# write step (no meta: the step checks shapes and dtypes itself); it mutates its first argument.
COPY_OP = defop("copy_", None, decomp=write, mutates=(0,))


def _copy_slices(view, base, src):
    """Autograd for an in-place write into a view (PyTorch's CopySlices).

    ``base``'s history becomes: the old base with the view's region replaced by ``src``; the view is
    then re-derived from the new base by ``as_strided``.
    """
    if view.dtype is not base.dtype and base.dtype.is_complex and view.dtype is base.dtype.to_real() \
            and not (base.requires_grad and base.grad_fn is None) \
            and _strides.is_contiguous(base._shape, base._stride):
        return _copy_slices_real(view, base, src)
    if view.dtype is not base.dtype:
        raise NotImplementedError(f"in-place write with autograd into a {view.dtype} view of a {base.dtype} tensor "
                                  "(.real, .imag, view_as_real) is not supported by tinytorch; write into a clone")
    if base.requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if not _strides.is_contiguous(base._shape, base._stride):
        raise NotImplementedError("in-place write with autograd into a view of a non-contiguous tensor is not "
                                  "supported; call .contiguous() on the base first")
    rel = view._offset - base._offset
    geo = {"size": view._shape, "stride": view._stride, "storage_offset": rel}
    old = base._alias()
    old.grad_fn, old.requires_grad, old._output_nr = base.grad_fn, base.requires_grad, base._output_nr
    node = OpNode(OPS["as_strided_scatter"], (old, src), geo, base, [(base._shape, base.dtype)],
                  (edge_of(old), edge_of(src)))
    base.grad_fn, base._output_nr, base.requires_grad = node, 0, True
    v = dispatch(OPS["as_strided"], (base,), {"size": view._shape, "stride": view._stride, "rel_offset": rel,
                                              "in_stride": base._stride})
    view.grad_fn, view._output_nr, view.requires_grad = v.grad_fn, 0, True


def _copy_slices_real(view, base, src):
    """CopySlices for a real view of a complex ``base`` (``view_as_real``, ``.real``, ``.imag``): the same
    splice done on the base seen as its (*, 2) real pairs, whose contiguous layout the view's geometry (in real
    elements of the shared storage) addresses: new base = view_as_complex(as_strided_scatter(view_as_real(old
    base), src)), and the view is re-derived from it by ``as_strided`` of its real pairs."""
    old = base._alias()
    old.grad_fn, old.requires_grad, old._output_nr = base.grad_fn, base.requires_grad, base._output_nr
    real_shape = base._shape + (2,)
    rel = view._offset - 2 * base._offset
    geo = {"size": view._shape, "stride": view._stride, "storage_offset": rel}
    pairs_old = dispatch(OPS["view_as_real_copy"], (old,)) if old.requires_grad else None
    # the spliced pairs: an alias of base's memory reinterpreted as real, carrying the scatter's node
    pairs = _new(_reinterpret(base._storage, view.dtype), real_shape, _strides.contiguous_strides(real_shape),
                 2 * base._offset, view.dtype)
    pairs.grad_fn = OpNode(OPS["as_strided_scatter"], (pairs_old, src), geo, pairs, [(real_shape, view.dtype)],
                           (None if pairs_old is None else edge_of(pairs_old), edge_of(src) if src.requires_grad
                            else None))
    pairs.requires_grad = True
    base.grad_fn = OpNode(OPS["view_as_complex"], (pairs,), _EMPTY, base, [(base._shape, base.dtype)],
                          (edge_of(pairs),))
    base._output_nr, base.requires_grad = 0, True
    flat = dispatch(OPS["view_as_real_copy"], (base,))
    v = dispatch(OPS["as_strided"], (flat,), {"size": view._shape, "stride": view._stride, "rel_offset": rel,
                                              "in_stride": flat._stride})
    view.grad_fn, view._output_nr, view.requires_grad = v.grad_fn, 0, True


# ---- autocast -------------------------------------------------------------------------------------------------

def _cast(a, device_types, target):
    if isinstance(a, Tensor):
        dt = a.dtype
        if dt.is_floating_point and dt.itemsize != 8 and dt is not target and a.device.type in device_types:
            return a.to(target)
        return a
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
        return type(a)(_cast(x, device_types, target) for x in a)
    return a


def autocast_op(policy):
    """Declare the autocast policy of the decorated public function: 'lower' (floating tensor arguments cast to
    the autocast dtype), 'fp32' (cast to float32) or 'off' (PyTorch runs it as one op outside its lists: its
    inner products must not be cast). The policy is a flag of an op record, applied by ``dispatch``: when an op
    of the function's name exists (the function is that op's public spelling: ``matmul``, ``prod`` ...), the
    flag goes on it; otherwise the function becomes a composite op (no meta, its body the decomposition) under
    its name. RuntimeError when a composite of that name exists already."""
    def deco(fn):
        name = fn.__name__ if fn.__qualname__ == fn.__name__ else fn.__qualname__
        op = OPS.get(name)
        if op is not None:
            op.autocast, op.special = policy, True
            return fn
        op = defop(name, None, decomp=fn, autocast=policy)

        @functools.wraps(fn)
        def wrapper(*args, **kw):
            return dispatch(op, args, kw)
        return wrapper
    return deco


def _autocast(op, args, kw):
    """The autocast step: ``args`` and ``kw`` with the floating tensors cast by the op's policy ('lower': the
    autocast dtype, 'fp32': float32) for every device type with autocast on. ('off' is handled in ``dispatch``:
    the op runs with autocast suspended, so its inner ops are not cast.) Autocast stays on inside a composite,
    whose inner ops apply their own policies: an RNN module's weights reach its inner ``linear`` calls that way,
    as the flat weights reach PyTorch's fused RNN op."""
    from . import _dtype
    for dev, (on, dt) in list(_ac.entries.items()):
        if on:
            target = dt if op.autocast == "lower" else _dtype.float32
            args = tuple(_cast(a, (dev,), target) for a in args)
            kw = {k: _cast(v, (dev,), target) for k, v in kw.items()}
    return args, kw


# ---- helpers shared by op meta functions -------------------------------------------------------

def same_shape(*shapes):
    return _strides.broadcast_shapes(*shapes)


# ---- the common path in C ---------------------------------------------------------------------------------------
# ``dispatch`` above is the reference: every step, readable, and what runs with ``TINYTORCH_NATIVE=0``. With the
# native kernels on, ``dispatch`` is ``tinytorch._C.dispatch`` (csrc/dispatch.cpp): the same steps in C for the
# call most ops make (no ``out=``, no special flag, dense tensors on one device, a registered kernel, no compiled
# recording or profiler, no tracer), reading the same Op records and calling the helpers above for the uncommon
# branches; every other call it hands to ``python_dispatch`` unchanged.
python_dispatch = dispatch


def _native_module():
    from .backends.cpu.native import _C
    return _C


_C = _native_module()
if _C is not None:
    _C.dispatch_setup(python_dispatch)
    dispatch = _C.dispatch


def same_shape_meta(fn):
    """Declare ``fn`` a meta function whose result for two tensors of one dtype and shape (no attributes) is
    ``[(shape, dtype)], (None, None)``, as pointwise's "same" meta (its own first test): the C dispatcher builds
    that result itself instead of calling ``fn``. Returns ``fn``."""
    if _C is not None:
        _C.dispatch_same_meta(fn)
    return fn


def setup_native_dispatch():
    """Turn on the C dispatcher's fast path, once ``Tensor`` exists (called by ``_tensor.py``); nothing without
    the native kernels."""
    if _C is None:
        return
    from ._storage import BorrowedStorage, Storage
    from .backends.cpu import NumpyBackend
    _C.dispatch_setup(python_dispatch, globals(), Tensor, Storage, (Storage, BorrowedStorage), NumpyBackend, Op,
                      _state, _lazy, _check_refused, _record, _raise_kernel_error, _EMPTY, _C.wrap_contiguous,
                      _record_view, _ac)
    from ._dtype import dtype
    from .autograd.engine import Node
    _C.record_setup(OpNode, dtype, Node._counter, _saved_hooks, edge_of, _kept, _no_inference_saved)
