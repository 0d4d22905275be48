"""``torch.ao.quantization.qconfig``: ``QConfig``, the pair of observer constructors (activation, weight)
a module is quantized with. Source: torch/ao/quantization/qconfig.py (PyTorch 2.13). The predefined qconfigs
and observers (``default_qconfig`` ...) are not provided: they are built on the quantized dtypes (quint8,
qint8), which tinytorch does not have."""
from collections import namedtuple

from ...nn import Module

__all__ = ["QConfig"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to observe a module's activations and weights for quantization: two callables (observer classes or
    ``with_args`` partials) making an observer each. ValueError when given observer instances (modules)."""

    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. Use "
                             "MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)
