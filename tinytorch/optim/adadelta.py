"""Adadelta (Zeiler 2012, arXiv:1212.5701; ``torch.optim.Adadelta``)."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .optimizer import Optimizer, check_range, _bump_step, _init_step


class Adadelta(Optimizer):
    """``v = rho v + (1 - rho) g^2``; ``d = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho u + (1 - rho) d^2``;
    ``p -= lr d``."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', False, False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_range(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            rho, eps = g["rho"], g["eps"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["square_avg"] = zeros_like(p)
                    st["acc_delta"] = zeros_like(p)
                _bump_step(st)
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                v, u = st["square_avg"], st["acc_delta"]
                v.mul_(rho).add_(grad * grad, alpha=1 - rho)
                delta = (u + eps).sqrt_().div_((v + eps).sqrt_()).mul_(grad)
                u.mul_(rho).add_(delta * delta, alpha=1 - rho)
                p.add_(delta, alpha=-g["lr"])
        return loss
