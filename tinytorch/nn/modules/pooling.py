"""Pooling modules (PyTorch's ``torch.nn.modules.pooling``): max, average, adaptive, fractional, power-average
pooling and max unpooling."""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d",
           "AvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d"]


class _Pool(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_Pool):
    r"""Max over sliding windows of the last dim of (N, C, L) or (C, L) (``F.max_pool1d``).

    Args:
        kernel_size (int or tuple): the window length.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit ``-inf`` padding added on both sides.
        dilation (int or tuple): the spacing between the elements of a window.
        return_indices (bool): also return the flat indices of the maxima (what ``nn.MaxUnpool1d`` takes).
        ceil_mode (bool): round the output length up instead of down, so a partial last window is kept.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`, with
          :math:`L_{out} = \lfloor (L_{in} + 2 \cdot \text{padding} - \text{dilation} \cdot (\text{kernel\_size} - 1)
          - 1) / \text{stride} + 1 \rfloor` (the ceiling with ``ceil_mode``).

    Examples::

        >>> m = nn.MaxPool1d(2)
        >>> m(torch.tensor([[[1., 3., 2., 5., 4.]]]))
        tensor([[[3., 5.]]])
    """
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class MaxPool2d(_Pool):
    r"""Max over kh x kw windows of (N, C, H, W) or (C, H, W) (``F.max_pool2d``).

    Args:
        kernel_size (int or tuple): the window size; an int is used for both dims.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit ``-inf`` padding added on both sides of each dim.
        dilation (int or tuple): the spacing between the elements of a window.
        return_indices (bool): also return the flat (per-plane) indices of the maxima, for ``nn.MaxUnpool2d``.
        ceil_mode (bool): round the output size up instead of down, so partial last windows are kept.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, each size
          :math:`\lfloor (S_{in} + 2 p - d (k - 1) - 1) / s + 1 \rfloor` for that dim's padding, dilation, kernel
          size and stride (the ceiling with ``ceil_mode``).

    Examples::

        >>> m = nn.MaxPool2d(2)
        >>> m(torch.arange(16.).reshape(1, 1, 4, 4))
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
        >>> nn.MaxPool2d(3, stride=2, padding=1)(torch.randn(2, 3, 8, 8)).shape
        torch.Size([2, 3, 4, 4])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class MaxPool3d(_Pool):
    r"""Max over kd x kh x kw windows of (N, C, D, H, W) or (C, D, H, W) (``F.max_pool3d``).

    Args:
        kernel_size (int or tuple): the window size; an int is used for all three dims.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit ``-inf`` padding added on both sides of each dim.
        dilation (int or tuple): the spacing between the elements of a window.
        return_indices (bool): also return the flat (per-volume) indices of the maxima, for ``nn.MaxUnpool3d``.
        ceil_mode (bool): round the output size up instead of down.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})`, each size
          :math:`\lfloor (S_{in} + 2 p - d (k - 1) - 1) / s + 1 \rfloor`.

    Examples::

        >>> m = nn.MaxPool3d(2)
        >>> m(torch.randn(1, 2, 4, 4, 6)).shape
        torch.Size([1, 2, 2, 2, 3])
    """

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class _MaxUnpoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    r"""Partial inverse of ``nn.MaxPool1d``: puts each value back at the index its maximum came from and
    zeros elsewhere. ``forward(input, indices, output_size=None)``; see ``F.max_unpool1d``.

    Args:
        kernel_size (int or tuple): the window length of the pooling being inverted.
        stride (int or tuple, optional): its stride; ``kernel_size`` when None.
        padding (int or tuple): its padding.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`; ``indices`` has the same shape.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`, with
          :math:`L_{out} = (L_{in} - 1) \cdot \text{stride} - 2 \cdot \text{padding} + \text{kernel\_size}`, or
          ``output_size`` when given.

    Examples::

        >>> pool, unpool = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
        >>> out, idx = pool(torch.tensor([[[1., 3., 2., 5.]]]))
        >>> unpool(out, idx)
        tensor([[[0., 3., 0., 5.]]])
    """

    def forward(self, input, indices, output_size=None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    r"""Partial inverse of ``nn.MaxPool2d``: puts each value back at the index its maximum came from and
    zeros elsewhere. ``forward(input, indices, output_size=None)``; see ``F.max_unpool2d``.

    Args:
        kernel_size (int or tuple): the window size of the pooling being inverted.
        stride (int or tuple, optional): its stride; ``kernel_size`` when None.
        padding (int or tuple): its padding.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`; ``indices`` has the same shape.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, each size
          :math:`(S_{in} - 1) s - 2 p + k`, or ``output_size`` when given (to undo a pooling that dropped a
          remainder).

    Examples::

        >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        >>> out, idx = pool(torch.arange(16.).reshape(1, 1, 4, 4))
        >>> unpool(out, idx)
        tensor([[[[ 0.,  0.,  0.,  0.],
                  [ 0.,  5.,  0.,  7.],
                  [ 0.,  0.,  0.,  0.],
                  [ 0., 13.,  0., 15.]]]])
    """

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    r"""Partial inverse of ``nn.MaxPool3d``: puts each value back at the index its maximum came from and
    zeros elsewhere. ``forward(input, indices, output_size=None)``; see ``F.max_unpool3d``.

    Args:
        kernel_size (int or tuple): the window size of the pooling being inverted.
        stride (int or tuple, optional): its stride; ``kernel_size`` when None.
        padding (int or tuple): its padding.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`; ``indices`` has
          the same shape.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})`, each size
          :math:`(S_{in} - 1) s - 2 p + k`, or ``output_size`` when given.

    Examples::

        >>> pool, unpool = nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)
        >>> out, idx = pool(torch.randn(1, 1, 4, 4, 4))
        >>> unpool(out, idx).shape
        torch.Size([1, 1, 4, 4, 4])
    """

    def forward(self, input, indices, output_size=None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class AvgPool2d(Module):
    r"""Mean over kh x kw windows of (N, C, H, W) or (C, H, W) (``F.avg_pool2d``).

    Args:
        kernel_size (int or tuple): the window size; an int is used for both dims.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit zero padding added on both sides of each dim.
        ceil_mode (bool): round the output size up instead of down.
        count_include_pad (bool): count the padding zeros in the divisor of each mean.
        divisor_override (int, optional): divide every window sum by this instead of the window size.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, each size
          :math:`\lfloor (S_{in} + 2 p - k) / s + 1 \rfloor` (the ceiling with ``ceil_mode``).

    Examples::

        >>> m = nn.AvgPool2d(2)
        >>> m(torch.arange(16.).reshape(1, 1, 4, 4))
        tensor([[[[ 2.5000,  4.5000],
                  [10.5000, 12.5000]]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(AvgPool2d):
    r"""Mean over sliding windows of the last dim of (N, C, L) or (C, L) (``F.avg_pool1d``); sizes are
    kept as 1-tuples, as torch.

    Args:
        kernel_size (int or tuple): the window length.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit zero padding added on both sides.
        ceil_mode (bool): round the output length up instead of down.
        count_include_pad (bool): count the padding zeros in the divisor of each mean.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`, with
          :math:`L_{out} = \lfloor (L_{in} + 2 \cdot \text{padding} - \text{kernel\_size}) / \text{stride} + 1 \rfloor`.

    Examples::

        >>> m = nn.AvgPool1d(2)
        >>> m(torch.tensor([[[1., 3., 2., 6.]]]))
        tensor([[[2., 4.]]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        one = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
        super().__init__(one(kernel_size), one(stride if stride is not None else kernel_size), one(padding),
                         ceil_mode, count_include_pad)

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool3d(AvgPool2d):
    r"""Mean over kd x kh x kw windows of (N, C, D, H, W) or (C, D, H, W) (``F.avg_pool3d``).

    Args:
        kernel_size (int or tuple): the window size; an int is used for all three dims.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        padding (int or tuple): implicit zero padding added on both sides of each dim.
        ceil_mode (bool): round the output size up instead of down.
        count_include_pad (bool): count the padding zeros in the divisor of each mean.
        divisor_override (int, optional): divide every window sum by this instead of the window size.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})`, each size
          :math:`\lfloor (S_{in} + 2 p - k) / s + 1 \rfloor`.

    Examples::

        >>> m = nn.AvgPool3d(2)
        >>> m(torch.ones(1, 1, 2, 4, 4))
        tensor([[[[[1., 1.],
                   [1., 1.]]]]])
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class FractionalMaxPool2d(Module):
    r"""Fractional max pooling of (N, C, H, W) or (C, H, W) to ``output_size`` or ``output_ratio`` of
    the input size, with new pseudo-random window starts per call (Graham 2014, "Fractional Max-Pooling"). See
    ``F.fractional_max_pool2d``.

    Args:
        kernel_size (int or tuple): the window size.
        output_size (int or tuple, optional): the output height and width.
        output_ratio (float or tuple, optional): the output size as a fraction in (0, 1) of the input size; give
            exactly one of ``output_size`` and ``output_ratio``.
        return_indices (bool): also return the flat indices of the maxima.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, with
          :math:`(H_{out}, W_{out})` = ``output_size``, or ``floor(output_ratio * (H_in, W_in))``.

    Examples::

        >>> m = nn.FractionalMaxPool2d(2, output_size=(5, 4))
        >>> m(torch.randn(1, 3, 9, 8)).shape
        torch.Size([1, 3, 5, 4])
    """
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{self._nd}d requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            for r in F._pair(output_ratio, self._nd):
                if not 0 < r < 1:
                    raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    r"""Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) to ``output_size`` or
    ``output_ratio`` of the input size, new pseudo-random window starts per call (Graham 2014). See
    ``F.fractional_max_pool3d``.

    Args:
        kernel_size (int or tuple): the window size.
        output_size (int or tuple, optional): the output depth, height and width.
        output_ratio (float or tuple, optional): the output size as a fraction in (0, 1) of the input size; give
            exactly one of ``output_size`` and ``output_ratio``.
        return_indices (bool): also return the flat indices of the maxima.

    Shape:
        - Input: :math:`(N, C, T_{in}, H_{in}, W_{in})` or :math:`(C, T_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, T_{out}, H_{out}, W_{out})` or :math:`(C, T_{out}, H_{out}, W_{out})`.

    Examples::

        >>> m = nn.FractionalMaxPool3d(2, output_ratio=0.5)
        >>> m(torch.randn(1, 2, 8, 8, 8)).shape
        torch.Size([1, 2, 4, 4, 4])
    """
    _nd = 3


class LPPool1d(Module):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over windows of (N, C, L) or (C, L) (``F.lp_pool1d``):
    p = 1 is sum pooling, p = infinity max pooling.

    Args:
        norm_type (float): the power p.
        kernel_size (int): the window length.
        stride (int, optional): the step between windows; ``kernel_size`` when None.
        ceil_mode (bool): round the output length up instead of down.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`, with
          :math:`L_{out} = \lfloor (L_{in} - \text{kernel\_size}) / \text{stride} + 1 \rfloor`.

    Examples::

        >>> m = nn.LPPool1d(2, 2)
        >>> m(torch.tensor([[[3., 4., 6., 8.]]]))
        tensor([[[ 5., 10.]]])
    """

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, " \
               f"ceil_mode={self.ceil_mode}"


class LPPool2d(LPPool1d):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over kh x kw windows of (N, C, H, W) or (C, H, W)
    (``F.lp_pool2d``).

    Args:
        norm_type (float): the power p.
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        ceil_mode (bool): round the output size up instead of down.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`, each size
          :math:`\lfloor (S_{in} - k) / s + 1 \rfloor`.

    Examples::

        >>> m = nn.LPPool2d(1, 2)
        >>> m(torch.ones(1, 1, 4, 4))
        tensor([[[[4., 4.],
                  [4., 4.]]]])
    """

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(LPPool1d):
    r"""Power-average pooling ``(sum x^p)^(1/p)`` over kd x kh x kw windows of (N, C, D, H, W) or
    (C, D, H, W) (``F.lp_pool3d``).

    Args:
        norm_type (float): the power p.
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): the step between windows; ``kernel_size`` when None.
        ceil_mode (bool): round the output size up instead of down.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})`.

    Examples::

        >>> m = nn.LPPool3d(2, 2)
        >>> m(torch.rand(1, 1, 4, 4, 4)).shape
        torch.Size([1, 1, 2, 2, 2])
    """

    def forward(self, input):
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class AdaptiveAvgPool2d(Module):
    r"""Average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (int or pair; None keeps that
    size), whatever the input size (``F.adaptive_avg_pool2d``).

    Args:
        output_size (int or tuple): the output height and width; an int for both, None in a pair keeps that dim.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})` = ``output_size``.

    Examples::

        >>> m = nn.AdaptiveAvgPool2d(1)
        >>> m(torch.arange(8.).reshape(1, 2, 2, 2)).flatten(1)
        tensor([[1.5000, 5.5000]])
        >>> nn.AdaptiveAvgPool2d((None, 3))(torch.randn(1, 4, 5, 7)).shape
        torch.Size([1, 4, 5, 3])
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    r"""Average pooling of (N, C, L) or (C, L) to ``output_size`` positions, whatever the input length
    (``F.adaptive_avg_pool1d``): window i spans ``[floor(i L / out), ceil((i + 1) L / out))``.

    Args:
        output_size (int): the output length.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, \text{output\_size})` or :math:`(C, \text{output\_size})`.

    Examples::

        >>> m = nn.AdaptiveAvgPool1d(2)
        >>> m(torch.tensor([[[1., 2., 3., 4., 5., 6.]]]))
        tensor([[[2., 5.]]])
    """
    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    r"""Average pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size``, whatever the input size
    (``F.adaptive_avg_pool3d``).

    Args:
        output_size (int or tuple): the output depth, height and width; an int for all three, None in a triple
            keeps that dim.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})` =
          ``output_size``.

    Examples::

        >>> m = nn.AdaptiveAvgPool3d((1, 2, 2))
        >>> m(torch.randn(2, 3, 4, 6, 6)).shape
        torch.Size([2, 3, 1, 2, 2])
    """

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    r"""Max pooling of (N, C, H, W) or (C, H, W) to ``output_size``, whatever the input size
    (``F.adaptive_max_pool2d``); ``return_indices`` also returns the flat indices of the maxima.

    Args:
        output_size (int or tuple): the output height and width; an int for both, None in a pair keeps that dim.
        return_indices (bool): also return the flat (per-plane) indices of the maxima.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})` = ``output_size``.

    Examples::

        >>> m = nn.AdaptiveMaxPool2d(1)
        >>> m(torch.arange(8.).reshape(1, 2, 2, 2)).flatten(1)
        tensor([[3., 7.]])
    """

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    r"""1-D adaptive max pooling of (N, C, L) or (C, L) to ``output_size`` positions
    (``F.adaptive_max_pool1d``); ``return_indices`` also returns the flat indices of the maxima.

    Args:
        output_size (int): the output length.
        return_indices (bool): also return the indices of the maxima.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, \text{output\_size})` or :math:`(C, \text{output\_size})`.

    Examples::

        >>> m = nn.AdaptiveMaxPool1d(2)
        >>> m(torch.tensor([[[1., 7., 3., 4., 9., 2.]]]))
        tensor([[[7., 9.]]])
    """

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    r"""Max pooling of (N, C, D, H, W) or (C, D, H, W) to ``output_size``, whatever the input size
    (``F.adaptive_max_pool3d``).

    Args:
        output_size (int or tuple): the output depth, height and width; an int for all three, None in a triple
            keeps that dim.
        return_indices (bool): also return the flat (per-volume) indices of the maxima.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or :math:`(C, D_{out}, H_{out}, W_{out})` =
          ``output_size``.

    Examples::

        >>> m = nn.AdaptiveMaxPool3d(2)
        >>> m(torch.randn(1, 3, 5, 6, 7)).shape
        torch.Size([1, 3, 2, 2, 2])
    """

    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)
