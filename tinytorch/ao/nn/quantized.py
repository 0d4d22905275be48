"""``torch.ao.nn.quantized``: ``FloatFunctional`` and ``FXFloatFunctional``, the float-model modules a
quantizable model uses for its additions, multiplications and concatenations (torchvision's quantizable
ResNet, MobileNet, ShuffleNet build them). The quantized layers themselves (Conv2d, Linear, Quantize ...) run
quantized kernels, which tinytorch does not have, and are not provided.
Source: torch/ao/nn/quantized/modules/functional_modules.py (PyTorch 2.13).
"""
from ..._ops.shape import cat as _cat
from ...nn import Identity, Module
from ...nn.functional import relu as _relu


def _add(x, y):
    return x.add(y)


def _mul(x, y):
    return x.mul(y)

__all__ = ["FloatFunctional", "FXFloatFunctional"]


class FloatFunctional(Module):
    """The float operations of a quantizable model as a module, so quantization can observe their outputs:
    ``add``, ``add_scalar``, ``mul``, ``mul_scalar``, ``cat``, ``add_relu``, ``matmul``, each the ``torch``
    operation followed by ``activation_post_process`` (an Identity until an observer is attached; the
    ``_scalar`` ones are not observed). Calling the module itself raises RuntimeError, as in PyTorch.

    Examples::

        >>> f = FloatFunctional()
        >>> f.add(torch.tensor(3.0), torch.tensor(4.0))
        tensor(7.)
    """

    def __init__(self):
        super().__init__()
        self.activation_post_process = Identity()

    def forward(self, x):
        """Not callable: use the operation methods."""
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        """``torch.add(x, y)``, observed."""
        return self.activation_post_process(_add(x, y))

    def add_scalar(self, x, y):
        """``torch.add(x, y)`` with a Python number ``y``."""
        return _add(x, y)

    def mul(self, x, y):
        """``torch.mul(x, y)``, observed."""
        return self.activation_post_process(_mul(x, y))

    def mul_scalar(self, x, y):
        """``torch.mul(x, y)`` with a Python number ``y``."""
        return _mul(x, y)

    def cat(self, x, dim=0):
        """``torch.cat(x, dim)``, observed."""
        return self.activation_post_process(_cat(x, dim=dim))

    def add_relu(self, x, y):
        """``relu(x + y)``, observed."""
        return self.activation_post_process(_relu(_add(x, y)))

    def matmul(self, x, y):
        """``torch.matmul(x, y)``, observed."""
        return self.activation_post_process(x.matmul(y))


class FXFloatFunctional(Module):
    """FloatFunctional without ``activation_post_process`` (FX graph mode puts observers at the top level):
    ``add``, ``add_scalar``, ``mul``, ``mul_scalar``, ``cat``, ``add_relu``, ``matmul``."""

    def forward(self, x):
        """Not callable: use the operation methods."""
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        """``torch.add(x, y)``."""
        return _add(x, y)

    def add_scalar(self, x, y):
        """``torch.add(x, y)`` with a Python number ``y``."""
        return _add(x, y)

    def mul(self, x, y):
        """``torch.mul(x, y)``."""
        return _mul(x, y)

    def mul_scalar(self, x, y):
        """``torch.mul(x, y)`` with a Python number ``y``."""
        return _mul(x, y)

    def cat(self, x, dim=0):
        """``torch.cat(x, dim)``."""
        return _cat(x, dim=dim)

    def add_relu(self, x, y):
        """``relu(x + y)``."""
        return _relu(_add(x, y))

    def matmul(self, x, y):
        """``torch.matmul(x, y)``."""
        return x.matmul(y)
