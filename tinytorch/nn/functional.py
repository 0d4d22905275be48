"""``tinytorch.nn.functional``: layers, activations and losses as functions.

Everything here is written in tinytorch ops, so it is differentiable (twice) on every backend.
Convolution and pooling are im2col (``unfold2d``) + matmul / reductions.
"""
import math
import warnings

from ..amp.autocast_mode import autocast_op
from .. import _dtype as _dt
from .._ops import pointwise as _pw
from .._ops.creation import bernoulli, empty, full_like, ones, zeros
from .._ops import nn as _nnops
from .._ops.nn import fold2d, im2col, unfold2d
from .._ops.shape import pad as _pad
from .._ops._util import check_arg, check_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled

sigmoid = _pw.sigmoid
tanh = _pw.tanh


def _pair(x, n=2):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _activation(input, inplace, fn):
    """``fn(input)``, or with ``inplace`` its result written into ``input``. In-place goes through
    ``Tensor._inplace``: when a graph is being built, ``fn`` runs on a copy of ``input`` (PyTorch's
    original_self), so the tensors its backward saved are not the ones overwritten."""
    return input._inplace(fn) if inplace else fn(input)


def relu(input, inplace=False):
    """max(input, 0) elementwise; with ``inplace`` written into ``input`` (``torch.nn.functional.relu``)."""
    return input._inplace(_pw.relu) if inplace else _pw.relu(input)


