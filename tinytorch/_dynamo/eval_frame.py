"""``torch._dynamo.eval_frame``: where PyTorch defines ``OptimizedModule``; here, tinytorch's compiled-module
class (``tinytorch.compiler.api.OptimizedModule``: ``isinstance(tinytorch.compile(module), OptimizedModule)``)."""
from ..compiler.api import OptimizedModule  # noqa: F401

__all__ = ["OptimizedModule", "is_dynamo_supported"]


def is_dynamo_supported():
    """Whether ``torch.compile`` works in this interpreter: tinytorch's compiler is plain Python, so always."""
    return True
