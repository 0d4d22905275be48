"""Normalization: batch, layer, group, instance, RMS and local response norm, and ``normalize``."""
import math

from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ..._ops._util import check_arg
from ._utils import _pair, _scalar_name
from .padding import pad
from .pooling import avg_pool2d


_REDUCED_FLOATS = ("float16", "bfloat16")


def _norm_compute(input, params, kernel="batch_norm"):
    """The dtype a normalization computes in: float32 for float16 / bfloat16 input (PyTorch's CPU kernels
    accumulate statistics in float32 and write the result in the input's dtype), else the input's.

    Checks the parameters' dtypes as ATen's mixed-type rule: with a reduced-precision input they are all the
    input's dtype or all float32, otherwise all the input's dtype (RuntimeError). NotImplementedError for a
    non-floating input."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(input.dtype)}'")
    dts = {p.dtype for p in params if p is not None}
    reduced = input.dtype.name in _REDUCED_FLOATS
    if reduced and _dt.float32 in dts and dts != {_dt.float32}:
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if not (dts <= {input.dtype} or (reduced and dts == {_dt.float32})):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float" if input.dtype is
                           _dt.float32 or reduced else "mixed dtype (CPU): all inputs must share same datatype.")
    return _dt.float32 if reduced else input.dtype


def _standardize(x, mean, var, eps, input, params):
    """``(x - mean) / sqrt(var + eps)`` in x's dtype. ATen's batch-norm kernels keep the statistics of a
    float16 / bfloat16 input in the input's dtype unless float32 parameters make it the mixed-type kernel:
    rounded the same way here, so the results agree with PyTorch's to the last bit or so."""
    invstd = _pw.rsqrt(var + eps)
    if input.dtype is not x.dtype and all(p is None or p.dtype is input.dtype for p in params):
        mean, invstd = mean.to(input.dtype).to(x.dtype), invstd.to(input.dtype).to(x.dtype)
    return (x - mean) * invstd


