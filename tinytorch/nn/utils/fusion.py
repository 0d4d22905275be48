"""``torch.nn.utils.fusion``: fold an eval-mode BatchNorm into the convolution or linear layer before it.

With BatchNorm's y = (x - mean) / sqrt(var + eps) * gamma + beta applied to a layer's output w x + b, the
composition is the layer with weight w * s and bias (b - mean) * s + beta, s = gamma / sqrt(var + eps), per
output channel. Source: torch/nn/utils/fusion.py (PyTorch 2.13): same names, arguments, dtypes and errors.
"""
import copy

from ..._ops.creation import ones_like, zeros_like
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A new convolution (a deep copy of ``conv``) computing ``bn(conv(x))`` for eval-mode ``conv`` and
    ``bn``; ``transpose`` for a transposed convolution (output channels on the weight's dim 1).
    AssertionError when either module is training or ``bn`` tracks no running statistics."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused (weight, bias) as Parameters: conv_w (C_out, C_in/g, *k) (or (C_in, C_out/g, *k) with
    ``transpose``) scaled per output channel by bn_w / sqrt(bn_rv + bn_eps), bias (conv_b - bn_rm) * scale
    + bn_b. Missing conv_b / bn_b count as zeros, missing bn_w as ones. The weight keeps conv_w's dtype, the
    bias conv_b's (conv_w's without one); each keeps the requires_grad of its source."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ones_like(bn_rm)
    if bn_b is None:
        bn_b = zeros_like(bn_rm)
    inv_std = (bn_rv + bn_eps).rsqrt()
    trailing = [1] * (conv_w.ndim - 2)
    shape = [1, -1] + trailing if transpose else [-1, 1] + trailing
    w = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=w_dtype)
    b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A new Linear (a deep copy of ``linear``) computing ``bn(linear(x))`` for eval-mode modules; ``bn``'s
    features must equal ``linear.out_features`` or be 1. AssertionError otherwise, when either module is
    training, or when ``bn`` tracks no running statistics."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused (weight, bias) as Parameters: linear_w (out, in) scaled per row by bn_w / sqrt(bn_rv +
    bn_eps), bias (linear_b - bn_rm) * scale + bn_b (a missing linear_b counts as zeros). Dtypes and
    requires_grad as ``fuse_conv_bn_weights``."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
