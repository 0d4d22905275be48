"""Losses. Those whose PyTorch signature still has the deprecated ``size_average`` / ``reduce`` honour
them (``_reduction``): every such function here is wrapped at import (``_wrap_legacy_losses``)."""
import math

from ...amp.autocast_mode import autocast_op
from ... import _dtype as _dt
from ..._ops import natives as _natives
from ..._ops import pointwise as _pw
from ..._ops.creation import full_like, zeros
from ..._ops._util import check_arg, check_dtype
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled as _grad_enabled
from ._reduction import _legacy_reduction_args
from ._utils import _check_int64, _scalar_name
from .activation import log_softmax, logsigmoid
from .distance import pairwise_distance
from .linear import linear
from .normalization import _REDUCED_FLOATS


def _check_reduction(reduction):
    """ValueError for a reduction other than 'none', 'mean', 'sum', checked before anything is computed."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_size(input, target, name):
    if input._shape != target._shape:
        import warnings
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def _check_cast(out_dtype, *tensors):
    """RuntimeError when the dtype the tensors promote to cannot be written into a result of ``out_dtype``
    (a complex operand of a real loss: ATen's ``result type ComplexFloat can't be cast to ... Float``)."""
    ts = [t for t in tensors if isinstance(t, Tensor)]
    if not ts:
        return
    rt = _dt.result_type_of(ts)
    if rt.category > out_dtype.category:
        raise RuntimeError(f"result type {_scalar_name(rt)} can't be cast to the desired output type "
                           f"{_scalar_name(out_dtype)}")


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    # torch 2.13's elementwise ``weight`` of mse/l1/huber: 'mean' divides by sum(weight) (huber: by numel)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@autocast_op("fp32")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target)^2`` reduced by ``reduction`` ('mean' | 'sum' | 'none');
    an elementwise ``weight`` (input's shape) scales each term, and 'mean' then divides by its sum."""
    _check_same_size(input, target, "mse_loss")
    check_dtype("mse_cpu", _dt.promote_types(input.dtype, target.dtype), floating=True)
    if weight is not None:
        d = input - target
        return _weighted(d * d, weight, input, reduction)
    _check_reduction(reduction)
    return _natives.mse_loss(input, target, reduction)


@autocast_op("fp32")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced and weighted as ``mse_loss``."""
    _check_same_size(input, target, "l1_loss")
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction)
    return _reduce((input - target).abs(), reduction)


@autocast_op("fp32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss: ``0.5 d^2 / beta`` below ``beta``, ``d - 0.5 beta`` above (d = |input - target|).
    RuntimeError for a negative or NaN ``beta``, NotImplementedError for a complex operand, as PyTorch."""
    _check_same_size(input, target, "smooth_l1_loss")
    if not beta >= 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    common = check_dtype("smooth_l1_cpu", _dt.promote_types(input.dtype, target.dtype), floating=True,
                         integral=True)
    # a bool operand is promoted first (ATen's TensorIterator), so a bool - float never reaches subtraction
    if beta > 0:
        _check_reduction(reduction)
        return _natives.smooth_l1_loss(input.to(common), target.to(common), reduction, beta)
    return _reduce((input.to(common) - target.to(common)).abs(), reduction)


