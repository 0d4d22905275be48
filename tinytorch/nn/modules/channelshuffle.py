"""ChannelShuffle (PyTorch's ``torch.nn.modules.channelshuffle``)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    r"""Reorder (N, g*k, *) channels as (k, g) (ShuffleNet: Zhang et al. 2018, "ShuffleNet: An Extremely
    Efficient Convolutional Neural Network for Mobile Devices") (``torch.nn.ChannelShuffle``): the channels, seen
    as ``groups`` groups of k, are transposed so that each new group takes one channel from every old one.

    Args:
        groups (int): g, the number of groups; it must divide the channel count.

    Shape:
        - Input: :math:`(N, C, *)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.ChannelShuffle(2)
        >>> m(torch.arange(4.).reshape(1, 4, 1, 1)).flatten()
        tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
