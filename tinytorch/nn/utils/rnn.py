"""``nn.utils.rnn``: padding and packing of variable-length sequences. A ``PackedSequence`` holds the time
steps of a batch of sequences sorted by decreasing length, back to back: step t contributes its first
``batch_sizes[t]`` rows (the sequences still running), so RNN layers skip the padding."""
import collections


def _sort_desc(lengths):
    from ..._ops.creation import tensor
    from ... import _dtype
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable: ties keep their order
    return tensor(order, dtype=_dtype.int64)


def invert_permutation(permutation):
    """The permutation p^-1 with p^-1[p[i]] = i (None for None)."""
    if permutation is None:
        return None
    from ..._ops.creation import empty_like, arange
    out = empty_like(permutation)
    out[permutation] = arange(permutation.numel(), dtype=permutation.dtype, device=permutation.device)
    return out


class PackedSequence(collections.namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                                "unsorted_indices"])):
    """(data (sum of lengths, *), batch_sizes (T,) int64 on cpu, sorted_indices, unsorted_indices), as
    ``torch.nn.utils.rnn.PackedSequence``; build it with ``pack_padded_sequence`` / ``pack_sequence``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if i is None else i.to(data.device) for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *idx)

    def cpu(self):
        return self.to("cpu")

    def float(self):
        from ... import _dtype
        return self.to(dtype=_dtype.float32)

    def double(self):
        from ... import _dtype
        return self.to(dtype=_dtype.float64)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack ``input`` (T, B, *) ((B, T, *) with ``batch_first``) whose sequence b has ``lengths[b]`` steps.
    With ``enforce_sorted`` the lengths must be decreasing; otherwise the batch is sorted here and the
    permutation kept in the result. RuntimeError for unsorted lengths (with enforce_sorted) or a length <= 0;
    ValueError for a length beyond T."""
    from ..._ops.shape import cat
    from ..._tensor import Tensor
    lengths = [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        sorted_indices = _sort_desc(lengths).to(input.device)
        lengths = sorted(lengths, reverse=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.shape[1 if batch_first else 0] == 0 or not lengths:
        raise RuntimeError("Cannot pack empty tensors.")
    if min(lengths) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
                           "<= 0")
    if batch_first:
        input = input.transpose(0, 1)
    if lengths[0] > input.shape[0]:
        raise ValueError(f"Expected sequence length to be at most {input.shape[0]}, but got {lengths[0]}")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0])]
    data = cat([input[t, :b] for t, b in enumerate(batch_sizes)])
    from ..._ops.creation import tensor
    from ... import _dtype
    return PackedSequence(data, tensor(batch_sizes, dtype=_dtype.int64), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of ``pack_padded_sequence``: (padded (T, B, *) or (B, T, *), lengths (B,) int64), in the original
    batch order. ``total_length`` pads T further; ValueError when it is shorter than the longest sequence."""
    from ..._ops.creation import full, tensor
    from ... import _dtype
    data, bs = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    T, B = len(bs), bs[0]
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {T}")
        T = total_length
    padded = full((T, B) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    off = 0
    for t, b in enumerate(bs):
        padded[t, :b] = data[off:off + b]
        off += b
    lengths = [sum(1 for b in bs if b > i) for i in range(B)]
    lengths = tensor(lengths, dtype=_dtype.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length tensors (L_i, *) into (max_L, B, *) (or (B, max_L, *) with ``batch_first``)."""
    from ..._ops.shape import pad, stack
    n = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        extra = [0, 0] * (s.ndim - 1) + ([0, n - s.shape[0]] if padding_side == "right" else [n - s.shape[0], 0])
        out.append(pad(s, extra, value=padding_value))
    r = stack(out, 0)
    return r if batch_first else r.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of the B sequences of ``padded_sequences``, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(lengths.tolist() if hasattr(lengths, "tolist") else lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of (L_i, *) tensors (``pad_sequence`` then ``pack_padded_sequence``)."""
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences packed in ``packed_sequences``, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
