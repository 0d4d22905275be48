"""The ``cpu`` backend's in-place kernels (``Backend.inplace_kernels``): ``add``, ``sub``, ``mul`` and ``div``
written into an existing array, and the fused optimizer updates."""
import math

import numpy as np

from .registry import INPLACE_KERNELS, KERNELS, _quiet


def _ufunc_inplace(uf):
    def k(dst, other, alpha=1, rounding_mode=None):
        if rounding_mode is not None:
            raise NotImplementedError  # not reached: div_ with rounding_mode has no in-place kernel
        with _quiet():
            uf(dst, other if alpha == 1 else np.multiply(other, alpha), out=dst, casting="unsafe")
    return k


for _name, _uf in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}.items():
    INPLACE_KERNELS.add(_name, _ufunc_inplace(_uf))


# fused optimizer updates: fast paths of the ops in tinytorch/_ops/optim.py, whose decompositions are the reference
@KERNELS.register("adam_step")
def _adam_step(p, g, m, v, vmax, lr, beta1, beta2, eps, step, weight_decay, decoupled):
    # the update of tinytorch.optim.Adam/AdamW written with out= so it makes two temporaries, not ten
    if weight_decay:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + p * weight_decay
    tmp = np.multiply(g, 1 - beta1, out=np.empty_like(m))  # out=: an array for 0-d operands too
    m *= beta1
    m += tmp
    np.multiply(g, g, out=tmp)
    tmp *= 1 - beta2
    v *= beta2
    v += tmp
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    denom = np.sqrt(v)
    denom /= math.sqrt(1 - beta2 ** step)
    denom += eps
    np.divide(m, denom, out=tmp)
    tmp *= -lr / (1 - beta1 ** step)
    p += tmp


@KERNELS.register("sgd_momentum_step")
def _sgd_momentum_step(p, g, buf, lr, momentum, weight_decay):
    # tinytorch.optim.SGD with momentum, no dampening, no Nesterov, after the first step
    if weight_decay:
        g = g + p * weight_decay
    buf *= momentum
    buf += g
    p -= buf * lr if lr != 1 else buf


# multi-tensor updates (one call per param group): the per-tensor NumPy update in a loop. The native kernels
# (tinytorch/csrc/optim.cpp) do the same arithmetic in the same order, in the parameter's dtype.
def _next_step(step):
    # a step count (0-d array) goes up by one in its own dtype (float32), and the update uses the new count
    np.add(step, 1, out=step)
    return float(step)


@KERNELS.register("fused_adam")
def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, eps,
                weight_decay, decoupled, maximize):
    for i, p in enumerate(params):
        _adam_step(p, -grads[i] if maximize else grads[i], exp_avgs[i], exp_avg_sqs[i],
                   None if max_exp_avg_sqs is None else max_exp_avg_sqs[i], lr, beta1, beta2, eps,
                   _next_step(state_steps[i]),
                   weight_decay, decoupled)


def _sgd_one(p, g, buf, lr, momentum, dampening, nesterov, weight_decay, maximize, is_first_step):
    if maximize:
        g = -g
    if weight_decay:
        g = g + p * weight_decay
    if momentum:
        if is_first_step:
            buf[...] = g
        else:
            buf *= momentum
            buf += g * (1 - dampening) if dampening else g
        g = g + buf * momentum if nesterov else buf
    p -= g * lr


@KERNELS.register("fused_sgd")
def _fused_sgd(params, grads, momentum_buffers, lr, momentum, dampening, nesterov, weight_decay, maximize,
               is_first_step):
    for i, p in enumerate(params):
        _sgd_one(p, grads[i], None if momentum_buffers is None else momentum_buffers[i], lr, momentum, dampening,
                 nesterov, weight_decay, maximize, is_first_step)


def _rmsprop_one(p, g, v, ga, buf, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    if maximize:
        g = -g
    if weight_decay:
        g = g + p * weight_decay
    v *= alpha
    v += (g * g) * (1 - alpha)
    if centered:
        ga += (g - ga) * (1 - alpha)
        avg = np.sqrt(v - ga * ga)
    else:
        avg = np.sqrt(v)
    avg += eps
    if momentum > 0:
        buf *= momentum
        buf += g / avg
        p -= buf * lr
    else:
        p -= (g / avg) * lr


@KERNELS.register("fused_rmsprop")
def _fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps,
                   weight_decay, momentum, centered, maximize):
    with _quiet():  # sqrt of a negative centered variance gives NaN, as PyTorch's
        for i, p in enumerate(params):
            _next_step(state_steps[i])
            _rmsprop_one(p, grads[i], square_avgs[i], None if grad_avgs is None else grad_avgs[i],
                         None if momentum_buffers is None else momentum_buffers[i], lr, alpha, eps, weight_decay,
                         momentum, centered, maximize)


@KERNELS.register("fused_adagrad")
def _fused_adagrad(params, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps, maximize):
    for i, p in enumerate(params):
        t = _next_step(state_steps[i])
        g = -grads[i] if maximize else grads[i]
        if weight_decay:
            g = g + p * weight_decay
        s = state_sums[i]
        s += g * g
        std = np.sqrt(s)
        std += eps
        p -= (g / std) * (lr / (1 + (t - 1) * lr_decay))
