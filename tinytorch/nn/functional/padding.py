"""``pad``."""
from ...amp.autocast_mode import autocast_op
from ..._ops.shape import pad as _pad
from ..._ops._util import check_dtype


@autocast_op("fp32")
def _pad_fp32(input, pad, mode, value):
    return _pad(input, pad, mode, value)


def pad(input, pad, mode="constant", value=None):
    """``torch.nn.functional.pad``: see ``tinytorch._ops.shape.pad``. Under autocast, reflect and replicate
    padding run in float32 (PyTorch's fp32 autocast policy for reflection_pad / replication_pad).
    Negative pads crop, in every mode. As PyTorch, the non-constant modes pad the last 1, 2 or 3 dims of an
    input with one or two more dims (NotImplementedError otherwise).

    Argument errors as PyTorch's parser: TypeError for a ``pad`` that is not a sequence of ints (its message
    names the first bad element's position) or a ``mode`` that is not a str; NotImplementedError for an unknown
    mode; RuntimeError for a nonzero ``value`` with a non-constant mode."""
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    pad = _pad_ints(pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if mode != "constant" and len(pad) % 2 == 0 and not (1 <= k <= 3 and input.ndim in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode in ("reflect", "replicate"):
        # ATen's reflection_pad / replication_pad kernels cover every dtype but bool
        check_dtype(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d", input.dtype, floating=True,
                    complex_ok=True, integral=True)
        return _pad_fp32(input, pad, mode, value)
    return _pad(input, pad, mode, value)


def _pad_ints(pad):
    """``pad`` as a tuple of ints, checked as PyTorch's int-list parser does: the first element must be an int
    (not a bool) or an integer tensor, later ones anything int-like."""
    import numpy as np
    from ..._tensor import Tensor
    if isinstance(pad, Tensor) or not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    out = []
    for k, v in enumerate(pad):
        ok = isinstance(v, (int, np.integer, Tensor)) and not (k == 0 and isinstance(v, bool))
        if isinstance(v, Tensor):
            ok = v.numel() == 1 and not (v.dtype.is_floating_point or v.dtype.is_complex)
        if not ok:
            if k == 0:
                raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                                f"{type(v).__name__} at pos 0")
            raise TypeError(f"pad(): argument 'pad' failed to unpack the object at pos {k + 1} with error \"type must "
                            f"be tuple of ints,but got {type(v).__name__}\"")
        out.append(int(v.item()) if isinstance(v, Tensor) else int(v))
    return tuple(out)