def relu_(input):
    return input._inplace(_pw.relu)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for x > 0 else ``negative_slope * x``. NotImplementedError for a non-floating input (ATen's
    leaky_relu_cpu kernel is floating-only)."""
    check_dtype("leaky_relu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _pw.where(input > 0, input, input * negative_slope))


def elu(input, alpha=1.0, inplace=False):
    """``x`` for x > 0 else ``alpha * (exp(x) - 1)`` (Clevert et al. 2015). NotImplementedError for a
    non-floating input (ATen's elu_cpu kernel is floating-only)."""
    check_dtype("elu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _pw.where(input > 0, input, _pw.expm1(input) * alpha))


def selu(input, inplace=False):
    """Scaled ELU with the constants of Klambauer et al. 2017."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return _activation(input, inplace, lambda input: elu(input, alpha) * scale)


def celu(input, alpha=1.0, inplace=False):
    check_dtype("elu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _pw.where(input > 0, input, _pw.expm1(input / alpha) * alpha))


from .._ops.nn import gelu  # noqa: E402  (an op with a fused kernel and a decomposition)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (swish). NotImplementedError for an integer or bool input, as ATen's silu_cpu."""
    check_dtype("silu_cpu", input.dtype, floating=True, complex_ok=True)
    return _activation(input, inplace, lambda input: input * _pw.sigmoid(input))


def mish(input, inplace=False):
    """``x * tanh(softplus(x))`` (Misra 2019). NotImplementedError for a non-floating input, as ATen's mish_cpu."""
    check_dtype("mish_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: input * _pw.tanh(softplus(input)))


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` for stability. NotImplementedError for a
    non-floating input (ATen's softplus_cpu kernel is floating-only)."""
    check_dtype("softplus_cpu", input.dtype, floating=True)
    bx = input * beta
    return _pw.where(bx > threshold, input, _pw.log1p(_pw.exp(_pw.clamp(bx, max=threshold))) / beta)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val]. The output has the input's dtype: for an integer input the bounds are
    truncated to integers, as ATen's hardtanh (so ``relu6`` of int64 is int64). ValueError when min_val >
    max_val; RuntimeError for bool input and for an unsigned input with a negative bound, as PyTorch."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _dt.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        if input.dtype is _dt.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        min_val, max_val = int(min_val), int(max_val)
    return _activation(input, inplace, lambda input: _pw.clamp(input, min_val, max_val))


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``."""
    return _activation(input, inplace, lambda input: _pw.clamp(input / 6 + 0.5, 0.0, 1.0))


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (Howard et al. 2019)."""
    return _activation(input, inplace, lambda input: input * _pw.clamp(input / 6 + 0.5, 0.0, 1.0))


def logsigmoid(input):
    return -softplus(-input)


def softsign(input):
    return input / (1 + input.abs())


def tanhshrink(input):
    return input - _pw.tanh(input)


def threshold(input, threshold, value, inplace=False):
    """``input`` where it exceeds ``threshold``, else ``value`` (``torch.nn.functional.threshold``), in the
    input's dtype: for an integer input both numbers are truncated to integers, as ATen's kernel does.
    NotImplementedError for bool input."""
    if input.dtype is _dt.bool:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        info = _dt.iinfo(input.dtype)
        for v in (threshold, value):
            if not info.min <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {input.dtype.name}_t without overflow")
        threshold, value = int(threshold), int(value)
    return _activation(input, inplace, lambda input: _pw.where(input > threshold, input, value))


_threshold = threshold  # threshold_'s parameter is named ``threshold`` (as torch's) and shadows the function


def elu_(input, alpha=1.0, scale=1, input_scale=1):
    """In-place ``scale * elu(x)`` with the exponent's input scaled by ``input_scale``: ``x * scale`` for x > 0
    else ``alpha * scale * (exp(x * input_scale) - 1)``, ATen's ``elu_`` (``F.elu_`` takes all three)."""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, inplace=True)
    return _activation(input, True, lambda x: _pw.where(x > 0, x * scale, _pw.expm1(x * input_scale) * (alpha * scale)))


def selu_(input):
    """In-place ``selu``."""
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold, value):
    """In-place ``threshold``."""
    return _threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU (Xu et al. 2015): in training the negative slope of each element is drawn from
    U(lower, upper); in eval it is (lower + upper) / 2 (``torch.nn.functional.rrelu``)."""
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, _generator):
    if training:
        from .._ops.creation import rand
        slope = rand(input._shape, dtype=input.dtype, device=input.device, generator=_generator) * (upper - lower) \
            + lower
    else:
        slope = (lower + upper) / 2
    return _activation(input, inplace, lambda input: _pw.where(input >= 0, input, input * slope))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place ``rrelu``; slopes drawn from ``generator`` when given (``F.rrelu_`` takes one, ``F.rrelu`` not)."""
    return _rrelu(input, lower, upper, training, True, generator)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> channels reordered as (k, g) (Zhang et al. 2018, ShuffleNet) (``F.channel_shuffle``)."""
    n, c = input._shape[:2]
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = input._shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution (Jang et al. 2016): ``softmax((logits + g) / tau)`` with
    Gumbel noise g; ``hard`` returns one-hot vectors with the soft sample's gradient (straight-through)."""
    from .._ops.creation import rand
    u = rand(logits._shape, dtype=logits.dtype, device=logits.device)
    gumbels = -_pw.log(-_pw.log(u + eps) + eps)
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = zeros(logits._shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


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
    from .._ops.creation import arange
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


def _log_add3(a, b, c):
    """log(exp a + exp b + exp c) whose gradient stays finite where all three are -inf (unreachable CTC
    states): the shift and the log's argument are replaced there, and the result set back to -inf."""
    from .._ops.shape import stack
    x = stack([a, b, c], 0)
    m = x.amax(0).detach()
    finite = ~_pw.isinf(m)
    shift = _pw.where(finite, m, 0.0)
    total = (x - shift).exp().sum(0)
    out = _pw.log(_pw.where(finite, total, 1.0)) + shift
    return _pw.where(finite, out, -math.inf)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (Graves et al. 2006; ``torch.nn.functional.ctc_loss``).

    log_probs (T, N, C) or unbatched (T, C): log-softmax outputs; targets (N, S) padded or the 1-D
    concatenation of all targets (int64, no ``blank``); input_lengths and target_lengths (N,) tensors or
    sequences. The forward (alpha) recursion over the blank-interleaved labels runs in log space in
    tinytorch ops, one vectorized step per time step, so autograd gives the gradient. 'mean' divides each
    loss by its target length before averaging, as PyTorch; ``zero_infinity`` zeroes impossible alignments
    (infinite losses) and their gradients.
    """
    from .._ops.creation import arange, full, tensor
    from .._ops.shape import cat
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    t_max, n, _ = lp._shape
    dev = lp.device
    il = [int(v) for v in (input_lengths.reshape(-1).tolist() if isinstance(input_lengths, Tensor) else
                           ([input_lengths] if isinstance(input_lengths, int) else input_lengths))]
    tl = [int(v) for v in (target_lengths.reshape(-1).tolist() if isinstance(target_lengths, Tensor) else
                           ([target_lengths] if isinstance(target_lengths, int) else target_lengths))]
    if len(il) != n or len(tl) != n:
        raise RuntimeError(f"ctc_loss: expected input_lengths and target_lengths of size {n}, but got {len(il)} and "
                           f"{len(tl)}")
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


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with a given distance (default: pairwise_distance)
    (``F.triplet_margin_with_distance_loss``)."""
    d = distance_function or pairwise_distance
    d_pos = d(anchor, positive)
    d_neg = d(anchor, negative)
    if swap:
        d_neg = _pw.minimum(d_neg, d(positive, negative))
    return _reduce(_pw.clamp(d_pos - d_neg + margin, min=0), reduction)


def glu(input, dim=-1):
    """Gated linear unit ``a * sigmoid(b)`` of the two halves a, b of ``input`` along ``dim`` (Dauphin et al.
    2017; ``torch.nn.functional.glu``). RuntimeError for a 0-d input or an odd size along ``dim``,
    NotImplementedError for non-floating dtypes, as PyTorch."""
    from .._strides import wrap_dim
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    if input._shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input._shape[d]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    a, b = input.chunk(2, d) if input._shape[d] else (input, input)
    return a * _pw.sigmoid(b)


def _get_softmax_dim(name, ndim, stacklevel):
    # PyTorch's legacy rule for a missing dim: 0 for 0-, 1- and 3-D inputs, else 1 (not the last dim)
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x), dim)`` along ``dim``, computed in ``dtype`` when given
    (``torch.nn.functional.softmax``). Without ``dim``, PyTorch's deprecated implicit choice (with its
    warning): dim 0 for 0-, 1- and 3-D inputs, else dim 1."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.ndim, _stacklevel)
    return _nnops.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x, dim)`` along ``dim`` (``torch.nn.functional.log_softmax``); a missing ``dim``
    is chosen as in ``softmax``."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.ndim, _stacklevel)
    return _nnops.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)`` (``torch.nn.functional.softmin``)."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.ndim, _stacklevel)
    return _nnops.softmax(-input, dim, dtype)


# ---- linear, dropout, embedding ------------------------------------------------------------------------------
from .._ops.linalg import linear  # noqa: E402  (one op: a fused kernel where the backend has one)


@autocast_op("off")
def bilinear(input1, input2, weight, bias=None):
    out = _einsum("bi,oij,bj->bo", input1, weight, input2)
    return out + bias if bias is not None else out


def _einsum(eq, *ops):
    from .._ops.linalg import einsum
    return einsum(eq, *ops)


def _scalar_name(dtype):
    """PyTorch's C++ name of a dtype in messages ('Long', 'Half', ...)."""
    from .._ops.movement import _SCALAR_TYPE
    return _SCALAR_TYPE.get(dtype.name, dtype.name)


def _check_dropout_p(p):
    """PyTorch's two checks of a dropout probability: Python's ``p < 0 or p > 1`` (ValueError), then ATen's
    ``p >= 0 && p <= 1`` (RuntimeError), which is what a NaN fails."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not (p >= 0.0 and p <= 1.0):
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_dropout_dtype(input):
    # the kept elements are scaled by 1 / (1 - p), a float that an integer tensor cannot hold (ATen's mul_)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(input.dtype)}")
    # the mask is drawn in the input's dtype, and ATen's bernoulli_ has no complex kernel
    check_dtype("bernoulli_scalar_cpu_", input.dtype, floating=True)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (Srivastava et al. 2014).
    ValueError for p outside [0, 1], RuntimeError for a NaN p and for integer input in training with
    0 < p < 1, as ``torch.nn.functional.dropout``."""
    check_arg("dropout", "train", 3, training, "bool")
    _check_dropout_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return _activation(input, inplace, lambda input: input * 0)
    _check_dropout_dtype(input)
    # PyTorch's CPU formula: noise = bernoulli(1 - p) / (1 - p), then input * noise (same draws, same rounding)
    noise = bernoulli(empty(input._shape, dtype=input.dtype, device=input.device), 1 - p) / (1 - p)
    return _activation(input, inplace, lambda input: input * noise)


def _feature_dropout(input, p, training, inplace):
    """ATen's feature_dropout: one draw per (dim 0, dim 1) pair of an input of 2 or more dims."""
    if not (p >= 0.0 and p <= 1.0):
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    if p == 1:
        return _activation(input, inplace, lambda input: input * 0)
    _check_dropout_dtype(input)
    shape = input._shape[:2] + (1,) * (input.ndim - 2)
    noise = bernoulli(empty(shape, dtype=input.dtype, device=input.device), 1 - p) / (1 - p)
    return _activation(input, inplace, lambda input: input * noise)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, L) or unbatched (C, L) input: whole channels zeroed with probability ``p``,
    the rest scaled by 1/(1-p) (``torch.nn.functional.dropout1d``). ValueError for p outside [0, 1],
    RuntimeError for other ranks."""
    _check_dropout_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0) if not inplace else \
            input._inplace(lambda x: _feature_dropout(x.unsqueeze(0), p, training, False).squeeze(0))
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, H, W) input (``torch.nn.functional.dropout2d``); as PyTorch, other ranks
    warn and a 3-D input is taken as (N, C, L)."""
    _check_dropout_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, D, H, W) or unbatched (C, D, H, W) input (``torch.nn.functional.dropout3d``);
    other ranks warn, as PyTorch."""
    _check_dropout_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    if input.ndim != 5:
        return _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0) if not inplace else \
            input._inplace(lambda x: _feature_dropout(x.unsqueeze(0), p, training, False).squeeze(0))
    return _feature_dropout(input, p, training, inplace)


def _alpha_dropout(input, p, training, inplace, feature):
    _check_dropout_p(p)
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    if p == 1:
        return _activation(input, inplace, lambda input: input * 0)
    _check_dropout_dtype(input)
    alpha = 1.7580993408473766  # SELU's -alpha' = scale * alpha: dropped units take the value SELU saturates to
    shape = input._shape[:2] + (1,) * (input.ndim - 2) if feature else input._shape
    keep = bernoulli(empty(shape, dtype=input.dtype, device=input.device), 1 - p)
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5  # affine correction that keeps zero mean and unit variance
    shift = (keep - 1) * (alpha * a) + alpha * a * p  # as ATen: input * keep * a + shift
    return _activation(input, inplace, lambda input: input * (keep * a) + shift)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalizing property of SELU networks: dropped elements are set to
    SELU's negative saturation value, then an affine map restores zero mean and unit variance (Klambauer
    et al. 2017; ``torch.nn.functional.alpha_dropout``). ValueError unless 0 <= p <= 1."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """``alpha_dropout`` of whole channels: one draw per (sample, channel) of an (N, C, *) input
    (``torch.nn.functional.feature_alpha_dropout``)."""
    return _alpha_dropout(input, p, training, inplace, True)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` (num_embeddings, dim) at integer ``input`` (*) -> (*, dim).

    Rows at ``padding_idx`` get no gradient; with ``scale_grad_by_freq`` a row's gradient is divided by the
    number of times its index occurs in ``input``. IndexError for out-of-range indices.
    """
    if padding_idx is not None:
        if isinstance(padding_idx, int) and not isinstance(padding_idx, bool):
            pass
        elif isinstance(padding_idx, str):  # torch's Python wrapper compares it with 0 first
            raise TypeError("'>' not supported between instances of 'str' and 'int'")
        else:
            check_arg("embedding", "padding_idx", 3, padding_idx, "int")
    if input.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if max_norm is not None:
        from .._ops.reduce import norm
        from ..autograd.grad_mode import no_grad
        with no_grad():
            rows = weight[input.reshape(-1)]
            n = norm(rows, norm_type, 1, keepdim=True)
            scale = _pw.where(n > max_norm, max_norm / (n + 1e-7), 1.0)
            weight[input.reshape(-1)] = rows * scale
    w = weight
    if padding_idx is not None and weight.requires_grad:
        mask = ones(weight._shape[0], 1, dtype=weight.dtype, device=weight.device)
        mask[padding_idx] = 0
        w = weight * mask + (weight * (1 - mask)).detach()
    flat = input.reshape(-1)
    rows = w.index_select(0, flat)
    if scale_grad_by_freq and weight.requires_grad and flat.numel():
        # each row's gradient is divided by how often its index occurs in this batch; the forward value is
        # unchanged (rows.detach() + 0)
        from .._ops.reduce import bincount
        freq = bincount(flat, minlength=weight._shape[0]).index_select(0, flat).to(weight.dtype).unsqueeze(1)
        rows = rows.detach() + (rows - rows.detach()) / freq
    return rows.reshape(input._shape + (weight._shape[1],))


def one_hot(input, num_classes=-1):
    """int64 one-hot encoding: (*) -> (*, num_classes)."""
    tensor = input  # torch's binding names the argument input
    check_arg("one_hot", "num_classes", 2, num_classes, "int")
    from .._ops.creation import arange
    if tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    n = int(tensor.max().item()) + 1 if num_classes == -1 else num_classes
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= n):
        raise RuntimeError("Class values must be smaller than num_classes." if int(tensor.max().item()) >= n
                           else "Class values must be non-negative.")
    return (tensor.unsqueeze(-1) == arange(n, device=tensor.device)).long()


# ---- convolution -----------------------------------------------------------------------------------------
def _conv_padding(padding, kernel, dilation, stride, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd, None
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            lo = [t // 2 for t in total]
            extra = [t - 2 * l for t, l in zip(total, lo)]
            return tuple(lo), (tuple(extra) if any(extra) else None)
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    return _pair(padding, nd), None


def _batch_dim(input, ndim, op):
    """(input with a batch dim, whether one was added): accepts ndim-1 (unbatched) or ndim dims, as PyTorch's
    convolutions do; RuntimeError naming the op and the size otherwise."""
    unbatched = input.ndim == ndim - 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != ndim:
        raise RuntimeError(f"Expected {ndim - 1}D (unbatched) or {ndim}D (batched) input to {op}, but got input of "
                           f"size: {list(input._shape)}")
    return input, unbatched

def _int_tuple(name, arg, value, nd):
    """``value`` (an int or a sequence of 1 or ``nd`` ints) as an ``nd``-tuple, as PyTorch's argument parser and
    expand_param_if_needed take it: TypeError for a non-int element, RuntimeError for another length."""
    import operator
    seq = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for i, v in enumerate(seq):
        if isinstance(v, (bool, float)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {i}")
    seq = tuple(operator.index(v) for v in seq)
    if len(seq) == 1:
        return seq * nd
    if len(seq) != nd:
        raise RuntimeError(f"expected {arg} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {arg}={list(seq)}")
    return seq


def _conv_check(name, input, weight, bias, stride, padding, dilation, groups, nd, output_padding=None):
    """PyTorch's checks of an ``nd``-dim (transposed when ``output_padding`` is given) convolution, made before
    anything is computed. Returns (stride, padding, dilation, output_padding) as ``nd``-tuples (padding may
    stay 'same' / 'valid'). RuntimeError, with PyTorch's messages, for: the input's rank; a weight of the
    wrong rank or with 0 output channels / kernel size 0 / channels not divisible by ``groups``; stride <= 0,
    padding < 0, output_padding < 0, groups <= 0, dilation <= 0; a bias that is not a vector of C_out
    elements; a dilated kernel larger than the padded input; padding='same' with a stride; an unknown padding
    string. TypeError for non-int elements (and a padding string to a transposed convolution)."""
    transposed = output_padding is not None
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input._shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {max(weight.ndim - 2, 0)} "
                           f"values to match the convolution dimensions, but got stride="
                           f"{list(_int_tuple(name, 'stride', stride, nd))}")
    stride = _int_tuple(name, "stride", stride, nd)
    dilation = _int_tuple(name, "dilation", dilation, nd)
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(st != 1 for st in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    else:
        padding = _int_tuple(name, "padding", padding, nd)
    if transposed:
        output_padding = _int_tuple(name, "output_padding", output_padding, nd)
    if any(st <= 0 for st in stride):
        raise RuntimeError("non-positive stride is not supported")
    if not isinstance(padding, str) and any(q < 0 for q in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(q < 0 for q in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    w = list(weight._shape)
    if w[0] == 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight of "
                           f"size {w} instead")
    if not transposed and w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{w}] instead")
    k = w[2:]
    if any(kk <= 0 for kk in k):
        if nd == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got: {k[0]} x {k[1]} x {k[2]} (TxHxW)")
        kh, kw = ([1] + k)[-2:]
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    cout = w[1] * groups if transposed else w[0]
    if bias is not None and (bias.ndim != 1 or bias._shape[0] != cout):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size {w}, expected bias to be "
                           f"1-dimensional with {cout} elements, but got bias of size {list(bias._shape)} instead")
    if not transposed:
        pads = (0,) * nd if isinstance(padding, str) else padding
        spatial = input._shape[-nd:]
        padded = [sz + 2 * q for sz, q in zip(spatial, pads)]
        dk = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
        if padding != "same" and any(a < b for a, b in zip(padded, dk)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, dk))}). Kernel size can't be greater than actual input "
                               "size")
    return stride, padding, dilation, output_padding


@autocast_op("lower")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) as im2col + matmul.

    input (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in/groups, kh, kw); bias (C_out,).
    ``padding`` an int, pair, 'valid' or 'same'. Returns (N, C_out, H_out, W_out).
    RuntimeError on channel or group mismatch, as ``torch.nn.functional.conv2d``.
    """
    stride, padding, dilation, _ = _conv_check("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)
    input, unbatched = _batch_dim(input, 4, "conv2d")
    cout, cin_g, kh, kw = weight._shape
    pad, extra = _conv_padding(padding, (kh, kw), dilation, stride, 2)
    if extra:
        input = _pad(input, (0, extra[1], 0, extra[0]))
    n, cin, h, w = input._shape
    if cin != cin_g * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin_g * groups} channels, but got {cin} channels instead")
    if cout % groups:
        raise RuntimeError("out_channels must be divisible by groups")
    cols = im2col(input, (kh, kw), dilation, pad, stride)  # (C*kh*kw, N, L)
    oh = (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if groups == 1:
        # one (C_out, C*kh*kw) x (C*kh*kw, N*L) GEMM
        out = weight.reshape(cout, -1).matmul(cols.reshape(cin * kh * kw, n * oh * ow))
    else:
        out = weight.reshape(groups, cout // groups, -1).matmul(cols.reshape(groups, cin_g * kh * kw, n * oh * ow))
    out = out.reshape(cout, n, oh, ow).transpose(0, 1)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution: input (N, C_in, L), weight (C_out, C_in/groups, k) -> (N, C_out, L_out).
    Arguments checked as PyTorch's (``_conv_check``)."""
    stride, padding, dilation, _ = _conv_check("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    pad = padding if isinstance(padding, str) else (0, padding[0])
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]), pad,
                 (1, dilation[0]), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution: input (N, C_in, D, H, W) or unbatched, weight (C_out, C_in/groups, kd, kh, kw)
    -> (N, C_out, D_out, H_out, W_out) (``torch.nn.functional.conv3d``).

    Written as a sum over the kd depth taps of 2-D convolutions of strided depth slices, so its gradient
    comes from conv2d's.
    """
    stride, padding, dilation, _ = _conv_check("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)
    input, unbatched = _batch_dim(input, 5, "conv3d")
    cout, cin_g, kd, kh, kw = weight._shape
    pad, extra = _conv_padding(padding, (kd, kh, kw), dilation, stride, 3)
    if extra:
        input = _pad(input, (0, extra[2], 0, extra[1], 0, extra[0]))
    if input._shape[1] != cin_g * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin_g * groups} channels, but got {input._shape[1]} "
                           "channels instead")
    if pad[0]:
        input = _pad(input, (0, 0, 0, 0, pad[0], pad[0]))
    n, cin, d = input._shape[:3]
    od = (d - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if od <= 0:
        raise RuntimeError(f"Calculated output size is too small: input depth {d} (padded), kernel {kd}")
    out = None
    for i in range(kd):
        start = i * dilation[0]
        xs = input[:, :, start:start + stride[0] * (od - 1) + 1:stride[0]]  # (N, C, od, H, W)
        xs = xs.transpose(1, 2).reshape((n * od, cin) + input._shape[3:])
        y = conv2d(xs, weight[:, :, i], None, stride[1:], pad[1:], dilation[1:], groups)
        out = y if out is None else out + y
    out = out.reshape((n, od) + out._shape[1:]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input) as matmul + col2im.

    input (N, C_in, H, W) or unbatched; weight (C_in, C_out/groups, kh, kw); returns (N, C_out, H_out, W_out)
    with H_out = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1
    (``torch.nn.functional.conv_transpose2d``).
    """
    from .._ops.nn import col2im
    stride, padding, dilation, output_padding = _conv_check("conv_transpose2d", input, weight, bias, stride, padding,
                                                            dilation, groups, 2, output_padding)
    input, unbatched = _batch_dim(input, 4, "conv_transpose2d")
    cin, cout_g, kh, kw = weight._shape
    n, c, h, w = input._shape
    if c != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin} channels, but got {c} channels instead")
    if cin % groups:
        raise RuntimeError("in_channels must be divisible by groups")
    for op_, s_, d_ in zip(output_padding, stride, dilation):
        if op_ >= s_ and op_ >= d_:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: "
                               f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                               f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    cout = cout_g * groups
    x = input.transpose(0, 1).reshape(groups, cin // groups, n * h * w)
    cols = weight.reshape(groups, cin // groups, cout_g * kh * kw).mT.matmul(x)  # (g, C_out/g*kh*kw, N*H*W)
    fh = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1  # the uncropped output
    fw = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    if fh - 2 * padding[0] + output_padding[0] <= 0 or fw - 2 * padding[1] + output_padding[1] <= 0:
        raise RuntimeError(f"conv_transpose2d: calculated output size "
                           f"({fh - 2 * padding[0] + output_padding[0]}x{fw - 2 * padding[1] + output_padding[1]}) "
                           "is too small")
    out = col2im(cols.reshape(cout * kh * kw, n, h * w), (fh, fw), (kh, kw), dilation, (0, 0), stride)
    # padding crops both sides; output_padding gives back rows/columns at the end (zeros past the full size)
    crop = (-padding[1], output_padding[1] - padding[1], -padding[0], output_padding[0] - padding[0])
    if any(crop):
        out = _pad(out, crop)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution: input (N, C_in, L), weight (C_in, C_out/groups, k) -> (N, C_out, L_out).
    Arguments checked as PyTorch's (``_conv_check``)."""
    stride, padding, dilation, output_padding = _conv_check("conv_transpose1d", input, weight, bias, stride, padding,
                                                            dilation, groups, 1, output_padding)
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    out = conv_transpose2d(input.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]), (0, padding[0]),
                           (0, output_padding[0]), groups, (1, dilation[0])).squeeze(2)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution: input (N, C_in, D, H, W) or unbatched, weight (C_in, C_out/groups, kd, kh, kw)
    -> (N, C_out, D_out, H_out, W_out), D_out = (D - 1) * stride - 2 * padding + dilation * (kd - 1) +
    output_padding + 1, likewise H_out and W_out (``torch.nn.functional.conv_transpose3d``).

    Each depth tap i is a 2-D transposed convolution of every input depth slice; its output slices land at
    depth d * stride + i * dilation of the uncropped output (zeros interleaved for stride > 1), and the taps
    are summed. The gradient comes from conv_transpose2d's.
    """
    from .._ops.shape import stack
    from .._ops.creation import zeros_like
    stride, padding, dilation, output_padding = _conv_check("conv_transpose3d", input, weight, bias, stride, padding,
                                                            dilation, groups, 3, output_padding)
    input, unbatched = _batch_dim(input, 5, "conv_transpose3d")
    if weight.ndim != 5:
        raise RuntimeError(f"conv_transpose3d: expected a 5-D weight (C_in, C_out/groups, kd, kh, kw), got "
                           f"{list(weight._shape)}")
    cin, cout_g, kd, kh, kw = weight._shape
    n, c, d, h, w = input._shape
    if c != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin} channels, but got {c} channels instead")
    op_, s_, dl_ = output_padding[0], stride[0], dilation[0]
    if op_ >= s_ and op_ >= dl_:
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding: {list(output_padding)} stride: {list(stride)} dilation: "
                           f"{list(dilation)}")
    fd = (d - 1) * s_ + dl_ * (kd - 1) + 1  # the uncropped output depth
    if fd - 2 * padding[0] + op_ <= 0:
        raise RuntimeError(f"conv_transpose3d: calculated output depth {fd - 2 * padding[0] + op_} is too small")
    xs = input.transpose(1, 2).reshape(n * d, c, h, w)
    out = None
    for i in range(kd):
        y = conv_transpose2d(xs, weight[:, :, i], None, stride[1:], padding[1:], output_padding[1:], groups,
                             dilation[1:])
        y = y.reshape((n, d) + y._shape[1:])  # (N, D, C_out, H_out, W_out)
        if s_ > 1:  # slice k goes to depth k * stride: interleave stride - 1 zero slices, drop the trailing ones
            z = zeros_like(y)
            y = stack([y] + [z] * (s_ - 1), 2).reshape((n, d * s_) + y._shape[2:])[:, :(d - 1) * s_ + 1]
        lead = i * dl_
        y = _pad(y, (0, 0, 0, 0, 0, 0, lead, fd - lead - y._shape[1]))
        out = y if out is None else out + y
    out = out.transpose(1, 2)  # (N, C_out, fd, H_out, W_out)
    if padding[0] or op_:
        out = _pad(out, (0, 0, 0, 0, -padding[0], op_ - padding[0]))
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (int or triple; None keeps a size),
    PyTorch's start/end window rule; with ``return_indices`` also the flat d * H * W + h * W + w index of each
    maximum (``torch.nn.functional.adaptive_max_pool3d``)."""
    sizes = _adaptive_args("adaptive_max_pool3d", input, output_size, 3, "max")
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, sizes)
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    from .._ops.shape import stack

    def f(x):
        od, oh, ow = sizes
        for dim, o in ((2, od), (3, oh), (4, ow)):  # max is separable: one dim at a time
            size = x._shape[dim]
            if size % o == 0:
                x = x.reshape(x._shape[:dim] + (o, size // o) + x._shape[dim + 1:]).amax(dim + 1)
            else:
                x = stack([x.narrow(dim, a, b - a).amax(dim) for a, b in _adaptive_bounds(size, o)], dim)
        return x
    return _batched(f, input, 3)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """(values, flat d * H * W + h * W + w indices) of 3-D adaptive max pooling; the gradient goes to each
    window's maximum (the first one on ties)."""
    from .._ops.shape import stack
    sizes = _adaptive_args("adaptive_max_pool3d", input, output_size, 3, "max")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, True)

    def f(x):
        n, c, d, h, w = x._shape
        od, oh, ow = sizes
        vals, idxs = [], []
        for d0, d1 in _adaptive_bounds(d, od):
            for h0, h1 in _adaptive_bounds(h, oh):
                for w0, w1 in _adaptive_bounds(w, ow):
                    v, i = x[:, :, d0:d1, h0:h1, w0:w1].reshape(n, c, -1).max(-1)
                    hw = (h1 - h0) * (w1 - w0)
                    dd, r = d0 + i // hw, i % hw
                    idxs.append((dd * h + h0 + r // (w1 - w0)) * w + w0 + r % (w1 - w0))
                    vals.append(v)
        return stack(vals, -1).reshape(n, c, od, oh, ow), stack(idxs, -1).reshape(n, c, od, oh, ow)
    if input.ndim == 4:
        v, i = f(input.unsqueeze(0))
        return v.squeeze(0), i.squeeze(0)
    if input.ndim != 5:
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    return f(input)


def _fractional_starts(sample, in_size, out_size, pool):
    """Window starts of fractional max pooling along one dim, as ATen's generate_intervals (arithmetic in the
    samples' dtype): int((i + u) * alpha) - int(u * alpha) for i < out - 1, alpha = (in - pool) / (out - 1),
    and in - pool for the last window."""
    import numpy as np
    u = np.asarray(sample)
    dt = u.dtype.type
    out = np.empty(u.shape + (out_size,), np.int64)
    if out_size > 1:
        alpha = dt(in_size - pool) / dt(out_size - 1)
        i = np.arange(out_size - 1, dtype=u.dtype)
        out[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)[..., None]
    out[..., -1] = in_size - pool
    return out


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, nd):
    import numpy as np
    from .._ops.creation import rand, tensor
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    sizes = tuple(input.shape[-nd:])
    if output_size is None:
        ratio = _pair(output_ratio, nd)
        output_size = [int(s * r) for s, r in zip(sizes, ratio)]
    k, osz = _pair(kernel_size, nd), _pair(output_size, nd)
    dim_names = ("time", "height", "width")[3 - nd:]
    for d, (n_in, n_out, kk) in enumerate(zip(sizes, osz, k)):
        if n_out + kk - 1 > n_in:
            raise RuntimeError(f"{name}(): pool {dim_names[d]} {kk} too large relative to input {dim_names[d]} {n_in}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    n, c = x.shape[:2]
    if _random_samples is None:
        _random_samples = rand(n, c, nd, dtype=x.dtype, device=x.device)
    u = _random_samples.detach().cpu().numpy()
    # ATen pairs the samples with the dims as (W, H) in 2-D and (T, H, W) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_fractional_starts(u[..., order[d]], sizes[d], osz[d], k[d]) for d in range(nd)]  # (N, C, out_d)
    # the flat input index of every element of every window: (N, C, *out, *k)
    strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
    flat = np.zeros((n, c) + tuple(osz) + tuple(k), np.int64)
    for d in range(nd):
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d] = osz[d]
        off = [1] * (2 + 2 * nd)
        off[2 + nd + d] = k[d]
        flat += (starts[d].reshape(shape) + np.arange(k[d]).reshape(off)) * strides[d]
    idx = tensor(flat.reshape(n, c, -1), device=x.device)
    windows = x.reshape(n, c, -1).gather(2, idx).reshape((n, c) + tuple(osz) + (int(np.prod(k)),))
    vals, arg = windows.max(-1)  # the first maximum, NaN winning, as ATen's scan
    inds = idx.reshape((n, c) + tuple(osz) + (int(np.prod(k)),)).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        vals, inds = vals.squeeze(0), inds.squeeze(0)
    return vals, inds


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling (Graham, "Fractional Max-Pooling", 2014) over (N, C, H, W) or (C, H, W)
    (``torch.nn.functional.fractional_max_pool2d``): kernel_size windows at pseudo-random, overlapping starts
    chosen from ``_random_samples`` (N, C, 2) in [0, 1) (drawn with ``rand`` when None), giving
    ``output_size`` or int(size * ``output_ratio``) outputs. With ``return_indices`` also the flat h * W + w
    index of each maximum. ValueError without output_size and output_ratio; RuntimeError when a window would
    not fit."""
    vals, inds = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return (vals, inds) if return_indices else vals


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of ``fractional_max_pool2d``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W) with ``_random_samples`` (N, C, 3)
    (``torch.nn.functional.fractional_max_pool3d``); see ``fractional_max_pool2d``. Indices are flat
    t * H * W + h * W + w."""
    vals, inds = _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return (vals, inds) if return_indices else vals


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of ``fractional_max_pool3d``."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def _fold_pairs(op, **args):
    """The (height, width) pairs of unfold / fold arguments, as PyTorch's parser takes them: TypeError for a
    non-int element, RuntimeError for a sequence of another length than 2."""
    out = []
    for arg, v in args.items():
        t = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
        for i, e in enumerate(t):
            if isinstance(e, (bool, float)) or not hasattr(type(e), "__index__"):
                raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found element of type "
                                f"{type(e).__name__} at pos {i}")
        if len(t) != 2:
            raise RuntimeError(f"It is expected {arg} equals to 2, but got size {len(t)}")
        out.append(tuple(int(e) for e in t))
    return out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: sliding blocks of (N, C, H, W) or unbatched (C, H, W) as (N, C*kh*kw, L) or (C*kh*kw, L)
    (``torch.nn.functional.unfold``). Checked as PyTorch: RuntimeError for kernel_size / dilation / stride <= 0,
    padding < 0, a 5-D input or an empty non-batch dim, no complete block; IndexError below 3 dims;
    NotImplementedError for an integer input."""
    k, d, p, st = _fold_pairs("im2col", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got {input.ndim})")
    _nnops._check_window(k, d, p, st)
    if input.ndim > 4 or 0 in input._shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input._shape)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if input.ndim == 3:
        return unfold2d(input.unsqueeze(0), k, d, p, st).squeeze(0)
    return unfold2d(input, k, d, p, st)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: (N, C*kh*kw, L) or unbatched (C*kh*kw, L) -> (N, C, H, W) or (C, H, W), overlapping values
    summed (``torch.nn.functional.fold``). Checked as PyTorch: RuntimeError for kernel_size / dilation /
    stride <= 0, padding < 0, other ranks or empty non-batch dims, a channel count not divisible by
    kh*kw, an L other than the number of blocks ``output_size`` holds; NotImplementedError for integers."""
    o, k, d, p, st = _fold_pairs("col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                                 padding=padding, stride=stride)
    _nnops._check_window(k, d, p, st)
    if input.ndim not in (2, 3) or 0 in input._shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input._shape)}")
    c, L = input._shape[-2:]
    if c % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={c} and kernel_size={k}.")
    bh, bw = _nnops._out_hw(o[0], o[1], k, d, p, st)
    if bh * bw != L or bh < 1 or bw < 1:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={st}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{bh} * {bw} = {bh * bw}, but got input.size(2)={L}.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"col2im_out_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if input.ndim == 2:
        return fold2d(input.unsqueeze(0), o, k, d, p, st).squeeze(0)
    return fold2d(input, o, k, d, p, st)


# ---- pooling ---------------------------------------------------------------------------------------------
def _pool_check(name, nd, kernel_size, stride, padding, dilation=1):
    """PyTorch's checks of a pooling window over ``nd`` dims, made before anything is computed: RuntimeError
    for a zero stride, a kernel size <= 0, a negative stride or padding, a dilation <= 0 (TypeError /
    RuntimeError for non-int elements / a wrong length, as for convolutions)."""
    k = _int_tuple(name, "kernel_size", kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not len(stride)) else \
        _int_tuple(name, "stride", stride, nd)
    p = _int_tuple(name, "padding", padding, nd)
    d = _int_tuple(name, "dilation", dilation, nd)
    labels = ("T", "H", "W")[3 - max(nd, 2):]
    full = lambda t: (1,) * (len(labels) - nd) + t  # noqa: E731  (1-D pools are 2-D ones with a unit height)
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if any(v <= 0 for v in k):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{a}: {v}" for a, v in zip(labels, full(k))))
    if any(v < 0 for v in s):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{a}: {v}" for a, v in zip(labels, full(s))))
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{a}: {v}" for a, v in zip(labels, full(d))))
    return k, s, p, d


def _pool_windows(input, kernel_size, stride, padding, dilation, fill):
    """(N, C, H, W) -> windows (N, C, oh, ow, kh*kw), padding filled with ``fill``.

    Non-overlapping windows (stride == kernel, no padding or dilation) are a reshape/permute view;
    others go through im2col (``unfold2d``).
    """
    k = _pair(kernel_size)
    s = _pair(stride if stride is not None and stride != [] else kernel_size)
    p = _pair(padding)
    d = _pair(dilation)
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[0]}, kernel_size="
                           f"{k[0]} and dilation={d[0]}")
    n, c, h, w = input._shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")
    if k == s and p == (0, 0) and d == (1, 1):
        x = input[:, :, :oh * k[0], :ow * k[1]].reshape(n, c, oh, k[0], ow, k[1])
        return x.permute(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, k[0] * k[1])
    if p != (0, 0):
        input = _pad(input, (p[1], p[1], p[0], p[0]), value=fill)
    cols = im2col(input.reshape(n * c, 1, h + 2 * p[0], w + 2 * p[1]), k, d, (0, 0), s)  # (kk, N*C, L)
    return cols.reshape(k[0] * k[1], n, c, oh, ow).permute(1, 2, 3, 4, 0)


