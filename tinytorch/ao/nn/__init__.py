"""``torch.ao.nn``: ``intrinsic`` (fused module containers) and ``quantized`` (FloatFunctional only; the
quantized layers need quantized kernels, which tinytorch does not have)."""
from . import intrinsic, quantized  # noqa: F401
