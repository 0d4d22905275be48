"""RMSprop (Hinton, Coursera lecture 6.5; ``torch.optim.RMSprop``), with momentum and the centered variant."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .._ops.optim import fused_rmsprop
from .optimizer import (Optimizer, check_range, _bump_step, _by_device_and_dtype, _init_step, _multi_tensor,
                        _step_tensor)


class RMSprop(Optimizer):
    """``v = alpha v + (1 - alpha) g^2``; ``p -= lr g / (sqrt(v [- mean(g)^2]) + eps)`` (through a momentum
    buffer when ``momentum > 0``). ValueError on a negative lr, eps, momentum, alpha or weight_decay."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', True, True)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_range(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            if _multi_tensor(g):
                self._group_step(g)
            else:
                self._single_tensor_step(g)
        return loss

    def _state_of(self, p, g):
        st = self.state[p]
        if not st:
            st["step"] = _init_step()
            st["square_avg"] = zeros_like(p)
            if g["momentum"] > 0:
                st["momentum_buffer"] = zeros_like(p)
            if g["centered"]:
                st["grad_avg"] = zeros_like(p)
        return st

    def _group_step(self, g):
        """The group's update as one ``fused_rmsprop`` call per device and dtype."""
        mu, centered = g["momentum"], g["centered"]
        params, grads, square_avgs, steps = [], [], [], []
        grad_avgs = [] if centered else None
        bufs = [] if mu > 0 else None
        for p in g["params"]:
            grad = p._grad
            if grad is None:
                continue
            st = self._state_of(p, g)
            steps.append(_step_tensor(st))
            params.append(p)
            grads.append(grad)
            square_avgs.append(st["square_avg"])
            if centered:
                grad_avgs.append(st["grad_avg"])
            if mu > 0:
                bufs.append(st["momentum_buffer"])
        for ps, gs, vs, gas, bs, ts in _by_device_and_dtype(params, grads, square_avgs, grad_avgs, bufs, steps):
            fused_rmsprop(ps, gs, vs, gas, bs, ts, lr=g["lr"], alpha=g["alpha"], eps=g["eps"],
                          weight_decay=g["weight_decay"], momentum=mu, centered=centered,
                          maximize=g.get("maximize", False))

    def _single_tensor_step(self, g):
        """The update one parameter at a time, for the groups the multi-tensor op does not take."""
        lr, alpha, eps, wd, mu = g["lr"], g["alpha"], g["eps"], g["weight_decay"], g["momentum"]
        for p, grad in self._grads(g):
            st = self._state_of(p, g)
            _bump_step(st)
            if wd:
                grad = grad + p * wd
            v = st["square_avg"]
            v.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
            if g["centered"]:
                ga = st["grad_avg"]
                ga.lerp_(grad, 1 - alpha)
                avg = (v - ga * ga).sqrt_().add_(eps)
            else:
                avg = v.sqrt().add_(eps)
            if mu > 0:
                buf = st["momentum_buffer"]
                buf.mul_(mu).add_(grad / avg)
                p.add_(buf, alpha=-lr)
            else:
                p.add_(grad / avg, alpha=-lr)
