"""Upsampling modules (PyTorch's ``torch.nn.modules.upsampling``)."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    r"""Resampling by ``F.interpolate`` to ``size`` or by ``scale_factor`` of a 1-, 2- or 3-d signal with
    channels.

    Args:
        size (int or tuple, optional): the output spatial size.
        scale_factor (float or tuple, optional): the multiplier of the spatial size; give exactly one of
            ``size`` and ``scale_factor``.
        mode (str): ``'nearest'``, ``'linear'``, ``'bilinear'``, ``'bicubic'``, ``'trilinear'`` or
            ``'nearest-exact'``.
        align_corners (bool, optional): for the linear modes, whether the corner pixels of input and output are
            aligned (their centres sampled exactly) or the scale runs over the pixel edges.
        recompute_scale_factor (bool, optional): recompute the scale used in the interpolation from the computed
            output size.

    Shape:
        - Input: :math:`(N, C, W_{in})`, :math:`(N, C, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: the same rank, each spatial size ``size`` or ``floor(S_in * scale_factor)``.

    Examples::

        >>> m = nn.Upsample(scale_factor=2, mode="nearest")
        >>> m(torch.tensor([[[1., 2.]]]))
        tensor([[[1., 1., 2., 2.]]])
        >>> nn.Upsample(size=(5, 6), mode="bilinear")(torch.randn(1, 3, 2, 3)).shape
        torch.Size([1, 3, 5, 6])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    r"""2-d nearest-neighbour upsampling of (N, C, H, W): ``nn.Upsample(size, scale_factor,
    mode='nearest')``.

    Args:
        size (int or tuple, optional): the output height and width.
        scale_factor (float or tuple, optional): the multiplier of height and width; give exactly one of them.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})`, ``size`` or ``floor(S_in * scale_factor)``.

    Examples::

        >>> m = nn.UpsamplingNearest2d(scale_factor=2)
        >>> m(torch.tensor([[[[1., 2.]]]]))
        tensor([[[[1., 1., 2., 2.],
                  [1., 1., 2., 2.]]]])
    """
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""2-d bilinear upsampling of (N, C, H, W) with aligned corners: ``nn.Upsample(size, scale_factor,
    mode='bilinear', align_corners=True)``.

    Args:
        size (int or tuple, optional): the output height and width.
        scale_factor (float or tuple, optional): the multiplier of height and width; give exactly one of them.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})`, ``size`` or ``floor(S_in * scale_factor)``.

    Examples::

        >>> m = nn.UpsamplingBilinear2d(size=(1, 3))
        >>> m(torch.tensor([[[[0., 4.]]]]))
        tensor([[[[0., 2., 4.]]]])
    """
    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
