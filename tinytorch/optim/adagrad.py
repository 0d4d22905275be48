"""Adagrad (Duchi et al. 2011; ``torch.optim.Adagrad``)."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import full_like
from .._ops.optim import fused_adagrad
from .optimizer import (Optimizer, check_range, _bump_step, _by_device_and_dtype, _init_step, _multi_tensor,
                        _step_tensor)


class Adagrad(Optimizer):
    """``s += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(s) + eps)``. The accumulator starts at
    ``initial_accumulator_value`` (state is created at construction, as PyTorch does)."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_range(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                    initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused))
        for g in self.param_groups:
            for p in g["params"]:
                self.state[p]["step"] = _init_step()
                self.state[p]["sum"] = full_like(p, g["initial_accumulator_value"])

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            if _multi_tensor(g):
                self._group_step(g)
            else:
                self._single_tensor_step(g)
        return loss

    def _group_step(self, g):
        """The group's update as one ``fused_adagrad`` call per device and dtype."""
        params, grads, sums, steps = [], [], [], []
        for p in g["params"]:
            grad = p._grad
            if grad is None:
                continue
            st = self.state[p]
            params.append(p)
            grads.append(grad)
            sums.append(st["sum"])
            steps.append(_step_tensor(st))
        for ps, gs, ss, ts in _by_device_and_dtype(params, grads, sums, steps):
            fused_adagrad(ps, gs, ss, ts, lr=g["lr"], lr_decay=g["lr_decay"], weight_decay=g["weight_decay"],
                          eps=g["eps"], maximize=g.get("maximize", False))

    def _single_tensor_step(self, g):
        """The update one parameter at a time, for the groups the multi-tensor op does not take."""
        for p, grad in self._grads(g):
            st = self.state[p]
            t = _bump_step(st)
            if g["weight_decay"]:
                grad = grad + p * g["weight_decay"]
            clr = g["lr"] / (1 + (t - 1) * g["lr_decay"])
            st["sum"].add_(grad * grad)
            p.add_(grad / st["sum"].sqrt().add_(g["eps"]), alpha=-clr)
