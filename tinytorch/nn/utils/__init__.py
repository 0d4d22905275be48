"""``nn.utils``: gradient clipping and parameter/vector conversion."""
import math

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from . import parametrizations, parametrize, rnn  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401


def _params(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale gradients in place so their joint ``norm_type`` norm is at most ``max_norm``; returns the norm."""
    from ..._ops.creation import tensor
    from ..._ops.shape import stack
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        if norm_type == math.inf:
            total = stack([g.abs().max() for g in grads]).max()
        else:
            total = stack([g.norm(norm_type) for g in grads]).norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    with no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one 1-D tensor."""
    from ..._ops.shape import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of ``vec`` into ``parameters`` (in place)."""
    i = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[i:i + n].view_as(p))
            i += n
