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


def _fused(name, parts, doc, exact=False):
    """A fused container class ``name`` taking one module of each type in ``parts`` (the ``nn`` class names)
    in order. ``exact`` compares ``type(m)`` instead of the type before parametrizations, as torch does for
    the LeakyReLU / Tanh patterns."""
    types = tuple(getattr(_nn, p) for p in parts)

    def __init__(self, *mods):
        kinds = [type(m) if exact else type_before_parametrizations(m) for m in mods]
        if len(mods) != len(types) or any(k is not t for k, t in zip(kinds, types)):
            raise AssertionError("Incorrect types for input modules: " + " and ".join(k.__name__ for k in kinds))
        _FusedModule.__init__(self, *mods)

    # the constructor's named parameters, as in torch (e.g. ConvBnReLU2d(conv, bn, relu))
    __init__.__doc__ = f"Args: {', '.join(p.lower() for p in parts)}: the modules to run in a row."
    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


def _doc(parts):
    return (f"A sequential container calling {', '.join(parts[:-1])} and {parts[-1]}; during quantization "
            "it is replaced with the corresponding fused quantized module.")


_PATTERNS = {
    "ConvReLU1d": ("Conv1d", "ReLU"), "ConvReLU2d": ("Conv2d", "ReLU"), "ConvReLU3d": ("Conv3d", "ReLU"),
    "LinearReLU": ("Linear", "ReLU"), "ConvBn1d": ("Conv1d", "BatchNorm1d"), "ConvBn2d": ("Conv2d", "BatchNorm2d"),
    "ConvBn3d": ("Conv3d", "BatchNorm3d"), "ConvBnReLU1d": ("Conv1d", "BatchNorm1d", "ReLU"),
    "ConvBnReLU2d": ("Conv2d", "BatchNorm2d", "ReLU"), "ConvBnReLU3d": ("Conv3d", "BatchNorm3d", "ReLU"),
    "BNReLU2d": ("BatchNorm2d", "ReLU"), "BNReLU3d": ("BatchNorm3d", "ReLU"), "LinearBn1d": ("Linear", "BatchNorm1d"),
}
for _name, _parts in _PATTERNS.items():
    globals()[_name] = _fused(_name, _parts, _doc(_parts))
LinearLeakyReLU = _fused("LinearLeakyReLU", ("Linear", "LeakyReLU"), _doc(("Linear", "LeakyReLU")), exact=True)
LinearTanh = _fused("LinearTanh", ("Linear", "Tanh"), _doc(("Linear", "Tanh")), exact=True)


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
