"""Fusion: runs of elementwise kernels over the same elements become one generated kernel.

A run is a sequence of consecutive kept nodes (so no write by another node falls between them) that are fusible
ops (``Op.fusible``: a formula of ``kernels/formulas.py`` marked fusible, ``codegen_cpp.EXPRESSIONS``), on one
backend with a code generator, in one floating dtype, whose tensor operands are either the run's whole element
count, contiguous, or a single element (a broadcast scalar). Chains fuse vertically (an intermediate read only inside
the run stays in a register, never in memory) and independent ops over the same elements horizontally (one pass
instead of several). A run's outputs are the members' results that are still referenced or read after the run.

Dropout's ``div`` + ``mul``, a residual ``add`` after a bias, ``relu`` and its ``threshold_backward``, the
``mul``/``add`` chains of a hand-written optimizer or normalization are the typical runs.
"""
import importlib
from math import prod as _prod

from .. import _strides
from .._dispatch import OPS
from .ir import Const, Ext, Pending, node_slots


# runs over fewer elements stay unfused: a generated kernel costs a compiler run (~0.2 s, once per machine: the
# disk cache), and the unfused kernels of a few hundred elements cost microseconds
MIN_ELEMENTS = 256


class FusedGroup:
    """One generated kernel standing for ``members`` (node indices). ``inputs``: argument specs (``ir.Pending``,
    ``ir.Ext``) of the values it reads; ``outs``: the slots it writes; ``fn(consts, *natives)`` runs it;
    ``const_src``: where each constant is read from the running call's nodes, ('a', node, position) or ('k',
    node, attribute name)."""

    def __init__(self, members, inputs, outs, backend, fn, name):
        self.members = members
        self.inputs = inputs
        self.outs = outs
        self.backend = backend
        self.fn = fn
        self.name = name


def _operand(graph, s, n, dtype):
    """Whether argument spec ``s`` can be read by a generated loop over ``n`` elements of ``dtype``: 'full',
    'scalar' (one element, broadcast), 'const' (a Python number) or None."""
    k = type(s)
    if k is Const:
        return "const" if type(s.value) in (int, float) else None
    if k is Pending:
        shape, stride, offset, dt, cast = s.shape, s.stride, s.offset, s.dtype, s.cast
        if dt is not dtype or (cast is not None and cast is not dt):
            return None
        size = _prod(shape)
        info = graph.slot_info[s.slot]
        if size == 1 and offset == 0:
            return "scalar"
        if size == n and offset == 0 and info[4] == 0 and stride == _strides.contiguous_strides(shape) \
                and info[3] == stride:
            return "full"
        return None
    if k is Ext:
        cast = s.cast
        t = graph.ext[s.index]
        if s.item or t.dtype is not dtype or (cast is not None and cast is not dtype):
            return None
        size = _prod(t._shape)
        if size == 1:
            return "scalar"
        if size == n and _strides.is_contiguous(t._shape, t._stride):
            return "full"
    return None


def fuse(graph):
    """The fusion pass: ``graph.steps`` (node indices) with a FusedGroup in place of each run it fuses."""
    nodes, kept = graph.nodes, graph.steps
    # who reads each slot: a run's member result read after the run (or held) must be written out
    readers = {}
    for j in kept:
        for s in node_slots(nodes[j]):
            readers.setdefault(s, []).append(j)
    steps, run = [], []

    def close():
        if len(run) >= 2:
            g = _group(graph, run, readers)
            if g is not None:
                steps.append(g)
                run.clear()
                return
        steps.extend(run)
        run.clear()

    key = None
    for j in kept:
        k = _eligible(graph, nodes[j])
        if k is None:
            close()
            key = None
            steps.append(j)
            continue
        if k != key:
            close()
            key = k
        run.append(j)
    close()
    return graph._replace(steps=steps)


def _eligible(graph, node):
    """(element count, dtype, backend) of a node a generated loop can compute, else None."""
    name, spec, kw, outs, backend = node.name, node.args, node.kwargs, node.outs, node.backend
    if node.kind != "kernel" or len(outs) != 1:
        return None
    op = OPS.get(name)
    if op is None or not op.fusible:
        return None
    gen = codegen_for(backend)
    if gen is None:
        return None
    expr = gen.expression(name)
    if expr is None or not expr.accepts(kw, len(spec)):
        return None
    shape, dtype, _, stride, offset, size = graph.slot_info[outs[0]]
    if dtype.name not in ("float32", "float64") or offset != 0 or stride != _strides.contiguous_strides(shape):
        return None
    n = _prod(shape)
    if n < MIN_ELEMENTS or size != n:
        return None
    for s in spec:
        if _operand(graph, s, n, dtype) is None:
            return None
    return (n, dtype, backend)


def codegen_for(backend):
    """The code generator ``backend`` names (``Backend.codegen``: ``codegen_cpp`` on the cpu, ``codegen_opencl``
    on the opencl and cuda devices) when it can run here, else None: that backend's plans run its own kernels one
    by one."""
    name = getattr(backend, "codegen", None)
    if name is None:
        return None
    gen = importlib.import_module(name)
    return gen if gen.available() else None


def _group(graph, run, readers):
    nodes, live = graph.nodes, graph.live
    members = set(run)
    inputs, in_index = [], {}
    body = []  # (op name, operand refs, kw) per member; a ref: ('in', k) / ('v', member position) / ('c', k)
    consts = []
    produced = {}
    n, dtype, backend = _eligible(graph, nodes[run[0]])
    gen = codegen_for(backend)
    for pos, j in enumerate(run):
        node = nodes[j]
        name, spec, kw, outs = node.name, node.args, node.kwargs, node.outs
        refs = []
        for s in spec:
            kind = _operand(graph, s, n, dtype)
            if kind == "const":
                refs.append(("c", len(consts)))
                consts.append(("a", j, _pos(spec, s)))
                continue
            if type(s) is Pending and s.slot in produced:  # a member's result: a register, all members have n elements
                refs.append(("v", produced[s.slot]))
                continue
            if type(s) is Pending:
                key = s
            else:  # one operand per memory and geometry: x * y + x reads x once
                t = graph.ext[s.index]
                key = ("x", graph.ext_storage[id(t._storage)], t._shape, t._stride, t._offset)
            k = in_index.get(key)
            if k is None:
                k = in_index[key] = len(inputs)
                inputs.append((s, kind))
            refs.append(("in", k))
        for name_ in gen.expression(name).kw_consts:
            refs.append(("c", len(consts)))
            consts.append(("k", j, name_))
        body.append((name, refs, kw))
        produced[outs[0]] = pos
    out_slots, out_pos = [], []
    for pos, j in enumerate(run):
        s = nodes[j].outs[0]
        if live[s] or any(r not in members for r in readers.get(s, ())):
            out_slots.append(s)
            out_pos.append(pos)
    if not out_slots:
        return None
    kernel = gen.build(body, [k for _, k in inputs], out_pos, dtype)
    if kernel is None:
        return None
    shape = graph.slot_info[out_slots[0]][0]
    fn = gen.launcher(kernel, n, dtype, [graph.slot_info[s][0] for s in out_slots], backend)
    g = FusedGroup(list(run), [s for s, _ in inputs], out_slots, backend, fn,
                   "fused_" + "_".join(b[0] for b in body) + f"{list(shape)}")
    g.const_src = tuple(consts)  # (where, node, position or attribute name): read from the running call
    return g


def _pos(spec, s):
    for i, x in enumerate(spec):
        if x is s:
            return i
    raise ValueError("spec not found")
