"""Instance normalization modules (PyTorch's ``torch.nn.modules.instancenorm``)."""
from .. import functional as F
from .batchnorm import _BatchNorm, _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_BatchNorm):
    """Instance normalization (``F.instance_norm``); no affine parameters and no running statistics by default."""
    _expected = (3,)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        batched = self._expected[0]
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D input)")
        x = input.unsqueeze(0) if input.ndim == batched - 1 else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features ({self.num_features}), but got: "
                             f"{x.shape[1]}.")
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                              self.momentum if self.momentum is not None else 0.1, self.eps)
        return out.squeeze(0) if input.ndim == batched - 1 else out


class InstanceNorm1d(_InstanceNorm):
    r"""Instance normalization over (N, C, L) or (C, L).

    Each channel of each sample is normalized by its own mean and (biased) variance over the spatial
    positions (``F.instance_norm``); no affine parameters and no running statistics by default (Ulyanov et al.
    2016, "Instance Normalization: The Missing Ingredient for Fast Stylization").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` (ones) and ``bias`` (zeros); off by default.
        track_running_stats (bool): keep running averages and normalize with them in eval mode; off by default.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, L)` or :math:`(C, L)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.InstanceNorm1d(3)
        >>> y = m(torch.randn(2, 3, 5))
        >>> y.shape
        torch.Size([2, 3, 5])
    """
    _expected = (3,)


class InstanceNorm2d(_InstanceNorm):
    r"""Instance normalization over (N, C, H, W) or (C, H, W).

    Each channel of each sample is normalized by its own mean and (biased) variance over the spatial
    positions (``F.instance_norm``); no affine parameters and no running statistics by default (Ulyanov et al.
    2016, "Instance Normalization: The Missing Ingredient for Fast Stylization").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` (ones) and ``bias`` (zeros); off by default.
        track_running_stats (bool): keep running averages and normalize with them in eval mode; off by default.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.InstanceNorm2d(3)
        >>> y = m(torch.randn(2, 3, 4, 4))
        >>> y.shape
        torch.Size([2, 3, 4, 4])
    """
    _expected = (4,)


class InstanceNorm3d(_InstanceNorm):
    r"""Instance normalization over (N, C, D, H, W) or (C, D, H, W).

    Each channel of each sample is normalized by its own mean and (biased) variance over the spatial
    positions (``F.instance_norm``); no affine parameters and no running statistics by default (Ulyanov et al.
    2016, "Instance Normalization: The Missing Ingredient for Fast Stylization").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` (ones) and ``bias`` (zeros); off by default.
        track_running_stats (bool): keep running averages and normalize with them in eval mode; off by default.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.InstanceNorm3d(3)
        >>> y = m(torch.randn(2, 3, 2, 4, 4))
        >>> y.shape
        torch.Size([2, 3, 2, 4, 4])
    """
    _expected = (5,)


class LazyInstanceNorm1d(_LazyNormBase):
    r"""``nn.InstanceNorm1d`` whose ``num_features`` is the channel dim of the first input (dim 1 of a
    batched input, dim 0 of an unbatched one); the first call turns the module into an ``InstanceNorm1d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and normalize with them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, L)` or :math:`(C, L)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyInstanceNorm1d(affine=True)
        >>> y = m(torch.randn(2, 3, 5))
        >>> type(m).__name__, m.num_features, tuple(m.weight.shape)
        ('InstanceNorm1d', 3, (3,))
    """
    cls_to_become = InstanceNorm1d
    _n = 1
    forward = InstanceNorm1d.forward


class LazyInstanceNorm2d(_LazyNormBase):
    r"""``nn.InstanceNorm2d`` whose ``num_features`` is the channel dim of the first input (dim 1 of a
    batched input, dim 0 of an unbatched one); the first call turns the module into an ``InstanceNorm2d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and normalize with them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyInstanceNorm2d(affine=True)
        >>> y = m(torch.randn(2, 3, 4, 4))
        >>> type(m).__name__, m.num_features, tuple(m.weight.shape)
        ('InstanceNorm2d', 3, (3,))
    """
    cls_to_become = InstanceNorm2d
    _n = 2
    forward = InstanceNorm2d.forward


class LazyInstanceNorm3d(_LazyNormBase):
    r"""``nn.InstanceNorm3d`` whose ``num_features`` is the channel dim of the first input (dim 1 of a
    batched input, dim 0 of an unbatched one); the first call turns the module into an ``InstanceNorm3d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new statistic in the running averages, when tracked.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and normalize with them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyInstanceNorm3d(affine=True)
        >>> y = m(torch.randn(2, 3, 2, 4, 4))
        >>> type(m).__name__, m.num_features, tuple(m.weight.shape)
        ('InstanceNorm3d', 3, (3,))
    """
    cls_to_become = InstanceNorm3d
    _n = 3
    forward = InstanceNorm3d.forward
