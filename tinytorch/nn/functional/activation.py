"""Activation functions: relu and its variants, the sigmoid / tanh / shrink family, softmax, glu, prelu."""
import math
import warnings

from ...amp.autocast_mode import autocast_op
from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ..._ops import natives as _natives
from ..._ops import nn as _nnops
from ..._ops.creation import zeros
from ..._ops.nn import gelu  # noqa: F401  (an op with a fused kernel and a decomposition)
from ..._ops._util import check_arg, check_dtype
from ._utils import _scalar_name


sigmoid = _pw.sigmoid
tanh = _pw.tanh


def _tensor_arg(fn, input):
    """``input`` when it is a tensor, else PyTorch's argument-parser TypeError for ``fn``'s first parameter."""
    from ..._tensor import Tensor
    return check_arg(fn, "input", 1, input, "Tensor") if not isinstance(input, Tensor) else input


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
    return _activation(input, inplace, lambda input: _natives.leaky_relu(input, negative_slope))


def elu(input, alpha=1.0, inplace=False):
    """``x`` for x > 0 else ``alpha * (exp(x) - 1)`` (Clevert et al. 2015). NotImplementedError for a
    non-floating input (ATen's elu_cpu kernel is floating-only)."""
    check_dtype("elu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _natives.elu(input, alpha))


def selu(input, inplace=False):
    """Scaled ELU with the constants of Klambauer et al. 2017."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    check_dtype("elu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _natives.elu(input, alpha, scale))


def celu(input, alpha=1.0, inplace=False):
    check_dtype("elu_cpu", input.dtype, floating=True)
    return _activation(input, inplace, lambda input: _natives.elu(input, alpha, 1.0, 1.0 / alpha, celu=True))


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
    return _natives.softplus(input, beta, threshold)


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
    """``relu6(x + 3) / 6``. NotImplementedError for non-floating input, as PyTorch's kernel."""
    check_dtype("hardsigmoid_cpu", _tensor_arg("hardsigmoid", input).dtype, floating=True)
    return _activation(input, inplace, _natives.hardsigmoid)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (Howard et al. 2019). NotImplementedError for non-floating input, as
    PyTorch's kernel."""
    check_dtype("hardswish_cpu", _tensor_arg("hardswish", input).dtype, floating=True)
    # ATen's order, x * min(max(x + 3, 0), 6) / 6: a huge x overflows to inf as there
    return _activation(input, inplace, lambda input: input * _pw.clamp(input + 3, 0.0, 6.0) / 6)


def logsigmoid(input):
    """``log(sigmoid(input))`` computed as ``-softplus(-input)`` (no overflow). NotImplementedError for
    non-floating input, as PyTorch's kernel."""
    check_dtype("log_sigmoid_cpu", input.dtype, floating=True)
    if input.dtype.itemsize < 4:  # float16 / bfloat16: ATen's kernel computes in float32 and rounds once
        return logsigmoid(input.float()).to(input.dtype)
    return _natives.log_sigmoid(input)


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
    # ``value`` only where input <= threshold: a NaN input stays NaN, as PyTorch's kernel
    return _activation(input, inplace, lambda input: _pw.where(input <= threshold, value, input))


_threshold = threshold  # threshold_'s parameter is named ``threshold`` (as torch's) and shadows the function


def elu_(input, alpha=1.0, scale=1, input_scale=1):
    """In-place ``scale * elu(x)`` with the exponent's input scaled by ``input_scale``: ``x * scale`` for x > 0
    else ``alpha * scale * (exp(x * input_scale) - 1)``, ATen's ``elu_`` (``F.elu_`` takes all three)."""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, inplace=True)
    return _activation(input, True, lambda x: _natives.elu(x, alpha, scale, input_scale))


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
    # PyTorch's out-of-place rrelu first insists on finite bounds; both forms then on lower <= upper
    # (a NaN bound fails that comparison too)
    if not inplace:
        for name, v in (("lower", lower), ("upper", upper)):
            if not math.isfinite(v):
                raise RuntimeError(f"rrelu: {name} bound must be finite, got {_fmt(v)}")
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    # training draws slopes in rrelu_with_noise (no Half kernel); eval is a leaky_relu (no integer kernel)
    if training:
        check_dtype("rrelu_with_noise_out_cpu", input.dtype, floating=True)
        if input.dtype is _dt.float16:
            raise NotImplementedError("\"rrelu_with_noise_out_cpu\" not implemented for 'Half'")
    else:
        check_dtype("leaky_relu_cpu", input.dtype, floating=True)
    if training:
        from ..._ops.random import rrelu_noise
        noise = rrelu_noise(input, lower, upper, _generator)
        if input.dtype in (_dt.bfloat16, _dt.float16):
            # ATen multiplies in float (the opmath type) by the unrounded slope and rounds the product once
            return _activation(input, inplace, lambda input: (input.float() * noise).to(input.dtype))
        return _activation(input, inplace, lambda input: input * noise)
    slope = (lower + upper) / 2
    # like leaky_relu, zero takes the slope branch (0 * an infinite slope is NaN, as in PyTorch)
    return _activation(input, inplace, lambda input: _pw.where(input > 0, input, input * slope))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place ``rrelu``; slopes drawn from ``generator`` when given (``F.rrelu_`` takes one, ``F.rrelu`` not)."""
    return _rrelu(input, lower, upper, training, True, generator)


def glu(input, dim=-1):
    """Gated linear unit ``a * sigmoid(b)`` of the two halves a, b of ``input`` along ``dim`` (Dauphin et al.
    2017; ``torch.nn.functional.glu``). RuntimeError for a 0-d input or an odd size along ``dim``,
    NotImplementedError for non-floating dtypes, as PyTorch."""
    from ..._strides import wrap_dim
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    if input._shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input._shape[d]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"glu_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    a, b = input.chunk(2, d) if input._shape[d] else (input, input)
    return a * _pw.sigmoid(b)


def _fmt(v):
    # C++ streams print non-finite doubles as inf / -inf / nan
    return "nan" if v != v else ("inf" if v == math.inf else ("-inf" if v == -math.inf else f"{v:g}"))


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


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution (Jang et al. 2016): ``softmax((logits + g) / tau)`` with
    Gumbel noise g; ``hard`` returns one-hot vectors with the soft sample's gradient (straight-through).

    As PyTorch, g = -log(e) with e ~ Exp(1) drawn into a contiguous tensor of logits' shape (so the random
    stream fills it in row-major order whatever logits' strides), and ``eps`` is deprecated: a value other
    than 1e-10 warns and has no effect."""
    from ..._ops.creation import empty
    check_arg("softmax", "dim", 1, dim, "int")  # PyTorch takes Tensor.softmax(dim): no implicit dim here
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty(logits._shape, dtype=logits.dtype, device=logits.device).exponential_().log()
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.argmax(dim, keepdim=True)
    y_hard = zeros(logits._shape, dtype=logits.dtype, device=logits.device).scatter(dim, index, 1.0)
    return y_hard - y.detach() + y


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


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0. NotImplementedError for non-floating input, as PyTorch's kernel."""
    check_dtype("hardshrink_cpu", input.dtype, floating=True)
    return _natives.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0. NotImplementedError for
    non-floating input; RuntimeError for a negative ``lambd`` or one outside the input dtype's finite range
    (NaN and inf included), as PyTorch."""
    check_dtype("softshrink_check", input.dtype, floating=True)
    top = _dt.finfo(input.dtype).max
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:.6g}] for input dtype {_scalar_name(input.dtype)}, "
                           f"but found {_fmt(lambd)}")
    return _natives.softshrink(input, lambd)
