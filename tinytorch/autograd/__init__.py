"""``tinytorch.autograd``: backward, grad, Function, gradcheck and the grad-mode switches."""
from .. import _strides
from .engine import edge_of, run_backward
from .function import Function, FunctionCtx
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck
from . import functional, graph  # noqa: F401


def _make_grads(outputs, grads):
    from .._ops.creation import ones_like
    out = []
    for o, g in zip(outputs, grads):
        if g is None:
            if not o.requires_grad:
                raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = ones_like(o)
        elif g._shape != o._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {list(g._shape)} and output[0] has "
                               f"a shape of {list(o._shape)}.")
        else:
            g = g._alias() if not g.requires_grad else g
            g._from_user = True
        out.append(g)
    return out


def _as_tuple(x):
    if x is None:
        return None
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves (``torch.autograd.backward``).

    RuntimeError when a tensor does not require grad, or when a non-scalar output has no ``grad_tensors``.
    """
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    for t in tensors:
        if not t.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    grads = _make_grads(tensors, grads)
    roots = [(edge_of(t), g) for t, g in zip(tensors, grads)]
    if inputs is not None:
        inputs = _as_tuple(inputs)
        capture = {edge_of(i): [] for i in inputs}
        run_backward(roots, retain_graph, create_graph, capture, accumulate=False)
        for i in inputs:
            got = capture[edge_of(i)]
            if got:
                g = got[0]
                for x in got[1:]:
                    g = g + x
                i._grad = g if i._grad is None else i._grad + g
        return
    run_backward(roots, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` as a tuple, without touching ``.grad``.

    RuntimeError when an input is not reachable from the outputs, unless ``allow_unused``
    (then its entry is None, or zeros with ``materialize_grads``).
    """
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for i in inputs:
        if not i.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grads)
    roots = [(edge_of(t), g) for t, g in zip(outputs, grads) if t.requires_grad]
    if not roots:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    capture = {}
    for i in inputs:
        capture.setdefault(edge_of(i), [])
    run_backward(roots, retain_graph, create_graph, capture, accumulate=False)
    result = []
    for n, i in enumerate(inputs):
        got = capture[edge_of(i)]
        if not got:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(f"The differentiated Tensor at index {n} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .._ops.creation import zeros_like
                result.append(zeros_like(i))
            else:
                result.append(None)
            continue
        g = got[0]
        for x in got[1:]:
            g = g + x
        result.append(g)
    return tuple(result)
