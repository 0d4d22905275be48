"""``nn.utils.rnn``: pad_sequence."""


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
