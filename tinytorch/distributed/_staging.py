"""Host staging shared by the backends: a tensor of any device becomes a contiguous NumPy array in a dtype every
transport knows (float16 and bfloat16 reduce in float32, bool travels as uint8), and results go back into the
tensor. A cpu tensor already in such a dtype is used in place (no copy)."""
import numpy as np

_STAGE = {"float16": "float32", "bfloat16": "float32", "bool": "uint8"}


def host(t):
    """``(buf, writeback)``: a contiguous NumPy array with ``t``'s values, and a function that copies a result
    array back into ``t`` (None when ``buf`` is ``t``'s own memory). TypeError for a non-tensor."""
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    d = t.detach()
    direct = d.device.type == "cpu" and d.is_contiguous() and str(d.dtype).split(".")[-1] not in _STAGE
    if direct:
        return d.numpy(), None
    a = d.cpu().numpy()
    stage = _STAGE.get(a.dtype.name)
    buf = np.array(a, dtype=stage or a.dtype, order="C")  # a copy; np.array keeps 0-d arrays 0-d

    def writeback(res):
        r = res != 0 if a.dtype == np.bool_ else res.astype(a.dtype, copy=False)
        copy_into(t, r)
    return buf, writeback


def copy_into(t, arr):
    """Write host array ``arr`` (a staged dtype allowed) into tensor ``t`` of any device and dtype."""
    from .._ops.creation import from_numpy
    from ..autograd.grad_mode import no_grad
    with no_grad():
        src = from_numpy(np.array(arr, order="C").reshape(tuple(t.shape)))
        t.copy_(src.to(device=t.device, dtype=t.dtype))


def numpy_reduce(op, arrays):
    """Reduce host ``arrays`` elementwise with ReduceOp ``op`` (AVG divides the sum by their number)."""
    from ._c10d import ReduceOp
    fn = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.PRODUCT: np.multiply, ReduceOp.MIN: np.minimum,
          ReduceOp.MAX: np.maximum, ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or,
          ReduceOp.BXOR: np.bitwise_xor}[op]
    out = np.array(arrays[0], copy=True)
    for a in arrays[1:]:
        out = fn(out, a)
    if op is ReduceOp.AVG:
        out = out / len(arrays)
    return out.astype(arrays[0].dtype, copy=False)
