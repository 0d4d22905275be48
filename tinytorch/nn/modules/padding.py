r"""Padding modules (PyTorch's ``torch.nn.modules.padding``): each pads the last 1, 2 or 3 dims of its input with
``F.pad`` in one mode (constant / zeros, reflect, replicate, circular).

``padding`` is an int (the same amount on every side) or a tuple of ``2 * n`` ints, last dim first:
``(left, right)`` for 1-d, ``(left, right, top, bottom)`` for 2-d, ``(left, right, top, bottom, front, back)``
for 3-d.
"""
from .. import functional as F
from .module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


class _PadNd(Module):
    """What every padding module shares: ``_n`` padded dims, ``F.pad`` mode ``_mode``."""
    _n, _mode = 1, "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self._n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a {2 * self._n}-tuple")
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant" and not type(self).__name__.startswith("Zero"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _mode = "constant"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"


# ---- constant ---------------------------------------------------------------------------------------------
class ConstantPad1d(_ConstantPadNd):
    r"""Pads the last dim of the input with a constant ``value`` (``F.pad`` mode ``'constant'``).

    Args:
        padding (int or tuple): an int pads both sides by that amount; a 2-tuple is ``(left, right)``.
        value (float): the fill value.

    Shape:
        - Input: :math:`(C, W_{in})` or :math:`(N, C, W_{in})`.
        - Output: :math:`(C, W_{out})` or :math:`(N, C, W_{out})`, with
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ConstantPad1d((1, 2), 3.5)
        >>> m(torch.zeros(1, 2))
        tensor([[3.5000, 0.0000, 0.0000, 3.5000, 3.5000]])
    """
    _n = 1

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(_ConstantPadNd):
    r"""Pads the last two dims of the input with a constant ``value`` (``F.pad`` mode ``'constant'``).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 4-tuple is
            ``(left, right, top, bottom)``.
        value (float): the fill value.

    Shape:
        - Input: :math:`(C, H_{in}, W_{in})` or :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(C, H_{out}, W_{out})` or :math:`(N, C, H_{out}, W_{out})`, with
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ConstantPad2d((1, 0, 0, 1), -1.0)
        >>> m(torch.ones(1, 1, 1))
        tensor([[[-1.,  1.],
                 [-1., -1.]]])
    """
    _n = 2

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad3d(_ConstantPadNd):
    r"""Pads the last three dims of the input with a constant ``value`` (``F.pad`` mode ``'constant'``).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 6-tuple is
            ``(left, right, top, bottom, front, back)``.
        value (float): the fill value.

    Shape:
        - Input: :math:`(C, D_{in}, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(C, D_{out}, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`, with
          :math:`D_{out} = D_{in} + \text{front} + \text{back}`,
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ConstantPad3d(1, 0.5)
        >>> m(torch.ones(1, 2, 2, 2)).shape
        torch.Size([1, 4, 4, 4])
    """
    _n = 3

    def __init__(self, padding, value):
        super().__init__(padding, value)


