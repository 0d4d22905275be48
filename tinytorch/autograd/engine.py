"""The autograd engine: graph nodes, gradient accumulation and an iterative backward pass.

The graph is made of ``Node`` objects. Each op call that needs a gradient makes one node that keeps
what its backward formula needs and one edge ``(node, output_nr)`` per tensor input; leaves that
require grad end in an ``AccumulateGrad`` node. ``run_backward`` counts dependencies with an
explicit stack (no recursion, so graphs of any depth work), then runs each node once all the
gradients flowing into it have been summed.
"""
import heapq
import weakref

from .._modes import _ac as _autocast, _lazy, _suspended
from .grad_mode import _state
from .anomaly_mode import _anomaly

_node_observer = None  # while a profiler listens: autograd/profiler.py's _observe_node, which records each node run


class Node:
    """A backward function in the graph. ``next_functions`` mirrors PyTorch's attribute."""

    __slots__ = ("next_edges", "pre_hooks", "_seq", "__weakref__", "__dict__")
    _counter = [0]
    n_outputs = 1

    def __init__(self, next_edges):
        self.next_edges = next_edges
        self.pre_hooks = None
        Node._counter[0] += 1
        self._seq = Node._counter[0]

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def register_prehook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        self.pre_hooks.setdefault(output_nr, []).append(fn)

    def release(self):
        pass

    def __repr__(self):
        return f"<{self.name()} object>"


class AccumulateGrad(Node):
    """Terminal node of a leaf tensor: adds the incoming gradient into ``tensor.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable

    def accumulate(self, g, create_graph):
        t = self.variable
        for hook in t._hooks or ():
            r = hook(g)
            if r is not None:
                g = r
        if g.dtype is not t.dtype:
            g = g.to(t.dtype)
        before = t._grad
        if before is None:
            if create_graph:
                t._grad = g
            else:
                g = g.detach()
                # never keep a view (e.g. an expanded ones tensor) or a user tensor as .grad
                if g._base is not None or not g.is_contiguous() or g._from_user:
                    g = g.clone()
                t._grad = g
        elif create_graph or before._storage.sparse and not g._storage.sparse:
            t._grad = _sum_grads(t._grad, g if create_graph else g.detach())  # sparse .grad + dense: dense
        else:
            t._grad.add_(g.detach())
        if _lazy.active:  # a compiled function's replay must redo this attribute write (compiler/replay.py)
            _lazy.recording.note_grad(t, before)
        for hook in t._post_acc_hooks or ():
            hook(t)


def _sum_grads(a, b):
    """``a + b`` for two gradients of one tensor; a sparse one goes second (PyTorch adds dense + sparse, and
    refuses sparse + dense)."""
    return b + a if a._storage.sparse and not b._storage.sparse else a + b


def _grad_acc(t):
    """The (cached) AccumulateGrad node of leaf ``t``."""
    ref = t._grad_acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._grad_acc = weakref.ref(node)
    return node


def edge_of(t):
    """The graph edge a gradient for tensor ``t`` flows into, or None when ``t`` needs none."""
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t.requires_grad:
        return (_grad_acc(t), 0)
    return None


def _collect(roots):
    """Dependency count of every node reachable from ``roots`` (iterative DFS)."""
    deps = {}
    seen = set()
    stack = [n for n in roots]
    for n in roots:
        seen.add(n)
    while stack:
        node = stack.pop()
        for e in node.next_edges:
            if e is None:
                continue
            nxt = e[0]
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _check_nan(node, in_grads):
    for i, g in enumerate(in_grads):
        if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def run_backward(roots, retain_graph, create_graph, capture=None, accumulate=True):
    """Backpropagate. ``roots`` is a list of ``((node, output_nr), grad)``.

    ``capture`` maps ``(node, output_nr)`` to a list that receives the gradient flowing there
    (``autograd.grad``); with ``accumulate=False`` leaves' ``.grad`` is left alone.
    """
    prev = _state.enabled
    _state.enabled = bool(create_graph)
    no_autocast = _suspended() if _autocast.active else None  # backward ops run in their forward ops' dtypes
    if no_autocast is not None:
        no_autocast.__enter__()
    try:
        buffers = {}
        for (node, nr), g in roots:
            buf = buffers.get(node)
            if buf is None:
                buf = buffers[node] = [None] * node.n_outputs
            buf[nr] = g if buf[nr] is None else _sum_grads(buf[nr], g)
        root_nodes = list(buffers)
        deps = _collect(root_nodes)
        # a heap on -sequence number: the most recently created ready node runs first, as in PyTorch
        ready = [(-n._seq, n) for n in root_nodes if deps.get(n, 0) == 0]
        heapq.heapify(ready)
        while ready:
            node = heapq.heappop(ready)[1]
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node.n_outputs
            if node.pre_hooks:
                for nr, hooks in node.pre_hooks.items():
                    for h in hooks:
                        if grads[nr] is not None:
                            r = h(grads[nr])
                            if r is not None:
                                grads[nr] = r
            if capture is not None:
                for nr in range(node.n_outputs):
                    slot = capture.get((node, nr))
                    if slot is not None and grads[nr] is not None:
                        slot.append(grads[nr])
            if type(node) is AccumulateGrad:
                if accumulate and grads[0] is not None:
                    if _node_observer is None:
                        node.accumulate(grads[0], create_graph)
                    else:
                        _node_observer(node, node.accumulate, grads[0], create_graph)
                continue
            if all(g is None for g in grads):
                in_grads = (None,) * len(node.next_edges)
            else:
                in_grads = node.apply(grads) if _node_observer is None else _node_observer(node, node.apply, grads)
                if _anomaly["enabled"] and _anomaly["check_nan"]:
                    _check_nan(node, in_grads)
            if not retain_graph:
                node.release()
            for e, g in zip(node.next_edges, in_grads):
                if e is None:
                    continue
                nxt, nr = e
                if g is not None:
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt.n_outputs
                    buf[nr] = g if buf[nr] is None else _sum_grads(buf[nr], g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(ready, (-nxt._seq, nxt))
    finally:
        _state.enabled = prev
        if no_autocast is not None:
            no_autocast.__exit__()
