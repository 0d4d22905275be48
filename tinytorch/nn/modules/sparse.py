"""Embedding modules (PyTorch's ``torch.nn.modules.sparse``)."""
from ..._ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    r"""A lookup table (num_embeddings, embedding_dim), initialised N(0, 1); ``padding_idx`` row zeroed
    (``F.embedding``): each index of the input selects a row of ``weight``.

    Args:
        num_embeddings (int): the number of rows (the vocabulary size).
        embedding_dim (int): the length of each row.
        padding_idx (int, optional): a row that stays zero and receives no gradient; negative counts from the end.
        max_norm (float, optional): rows looked up with a larger ``norm_type``-norm are renormalized to it in place.
        norm_type (float): the p of that norm.
        scale_grad_by_freq (bool): divide the gradient of each row by how often it occurs in the batch.
        sparse (bool): ask for a sparse gradient of ``weight``.
        device, dtype: where and as what the weight is created.

    Shape:
        - Input: :math:`(*)`, integer indices of any shape.
        - Output: :math:`(*, \text{embedding\_dim})`.

    Examples::

        >>> m = nn.Embedding(10, 3, padding_idx=0)
        >>> m(torch.tensor([[1, 2, 0], [4, 3, 9]])).shape
        torch.Size([2, 3, 3])
        >>> m.weight[0]
        tensor([0., 0., 0.], grad_fn=<SelectBackward0>)
        >>> nn.Embedding.from_pretrained(torch.tensor([[1., 2.], [3., 4.]]))(torch.tensor([1]))
        tensor([[3., 4.]])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx < 0:
                padding_idx += num_embeddings
            if not 0 <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ...autograd.grad_mode import no_grad
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                           self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is a copy of the 2-D ``embeddings`` (frozen unless ``freeze=False``)."""
        r, c = embeddings.shape
        return cls(r, c, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings.detach().clone(), _freeze=freeze)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s


class EmbeddingBag(Module):
    r"""Sums, means or maxima of bags of embeddings (``F.embedding_bag``); weight (num_embeddings, dim) ~
    N(0, 1). The bags are the rows of a 2-D input, or, for a 1-D input, the slices that ``offsets`` (the start
    of each bag) cut; it computes the same as ``nn.Embedding`` followed by a reduction over each bag, without
    building the intermediate embeddings.

    Args:
        num_embeddings (int): the number of rows.
        embedding_dim (int): the length of each row.
        max_norm (float, optional): rows looked up with a larger norm are renormalized to it in place.
        norm_type (float): the p of that norm.
        scale_grad_by_freq (bool): divide the gradient of each row by how often it occurs in the batch.
        mode (str): ``'sum'``, ``'mean'`` or ``'max'``.
        sparse (bool): ask for a sparse gradient of ``weight``.
        include_last_offset (bool): ``offsets`` also holds the end of the last bag.
        padding_idx (int, optional): a row that contributes nothing to its bag and receives no gradient.
        device, dtype: where and as what the weight is created.

    Shape:
        - Input: :math:`(B, L)` (B bags of L indices), or :math:`(M)` with ``offsets`` :math:`(B)`;
          ``per_sample_weights`` (``'sum'`` only) has the input's shape.
        - Output: :math:`(B, \text{embedding\_dim})`.

    Examples::

        >>> m = nn.EmbeddingBag.from_pretrained(torch.tensor([[1., 0.], [0., 1.], [2., 2.]]), mode="sum")
        >>> m(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 2]))
        tensor([[1., 1.],
                [4., 4.]])
        >>> nn.EmbeddingBag(10, 3)(torch.tensor([[1, 2], [3, 4]])).shape
        torch.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx < 0:
                padding_idx += num_embeddings
            if not 0 <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
        self.mode, self.sparse, self.include_last_offset, self.padding_idx = mode, sparse, include_last_offset, \
            padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            from ...autograd.grad_mode import no_grad
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        r, c = embeddings.shape
        bag = cls(r, c, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings.detach().clone(),
                  include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s
