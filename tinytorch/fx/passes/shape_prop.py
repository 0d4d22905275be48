"""``torch.fx.passes.shape_prop``: run a GraphModule on example inputs and record each node's tensor metadata.

``ShapeProp(gm).propagate(*args)`` runs the graph (an ``Interpreter``) and sets ``node.meta['tensor_meta']`` to a
``TensorMetadata`` (shape, dtype, requires_grad, stride, memory_format, is_quantized, qparams) for each node whose
value is a tensor (the same structure of them for tuples/lists/dicts of tensors), and ``node.meta['type']`` to the
value's type. Written after PyTorch's ``torch/fx/passes/shape_prop.py``.
"""
from typing import Any, Dict, NamedTuple, Optional, Tuple

from ..._tensor import Tensor
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records about one tensor value."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: Tuple[int, ...]
    memory_format: Optional[Any]
    is_quantized: bool
    qparams: Dict[str, Any]


def _extract_tensor_metadata(result, include_contiguity=True):
    """The ``TensorMetadata`` of tensor ``result``. ``memory_format`` is ``torch.contiguous_format`` for a
    contiguous tensor (tinytorch has no other memory formats), else None."""
    from ... import contiguous_format
    memory_format = None
    if include_contiguity and result.is_contiguous():
        memory_format = contiguous_format
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, tuple(result.stride()), memory_format,
                          bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """An Interpreter that records each node's tensor metadata (see the module docstring)."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp: tinytorch has no fake tensors; run it on real example inputs")
        self.fake_mode = None

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with meta={n.meta}") from e
        found = False

        def extract(obj):
            nonlocal found
            if isinstance(obj, Tensor):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args`` (example inputs), filling the metas; returns the graph's output."""
        return super().run(*args)
