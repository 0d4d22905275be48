"""``torch.amp``: ``GradScaler`` (loss scaling for low-precision training). ``autocast`` is not implemented:
asking for it raises AttributeError."""
from .grad_scaler import GradScaler

__all__ = ["GradScaler"]