def _batched(fn, input, nd):
    if input.ndim == nd + 1:
        return fn(input.unsqueeze(0)).squeeze(0)
    return fn(input)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W) (``torch.nn.functional.max_pool2d``).

    Returns the pooled tensor, and with ``return_indices`` also the flat ``h * W + w`` index of each maximum.
    The gradient goes to the element that won each window (a NaN wins), as in PyTorch.
    """
    from .._ops.nn import max_pool2d_with_indices
    k, s, padding, dilation = _pool_check("max_pool2d", 2, kernel_size, stride, padding, dilation)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"max_pool2d: Expected 3D or 4D tensor, but got {list(input._shape)}")
    x = input.unsqueeze(0) if input.ndim == 3 else input
    out, idx = max_pool2d_with_indices(x, k, s, _pair(padding), _pair(dilation), ceil_mode)
    if input.ndim == 3:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L) (``torch.nn.functional.max_pool1d``)."""
    (k,), (st,), (p,), (d,) = _pool_check("max_pool1d", 1, kernel_size, stride, padding, dilation)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input._shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{_scalar_name(input.dtype)}'")
    r = max_pool2d(input.unsqueeze(-2), (1, k), (1, st), (0, p), (1, d), ceil_mode, return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.functional.max_pool3d``).

    The max over each depth tap is a 2-D max pool; the taps are then compared and the winner gathered, so the
    gradient goes to one element per window and ``return_indices`` gives PyTorch's flat d*H*W + h*W + w index.
    """
    from .._ops.creation import arange
    from .._ops.nn import max_pool2d_with_indices, pool_out_size
    from .._ops.shape import stack
    _pool_check("max_pool3d", 3, kernel_size, stride, padding, dilation)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"max_pool3d: Expected 4D or 5D tensor, but got {list(input._shape)}")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    k = _pair(kernel_size, 3)
    s = _pair(stride if stride is not None and stride != [] else kernel_size, 3)
    p, d = _pair(padding, 3), _pair(dilation, 3)
    if any(pi * 2 > ki for pi, ki in zip(p, k)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[0]}, kernel_size="
                           f"{k[0]} and dilation={d[0]}")
    n, c, dd, h, w = x._shape
    od = pool_out_size(dd, k[0], s[0], p[0], d[0], ceil_mode)
    if od <= 0:
        raise RuntimeError(f"Given input size: ({c}x{dd}x{h}x{w}). Calculated output size is too small")
    need = (od - 1) * s[0] + d[0] * (k[0] - 1) + 1
    hi = max(0, need - dd - p[0])
    if p[0] or hi:
        x = _pad(x, (0, 0, 0, 0, p[0], hi), value=-math.inf)
    vals, idxs = [], []
    for i in range(k[0]):
        xs = x[:, :, i * d[0]:i * d[0] + s[0] * (od - 1) + 1:s[0]].reshape(n, c * od, h, w)
        v, ix = max_pool2d_with_indices(xs, k[1:], s[1:], p[1:], d[1:], ceil_mode)
        depth = arange(od, device=x.device) * s[0] + (i * d[0] - p[0])
        vals.append(v)
        idxs.append(ix.reshape((n, c, od) + ix._shape[2:]) + depth.reshape(od, 1, 1) * (h * w))
    v = stack(vals, 0)
    win = v.argmax(0, keepdim=True)
    out = v.gather(0, win).squeeze(0)
    out = out.reshape((n, c, od) + out._shape[2:])
    if input.ndim == 4:
        out = out.squeeze(0)
    if not return_indices:
        return out
    idx = stack(idxs, 0).reshape(v._shape).gather(0, win).squeeze(0).reshape(out._shape if input.ndim == 5 else
                                                                              (n,) + out._shape)
    return out, (idx.squeeze(0) if input.ndim == 4 else idx)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling (``torch.nn.functional.avg_pool2d``).

    With ``ceil_mode`` the last windows may run past the padded input; as in PyTorch they divide by the part
    of the window inside input + padding (``count_include_pad``) or inside the input alone.
    RuntimeError for a bad window (``_pool_check``).
    """
    _pool_check("avg_pool2d", 2, kernel_size, stride, padding)
    if input.ndim < 3:  # PyTorch reads size(-3) first
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)")
    if input.ndim > 4 or 0 in input._shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{list(input._shape)}")
    if ceil_mode:
        return _batched(lambda x: _avg_pool2d_ceil(x, kernel_size, stride, padding, count_include_pad,
                                                   divisor_override), input, 2)

    def f(x):
        win = _pool_windows(x, kernel_size, stride, padding, 1, 0.0)
        if divisor_override:
            return win.sum(-1) / divisor_override
        if count_include_pad or _pair(padding) == (0, 0):
            return win.mean(-1)
        ones_ = ones((1, 1) + x._shape[2:], dtype=x.dtype, device=x.device)
        cnt = _pool_windows(ones_, kernel_size, stride, padding, 1, 0.0).sum(-1)
        return win.sum(-1) / cnt
    return _batched(f, input, 2)


