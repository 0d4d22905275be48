"""Muon (Jordan et al. 2024, "Muon: An optimizer for hidden layers in neural networks"), in the form of
``torch.optim.Muon``: SGD momentum whose update matrix is orthogonalized by a quintic Newton-Schulz iteration."""
import math

from .._dtype import bfloat16
from ..autograd.grad_mode import no_grad
from .._ops.creation import zeros_like
from .optimizer import Optimizer

_NS_COEFFICIENTS = (3.4445, -4.775, 2.0315)


def _orthogonalize(grad, coefficients, steps, eps):
    """The Newton-Schulz iteration X <- a X + (b G + c G^2) X, G = X X^T, from X = grad / ||grad||_F in bfloat16
    (as torch): drives the singular values of X towards ~1, so the result is roughly U V^T of grad's SVD."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    x = grad.to(bfloat16)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    # each product is accumulated in float32 and rounded to bfloat16 once, as torch's bfloat16 addmm does
    for _ in range(steps):
        x32 = x.float()
        gram = (x32 @ x32.T).to(bfloat16).float()
        update = (b * gram + c * (gram @ gram)).to(bfloat16).float()
        x = (a * x32 + update @ x32).to(bfloat16)
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Muon for 2-D parameters: momentum buffer B <- mu B + (1 - mu) g, update U = orthogonalize(g + mu (B - g))
    with ``nesterov`` (else B), then decoupled weight decay p *= 1 - lr * weight_decay and p -= lr' U, where
    lr' scales lr by sqrt(max(1, rows / cols)) ('original') or 0.2 sqrt(max(rows, cols)) ('match_rms_adamw').
    ValueError for invalid hyperparameters and for parameters that are not matrices."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=_NS_COEFFICIENTS, eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for g in self.param_groups:
            for p in g["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, mu = g["lr"], g["momentum"]
            for p, grad in self._grads(g):
                if p.dtype.is_complex:
                    raise RuntimeError("Muon does not support complex parameters")
                st = self.state[p]
                if "momentum_buffer" not in st:
                    st["momentum_buffer"] = zeros_like(grad)
                buf = st["momentum_buffer"]
                buf.lerp_(grad, 1 - mu)
                update = grad.lerp(buf, mu) if g["nesterov"] else buf
                update = _orthogonalize(update, g["ns_coefficients"], g["ns_steps"], g["eps"])
                p.mul_(1 - lr * g["weight_decay"])
                p.add_(update, alpha=-_adjusted_lr(lr, g["adjust_lr_fn"], p.shape))
        return loss