@autocast_op("fp32")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: ``0.5 d^2`` for ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, d = input - target;
    an elementwise ``weight`` scales each term ('mean' then averages over elements, as torch). The loss has
    ``input``'s dtype (ATen writes it into a tensor like ``input``) unless a weight promotes it.
    RuntimeError for delta <= 0, NotImplementedError for integer input, as torch."""
    _check_same_size(input, target, "huber_loss")
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_cast(input.dtype, input, target)
    check_dtype("huber_cpu", input.dtype, floating=True)
    if weight is None:
        _check_reduction(reduction)
        return _natives.huber_loss(input, target, reduction, delta)
    d = (input - target).abs()
    loss = _pw.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta).to(input.dtype)
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


@autocast_op("fp32")
def _nll_shape_check(input, target):
    """PyTorch's shape checks of nll_loss (nll_loss_nd, then the 1-2-D / 4-D / other kernels), in its order."""
    nt = target._shape[0] if target.ndim else 0  # (PyTorch reads size 0 of a 0-d target as 0)
    if input.ndim != 1 and input._shape[0] != nt:
        raise ValueError(f"Expected input batch_size ({input._shape[0]}) to match target batch_size ({nt}).")
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.ndim}")
        if tuple(target._shape) != (input._shape[0],) + tuple(input._shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input._shape)} , target: {list(target._shape)}")
    elif tuple(target._shape[1:]) != tuple(input._shape[2:]):
        raise RuntimeError(f"Expected target size {[input._shape[0]] + list(input._shape[2:])}, got "
                           f"{list(target._shape)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood of log-probabilities ``input`` (N, C[, d...]) at class ``target`` (N[, d...]).

    'mean' divides by the summed weights of non-ignored targets (PyTorch's rule).
    """
    check_arg("nll_loss_nd", "ignore_index", 5, ignore_index, "int")
    _check_reduction(reduction)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim == 1 and target.ndim == 1 and target._shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target._shape[0]}")
    _nll_shape_check(input, target)
    out_shape = tuple(target._shape)  # the shape of the 'none' result: (N, d...), or () unbatched
    if input.ndim == 1:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    if target.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    if input._shape[0] != target._shape[0]:
        raise ValueError(f"Expected input batch_size ({input._shape[0]}) to match target batch_size "
                         f"({target._shape[0]}).")
    c = input._shape[1]
    if input.ndim > 2:  # (N, C, d1, ...) -> (N*d..., C)
        input = input.movedim(1, -1).reshape(-1, c)
        target = target.reshape(-1)
    if weight is not None and (weight.ndim != 1 or weight._shape[0] != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight._shape)}")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input.dtype)} but found {_scalar_name(weight.dtype)}")
    if weight is not None and weight.requires_grad and _grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. "
                           "This input cannot have requires_grad True.")
    from ..._ops.nn import nll_loss2d
    out = nll_loss2d(input, target, weight, ignore_index, reduction)
    return out.reshape(out_shape) if reduction == "none" and tuple(out._shape) != out_shape else out


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """Cross entropy of the logits ``linear(input, linear_weight, linear_bias)`` (``torch.nn.functional.
    linear_cross_entropy``): input (N, in) or (in,); linear_weight (C, *out_features, in), whose extra dims make a
    K-dimensional loss over (N, C, *out_features) logits; target class indices or probabilities of that shape.
    ``options`` (``nn.LinearCrossEntropyOptions``, torch's batch-chunked kernel) is accepted and the reference
    computation runs, which gives the same values. RuntimeError for mismatched shapes, as torch."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        linear_weight = linear_weight.reshape(math.prod(out_features, start=num_classes), in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


@autocast_op("fp32")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """``nll_loss(log_softmax(input, 1), target)``, with class-probability targets and ``label_smoothing``.

    input (N, C) or (N, C, d...) logits; target (N, ...) class indices or (N, C, ...) probabilities.
    RuntimeError for label_smoothing > 1; as in ATen, a label_smoothing that is not positive (negative, NaN)
    means no smoothing. ValueError for an unknown ``reduction``.
    """
    _check_int64(check_arg("cross_entropy_loss", "ignore_index", 5, ignore_index, "int"))
    _check_reduction(reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    if not label_smoothing > 0.0:
        label_smoothing = 0.0
    probs = target.dtype.is_floating_point and tuple(target._shape) == tuple(input._shape)
    if probs and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if not probs:
        # class indices (a floating target of another shape is read as indices too, and refused there)
        if input.ndim == 1 and target.ndim == 1 and target._shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target._shape[0]}")
        _nll_shape_check(input, target)
    if input.ndim == 1:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
        squeeze = True
    else:
        squeeze = False
    logp = log_softmax(input, 1)
    c = input._shape[1]
    if probs:
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2)) if weight is not None else 1
        prod = logp * t * w
        # as ATen's cross_entropy with probabilities: one sum over every element for 'sum' and 'mean' (a sum of
        # the per-sample sums rounds, and overflows near the float maximum, differently)
        if reduction == "mean":
            return -prod.sum() / (input.numel() // c)
        if reduction == "sum":
            return -prod.sum()
        loss = -prod.sum(1)
        return loss.squeeze(0) if squeeze else loss
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll.squeeze(0) if squeeze and reduction == "none" else nll
    # smoothing term: mean over classes of -log p, weighted like PyTorch
    lp = logp.movedim(1, -1).reshape(-1, c) if input.ndim > 2 else logp
    tt = target.reshape(-1)
    valid = (tt != ignore_index).to(input.dtype)
    if weight is not None:
        smooth = -(lp * weight).sum(1)
        denom = (weight.index_select(0, _pw.where(tt != ignore_index, tt, 0)) * valid).sum()
    else:
        smooth = -lp.sum(1)
        denom = valid.sum()
    smooth = smooth * valid
    if reduction == "mean":
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        smooth = smooth.reshape(nll._shape)
    out = nll * (1 - label_smoothing) + smooth * (label_smoothing / c)
    return out.squeeze(0) if squeeze and reduction == "none" else out


@autocast_op("fp32")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-(t log p + (1-t) log(1-p))`` with log clamped at -100 as in PyTorch, in ``input``'s dtype.

    As ``torch.nn.functional.binary_cross_entropy``: ValueError when the shapes differ; NotImplementedError
    for integer input; RuntimeError when target's dtype differs from input's, when an element of input or
    target is outside [0, 1] (NaN included), and when ``weight`` does not broadcast to input's shape.
    """
    if input._shape != target._shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    _check_reduction(reduction)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{_scalar_name(input.dtype)}'")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_scalar_name(target.dtype)} but expected {_scalar_name(input.dtype)}")
    if weight is not None:
        from ..._strides import broadcast_shapes
        try:
            shape = tuple(broadcast_shapes(input._shape, weight._shape))
        except RuntimeError:
            shape = None
        if shape != input._shape:
            raise RuntimeError(f"Attempting to broadcast a dimension of length {weight._shape[-1]} at -1! Mismatching "
                               f"argument at index 1 had torch.Size({list(weight._shape)}); but expected shape "
                               f"should be broadcastable to {list(input._shape)}")
    # ATen checks every element in its kernel; NaN fails the test too
    for name, t in (("input", input), ("target", target)):
        if t.numel() and not bool(((t >= 0) & (t <= 1)).all()):
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    if weight is None or not weight.requires_grad:  # PyTorch has no gradient formula for weight
        return _natives.binary_cross_entropy(input, target, weight, reduction)
    # a weight that requires grad: the op's decomposition, recorded op by op
    return _natives._bce_decomp(input, target, weight, reduction)


@autocast_op("fp32")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE on logits, computed stably: ``(1-t) x + (1 + (pw-1) t) * softplus(-x)``.

    The loss has ``target``'s dtype, as in ATen (whose in-place steps write into ``1 - target``): float16 /
    bfloat16 targets give float16 / bfloat16 losses even with float32 weights. ValueError when the shapes
    differ; NotImplementedError for integer input, RuntimeError for integer target, as torch."""
    if input._shape != target._shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    for name, pos, v in (("weight", 3, weight), ("pos_weight", 4, pos_weight)):
        check_arg("binary_cross_entropy_with_logits", name, pos, v, "Tensor?")
    _check_reduction(reduction)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(target.dtype)}")
    _check_cast(target.dtype, input, target, weight, pos_weight)
    reduced = input.dtype.name in _REDUCED_FLOATS
    if not any(w is not None and w.requires_grad for w in (weight, pos_weight)):  # no formula for these in torch
        return _natives.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction, reduced)
    # weights that require grad: the op's decomposition (ATen's steps and roundings), recorded op by op
    return _natives._bce_logits_decomp(input, target, weight, pos_weight, reduction, reduced)


