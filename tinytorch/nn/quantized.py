"""``torch.nn.quantized``: the older name of ``torch.ao.nn.quantized``; the same objects (FloatFunctional,
FXFloatFunctional: see that module for why the quantized layers are absent)."""
from ..ao.nn.quantized import FloatFunctional, FXFloatFunctional  # noqa: F401

__all__ = ["FloatFunctional", "FXFloatFunctional"]
