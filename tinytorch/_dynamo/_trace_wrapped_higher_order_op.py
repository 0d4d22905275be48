"""``torch._dynamo._trace_wrapped_higher_order_op``: ``TransformGetItemToIndex``, the function mode that makes
``A[i]`` with integer or 0-d tensor indices an advanced-indexing call (``aten.index``: the indices as int64
tensors), so indexing with a scalar tensor reads it as an index tensor rather than converting it to a Python int
(transformers builds attention masks under ``vmap`` with it)."""
from .. import _dtype as _dt
from .._tensor import Tensor
from ..overrides import TorchFunctionMode
from ..utils import _pytree

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    """Inside, ``tensor[indices]`` whose indices are all ints or tensors indexes with int64 index tensors."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is Tensor.__getitem__:
            tensor_to_index = args[0]
            if not isinstance(tensor_to_index, Tensor):
                raise AssertionError(f"expected torch.Tensor, got {type(tensor_to_index)}")
            leaves = _pytree.tree_leaves(args[1])
            if all(isinstance(x, (Tensor, int)) for x in leaves):
                from .._ops.creation import tensor
                index = tuple(tensor(x, dtype=_dt.int64, device=tensor_to_index.device) if isinstance(x, int) else x
                              for x in leaves)
                return tensor_to_index[index]
        return func(*args, **(kwargs or {}))
