"""Capture at the dispatcher: lazy tensors (PyTorch/XLA's lazy-tensor design).

While a compiled function runs, ``_dispatch.dispatch`` does everything it does eagerly (argument checks, type
promotion, the output's shape and dtype, the autograd graph) except running the kernel: it appends the call to the
thread's ``Recording`` and returns a tensor whose storage is a ``LazyStorage``, *pending* until the recording runs.
The in-place kernels, the mutating ops (fused optimizer updates) and the write step (``copy_``, every in-place op,
``out=``) are recorded the same way, so a whole training step (forward, the autograd engine's backward ops, the
optimizer) becomes one graph.

The recording runs (``Recording.flush``) at the end of the compiled function, or earlier when something needs a
pending value on the host: reading a pending storage's buffer (``.item()``, ``.tolist()``, ``bool(t)``, ``print``,
``.numpy()``) or an op whose output shape depends on the data (``nonzero``, boolean masks). That early run is a
*graph break*: the graph recorded so far runs, and recording goes on in a new graph. With ``fullgraph=True`` a graph
break raises ``Unsupported`` naming the op and the line of the user's code instead.

A recording runs through a ``Plan`` (``graph.py``), cached by the graph's structure: the same ops on the same
shapes, dtypes, strides, Python scalars and attributes give the same key, so the passes and the generated kernels
are made once.
"""
import os
import sys
import weakref
from math import prod as _prod

from .._modes import _lazy, _state
from .._storage import Storage
from .. import _strides
from .ir import Const, Ext, KwSpec, Node, Pending, TensorList

LAYOUTS = {}  # a recorded call's key -> (stride, offset, storage size) of each output, as its kernel made them
_BUF = Storage.buf  # the base class's slot: where a LazyStorage keeps its buffer once it has one
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
Tensor = _new = _CPU = None  # set on first use (import cycle with _tensor)


class Unsupported(RuntimeError):
    """A graph break under ``fullgraph=True`` (PyTorch's ``torch._dynamo.exc.Unsupported``): the compiled
    function needs a value on the host, or an op with a data-dependent output shape, in the middle of its graph."""


class LazyStorage(Storage):
    """The storage of a tensor that a recording will compute. Its buffer is made when the recording runs; reading
    ``buf`` before that runs the recording first (a graph break)."""

    __slots__ = ("recording", "slot")

    def __init__(self, dtype, device, size, backend, recording, slot):  # noqa: super().__init__ would set buf
        self.backend = backend
        self.dtype = dtype
        self.device = device
        self.size = size
        self._version = [0]
        self.inference = _state.inference
        _BUF.__set__(self, None)
        self.recording = recording
        self.slot = slot

    @property
    def buf(self):
        rec = self.recording
        if rec is not None:
            rec.sync()
            if self.recording is not None:
                raise RuntimeError("tinytorch.compile: this tensor belongs to a compiled function whose graph "
                                   "raised an error before it ran; it has no value")
        return _BUF.__get__(self)

    @buf.setter
    def buf(self, value):
        _BUF.__set__(self, value)


_ELEMENTWISE = []


def _elementwise():
    """The names of the elementwise ops (``Op.elementwise``; ``clone`` is not one: its memory format decides its
    layout)."""
    if not _ELEMENTWISE:
        from .._dispatch import OPS
        _ELEMENTWISE.append(frozenset(n for n, o in OPS.items() if o.elementwise and o.meta is not None))
    return _ELEMENTWISE[0]


def _predicted_strides(shape, args):
    """The strides an op's output is given before its kernel has run: those of the first tensor argument of the
    same shape when it is dense in another memory order (an elementwise kernel keeps its input's memory order, as
    PyTorch's TensorIterator), else contiguous. A kernel that does otherwise is learned from its first run
    (``LAYOUTS``)."""
    for a in args:
        if isinstance(a, Tensor) and a._shape == shape and len(shape) > 1:
            st = a._stride
            cs = _strides.contiguous_strides(shape)
            if st == cs:
                return cs
            order = sorted(range(len(shape)), key=lambda d: (st[d], -d), reverse=True)
            expect = 1
            dense = True
            out = [0] * len(shape)
            for d in reversed(order):
                if shape[d] != 1 and st[d] != expect:
                    dense = False
                    break
                out[d] = expect
                expect *= shape[d]
            if dense:
                return tuple(out)
            break
    return _strides.contiguous_strides(shape)


