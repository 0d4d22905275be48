"""RMSprop (Hinton, Coursera lecture 6.5; ``torch.optim.RMSprop``), with momentum and the centered variant."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .optimizer import Optimizer, check_range, _bump_step, _init_step


class RMSprop(Optimizer):
    """``v = alpha v + (1 - alpha) g^2``; ``p -= lr g / (sqrt(v [- mean(g)^2]) + eps)`` (through a momentum
    buffer when ``momentum > 0``). ValueError on a negative lr, eps, momentum, alpha or weight_decay."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_range(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, alpha, eps, wd, mu = g["lr"], g["alpha"], g["eps"], g["weight_decay"], g["momentum"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["square_avg"] = zeros_like(p)
                    if mu > 0:
                        st["momentum_buffer"] = zeros_like(p)
                    if g["centered"]:
                        st["grad_avg"] = zeros_like(p)
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
        return loss
