"""Pixel (un)shuffle modules (PyTorch's ``torch.nn.modules.pixelshuffle``)."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    r"""(*, C r^2, H, W) -> (*, C, H r, W r) (Shi et al. 2016, sub-pixel convolution: "Real-Time Single Image
    and Video Super-Resolution Using an Efficient Sub-Pixel Convolutional Neural Network") (``F.pixel_shuffle``).

    Args:
        upscale_factor (int): r, the factor by which height and width grow.

    Shape:
        - Input: :math:`(*, C \cdot r^2, H, W)`.
        - Output: :math:`(*, C, H \cdot r, W \cdot r)`.

    Examples::

        >>> m = nn.PixelShuffle(2)
        >>> m(torch.arange(4.).reshape(1, 4, 1, 1))
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    r"""(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of ``PixelShuffle`` (``F.pixel_unshuffle``).

    Args:
        downscale_factor (int): r, the factor by which height and width shrink.

    Shape:
        - Input: :math:`(*, C, H \cdot r, W \cdot r)`.
        - Output: :math:`(*, C \cdot r^2, H, W)`.

    Examples::

        >>> m = nn.PixelUnshuffle(2)
        >>> m(torch.arange(4.).reshape(1, 1, 2, 2)).flatten()
        tensor([0., 1., 2., 3.])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
