"""``torch.amp``: mixed precision. ``autocast`` (per-op casting policies) and ``GradScaler`` (loss scaling)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
