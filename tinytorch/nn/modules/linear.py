"""Linear, Bilinear, Identity, Flatten, Unflatten."""
import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b``. Input (*, in_features) -> (*, out_features).

    Weight and bias are initialised U(-1/sqrt(in), 1/sqrt(in)) as in PyTorch.
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


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` (default: all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class NonDynamicallyQuantizableLinear(Linear):
    """``Linear`` under the name torch gives ``MultiheadAttention.out_proj`` (a marker for its quantization
    tooling; it behaves exactly as Linear)."""


def __getattr__(name):
    # PyTorch defines LazyLinear in this module; ours lives in ``lazy`` (which imports this module), so it is
    # looked up on first access instead of imported at the top
    if name == "LazyLinear":
        from .lazy import LazyLinear
        return LazyLinear
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
