"""``torch.distributed.algorithms``: the generic join context for uneven inputs (``join``)."""
from .join import Join, JoinHook, Joinable

__all__ = ["Join", "JoinHook", "Joinable"]
