"""The backward of a compiled module as one autograd node (PyTorch's ``CompiledFunction`` node of AOTAutograd).

``tinytorch.compile(module)`` records the forward with its tensor arguments cut loose from their history (fresh
leaves over the same memory), so the recorded forward's autograd graph ends at those leaves and at the module's
parameters. The output's ``grad_fn`` is then one ``CompiledRegionBackward`` node whose edges are the arguments'
and parameters' own: the autograd engine outside sees one node for the region. When it runs, the region's
backward ops are recorded and run as one graph (through the same cached plans and fused kernels as any compiled
function), and the gradients flowing to the arguments and parameters are handed back to the engine.
Double backward (``create_graph=True``) runs the region's backward eagerly, so it records its own graph.
"""
from .._modes import _lazy, _state
from ..autograd.engine import Node, edge_of, run_backward
from .lazy import Recording


class CompiledRegionBackward(Node):
    """One node for a compiled region's backward: ``inner`` the region's output inside, ``leaves`` the fresh
    leaves standing for its inputs (arguments, then parameters) inside; the edges are the inputs' own."""

    __slots__ = ("inner", "leaves", "label")

    def __init__(self, inner, leaves, edges, label):
        Node.__init__(self, tuple(edges))
        self.inner = inner
        self.leaves = leaves
        self.label = label

    def name(self):
        return "CompiledFunctionBackward"

    def apply(self, grads):
        g = grads[0]
        if self.inner is None:
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Specify retain_graph=True if you need "
                               "to backward through the graph a second time.")
        capture = {}
        for leaf in self.leaves:
            capture.setdefault(edge_of(leaf), [])
        inner = self.inner
        root = [((inner.grad_fn, inner._output_nr), g)]
        create_graph = _state.enabled  # the engine turns grad mode on for create_graph=True
        if create_graph or _lazy.active:
            run_backward(root, True, create_graph, capture, accumulate=False)
        else:
            Recording(name=f"backward of {self.label}").run(run_backward, root, True, False, capture,
                                                              accumulate=False)
        out = []
        for leaf in self.leaves:
            got = capture[edge_of(leaf)]
            out.append(None if not got else got[0] if len(got) == 1 else sum(got[1:], got[0]))
        return out

    def release(self):
        self.inner = None


def cut(args, kwargs):
    """The call's arguments with every tensor that requires grad replaced by a fresh leaf over the same memory;
    returns (args, kwargs, [(original, leaf)])."""
    from .._tensor import Tensor
    pairs = []

    def sub(a):
        if isinstance(a, Tensor) and a.requires_grad and _state.enabled:
            leaf = a.detach().requires_grad_(True)
            pairs.append((a, leaf))
            return leaf
        if type(a) in (list, tuple):
            return type(a)(sub(x) for x in a)
        if type(a) is dict:
            return {k: sub(v) for k, v in a.items()}
        return a
    out = sub(tuple(args)), sub(dict(kwargs)), pairs
    sub = None  # noqa: F841 - the recursive closure refers to itself: break the cycle (it holds tensors)
    return out


def attach(out, pairs, params, label):
    """``out`` (the region's result) with its grad_fn replaced by one CompiledRegionBackward node, when it is one
    tensor that requires grad; otherwise ``out`` as recorded (its backward then runs op by op)."""
    from .._tensor import Tensor
    if not isinstance(out, Tensor) or out.grad_fn is None:
        return out
    leaves = [leaf for _, leaf in pairs] + list(params)
    edges = [edge_of(a) for a, _ in pairs] + [edge_of(p) for p in params]
    outer = out._alias()
    outer.grad_fn = CompiledRegionBackward(out, leaves, edges, label)
    outer.requires_grad = True
    return outer
