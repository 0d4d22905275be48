"""Other spellings of existing ops, as PyTorch has them: NumPy-style aliases, in-place ``op_`` variants (as
Tensor methods and ``torch.op_`` functions), in-place view changes (``t_``, ``squeeze_`` ...), and the
``torch.*`` entry points of ``nn.functional`` ops with their ATen signatures (``torch.dropout(input, p,
train)``, integer ``reduction`` codes, ``torch.embedding(weight, indices)``).

Nothing here computes anything new: each name calls an op defined elsewhere, so gradients, devices and
error messages are that op's.
"""
from ._tensor import Tensor
from ._ops._util import TENSOR_METHODS, check_arg, method

# ---- aliases ---------------------------------------------------------------------------------------------
# Tensor methods whose functions tinytorch already has under the same name in the torch namespace
_TENSOR_FROM_TORCH = ("absolute", "arccos", "arcsin", "arctan", "arctan2", "negative", "fix", "fliplr", "flipud",
                      "fmax", "fmin", "ger", "vdot", "as_strided_scatter")
# torch functions that tinytorch has only as Tensor methods
_TORCH_FROM_TENSOR = ("clamp_min", "clamp_max", "cholesky", "detach", "detach_", "is_signed", "get_device", "is_neg",
                      "is_nonzero", "is_same_size")

# out-of-place ops whose in-place ``op_`` is ``self._inplace(op)`` (computed out of place, then written back
# through self's storage, so views and the version counter behave as for every other in-place op)
_INPLACE = ("acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "bitwise_not", "copysign",
            "deg2rad", "divide", "erfc", "floor_divide", "frac", "greater", "greater_equal", "hypot", "less",
            "less_equal", "logit", "multiply", "not_equal", "rad2deg", "sgn", "sinc", "square",
            "true_divide", "xlogy", "addmm", "addmv", "addr", "baddbmm", "arccos", "arcsin", "arctan",
            "arctan2", "negative", "fix", "igamma", "igammac")
# ``torch.op_(input, ...)``: the Tensor method of the same name
_TORCH_INPLACE = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
                  "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clip_", "cos_", "cosh_",
                  "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_",
                  "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
                  "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
                  "square_", "tan_", "tanh_", "trunc_", "xlogy_", "clamp_min_", "clamp_max_")

__all__ = list(_TORCH_FROM_TENSOR) + list(_TORCH_INPLACE)


def _declare():
    """Declare the spellings above (Tensor methods through ``method``; ``torch.op_`` functions here). Runs once
    every op module is loaded, since the spellings name their ops; ``tinytorch/_surface.py`` installs them."""
    import tinytorch
    g = globals()
    for name in _TENSOR_FROM_TORCH:
        method(name)(getattr(tinytorch, name))
    for name in _INPLACE:
        fn = TENSOR_METHODS[name] if name in TENSOR_METHODS else getattr(Tensor, name)

        def inplace(self, *args, _fn=fn, **kwargs):
            return self._inplace(_fn, *args, **kwargs)
        inplace.__name__ = inplace.__qualname__ = name + "_"
        inplace.__doc__ = f"In-place ``{name}``: writes the result into ``self`` and returns it."
        method(name + "_")(inplace)
    for name in _TORCH_FROM_TENSOR + _TORCH_INPLACE:
        g[name] = _tensor_method_as_function(name)


def _tensor_method_as_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)`` (``torch.{name}``)."
    return fn


# ---- in-place view changes ---------------------------------------------------------------------------------
def _restride(self, view):
    """Make ``self`` the tensor ``view`` (a view of self): same storage, new shape/strides, and for autograd
    the view's history, as PyTorch's in-place view ops do."""
    self._check_inplace()
    self._shape, self._stride, self._offset, self._nat = view._shape, view._stride, view._offset, None
    if view.grad_fn is not None:
        self.grad_fn, self._output_nr = view.grad_fn, view._output_nr
    return self