def _avg_pool2d_ceil(x, kernel_size, stride, padding, count_include_pad, divisor_override):
    import numpy as np
    from .._ops.creation import _from_host
    from .._ops.nn import pool_geometry
    k = _pair(kernel_size)
    s = _pair(stride if stride is not None and stride != [] else kernel_size)
    p = _pair(padding)
    n, c, h, w = x._shape
    oh, ow, eh, ew = pool_geometry(h, w, k, s, p, (1, 1), True)
    xp = _pad(x, (p[1], p[1] + ew, p[0], p[0] + eh))
    total = _pool_windows(xp, k, s, 0, 1, 0.0).sum(-1)
    if divisor_override:
        return total / divisor_override

    def counts(size, kk, ss, pp, o):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, size + pp)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, size)
        return end - start
    div = np.outer(counts(h, k[0], s[0], p[0], oh), counts(w, k[1], s[1], p[1], ow))
    return total / _from_host(div.astype(x.dtype.np), x.dtype, x.device)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    (k,), (st,), (p,), _ = _pool_check("avg_pool1d", 1, kernel_size, stride, padding)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    return _batched(lambda x: avg_pool2d(x.unsqueeze(2), (1, k), (1, st), (0, p), ceil_mode,
                                         count_include_pad).squeeze(2), input, 1)


