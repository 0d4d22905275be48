"""Distance modules (PyTorch's ``torch.nn.modules.distance``)."""
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    r"""p-norm of ``x1 - x2 + eps`` along the last dim (``F.pairwise_distance``).

    Args:
        p (float): the order of the norm.
        eps (float): added to the difference, so the norm of equal vectors has a gradient.
        keepdim (bool): keep the reduced dim, with size 1.

    Shape:
        - Input1: :math:`(N, D)` or :math:`(D)`.
        - Input2: the same shape as Input1 (or broadcastable to it).
        - Output: :math:`(N)` or :math:`()`; :math:`(N, 1)` with ``keepdim``.

    Examples::

        >>> m = nn.PairwiseDistance(eps=0.0)
        >>> m(torch.tensor([[0., 0.], [1., 1.]]), torch.tensor([[3., 4.], [1., 1.]]))
        tensor([5., 0.])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    r"""Cosine similarity of x1 and x2 along ``dim`` (``F.cosine_similarity``):
    ``x1 . x2 / max(||x1|| ||x2||, eps)``.

    Args:
        dim (int): the dim the vectors lie along.
        eps (float): a floor on the product of the norms, against division by zero.

    Shape:
        - Input1: :math:`(*_1, D, *_2)`, D at position ``dim``.
        - Input2: broadcastable with Input1.
        - Output: :math:`(*_1, *_2)`, the broadcast shape without ``dim``.

    Examples::

        >>> m = nn.CosineSimilarity(dim=1)
        >>> m(torch.tensor([[1., 0.], [1., 1.]]), torch.tensor([[0., 1.], [2., 2.]]))
        tensor([0.0000, 1.0000])
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