method("t_")(lambda self: _restride(self, self.t()))
method("transpose_")(lambda self, dim0, dim1: _restride(self, self.transpose(dim0, dim1)))
method("swapaxes_")(lambda self, axis0, axis1: _restride(self, self.transpose(axis0, axis1)))
method("swapdims_")(lambda self, dim0, dim1: _restride(self, self.transpose(dim0, dim1)))
method("squeeze_")(lambda self, dim=None: _restride(self, self.squeeze() if dim is None else self.squeeze(dim)))
method("unsqueeze_")(lambda self, dim: _restride(self, self.unsqueeze(dim)))
method("as_strided_")(lambda self, size, stride, storage_offset=None:
                      _restride(self, self.as_strided(size, stride, storage_offset)))


# ---- torch.* spellings of nn.functional ops ----------------------------------------------------------------
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _reduction(code):
    if code not in _REDUCTION:
        raise ValueError(f"{code} is not a valid value for reduction")
    return _REDUCTION[code]


def _F():
    from .nn import functional
    return functional


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv1d``: see ``nn.functional.conv1d``."""
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv2d``: see ``nn.functional.conv2d``."""
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.conv3d``: see ``nn.functional.conv3d``."""
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose1d``: see ``nn.functional.conv_transpose1d``."""
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose2d``: see ``nn.functional.conv_transpose2d``."""
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.conv_transpose3d``: see ``nn.functional.conv_transpose3d``."""
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """``torch.avg_pool1d``: see ``nn.functional.avg_pool1d``."""
    return _F().avg_pool1d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d`` (values only): see ``nn.functional.max_pool1d``."""
    return _F().max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d_with_indices``: (values, int64 indices)."""
    return _F().max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool2d`` (values only): see ``nn.functional.max_pool2d``."""
    return _F().max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool3d`` (values only): see ``nn.functional.max_pool3d``."""
    return _F().max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def adaptive_avg_pool1d(input, output_size):
    """``torch.adaptive_avg_pool1d``: see ``nn.functional.adaptive_avg_pool1d``."""
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d``: (values, int64 indices), as ATen returns both."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def _dropout_args(fn, input, p, train):
    """PyTorch's argument parser on ``torch.<fn>(Tensor input, float p, bool train)``: TypeError naming the
    argument of the wrong type; RuntimeError for ``p`` outside [0, 1]."""
    check_arg(fn, "input", 1, input, "Tensor")
    check_arg(fn, "p", 2, p, "float")
    check_arg(fn, "train", 3, train, "bool")
    if not 0 <= p <= 1:  # ATen's check (nn.functional's own is a ValueError)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: see ``nn.functional.dropout``."""
    _dropout_args("dropout", input, p, train)
    return _F().dropout(input, p, train)


def dropout_(input, p, train):
    """In-place ``torch.dropout``: writes the result into ``input`` and returns it."""
    _dropout_args("dropout_", input, p, train)
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """``torch.alpha_dropout(input, p, train)``: see ``nn.functional.alpha_dropout``."""
    _dropout_args("alpha_dropout", input, p, train)
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """In-place ``torch.alpha_dropout``: writes the result into ``input`` and returns it."""
    _dropout_args("alpha_dropout_", input, p, train)
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """``torch.feature_alpha_dropout(input, p, train)``: see ``nn.functional.feature_alpha_dropout``."""
    _dropout_args("feature_alpha_dropout", input, p, train)
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """In-place ``torch.feature_alpha_dropout``: writes the result into ``input`` and returns it."""
    _dropout_args("feature_alpha_dropout_", input, p, train)
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """``torch.feature_dropout(input, p, train)``: whole channels of an (N, C, *) input zeroed with probability
    ``p``, the rest scaled by 1 / (1 - p)."""
    _dropout_args("feature_dropout", input, p, train)
    return _F()._feature_dropout(input, p, train, False)