def _adaptive_bounds(n_in, n_out):
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_args(name, input, output_size, nd, kind):
    """The output sizes of an adaptive ``kind`` ('avg' / 'max') pooling over the last ``nd`` dims, after
    PyTorch's checks, all made before anything is computed or allocated: RuntimeError for the wrong rank, an
    ``output_size`` of the wrong length or with a negative element, an empty non-batch dim (for 'avg' only
    the pooled dims count), an output whose size overflows or cannot be allocated; TypeError for a non-int
    element; NotImplementedError for a non-floating input. None keeps the input's size; 0 is an empty output."""
    import operator
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {name})")
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input._shape)}")
    if isinstance(output_size, (tuple, list)):
        sizes = tuple(output_size)
        if len(sizes) != nd:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(sizes)})" if nd == 1
                               else f"{name}: output_size must be {nd}")
    else:
        sizes = (output_size,) * nd
    out = []
    for i, (o, n) in enumerate(zip(sizes, input._shape[-nd:])):
        if o is None:
            out.append(n)
            continue
        if isinstance(o, bool) or isinstance(o, float):
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(o).__name__} at pos {i}")
        try:
            out.append(operator.index(o))
        except TypeError:
            raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, but found element "
                            f"of type {type(o).__name__} at pos {i}") from None
    if any(o < 0 for o in out):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    first = input.ndim - nd if kind == "avg" else input.ndim - nd - 1
    for d in range(max(first, input.ndim - nd - 1), input.ndim):
        if input._shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input._shape)} with dimension {d} being empty")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(input.dtype)}'")
    shape = tuple(input._shape[:-nd]) + tuple(out)
    numel = math.prod(shape)
    if numel > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if numel > 2 ** 24:
        # a big output is allocated now, before windows are visited one by one: one too big for memory fails
        # here at once, as PyTorch's allocation does, instead of after a long loop
        try:
            empty(shape, dtype=input.dtype, device=input.device)
        except MemoryError:
            raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                               f"{numel * input.dtype.itemsize} bytes.") from None
    return tuple(out)


def _adaptive_empty(input, sizes, with_indices):
    """The result of an adaptive pooling with no element: values still connected to input's graph."""
    shape = tuple(input._shape[:input.ndim - len(sizes)]) + tuple(sizes)
    vals = input.reshape(-1)[:0].reshape(shape)
    return (vals, zeros(shape, dtype=_dt.int64, device=input.device)) if with_indices else vals


def _adaptive_pool2d(input, output_size, reduce):
    from .._ops.shape import stack

    def f(x):
        n, c, h, w = x._shape
        oh, ow = output_size  # checked by the caller: ints, None resolved
        if h % oh == 0 and w % ow == 0:
            win = x.reshape(n, c, oh, h // oh, ow, w // ow)
            return reduce(reduce(win, 5), 3)
        rows = []
        for (h0, h1) in _adaptive_bounds(h, oh):
            cols = [reduce(reduce(x[:, :, h0:h1, w0:w1], 3), 2) for (w0, w1) in _adaptive_bounds(w, ow)]
            rows.append(stack(cols, -1))
        return stack(rows, -2)
    return _batched(f, input, 2)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) to a fixed ``output_size`` (int or pair; None keeps a size,
    0 gives an empty output), with PyTorch's start/end index rule (``F.adaptive_avg_pool2d``). Errors as
    PyTorch's, raised before any work: see ``_adaptive_args``."""
    sizes = _adaptive_args("adaptive_avg_pool2d", input, output_size, 2, "avg")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    return _adaptive_pool2d(input, sizes, lambda t, d: t.mean(d))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed ``output_size`` over (N, C, H, W) or (C, H, W); with ``return_indices`` also
    the flat ``h * W + w`` index of each maximum (``torch.nn.functional.adaptive_max_pool2d``). Errors as
    PyTorch's, raised before any work: see ``_adaptive_args``."""
    sizes = _adaptive_args("adaptive_max_pool2d", input, output_size, 2, "max")
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, sizes)
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    return _adaptive_pool2d(input, sizes, lambda t, d: t.amax(d))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """(values, flat h * W + w indices) of adaptive max pooling; the gradient goes to each window's maximum."""
    from .._ops.shape import stack

    sizes = _adaptive_args("adaptive_max_pool2d", input, output_size, 2, "max")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, True)

    def f(x):
        n, c, h, w = x._shape
        oh, ow = sizes
        vals, idxs = [], []
        for (h0, h1) in _adaptive_bounds(h, oh):
            for (w0, w1) in _adaptive_bounds(w, ow):
                v, i = x[:, :, h0:h1, w0:w1].reshape(n, c, -1).max(-1)
                vals.append(v)
                idxs.append((h0 + i // (w1 - w0)) * w + w0 + i % (w1 - w0))
        return stack(vals, -1).reshape(n, c, oh, ow), stack(idxs, -1).reshape(n, c, oh, ow)
    if input.ndim == 3:
        v, i = f(input.unsqueeze(0))
        return v.squeeze(0), i.squeeze(0)
    return f(input)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling over (N, C, L) or (C, L) (``torch.nn.functional.adaptive_max_pool1d``)."""
    (o,) = _adaptive_args("adaptive_max_pool1d", input, output_size, 1, "max")
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, o)
    return _batched(lambda x: adaptive_max_pool2d(x.unsqueeze(2), (1, o)).squeeze(2), input, 1)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """(values, indices along L) of 1-D adaptive max pooling."""
    (o,) = _adaptive_args("adaptive_max_pool1d", input, output_size, 1, "max")
    x = input.unsqueeze(-2)
    v, i = adaptive_max_pool2d_with_indices(x, (1, o))
    return v.squeeze(-2), i.squeeze(-2)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, n, name):
    k = _pair(kernel_size, n)
    st = k if stride is None else _pair(stride, n)
    pd = _pair(padding, n)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}: expected a {n + 1}D or {n + 2}D input, but got input of size: "
                           f"{list(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    spatial_in = input._shape[-n:]
    default = [(spatial_in[d] - 1) * st[d] + k[d] - 2 * pd[d] for d in range(n)]
    if output_size is None:
        out = default
    else:
        out = list(output_size)
        if len(out) == n + 2:
            out = out[2:]
        if len(out) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(out)}'")
        for d in range(n):
            lo, hi = default[d] - st[d], default[d] + st[d]
            if not lo < out[d] < hi:
                raise ValueError(f'invalid output_size "{out}" (dim {d} must be between {lo} and {hi})')
    lead = input._shape[:-n]
    flat_in = input.reshape(lead + (-1,))
    flat_idx = indices.reshape(lead + (-1,))
    size = math.prod(out)
    if flat_idx.numel() and (flat_idx.min().item() < 0 or flat_idx.max().item() >= size):
        raise RuntimeError(f"{name}: found an invalid max index {flat_idx.max().item()} (output volumes are of "
                           f"size {'x'.join(map(str, out))})")
    res = zeros(lead + (size,), dtype=input.dtype, device=input.device).scatter(-1, flat_idx, flat_in)
    return res.reshape(lead + tuple(out))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool1d``: the values of ``input`` (N, C, L) or (C, L) written at the positions
    ``indices`` (from ``max_pool1d(..., return_indices=True)``) of a zero output (``F.max_unpool1d``)."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool2d`` (``F.max_unpool2d``): input and indices (N, C, H, W) or (C, H, W) ->
    zeros of the unpooled size with the values scattered to ``indices``. ValueError for an output_size out
    of range, RuntimeError for an index outside the output."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool3d`` (``F.max_unpool3d``), as ``max_unpool2d`` with three spatial dims."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool1d(..., return_indices=True)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool2d(..., return_indices=True)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """``max_pool3d(..., return_indices=True)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling ``(sum over the window of x^p)^(1/p)`` over (N, C, L) (``F.lp_pool1d``)."""
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, H, W) (``F.lp_pool2d``)."""
    kh, kw = _pair(kernel_size)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def _window_sum3d(xp, k, s, out):
    """Sums over k-windows with stride s of an already padded (N, C, D, H, W) tensor: each depth tap is a
    2-D window sum (avg_pool2d with divisor 1) of a strided depth slice."""
    n, c = xp._shape[:2]
    total = 0
    for i in range(k[0]):
        xs = xp[:, :, i:i + s[0] * (out[0] - 1) + 1:s[0]]
        xs = xs.reshape((n, c * out[0]) + xs._shape[3:])
        total = total + avg_pool2d(xs, k[1:], s[1:], 0, False, True, 1)
    return total.reshape((n, c) + tuple(out))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) (``torch.nn.functional.avg_pool3d``).

    Windows are summed as depth taps of 2-D window sums; the divisor follows PyTorch: the window volume,
    or with ``ceil_mode`` / ``count_include_pad=False`` the part of the window inside input + padding /
    inside the input, or ``divisor_override``. RuntimeError for a padding above half the kernel.
    """
    from .._ops.nn import pool_out_size
    _pool_check("avg_pool3d", 3, kernel_size, stride, padding)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"avg_pool3d: Expected 4D or 5D tensor, but got {list(input._shape)}")
    x = input.unsqueeze(0) if input.ndim == 4 else input
    k = _pair(kernel_size, 3)
    s = _pair(stride if stride is not None and stride != [] else kernel_size, 3)
    p = _pair(padding, 3)
    if any(pi * 2 > ki for pi, ki in zip(p, k)):
        raise RuntimeError("pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and "
                           "dilation=1".format(p[0], k[0]))
    sizes = x._shape[2:]
    out = [pool_out_size(sz, kk, ss, pp, 1, ceil_mode) for sz, kk, ss, pp in zip(sizes, k, s, p)]
    if min(out) <= 0:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, x._shape[1:]))}). Calculated output size is too "
                           "small")
    extra = [max(0, (o - 1) * ss + kk - (sz + 2 * pp)) for o, ss, kk, sz, pp in zip(out, s, k, sizes, p)]
    pads = []
    for pp, e in zip(reversed(p), reversed(extra)):
        pads += [pp, pp + e]
    total = _window_sum3d(_pad(x, tuple(pads)), k, s, out)
    if divisor_override:
        res = total / divisor_override
    elif count_include_pad and not any(extra):
        res = total / (k[0] * k[1] * k[2])
    else:
        # how many elements of each window lie inside input + padding (or inside the input alone)
        inner = ones((1, 1) + tuple(sizes), dtype=x.dtype, device=x.device)
        if count_include_pad:
            inner = _pad(inner, tuple(q for pp in reversed(p) for q in (pp, pp)), value=1.0)
            pads_c = [q for pp, e in zip(reversed(p), reversed(extra)) for q in (0, e)]
        else:
            pads_c = pads
        cnt = _window_sum3d(_pad(inner, tuple(pads_c)), k, s, out)
        res = total / cnt
    return res.squeeze(0) if input.ndim == 4 else res


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size`` (int or triple; None keeps a
    size), with PyTorch's start/end index rule (``F.adaptive_avg_pool3d``). Box means are separable: the
    (H, W) pooling is adaptive_avg_pool2d, then D is pooled the same way."""
    od, oh, ow = sizes = _adaptive_args("adaptive_avg_pool3d", input, output_size, 3, "avg")
    if 0 in sizes or input.numel() == 0:
        return _adaptive_empty(input, sizes, False)
    x = input.unsqueeze(0) if input.ndim == 4 else input
    n, c, d, h, w = x._shape
    y = adaptive_avg_pool2d(x.reshape(n, c * d, h, w), (oh, ow)).reshape(n, c, d, oh * ow)
    y = adaptive_avg_pool2d(y, (od, oh * ow)).reshape(n, c, od, oh, ow)
    return y.squeeze(0) if input.ndim == 4 else y


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling over (N, C, D, H, W) (``F.lp_pool3d``)."""
    kd, kh, kw = _pair(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (_pw.sign(out) * relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling over (N, C, L) or (C, L) (``torch.nn.functional.adaptive_avg_pool1d``)."""
    (o,) = _adaptive_args("adaptive_avg_pool1d", input, output_size, 1, "avg")
    return _batched(lambda x: adaptive_avg_pool2d(x.unsqueeze(2), (1, o)).squeeze(2), input, 1)


# ---- normalization -------------------------------------------------------------------------------------------
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
    if training:
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        if running_mean is not None and n > 1:
            from ..autograd.grad_mode import no_grad
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
    from .._ops.nn import native_layer_norm
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
            from ..autograd.grad_mode import no_grad
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
    """``input / max(||input||_p over dim, eps)`` (``torch.nn.functional.normalize``); written into ``out``
    when given."""
    res = input / _pw.clamp(input.norm(p, dim, keepdim=True), min=eps)
    if out is None:
        return res
    return out.copy_(res)


# ---- resampling --------------------------------------------------------------------------------------------
_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}


