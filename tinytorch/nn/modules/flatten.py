"""Flatten / Unflatten (PyTorch's ``torch.nn.modules.flatten``)."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flatten dims ``start_dim..end_dim`` (default: all but the batch dim) into one.

    Args:
        start_dim (int): the first dim flattened.
        end_dim (int): the last dim flattened.

    Shape:
        - Input: :math:`(*, S_{start}, ..., S_{end}, *)`.
        - Output: :math:`(*, \prod_{i=start}^{end} S_i, *)`.

    Examples::

        >>> nn.Flatten()(torch.ones(2, 3, 4, 5)).shape
        torch.Size([2, 60])
        >>> nn.Flatten(0, 2)(torch.ones(2, 3, 4, 5)).shape
        torch.Size([24, 5])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Splits dim ``dim`` into ``unflattened_size`` (``Tensor.unflatten``), the inverse of ``nn.Flatten``.

    Args:
        dim (int): the dim split.
        unflattened_size (tuple): the sizes it is split into; their product is its size (one may be -1).

    Shape:
        - Input: :math:`(*, S_{dim}, *)`.
        - Output: :math:`(*, U_1, ..., U_n, *)`, with :math:`\prod U_i = S_{dim}`.

    Examples::

        >>> m = nn.Unflatten(1, (2, 5))
        >>> m(torch.ones(3, 10)).shape
        torch.Size([3, 2, 5])
    """
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