@autocast_op("fp32")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target`` (log-probabilities with
    ``log_target``). TypeError for a non-tensor operand or non-bool ``log_target``; RuntimeError for complex or
    integral operands (complex reported first), as PyTorch."""
    check_arg("kl_div", "input", 1, input, "Tensor")
    check_arg("kl_div", "target", 2, target, "Tensor")
    check_arg("kl_div", "log_target", None, log_target, "bool")
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    loss = _pw.exp(target) * (target - input) if log_target else _pw.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input._shape[0]
    return _reduce(loss, reduction)


@autocast_op("fp32")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term where target > 1. TypeError for
    arguments of the wrong type, as PyTorch's argument parser."""
    for pos, name, v, kind in ((1, "input", input, "Tensor"), (2, "target", target, "Tensor"),
                               (3, "log_input", log_input, "bool"), (4, "full", full, "bool"),
                               (5, "eps", eps, "float")):
        check_arg("poisson_nll_loss", name, pos, v, kind)
    loss = _pw.exp(input) - target * input if log_input else input - target * _pw.log(input + eps)
    if full:
        st = target * _pw.log(target) - target + 0.5 * _pw.log(2 * math.pi * target)
        loss = loss + st.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)^2 / var)`` (+ 0.5 log(2 pi) with
    ``full``); ``var`` has input's shape, or one fewer trailing dim, or a trailing 1 (one variance per sample),
    and is clamped to ``eps`` (the gradient passes the clamp unchanged, as in PyTorch). ValueError for a wrong
    var size or negative variances."""
    if isinstance(var, (int, float)):
        var = full_like(input, var)
    if var._shape != input._shape:
        if input._shape[:-1] == var._shape:
            var = var.unsqueeze(-1)
        elif not (input._shape[:-1] == var._shape[:-1] and var._shape[-1:] == (1,)):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var + (_pw.clamp(var, min=eps) - var).detach()
    loss = 0.5 * (_pw.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _log_add3(a, b, c):
    """log(exp a + exp b + exp c) whose gradient stays finite where all three are -inf (unreachable CTC
    states): the shift and the log's argument are replaced there, and the result set back to -inf."""
    from ..._ops.shape import stack
    x = stack([a, b, c], 0)
    m = x.amax(0).detach()
    finite = ~_pw.isinf(m)
    shift = _pw.where(finite, m, 0.0)
    total = (x - shift).exp().sum(0)
    out = _pw.log(_pw.where(finite, total, 1.0)) + shift
    return _pw.where(finite, out, -math.inf)


