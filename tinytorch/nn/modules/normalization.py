"""Normalization modules (PyTorch's ``torch.nn.modules.normalization``): local response, layer, group and RMS
normalization."""
from ..._ops.creation import ones, zeros
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    r"""Normalization across ``size`` neighbouring channels (AlexNet: Krizhevsky, Sutskever & Hinton 2012,
    "ImageNet Classification with Deep Convolutional Neural Networks") (``F.local_response_norm``): each value is
    divided by ``(k + alpha / size * sum of squares over the neighbouring channels) ** beta``.

    Args:
        size (int): the number of neighbouring channels summed over.
        alpha (float): the scale of the sum of squares.
        beta (float): the exponent.
        k (float): the additive constant.

    Shape:
        - Input: :math:`(N, C, *)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LocalResponseNorm(2)
        >>> m(torch.randn(2, 8, 5, 5)).shape
        torch.Size([2, 8, 5, 5])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    r"""Layer normalization over the trailing ``normalized_shape`` dims, with elementwise affine (Ba, Kiros &
    Hinton 2016, "Layer Normalization") (``F.layer_norm``): each sample is normalized by the mean and (biased)
    variance of its last ``len(normalized_shape)`` dims, then scaled by ``weight`` and shifted by ``bias``.

    Args:
        normalized_shape (int or tuple): the trailing dims normalized over (an int: the last dim).
        eps (float): added to the variance before its square root.
        elementwise_affine (bool): learn ``weight`` (ones) and ``bias`` (zeros) of shape ``normalized_shape``.
        bias (bool): with ``elementwise_affine``, also learn the shift.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, *)`, ending in ``normalized_shape``.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LayerNorm(4)
        >>> m(torch.tensor([[1., 2., 3., 4.]]))
        tensor([[-1.3416, -0.4472,  0.4472,  1.3416]], grad_fn=<NativeLayerNormBackward0>)
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
            self.bias = Parameter(zeros(self.normalized_shape, device=device, dtype=dtype)) if bias else None
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    r"""Group normalization: the channels are split into ``num_groups`` groups and each group of each sample
    is normalized by its own mean and (biased) variance, then scaled and shifted per channel (Wu & He 2018,
    "Group Normalization") (``F.group_norm``).

    Args:
        num_groups (int): the number of groups; must divide ``num_channels``.
        num_channels (int): C, the number of channels.
        eps (float): added to the variance before its square root.
        affine (bool): learn a per-channel ``weight`` (ones) and ``bias`` (zeros).
        device, dtype: where and as what the parameters are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, *)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.GroupNorm(2, 6)
        >>> m(torch.randn(4, 6, 3, 3)).shape
        torch.Size([4, 6, 3, 3])
    """
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(ones(num_channels, device=device, dtype=dtype)) if affine else None
        self.bias = Parameter(zeros(num_channels, device=device, dtype=dtype)) if affine and bias else None

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    r"""RMS normalization over the trailing ``normalized_shape`` dims with an elementwise weight (Zhang &
    Sennrich 2019, "Root Mean Square Layer Normalization") (``F.rms_norm``): ``x / sqrt(mean(x^2) + eps) * weight``.

    Args:
        normalized_shape (int or tuple): the trailing dims normalized over (an int: the last dim).
        eps (float, optional): added to the mean square; None takes the machine epsilon of the input's dtype.
        elementwise_affine (bool): learn ``weight`` (ones) of shape ``normalized_shape``.
        device, dtype: where and as what the weight is created.

    Shape:
        - Input: :math:`(N, *)`, ending in ``normalized_shape``.
        - Output: the input's shape.

    Examples::

        >>> m = nn.RMSNorm(2, elementwise_affine=False)
        >>> m(torch.tensor([[3., 4.]]))
        tensor([[0.8485, 1.1314]])
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
