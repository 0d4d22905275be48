"""``torch.ao``: the parts of PyTorch's architecture-optimization namespace that work on float models:
``ao.quantization`` (quant stubs, module fusion, QConfig; the quantizing passes raise NotImplementedError
naming the quantized kernels tinytorch lacks) and ``ao.nn`` (fused module containers, FloatFunctional)."""
from . import nn, quantization  # noqa: F401
