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
    r"""``x`` where ``x > threshold``, else ``value`` (``torch.nn.Threshold``); any shape, the input's dtype.

    Args:
        threshold (float): the value to compare with.
        value (float): what replaces the elements not above it.
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Threshold(0.1, 20.)(torch.tensor([-2., -0.5, 0., 0.5, 2.]))
        tensor([20.0000, 20.0000, 20.0000,  0.5000,  2.0000])
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class ReLU(Module):
    r"""``max(x, 0)`` elementwise (``torch.nn.ReLU``); ``inplace`` overwrites the input.

    From Nair & Hinton 2010, "Rectified Linear Units Improve Restricted Boltzmann Machines".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.ReLU()(torch.tensor([-2., -0.5, 0., 0.5, 2.]))
        tensor([0.0000, 0.0000, 0.0000, 0.5000, 2.0000])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class RReLU(Module):
    r"""Randomized leaky ReLU: random negative slopes ~ U(lower, upper) in training, their mean in eval
    (``torch.nn.RReLU``).

    From Xu et al. 2015, "Empirical Evaluation of Rectified Activations in Convolutional Network".

    Args:
        lower (float): the lower bound of the slope distribution.
        upper (float): its upper bound.
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> m = nn.RReLU(0.1, 0.3)
        >>> m.eval()(torch.tensor([-1., 2.]))
        tensor([-0.2000,  2.0000])
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_str(self.inplace)}"


class Hardtanh(Module):
    r"""Clamp to ``[min_val, max_val]`` (``torch.nn.Hardtanh``); integer inputs stay integer.

    ``min_value`` / ``max_value`` are PyTorch's deprecated spellings (FutureWarning). AssertionError (PyTorch's
    type) unless ``max_val > min_val``.

    Args:
        min_val (float): the lower end of the linear region.
        max_val (float): its upper end.
        inplace (bool): write the result into the input.
        min_value, max_value (float, optional): deprecated names of ``min_val`` / ``max_val``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Hardtanh(-1., 1.)(torch.tensor([-2., -0.5, 0., 0.5, 2.]))
        tensor([-1.0000, -0.5000,  0.0000,  0.5000,  1.0000])
    """

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
    r"""``min(max(x, 0), 6)`` (``torch.nn.ReLU6``).

    From Krizhevsky 2010, "Convolutional Deep Belief Networks on CIFAR-10".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.ReLU6()(torch.tensor([-1., 3., 8.]))
        tensor([0., 3., 6.])
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Sigmoid(Module):
    r"""``1 / (1 + exp(-x))`` elementwise (``torch.nn.Sigmoid``).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Sigmoid()(torch.tensor([0., 2.]))
        tensor([0.5000, 0.8808])
    """

    def forward(self, input):
        return F.sigmoid(input)


