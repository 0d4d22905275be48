"""``nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al., "Efficient softmax approximation for
GPUs" (2017), for output vocabularies where most of the probability mass sits on a few frequent classes."""
import collections

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    r"""Adaptive softmax over ``n_classes`` classes sorted by decreasing frequency (``torch.nn.
    AdaptiveLogSoftmaxWithLoss``; Grave et al. 2016, "Efficient softmax approximation for GPUs").

    The classes below ``cutoffs[0]`` (the shortlist) and one entry per tail cluster form the head, a Linear
    ``in_features -> cutoffs[0] + n_clusters``; cluster i covers classes [cutoffs[i], cutoffs[i+1]) and is a
    two-layer projection ``in_features -> in_features // div_value^(i+1) -> cluster size``. log p(class) is the
    head log-probability of the class (shortlist) or of its cluster plus the log-probability within the
    cluster. ``forward(input_ (N, in_features) or (in_features,), target_ (N,) or ())`` returns
    (output = per-row target log-probabilities, loss = their negative mean). ValueError for bad cutoffs,
    RuntimeError for mismatched shapes or targets outside [0, n_classes - 1].

    Args:
        in_features (int): the features of each input row.
        n_classes (int): the number of classes.
        cutoffs (sequence of int): increasing class indices in (0, n_classes) where the clusters start.
        div_value (float): the base of the shrinking of the cluster projections.
        head_bias (bool): give the head a bias.
        device, dtype: where and as what the parameters are created.

    Shape:
        - Input: :math:`(N, \text{in\_features})` or :math:`(\text{in\_features})`.
        - Target: :math:`(N)` or :math:`()`, class indices in :math:`[0, \text{n\_classes})`.
        - Output: ``(output, loss)``: output :math:`(N)` or :math:`()`, loss a scalar.

    Examples::

        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 100, cutoffs=[10, 40])
        >>> out, loss = asm(torch.randn(4, 16), torch.tensor([1, 15, 50, 99]))
        >>> out.shape, loss.shape
        (torch.Size([4]), torch.Size([]))
        >>> asm.log_prob(torch.randn(4, 16)).shape
        torch.Size([4, 100])
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or \
                len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        fk = {"device": device, "dtype": dtype}
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **fk)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **fk),
                                        Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False, **fk)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for proj in self.tail:
            for lin in proj:
                lin.reset_parameters()

    def forward(self, input_, target_):
        input, target = input_, target_  # PyTorch's parameter names (a keyword call must bind as there)
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.shape}")
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.shape}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target.ndim > 0
        x = input if batched else input.unsqueeze(0)
        t = target if batched else target.unsqueeze(0)
        if t.numel() and (bool((t < 0).any()) or bool((t >= self.n_classes).any())):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{t.min().item()}, {t.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(x), dim=1)
        # the head column of each row: its class in the shortlist, else its cluster's entry
        col = t.clone()
        out = None
        for i in range(self.n_clusters):
            lo, hi = self.cutoffs[i], self.cutoffs[i + 1]
            in_cluster = (t >= lo) & (t < hi)
            rows = in_cluster.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            col = col.masked_fill(in_cluster, self.shortlist_size + i)
            local = F.log_softmax(self.tail[i](x.index_select(0, rows)), dim=1)
            local = local.gather(1, (t.index_select(0, rows) - lo).unsqueeze(1)).reshape(-1)
            part = x.new_zeros(t.shape[0]).index_add(0, rows, local)
            out = part if out is None else out + part
        output = head_logprob.gather(1, col.unsqueeze(1)).reshape(-1)
        if out is not None:
            output = output + out
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        from ..._ops.shape import cat
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """log-probabilities of every class: (N, in_features) -> (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row, (N, in_features) -> (N,) int64; the tail clusters are evaluated
        only for rows whose head argmax is a cluster."""
        head_output = self.head(input)
        pred = head_output.argmax(1)
        outside = pred >= self.shortlist_size
        if not bool(outside.any()):
            return pred
        rows = outside.nonzero().reshape(-1)
        full = self._full_log_prob(input.index_select(0, rows), head_output.index_select(0, rows)).argmax(1)
        return pred.index_copy(0, rows, full)
