"""The passes a ``Plan`` runs on a graph, in order (``PASSES``); each takes an ``ir.Graph`` and returns a new one.

- ``eliminate_dead_code``: a kernel whose outputs nobody holds and no kept node reads is dropped;
- ``fusion.fuse``: runs of elementwise kernels become one generated kernel (``fusion.py``);
- ``plan_memory``: each intermediate is released right after its last reader, so the allocator reuses its memory
  for the next one; the peak of the graph's intermediates is measured.
"""
from math import prod as _prod

from . import fusion
from .ir import node_slots, slots_of


def eliminate_dead_code(graph):
    """Keep the nodes with side effects ('mutate', 'copy') and the kernels whose outputs are still referenced
    (``graph.live``) or read by a kept node, walking backwards; ``steps`` is the kept node indices in order."""
    nodes, live = graph.nodes, graph.live
    needed = set(i for i, l in enumerate(live) if l)
    keep = [False] * len(nodes)
    for j in range(len(nodes) - 1, -1, -1):
        node = nodes[j]
        if node.kind != "kernel" or any(s in needed for s in node.outs):
            keep[j] = True
            needed.update(node_slots(node))
    kept = [j for j in range(len(nodes)) if keep[j]]
    return graph._replace(steps=kept, dead=len(nodes) - len(kept))


def _step_reads(graph, step):
    """The slots a step reads: a node's (``ir.node_slots``), a fused group's inputs'."""
    if isinstance(step, int):
        return node_slots(graph.nodes[step])
    acc = []
    for s in step.inputs:
        slots_of(s, acc)
    return acc


def _step_outs(graph, step):
    return graph.nodes[step].outs if isinstance(step, int) else step.outs


def plan_memory(graph):
    """``free``: per step, the slots released after it: an intermediate (a slot not ``live``) after its last
    reader, one nobody reads (a fused group's member read only inside the group) right after the step that makes
    it. ``peak_bytes``: the most bytes of intermediates alive at once as the steps allocate and release them."""
    steps, live, info = graph.steps, graph.live, graph.slot_info
    last = {}
    for i, st in enumerate(steps):
        for s in _step_reads(graph, st):
            last[s] = i
    frees = [[] for _ in steps]
    for s, i in last.items():
        if not live[s]:
            frees[i].append(s)
    for i, st in enumerate(steps):
        for s in _step_outs(graph, st):
            if s not in last and not live[s]:
                frees[i].append(s)
    free = [tuple(f) for f in frees]
    cur = peak = 0
    for i, st in enumerate(steps):
        for s in _step_outs(graph, st):
            shape, dtype = info[s][:2]
            cur += _prod(shape) * dtype.itemsize
        peak = max(peak, cur)
        for s in free[i]:
            shape, dtype = info[s][:2]
            cur -= _prod(shape) * dtype.itemsize
    return graph._replace(free=free, peak_bytes=peak)


PASSES = (eliminate_dead_code, fusion.fuse, plan_memory)


def run_passes(graph, passes=PASSES):
    """``graph`` after each of ``passes`` in turn."""
    for p in passes:
        graph = p(graph)
    return graph
