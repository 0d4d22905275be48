"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory by not keeping a
segment's intermediate tensors, and running the segment again during backward.

The segment runs under ``no_grad`` in forward; its backward re-runs it with grad enabled (with the random
state restored, so dropout draws the same mask) and back-propagates through the recomputed graph. Gradients
reach the segment's tensor inputs and every leaf it uses (e.g. module parameters), as PyTorch's reentrant
variant does; ``autograd.grad`` through a checkpoint is not supported (the same limit as PyTorch's).
"""
from .._tensor import Tensor
from .._ops.generator import get_rng_state, set_rng_state
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng_state, *args):
        ctx.run = run
        ctx.rng = get_rng_state() if preserve_rng_state else None
        ctx.tensor_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.args = list(args)
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_idx))
        with no_grad():
            out = run(*args)
        ctx.single = isinstance(out, Tensor)
        return out if ctx.single else tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward as _backward
        args = list(ctx.args)
        for i, t in zip(ctx.tensor_idx, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad = t.requires_grad
            args[i] = d
        state = get_rng_state()
        if ctx.rng is not None:
            set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run(*args)
        finally:
            set_rng_state(state)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its intermediate tensors for backward; they are
    recomputed when the gradient is needed (``torch.utils.checkpoint.checkpoint``).

    Returns what ``function`` returns (a tensor or a tuple of tensors). Without any input or parameter that
    requires grad the call is plain ``function(*args)`` under no_grad semantics for its outputs.
    """
    if kwargs:
        run = lambda *a: function(*a, **kwargs)  # noqa: E731
    else:
        run = function
    return _Checkpoint.apply(run, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a ``Sequential`` (or list of modules) in ``segments`` checkpointed chunks; the last chunk runs
    normally (``torch.utils.checkpoint.checkpoint_sequential``)."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(len(fns) // segments, 1)

    def run_range(start, end):
        def f(x):
            for fn in fns[start:end]:
                x = fn(x)
            return x
        return f

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run_range(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run_range(max(end, 0), len(fns))(input)
