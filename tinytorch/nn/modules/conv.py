"""Conv1d/2d/3d and ConvTranspose1d/2d."""
import math

from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, _channels, _placeholders
from .module import Module


def _tuple(x, n):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


class _ConvNd(Module):
    _n = 2
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros" and self.transposed:
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation = _tuple(dilation, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self.output_padding = (0,) * n
        shape = ((in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups))
        self.weight = Parameter(empty(shape + self.kernel_size, device=device, dtype=dtype))
        self.bias = Parameter(empty(out_channels, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                b = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -b, b)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._n:
            s += f", padding={self.padding}"  # torch prints a padding string unquoted
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if any(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _padded(self, input):
        """(input, padding for the conv call): non-zero padding modes pad explicitly, as PyTorch does."""
        if self.padding_mode == "zeros":
            return input, self.padding
        if self.padding == "valid":
            return input, 0
        if self.padding == "same":
            total = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            pairs = [(t // 2, t - t // 2) for t in total]
        else:
            pairs = [(p, p) for p in self.padding]
        flat = tuple(v for pair in reversed(pairs) for v in pair)
        return F.pad(input, flat, mode=self.padding_mode), 0


class Conv2d(_ConvNd):
    r"""2-D convolution over (N, C_in, H, W): weight (C_out, C_in/groups, kh, kw). See ``F.conv2d``.

    Each output channel is a sum over its group's input channels of their cross-correlation with a learned
    kernel, plus a bias. Weight and bias are initialised U(-1/sqrt(k), 1/sqrt(k)) with k = C_in / groups *
    prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` or :math:`(C_{out}, H_{out}, W_{out})`, each spatial size
          :math:`\lfloor (S_{in} + 2 p - d (k - 1) - 1) / s + 1 \rfloor` for that dim's padding, dilation,
          kernel size and stride.

    Examples::

        >>> m = nn.Conv2d(4, 8, 3, padding=1)
        >>> m(torch.randn(2, 4, 10, 10)).shape
        torch.Size([2, 8, 10, 10])
        >>> nn.Conv2d(4, 8, 3, stride=2, groups=4, bias=False)(torch.randn(2, 4, 10, 10)).shape
        torch.Size([2, 8, 4, 4])
    """
    _n = 2

    def forward(self, input):
        x, pad = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class Conv1d(_ConvNd):
    r"""1-D convolution over (N, C_in, L): weight (C_out, C_in/groups, k). See ``F.conv1d``.

    Each output channel is a sum over its group's input channels of their cross-correlation with a learned
    kernel, plus a bias. Weight and bias are initialised U(-1/sqrt(k), 1/sqrt(k)) with k = C_in / groups *
    prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`, each spatial size
          :math:`\lfloor (S_{in} + 2 p - d (k - 1) - 1) / s + 1 \rfloor` for that dim's padding, dilation,
          kernel size and stride.

    Examples::

        >>> m = nn.Conv1d(4, 8, 3, padding=1)
        >>> m(torch.randn(2, 4, 10)).shape
        torch.Size([2, 8, 10])
        >>> nn.Conv1d(4, 8, 3, stride=2, groups=4, bias=False)(torch.randn(2, 4, 10)).shape
        torch.Size([2, 8, 4])
    """
    _n = 1

    def forward(self, input):
        x, pad = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class Conv3d(_ConvNd):
    r"""3-D convolution over (N, C_in, D, H, W): weight (C_out, C_in/groups, kd, kh, kw). See ``F.conv3d``.

    Each output channel is a sum over its group's input channels of their cross-correlation with a learned
    kernel, plus a bias. Weight and bias are initialised U(-1/sqrt(k), 1/sqrt(k)) with k = C_in / groups *
    prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or :math:`(C_{in}, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` or :math:`(C_{out}, D_{out}, H_{out}, W_{out})`,
          each spatial size
          :math:`\lfloor (S_{in} + 2 p - d (k - 1) - 1) / s + 1 \rfloor` for that dim's padding, dilation,
          kernel size and stride.

    Examples::

        >>> m = nn.Conv3d(4, 8, 3, padding=1)
        >>> m(torch.randn(2, 4, 6, 6, 6)).shape
        torch.Size([2, 8, 6, 6, 6])
        >>> nn.Conv3d(4, 8, 3, stride=2, groups=4, bias=False)(torch.randn(2, 4, 6, 6, 6)).shape
        torch.Size([2, 8, 2, 2, 2])
    """
    _n = 3

    def forward(self, input):
        x, pad = self._padded(input)
        return F.conv3d(x, self.weight, self.bias, self.stride, pad, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError(f"padding='{padding}' is not supported by {type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = _tuple(output_padding, self._n)

    def _output_padding(self, input, output_size):
        """output_padding that makes the output ``output_size`` (the trailing spatial sizes), as PyTorch."""
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = tuple(output_size)[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or {n + 2} "
                             f"elements (got {len(output_size)})")
        res = []
        for i in range(n):
            size = input.shape[input.ndim - n + i]
            lo = (size - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            hi = lo + self.stride[i] - 1
            if not lo <= output_size[i] <= hi:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid sizes range from "
                                 f"{lo} to {hi} (for an input of {list(input.shape[2:])})")
            res.append(output_size[i] - lo)
        return tuple(res)


class ConvTranspose2d(_ConvTransposeNd):
    r"""Transposed 2-D convolution: weight (C_in, C_out/groups, kh, kw). See ``F.conv_transpose2d``.

    The gradient of ``Conv2d`` with respect to its input, used as a layer: each input value scatters a scaled
    copy of the kernel into the output (sometimes called a fractionally strided convolution or, loosely, a
    deconvolution; Zeiler et al. 2010, "Deconvolutional Networks"). ``forward(input, output_size=None)``:
    ``output_size`` picks the ``output_padding`` that gives that size. Weight and bias are initialised U(-1/sqrt(k),
    1/sqrt(k)) with k = C_in / groups * prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` or :math:`(C_{out}, H_{out}, W_{out})`, each spatial size
          :math:`(S_{in} - 1) s - 2 p + d (k - 1) + \text{output\_padding} + 1`.

    Examples::

        >>> m = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1, output_padding=1)
        >>> m(torch.randn(2, 4, 10, 10)).shape
        torch.Size([2, 8, 20, 20])
    """
    _n = 2

    def forward(self, input, output_size=None):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    r"""Transposed 3-D convolution: weight (C_in, C_out/groups, kd, kh, kw). See ``F.conv_transpose3d``.

    The gradient of ``Conv3d`` with respect to its input, used as a layer: each input value scatters a scaled
    copy of the kernel into the output (sometimes called a fractionally strided convolution or, loosely, a
    deconvolution; Zeiler et al. 2010, "Deconvolutional Networks"). ``forward(input, output_size=None)``:
    ``output_size`` picks the ``output_padding`` that gives that size. Weight and bias are initialised U(-1/sqrt(k),
    1/sqrt(k)) with k = C_in / groups * prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or :math:`(C_{in}, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` or :math:`(C_{out}, D_{out}, H_{out}, W_{out})`,
          each spatial size
          :math:`(S_{in} - 1) s - 2 p + d (k - 1) + \text{output\_padding} + 1`.

    Examples::

        >>> m = nn.ConvTranspose3d(4, 8, 3, stride=2, padding=1, output_padding=1)
        >>> m(torch.randn(2, 4, 6, 6, 6)).shape
        torch.Size([2, 8, 12, 12, 12])
    """
    _n = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    r"""Transposed 1-D convolution: weight (C_in, C_out/groups, k). See ``F.conv_transpose1d``.

    The gradient of ``Conv1d`` with respect to its input, used as a layer: each input value scatters a scaled
    copy of the kernel into the output (sometimes called a fractionally strided convolution or, loosely, a
    deconvolution; Zeiler et al. 2010, "Deconvolutional Networks"). ``forward(input, output_size=None)``:
    ``output_size`` picks the ``output_padding`` that gives that size. Weight and bias are initialised U(-1/sqrt(k),
    1/sqrt(k)) with k = C_in / groups * prod(kernel_size), as in PyTorch.

    Args:
        in_channels (int): C_in, the channels of the input.
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`, each spatial size
          :math:`(S_{in} - 1) s - 2 p + d (k - 1) + \text{output\_padding} + 1`.

    Examples::

        >>> m = nn.ConvTranspose1d(4, 8, 3, stride=2, padding=1, output_padding=1)
        >>> m(torch.randn(2, 4, 10)).shape
        torch.Size([2, 8, 20])
    """
    _n = 1

    def forward(self, input, output_size=None):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class _LazyConvNd(LazyModuleMixin, Module):
    _n = 2

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(out_channels, bias, device, dtype, kernel_size=kernel_size, stride=stride, padding=padding,
                        dilation=dilation, groups=groups, padding_mode=padding_mode)

    def _lazy_init(self, out_channels, bias, device, dtype, **conv_args):
        Module.__init__(self)
        self.in_channels, self.out_channels = 0, out_channels
        self._lazy = (conv_args, dict(bias=bias, device=device, dtype=dtype))
        _placeholders(self, ["weight"] + (["bias"] if bias else []), [], dict(device=device, dtype=dtype))
        if not bias:
            self.bias = None

    def initialize_parameters(self, input, *args, **kwargs):
        conv_args, kw = self._lazy
        self._become(self.cls_to_become(_channels(input, self._n), self.out_channels, **conv_args, **kw))


class _LazyConvTransposeNd(_LazyConvNd):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(out_channels, bias, device, dtype, kernel_size=kernel_size, stride=stride, padding=padding,
                        output_padding=output_padding, groups=groups, dilation=dilation, padding_mode=padding_mode)


class LazyConv1d(_LazyConvNd):
    r"""``nn.Conv1d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``Conv1d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`, as ``nn.Conv1d``.

    Examples::

        >>> m = nn.LazyConv1d(8, 3)
        >>> y = m(torch.randn(2, 4, 10))
        >>> type(m).__name__, m.in_channels
        ('Conv1d', 4)
    """
    cls_to_become = Conv1d
    _n = 1
    forward = Conv1d.forward


class LazyConv2d(_LazyConvNd):
    r"""``nn.Conv2d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``Conv2d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` or :math:`(C_{out}, H_{out}, W_{out})`, as ``nn.Conv2d``.

    Examples::

        >>> m = nn.LazyConv2d(8, 3)
        >>> y = m(torch.randn(2, 4, 10, 10))
        >>> type(m).__name__, m.in_channels
        ('Conv2d', 4)
    """
    cls_to_become = Conv2d
    _n = 2
    forward = Conv2d.forward


class LazyConv3d(_LazyConvNd):
    r"""``nn.Conv3d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``Conv3d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions.
        padding (int, tuple or str): implicit padding on both sides of each spatial dim, or ``'valid'`` (none) or
            ``'same'`` (the output keeps the input's size; stride 1 only).
        dilation (int or tuple): the spacing between kernel elements.
        groups (int): split the channels into this many groups convolved separately; it must divide both channel
            counts (``groups == in_channels`` is a depthwise convolution).
        bias (bool): learn a bias per output channel.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``: how the padding is filled.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or :math:`(C_{in}, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` or :math:`(C_{out}, D_{out}, H_{out}, W_{out})`, as
          ``nn.Conv3d``.

    Examples::

        >>> m = nn.LazyConv3d(8, 3)
        >>> y = m(torch.randn(2, 4, 6, 6, 6))
        >>> type(m).__name__, m.in_channels
        ('Conv3d', 4)
    """
    cls_to_become = Conv3d
    _n = 3
    forward = Conv3d.forward


class LazyConvTranspose1d(_LazyConvTransposeNd):
    r"""``nn.ConvTranspose1d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``ConvTranspose1d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`, as ``nn.ConvTranspose1d``.

    Examples::

        >>> m = nn.LazyConvTranspose1d(8, 3)
        >>> y = m(torch.randn(2, 4, 10))
        >>> type(m).__name__, m.in_channels
        ('ConvTranspose1d', 4)
    """
    cls_to_become = ConvTranspose1d
    _n = 1
    forward = ConvTranspose1d.forward


class LazyConvTranspose2d(_LazyConvTransposeNd):
    r"""``nn.ConvTranspose2d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``ConvTranspose2d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` or :math:`(C_{out}, H_{out}, W_{out})`, as
          ``nn.ConvTranspose2d``.

    Examples::

        >>> m = nn.LazyConvTranspose2d(8, 3)
        >>> y = m(torch.randn(2, 4, 10, 10))
        >>> type(m).__name__, m.in_channels
        ('ConvTranspose2d', 4)
    """
    cls_to_become = ConvTranspose2d
    _n = 2
    forward = ConvTranspose2d.forward


class LazyConvTranspose3d(_LazyConvTransposeNd):
    r"""``nn.ConvTranspose3d`` whose ``in_channels`` comes from the first input: dim 1 of a batched input, dim 0
    of an unbatched one. Until then weight and bias are uninitialized placeholders; the first call creates them
    and turns the module into a ``ConvTranspose3d``.

    Args:
        out_channels (int): C_out, the channels the convolution produces.
        kernel_size (int or tuple): the size of the kernel.
        stride (int or tuple): the step between kernel positions (in the output).
        padding (int or tuple): ``dilation * (kernel_size - 1) - padding`` zeros are added on both sides of the input,
            so that the same arguments invert the shape change of the matching ``ConvNd``.
        output_padding (int or tuple): extra size added on one side of each output dim, to choose among the output
            sizes a strided convolution maps to the same input size.
        groups (int): split the channels into this many groups convolved separately.
        bias (bool): learn a bias per output channel.
        dilation (int or tuple): the spacing between kernel elements.
        padding_mode (str): only ``'zeros'``.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or :math:`(C_{in}, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` or :math:`(C_{out}, D_{out}, H_{out}, W_{out})`, as
          ``nn.ConvTranspose3d``.

    Examples::

        >>> m = nn.LazyConvTranspose3d(8, 3)
        >>> y = m(torch.randn(2, 4, 6, 6, 6))
        >>> type(m).__name__, m.in_channels
        ('ConvTranspose3d', 4)
    """
    cls_to_become = ConvTranspose3d
    _n = 3
    forward = ConvTranspose3d.forward
