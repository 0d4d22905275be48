"""NAdam, Adam with Nesterov momentum (Dozat 2016; ``torch.optim.NAdam``)."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import tensor, zeros_like
from .optimizer import Optimizer, check_betas, check_range, _bump_step, _init_step


class NAdam(Optimizer):
    """Adam whose step mixes the current gradient and the momentum with the momentum schedule
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``. ``decoupled_weight_decay`` gives NAdamW."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params, mu_products and state_steps', 'params, mu_products, and state_steps', True, False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_range(lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, (b1, b2), eps, wd, md = g["lr"], g["betas"], g["eps"], g["weight_decay"], g["momentum_decay"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    # a 0-dim tensor of the default dtype, as PyTorch keeps it (its rounding is part of the update)
                    st["mu_product"] = tensor(1.0)
                    st["exp_avg"] = zeros_like(p)
                    st["exp_avg_sq"] = zeros_like(p)
                t = _bump_step(st)
                grad = self._weight_decay(p, grad, lr, wd, g["decoupled_weight_decay"])
                mu = b1 * (1 - 0.5 * 0.96 ** (t * md))
                mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * md))
                st["mu_product"].mul_(mu)
                mu_prod = st["mu_product"].item()
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.lerp_(grad, 1 - b1)
                v.mul_(b2).add_(grad * grad, alpha=1 - b2)
                denom = (v / (1 - b2 ** t)).sqrt_().add_(eps)
                p.add_(grad / denom, alpha=-lr * (1 - mu) / (1 - mu_prod))
                p.add_(m / denom, alpha=-lr * mu_next / (1 - mu_prod * mu_next))
        return loss
