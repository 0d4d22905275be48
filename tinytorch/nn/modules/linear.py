"""Linear, Bilinear, Identity (PyTorch's ``torch.nn.modules.linear``)."""
import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, _placeholders
from .module import Module


class Identity(Module):
    r"""Returns its input: a placeholder where a model expects a module (for instance to strip a classifier
    head), taking and ignoring any constructor arguments.

    Args:
        args, kwargs: ignored.

    Shape:
        - Input: :math:`(*)`, any shape.
        - Output: the input itself.

    Examples::

        >>> m = nn.Identity(54, unused_argument=0.1)
        >>> x = torch.randn(2, 3)
        >>> m(x) is x
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    r"""``y = x W^T + b``. Input (*, in_features) -> (*, out_features).

    Weight and bias are initialised U(-1/sqrt(in), 1/sqrt(in)) as in PyTorch.

    Args:
        in_features (int): the size of each input's last dim.
        out_features (int): the size of each output's last dim.
        bias (bool): learn the additive bias ``b``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(*, H_{in})`, :math:`H_{in} = \text{in\_features}`.
        - Output: :math:`(*, H_{out})`, :math:`H_{out} = \text{out\_features}`.

    Examples::

        >>> m = nn.Linear(20, 30)
        >>> m(torch.randn(128, 20)).shape
        torch.Size([128, 30])
        >>> m.weight.shape, m.bias.shape
        (torch.Size([30, 20]), torch.Size([30]))
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        self.bias = Parameter(empty(out_features, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    r"""``y = x1^T A x2 + b``: each output feature k is ``sum_ij x1[i] A[k, i, j] x2[j] + b[k]`` (``F.bilinear``).
    Weight and bias are initialised U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as in PyTorch.

    Args:
        in1_features (int): the size of the first input's last dim.
        in2_features (int): the size of the second input's last dim.
        out_features (int): the size of the output's last dim.
        bias (bool): learn the additive bias.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input1: :math:`(*, H_{in1})`.
        - Input2: :math:`(*, H_{in2})`, the same leading dims.
        - Output: :math:`(*, H_{out})`.

    Examples::

        >>> m = nn.Bilinear(20, 30, 40)
        >>> m(torch.randn(128, 20), torch.randn(128, 30)).shape
        torch.Size([128, 40])
    """
    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        self.bias = Parameter(empty(out_features, device=device, dtype=dtype)) if bias else None
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name torch gives ``MultiheadAttention.out_proj`` (a marker for its quantization
    tooling; it behaves exactly as Linear)."""


class LazyLinear(LazyModuleMixin, Module):
    r"""``nn.Linear`` whose ``in_features`` is the last dim of the first input. Until then weight and bias are
    uninitialized placeholders; the first call creates them and turns the module into a ``Linear``.

    Args:
        out_features (int): the size of each output's last dim.
        bias (bool): learn the additive bias.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(*, H_{in})`, any :math:`H_{in}`.
        - Output: :math:`(*, \text{out\_features})`.

    Examples::

        >>> m = nn.LazyLinear(10)
        >>> m(torch.randn(3, 7)).shape
        torch.Size([3, 10])
        >>> type(m).__name__, m.in_features
        ('Linear', 7)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = 0, out_features
        self._lazy = ((out_features, bias), dict(device=device, dtype=dtype))
        _placeholders(self, ["weight"] + (["bias"] if bias else []), [], dict(device=device, dtype=dtype))
        if not bias:
            self.bias = None

    def initialize_parameters(self, input):
        args, kw = self._lazy
        self._become(Linear(input.shape[-1], *args, **kw))

    forward = Linear.forward  # runs only after the module became a Linear; shows Linear's signature

    def extra_repr(self):
        return f"in_features=0, out_features={self.out_features}, bias={self.bias is not None}"
