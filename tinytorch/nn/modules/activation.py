"""Activation modules (PyTorch's ``torch.nn.modules.activation``): each applies the ``F`` function of the same
name elementwise (or along ``dim`` for the softmax family), with PyTorch's constructor signature, attributes
and ``extra_repr``. A misspelt or extra constructor argument raises TypeError, as in PyTorch."""
import warnings

from ..._ops.creation import empty
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
           "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
           "Softshrink", "MultiheadAttention", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d",
           "LogSoftmax"]


def _inplace_str(inplace, lead=", "):
    return f"{lead}inplace=True" if inplace else ""


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value`` (``torch.nn.Threshold``); any shape, the input's dtype."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class ReLU(Module):
    """``max(x, 0)`` elementwise (``torch.nn.ReLU``); ``inplace`` overwrites the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class RReLU(Module):
    """Randomized leaky ReLU: random negative slopes ~ U(lower, upper) in training, their mean in eval
    (``torch.nn.RReLU``)."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]`` (``torch.nn.Hardtanh``); integer inputs stay integer.

    ``min_value`` / ``max_value`` are PyTorch's deprecated spellings (FutureWarning). AssertionError (PyTorch's
    type) unless ``max_val > min_val``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` (``torch.nn.ReLU6``)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise (``torch.nn.Sigmoid``)."""

    def forward(self, input):
        return F.sigmoid(input)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6`` (``torch.nn.Hardsigmoid``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    """Hyperbolic tangent elementwise (``torch.nn.Tanh``)."""

    def forward(self, input):
        return F.tanh(input)


class SiLU(Module):
    """``x * sigmoid(x)`` (swish) (``torch.nn.SiLU``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Mish(Module):
    """``x * tanh(softplus(x))`` (``torch.nn.Mish``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Hardswish(Module):
    """``x * relu6(x + 3) / 6`` (``torch.nn.Hardswish``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class ELU(Module):
    """``x`` for x > 0 else ``alpha * (exp(x) - 1)`` (``torch.nn.ELU``)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``torch.nn.CELU``)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class SELU(Module):
    """Scaled ELU with the self-normalizing constants (``torch.nn.SELU``)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class GLU(Module):
    """Gated linear unit: halves ``a, b`` of ``dim`` -> ``a * sigmoid(b)`` (``torch.nn.GLU``)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit, exact (``'none'``) or ``'tanh'``-approximated (``torch.nn.GELU``)."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0 (``torch.nn.Hardshrink``)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    """``x`` for x > 0 else ``negative_slope * x`` (``torch.nn.LeakyReLU``)."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class LogSigmoid(Module):
    """``log(sigmoid(x))`` computed stably (``torch.nn.LogSigmoid``)."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (``torch.nn.Softplus``)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0 (``torch.nn.Softshrink``)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """``max(0, x) + a * min(0, x)`` with a learned slope ``a`` (one, or one per channel), initialised to
    ``init`` (``torch.nn.PReLU``); the output has the input's shape (a 0-d input gives a 0-d output)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype).fill_(init))

    def reset_parameters(self):
        from ...autograd.grad_mode import no_grad
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)`` (``torch.nn.Softsign``)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)`` (``torch.nn.Tanhshrink``)."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        # modules pickled before ``dim`` existed load with dim=None, as in PyTorch
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """``softmax(-x)`` along ``dim`` (``torch.nn.Softmin``); dim=None picks PyTorch's legacy implicit dim."""
    _fn = staticmethod(F.softmin)

    def __init__(self, dim=None):
        super().__init__(dim)


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x))`` along ``dim`` (``torch.nn.Softmax``); dim=None picks PyTorch's legacy implicit
    dim."""
    _fn = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__(dim)


class LogSoftmax(_SoftmaxBase):
    """``log(softmax(x))`` along ``dim``, computed stably (``torch.nn.LogSoftmax``)."""
    _fn = staticmethod(F.log_softmax)

    def __init__(self, dim=None):
        super().__init__(dim)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) (``torch.nn.Softmax2d``); ValueError
    for other ranks."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


from .transformer import MultiheadAttention  # noqa: E402  (PyTorch defines it in this module)
