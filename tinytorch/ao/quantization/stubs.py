"""``torch.ao.quantization.stubs``: where a quantizable float model enters and leaves the quantized region.
In the float model (all tinytorch runs) the stubs are identities. Source: torch/ao/quantization/stubs.py."""
from ...nn import Module

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class QuantStub(Module):
    """Marks where activations would be quantized; the identity in a float model (``convert`` would swap it
    for a quantize op).

    Args:
        qconfig: the QConfig for this point (else inherited from the parent modules); kept as ``.qconfig``
            when given.

    Shape:
        - Input: any. Output: the input itself.
    """

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        """``x`` unchanged."""
        return x


class DeQuantStub(Module):
    """Marks where activations would be dequantized; the identity in a float model.

    Args:
        qconfig: as QuantStub's.

    Shape:
        - Input: any. Output: the input itself.
    """

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        """``x`` unchanged."""
        return x


class QuantWrapper(Module):
    """``module`` between a QuantStub and a DeQuantStub (children ``quant``, ``dequant``, ``module``, which
    take ``module.qconfig`` if it has one); the wrapper follows ``module``'s training mode.

    Args:
        module: the module to wrap.

    Shape:
        - as ``module``.
    """

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):
        """``dequant(module(quant(X)))``."""
        return self.dequant(self.module(self.quant(X)))