def _aa_filter(mode):
    import numpy as np
    if mode == "bilinear":
        return lambda x: np.maximum(0.0, 1.0 - np.abs(x))
    if mode == "bicubic":  # Keys' cubic with a = -0.5, as PIL's antialiased bicubic (torch's non-aa one uses -0.75)
        def cubic(x, a=-0.5):
            x = np.abs(x)
            return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                            np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
        return cubic
    # Lanczos-3: sinc(x) sinc(x / 3) on |x| < 3 (np.sinc is the normalized sinc)
    return lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)


def _aa_weights(n_in, n_out, scale, mode):
    """(n_out, n_in) resampling matrix of antialiased interpolation (PIL's convolution resize, as torch's
    ``_upsample_*_aa`` kernels): when downscaling by ``scale`` the filter is stretched by it, so every input
    pixel contributes; each row is normalized to sum 1."""
    import numpy as np
    filt = _aa_filter(mode)
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * (scale if scale >= 1.0 else 1.0)
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        taps = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = taps.sum()
        w[i, lo:hi] = taps / total if total != 0 else taps
    return w


def _source_taps(n_in, n_out, scale, mode, align_corners):
    """Source indices (taps, n_out) int64 and weights (taps, n_out) float64 of one resampled dim,
    with PyTorch's coordinate mapping (``area_pixel_compute_source_index``)."""
    import numpy as np
    dst = np.arange(n_out, dtype=np.float64)
    if mode == "nearest":
        return np.minimum(np.floor(dst * scale), n_in - 1).astype(np.int64)[None], np.ones((1, n_out))
    if mode == "nearest-exact":
        return np.minimum(np.floor((dst + 0.5) * scale), n_in - 1).astype(np.int64)[None], np.ones((1, n_out))
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = (dst + 0.5) * scale - 0.5
        if mode != "bicubic":
            src = np.maximum(src, 0.0)
    i0 = np.floor(src)
    t = src - i0
    i0 = i0.astype(np.int64)
    if mode == "bicubic":
        a = -0.75  # Keys' cubic convolution kernel, as PyTorch

        def near(x):
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def far(x):
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        w = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)])
        idx = np.clip(np.stack([i0 - 1, i0, i0 + 1, i0 + 2]), 0, n_in - 1)
        return idx, w
    return np.stack([i0, np.minimum(i0 + 1, n_in - 1)]), np.stack([1 - t, t])


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, *spatial) to ``size`` or ``scale_factor`` times their size
    (``torch.nn.functional.interpolate``).

    mode: 'nearest', 'nearest-exact', 'linear' (3-D input), 'bilinear' / 'bicubic' (4-D), 'trilinear' (5-D),
    'area' (adaptive average pooling), 'lanczos' (4-D, antialias only). Separable: each dim is a weighted sum
    of ``index_select`` taps, so the gradient comes from index_select's. ``antialias=True`` (bilinear, bicubic,
    lanczos on 4-D input) resamples with PIL's filters widened by the downscale factor, as torch: one
    (out, in) weight matrix per dim, applied by matmul. ValueError / NotImplementedError as PyTorch for bad
    combinations.
    """
    from .._ops.creation import _from_host
    import numpy as np
    nd = input.ndim - 2
    if nd < 1 or nd > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _INTERP_DIMS:
        if _INTERP_DIMS[mode] != nd:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D "
                                      "input")
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    in_sizes = input._shape[2:]
    if size is not None:
        out_sizes = _pair(size, nd)
        if len(out_sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and output size of {list(out_sizes)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        scales = [i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out_sizes)]  # o <= 0 is refused below
    else:
        factors = _pair(scale_factor, nd)
        if len(factors) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {list(in_sizes)} and scale_factor of shape "
                             f"{list(factors)}.")
        if mode != "area" and not all(math.isfinite(f) for f in factors):
            # ATen converts the output size to int64; area mode converts in Python (ValueError / OverflowError)
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        out_sizes = tuple(int(math.floor(i * f)) for i, f in zip(in_sizes, factors))
        scales = ([i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out_sizes)] if recompute_scale_factor
                  else [1.0 / f if f else 0.0 for f in factors])
    uint8_bilinear = mode == "bilinear" and input.dtype is _dt.uint8 and not antialias
    if not input.dtype.is_floating_point and not uint8_bilinear:
        raise NotImplementedError(f"\"upsample_{mode}{nd}d\" not implemented for '{_scalar_name(input.dtype)}'")
    if mode != "area" and (min(out_sizes) <= 0 or min(in_sizes) <= 0):
        # (area is adaptive average pooling, which takes an empty output)
        dims = ("D", "H", "W")[3 - nd:]
        ins, outs = (", ".join(f"{a}: {v}" for a, v in zip(dims, sz)) for sz in (in_sizes, out_sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins})"
                           f"{' and' if nd == 1 else ''} output ({outs})")
    if mode == "area":
        from .._ops.shape import stack  # noqa: F401
        if nd == 1:
            return adaptive_avg_pool1d(input, out_sizes[0])
        if nd == 2:
            return adaptive_avg_pool2d(input, out_sizes)
        raise NotImplementedError("interpolate(mode='area') on 5-D input is not supported by tinytorch")
    if uint8_bilinear:
        return _bilinear_uint8(input, in_sizes, out_sizes, scales, align_corners)
    out = input
    if antialias:
        # separable: (OH, H) on the rows, then (OW, W) on the columns, as two matmuls (gradients from matmul's)
        for k in range(2):
            n_in, n_out = in_sizes[k], out_sizes[k]
            scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align_corners else scales[k]
            w = _from_host(_aa_weights(n_in, n_out, scale, mode).astype(input.dtype.np), input.dtype, input.device)
            out = w.matmul(out) if k == 0 else out.matmul(w.t())
        return out
    for k in range(nd):
        d = 2 + k
        idx, w = _source_taps(in_sizes[k], out_sizes[k], scales[k], mode, align_corners)
        shape = [1] * input.ndim
        shape[d] = out_sizes[k]
        acc = None
        for tap in range(idx.shape[0]):
            part = out.index_select(d, _from_host(np.ascontiguousarray(idx[tap]), _dt.int64, input.device))
            if mode not in ("nearest", "nearest-exact"):
                wt = _from_host(np.ascontiguousarray(w[tap], dtype=input.dtype.np), input.dtype, input.device)
                part = part * wt.reshape(shape)
            acc = part if acc is None else acc + part
        out = acc
    return out


def _bilinear_uint8(input, in_sizes, out_sizes, scales, align_corners):
    """ATen's uint8 bilinear resize (its separable fixed-point kernel): per output pixel the triangle-filter
    weights of the taps, normalized, as int16 fixed point with the most precision bits that keep the largest
    weight below 2**15; a pass over the width, rounded and clamped to uint8, then one over the height (a pass
    is skipped where the size is unchanged). Integer arithmetic, so the values equal PyTorch's exactly."""
    import numpy as np
    from .._ops.creation import _from_host
    out = input
    for k in (1, 0):
        n_in, n_out = in_sizes[k], out_sizes[k]
        if n_in == n_out:
            continue
        scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align_corners else scales[k]
        delta = 0.5 if align_corners else 0.0
        rows = []
        for i in range(n_out):
            center = scale * (i + 0.5 - delta) + delta
            lo, hi = max(int(center - 1.0 + 0.5), 0), min(int(center + 1.0 + 0.5), n_in)
            w = np.array([max(0.0, 1.0 - abs(j + lo - center + 0.5)) for j in range(hi - lo)])
            rows.append((lo, w / w.sum() if w.sum() else w))
        top = max(w.max() for _, w in rows if w.size)
        prec = 0
        while prec < 22 and int(0.5 + top * (1 << (prec + 1))) < (1 << 15):
            prec += 1
        taps = max(w.size for _, w in rows)
        idx = np.zeros((taps, n_out), np.int64)
        wq = np.zeros((taps, n_out), np.int64)
        for i, (lo, w) in enumerate(rows):
            idx[:w.size, i] = np.arange(lo, lo + w.size)
            wq[:w.size, i] = np.floor(0.5 + w * (1 << prec))  # the weights are >= 0
        d = 2 + k
        shape = [1] * input.ndim
        shape[d] = n_out
        x = out.long()
        acc = None
        for t in range(taps):
            part = x.index_select(d, _from_host(idx[t], _dt.int64, input.device)) * \
                _from_host(wq[t], _dt.int64, input.device).reshape(shape)
            acc = part if acc is None else acc + part
        out = _pw.clamp((acc + (1 << (prec - 1))) // (1 << prec), 0, 255).to(_dt.uint8)
    return out if out is not input else input.clone()


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def _base_coords(n, align_corners, like):
    """``n`` sample positions in [-1, 1] (PyTorch's linspace_from_neg_one): pixel corners with
    ``align_corners``, pixel centers without."""
    from .._ops.creation import linspace, zeros
    if n <= 1:
        return zeros(1, dtype=like.dtype, device=like.device)
    r = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid of an affine transform, for ``grid_sample`` (spatial transformer networks, Jaderberg et
    al. 2015; ``torch.nn.functional.affine_grid``).

    theta: (N, 2, 3) for a 4-D ``size`` (N, C, H, W) -> grid (N, H, W, 2); or (N, 3, 4) for a 5-D size
    (N, C, D, H, W) -> grid (N, D, H, W, 3). Each grid point is theta applied to the normalized (x, y[, z], 1)
    output coordinates. ValueError for a non-float theta or shapes that do not match, NotImplementedError
    for other sizes.
    """
    import warnings
    from .._ops.creation import ones
    from .._ops.shape import stack
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    axes = [_base_coords(k, align_corners, theta) for k in reversed(spatial)]  # x (width) first
    full = tuple(spatial)
    dims = len(spatial)
    coords = []
    for i, a in enumerate(axes):  # axis i varies along spatial dim (dims - 1 - i)
        shape = [1] * dims
        shape[dims - 1 - i] = a.shape[0]
        coords.append(a.reshape(shape).expand(full))
    coords.append(ones(full, dtype=theta.dtype, device=theta.device))
    base = stack(coords, -1).reshape(1, -1, dims + 1).expand(n, -1, -1)
    return base.matmul(theta.transpose(1, 2)).reshape([n] + list(full) + [dims])


def _reflect(coord, twice_low, twice_high):
    """Reflect coordinates into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return coord * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = _pw.fmod(c, span)
    flips = _pw.floor(c / span)
    return _pw.where(_pw.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _unnormalize(coord, size, align_corners):
    """Normalized grid coordinate in [-1, 1] -> pixel coordinate (corners or centers at +-1)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _pad_coord(c, size, padding_mode, align_corners):
    """A pixel coordinate with the padding mode applied ('zeros' leaves it; out-of-range taps then read 0)."""
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def _source_index(coord, size, padding_mode, align_corners):
    """Normalized grid coordinate in [-1, 1] -> pixel coordinate, with the padding mode applied."""
    return _pad_coord(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _cubic_coeffs(t, a=-0.75):
    """The 4 weights of Keys' cubic convolution at fraction ``t`` (taps -1, 0, 1, 2), as torch's bicubic."""
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalized positions of ``grid`` (``torch.nn.functional.grid_sample``).

    input (N, C, H_in, W_in), grid (N, H_out, W_out, 2) holding (x, y) in [-1, 1] -> (N, C, H_out, W_out); or
    volumetric input (N, C, D_in, H_in, W_in), grid (N, D_out, H_out, W_out, 3) holding (x, y, z) ->
    (N, C, D_out, H_out, W_out). mode 'bilinear' (trilinear on 5-D), 'nearest' (round half to even, as
    PyTorch) or 'bicubic' (4-D only; Keys' cubic, a = -0.75, padding applied to each of the 16 taps);
    padding_mode 'zeros', 'border' or 'reflection'. Written in gather and pointwise ops, so it is
    differentiable with respect to ``input`` and (bilinear, bicubic) ``grid``. ValueError for an unknown mode
    or padding mode, RuntimeError for mismatched shapes or bicubic on 5-D input.
    """
    import warnings
    import itertools
    from .._ops.indexing import gather
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    nd = input.ndim - 2
    sizes_msg = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if grid.ndim and grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if nd not in (2, 3) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got {sizes_msg}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes_msg}")
    if mode == "bicubic" and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])[::-1]  # (W, H[, D]): grid's last dim holds x, y[, z]
    out_sp = tuple(grid.shape[1:-1])
    m = math.prod(out_sp)
    strides = [math.prod(sizes[:k]) for k in range(nd)]  # flat offset of a unit step in x, y, z
    flat = input.reshape(n, c, math.prod(sizes))

    def tap(pts):
        # input at integer pixel ``pts`` (x, y[, z]), with a mask that is 0 where it falls outside
        inside = None
        idx = 0
        for p, size, st in zip(pts, sizes, strides):
            ok = (p >= 0) & (p <= size - 1)
            inside = ok if inside is None else inside & ok
            idx = idx + p.clamp(0, size - 1) * st
        idx = idx.long().reshape(n, 1, m).expand(n, c, m)
        return gather(flat, 2, idx).reshape((n, c) + out_sp), inside.unsqueeze(1).to(input.dtype)

    if mode == "bicubic":
        ix, iy = (_unnormalize(grid[..., k], sizes[k], align_corners) for k in range(2))
        x0, y0 = _pw.floor(ix).detach(), _pw.floor(iy).detach()
        cx, cy = _cubic_coeffs((ix - x0).unsqueeze(1)), _cubic_coeffs((iy - y0).unsqueeze(1))
        out = 0
        for j in range(4):
            yy = _pad_coord(y0 + (j - 1), sizes[1], padding_mode, align_corners)
            row = 0
            for i in range(4):
                v, mask = tap((_pad_coord(x0 + (i - 1), sizes[0], padding_mode, align_corners), yy))
                row = row + v * (cx[i] * mask)
            out = out + row * cy[j]
        return out
    src = [_source_index(grid[..., k], sizes[k], padding_mode, align_corners) for k in range(nd)]
    if mode == "nearest":
        v, mask = tap([_pw.round(p).detach() for p in src])
        return v * mask
    lo = [_pw.floor(p).detach() for p in src]
    frac = [(p - q).unsqueeze(1) for p, q in zip(src, lo)]
    out = 0
    for corner in itertools.product((0, 1), repeat=nd):  # bilinear / trilinear: 2**nd corners
        wgt = None
        for bit, t in zip(corner, frac):
            f = t if bit else 1 - t
            wgt = f if wgt is None else wgt * f
        v, mask = tap([q + bit for q, bit in zip(lo, corner)])
        out = out + v * (wgt * mask)
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without building the (bags, length, dim) tensor
    when the bags differ in length (``torch.nn.functional.embedding_bag``).

    input: (B, L) int (each row a bag, ``offsets`` None) or 1-D int with ``offsets`` (B,) int, the start of
    each bag (B + 1 entries with ``include_last_offset``). weight (num_embeddings, dim). Returns (B, dim);
    an empty bag gives zeros. Entries equal to ``padding_idx`` are left out of their bag.
    ``per_sample_weights`` (input's shape) scales each row, only with mode='sum'.
    """
    from .._ops.creation import _from_host
    from .._ops.shape import stack
    import numpy as np
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if input.dtype.is_floating_point:
        raise RuntimeError(f"embedding_bag: expected indices to have an integer type, but got {input.type()}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if per_sample_weights._shape != input._shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights._shape)}) is not None, "
                             f"then it must have the same shape as the input ({list(input._shape)})")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
        b, length = input._shape
        starts = np.arange(b + 1, dtype=np.int64) * length
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.detach().numpy(force=True).astype(np.int64)
        if not include_last_offset:
            starts = np.append(starts, input._shape[0])
        if len(starts) and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > input._shape[0]):
            raise RuntimeError(f"embedding_bag: offsets must start at 0 and be non-decreasing, and the last offset "
                               f"must not exceed the input size {input._shape[0]}, got {starts.tolist()}")
        flat = input
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    nbags = len(starts) - 1
    emb = embedding(flat, weight, None, max_norm, norm_type)  # (M, dim)
    dev = weight.device
    seg = np.repeat(np.arange(nbags, dtype=np.int64), np.diff(starts))
    keep = np.ones(len(seg), bool)
    if padding_idx is not None:
        pidx = padding_idx if padding_idx >= 0 else weight._shape[0] + padding_idx
        keep = flat.detach().numpy(force=True) != pidx
    if mode == "max":
        rows = []
        for i in range(nbags):
            sel = np.nonzero(keep[starts[i]:starts[i + 1]])[0] + starts[i]
            if len(sel):
                rows.append(emb.index_select(0, _from_host(sel, _dt.int64, dev)).max(0)[0])
            else:
                rows.append(zeros(weight._shape[1], dtype=weight.dtype, device=dev))
        return stack(rows, 0) if rows else zeros((0, weight._shape[1]), dtype=weight.dtype, device=dev)
    if per_sample_weights is not None:
        emb = emb * per_sample_weights.unsqueeze(1)
    if not keep.all():
        emb = emb * _from_host(keep.astype(weight.dtype.np).reshape(-1, 1), weight.dtype, dev)
    out = zeros((nbags, weight._shape[1]), dtype=weight.dtype, device=dev).index_add(
        0, _from_host(seg, _dt.int64, dev), emb)
    if mode == "mean":
        count = np.maximum(np.bincount(seg[keep], minlength=nbags), 1).astype(weight.dtype.np)
        out = out / _from_host(count.reshape(-1, 1), weight.dtype, dev)
    return out


# ---- losses ------------------------------------------------------------------------------------------------
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
    d = input - target
    if weight is not None:
        return _weighted(d * d, weight, input, reduction)
    return _reduce(d * d, reduction)


@autocast_op("fp32")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced and weighted as ``mse_loss``."""
    _check_same_size(input, target, "l1_loss")
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction)
    return _reduce((input - target).abs(), reduction)


