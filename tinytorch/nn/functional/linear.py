"""``linear`` and ``bilinear``."""
from ...amp.autocast_mode import autocast_op
from ..._ops.linalg import linear  # noqa: F401  (one op: a fused kernel where the backend has one)


@autocast_op("off")
def bilinear(input1, input2, weight, bias=None):
    """``x1^T W_o x2 + b_o`` for each output o: input1 (N, in1), input2 (N, in2), weight (out, in1, in2), bias
    (out,) (``torch.nn.functional.bilinear``). RuntimeError (IndexError for a 0-d bias) when the sizes do not
    match, with PyTorch's messages."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1._shape[i] != input2._shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {input1._shape[i]} and "
                               f"{input2._shape[i]}")
    # ATen's order: input1's last size against weight.size(1), input2's against weight.size(2), then the bias
    for k, x in ((1, input1), (2, input2)):
        if _dim_size(x, -1) != _dim_size(weight, k):
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got {x._shape[-1]} but "
                               f"expected {weight._shape[k]}")
    if bias is not None and _dim_size(bias, 0) != _dim_size(weight, 0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias._shape[0]} but "
                           f"expected {weight._shape[0]}")
    if weight.ndim != 3:  # _trilinear's expansion
        raise RuntimeError("number of dimensions must match")
    # any leading (batch) dims of the inputs, as ATen's flatten-and-restore; input1 meets the weight first, as in
    # ATen's _trilinear, which decides where an inf input gives inf and where inf - inf = NaN
    out = _einsum("...oj,...j->...o", _einsum("...i,oij->...oj", input1, weight), input2)
    return out + bias if bias is not None else out


def _dim_size(t, d):
    """``t.size(d)`` with ATen's IndexError for a dim ``t`` does not have."""
    if t.ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -t.ndim <= d < t.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-t.ndim}, {t.ndim - 1}], but got {d})")
    return t._shape[d]


def _einsum(eq, *ops):
    from ..._ops.linalg import einsum
    return einsum(eq, *ops)
