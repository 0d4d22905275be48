"""ChannelShuffle (PyTorch's ``torch.nn.modules.channelshuffle``)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Reorder (N, g*k, *) channels as (k, g) (ShuffleNet) (``torch.nn.ChannelShuffle``)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