# ---- zeros ------------------------------------------------------------------------------------------------
class ZeroPad1d(ConstantPad1d):
    r"""Pads the last dim of the input with zeros (``F.pad`` mode ``'constant'``, value 0).

    Args:
        padding (int or tuple): an int pads both sides by that amount; a 2-tuple is ``(left, right)``.

    Shape:
        - Input: :math:`(C, W_{in})` or :math:`(N, C, W_{in})`.
        - Output: :math:`(C, W_{out})` or :math:`(N, C, W_{out})`, with
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ZeroPad1d((2, 1))
        >>> m(torch.ones(1, 2))
        tensor([[0., 0., 1., 1., 0.]])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad2d(ConstantPad2d):
    r"""Pads the last two dims of the input with zeros (``F.pad`` mode ``'constant'``, value 0).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 4-tuple is
            ``(left, right, top, bottom)``.

    Shape:
        - Input: :math:`(C, H_{in}, W_{in})` or :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(C, H_{out}, W_{out})` or :math:`(N, C, H_{out}, W_{out})`, with
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ZeroPad2d((1, 1, 2, 0))
        >>> m(torch.ones(1, 1, 2, 2)).shape
        torch.Size([1, 1, 4, 4])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


class ZeroPad3d(ConstantPad3d):
    r"""Pads the last three dims of the input with zeros (``F.pad`` mode ``'constant'``, value 0).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 6-tuple is
            ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: :math:`(C, D_{in}, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(C, D_{out}, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`, with
          :math:`D_{out} = D_{in} + \text{front} + \text{back}`,
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ZeroPad3d((1, 1, 0, 0, 2, 0))
        >>> m(torch.ones(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 4, 2, 4])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)


# ---- reflection -------------------------------------------------------------------------------------------
class ReflectionPad1d(_ReflectionPadNd):
    r"""Pads the last dim of the input with its mirror image, the edge element not repeated (``F.pad`` mode
    ``'reflect'``); each pad must be smaller than the padded dim.

    Args:
        padding (int or tuple): an int pads both sides by that amount; a 2-tuple is ``(left, right)``.

    Shape:
        - Input: :math:`(C, W_{in})` or :math:`(N, C, W_{in})`.
        - Output: :math:`(C, W_{out})` or :math:`(N, C, W_{out})`, with
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReflectionPad1d(2)
        >>> m(torch.arange(4.).reshape(1, 1, 4))
        tensor([[[2., 1., 0., 1., 2., 3., 2., 1.]]])
    """
    _n = 1

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(_ReflectionPadNd):
    r"""Pads the last two dims of the input with their mirror image, the edge not repeated (``F.pad`` mode
    ``'reflect'``); each pad must be smaller than the padded dim.

    Args:
        padding (int or tuple): an int pads every side by that amount; a 4-tuple is
            ``(left, right, top, bottom)``.

    Shape:
        - Input: :math:`(C, H_{in}, W_{in})` or :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(C, H_{out}, W_{out})` or :math:`(N, C, H_{out}, W_{out})`, with
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReflectionPad2d((1, 1, 0, 0))
        >>> m(torch.arange(6.).reshape(1, 2, 3))
        tensor([[[1., 0., 1., 2., 1.],
                 [4., 3., 4., 5., 4.]]])
    """
    _n = 2

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad3d(_ReflectionPadNd):
    r"""Pads the last three dims of the input with their mirror image, the edge not repeated (``F.pad`` mode
    ``'reflect'``); each pad must be smaller than the padded dim.

    Args:
        padding (int or tuple): an int pads every side by that amount; a 6-tuple is
            ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: :math:`(C, D_{in}, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(C, D_{out}, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`, with
          :math:`D_{out} = D_{in} + \text{front} + \text{back}`,
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReflectionPad3d(1)
        >>> m(torch.randn(1, 1, 2, 3, 3)).shape
        torch.Size([1, 1, 4, 5, 5])
    """
    _n = 3

    def __init__(self, padding):
        super().__init__(padding)


# ---- replication ------------------------------------------------------------------------------------------
class ReplicationPad1d(_ReplicationPadNd):
    r"""Pads the last dim of the input by repeating its edge elements (``F.pad`` mode ``'replicate'``).

    Args:
        padding (int or tuple): an int pads both sides by that amount; a 2-tuple is ``(left, right)``.

    Shape:
        - Input: :math:`(C, W_{in})` or :math:`(N, C, W_{in})`.
        - Output: :math:`(C, W_{out})` or :math:`(N, C, W_{out})`, with
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReplicationPad1d((1, 2))
        >>> m(torch.tensor([[[1., 2., 3.]]]))
        tensor([[[1., 1., 2., 3., 3., 3.]]])
    """
    _n = 1

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad2d(_ReplicationPadNd):
    r"""Pads the last two dims of the input by repeating its edge rows and columns (``F.pad`` mode
    ``'replicate'``).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 4-tuple is
            ``(left, right, top, bottom)``.

    Shape:
        - Input: :math:`(C, H_{in}, W_{in})` or :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(C, H_{out}, W_{out})` or :math:`(N, C, H_{out}, W_{out})`, with
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReplicationPad2d((0, 1, 1, 0))
        >>> m(torch.tensor([[[1., 2.], [3., 4.]]]))
        tensor([[[1., 2., 2.],
                 [1., 2., 2.],
                 [3., 4., 4.]]])
    """
    _n = 2

    def __init__(self, padding):
        super().__init__(padding)


class ReplicationPad3d(_ReplicationPadNd):
    r"""Pads the last three dims of the input by repeating its edge planes (``F.pad`` mode ``'replicate'``).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 6-tuple is
            ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: :math:`(C, D_{in}, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(C, D_{out}, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`, with
          :math:`D_{out} = D_{in} + \text{front} + \text{back}`,
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.ReplicationPad3d(2)
        >>> m(torch.randn(1, 1, 1, 2, 2)).shape
        torch.Size([1, 1, 5, 6, 6])
    """
    _n = 3

    def __init__(self, padding):
        super().__init__(padding)


# ---- circular ---------------------------------------------------------------------------------------------
class CircularPad1d(_CircularPadNd):
    r"""Pads the last dim of the input by wrapping it around, the left pad taken from the right end and the
    right pad from the left end (``F.pad`` mode ``'circular'``).

    Args:
        padding (int or tuple): an int pads both sides by that amount; a 2-tuple is ``(left, right)``.

    Shape:
        - Input: :math:`(C, W_{in})` or :math:`(N, C, W_{in})`.
        - Output: :math:`(C, W_{out})` or :math:`(N, C, W_{out})`, with
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.CircularPad1d((1, 2))
        >>> m(torch.tensor([[[1., 2., 3.]]]))
        tensor([[[3., 1., 2., 3., 1., 2.]]])
    """
    _n = 1

    def __init__(self, padding):
        super().__init__(padding)


class CircularPad2d(_CircularPadNd):
    r"""Pads the last two dims of the input by wrapping them around (``F.pad`` mode ``'circular'``), as a
    periodic boundary.

    Args:
        padding (int or tuple): an int pads every side by that amount; a 4-tuple is
            ``(left, right, top, bottom)``.

    Shape:
        - Input: :math:`(C, H_{in}, W_{in})` or :math:`(N, C, H_{in}, W_{in})`.
        - Output: :math:`(C, H_{out}, W_{out})` or :math:`(N, C, H_{out}, W_{out})`, with
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.CircularPad2d((1, 0, 1, 0))
        >>> m(torch.tensor([[[1., 2.], [3., 4.]]]))
        tensor([[[4., 3., 4.],
                 [2., 1., 2.],
                 [4., 3., 4.]]])
    """
    _n = 2

    def __init__(self, padding):
        super().__init__(padding)


class CircularPad3d(_CircularPadNd):
    r"""Pads the last three dims of the input by wrapping them around (``F.pad`` mode ``'circular'``).

    Args:
        padding (int or tuple): an int pads every side by that amount; a 6-tuple is
            ``(left, right, top, bottom, front, back)``.

    Shape:
        - Input: :math:`(C, D_{in}, H_{in}, W_{in})` or :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(C, D_{out}, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`, with
          :math:`D_{out} = D_{in} + \text{front} + \text{back}`,
          :math:`H_{out} = H_{in} + \text{top} + \text{bottom}` and
          :math:`W_{out} = W_{in} + \text{left} + \text{right}`.

    Examples::

        >>> m = nn.CircularPad3d(1)
        >>> m(torch.randn(1, 1, 2, 2, 2)).shape
        torch.Size([1, 1, 4, 4, 4])
    """
    _n = 3

    def __init__(self, padding):
        super().__init__(padding)