@autocast_op("fp32")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_same_size(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    loss = _pw.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta) if beta > 0 else d
    return _reduce(loss, reduction)


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
    d = (input - target).abs()
    loss = _pw.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta).to(input.dtype)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, mean_by_weight=False)
    return _reduce(loss, reduction)


@autocast_op("fp32")
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
    from .._ops.nn import nll_loss2d
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
    check_arg("cross_entropy_loss", "ignore_index", 5, ignore_index, "int")
    _check_reduction(reduction)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    if not label_smoothing > 0.0:
        label_smoothing = 0.0
    if input.ndim == 1:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
        squeeze = True
    else:
        squeeze = False
    logp = log_softmax(input, 1)
    c = input._shape[1]
    if target.dtype.is_floating_point:  # probabilities
        if target._shape != input._shape:
            raise RuntimeError(f"Expected target size {list(input._shape)}, got {list(target._shape)}")
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target
        w = weight.reshape((1, -1) + (1,) * (input.ndim - 2)) if weight is not None else 1
        loss = -(logp * t * w).sum(1)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c)
        r = _reduce(loss, reduction)
        return r.squeeze(0) if squeeze and reduction == "none" else r
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
        from .._strides import broadcast_shapes
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
    lp = _pw.clamp(_pw.log(input), min=-100)
    l1p = _pw.clamp(_pw.log(1 - input), min=-100)
    loss = -(target * lp + (1 - target) * l1p)
    if weight is not None:
        loss = (loss * weight).to(input.dtype)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE on logits, computed stably: ``(1-t) x + (1 + (pw-1) t) * softplus(-x)``.

    The loss has ``target``'s dtype, as in ATen (whose in-place steps write into ``1 - target``): float16 /
    bfloat16 targets give float16 / bfloat16 losses even with float32 weights. ValueError when the shapes
    differ; NotImplementedError for integer input, RuntimeError for integer target, as torch."""
    if input._shape != target._shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _check_reduction(reduction)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(target.dtype)}")
    _check_cast(target.dtype, input, target, weight, pos_weight)
    # ATen's steps and roundings: log_sigmoid(x) in one kernel (float32 inside for half input), times
    # 1 + (pw - 1) t in x's dtype, then (1 - t) * x - that, and * weight, each written into t's dtype
    x = input.float() if input.dtype.name in _REDUCED_FLOATS else input
    lsi = (-softplus(-x)).to(input.dtype)
    if pos_weight is not None:
        lsi = (lsi * ((pos_weight - 1) * target + 1)).to(input.dtype)
    loss = ((1 - target) * input).to(target.dtype)
    loss = (loss - lsi).to(target.dtype)
    if weight is not None:
        loss = (loss * weight).to(target.dtype)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    loss = _pw.exp(target) * (target - input) if log_target else _pw.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input._shape[0]
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
    ``swap`` uses min(d(a, n), d(p, n)). Inputs (N, D) or (D,)."""
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _pw.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_pw.clamp(d_pos - d_neg + margin, min=0), reduction)


