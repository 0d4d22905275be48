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
    input with one or two more dims (NotImplementedError otherwise)."""
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
