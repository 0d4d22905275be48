"""``torch._dynamo``: the names libraries reach for, backed by tinytorch's compiler (``tinytorch.compiler``).

tinytorch has no bytecode tracer: ``tinytorch.compile`` records the ops a function sends through the dispatcher
(``compiler/lazy.py``). What Dynamo's names mean here: ``OptimizedModule`` is the class of
``tinytorch.compile(module)`` (``eval_frame.OptimizedModule``); ``disable`` runs a function eagerly as a graph break;
``allow_in_graph`` returns the function (its ops are recorded anyway); ``config`` is the compiler's settings
module; ``exc.Unsupported`` the graph-break error of ``fullgraph=True``; ``mark_static_address`` and
``mark_dynamic`` record on the tensor what PyTorch's do (see each).
"""
from ..compiler import allow_in_graph, disable, is_compiling, reset  # noqa: F401
from ..compiler.api import OptimizedModule  # noqa: F401
from . import config, eval_frame, exc, utils  # noqa: F401

__all__ = ["OptimizedModule", "allow_in_graph", "config", "disable", "is_compiling", "mark_dynamic",
           "mark_static_address", "reset", "optimize"]


def _check_tensor(t, what):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{what} expects a tensor but received {type(t)}")


def mark_static_address(t, guard=False):
    """Declare that ``t``'s memory stays the same across calls of compiled functions (a KV cache, a parameter), as
    ``torch._dynamo.mark_static_address``: sets ``t._dynamo_static_input_type`` ("guarded" or "unguarded"), as
    PyTorch does. tinytorch's replays already read every tensor that is not an argument in place, by identity
    (``compiler/api.py``): such a tensor is never copied into the graph. TypeError for a non-tensor."""
    _check_tensor(t, "mark_static_address")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Record that dim ``index`` (an int or a list of them) of ``t`` varies between calls, as
    ``torch._dynamo.mark_dynamic`` does: the dims go into ``t._dynamo_dynamic_indices`` and ``(dim, min, max)`` into
    ``t._dynamo_dynamic_range``. tinytorch's compiler specializes every shape (a new size records a new graph, up
    to ``config.recompile_limit``), so the mark documents intent without changing what is recorded. TypeError for
    a non-tensor."""
    _check_tensor(t, "mark_dynamic")
    dims = [index] if isinstance(index, int) else list(index)
    if not hasattr(t, "_dynamo_dynamic_indices"):
        t._dynamo_dynamic_indices = set()
        t._dynamo_dynamic_range = set()
    t._dynamo_dynamic_indices.update(dims)
    t._dynamo_dynamic_range.update((d, min, max) for d in dims)


def optimize(backend="inductor", *, nopython=False, dynamic=None, disable=False, **kwargs):
    """The decorator form of ``tinytorch.compile`` under Dynamo's old name: ``optimize(backend)(fn)``
    (``nopython`` is ``fullgraph``)."""
    from ..compiler import compile as _compile

    def deco(fn):
        return _compile(fn, fullgraph=nopython, dynamic=dynamic, backend=backend, disable=disable)
    return deco


def assume_constant_result(fn):
    """``torch._dynamo.assume_constant_result``: Dynamo may trace ``fn``'s result as a constant instead of tracing
    into it. tinytorch's compiler records the ops a call dispatches and guards the Python state it reads, so ``fn``
    needs no marking: it is returned as it is."""
    return fn
