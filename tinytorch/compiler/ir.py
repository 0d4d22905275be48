"""The compiler's IR: the records a recording is made of and the passes read (torch.fx's ``Node``, tinygrad's
``UOp``).

A graph is a list of ``Node``, one per kernel call, in the order the calls were recorded. A node's ``args`` are
argument specs, one per positional argument of its kernel:

- ``Ext``: a tensor that existed before the graph (an argument, a parameter), ``ext[index]`` of the recording;
- ``Pending``: a view of a storage the graph computes, the output ``slot`` of an earlier node;
- ``TensorList``: a list or tuple holding tensors, its items specs;
- ``Const``: anything else, a Python value passed as it is.

Slots number the storages the graph computes, in the order their nodes were recorded; ``Recording.slot_info[slot]``
holds each one's (shape, dtype, backend, stride, offset, storage size).

The records are NamedTuples: cheap to make while recording, read by name, and copied with one field replaced by
``_replace`` (``node._replace(args=...)``). A graph's structure is its cache key (``Recording.keys``), but a float
``Const`` value is not part of that key (``lazy._freeze``): ``Plan.run`` reads it from the nodes it is given at run
time, so running a plan on ``with_consts(nodes, ...)`` runs it with other float values (a learning rate read
anew at replay).
"""
from typing import Any, Dict, List, NamedTuple, Optional, Tuple


class Ext(NamedTuple):
    """A tensor that existed before the graph: ``Recording.ext[index]``. ``cast``: the dtype the kernel receives
    it in (None: its own); ``item``: a 0-dim tensor of another device, passed to the kernel as a Python number."""
    index: int
    cast: Any
    item: bool


class Pending(NamedTuple):
    """A view (``shape``, ``stride``, ``offset``, ``dtype``) of the storage of ``slot``, computed by an earlier
    node of the graph. ``cast``: the dtype the kernel receives it in (None, or ``dtype``: as it is)."""
    slot: int
    shape: Tuple[int, ...]
    stride: Tuple[int, ...]
    offset: int
    dtype: Any
    cast: Any


class TensorList(NamedTuple):
    """A list or tuple (``type``) of arguments some of which are tensors; ``items`` are their specs."""
    type: type
    items: List[Any]


class Const(NamedTuple):
    """Any other argument: a Python value, passed to the kernel as it is. A float ``value`` is read from the nodes
    given to ``Plan.run`` (see ``with_consts``); any other value is part of the graph's cache key."""
    value: Any


class KwSpec(dict):
    """A node's ``kwargs`` when some are tensors: name -> argument spec (else ``kwargs`` is the plain dict of
    attributes, passed to the kernel as it is, or None)."""


class Node(NamedTuple):
    """One kernel call of a graph.

    ``kind``: 'kernel' (returns new tensors: the storages of ``outs``, slots), 'mutate' (writes its tensor
    arguments in place: an in-place kernel, a fused optimizer update) or 'copy' (the write step: ``args[1]``
    broadcast and cast into ``args[0]``). ``name``: the op's name; ``kernel``: the backend's function it calls
    (None for 'copy': ``backend.copy_``); ``args``: argument specs; ``kwargs``: None, a dict of attributes or a
    ``KwSpec``; ``outs``: the slots of its outputs; ``backend``: the backend it runs on (None for 'mutate')."""
    kind: str
    name: str
    kernel: Any
    args: List[Any]
    kwargs: Optional[Dict[str, Any]]
    outs: Any
    backend: Any


def slots_of(spec, acc):
    """Append to ``acc`` the slots ``spec`` reads (a ``Pending``'s, a ``TensorList``'s items'); returns ``acc``."""
    t = type(spec)
    if t is Pending:
        acc.append(spec.slot)
    elif t is TensorList:
        for x in spec.items:
            slots_of(x, acc)
    return acc


def node_slots(node):
    """The slots ``node`` reads, its ``args`` then its ``KwSpec`` values, one entry per read."""
    acc = []
    for s in node.args:
        slots_of(s, acc)
    if type(node.kwargs) is KwSpec:
        for s in node.kwargs.values():
            slots_of(s, acc)
    return acc


def with_consts(nodes, values):
    """A copy of the list ``nodes`` with the float values of ``values`` substituted: ``{(node index, position):
    value}``, where position is an int (``args[position]``, a ``Const``) or a str (the attribute of that name in
    the node's ``kwargs`` dict). Only the nodes named are copied; ``nodes`` is left as it is. Running a cached
    plan on the result (``Plan.run(ext, new_nodes)``) uses the new values: a float is read from the nodes at
    run time, not from the plan."""
    out = list(nodes)
    for (j, pos), v in values.items():
        node = out[j]
        if type(pos) is str:
            kw = dict(node.kwargs)
            kw[pos] = v
            out[j] = node._replace(kwargs=kw)
        else:
            args = list(node.args)
            args[pos] = Const(v)
            out[j] = node._replace(args=args)
    return out


class Graph(NamedTuple):
    """A recording's graph as the passes see it (``passes.PASSES``), each pass returning a new Graph.

    ``nodes``, ``slot_info``, ``ext``, ``ext_storage``: the recording's; ``live``: per slot, whether the storage
    is still referenced when the graph runs. Set by the passes: ``steps`` (what runs, in order: node indices,
    and ``fusion.FusedGroup`` in place of the nodes it fuses), ``dead`` (how many nodes were dropped), ``free``
    (per step, the slots released after it) and ``peak_bytes`` (the most bytes of intermediates alive at once)."""
    nodes: List[Node]
    slot_info: List[tuple]
    ext: List[Any]
    ext_storage: Dict[int, int]
    live: Tuple[bool, ...]
    steps: Optional[List[Any]] = None
    dead: int = 0
    free: Optional[List[Tuple[int, ...]]] = None
    peak_bytes: int = 0