def _freeze(v):
    """A hashable stand-in for an op attribute or scalar argument, with its type (1 and 1.0 and True promote
    differently). A float's value is left out: it is read from the call being run, not from the graph's cache key,
    so a learning rate that changes every step (a scheduler) does not make a new graph each step."""
    t = type(v)
    if t is float:
        return (float,)
    if t in (int, bool, str, complex) or v is None:
        return (t, v)
    if t in (list, tuple):
        return (t, tuple(_freeze(x) for x in v))
    if t is dict:
        return (t, tuple(sorted((k, _freeze(x)) for k, x in v.items())))
    try:
        hash(v)
        return v
    except TypeError:
        return (t, repr(v))


def user_frame():
    """'file:line (function)' of the innermost frame outside tinytorch, and the name of the tinytorch function it
    called (the op that needed the data)."""
    f = sys._getframe(1)
    inner = None
    while f is not None:
        fn = f.f_code.co_filename
        if not os.path.abspath(fn).startswith(_PKG):
            return f"{fn}:{f.f_lineno} ({f.f_code.co_name})", inner
        if f.f_code.co_name not in ("public", "wrapper", "call") or not fn.endswith("_surface.py"):
            inner = f.f_code.co_name  # the surface's argument-checking wrapper keeps the function's own name
        f = f.f_back
    return "<unknown>", inner


