"""``torch.ao.nn.intrinsic``: the containers ``fuse_modules`` puts in place of a run of modules (conv + relu,
conv + bn (+ relu) for QAT, linear + relu, bn + relu ...). Each is an ``nn.Sequential`` of the original
modules, so it computes exactly what they computed in a row; the type marks the run for a quantization
backend. Constructors check the module types as PyTorch's (AssertionError "Incorrect types for input
modules: ..."). Source: torch/ao/nn/intrinsic/modules/fused.py (PyTorch 2.13).
"""
from ... import nn as _nn
from ...nn.utils.parametrize import type_before_parametrizations

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBnReLU1d",
           "ConvBnReLU2d", "ConvBn3d", "ConvBnReLU3d", "BNReLU2d", "BNReLU3d", "LinearBn1d", "LinearLeakyReLU",
           "LinearTanh", "ConvAdd2d", "ConvAddReLU2d", "_FusedModule"]


class _FusedModule(_nn.Sequential):
    """The base of the fused containers: a Sequential whose class names the fused pattern."""


def _check_types(mods, kinds, exact=False):
    """AssertionError (PyTorch's message) unless each module is exactly of the matching ``nn`` class (the
    class before parametrizations, or ``type(m)`` itself when ``exact``, as torch checks LeakyReLU / Tanh)."""
    got = [type(m) if exact else type_before_parametrizations(m) for m in mods]
    if any(g is not getattr(_nn, k) for g, k in zip(got, kinds)):
        raise AssertionError("Incorrect types for input modules: " + " and ".join(g.__name__ for g in got))


class ConvReLU1d(_FusedModule):
    """A sequential container calling Conv1d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, relu):
        _check_types((conv, relu), ("Conv1d", "ReLU"))
        super().__init__(conv, relu)


class ConvReLU2d(_FusedModule):
    """A sequential container calling Conv2d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, relu):
        _check_types((conv, relu), ("Conv2d", "ReLU"))
        super().__init__(conv, relu)


class ConvReLU3d(_FusedModule):
    """A sequential container calling Conv3d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, relu):
        _check_types((conv, relu), ("Conv3d", "ReLU"))
        super().__init__(conv, relu)


class LinearReLU(_FusedModule):
    """A sequential container calling Linear and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, linear, relu):
        _check_types((linear, relu), ("Linear", "ReLU"))
        super().__init__(linear, relu)


class ConvBn1d(_FusedModule):
    """A sequential container calling Conv1d and BatchNorm1d; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn):
        _check_types((conv, bn), ("Conv1d", "BatchNorm1d"))
        super().__init__(conv, bn)


class ConvBn2d(_FusedModule):
    """A sequential container calling Conv2d and BatchNorm2d; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn):
        _check_types((conv, bn), ("Conv2d", "BatchNorm2d"))
        super().__init__(conv, bn)


class ConvBnReLU1d(_FusedModule):
    """A sequential container calling Conv1d, BatchNorm1d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn, relu):
        _check_types((conv, bn, relu), ("Conv1d", "BatchNorm1d", "ReLU"))
        super().__init__(conv, bn, relu)


class ConvBnReLU2d(_FusedModule):
    """A sequential container calling Conv2d, BatchNorm2d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn, relu):
        _check_types((conv, bn, relu), ("Conv2d", "BatchNorm2d", "ReLU"))
        super().__init__(conv, bn, relu)


class ConvBn3d(_FusedModule):
    """A sequential container calling Conv3d and BatchNorm3d; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn):
        _check_types((conv, bn), ("Conv3d", "BatchNorm3d"))
        super().__init__(conv, bn)


class ConvBnReLU3d(_FusedModule):
    """A sequential container calling Conv3d, BatchNorm3d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, conv, bn, relu):
        _check_types((conv, bn, relu), ("Conv3d", "BatchNorm3d", "ReLU"))
        super().__init__(conv, bn, relu)


class BNReLU2d(_FusedModule):
    """A sequential container calling BatchNorm2d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, batch_norm, relu):
        _check_types((batch_norm, relu), ("BatchNorm2d", "ReLU"))
        super().__init__(batch_norm, relu)


class BNReLU3d(_FusedModule):
    """A sequential container calling BatchNorm3d and ReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, batch_norm, relu):
        _check_types((batch_norm, relu), ("BatchNorm3d", "ReLU"))
        super().__init__(batch_norm, relu)


class LinearBn1d(_FusedModule):
    """A sequential container calling Linear and BatchNorm1d; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, linear, bn):
        _check_types((linear, bn), ("Linear", "BatchNorm1d"))
        super().__init__(linear, bn)


class LinearLeakyReLU(_FusedModule):
    """A sequential container calling Linear and LeakyReLU; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, linear, leaky_relu):
        _check_types((linear, leaky_relu), ("Linear", "LeakyReLU"), exact=True)
        super().__init__(linear, leaky_relu)


class LinearTanh(_FusedModule):
    """A sequential container calling Linear and Tanh; during quantization it is replaced with the
    corresponding fused quantized module. AssertionError for modules of other types."""

    def __init__(self, linear, tanh):
        _check_types((linear, tanh), ("Linear", "Tanh"), exact=True)
        super().__init__(linear, tanh)


class ConvAdd2d(_FusedModule):
    """Conv2d on the first input plus the second input: ``add(conv(x1), x2)`` (``add`` a callable)."""

    def __init__(self, conv, add):
        super().__init__(conv)
        self.add = add

    def forward(self, x1, x2):
        """``add(conv(x1), x2)``."""
        return self.add(self[0](x1), x2)


class ConvAddReLU2d(_FusedModule):
    """``relu(add(conv(x1), x2))``."""

    def __init__(self, conv, add, relu):
        super().__init__(conv)
        self.add = add
        self.relu = relu

    def forward(self, x1, x2):
        """``relu(add(conv(x1), x2))``."""
        return self.relu(self.add(self[0](x1), x2))