def feature_dropout_(input, p, train):
    """In-place ``torch.feature_dropout``: writes the result into ``input`` and returns it."""
    _dropout_args("feature_dropout_", input, p, train)
    return _F()._feature_dropout(input, p, train, True)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm`` (ATen argument order: weight and bias before the running statistics)."""
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """``torch.instance_norm`` (ATen argument order)."""
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``torch.group_norm``: see ``nn.functional.group_norm``. RuntimeError for num_groups <= 0 (ATen's check;
    the functional form divides by it in Python first)."""
    if isinstance(num_groups, int) and num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    return _F().group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``torch.layer_norm``: see ``nn.functional.layer_norm``."""
    from ._ops._util import check_arg
    check_arg("layer_norm", "eps", None, eps, "float")  # (called by keyword, PyTorch names no position)
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``torch.rms_norm``: see ``nn.functional.rms_norm``."""
    return _F().rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding(weight, indices, ...)``: rows of ``weight``; note the ATen order (weight first) and
    ``padding_idx=-1`` meaning none."""
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def bilinear(input1, input2, weight, bias=None):
    """``torch.bilinear``: see ``nn.functional.bilinear``."""
    return _F().bilinear(input1, input2, weight, bias)


def pixel_shuffle(input, upscale_factor):
    """``torch.pixel_shuffle``: see ``nn.functional.pixel_shuffle``."""
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """``torch.pixel_unshuffle``: see ``nn.functional.pixel_unshuffle``."""
    return _F().pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input, groups):
    """``torch.channel_shuffle``: see ``nn.functional.channel_shuffle``."""
    return _F().channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """``torch.cosine_similarity``: see ``nn.functional.cosine_similarity``."""
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """``torch.pairwise_distance``: see ``nn.functional.pairwise_distance``."""
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2.0):
    """``torch.pdist``: see ``nn.functional.pdist``."""
    return _F().pdist(input, p)


def prelu(input, weight):
    """``torch.prelu``: see ``nn.functional.prelu``."""
    return _F().prelu(input, weight)


def selu(input):
    """``torch.selu``: see ``nn.functional.selu``."""
    return _F().selu(input)


def selu_(input):
    """In-place ``torch.selu``: writes the result into ``input`` and returns it."""
    return _F().selu(input, inplace=True)


def celu(input, alpha=1.0):
    """``torch.celu``: see ``nn.functional.celu``."""
    return _F().celu(input, alpha)


def celu_(input, alpha=1.0):
    """In-place ``torch.celu``: writes the result into ``input`` and returns it."""
    return _F().celu(input, alpha, inplace=True)


def threshold(input, threshold, value):
    """``torch.threshold``: ``value`` where ``input <= threshold``, else ``input``."""
    return _F().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place ``torch.threshold``: writes the result into ``input`` and returns it."""
    return _F().threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """``torch.rrelu``: see ``nn.functional.rrelu`` (``generator`` must be None)."""
    if generator is not None:
        raise NotImplementedError("rrelu: an explicit generator is not supported by tinytorch; seed with manual_seed")
    return _F().rrelu(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place ``torch.rrelu``: writes the result into ``input`` and returns it."""
    if generator is not None:
        raise NotImplementedError("rrelu_: an explicit generator is not supported by tinytorch; seed with manual_seed")
    return _F().rrelu(input, lower, upper, training, inplace=True)


def hardshrink(input, lambd=0.5):
    """``torch.hardshrink``: see ``nn.functional.hardshrink``."""
    return _F().hardshrink(input, lambd)


# The torch.* spellings of the losses below take an integer ``reduction`` (0 none, 1 mean, 2 sum). Their schemas
# say ``reduction=Mean``, yet PyTorch's Python binding reduces nothing when the argument is left out (measured
# on torch 2.13: ``torch.kl_div(a, b).shape == a.shape``); the default here is that behaviour, 0.
def kl_div(input, target, reduction=0, *, log_target=False):
    """``torch.kl_div`` with an integer ``reduction`` (0 none, 1 mean, 2 sum). TypeError for arguments of the
    wrong type; RuntimeError for complex, integral or bool operands (PyTorch has no kernel for them)."""
    check_arg("kl_div", "reduction", 3, reduction, "int")  # the operands are checked by nn.functional's kl_div
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``torch.binary_cross_entropy_with_logits`` with an integer ``reduction`` (0 none, 1 mean, 2 sum)."""
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss`` (all arguments required, integer ``reduction``)."""
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.cosine_embedding_loss`` with an integer ``reduction``."""
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``torch.hinge_embedding_loss`` with an integer ``reduction``."""
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``torch.margin_ranking_loss`` with an integer ``reduction``."""
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, reduction=0):
    """``torch.triplet_margin_loss`` with an integer ``reduction``."""
    return _F().loss._triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, _reduction(reduction))