class Recording:
    """The ops a compiled function sent through the dispatcher since its graph last ran.

    ``nodes``: the graph, one ``ir.Node`` per kernel call, its arguments ``ir.Ext`` (an existing tensor,
    ``ext[index]``), ``ir.Pending`` (a view of a pending storage), ``ir.TensorList`` or ``ir.Const``. ``keys``
    hold the hashable structure of each node (the cache key of the graph)."""

    def __init__(self, fullgraph=False, name="<fn>", debug=False):
        self.fullgraph = fullgraph
        self.name = name
        self.debug = debug
        self.segments = 0  # graphs run so far
        self.breaks = []  # (reason, where) of each graph break
        self.grads = {}  # leaf tensor -> its .grad after the autograd engine wrote it (the replay redoes it)
        self.plans = []  # the Plan of each graph run
        self.snapshot = False  # keep the memory of written existing tensors (a capture for replay)
        self.host_draws = 0  # random draws made on the host while recording (never replayable)
        self._reset()

    def _reset(self):
        self.nodes = []
        self.keys = []
        self.lkeys = []  # per node: its key without learned layouts (the LAYOUTS key), None for writes
        self.slots = []  # weakref to each pending LazyStorage
        self.slot_info = []  # (shape, dtype, backend, stride, offset, storage size) of each pending storage
        self.ext = []  # the existing tensors the graph reads or writes, one entry per use
        self.ext_storage = {}  # id(storage) -> index: which uses share memory (part of the key)
        self._keep = []  # those storages, so their ids stay unique while recorded
        self.dirty = set()  # ids of the existing storages the graph writes
        self.deferred_draws = 0  # random draws recorded as nodes (not yet drawn)
        self.snaps = {}  # with ``snapshot``: id(storage) -> a copy of its memory before the graph's first write
        self.bindings = []  # (node, keyword, group, key, index): optimizer hyperparameters read as graph inputs

    # ---- recording ----------------------------------------------------------------------------------------
    def _settle(self, args, dev):
        """Make the values the call needs now exist before its specs are made (a graph break renumbers slots): a
        pending 0-dim cpu tensor joining another device's op, a tensor pending in another recording."""
        for a in args:
            if isinstance(a, Tensor):
                st = a._storage
                if type(st) is LazyStorage and st.recording is not None and (
                        st.recording is not self or dev is not None and st.device is not dev):
                    st.buf  # noqa: B018 - runs the graph that computes it
            elif type(a) in (list, tuple):
                self._settle(a, dev)

    def _spec(self, a, cast, dev, key):
        if isinstance(a, Tensor):
            st = a._storage
            if type(st) is LazyStorage:
                if st.recording is self:
                    if dev is not None and st.device is not dev:  # a 0-dim cpu value joining another device
                        st.buf  # noqa: B018 - needs the value now: runs the graph
                    else:
                        s = Pending(st.slot, a._shape, a._stride, a._offset, a.dtype, cast)
                        key.append(s)
                        return s
                elif st.recording is not None:
                    st.buf  # noqa: B018 - pending in another recording (an outer one): that one runs first
            i = len(self.ext)
            self.ext.append(a)
            si = self.ext_storage.get(id(st))
            if si is None:
                si = self.ext_storage[id(st)] = len(self._keep)
                self._keep.append(st)
            item = dev is not None and st.device is not dev
            key.append(("x", si, a._shape, a._stride, a._offset, a.dtype, st.device, cast, item, a.requires_grad))
            return Ext(i, cast, item)
        if type(a) in (list, tuple) and any(isinstance(x, Tensor) for x in a):
            key.append(("l", len(a)))
            return TensorList(type(a), [self._spec(x, None, dev, key) for x in a])
        key.append(_freeze(a))
        return Const(a)

    def _kw(self, kw, dev, key):
        if not kw:
            return None
        for v in kw.values():
            if isinstance(v, Tensor) or type(v) in (list, tuple) and any(isinstance(x, Tensor) for x in v):
                spec = KwSpec()
                for k, x in kw.items():
                    if type(x) is float:  # written into the plan's code among tensor specs: part of the key
                        key.append((float, x))
                        spec[k] = Const(x)
                    else:
                        spec[k] = self._spec(x, None, dev, key)
                return spec
        key.append(_freeze(kw))
        return kw

    def record(self, op, args, kw, outs, casts, backend, dev, kern):
        """Record a kernel call of ``op`` (its meta already ran: ``outs``, ``casts``) and return its pending
        output(s); None when its output shape depends on the data (the graph runs, and so does the op, eagerly)."""
        for shape, _ in outs:
            if shape is None:
                self.sync(f"{op.name}: output shape depends on the data")
                return None
        self._settle(args, dev)
        if kw:
            self._settle(list(kw.values()), dev)
        key = [op.name]
        spec = [self._spec(a, c, dev, key) for a, c in zip(args, casts)]
        kwspec = self._kw(kw, dev, key)
        key = tuple(key)
        layouts = LAYOUTS.get(key)
        self.lkeys.append(key)
        if layouts is not None:  # a layout learned from an earlier run (a convolution's output is not contiguous)
            key = key + (("layout", tuple(layouts)),)
        out_slots = []
        results = []
        device = dev or _CPU
        for i, (shape, dtype) in enumerate(outs):
            slot = len(self.slots)
            if layouts is not None and layouts[i] is not None:
                stride, offset, size = layouts[i]
            else:
                stride = _predicted_strides(shape, args) if op.name in _elementwise() else \
                    _strides.contiguous_strides(shape)
                offset, size = 0, _prod(shape)
            st = LazyStorage(dtype, device, size, backend, self, slot)
            self.slots.append(weakref.ref(st))
            self.slot_info.append((shape, dtype, backend, stride, offset, size))
            results.append(_new(st, shape, stride, offset, dtype))
            out_slots.append(slot)
        self.nodes.append(Node("kernel", op.name, kern, spec, kwspec, out_slots, backend))
        self.keys.append(key)
        return results[0] if len(results) == 1 else tuple(results)

    def record_draw(self, name, draw, gen, p, shape, dtype, device):
        """Record a random draw as a node of the graph: ``draw(gen, p, shape, dtype, backend)`` runs when the graph
        runs (and on every replay). ``p``, a float, is read from the running call."""
        from ..device import get_backend
        backend = get_backend(device)
        self.deferred_draws += 1
        op = _Named(f"{name}[{id(gen):x}]")  # the generator is part of the graph's key
        return self.record(op, (p,), None, [(shape, dtype)], (None,), backend, device,
                           lambda p: draw(gen, p, shape, dtype, backend))

    def host_draw(self):
        """A random draw on the host while recording: it happens now, so draws recorded before it run first (the
        order of the numbers stays eager's). A function that draws on the host is never replayed."""
        self.host_draws += 1
        if self.deferred_draws:
            self.sync("a random draw on the host after draws recorded in the graph")

    def record_mutation(self, name, kern, args, kw):
        """Record a kernel that writes its tensor arguments in place (an in-place kernel, a fused update)."""
        self._settle(args, None)
        n_ext = len(self.ext)
        key = [name, "mutate"]
        spec = [self._spec(a, None, None, key) for a in args]
        kwspec = self._kw(kw, None, key)
        self._dirty(n_ext)
        self.lkeys.append(None)
        self.nodes.append(Node("mutate", name, kern, spec, kwspec, (), None))
        self.keys.append(tuple(key))

    def record_copy(self, dst, src):
        """Record the write step: ``src`` broadcast and cast into ``dst``'s memory."""
        self._settle((dst, src), None)
        key = ["copy_"]
        n_ext = len(self.ext)
        spec = [self._spec(dst, None, None, key)]
        self._dirty(n_ext)
        spec.append(self._spec(src, None, None, key))
        self.lkeys.append(None)
        self.nodes.append(Node("copy", "copy_", None, spec, None, (), dst._storage.backend))
        self.keys.append(tuple(key))

    def _dirty(self, start):
        """The existing tensors recorded from ``ext[start]`` on are written by the graph: reading them on the host
        needs the graph to run first."""
        for t in self.ext[start:]:
            st = t._storage
            self.dirty.add(id(st))
            if self.snapshot and id(st) not in self.snaps:
                # its memory before the graph writes it: a scratch buffer made by the call (zeros filled by
                # slices) is restored to this before each replay (api.Replay)
                b = st.backend
                self.snaps[id(st)] = b.from_numpy(b.to_numpy(b.view(st.buf, st.dtype, (st.size,), (1,), 0)), st.device)

    def bind_group(self, name, values, group, hyper):
        """The last recorded node is ``name``'s fused optimizer kernel, and its keyword arguments ``values`` are the
        hyperparameters ``hyper`` of ``group`` (``optim.optimizer._fused``): a replay reads them from the group
        again, so they are graph inputs. Under a guarded capture the group is a ``guards.GroupProxy``; the keys are
        noted as bound only when the node is the one expected, and as read (guarded by value) otherwise."""
        from .guards import GroupProxy
        if type(group) is not GroupProxy:
            return
        node = self.nodes[-1] if self.nodes else None
        kw = node.kwargs if node is not None and node.kind == "mutate" else None
        keys = {src if type(src) is str else src[0] for src in hyper.values()}
        if type(kw) is not dict or any(kw.get(k) is not v for k, v in values.items()):
            group.reads.update(keys)
            return
        group.bound.update(keys)
        for keyword, src in hyper.items():
            key, index = (src, None) if type(src) is str else src
            self.bindings.append((len(self.nodes) - 1, keyword, group.orig, key, index))

    def note_grad(self, leaf, before):
        """The autograd engine wrote ``leaf.grad`` (a replay must set it again)."""
        self.grads[leaf] = leaf._grad

    def run(self, fn, *args, **kwargs):
        """Call ``fn`` with this recording capturing its ops, then run the graph; returns ``fn``'s result. When
        ``fn`` raises, the recorded graph is dropped."""
        prev = _lazy.active, _lazy.recording
        _lazy.active, _lazy.recording = True, self
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            _lazy.active, _lazy.recording = prev
            self.abort()
            raise
        _lazy.active, _lazy.recording = prev
        self.flush()
        return out

    # ---- running ----------------------------------------------------------------------------------------------
    def sync(self, reason=None):
        """A graph break: something needs a pending value now. Run the graph recorded so far and go on recording
        a new one. Under ``fullgraph=True``: Unsupported, naming the op and the line."""
        where, inner = user_frame()
        if reason is None:
            reason = f"{inner or 'an op'}() needs a tensor's value on the host"
        if self.fullgraph:
            self.abort()
            raise Unsupported(f"tinytorch.compile(fullgraph=True): graph break in {self.name}: {reason}, at {where}. "
                              "Move it out of the compiled function, or compile without fullgraph=True")
        self.breaks.append((reason, where))
        self.flush()

    def flush(self):
        """Run the recorded graph (through its cached Plan) and give every pending storage still referenced its
        buffer."""
        if not self.nodes:
            self._reset()
            return
        from .graph import plan_for
        live = tuple(wr() is not None for wr in self.slots)
        plan = plan_for(self, live)
        was = _lazy.active
        _lazy.active = False  # nothing the kernels do is recorded
        try:
            bufs = plan.run(self.ext, self.nodes, self._learn)
        except BaseException:
            self.abort()
            raise
        finally:
            _lazy.active = was
        for wr, buf in zip(self.slots, bufs):
            st = wr()
            if st is not None:
                _BUF.__set__(st, buf)
                st.recording = None
        self.plans.append(plan)
        self.segments += 1
        self.last_ext, self.last_slots, self.last_nodes, self.last_info = self.ext, self.slots, self.nodes, self.slot_info
        self.last_snaps = self.snaps
        self.last_bindings = self.bindings
        self._reset()

    def _learn(self, node, i, layout):
        """Plan.run found output ``i`` of ``node`` in another layout than recorded: the next recording uses it."""
        key = self.lkeys[node]
        n = len(self.nodes[node].outs)
        cur = LAYOUTS.get(key) or [None] * n
        cur = list(cur)
        cur[i] = layout
        LAYOUTS[key] = cur

    def abort(self):
        """Drop the recorded graph (its function raised): its pending tensors keep no value."""
        for wr in self.slots:
            st = wr()
            if st is not None:
                st.recording = _ABORTED
        self._reset()


class _Named:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class _Aborted:
    def sync(self):
        pass


_ABORTED = _Aborted()


def _bind_tensor():
    global Tensor, _new, _CPU
    from .._tensor import Tensor as T, _new as new, _CPU as cpu
    Tensor, _new, _CPU = T, new, cpu
