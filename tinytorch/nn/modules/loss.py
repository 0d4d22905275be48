"""Loss modules: MSELoss, L1Loss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss,
KLDivLoss, MarginRankingLoss, TripletMarginLoss, CosineEmbeddingLoss, PoissonNLLLoss, GaussianNLLLoss."""
from .. import functional as F
from .distance import PairwiseDistance
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401  (nn exports it from here)
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = "none" if reduce is False else ("sum" if size_average is False else "mean")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    r"""Mean squared error ``(x - y)^2`` over the elements; see ``F.mse_loss``.

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.MSELoss()
        >>> loss(torch.tensor([1., 2., 3.]), torch.tensor([1., 0., 0.]))
        tensor(4.3333)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    r"""Mean absolute error ``|x - y|`` over the elements; see ``F.l1_loss``.

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.L1Loss(reduction='sum')
        >>> loss(torch.tensor([1., 2., 3.]), torch.tensor([1., 0., 0.]))
        tensor(5.)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    r"""``0.5 (x - y)^2 / beta`` where ``|x - y| < beta``, else ``|x - y| - 0.5 beta``: squared near zero, absolute
    further out, so large errors do not dominate; see ``F.smooth_l1_loss``.

    From Girshick 2015, "Fast R-CNN".

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.
        beta (float): where it changes from squared to absolute (>= 0).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.SmoothL1Loss()
        >>> loss(torch.tensor([0.5, 3.]), torch.tensor([0., 0.]))
        tensor(1.3125)
    """
    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    r"""``0.5 (x - y)^2`` where ``|x - y| < delta``, else ``delta (|x - y| - 0.5 delta)`` (``SmoothL1Loss`` times
    ``delta``); see ``F.huber_loss``.

    From Huber 1964, "Robust Estimation of a Location Parameter".

    Args:
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.
        delta (float): where it changes from squared to linear (> 0).

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.HuberLoss(delta=2.)
        >>> loss(torch.tensor([0.5, 3.]), torch.tensor([0., 0.]))
        tensor(2.0625)
    """
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    r"""Negative log-likelihood on log-probabilities; see ``F.nll_loss``: ``-input[n, target[n]]``, weighted
    by ``weight[target[n]]``; the mean divides by the sum of those weights.

    Args:
        weight (Tensor, optional): a rescaling weight per class, of shape (C).
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        ignore_index (int): a target value that contributes nothing (and is not counted in the mean).
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(N, C)`, :math:`(C)` or :math:`(N, C, d_1, ..., d_K)`, log-probabilities.
        - Target: :math:`(N)`, :math:`()` or :math:`(N, d_1, ..., d_K)`, class indices in :math:`[0, C)`.
        - Output: a scalar; the target's shape with ``reduction='none'``.

    Examples::

        >>> loss = nn.NLLLoss()
        >>> logp = torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]).log()
        >>> loss(logp, torch.tensor([0, 2]))
        tensor(0.4581)
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    r"""Softmax cross entropy on logits with ``ignore_index`` and ``label_smoothing``; see ``F.cross_entropy``:
    ``log_softmax`` followed by ``nll_loss``. The target is class indices or class probabilities.

    From Label smoothing: Szegedy et al. 2016, "Rethinking the Inception Architecture for Computer Vision".

    Args:
        weight (Tensor, optional): a rescaling weight per class, of shape (C).
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        ignore_index (int): a target index that contributes nothing (and is not counted in the mean).
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.
        label_smoothing (float): in [0, 1]; the target becomes ``(1 - s) * target + s / C``.

    Shape:
        - Input: :math:`(N, C)`, :math:`(C)` or :math:`(N, C, d_1, ..., d_K)`, unnormalized logits.
        - Target: class indices of shape :math:`(N)`, :math:`()` or :math:`(N, d_1, ..., d_K)`, or
          probabilities of the input's shape.
        - Output: a scalar; the batch shape with ``reduction='none'``.

    Examples::

        >>> loss = nn.CrossEntropyLoss()
        >>> loss(torch.tensor([[2., 0., 0.], [0., 0., 0.]]), torch.tensor([0, 1]))
        tensor(0.6691)
        >>> nn.CrossEntropyLoss(label_smoothing=0.1)(torch.randn(4, 5), torch.tensor([1, 0, 4, 2])).shape
        torch.Size([])
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    r"""Binary cross entropy on probabilities; see ``F.binary_cross_entropy``:
    ``-w (y log x + (1 - y) log(1 - x))``, the logs clamped to >= -100.

    Args:
        weight (Tensor, optional): a rescaling weight, broadcast to the input.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.BCELoss()
        >>> loss(torch.tensor([0.8, 0.4]), torch.tensor([1., 0.]))
        tensor(0.3670)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    r"""Binary cross entropy on logits (stable); see ``F.binary_cross_entropy_with_logits``: a sigmoid and
    ``BCELoss`` in one, computed with the log-sum-exp trick.

    Args:
        weight (Tensor, optional): a rescaling weight, broadcast to the input.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.
        pos_weight (Tensor, optional): a weight of the positive term per class (broadcast along the last dim), to
            trade recall against precision.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.BCEWithLogitsLoss()
        >>> loss(torch.tensor([0., 2.]), torch.tensor([1., 1.]))
        tensor(0.4100)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    r"""Kullback-Leibler divergence ``target * (log(target) - input)`` of the target from the input, the
    input given as log-probabilities; see ``F.kl_div``. ``reduction='batchmean'`` divides the sum by the batch
    size, which is the mathematical KL divergence.

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'``, ``'batchmean'``, ``'sum'`` or ``'mean'`` (over all elements).
        log_target (bool): the target is given as log-probabilities too.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.KLDivLoss(reduction='batchmean')
        >>> p = torch.tensor([[0.5, 0.5]])
        >>> loss(torch.tensor([[0.25, 0.75]]).log(), p)
        tensor(0.1438)
    """
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    r"""``max(0, -y (x1 - x2) + margin)``: y = 1 asks x1 to rank above x2 by ``margin``, y = -1 below;
    see ``F.margin_ranking_loss``.

    Args:
        margin (float): the required gap.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input1: :math:`(N)` or :math:`()`.
        - Input2: the shape of Input1.
        - Target: the shape of Input1, values 1 or -1.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.MarginRankingLoss(margin=0.5)
        >>> loss(torch.tensor([1., 0.]), torch.tensor([0., 1.]), torch.tensor([1., 1.]))
        tensor(0.7500)
    """
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    r"""``max(d(a, p) - d(a, n) + margin, 0)`` with d the p-norm distance: pulls each anchor towards its positive
    and away from its negative; see ``F.triplet_margin_loss``.

    From Schroff, Kalenichenko & Philbin 2015, "FaceNet: A Unified Embedding for Face Recognition and Clustering"; the
    distance swap is from Balntas et al. 2016, "Learning local feature descriptors with triplets and shallow
    convolutional neural networks".

    Args:
        margin (float): the required gap (> 0).
        p (float): the norm degree of the distance.
        eps (float): added to the differences, for stability.
        swap (bool): use ``min(d(a, n), d(p, n))`` as the negative distance.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: anchor, positive and negative, each :math:`(N, D)` or :math:`(D)`.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.TripletMarginLoss(margin=1.0, eps=0.)
        >>> a, p, n = torch.tensor([[0., 0.]]), torch.tensor([[0., 1.]]), torch.tensor([[3., 4.]])
        >>> loss(a, p, n), loss(a, n, p)
        (tensor(0.), tensor(5.))
    """
    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    r"""``1 - cos(x1, x2)`` for y = 1, ``max(0, cos(x1, x2) - margin)`` for y = -1: makes similar pairs point the
    same way and dissimilar ones apart; see ``F.cosine_embedding_loss``.

    Args:
        margin (float): in [-1, 1]; the cosine above which a dissimilar pair costs.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input1: :math:`(N, D)` or :math:`(D)`.
        - Input2: the shape of Input1.
        - Target: :math:`(N)` or :math:`()`, values 1 or -1.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.CosineEmbeddingLoss()
        >>> loss(torch.tensor([[1., 0.], [1., 0.]]), torch.tensor([[1., 0.], [0., 1.]]), torch.tensor([1, -1]))
        tensor(0.)
    """
    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    r"""Negative log-likelihood of a Poisson target: ``exp(input) - target * input`` for log-rate inputs,
    ``input - target * log(input + eps)`` otherwise; see ``F.poisson_nll_loss``.

    Args:
        log_input (bool): the input is the log of the rate.
        full (bool): add the Stirling approximation of ``log(target!)``.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        eps (float): added inside the log when ``log_input`` is False.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.PoissonNLLLoss()
        >>> loss(torch.tensor([0., 1.]), torch.tensor([1., 2.]))
        tensor(0.8591)
    """
    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    r"""Negative log-likelihood of the target under a Gaussian with mean ``input`` and variance ``var``:
    ``0.5 (log(var) + (input - target)^2 / var)``, var clamped to >= eps; see ``F.gaussian_nll_loss``.

    From Nix & Weigend 1994, "Estimating the mean and variance of the target probability distribution".

    Args:
        full (bool, keyword-only): add the constant ``0.5 log(2 pi)``.
        eps (float, keyword-only): the floor of ``var``.
        reduction (str, keyword-only): ``'none'``, ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(N, *)` or :math:`(*)`.
        - Target: the input's shape.
        - Var: the input's shape, or with a last dim of 1, or one dim fewer (one variance per sample).
        - Output: a scalar; the input's shape with ``reduction='none'``.

    Examples::

        >>> loss = nn.GaussianNLLLoss()
        >>> loss(torch.tensor([[1.], [2.]]), torch.tensor([[1.], [0.]]), torch.ones(2, 1))
        tensor(1.)
    """
    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    r"""``x`` for y = 1 and ``max(0, margin - x)`` for y = -1, x usually a distance between a pair: small for
    similar pairs, at least ``margin`` for dissimilar ones; see ``F.hinge_embedding_loss``.

    Args:
        margin (float): the distance dissimilar pairs should exceed.
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.HingeEmbeddingLoss(margin=1.)
        >>> loss(torch.tensor([0.3, 0.2]), torch.tensor([1., -1.]))
        tensor(0.5500)
    """
    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    r"""Two-class logistic loss ``log(1 + exp(-y x))`` for targets y in {1, -1}; see ``F.soft_margin_loss``.

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(*)`, any number of dims.
        - Target: :math:`(*)`, the input's shape.
        - Output: a scalar; :math:`(*)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.SoftMarginLoss()
        >>> loss(torch.tensor([0., 2.]), torch.tensor([1., -1.]))
        tensor(1.4100)
    """
    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    r"""Multi-label one-versus-all logistic loss: the binary cross entropy of ``sigmoid(x)`` against the 0/1
    target, averaged over the C classes; see ``F.multilabel_soft_margin_loss``.

    Args:
        weight (Tensor, optional): a rescaling weight per class, of shape (C).
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(N, C)` or :math:`(C)`.
        - Target: the input's shape, values 0 or 1.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.MultiLabelSoftMarginLoss()
        >>> loss(torch.tensor([[0., 0.]]), torch.tensor([[1., 0.]]))
        tensor(0.6931)
    """
    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class CTCLoss(_Loss):
    r"""Connectionist temporal classification loss; see ``F.ctc_loss``: the negative log of the total probability
    of all the alignments of each target sequence to its input sequence, computed by the forward algorithm.

    From Graves et al. 2006, "Connectionist Temporal Classification: Labelling Unsegmented Sequence Data with
    Recurrent Neural Networks".

    Args:
        blank (int): the index of the blank label.
        reduction (str): ``'none'``, ``'mean'`` (each loss divided by its target length, then the batch mean) or
            ``'sum'``.
        zero_infinity (bool): replace infinite losses (impossible alignments) and their gradients by zero.

    Shape:
        - Log_probs: :math:`(T, N, C)` or :math:`(T, C)`, log-probabilities over C classes, blank included.
        - Targets: :math:`(N, S)` padded, or the concatenated targets :math:`(\sum \text{target\_lengths})`.
        - Input_lengths: :math:`(N)` or :math:`()`, each at most T.
        - Target_lengths: :math:`(N)` or :math:`()`.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> ctc = nn.CTCLoss()
        >>> log_probs = torch.randn(6, 2, 4).log_softmax(2)
        >>> targets = torch.tensor([[1, 2], [3, 3]])
        >>> ctc(log_probs, targets, torch.tensor([6, 5]), torch.tensor([2, 2])).shape
        torch.Size([])
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    r"""Multi-label hinge loss; see ``F.multilabel_margin_loss``: the sum of ``max(0, 1 - (x[j] - x[i])) / C``
    over the target classes j and the classes i that are not targets. The target lists the class indices, ended
    by the first -1.

    Args:
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(N, C)` or :math:`(C)`.
        - Target: the input's shape, class indices padded with -1.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.MultiLabelMarginLoss()
        >>> loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]), torch.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    r"""Multi-class hinge loss; see ``F.multi_margin_loss``: ``sum_i max(0, margin - x[y] + x[i])^p / C`` over the
    classes i other than the target y.

    Args:
        p (int): 1 or 2.
        margin (float): the required gap.
        weight (Tensor, optional): a rescaling weight per class, of shape (C).
        size_average (bool, optional): deprecated; with ``reduce``, sets ``reduction`` when given.
        reduce (bool, optional): deprecated; ``False`` means ``reduction='none'``.
        reduction (str): ``'none'`` (the per-element losses), ``'mean'`` or ``'sum'``.

    Shape:
        - Input: :math:`(N, C)` or :math:`(C)`.
        - Target: :math:`(N)` or :math:`()`, class indices.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.MultiMarginLoss()
        >>> loss(torch.tensor([[0.1, 0.2, 0.4, 0.8]]), torch.tensor([3]))
        tensor(0.3250)
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    r"""Triplet loss with a custom distance; see ``F.triplet_margin_with_distance_loss``:
    ``max(d(a, p) - d(a, n) + margin, 0)`` with ``d = distance_function`` (default ``nn.PairwiseDistance()``).

    Args:
        distance_function (callable, keyword-only): maps two tensors to their distances.
        margin (float, keyword-only): the required gap (> 0).
        swap (bool, keyword-only): use ``min(d(a, n), d(p, n))`` as the negative distance.
        reduction (str, keyword-only): ``'none'``, ``'mean'`` or ``'sum'``.

    Shape:
        - Input: anchor, positive and negative, each :math:`(N, *)` or :math:`(*)`, as the distance takes them.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> cos_distance = lambda x, y: 1 - nn.functional.cosine_similarity(x, y)
        >>> loss = nn.TripletMarginWithDistanceLoss(distance_function=cos_distance)
        >>> loss(torch.tensor([[1., 0.]]), torch.tensor([[1., 0.]]), torch.tensor([[0., 1.]]))
        tensor(0.)
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        # as torch: the default distance is a PairwiseDistance child module
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class LinearCrossEntropyLoss(_WeightedLoss):
    r"""A Linear layer to ``num_classes`` (times ``out_features``) logits and the cross entropy on them, in one
    module (``torch.nn.LinearCrossEntropyLoss``); its parameters are ``linear.weight`` / ``linear.bias``. See
    ``F.linear_cross_entropy``. RuntimeError for a class weight of the wrong shape or label_smoothing outside
    [0, 1].

    Args:
        in_features (int): the size of each input's last dim.
        num_classes (int): C, the number of classes.
        out_features (tuple, keyword-only): extra output dims of each class's logits.
        bias (bool, keyword-only): give the linear layer a bias.
        device, dtype (keyword-only): where and as what the parameters are created.
        reduction (str, keyword-only): ``'none'``, ``'mean'`` or ``'sum'``.
        weight (Tensor, optional, keyword-only): a rescaling weight per class, of shape (C).
        ignore_index (int, optional, keyword-only): a target index that contributes nothing.
        label_smoothing (float, keyword-only): in [0, 1], as in ``nn.CrossEntropyLoss``.
        options (LinearCrossEntropyOptions, optional, keyword-only): settings of torch's chunked kernel.

    Shape:
        - Input: :math:`(N, \text{in\_features})`.
        - Target: :math:`(N)`, class indices.
        - Output: a scalar; :math:`(N)` with ``reduction='none'``.

    Examples::

        >>> loss = nn.LinearCrossEntropyLoss(8, 5)
        >>> loss(torch.randn(4, 8), torch.tensor([0, 1, 4, 2])).shape
        torch.Size([])
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        import math
        from .linear import Linear
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        # a 2-D Linear weight, reshaped to (C, *out_features, in) in forward (as torch stores it)
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input, target):
        w = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        b = self.linear.bias.reshape((self.num_classes, *self.out_features)) if self.linear.bias is not None else None
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, out_features="
                f"{self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
