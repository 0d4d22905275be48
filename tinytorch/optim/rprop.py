"""Rprop, resilient backpropagation (Riedmiller & Braun 1993; ``torch.optim.Rprop``)."""
from ..autograd.grad_mode import no_grad
from .._ops.creation import full_like, ones_like, zeros_like
from .._ops.pointwise import where
from .optimizer import Optimizer, check_range, _bump_step, _init_step


class Rprop(Optimizer):
    """Per-element step sizes that grow by ``etas[1]`` while the gradient keeps its sign and shrink by
    ``etas[0]`` when it flips (clamped to ``step_sizes``); the parameter moves by ``-sign(g) * step_size``, and
    after a sign flip the gradient is taken as 0 for one step, as PyTorch's formulation."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', True, True)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_range(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            etaminus, etaplus = g["etas"]
            lo, hi = g["step_sizes"]
            for p, grad in self._grads(g):
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    st["prev"] = zeros_like(p)
                    st["step_size"] = full_like(grad, g["lr"])
                _bump_step(st)
                prod = grad * st["prev"]
                factor = ones_like(grad)  # in the gradient's dtype: etas are not rounded to float32
                factor.masked_fill_(prod > 0, etaplus).masked_fill_(prod < 0, etaminus)
                st["step_size"].mul_(factor).clamp_(lo, hi)
                grad = where(prod < 0, 0.0, grad)
                p.addcmul_(grad.sign(), st["step_size"], value=-1)
                st["prev"].copy_(grad)
        return loss