def _ctc_targets_check(targets, n, tl):
    """PyTorch's checks of batched ctc_loss targets: the concatenated 1-D form holds sum(target_lengths)
    labels, the padded (N, S) form has N rows of at least max(target_lengths)."""
    where = "for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
    if targets.ndim == 1:
        if targets._shape[0] != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got size "
                               f"{targets._shape[0]} {where}")
    elif targets.ndim == 2:
        if targets._shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size {targets._shape[0]} "
                               f"{where}")
        if tl and targets._shape[1] < max(tl):
            raise RuntimeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but got size "
                               f"{targets._shape[1]} {where}")
    else:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor {where}")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (Graves et al. 2006; ``torch.nn.functional.ctc_loss``).

    log_probs (T, N, C) or unbatched (T, C): log-softmax outputs; targets (N, S) padded or the 1-D
    concatenation of all targets (int64, no ``blank``); input_lengths and target_lengths (N,) tensors or
    sequences. The forward (alpha) recursion over the blank-interleaved labels runs in log space in
    tinytorch ops, one vectorized step per time step, so autograd gives the gradient. 'mean' divides each
    loss by its target length before averaging, as PyTorch; ``zero_infinity`` zeroes impossible alignments
    (infinite losses) and their gradients.
    """
    from ..._ops.creation import arange, full, tensor
    from ..._ops.shape import cat
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    unbatched = log_probs.ndim == 2
    if log_probs.ndim != 3:  # PyTorch reads any other rank as unbatched and adds a batch dim before checking
        where = "(while checking arguments for ctc_loss_allocate_outputs)"
        if log_probs.ndim != 2:
            raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim + 1}-dimensional tensor for "
                               f"argument #1 'log_probs' {where}")
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    t_max, n, _ = lp._shape
    dev = lp.device
    il = [int(v) for v in (input_lengths.reshape(-1).tolist() if isinstance(input_lengths, Tensor) else
                           ([input_lengths] if isinstance(input_lengths, int) else input_lengths))]
    tl = [int(v) for v in (target_lengths.reshape(-1).tolist() if isinstance(target_lengths, Tensor) else
                           ([target_lengths] if isinstance(target_lengths, int) else target_lengths))]
    for name, lengths in (("input_lengths", il), ("target_lengths", tl)):
        if len(lengths) != n:
            raise RuntimeError(f"{name} must be of size batch_size")
    if not unbatched and isinstance(targets, Tensor):
        _ctc_targets_check(targets, n, tl)
    if max(il) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {max(il)}")
    tg = targets.reshape(1, -1) if unbatched and targets.ndim == 1 and targets.numel() == tl[0] else targets
    rows = []
    off = 0
    for b in range(n):  # each sample's labels, from a padded (N, S) tensor or the concatenated 1-D form
        if tg.ndim == 2:
            rows.append(tg[b, :tl[b]].tolist())
        else:
            rows.append(tg[off:off + tl[b]].tolist())
            off += tl[b]
    s_max = max(tl) if tl else 0
    width = 2 * s_max + 1
    ext = [[blank] * width for _ in range(n)]  # blank, l1, blank, l2, ..., blank (padded with blanks)
    skip = [[False] * width for _ in range(n)]  # may alpha(s) come from alpha(s - 2)?
    for b, r in enumerate(rows):
        for i, lab in enumerate(r):
            ext[b][2 * i + 1] = lab
            skip[b][2 * i + 1] = i > 0 and r[i - 1] != lab
    ext_t = tensor(ext, dtype=_dt.int64, device=dev)
    skip_t = tensor(skip, device=dev)
    valid = arange(width, device=dev).unsqueeze(0) < tensor([2 * v + 1 for v in tl], device=dev).unsqueeze(1)
    neg = -math.inf
    gathered = lp.gather(2, ext_t.unsqueeze(0).expand(t_max, n, width))  # (T, N, 2S+1)
    ninf = full((n, 1), neg, dtype=lp.dtype, device=dev)
    ninf2 = full((n, 2), neg, dtype=lp.dtype, device=dev)
    start = arange(width, device=dev).unsqueeze(0) < 2
    alpha = _pw.where(start & valid, gathered[0], neg)
    lengths = tensor(il, device=dev).unsqueeze(1)
    for t in range(1, t_max):
        a1 = cat([ninf, alpha[:, :-1]], 1)
        a2 = _pw.where(skip_t, cat([ninf2, alpha[:, :-2]], 1), neg)
        new = _log_add3(alpha, a1, a2) + gathered[t]
        new = _pw.where(valid, new, neg)
        alpha = _pw.where(lengths > t, new, alpha)  # samples that have ended keep their final alpha
    last = tensor([2 * v for v in tl], device=dev).unsqueeze(1)
    end = _log_add3(alpha.gather(1, last), _pw.where(last > 0, alpha.gather(1, (last - 1).clamp(min=0)), neg),
                    full((n, 1), neg, dtype=lp.dtype, device=dev)).squeeze(1)
    loss = -end
    if zero_infinity:
        loss = _pw.where(_pw.isinf(loss), 0.0, loss)
    if reduction == "mean":
        return (loss / tensor(tl, dtype=lp.dtype, device=dev).clamp(min=1)).mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


@autocast_op("fp32")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: ``sum over i != y of max(0, margin - x[y] + x[i])^p / C`` (``F.multi_margin_loss``).
    input (N, C) or (C,), target (N,) or () class indices; ``weight`` (C,) scales by the target's class."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    t = target.reshape(-1)
    c = x._shape[1]
    xy = x.gather(1, t.unsqueeze(1))
    m = _pw.clamp(x - xy + margin, min=0)
    if p == 2:
        m = m * m
    if weight is not None:
        m = m * weight.index_select(0, t).unsqueeze(1)
    from ..._ops.creation import arange
    mask = arange(c, device=x.device).unsqueeze(0) != t.unsqueeze(1)
    loss = (m * mask).sum(1) / c
    if input.ndim == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss (``torch.nn.functional.multilabel_margin_loss``): for each sample,
    ``sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C``.

    input (C,) or (N, C); target of the same shape, int64 class indices, the list ending at the first -1.
    RuntimeError when the shapes differ.
    """
    if tuple(target.shape) != tuple(input.shape) or input.ndim > 2:
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    t = target if target.ndim == 2 else target.unsqueeze(0)
    c = x._shape[1]
    valid = (t != -1).long().cumprod(1).to(x.dtype)  # slots before the first -1
    idx = t.clamp(min=0)
    is_target = zeros(x._shape, dtype=x.dtype, device=x.device).scatter_add(1, idx, valid) > 0
    xt = x.gather(1, idx)  # (N, slots)
    hinge = _pw.clamp(1 - xt.unsqueeze(2) + x.unsqueeze(1), min=0)  # (N, slot, class)
    pairs = valid.unsqueeze(2) * (~is_target).to(x.dtype).unsqueeze(1)
    loss = (hinge * pairs).sum((1, 2)) / c
    if input.ndim == 1:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``; inputs and target (+1 / -1) of one dimensionality
    (RuntimeError otherwise, as torch), broadcast together."""
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce(_pw.clamp(-target * (input1 - input2) + margin, min=0), reduction)


@autocast_op("fp32")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the p-norm pairwise distance (Balntas et al. 2016);
    ``swap`` uses min(d(a, n), d(p, n)). Inputs (N, D) or (D,). ValueError for a margin <= 0 (the
    functional's check; ``torch.triplet_margin_loss`` has none, see ``_triplet_margin_loss``)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def _triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    check_arg("triplet_margin_loss", "p", 5, p, "float")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _pw.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_pw.clamp(d_pos - d_neg + margin, min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with a given distance (default: pairwise_distance)
    (``F.triplet_margin_with_distance_loss``). ValueError for a bad reduction or a margin <= 0; RuntimeError
    for inputs of different ranks, as PyTorch."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = [getattr(t, "ndim", None) for t in (anchor, positive, negative)]
    if None in dims:
        name = ("anchor", "positive", "negative")[dims.index(None)]
        bad = (anchor, positive, negative)[dims.index(None)]
        raise TypeError(f"triplet_margin_with_distance_loss(): argument '{name}' must be Tensor, "
                        f"not {type(bad).__name__}")
    if not dims[0] == dims[1] == dims[2]:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs")
    d = distance_function or pairwise_distance
    d_pos = d(anchor, positive)
    d_neg = d(anchor, negative)
    if swap:
        d_neg = _pw.minimum(d_neg, d(positive, negative))
    return _reduce(_pw.clamp(d_pos - d_neg + margin, min=0), reduction)


@autocast_op("fp32")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1.
    Inputs (N, D) or (D,), target (N,) or (); RuntimeError for other ranks, as PyTorch."""
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if target.ndim == 1 else 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(f"{target.ndim}D target tensor expects {want}D input tensors, but found inputs with sizes "
                           f"{list(input1._shape)} and {list(input2._shape)}.")
    d = 1 if input1.ndim == 2 else 0
    dot = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + 1e-12
    m2 = (input2 * input2).sum(d) + 1e-12
    cos = dot / (m1 * m2).sqrt()
    zero = zeros((), dtype=cos.dtype, device=cos.device)
    loss = _pw.where(target == 1, 1 - cos, zero) + _pw.where(target == -1, _pw.clamp(cos - margin, min=0), zero)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1 (``torch.nn.functional.hinge_embedding_loss``).
    Computed in ``input``'s dtype, as ATen (an integer input truncates ``margin``; its 'mean' then raises
    mean()'s RuntimeError). TypeError for a non-tensor input."""
    check_arg("hinge_embedding_loss", "input", 1, input, "Tensor")
    zero = zeros((), dtype=input.dtype, device=input.device)
    margin_part = _pw.where(target != 1, _pw.clamp(full_like(input, margin) - input, min=0), zero)
    self_part = _pw.where(target != -1, input, zero)
    return _reduce(margin_part + self_part, reduction)


