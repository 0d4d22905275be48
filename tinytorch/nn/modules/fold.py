"""Fold / Unfold (PyTorch's ``torch.nn.modules.fold``)."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    r"""The adjoint of Unfold: (N, C kh kw, L) -> (N, C, H, W), overlapping values summed (``torch.nn.Fold``,
    ``F.fold``, "col2im").

    Args:
        output_size (int or tuple): the spatial size (H, W) of the output.
        kernel_size (int or tuple): the block size.
        dilation (int or tuple): the spacing between the elements of a block.
        padding (int or tuple): implicit zero padding on both sides of each spatial dim (cut off the output).
        stride (int or tuple): the step between blocks.

    Shape:
        - Input: :math:`(N, C \prod(\text{kernel\_size}), L)` or :math:`(C \prod(\text{kernel\_size}), L)`.
        - Output: :math:`(N, C, H, W)` or :math:`(C, H, W)` = ``output_size``.

    Examples::

        >>> fold = nn.Fold(output_size=(3, 3), kernel_size=2)
        >>> fold(torch.ones(1, 4, 4))
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    r"""Sliding local blocks: (N, C, H, W) -> (N, C kh kw, L) (``torch.nn.Unfold``, ``F.unfold``, "im2col"):
    column l holds the values of block l, L being the number of block positions.

    Args:
        kernel_size (int or tuple): the block size.
        dilation (int or tuple): the spacing between the elements of a block.
        padding (int or tuple): implicit zero padding on both sides of each spatial dim.
        stride (int or tuple): the step between blocks.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: :math:`(N, C \prod(\text{kernel\_size}), L)` or :math:`(C \prod(\text{kernel\_size}), L)`, with
          :math:`L = \prod_d \lfloor (S_d + 2 p_d - d_d (k_d - 1) - 1) / s_d + 1 \rfloor`.

    Examples::

        >>> m = nn.Unfold(kernel_size=2)
        >>> m(torch.arange(9.).reshape(1, 1, 3, 3))
        tensor([[[0., 1., 3., 4.],
                 [1., 2., 4., 5.],
                 [3., 4., 6., 7.],
                 [4., 5., 7., 8.]]])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