class Hardsigmoid(Module):
    r"""``relu6(x + 3) / 6`` (``torch.nn.Hardsigmoid``): a piecewise-linear sigmoid.

    From Howard et al. 2019, "Searching for MobileNetV3".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Hardsigmoid()(torch.tensor([-4., 0., 1.5, 4.]))
        tensor([0.0000, 0.5000, 0.7500, 1.0000])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Tanh(Module):
    r"""Hyperbolic tangent elementwise (``torch.nn.Tanh``).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Tanh()(torch.tensor([0., 1.]))
        tensor([0.0000, 0.7616])
    """

    def forward(self, input):
        return F.tanh(input)


class SiLU(Module):
    r"""``x * sigmoid(x)`` (swish) (``torch.nn.SiLU``).

    From Elfwing et al. 2017, "Sigmoid-Weighted Linear Units for Neural Network Function Approximation in
    Reinforcement Learning"; Ramachandran et al. 2017, "Searching for Activation Functions".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.SiLU()(torch.tensor([-1., 0., 1.]))
        tensor([-0.2689,  0.0000,  0.7311])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Mish(Module):
    r"""``x * tanh(softplus(x))`` (``torch.nn.Mish``).

    From Misra 2019, "Mish: A Self Regularized Non-Monotonic Activation Function".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Mish()(torch.tensor([-1., 0., 1.]))
        tensor([-0.3034,  0.0000,  0.8651])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class Hardswish(Module):
    r"""``x * relu6(x + 3) / 6`` (``torch.nn.Hardswish``).

    From Howard et al. 2019, "Searching for MobileNetV3".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Hardswish()(torch.tensor([-4., -1., 0., 1., 4.]))
        tensor([-0.0000, -0.3333,  0.0000,  0.6667,  4.0000])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class ELU(Module):
    r"""``x`` for x > 0 else ``alpha * (exp(x) - 1)`` (``torch.nn.ELU``).

    From Clevert et al. 2015, "Fast and Accurate Deep Network Learning by Exponential Linear Units (ELUs)".

    Args:
        alpha (float): the value the negative side saturates to is ``-alpha``.
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.ELU()(torch.tensor([-1., 0., 1.]))
        tensor([-0.6321,  0.0000,  1.0000])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class CELU(Module):
    r"""``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (``torch.nn.CELU``).

    From Barron 2017, "Continuously Differentiable Exponential Linear Units".

    Args:
        alpha (float): the scale of the negative side.
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.CELU(alpha=2.)(torch.tensor([-1., 0., 1.]))
        tensor([-0.7869,  0.0000,  1.0000])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class SELU(Module):
    r"""Scaled ELU with the self-normalizing constants (``torch.nn.SELU``):
    ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))``, alpha ~ 1.6733 and scale ~ 1.0507.

    From Klambauer et al. 2017, "Self-Normalizing Neural Networks".

    Args:
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.SELU()(torch.tensor([-1., 0., 1.]))
        tensor([-1.1113,  0.0000,  1.0507])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, "")


class GLU(Module):
    r"""Gated linear unit: halves ``a, b`` of ``dim`` -> ``a * sigmoid(b)`` (``torch.nn.GLU``).

    From Dauphin et al. 2016, "Language Modeling with Gated Convolutional Networks".

    Args:
        dim (int): the dim split in half; its size must be even.

    Shape:
        - Input: :math:`(*_1, M, *_2)`, M (at ``dim``) even.
        - Output: :math:`(*_1, M / 2, *_2)`.

    Examples::

        >>> nn.GLU()(torch.tensor([[1., 2., 0., 100.]]))
        tensor([[0.5000, 2.0000]])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    r"""Gaussian error linear unit ``x * Phi(x)``, Phi the standard normal CDF, exact (``'none'``) or
    ``'tanh'``-approximated (``torch.nn.GELU``).

    From Hendrycks & Gimpel 2016, "Gaussian Error Linear Units (GELUs)".

    Args:
        approximate (str): ``'none'`` or ``'tanh'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> m = nn.GELU()
        >>> m(torch.tensor([-1., 0., 1.]))
        tensor([-0.1587,  0.0000,  0.8413])
        >>> nn.GELU(approximate='tanh')(torch.tensor([1.]))
        tensor([0.8412])
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    r"""``x`` where ``|x| > lambd``, else 0 (``torch.nn.Hardshrink``).

    Args:
        lambd (float): the threshold.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Hardshrink(0.5)(torch.tensor([-2., -0.5, 0., 0.5, 2.]))
        tensor([-2.,  0.,  0.,  0.,  2.])
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class LeakyReLU(Module):
    r"""``x`` for x > 0 else ``negative_slope * x`` (``torch.nn.LeakyReLU``).

    From Maas, Hannun & Ng 2013, "Rectifier Nonlinearities Improve Neural Network Acoustic Models".

    Args:
        negative_slope (float): the slope of the negative side.
        inplace (bool): write the result into the input.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.LeakyReLU(0.1)(torch.tensor([-2., -0.5, 0., 0.5, 2.]))
        tensor([-0.2000, -0.0500,  0.0000,  0.5000,  2.0000])
    """

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class LogSigmoid(Module):
    r"""``log(sigmoid(x))`` computed stably (``torch.nn.LogSigmoid``).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.LogSigmoid()(torch.tensor([0., -100.]))
        tensor([  -0.6931, -100.0000])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    r"""``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (``torch.nn.Softplus``): a smooth
    ReLU.

    Args:
        beta (float): the sharpness.
        threshold (float): above it (in ``beta * x``) the identity is used, for stability.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Softplus()(torch.tensor([0., 1., 30.]))
        tensor([ 0.6931,  1.3133, 30.0000])
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    r"""``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0 (``torch.nn.Softshrink``).

    Args:
        lambd (float): the threshold (>= 0).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Softshrink(0.5)(torch.tensor([-2., -1., 0.25, 1., 2.]))
        tensor([-1.5000, -0.5000,  0.0000,  0.5000,  1.5000])
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    r"""``max(0, x) + a * min(0, x)`` with a learned slope ``a`` (one, or one per channel), initialised to
    ``init`` (``torch.nn.PReLU``); the output has the input's shape (a 0-d input gives a 0-d output).

    From He et al. 2015, "Delving Deep into Rectifiers: Surpassing Human-Level Performance on ImageNet
    Classification".

    Args:
        num_parameters (int): 1 (one slope shared by all channels) or the number of channels (dim 1).
        init (float): the initial slope.
        device, dtype: where and as what the slope is created.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> m = nn.PReLU()
        >>> m(torch.tensor([-2., 2.]))
        tensor([-0.5000,  2.0000], grad_fn=<...>)
        >>> nn.PReLU(3)(torch.randn(2, 3, 4)).shape
        torch.Size([2, 3, 4])
    """

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
    r"""``x / (1 + |x|)`` (``torch.nn.Softsign``).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Softsign()(torch.tensor([-3., 0., 1.]))
        tensor([-0.7500,  0.0000,  0.5000])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    r"""``x - tanh(x)`` (``torch.nn.Tanhshrink``).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Tanhshrink()(torch.tensor([0., 1.]))
        tensor([0.0000, 0.2384])
    """

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
    r"""``softmax(-x)`` along ``dim`` (``torch.nn.Softmin``); dim=None picks PyTorch's legacy implicit dim.

    Args:
        dim (int, optional): the dim whose slices sum to 1.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Softmin(dim=1)(torch.tensor([[1., 2., 3.]]))
        tensor([[0.6652, 0.2447, 0.0900]])
    """
    _fn = staticmethod(F.softmin)

    def __init__(self, dim=None):
        super().__init__(dim)