@autocast_op("fp32")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1.
    Inputs (N, D) or (D,), target (N,) or ()."""
    d = 1 if input1.ndim == 2 else 0
    dot = (input1 * input2).sum(d)
    m1 = (input1 * input1).sum(d) + 1e-12
    m2 = (input2 * input2).sum(d) + 1e-12
    cos = dot / (m1 * m2).sqrt()
    zero = zeros((), dtype=cos.dtype, device=cos.device)
    loss = _pw.where(target == 1, 1 - cos, zero) + _pw.where(target == -1, _pw.clamp(cos - margin, min=0), zero)
    return _reduce(loss, reduction)


@autocast_op("fp32")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term where target > 1."""
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


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim`` of the broadcast inputs
    (``torch.nn.functional.cosine_similarity``), computed as ATen does: each input divided by its own norm in its
    own dtype (so float16 / bfloat16 round as PyTorch's), the norm clamped to ``eps`` without a gradient through
    the clamp. Integer and bool inputs are cast to the common dtype, which must be floating point (RuntimeError
    otherwise, as PyTorch)."""
    from .._ops.lapack import vector_norm
    from .._ops.movement import broadcast_tensors
    common = _dt.result_type_of([x1, x2])
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_scalar_name(common)}")
    x1, x2 = (x.to(common) if not (x.dtype.is_floating_point or x.dtype.is_complex) else x for x in (x1, x2))
    x1, x2 = broadcast_tensors(x1, x2)

    def unit(x):
        n = vector_norm(x, 2, dim, True)
        # ATen clamps the norm in place under no_grad: the value is clamped, the gradient is the norm's
        n = n + (_pw.clamp(n, min=eps) - n).detach()
        return x / n
    return (unit(x1) * unit(x2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def _shuffle_factor(name, arg, input, r):
    """PyTorch's checks of a pixel (un)shuffle factor and input rank, before any reshape."""
    if isinstance(r, bool) or not hasattr(type(r), "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' (position 2) must be int, not {type(r).__name__}")
    r = int(r)
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {arg}, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           f"dimension(s)")
    return r


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r) (Shi et al. 2016; ``torch.nn.functional.pixel_shuffle``).
    TypeError for a non-int factor; RuntimeError for a factor <= 0, fewer than 3 dims or C not divisible
    by r^2, as PyTorch."""
    r = _shuffle_factor("pixel_shuffle", "upscale_factor", input, upscale_factor)
    if r * r > 2 ** 63 - 1:  # ATen multiplies in int64 with an overflow check
        raise ValueError(f"upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor={r}")
    *b, c, h, w = input._shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = input.reshape(*b, c // (r * r), r, r, h, w)
    n = len(b)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*b, c // (r * r), h * r, w * r)


@autocast_op("fp32")
def _pad_fp32(input, pad, mode, value):
    return _pad(input, pad, mode, value)


def pad(input, pad, mode="constant", value=None):
    """``torch.nn.functional.pad``: see ``tinytorch._ops.shape.pad``. Under autocast, reflect and replicate
    padding run in float32 (PyTorch's fp32 autocast policy for reflection_pad / replication_pad).
    Negative pads crop, in every mode. As PyTorch, the non-constant modes pad the last 1, 2 or 3 dims of an
    input with one or two more dims (NotImplementedError otherwise)."""
    k = len(pad) // 2
    if mode != "constant" and len(pad) % 2 == 0 and not (1 <= k <= 3 and input.ndim in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode in ("reflect", "replicate"):
        # ATen's reflection_pad / replication_pad kernels cover every dtype but bool
        check_dtype(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d", input.dtype, floating=True,
                    complex_ok=True, integral=True)
        return _pad_fp32(input, pad, mode, value)
    return _pad(input, pad, mode, value)


def pixel_unshuffle(input, downscale_factor):
    """Inverse of ``pixel_shuffle``: (*, C, H r, W r) -> (*, C r^2, H, W). Errors as ``pixel_shuffle``'s, and
    RuntimeError when H or W is not divisible by r."""
    r = _shuffle_factor("pixel_unshuffle", "downscale_factor", input, downscale_factor)
    *b, c, h, w = input._shape
    for side, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    n = len(b)
    x = input.reshape(*b, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*b, c * r * r, h // r, w // r)


@autocast_op("lower")
def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)`` with one weight, or one per channel (dim 1) (He et al. 2015).
    TypeError for a non-tensor argument; RuntimeError when input and weight dtypes differ (ATen's prelu does
    not promote); NotImplementedError for a non-floating dtype (prelu_cpu), as PyTorch."""
    check_arg("prelu", "input", 1, input, "Tensor")
    check_arg("prelu", "weight", 2, weight, "Tensor")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_scalar_name(input.dtype)} and "
                           f"{_scalar_name(weight.dtype)}")
    check_dtype("prelu_cpu", input.dtype, floating=True)
    if weight.numel() != 1:
        if input.ndim < 2 or input._shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input._shape[1] if input.ndim > 1 else 1}.")
        weight = weight.reshape((-1,) + (1,) * (input.ndim - 2))
    else:
        weight = weight.reshape(())  # a single slope broadcasts without adding a dim to a 0-d input
    return _pw.where(input > 0, input, weight * input)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square layer normalization (Zhang & Sennrich 2019): ``x / sqrt(mean(x^2) + eps) * weight`` over
    the trailing ``normalized_shape`` dims; ``eps`` defaults to the dtype's machine epsilon (as PyTorch).
    The result has ``input``'s dtype; float16 / bfloat16 input is normalized in float32, as PyTorch's CPU
    kernel. RuntimeError for a mismatched shape or weight, NotImplementedError for a non-floating input."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(normalized_shape)
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


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    return _pw.where(input.abs() > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _pw.where(input > lambd, input - lambd, _pw.where(input < -lambd, input + lambd, 0.0))


@autocast_op("fp32")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``x`` where target is 1, ``max(0, margin - x)`` where it is -1 (``torch.nn.functional.hinge_embedding_loss``)."""
    margin_part = _pw.where(target != 1, _pw.clamp(margin - input, min=0), 0.0)
    self_part = _pw.where(target != -1, input, 0.0)
    return _reduce(margin_part + self_part, reduction)


@autocast_op("fp32")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-y x))`` for targets y in {1, -1}, in ``input``'s dtype (as
    ATen, which writes it into a tensor like ``input``); RuntimeError for integer input, as torch."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_scalar_name(input.dtype)}")
    return _reduce(softplus(-target * input).to(input.dtype), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-label one-versus-all logistic loss over classes (dim 1 of (N, C)), averaged over the classes."""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input._shape[-1]
    return _reduce(loss, reduction)


def pdist(input, p=2):
    """Distances between all pairs of rows i < j of (N, M) -> (N (N - 1) / 2,), row-major (``torch.pdist``)."""
    import numpy as np
    from .._ops.creation import _from_host
    from .._ops.linalg import cdist
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    n = input._shape[0]
    i, j = np.triu_indices(n, 1)
    idx = lambda a: _from_host(a.astype(np.int64), _dt.int64, input.device)  # noqa: E731
    return (input.index_select(0, idx(i)) - input.index_select(0, idx(j))).norm(p, -1) if n > 1 else \
        cdist(input, input, p).reshape(-1)[:0]


def _float_mask(mask, dtype, name):
    """A bool mask (True = masked out) as an additive float mask (-inf where True); float masks as they are."""
    if mask is None:
        return None
    if mask.dtype.is_floating_point:
        return mask.to(dtype)
    if mask.dtype.name != "bool":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return zeros(mask._shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention with explicit weights (``torch.nn.functional.multi_head_attention_forward``, what
    ``nn.MultiheadAttention`` runs): query (L, N, E) or unbatched (L, E), key / value (S, N, E_k / E_v);
    in_proj_weight (3E, E) (or q/k/v_proj_weight with ``use_separate_proj_weight``), out_proj (E, E).
    ``key_padding_mask`` (N, S), ``attn_mask`` (L, S) or (N*H, L, S): bool (True = masked) or additive float;
    ``static_k`` / ``static_v`` (N*H, S, E/H) replace the projected keys / values. Returns (output (L, N, E),
    weights (N, L, S) averaged over heads, (N, H, L, S), or None without ``need_weights``). AssertionError /
    RuntimeError on inconsistent sizes, as torch."""
    from .._ops.shape import cat
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                             "query tensor")
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, e = query._shape
    if e != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {e}")
    h = num_heads
    hd = e // h
    if hd * h != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {h}")
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3)
    q = linear(query, wq, bq)
    k = linear(key, wk, bk) if static_k is None else None
    v = linear(value, wv, bv) if static_v is None else None
    attn_mask = _float_mask(attn_mask, q.dtype, "attn_mask")
    key_padding_mask = _float_mask(key_padding_mask, q.dtype, "key_padding_mask")
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, bsz, e)])
        v = cat([v, bias_v.expand(1, bsz, e)])
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
    q = q.reshape(tgt_len, bsz * h, hd).transpose(0, 1)
    k = static_k if static_k is not None else k.reshape(k._shape[0], bsz * h, hd).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(v._shape[0], bsz * h, hd).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros((bsz * h, 1, hd), dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros((bsz * h, 1, hd), dtype=v.dtype, device=v.device)], dim=1)
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
    src_len = k._shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask._shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask._shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, h, 1, src_len).reshape(bsz * h, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    scores = (q * (1.0 / math.sqrt(hd))).matmul(k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p)
    out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, e)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, h, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights.squeeze(0) if unbatched else weights)


@autocast_op("lower")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + bias) @ value (Vaswani et al. 2017, "Attention Is All You Need").

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``scale`` defaults to 1/sqrt(E).
    ``attn_mask``: bool (True = attend) or float (added), broadcastable to (..., L, S). ``is_causal`` masks
    key positions after the query position (the top-left aligned lower triangle, as PyTorch). ``dropout_p``
    drops attention weights (always applied, as in PyTorch: pass 0.0 in eval). ``enable_gqa`` lets key/value
    have fewer heads (dim -3) than query, repeated to match.

    RuntimeError when both ``attn_mask`` and ``is_causal`` are given or shapes do not match.
    Source: torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x docs, reference implementation).
    """
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query._shape[-1] != key._shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size, got "
                           f"{query._shape[-1]} and {key._shape[-1]}")
    if enable_gqa and query.ndim >= 3 and key._shape[-3] != query._shape[-3]:
        rep = query._shape[-3] // key._shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    L, S = query._shape[-2], key._shape[-2]
    s = 1.0 / math.sqrt(query._shape[-1]) if scale is None else scale
    # scaling the (L, E) query costs less than scaling the (L, S) scores
    scores = (query * s) @ key.transpose(-2, -1)
    if is_causal:
        attn_mask = ones(L, S, dtype=_dt.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is _dt.bool:  # as PyTorch: a bool mask becomes an additive 0 / -inf bias
            attn_mask = zeros(attn_mask._shape, dtype=scores.dtype, device=scores.device).masked_fill(
                attn_mask.logical_not(), float("-inf"))
        scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn @ value


# ---- the legacy size_average / reduce arguments of the losses ----------------------------------------------
def _legacy_get_string(size_average, reduce):
    # PyTorch's _Reduction.legacy_get_string: an unset flag counts as True
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def _legacy_reduction_args(fn):
    """``fn`` with its deprecated ``size_average`` / ``reduce`` arguments honoured as in PyTorch: when either
    is given it overrides ``reduction`` (``size_average=False`` sums, ``reduce=False`` gives per-element
    losses), with PyTorch's deprecation warning."""
    import functools
    import inspect
    sig = inspect.signature(fn)
    names = list(sig.parameters)
    first = min(names.index("size_average"), names.index("reduce"))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if len(args) <= first and "size_average" not in kwargs and "reduce" not in kwargs:
            return fn(*args, **kwargs)
        bound = sig.bind(*args, **kwargs)
        a = bound.arguments
        if a.get("size_average") is not None or a.get("reduce") is not None:
            a["reduction"] = _legacy_get_string(a.get("size_average"), a.get("reduce"))
            a["size_average"] = a["reduce"] = None
        return fn(*bound.args, **bound.kwargs)
    return wrapper


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
