"""Adamax, Adam with the infinity norm (Kingma & Ba 2015, section 7; ``torch.optim.Adamax``)."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .._ops.pointwise import maximum
from .optimizer import Optimizer, check_betas, check_range, _bump_step, _init_step


class Adamax(Optimizer):
    """``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g| + eps)``; ``p -= lr / (1 - b1^t) * m / u``."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', True, False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_range(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            b1, b2 = g["betas"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["exp_avg"] = zeros_like(p)
                    st["exp_inf"] = zeros_like(p)
                t = _bump_step(st)
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                st["exp_avg"].lerp_(grad, 1 - b1)
                st["exp_inf"].copy_(maximum(st["exp_inf"] * b2, grad.abs().add_(g["eps"])))
                p.add_(st["exp_avg"] / st["exp_inf"], alpha=-g["lr"] / (1 - b1 ** t))
        return loss
