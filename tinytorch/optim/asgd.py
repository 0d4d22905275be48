"""ASGD, averaged stochastic gradient descent (Polyak & Juditsky 1992; ``torch.optim.ASGD``)."""
from .. import _dtype
from ..autograd.grad_mode import no_grad
from .._ops.creation import tensor, zeros_like
from .optimizer import Optimizer, check_range, _bump_step, _init_step


class ASGD(Optimizer):
    """SGD with the step size ``eta = lr / (1 + lambd lr t)^alpha`` and a decay ``p *= 1 - lambd eta``, plus a
    running average ``ax`` of the iterates that starts at step ``t0``. ``eta`` and ``mu`` are kept as 0-dim
    tensors of the default dtype, as PyTorch keeps them (so their rounding matches)."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params, mus, etas, and state_steps', 'params, mus, etas, and state_steps', True, False)

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        check_range(lr=lr, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        scalar = _dtype.get_default_dtype()
        for g in self.param_groups:
            lr, lambd, alpha, t0 = g["lr"], g["lambd"], g["alpha"], g["t0"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["eta"] = tensor(lr, dtype=scalar)
                    st["mu"] = tensor(1.0, dtype=scalar)
                    st["ax"] = zeros_like(p)
                t = _bump_step(st)
                if g["weight_decay"]:
                    grad = grad + p * g["weight_decay"]
                eta = st["eta"].item()
                p.mul_(1 - lambd * eta)
                p.add_(grad, alpha=-eta)
                if st["mu"].item() != 1:
                    st["ax"].add_((p - st["ax"]).mul_(st["mu"]))
                else:
                    st["ax"].copy_(p)
                st["eta"].fill_(lr / ((1 + lambd * lr * t) ** alpha))
                st["mu"].fill_(1 / max(1, t - t0))
        return loss
