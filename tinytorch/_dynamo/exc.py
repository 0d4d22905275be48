"""``torch._dynamo.exc``: ``Unsupported``, the graph break ``fullgraph=True`` raises (tinytorch's compiler's)."""
from ..compiler.lazy import Unsupported  # noqa: F401

__all__ = ["Unsupported"]
