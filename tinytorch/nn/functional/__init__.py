"""``tinytorch.nn.functional``: layers, activations and losses as functions.

Everything here is written in tinytorch ops, so it is differentiable (twice) on every backend.
Pooling is im2col (``unfold2d``) + reductions; 2-D convolution (and so 1-D and 3-D) is the op pair
``convolution`` / ``convolution_backward`` (a native kernel on the cpu backend, im2col + matmul elsewhere).

One module per family: ``activation``, ``linear``, ``dropout``, ``sparse`` (embedding, embedding_bag,
one_hot), ``padding``, ``conv`` (and unfold / fold), ``pooling``, ``pooling_adaptive``, ``normalization``,
``sampling`` (interpolate, grid_sample, pixel / channel shuffle), ``distance``, ``loss``, ``attention``;
``_reduction`` handles the losses' legacy size_average / reduce, ``_utils`` holds shared argument helpers.
This package is their one namespace, as PyTorch's single-file ``torch.nn.functional``: every public name is
re-exported here, and the functions' ``__module__`` is this package (as PyTorch's are ``torch.nn.functional``'s).
"""
import sys as _sys
import types as _types

from ._utils import _pair, _scalar_name
from .activation import (
    sigmoid, tanh, relu, relu_, relu6, leaky_relu, elu, selu, celu, gelu, silu, mish, softplus, hardtanh,
    hardsigmoid, hardswish, logsigmoid, softsign, tanhshrink, threshold, elu_, selu_, celu_, leaky_relu_, hardtanh_,
    threshold_, rrelu, rrelu_, glu, softmax, log_softmax, softmin, gumbel_softmax, prelu, hardshrink, softshrink,
    _activation, _threshold, _rrelu, _get_softmax_dim)
from .linear import linear, bilinear, _einsum
from .dropout import (
    dropout, dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout, _check_dropout_p,
    _check_dropout_dtype, _feature_dropout, _alpha_dropout)
from .sparse import embedding, one_hot, embedding_bag
from .padding import pad, _pad_fp32
from .conv import (
    conv2d, conv1d, conv3d, conv_transpose2d, conv_transpose1d, conv_transpose3d, unfold, fold, _conv_padding,
    _batch_dim, _int_tuple, _conv_check, _fold_pairs)
from .pooling import (
    max_pool2d, max_pool1d, max_pool3d, avg_pool2d, avg_pool1d, max_unpool1d, max_unpool2d, max_unpool3d,
    max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d_with_indices, lp_pool1d, lp_pool2d, avg_pool3d,
    lp_pool3d, fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices, _pool_check, _pool_windows, _batched, _avg_pool2d_ceil, _max_unpool,
    _window_sum3d, _fractional_starts, _fractional_max_pool)
from .pooling_adaptive import (
    adaptive_avg_pool2d, adaptive_max_pool2d, adaptive_max_pool2d_with_indices, adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool3d, adaptive_max_pool3d_with_indices, adaptive_avg_pool3d,
    adaptive_avg_pool1d, _adaptive_bounds, _adaptive_args, _adaptive_empty, _adaptive_pool2d)
from .normalization import (
    batch_norm, layer_norm, group_norm, instance_norm, normalize, rms_norm, local_response_norm, _REDUCED_FLOATS,
    _norm_compute, _standardize, _check_numel)
from .sampling import (
    interpolate, upsample, upsample_nearest, upsample_bilinear, affine_grid, grid_sample, pixel_shuffle,
    pixel_unshuffle, channel_shuffle, native_channel_shuffle, _INTERP_DIMS, _aa_filter, _aa_weights, _source_taps,
    _resize_uint8, _ALIGN_WARNING, _base_coords, _reflect, _unnormalize, _pad_coord, _source_index, _cubic_coeffs,
    _shuffle_factor)
from .distance import pairwise_distance, cosine_similarity, pdist
from ._reduction import _legacy_get_string, _legacy_reduction_args
from .loss import (
    mse_loss, l1_loss, smooth_l1_loss, huber_loss, nll_loss, linear_cross_entropy, cross_entropy,
    binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, poisson_nll_loss, gaussian_nll_loss, ctc_loss,
    multi_margin_loss, multilabel_margin_loss, margin_ranking_loss, triplet_margin_loss,
    triplet_margin_with_distance_loss, cosine_embedding_loss, hinge_embedding_loss, soft_margin_loss,
    multilabel_soft_margin_loss, _check_reduction, _reduce, _check_same_size, _check_cast, _weighted, _log_add3,
    _wrap_legacy_losses)
from .attention import multi_head_attention_forward, scaled_dot_product_attention, _float_mask

# by name: ``linear`` and ``dropout`` here are the functions, not their modules
_FAMILIES = tuple(_sys.modules[f"{__name__}.{_name}"] for _name in (
    "_utils", "activation", "linear", "dropout", "sparse", "padding", "conv", "pooling", "pooling_adaptive",
    "normalization", "sampling", "distance", "_reduction", "loss", "attention"))


def _claim_functions():
    """Give the families' functions (and the ones their decorators wrap) this package as ``__module__``, as
    PyTorch's are ``torch.nn.functional``'s: pickles and allow-lists name them so."""
    for m in _FAMILIES:
        for fn in vars(m).values():
            while isinstance(fn, _types.FunctionType) and fn.__module__ == m.__name__:
                fn.__module__ = __name__
                fn = getattr(fn, "__wrapped__", None)


_claim_functions()
