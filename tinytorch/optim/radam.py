"""RAdam, rectified Adam (Liu et al. 2020, arXiv:1908.03265; ``torch.optim.RAdam``)."""
import math

from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .optimizer import Optimizer, check_betas, check_range, _bump_step, _init_step


class RAdam(Optimizer):
    """Adam whose adaptive term is switched on, and rectified, once the variance estimate is tractable
    (``rho_t > 5``); before that a bias-corrected momentum step. ``decoupled_weight_decay`` as AdamW."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', True, False)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_range(lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                t = _bump_step(st)
                grad = self._weight_decay(p, grad, lr, wd, g["decoupled_weight_decay"])
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.lerp_(grad, 1 - b1)
                v.mul_(b2).add_(grad * grad, alpha=1 - b2)
                bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
                rho_inf = 2 / (1 - b2) - 1
                rho_t = rho_inf - 2 * t * b2 ** t / bc2
                if rho_t > 5:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    p.add_(m / v.sqrt().add_(eps), alpha=-lr * rect * math.sqrt(bc2) / bc1)
                else:
                    p.add_(m, alpha=-lr / bc1)
        return loss
