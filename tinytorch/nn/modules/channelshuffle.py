"""ChannelShuffle at PyTorch's module path ``torch.nn.modules.channelshuffle``."""
from .layers import ChannelShuffle

__all__ = ["ChannelShuffle"]