def _check_numel(name, t, n, mult=1):
    if t is not None and t.numel() != n:
        raise RuntimeError(f"{name} should contain {n * mult} elements not {t.numel() * mult}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization (Ioffe & Szegedy 2015) over (N, C, *): statistics per channel C.

    In training, batch statistics are used and the running ones (if given) updated in place with
    ``momentum`` (unbiased variance), as PyTorch does. float16 / bfloat16 input is normalized in float32
    and returned in its dtype (its parameters may be float32). Everything is checked before a running
    statistic is written: RuntimeError when running_mean / running_var / weight / bias do not hold C
    elements, when running statistics are missing in evaluation, for mixed parameter dtypes; ValueError when
    only one running statistic is given or a channel has a single value in training.
    """
    check_arg("batch_norm", "training", 6, training, "bool")
    if training and not eps > 0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm: expected 2D or more input (got {input.ndim}D input)")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    c = input._shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_numel(name, t, c)
    cdt = _norm_compute(input, (running_mean, running_var, weight, bias))
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    n = input.numel() // c if c else 0
    if training and n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    x = input.to(cdt)
    if training and cdt is input.dtype:
        if running_mean is not None and n > 1:
            from ...autograd.grad_mode import no_grad
            with no_grad():
                mean, var = x.mean(dims), x.var(dims, correction=0)
                running_mean.mul_(1 - momentum).add_(mean * momentum)
                running_var.mul_(1 - momentum).add_(var * (momentum * n / (n - 1)))
        from ..._ops.natives import batch_norm_training  # one op saving input and weight, as PyTorch's
        return batch_norm_training(x, weight, bias, dims, eps)
    if training:
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        if running_mean is not None and n > 1:
            from ...autograd.grad_mode import no_grad
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(var.detach() * (momentum * n / (n - 1)))
    else:
        mean, var = running_mean.to(cdt), running_var.to(cdt)
    out = _standardize(x, mean.reshape(shape), var.reshape(shape), eps, input,
                       (running_mean, running_var, weight, bias))
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.to(input.dtype)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization (Ba et al. 2016) over the trailing ``normalized_shape`` dims."""
    normalized_shape = _pair(normalized_shape, 1) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    for i, n in enumerate(normalized_shape):
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, but found "
                            f"element of type {type(n).__name__} at pos {i}")
    k = len(normalized_shape)
    if input._shape[-k:] != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input._shape)}")
    from ..._ops.nn import native_layer_norm
    check_arg("layer_norm", "eps", 5, eps, "float")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p._shape != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(p._shape)} and normalized_shape = {list(normalized_shape)}")
    return native_layer_norm(input, weight, bias, k, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization (Wu & He 2018) of (N, C, *): statistics over each of ``num_groups`` groups of
    channels per sample, then a per-channel affine ``weight`` / ``bias`` (``torch.nn.functional.group_norm``).
    float16 / bfloat16 input is normalized in float32 and returned in its dtype (float32 parameters allowed).
    RuntimeError for fewer than 2 dims, num_groups <= 0 or not dividing C, weight / bias that are not
    vectors of C elements, mixed parameter dtypes; NotImplementedError for a non-floating input."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input._shape[:2]
    check_arg("group_norm", "num_groups", 2, num_groups, "int")
    if num_groups == 0:
        raise ZeroDivisionError("integer division or modulo by zero")  # torch's Python-level c % num_groups
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input._shape)} and num_groups={num_groups}")
    if num_groups < 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t._shape)} and input of shape {list(input._shape)}")
    cdt = _norm_compute(input, (weight, bias), "GroupNormKernelImpl")
    if input.numel() == 0:
        out = input.to(cdt) * 1  # nothing to normalize: an empty result, still connected to the graph
    else:
        x = input.to(cdt).reshape(n, num_groups, -1)
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, correction=0)
        out = ((x - mean) * _pw.rsqrt(var + eps)).reshape(input._shape)
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.to(input.dtype)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Instance normalization (Ulyanov et al. 2016) over (N, C, *): statistics per sample and channel
    (``torch.nn.functional.instance_norm``).

    With ``use_input_stats`` the running statistics, if given, move towards the batch average of the
    per-instance mean and unbiased variance; otherwise they normalize the input. float16 / bfloat16 input is
    normalized in float32 and returned in its dtype. Checked before anything is written, as PyTorch:
    ValueError for fewer than 3 dims or a single spatial element with ``use_input_stats``; RuntimeError for
    running statistics / weight / bias without C elements, missing running statistics without
    ``use_input_stats``, mixed parameter dtypes.
    """
    check_arg("instance_norm", "momentum", 7, momentum, "float")
    check_arg("instance_norm", "eps", 8, eps, "float")
    if input.ndim < 3:
        raise ValueError(f"expected 3D or more input (got {input.ndim}D input)")
    n, c = input._shape[:2]
    if use_input_stats and math.prod(input._shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input._shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    # ATen runs batch_norm on (1, N * C, *) with the statistics repeated N times: its messages count N * C
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        _check_numel(name, t, c, n)
    cdt = _norm_compute(input, (running_mean, running_var, weight, bias))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    x = input.to(cdt)
    if use_input_stats:
        dims = tuple(range(2, input.ndim))
        m = math.prod(input._shape[2:])
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, keepdim=True, correction=0)
        if running_mean is not None and n:
            from ...autograd.grad_mode import no_grad
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().mean(0).reshape(-1) * momentum)
                running_var.mul_(1 - momentum).add_(var.detach().mean(0).reshape(-1) * (momentum * m / (m - 1)))
    else:
        mean, var = running_mean.to(cdt).reshape(shape), running_var.to(cdt).reshape(shape)
    # ATen normalizes (1, N * C, *) with the repeated running statistics: only weight / bias make it mixed-type
    out = _standardize(x, mean, var, eps, input, (weight, bias))
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out.to(input.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p over dim, eps)`` (``torch.nn.functional.normalize``); ``out`` is written by the
    surface's ``out=`` step (``_dispatch.write_out``), as for every public function."""
    return input / _pw.clamp(input.norm(p, dim, keepdim=True), min=eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square layer normalization (Zhang & Sennrich 2019): ``x / sqrt(mean(x^2) + eps) * weight`` over
    the trailing ``normalized_shape`` dims; ``eps`` defaults to the dtype's machine epsilon (as PyTorch).
    The result has ``input``'s dtype; float16 / bfloat16 input is normalized in float32, as PyTorch's CPU
    kernel. RuntimeError for a mismatched shape or weight, NotImplementedError for a non-floating input."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if input._shape[input.ndim - k:] != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input._shape)}")
    if weight is not None and weight._shape != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight._shape)} and normalized_shape = {list(normalized_shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{_scalar_name(input.dtype)}'")
    x = input.float() if input.dtype.name in _REDUCED_FLOATS else input
    if eps is None:
        eps = _dt.finfo(x.dtype).eps  # of the type it computes in, as ATen's (float32's for half input)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = x * _pw.rsqrt((x * x).mean(dims, keepdim=True) + eps)
    return (out * weight if weight is not None else out).to(input.dtype)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Local response normalization across channels (Krizhevsky et al. 2012): ``x / (k + alpha / size *
    sum of x^2 over ``size`` neighbouring channels)^beta`` over (N, C, *) (``F.local_response_norm``)."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if size <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {size} kW: 1")
    if input.numel() == 0:
        return input * 1  # as torch: an empty result of input's shape
    sq = (input * input).unsqueeze(1)  # (N, 1, C, *)
    n, c = input._shape[:2]
    flat = sq.reshape(n, 1, c, -1)
    flat = pad(flat, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(flat, (size, 1), stride=1).reshape(input._shape)
    return input / (div * alpha + k).pow(beta)
