"""SGD with momentum, dampening, Nesterov and weight decay (``torch.optim.SGD``)."""
from ..autograd.grad_mode import no_grad
from .._ops.optim import sgd_momentum_step
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """``v = mu v + (1 - dampening) g``; ``p -= lr * (g + mu v if nesterov else v)`` (PyTorch's formulation)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, mu, damp, wd = g["lr"], g["momentum"], g["dampening"], g["weight_decay"]
            for p, grad in self._grads(g):
                if mu and not g["nesterov"] and not damp:
                    st = self.state[p]
                    buf = st.get("momentum_buffer")
                    if buf is not None:
                        sgd_momentum_step(p, grad, buf, lr=lr, momentum=mu, weight_decay=wd)
                        continue
                if wd:
                    grad = grad + p * wd
                if mu:
                    st = self.state[p]
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = st["momentum_buffer"] = grad.clone()
                    else:
                        buf.mul_(mu).add_(grad, alpha=1 - damp)
                    grad = grad + buf * mu if g["nesterov"] else buf
                p.add_(grad, alpha=-lr)
        return loss