@autocast_op("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-y x))`` for targets y in {1, -1}, in ``input``'s dtype (as
    ATen, which writes it into a tensor like ``input``); RuntimeError for integer input, as torch."""
    check_arg("soft_margin_loss", "target", 2, target, "Tensor")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(input.dtype)}")
    common = _dt.result_type_of([input, target])
    if common.is_complex and not input.dtype.is_complex:  # the in-place product cannot be written back
        raise RuntimeError(f"result type {_scalar_name(common)} can't be cast to the desired output type "
                           f"{_scalar_name(input.dtype)}")
    # ATen writes the loss into a tensor shaped like input, so target must broadcast to exactly that shape
    from ..._strides import broadcast_shapes
    shape = tuple(broadcast_shapes(input._shape, target._shape))
    if shape != tuple(input._shape):
        raise RuntimeError(f"output with shape {list(input._shape)} doesn't match the broadcast shape {list(shape)}")
    if target.requires_grad and _grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    # ATen's in-place steps: -input (so an unsigned target is never negated), times target, exp, log1p, each in
    # input's dtype (so a huge product overflows to inf as there, unlike a stable softplus)
    return _reduce((-input * target).to(input.dtype).exp().log1p(), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-label one-versus-all logistic loss over classes (dim 1 of (N, C)), averaged over the classes."""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input._shape[-1]
    return _reduce(loss, reduction)


def _wrap_legacy_losses():
    import inspect
    g = globals()
    for name, fn in list(g.items()):
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if "size_average" in params and "reduce" in params and "reduction" in params:
            g[name] = _legacy_reduction_args(fn)


_wrap_legacy_losses()
