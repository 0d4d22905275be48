"""``nn.utils``: gradient clipping, parameter/vector conversion, weight and spectral normalization, pruning,
conv/linear + BatchNorm fusion."""
import warnings

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from . import fusion, parametrizations, parametrize, rnn  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401


def _params(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of the norms of ``tensors`` (a tensor or an iterable of them), i.e. their joint
    norm as if concatenated; 0 for none (``torch.nn.utils.get_total_norm``). RuntimeError with
    ``error_if_nonfinite`` when it is NaN or infinite."""
    from ..._ops.creation import tensor
    from ..._ops.shape import stack
    tensors = _params(tensors)
    if not tensors:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        dev = tensors[0].device
        total = stack([t.norm(norm_type).to(dev) for t in tensors]).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm + 1e-6))``, given a
    precomputed ``total_norm`` (``torch.nn.utils.clip_grads_with_norm_``)."""
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype).to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale gradients in place so their joint ``norm_type`` norm is at most ``max_norm``; returns that norm
    before clipping (``torch.nn.utils.clip_grad_norm_``: ``get_total_norm`` then ``clip_grads_with_norm_``)."""
    parameters = _params(parameters)
    total = get_total_norm([p.grad for p in parameters if p.grad is not None], norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated name of ``clip_grad_norm_`` (with torch's FutureWarning)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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
