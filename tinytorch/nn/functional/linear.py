"""``linear`` and ``bilinear``."""
from ...amp.autocast_mode import autocast_op
from ..._ops.linalg import linear  # noqa: F401  (one op: a fused kernel where the backend has one)


@autocast_op("off")
def bilinear(input1, input2, weight, bias=None):
    out = _einsum("bi,oij,bj->bo", input1, weight, input2)
    return out + bias if bias is not None else out


def _einsum(eq, *ops):
    from ..._ops.linalg import einsum
    return einsum(eq, *ops)
