"""Optimizer updates as ops: each update's math is written once, here, as the op's decomposition in in-place
tinytorch ops; a backend's fused kernel of the same name (``backends/cpu/fused.py``, ``backends/opencl/fused.py``,
the cpu backend's native ``csrc/optim.cpp``) is a fast path of it that does the whole update in one pass. The ops
are declared ``mutates``: they write their tensor arguments (or lists of tensors) in place and return None, and
the dispatcher bumps those tensors' version counters. ``adam_step`` and ``sgd_momentum_step`` update one
parameter; the ``fused_*`` ops update a whole param group in one call and are what the optimizers use.
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


# ---- multi-tensor updates: one call per param group (PyTorch's ``_fused_adam_`` / ``_fused_sgd_`` family) -------
# Each takes lists of tensors (params, grads, state buffers; a list may be None where the option needs none) and
# writes every params/state tensor in place. The decomposition is the per-tensor reference math, so any backend
# runs them; a backend kernel (the cpu backend's, in C++) does the whole group in one call. ``maximize`` negates
# the gradient inside the update, so no negated copy of it is made. ``state_steps`` are the parameters' step
# counts (0-dim float32 tensors, PyTorch's ``state['step']``): the update adds one to each and uses the new count,
# as PyTorch's optimizers do before their ``_fused_adam_`` call (so a step costs no Python per parameter).

def _next_step(step):
    step.add_(1)
    return step.item()


def _fused_adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                       eps, weight_decay, decoupled, maximize):
    """``adam_step`` on each tensor of the lists, with its step count bumped."""
    for i, p in enumerate(params):
        g = grads[i]
        adam_step(p, -g if maximize else g, exp_avgs[i], exp_avg_sqs[i],
                  None if max_exp_avg_sqs is None else max_exp_avg_sqs[i], lr=lr, beta1=beta1, beta2=beta2,
                  eps=eps, step=_next_step(state_steps[i]), weight_decay=weight_decay, decoupled=decoupled)


def _fused_sgd_update(params, grads, momentum_buffers, *, lr, momentum, dampening, nesterov, weight_decay,
                      maximize, is_first_step):
    """PyTorch's SGD on each tensor: ``b = momentum * b + (1 - dampening) * g`` (``b = g`` on the first step,
    when ``is_first_step``: the buffers are then uninitialised); ``p -= lr * (g + momentum * b if nesterov
    else b)``; no buffers (None) when ``momentum`` is 0."""
    for i, p in enumerate(params):
        g = -grads[i] if maximize else grads[i]
        if momentum and not nesterov and not dampening and not is_first_step:
            sgd_momentum_step(p, g, momentum_buffers[i], lr=lr, momentum=momentum, weight_decay=weight_decay)
            continue
        if weight_decay:
            g = g + p * weight_decay
        if momentum:
            buf = momentum_buffers[i]
            if is_first_step:
                buf.copy_(g)
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g + buf * momentum if nesterov else buf
        p.add_(g, alpha=-lr)


def _fused_rmsprop_update(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, *, lr, alpha, eps,
                          weight_decay, momentum, centered, maximize):
    """PyTorch's RMSprop on each tensor: ``v = alpha v + (1 - alpha) g^2``; ``avg = sqrt(v - ga^2) + eps`` with
    ``ga = lerp(ga, g, 1 - alpha)`` when ``centered`` (``grad_avgs`` None otherwise), else ``sqrt(v) + eps``;
    ``p -= lr * b`` with ``b = momentum * b + g / avg`` when ``momentum > 0`` (``momentum_buffers`` None
    otherwise), else ``p -= lr * g / avg``. The step counts are only counted."""
    for i, p in enumerate(params):
        state_steps[i].add_(1)
        g = -grads[i] if maximize else grads[i]
        if weight_decay:
            g = g + p * weight_decay
        v = square_avgs[i]
        v.mul_(alpha).add_(g * g, alpha=1 - alpha)
        if centered:
            ga = grad_avgs[i]
            ga.lerp_(g, 1 - alpha)
            avg = (v - ga * ga).sqrt_().add_(eps)
        else:
            avg = v.sqrt().add_(eps)
        if momentum > 0:
            buf = momentum_buffers[i]
            buf.mul_(momentum).add_(g / avg)
            p.add_(buf, alpha=-lr)
        else:
            p.add_(g / avg, alpha=-lr)


def _fused_adagrad_update(params, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize):
    """PyTorch's Adagrad on each tensor: ``s += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``
    with ``t`` the parameter's step count once bumped."""
    for i, p in enumerate(params):
        t = _next_step(state_steps[i])
        g = -grads[i] if maximize else grads[i]
        if weight_decay:
            g = g + p * weight_decay
        s = state_sums[i]
        s.add_(g * g)
        p.add_(g / s.sqrt().add_(eps), alpha=-(lr / (1 + (t - 1) * lr_decay)))


_fused_adam_op = defop("fused_adam", _mutating_meta, decomp=_fused_adam_update, mutates=(0, 2, 3, 4, 5))
_fused_sgd_op = defop("fused_sgd", _mutating_meta, decomp=_fused_sgd_update, mutates=(0, 2))
_fused_rmsprop_op = defop("fused_rmsprop", _mutating_meta, decomp=_fused_rmsprop_update, mutates=(0, 2, 3, 4, 5))
_fused_adagrad_op = defop("fused_adagrad", _mutating_meta, decomp=_fused_adagrad_update, mutates=(0, 2, 3))


def fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2, eps,
               weight_decay, decoupled, maximize=False):
    """Run the ``fused_adam`` op over lists of tensors (``max_exp_avg_sqs`` None without amsgrad); returns None."""
    dispatch(_fused_adam_op, (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps),
             {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay,
              "decoupled": decoupled, "maximize": maximize})


def fused_sgd(params, grads, momentum_buffers, *, lr, momentum, dampening, nesterov, weight_decay, maximize=False,
              is_first_step=False):
    """Run the ``fused_sgd`` op over lists of tensors (``momentum_buffers`` None without momentum)."""
    dispatch(_fused_sgd_op, (params, grads, momentum_buffers),
             {"lr": lr, "momentum": momentum, "dampening": dampening, "nesterov": nesterov,
              "weight_decay": weight_decay, "maximize": maximize, "is_first_step": is_first_step})


def fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, *, lr, alpha, eps,
                  weight_decay, momentum, centered, maximize=False):
    """Run the ``fused_rmsprop`` op over lists of tensors (``grad_avgs`` None unless centered,
    ``momentum_buffers`` None without momentum)."""
    dispatch(_fused_rmsprop_op, (params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps),
             {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay, "momentum": momentum,
              "centered": centered, "maximize": maximize})


def fused_adagrad(params, grads, state_sums, state_steps, *, lr, lr_decay, weight_decay, eps, maximize=False):
    """Run the ``fused_adagrad`` op over lists of tensors."""
    dispatch(_fused_adagrad_op, (params, grads, state_sums, state_steps),
             {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay, "eps": eps,
              "maximize": maximize})
