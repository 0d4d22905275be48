"""Adafactor (Shazeer & Stern, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost", 2018), in the
form of ``torch.optim.Adafactor``."""
from ..autograd.grad_mode import no_grad
from .._dtype import finfo
from .._ops.creation import zeros_like
from .optimizer import Optimizer, _bump_step, _init_step


class Adafactor(Optimizer):
    """Adafactor: the second-moment estimate of a matrix (or a stack of matrices, the last two dims) is kept
    factored as a row vector and a column vector, so its memory is O(rows + cols); vectors keep a full
    estimate. Per step t: beta2_t = 1 - t^beta2_decay, the relative step rho_t = min(lr, 1/sqrt(t)), the step
    size alpha = max(eps2, RMS(param)) * rho_t, the update g / sqrt(V_hat) clipped so that its RMS is at most
    ``d``, and decoupled weight decay param *= 1 - lr * weight_decay. ``eps`` = (eps1, eps2); eps1 None means
    the parameter dtype's machine epsilon. ValueError for invalid hyperparameters; RuntimeError for complex
    parameters."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            lr, d, wd = g["lr"], g["d"], g["weight_decay"]
            eps1, eps2 = g["eps"]
            for p, grad in self._grads(g):
                if p.dtype.is_complex:
                    raise RuntimeError("Adafactor does not support complex parameters")
                st = self.state[p]
                if not st:
                    st["step"] = _init_step()
                    if grad.ndim > 1:
                        st["row_var"] = grad.new_zeros(grad.shape[:-1] + (1,))
                        st["col_var"] = grad.new_zeros(grad.shape[:-2] + (1,) + grad.shape[-1:])
                    else:
                        st["variance"] = zeros_like(grad)
                e1 = finfo(p.dtype).eps if eps1 is None else eps1
                t = _bump_step(st)
                one_minus_beta2 = t ** g["beta2_decay"]
                rho = min(lr, 1 / t ** 0.5)
                alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
                if wd:
                    p.mul_(1 - lr * wd)
                if grad.ndim > 1:
                    sq = grad * grad
                    st["row_var"].lerp_(sq.mean(-1, keepdim=True), one_minus_beta2)
                    st["col_var"].lerp_(sq.mean(-2, keepdim=True), one_minus_beta2)
                    v = st["row_var"] @ st["col_var"]
                    v = v / st["row_var"].mean(-2, keepdim=True).clamp(min=e1)
                else:
                    st["variance"].lerp_(grad * grad, one_minus_beta2)
                    v = st["variance"]
                update = v.clamp(min=e1 * e1).rsqrt() * grad
                denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
