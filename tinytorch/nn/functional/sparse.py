"""Lookups by integer index: ``embedding``, ``embedding_bag``, ``one_hot``."""
from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ..._ops.creation import ones, zeros
from ..._ops._util import check_arg


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` (num_embeddings, dim) at integer ``input`` (*) -> (*, dim).

    Rows at ``padding_idx`` get no gradient; with ``scale_grad_by_freq`` a row's gradient is divided by the
    number of times its index occurs in ``input``. IndexError for out-of-range indices.
    """
    if padding_idx is not None:
        if isinstance(padding_idx, int) and not isinstance(padding_idx, bool):
            pass
        elif isinstance(padding_idx, str):  # torch's Python wrapper compares it with 0 first
            raise TypeError("'>' not supported between instances of 'str' and 'int'")
        else:
            check_arg("embedding", "padding_idx", 3, padding_idx, "int")
    if input.dtype.is_floating_point:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None:
        from ..._ops.reduce import norm
        from ...autograd.grad_mode import no_grad
        with no_grad():
            rows = weight[input.reshape(-1)]
            n = norm(rows, norm_type, 1, keepdim=True)
            scale = _pw.where(n > max_norm, max_norm / (n + 1e-7), 1.0)
            weight[input.reshape(-1)] = rows * scale
    w = weight
    if padding_idx is not None and weight.requires_grad:
        mask = ones(weight._shape[0], 1, dtype=weight.dtype, device=weight.device)
        mask[padding_idx] = 0
        w = weight * mask + (weight * (1 - mask)).detach()
    flat = input.reshape(-1)
    rows = w.index_select(0, flat)
    if scale_grad_by_freq and weight.requires_grad and flat.numel():
        # each row's gradient is divided by how often its index occurs in this batch; the forward value is
        # unchanged (rows.detach() + 0)
        from ..._ops.summary_ops import bincount
        freq = bincount(flat, minlength=weight._shape[0]).index_select(0, flat).to(weight.dtype).unsqueeze(1)
        rows = rows.detach() + (rows - rows.detach()) / freq
    return rows.reshape(input._shape + (weight._shape[1],))


def one_hot(input, num_classes=-1):
    """int64 one-hot encoding: (*) -> (*, num_classes)."""
    tensor = input  # torch's binding names the argument input
    check_arg("one_hot", "num_classes", 2, num_classes, "int")
    from ..._ops.creation import arange
    if tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    n = int(tensor.max().item()) + 1 if num_classes == -1 else num_classes
    if tensor.numel() and (int(tensor.min().item()) < 0 or int(tensor.max().item()) >= n):
        raise RuntimeError("Class values must be smaller than num_classes." if int(tensor.max().item()) >= n
                           else "Class values must be non-negative.")
    return (tensor.unsqueeze(-1) == arange(n, device=tensor.device)).long()


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embedding rows, without building the (bags, length, dim) tensor
    when the bags differ in length (``torch.nn.functional.embedding_bag``).

    input: (B, L) int (each row a bag, ``offsets`` None) or 1-D int with ``offsets`` (B,) int, the start of
    each bag (B + 1 entries with ``include_last_offset``). weight (num_embeddings, dim). Returns (B, dim);
    an empty bag gives zeros. Entries equal to ``padding_idx`` are left out of their bag.
    ``per_sample_weights`` (input's shape) scales each row, only with mode='sum'.
    """
    from ..._ops.creation import _from_host
    from ..._ops.shape import stack
    import numpy as np
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if input.dtype.is_floating_point:
        raise RuntimeError(f"embedding_bag: expected indices to have an integer type, but got {input.type()}")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if per_sample_weights._shape != input._shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
                             f"then it must have the same shape as the input ({input.shape})")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences.")
        b, length = input._shape
        starts = np.arange(b + 1, dtype=np.int64) * length
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.detach().numpy(force=True).astype(np.int64)
        if not include_last_offset:
            starts = np.append(starts, input._shape[0])
        if len(starts) and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > input._shape[0]):
            raise RuntimeError(f"embedding_bag: offsets must start at 0 and be non-decreasing, and the last offset "
                               f"must not exceed the input size {input._shape[0]}, got {starts.tolist()}")
        flat = input
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    nbags = len(starts) - 1
    emb = embedding(flat, weight, None, max_norm, norm_type)  # (M, dim)
    dev = weight.device
    seg = np.repeat(np.arange(nbags, dtype=np.int64), np.diff(starts))
    keep = np.ones(len(seg), bool)
    if padding_idx is not None:
        pidx = padding_idx if padding_idx >= 0 else weight._shape[0] + padding_idx
        keep = flat.detach().numpy(force=True) != pidx
    if mode == "max":
        rows = []
        for i in range(nbags):
            sel = np.nonzero(keep[starts[i]:starts[i + 1]])[0] + starts[i]
            if len(sel):
                rows.append(emb.index_select(0, _from_host(sel, _dt.int64, dev)).max(0)[0])
            else:
                rows.append(zeros(weight._shape[1], dtype=weight.dtype, device=dev))
        return stack(rows, 0) if rows else zeros((0, weight._shape[1]), dtype=weight.dtype, device=dev)
    if per_sample_weights is not None:
        emb = emb * per_sample_weights.unsqueeze(1)
    if not keep.all():
        emb = emb * _from_host(keep.astype(weight.dtype.np).reshape(-1, 1), weight.dtype, dev)
    out = zeros((nbags, weight._shape[1]), dtype=weight.dtype, device=dev).index_add(
        0, _from_host(seg, _dt.int64, dev), emb)
    if mode == "mean":
        count = np.maximum(np.bincount(seg[keep], minlength=nbags), 1).astype(weight.dtype.np)
        out = out / _from_host(count.reshape(-1, 1), weight.dtype, dev)
    return out
