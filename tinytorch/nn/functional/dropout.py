"""Dropout: elementwise, of whole channels (dropout1d / 2d / 3d), and alpha dropout for SELU networks."""
import math
import warnings

from ..._dtype import float32, float64
from ..._modes import _lazy
from ..._ops.creation import _from_host, empty
from ..._ops.generator import default_generator
from ..._ops.random import _like, bernoulli
from ..._ops._util import check_arg, check_dtype
from ._utils import _scalar_name
from .activation import _activation


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
    # PyTorch's CPU formula: noise = bernoulli(1 - p) / (1 - p), then input * noise (same draws, same rounding);
    # noise is empty_like(input), so a transpose's mask is drawn in memory order. The product stays an op, so
    # its gradient is grad * noise.
    noise = _like(input, lambda shape: _noise(shape, input, 1 - p))
    return _activation(input, inplace, lambda input: input * noise)


def _noise(shape, input, q):
    """bernoulli(q) / q of ``shape`` in the input's dtype and device: float32 and float64 in one native pass over
    the default generator's stream (``Generator._bernoulli_scaled``), the same values as the two ops."""
    np_dtype = input.dtype.np if input.dtype in (float32, float64) else None
    noise = None if _lazy.active or np_dtype is None else \
        default_generator._bernoulli_scaled(math.prod(shape), q, np_dtype)
    if noise is None:
        return bernoulli(empty(shape, dtype=input.dtype, device=input.device), q) / q
    return _from_host(noise.reshape(shape), input.dtype, input.device)


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
    # PyTorch parses the input even when the call is a no-op (eval mode)
    check_arg("feature_alpha_dropout" if feature else "alpha_dropout", "input", 1, input, "Tensor")
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    if p == 1:
        return _activation(input, inplace, lambda input: input * 0)
    _check_dropout_dtype(input)
    alpha = 1.7580993408473766  # SELU's -alpha' = scale * alpha: dropped units take the value SELU saturates to
    shape = input._shape[:2] + (1,) * (input.ndim - 2) if feature else input._shape
    # the mask is laid out as empty_like(input) (a transpose's strides kept) and drawn in memory order
    keep = bernoulli(empty(shape, dtype=input.dtype, device=input.device), 1 - p) if feature else \
        _like(input, lambda shape: bernoulli(empty(shape, dtype=input.dtype, device=input.device), 1 - p))
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
