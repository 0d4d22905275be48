"""Custom differentiable functions: ``class MyFn(autograd.Function)`` with static forward/backward."""
from ..autograd.engine import Node, edge_of
from .grad_mode import _state


class FunctionCtx:
    """The ``ctx`` passed to ``forward`` and ``backward``: save_for_backward, saved_tensors, needs_input_grad."""

    def save_for_backward(self, *tensors):
        from .graph import _hooks, packer
        if _hooks.stack:  # saved_tensors_hooks: store what pack returns, unpack on access, no version checks
            pack, self._unpack = packer()
            self._saved = tuple((t is not None, pack(t) if t is not None else None) for t in tensors)
            return
        self._saved = tensors
        self._saved_versions = tuple(t._storage._version[0] if t is not None else 0 for t in tensors)

    @property
    def saved_tensors(self):
        if getattr(self, "_released", False):
            from .._dispatch import _raise_released
            _raise_released()
        saved = getattr(self, "_saved", ())
        unpack = getattr(self, "_unpack", None)
        if unpack is not None:
            return tuple(unpack(v) if packed else None for packed, v in saved)
        for t, v in zip(saved, self._saved_versions if saved else ()):
            if t is not None and t._storage._version[0] != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: [{t.type()} {list(t._shape)}] is at version {t._storage._version[0]}; expected "
                    f"version {v} instead.")
        return saved

    def mark_non_differentiable(self, *tensors):
        self._non_diff = set(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self._materialize = value


class BackwardCFunction(Node, FunctionCtx):
    """Graph node of a custom Function call (``<Name>Backward``)."""

    def __init__(self, cls, edges, n_outputs, shapes):
        Node.__init__(self, edges)
        self._cls = cls
        self.n_outputs = n_outputs
        self._out_meta = shapes

    def name(self):
        return self._cls.__name__ + "Backward"

    def apply(self, grads):
        from .._ops.creation import zeros
        grads = [g if g is not None else zeros(s, dtype=d, device=dev) for g, (s, d, dev) in zip(grads, self._out_meta)]
        cls = self._cls
        fn = cls.vjp if cls.vjp is not Function.vjp else cls.backward  # vjp and backward are aliases, as torch
        res = fn(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) < len(self.next_edges):
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{len(self.next_edges)}, got {len(res)})")
        out = []
        for g, e, shp in zip(res, self.next_edges, self._in_shapes):
            if g is not None and e is not None and shp is not None and g._shape != shp:
                g = g.sum_to_size(shp)
            out.append(g if e is not None else None)
        return out

    def release(self):
        self._saved = ()
        self._released = True


class _FunctionMeta(type):
    """Gives each Function subclass its own node class, ``<Name>Backward`` (the grad_fn's type, as in torch)."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {})


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd functions (``torch.autograd.Function``).

    Subclass with ``@staticmethod forward(ctx, *args)`` and ``@staticmethod backward(ctx, *grads)``
    (one gradient per forward input, None for non-tensors), then call ``MyFn.apply(*args)``.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: with it, ``forward`` takes no ctx and this saves what backward needs (torch 2.x style)."""
        raise NotImplementedError("setup_context is not implemented.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor
        tensors = [a for a in args if isinstance(a, Tensor)]
        needs = _state.enabled and any(t.requires_grad for t in tensors)
        ctx = cls._backward_cls(cls, (), 1, ()) if needs else FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = _state.enabled
        _state.enabled = False
        try:
            if cls.setup_context is not Function.setup_context:
                # the functorch-style split: forward(*args) computes, setup_context(ctx, inputs, output) saves
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev
        if not needs:
            return out
        outs = out if isinstance(out, tuple) else (out,)
        ctx.next_edges = tuple(edge_of(a) if isinstance(a, Tensor) else None for a in args)
        ctx._in_shapes = tuple(a._shape if isinstance(a, Tensor) else None for a in args)
        ctx.n_outputs = len(outs)
        ctx._out_meta = tuple((o._shape, o.dtype, o.device) if isinstance(o, Tensor) else ((), None, None)
                              for o in outs)
        non_diff = getattr(ctx, "_non_diff", set())
        wrapped = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                if any(o is a for a in args):  # forward returned an input: give the output its own identity
                    o = o._alias()
                if id(o) not in non_diff and o.dtype.is_floating_point:
                    o.grad_fn, o._output_nr, o.requires_grad = ctx, i, True
            wrapped.append(o)
        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]


def once_differentiable(fn):
    return fn