class Softmax(_SoftmaxBase):
    r"""``exp(x) / sum(exp(x))`` along ``dim`` (``torch.nn.Softmax``); dim=None picks PyTorch's legacy implicit
    dim.

    Args:
        dim (int, optional): the dim whose slices sum to 1.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.Softmax(dim=1)(torch.tensor([[1., 2., 3.]]))
        tensor([[0.0900, 0.2447, 0.6652]])
    """
    _fn = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__(dim)


class LogSoftmax(_SoftmaxBase):
    r"""``log(softmax(x))`` along ``dim``, computed stably (``torch.nn.LogSoftmax``).

    Args:
        dim (int, optional): the dim normalized over.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Output: :math:`(*)`, the input's shape.

    Examples::

        >>> nn.LogSoftmax(dim=1)(torch.tensor([[1., 2., 3.]]))
        tensor([[-2.4076, -1.4076, -0.4076]])
    """
    _fn = staticmethod(F.log_softmax)

    def __init__(self, dim=None):
        super().__init__(dim)


class Softmax2d(Module):
    r"""Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) (``torch.nn.Softmax2d``); ValueError
    for other ranks.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> nn.Softmax2d()(torch.zeros(1, 2, 1, 1)).flatten()
        tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


from .transformer import MultiheadAttention  # noqa: E402  (PyTorch defines it in this module)