__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "max_pool1d",
            "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
            "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
            "feature_dropout", "feature_dropout_", "batch_norm", "instance_norm", "group_norm",
            "layer_norm", "rms_norm", "embedding", "bilinear", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
            "native_channel_shuffle", "cosine_similarity", "pairwise_distance", "pdist", "prelu", "selu", "selu_",
            "celu", "celu_", "threshold", "threshold_", "rrelu", "rrelu_", "hardshrink", "kl_div",
            "binary_cross_entropy_with_logits", "poisson_nll_loss", "cosine_embedding_loss", "hinge_embedding_loss",
            "margin_ranking_loss", "triplet_margin_loss"]


# ---- resizing and the legacy constructor --------------------------------------------------------------------
@method("resize_")
def resize_(self, *sizes, memory_format=None):
    """Give ``self`` shape ``sizes`` with contiguous strides, in place (``torch.Tensor.resize_``). The storage
    grows when too small (the old elements are kept at the front; new ones are uninitialized); a view made
    before a growing resize keeps the old memory. Same shape: no change. RuntimeError when ``self`` requires
    grad or a size is negative."""
    from . import _strides
    from ._tensor import _new
    from ._ops.creation import _size, empty
    from .autograd.grad_mode import no_grad
    size = tuple(_size(sizes))
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if size == self._shape:
        return self
    need = self._offset + _strides.numel(size)
    st = self._storage
    if need > st.size:
        if not st.resizable:
            raise RuntimeError("Trying to resize storage that is not resizable")
        grown = empty(need, dtype=self.dtype, device=self.device)
        if st.size and not st.backend.shape_only:
            with no_grad():
                grown[:st.size].copy_(_new(st, (st.size,), (1,), 0, self.dtype))
        self._storage = grown._storage
    self._shape, self._stride, self._nat = size, _strides.contiguous_strides(size), None
    self._storage._version[0] += 1
    return self


@method("resize_as_")
def resize_as_(self, the_template, memory_format=None):
    """``self.resize_(the_template.shape)`` (``torch.Tensor.resize_as_``)."""
    return resize_(self, the_template._shape)


@method("new")
def new(self, *args, device=None):
    """PyTorch's legacy constructor on a tensor: ``x.new()`` (empty), ``x.new(2, 3)`` / ``x.new(size)``
    (uninitialized), ``x.new(data)`` (a copy of a sequence, ndarray or tensor), all with ``x``'s dtype and
    device. TypeError for anything else (``x.new(1.5)``)."""
    import numpy as np
    from ._ops.creation import empty, tensor
    dev = device if device is not None else self.device
    if not args:
        return empty(0, dtype=self.dtype, device=dev)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=self.dtype, device=dev)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, (tuple, list)) and type(a).__name__ == "Size":
            return empty(tuple(a), dtype=self.dtype, device=dev)
        if isinstance(a, (list, tuple, np.ndarray, Tensor)):
            return tensor(a, dtype=self.dtype, device=dev)
        raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    raise TypeError(f"new() received an invalid combination of arguments: {tuple(type(a).__name__ for a in args)}")


__all__ += ["resize_as_"]


# ---- Tensor-method spellings of nn.functional ops ----------------------------------------------------------
@method("hardshrink")
def _tensor_hardshrink(self, lambd=0.5):
    from .nn.functional import hardshrink
    return hardshrink(self, lambd)


@method("prelu")
def _tensor_prelu(self, weight):
    from .nn.functional import prelu
    return prelu(self, weight)
