"""Dropout modules (PyTorch's ``torch.nn.modules.dropout``)."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout(Module):
    r"""Zero elements with probability ``p`` in training (scaled by 1/(1-p)); identity in eval (Srivastava et
    al. 2014, "Dropout: A Simple Way to Prevent Neural Networks from Overfitting"; the co-adaptation argument is
    Hinton et al. 2012) (``F.dropout``).

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(*)`, any shape.
        - Output: the input's shape.

    Examples::

        >>> m = nn.Dropout(p=0.5)
        >>> y = m(torch.ones(4, 4))
        >>> sorted(set(y.flatten().tolist())) in ([0.0, 2.0], [0.0], [2.0])
        True
        >>> m.eval()(torch.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    r"""Zeros whole channels (each 1-d feature map) with probability ``p`` in training, the kept ones
    scaled by 1/(1-p); identity in eval (``F.dropout1d``). Dropping whole maps suits convolutional features,
    whose neighbouring values are correlated (Tompson et al. 2015, "Efficient Object Localization Using
    Convolutional Networks").

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(N, C, L)` or :math:`(C, L)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.Dropout1d(p=0.5)
        >>> m(torch.ones(2, 3, 4)).shape
        torch.Size([2, 3, 4])
    """
    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    r"""Zeros whole channels (each 2-d feature map) with probability ``p`` in training, the kept ones
    scaled by 1/(1-p); identity in eval (``F.dropout2d``). Dropping whole maps suits convolutional features,
    whose neighbouring values are correlated (Tompson et al. 2015, "Efficient Object Localization Using
    Convolutional Networks").

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.Dropout2d(p=0.5)
        >>> m(torch.ones(2, 3, 4, 4)).shape
        torch.Size([2, 3, 4, 4])
    """
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    r"""Zeros whole channels (each 3-d feature map) with probability ``p`` in training, the kept ones
    scaled by 1/(1-p); identity in eval (``F.dropout3d``). Dropping whole maps suits convolutional features,
    whose neighbouring values are correlated (Tompson et al. 2015, "Efficient Object Localization Using
    Convolutional Networks").

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.Dropout3d(p=0.5)
        >>> m(torch.ones(2, 3, 4, 4, 4)).shape
        torch.Size([2, 3, 4, 4, 4])
    """
    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    r"""Alpha dropout for SELU networks; see ``F.alpha_dropout``. Dropped elements are set to SELU's
    negative saturation value and the result is affinely rescaled so that inputs of zero mean and unit variance
    keep them (Klambauer et al. 2017, "Self-Normalizing Neural Networks"); identity in eval.

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(*)`, any shape.
        - Output: the input's shape.

    Examples::

        >>> m = nn.AlphaDropout(p=0.2)
        >>> m(torch.randn(8, 16)).shape
        torch.Size([8, 16])
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    r"""Alpha dropout of whole channels; see ``F.feature_alpha_dropout``: as ``nn.AlphaDropout``
    (Klambauer et al. 2017) but each channel of each sample is kept or dropped as a whole.

    Args:
        p (float): the probability of zeroing an element; 0 <= p <= 1.
        inplace (bool): do it in place.

    Shape:
        - Input: :math:`(N, C, *)` or :math:`(C, *)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.FeatureAlphaDropout(p=0.2)
        >>> m(torch.randn(2, 4, 3, 3)).shape
        torch.Size([2, 4, 3, 3])
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
