"""Optimizer updates as ops: each update's math is written once, here, as the op's decomposition in in-place
tinytorch ops; a backend's fused kernel of the same name (``backends/cpu/fused.py``, ``backends/opencl/fused.py``)
is a fast path of it that does the whole update in one pass. The ops are declared ``mutates``: they write their
tensor arguments in place and return None, and the dispatcher bumps those arguments' version counters.
"""
import math

from .._dispatch import defop, dispatch


def _mutating_meta(*args, **kw):
    # no outputs; tensor arguments reach the kernel as they are (no casts: the kernel writes them)
    return [], (None,) * len(args)


def _adam_update(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, lr, beta1, beta2, eps, step, weight_decay,
                 decoupled):
    """One Adam step (Kingma & Ba 2015, Algorithm 1, with PyTorch's ``torch.optim.Adam`` formulation) on ``p`` in
    place, and on the moment estimates ``exp_avg`` / ``exp_avg_sq`` (and ``max_exp_avg_sq`` for amsgrad, else None).
    ``step`` is the 1-based step count used by the bias corrections. ``weight_decay`` is L2 added to the gradient,
    or with ``decoupled`` a decay of the parameter itself (AdamW, Loshchilov & Hutter 2019)."""
    if weight_decay:
        if decoupled:
            p.mul_(1 - lr * weight_decay)
        else:
            grad = grad + p * weight_decay
    # written with basic in-place ops, which the cpu backend runs in one pass each
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    v = exp_avg_sq
    if max_exp_avg_sq is not None:
        max_exp_avg_sq.copy_(max_exp_avg_sq.maximum(exp_avg_sq))
        v = max_exp_avg_sq
    denom = v.sqrt().div_(math.sqrt(bc2)).add_(eps)
    p.add_(exp_avg / denom, alpha=-lr / bc1)


def _sgd_momentum_update(p, grad, momentum_buffer, *, lr, momentum, weight_decay):
    """One SGD-with-momentum step after the first (PyTorch's ``torch.optim.SGD`` without dampening or Nesterov):
    ``b = momentum * b + (g + weight_decay * p)``; ``p -= lr * b``, both in place."""
    if weight_decay:
        grad = grad + p * weight_decay
    momentum_buffer.mul_(momentum).add_(grad)
    p.add_(momentum_buffer, alpha=-lr)


_adam_step_op = defop("adam_step", _mutating_meta, decomp=_adam_update, mutates=(0, 2, 3, 4))
_sgd_momentum_step_op = defop("sgd_momentum_step", _mutating_meta, decomp=_sgd_momentum_update, mutates=(0, 2))


def adam_step(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, lr, beta1, beta2, eps, step, weight_decay,
              decoupled):
    """Run the ``adam_step`` op (see ``_adam_update`` for the math); returns None."""
    dispatch(_adam_step_op, (p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq),
             {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "step": step, "weight_decay": weight_decay,
              "decoupled": decoupled})


def sgd_momentum_step(p, grad, momentum_buffer, *, lr, momentum, weight_decay):
    """Run the ``sgd_momentum_step`` op (see ``_sgd_momentum_update`` for the math); returns None."""
    dispatch(_sgd_momentum_step_op, (p, grad, momentum_buffer),
             {"lr": lr, "momentum": momentum, "weight_decay": weight_decay})
