"""``tinytorch.compile``: capture at the dispatcher, run graphs, replay them.

A call of a compiled function runs its Python with the ops recorded lazily (``lazy.py``); the recorded graph runs
at the end of the call, or at a graph break, through a cached ``Plan`` (``graph.py``). Once two consecutive calls
recorded the same single graph over the same tensors, later calls skip the Python function and replay that graph,
as long as the guards hold (``Replay.call``); a failed guard runs the Python again (a retrace: the same graph with
the new values, or a recompile: a new graph) and the replay is armed again from that call. Every mode does this;
``mode="reduce-overhead"`` (PyTorch's name for its CUDA-graph mode) adds, on the ``cuda`` device, the replay as one
CUDA graph (``backends/cuda/graphs.py``).

Guards of a replay: the arguments' shapes, strides, dtypes, devices and ``requires_grad``, non-tensor arguments
by value, grad mode, autocast, one version counter for every module change (attributes, parameters, ``training``),
which parameters have a ``.grad``, the tensors read besides the arguments, and the Python state the function can
reach (``guards.py``: globals, closure cells, defaults, optimizers' ``param_groups``, the attributes of user objects,
the items of lists and dicts). Never replayed: a call that changed the Python state it reads (a counter it
increments), drew from Python's or NumPy's random generator, drew random numbers on the host, broke its graph, or
returned a result carrying an autograd graph; a function whose state cannot be guarded (an iterator it advances)
runs its Python on every call (``fullgraph=True`` raises instead). ``CompiledFunction.stats()`` and
``tinytorch.compiler.stats()`` count calls, replays, graphs, recompiles, retraces and guard failures;
``TORCH_LOGS="recompiles,graph_breaks"`` (or ``set_logs``) logs each with its reason.
"""
import logging
import os
import warnings
import weakref

from .._modes import _ac, _lazy, _state
from . import graph as _graph
from . import config, region
from .guards import GuardSet, python_rng_state
from .lazy import Recording, LazyStorage, Unsupported, _bind_tensor

_MISS = object()
_T = [None, None, None]  # Tensor, _tensor._new, Storage (bound when the first Replay is made: import cycle)
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _flatten(obj, acc):
    if type(obj) in (list, tuple):
        for x in obj:
            _flatten(x, acc)
    elif type(obj) is dict:
        for x in obj.values():
            _flatten(x, acc)
    else:
        acc.append(obj)
    return acc


def _owners(fn):
    """The modules and optimizers a function reaches: itself, its ``__self__``, its closure and the globals it
    names (what a replay guards)."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    found = []
    seen = set()

    def add(v):
        if isinstance(v, (Module, Optimizer)) and id(v) not in seen:
            seen.add(id(v))
            found.append(v)

    add(fn)
    add(getattr(fn, "__self__", None))
    f = getattr(fn, "__func__", fn)
    code = getattr(f, "__code__", None)
    if code is None and isinstance(fn, Module):
        f = type(fn).forward
        code = f.__code__
    if code is not None:
        g = getattr(f, "__globals__", {})
        for name in code.co_names:
            if name in g:
                add(g[name])
        for cell in getattr(f, "__closure__", None) or ():
            try:
                add(cell.cell_contents)
            except ValueError:
                pass
    return found


class CompiledFunction:
    """What ``tinytorch.compile(fn)`` returns for a function: call it as ``fn``."""

    def __init__(self, fn, fullgraph=False, dynamic=None, mode=None, backend=None):
        self.fn = fn
        self._orig_mod = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode or "default"
        self.backend = backend
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.eager = backend == "eager"
        self.graphs = set()  # the distinct graph sequences this function has run
        self.calls = self.replays = 0
        self.breaks = []
        self._replay = None
        self._prev = None  # the last call's capture, compared with the next one (reduce-overhead)
        self._owners = None
        self.module = None  # set for a compiled module: its backward is one node
        self.unguardable = None  # why the function's Python state cannot be guarded (it is never replayed)
        self.guard_failures = self.retraces = 0
        self.armed = 0  # replays armed so far
        self._fails, self._next_try = 0, 0  # calls in a row that could not arm a replay; when to guard again
        self.last_miss = None
        _COMPILED.add(self)
        try:
            self.__wrapped__ = fn
            self.__doc__ = fn.__doc__
            self.__name__ = getattr(fn, "__name__", self.name)
        except AttributeError:
            pass

    def __call__(self, *args, **kwargs):
        if _lazy.active or self.eager:  # inside another compiled function: part of its graph
            return self.fn(*args, **kwargs)
        self.calls += 1
        if self._replay is not None:
            out = self._replay.call(args, kwargs)
            if out is not _MISS:
                self.replays += 1
                return out
            self._missed(self._replay.why(args, kwargs))
            self._replay = None
        guards = None
        if self.unguardable is None and self.calls >= self._next_try:
            if self._owners is None:
                self._owners = _owners(self.fn)
            guards = GuardSet(self.fn, args, kwargs)
            if guards.reason is not None:
                self._cannot_guard(guards.reason)
                guards = None
            else:
                before = (None, _guard_state(self._owners), _grad_bits(self._owners))
                rng = python_rng_state()
        _bind_tensor()
        module = self.module if _state.enabled else None
        if module is not None:  # the forward of a compiled module: its backward becomes one node (region.py)
            args, kwargs, pairs = region.cut(args, kwargs)
            params = [p for p in module.parameters() if p.requires_grad]
        rec = Recording(self.fullgraph, self.name)
        rec.snapshot = guards is not None
        if guards is not None:
            guards.begin()
        try:
            out = rec.run(self.fn, *args, **kwargs)
        finally:
            if guards is not None:
                guards.end()
        self.breaks = rec.breaks
        for reason, where in rec.breaks:
            _log("graph_breaks", f"graph break in {self.name}: {reason}, at {where}")
        sig = tuple(id(p) for p in rec.plans)
        if sig not in self.graphs:
            self.graphs.add(sig)
            if len(self.graphs) > 1:
                _log("recompiles", f"recompiling {self.name}: graph {len(self.graphs)} (new shapes, dtypes, "
                     f"strides or Python values: {self.last_miss or 'the graph changed'})")
            if len(self.graphs) > config.recompile_limit:
                warnings.warn(f"tinytorch.compile: {self.name} was recompiled {len(self.graphs)} times "
                              f"(cache_size_limit = {config.recompile_limit}), the last time because its graph changed "
                              "(new shapes, dtypes or Python values); it runs eagerly from now on")
                self.eager = True
        if module is not None:
            out = region.attach(out, pairs, params, self.name)
        if guards is not None and guards.reason is not None:
            self._cannot_guard(guards.reason)
        elif guards is not None:
            if guards.mutated is not None:  # the call changed Python state it reads: a replay could not do that
                self._not_replayable(f"the call itself changed {guards.mutated}")
            elif python_rng_state() != rng:
                self._not_replayable("the call drew from Python's or NumPy's random generator")
            else:
                self._fails = 0
                self._capture(rec, args, kwargs, out, before, guards)
        return out

    def _not_replayable(self, reason):
        """This call cannot arm a replay; a function whose every call is like this (it counts its calls) is
        guarded again only after 1, 2, 4 ... 64 calls, so it pays the guards' collection rarely."""
        self.last_miss = reason
        self._prev = None
        self._fails += 1
        self._next_try = self.calls + (1 << min(self._fails - 1, 6))

    def _missed(self, reason):
        self.guard_failures += 1
        self.last_miss = reason
        _log("recompiles", f"{self.name}: guard failed, running its Python again: {reason}")

    def _cannot_guard(self, reason):
        """The function reads Python state a guard cannot see: it is never replayed (under ``fullgraph=True``, a
        graph break that raises)."""
        where = _where(self.fn)
        if self.fullgraph:
            raise Unsupported(f"tinytorch.compile(fullgraph=True): {self.name} cannot be guarded: {reason}, "
                              f"in {where}. Pass the value as an argument, or compile without fullgraph=True")
        self.unguardable = reason
        self.breaks = [(f"cannot be guarded: {reason}", where)]
        _log("graph_breaks", f"{self.name} runs its Python on every call: {reason}, in {where}")

    def stats(self):
        """What the compiler did with this function (``TORCH_LOGS="recompiles,graph_breaks"`` in PyTorch): calls,
        replays, graphs (distinct graph sequences captured), recompiles (graphs after the first), retraces (calls
        that ran the Python again after a replay was armed), guard failures with the last reason, the number of
        guards of the armed replay, graph breaks of the last call, and why the function cannot be replayed."""
        rp = self._replay
        return {"calls": self.calls, "replays": self.replays, "graphs": len(self.graphs),
                "recompiles": max(0, len(self.graphs) - 1), "retraces": self.retraces,
                "guard_failures": self.guard_failures, "last_guard_failure": self.last_miss,
                "guards": len(rp.pyguards) if rp is not None and rp.pyguards is not None else 0,
                "graph_breaks": [f"{r} at {w}" for r, w in self.breaks], "unguardable": self.unguardable}

    def trace(self, args, kwargs=None):
        """Run once on ``args`` capturing the graph, and replay it from now on for arguments like these
        (``torch.jit.trace``). Returns the call's result."""
        kwargs = kwargs or {}
        if self._owners is None:
            self._owners = _owners(self.fn)
        self.mode = "reduce-overhead"
        before = (None, _guard_state(self._owners), _grad_bits(self._owners))
        _bind_tensor()
        rec = Recording(self.fullgraph, self.name)
        rec.snapshot = True
        out = rec.run(self.fn, *args, **kwargs)
        self.recording = rec
        if len(rec.plans) == 1 and not rec.breaks and not rec.host_draws:
            from .._tensor import Tensor
            flat = [a for a in _flatten((args, kwargs), []) if isinstance(a, Tensor)]
            arg_storage = {id(a._storage): j for j, a in enumerate(flat)}
            bind = []
            for t in rec.last_ext:
                j = arg_storage.get(id(t._storage))
                bind.append(t if j is None else (j, t._shape, t._stride, t._offset - flat[j]._offset, t.dtype))
            self._replay = Replay(self, rec, (rec.plans[0], rec.last_ext, rec.last_slots, before[1], before[2]),
                                  flat, args, kwargs, out, bind)
        return out

    # ---- reduce-overhead ----------------------------------------------------------------------------------------
    def _capture(self, rec, args, kwargs, out, before, guards=None):
        cur = None
        if len(rec.plans) == 1 and not rec.breaks and not rec.host_draws:
            cur = (rec.plans[0], rec.last_ext, rec.last_slots, _guard_state(self._owners), before[2], rec.last_snaps)
        prev, self._prev = self._prev, cur
        if cur is not None and not rec.grads and any(isinstance(o, _T[0] or _tensor_type()) and o.requires_grad
                                                     for o in _flatten(out, [])):
            cur = None  # its result carries an autograd graph a replay cannot build: the default mode it is
        if cur is None or prev is None or prev[0] is not cur[0] or prev[3] != cur[3] or \
                any(prev[4].get(id(t)) != cur[4].get(id(t)) for t in rec.grads):
            return
        # the same graph twice: the tensors it reads besides the arguments must be the same (or equal constants)
        from .._tensor import Tensor
        flat = [a for a in _flatten((args, kwargs), []) if isinstance(a, Tensor)]
        arg_storage = {id(a._storage): j for j, a in enumerate(flat)}
        bind, restore = [], {}
        for t, old in zip(cur[1], prev[1]):
            j = arg_storage.get(id(t._storage))
            if j is not None:
                bind.append((j, t._shape, t._stride, t._offset - flat[j]._offset, t.dtype))
                continue
            st, ost = t._storage, old._storage
            if st is not ost or t._shape != old._shape or t._stride != old._stride or t._offset != old._offset:
                # another tensor than last call's: a constant made by the call (arange, a mask), or a scratch
                # buffer it fills; replayable when it held the same values before the graph ran
                snap, osnap = cur[5].get(id(st)), prev[5].get(id(ost))
                if (snap is None) != (osnap is None):
                    return
                if snap is not None:
                    import numpy as np
                    b = st.backend
                    if t._shape != old._shape or t.dtype is not old.dtype or \
                            not np.array_equal(b.to_numpy(b.view(snap, st.dtype, (st.size,), (1,), 0)),
                                               ost.backend.to_numpy(ost.backend.view(osnap, ost.dtype,
                                                                                     (ost.size,), (1,), 0))):
                        return
                    restore[id(st)] = (st, snap)
                elif not _equal_constants(t, old):
                    return
            bind.append(t)
        self._replay = Replay(self, rec, cur, flat, args, kwargs, out, bind)
        self._replay.restore = list(restore.values())
        self._replay.pyguards = guards
        self._replay.fast = self._replay.fast_path(args, kwargs)
        self.armed += 1
        if self.armed > 1:
            self.retraces += 1


_COMPILED = weakref.WeakSet()
_LOGGER = logging.getLogger("tinytorch.compiler")
_LOGS = set()


def set_logs(recompiles=None, graph_breaks=None):
    """Log recompiles (with the guard that failed) and graph breaks (with the reason and line) to the
    ``tinytorch.compiler`` logger, on stderr (``torch._logging.set_logs(recompiles=True, graph_breaks=True)``; the
    environment variable ``TORCH_LOGS="recompiles,graph_breaks"`` does the same at import)."""
    for name, on in (("recompiles", recompiles), ("graph_breaks", graph_breaks)):
        if on is not None:
            (_LOGS.add if on else _LOGS.discard)(name)
    if _LOGS and not _LOGGER.handlers:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("[tinytorch.compiler] %(message)s"))
        _LOGGER.addHandler(h)
        _LOGGER.setLevel(logging.INFO)


def _log(kind, msg):
    if kind in _LOGS:
        _LOGGER.info(msg)


def stats():
    """``{name: CompiledFunction.stats()}`` of every compiled function alive."""
    return {c.name: c.stats() for c in list(_COMPILED)}


def _where(fn):
    f = getattr(fn, "__func__", fn)
    code = getattr(f, "__code__", None) or getattr(getattr(type(fn), "forward", None), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"


def _tensor_type():
    from .._tensor import Tensor
    return Tensor


def _equal_constants(a, b):
    """Two tensors made on the host by two calls (``arange(T)``, ``zeros(n)``) holding the same values."""
    if a._shape != b._shape or a.dtype is not b.dtype or a.requires_grad or b.requires_grad:
        return False
    if type(a._storage) is LazyStorage or type(b._storage) is LazyStorage:
        return False
    import numpy as np
    try:
        return bool(np.array_equal(a.cpu().numpy(), b.cpu().numpy()))
    except Exception:  # noqa: BLE001 - a device without host copies: not a constant
        return False


def _guard_state(owners):
    """What a replay assumes besides its arguments: grad mode, autocast, and the modules as they were (their
    structure, parameters and ``training``: one version counter that every change bumps)."""
    return (_state.enabled, _ac.active, tuple((k, tuple(e)) for k, e in _ac.entries.items()) if _ac.active else (),
            _lazy.module_version)


def _grad_bits(owners):
    """id(parameter) -> whether its .grad is None, for the parameters of the modules and optimizers reached."""
    from ..nn.modules.module import Module
    bits = {}
    for o in owners:
        params = o.parameters() if isinstance(o, Module) else (p for g in o.param_groups for p in g["params"])
        for p in params:
            bits[id(p)] = p._grad is None
    return bits


def _arg_sig(a):
    from .._tensor import Tensor
    if isinstance(a, Tensor):
        return (a._shape, a._stride, a._offset, a.dtype, a._storage.device, a.requires_grad)
    if type(a) in (int, float, bool, str) or a is None:
        return (type(a), a)
    return (type(a), id(a))


class Replay:
    """A captured graph replayed without the Python function (``mode="reduce-overhead"``, ``jit.trace``)."""

    def __init__(self, owner, rec, cur, flat, args, kwargs, out, bind):
        from .._tensor import Tensor, _new
        from .._storage import Storage
        _T[:] = [Tensor, _new, Storage]
        # no reference back to the CompiledFunction: a cycle would keep device memory until a collection
        self.plan = cur[0]
        # a device that can replay a whole plan as one launch (CUDA graphs) wraps its run
        backends = {st.backend for st in self.plan.steps}
        graphed = getattr(next(iter(backends)), "graphed", None) if len(backends) == 1 and \
            owner.mode == "reduce-overhead" else None
        self.run = graphed(self.plan.run) if graphed is not None else self.plan.run
        self._graphed, self._bound = graphed, None
        self.guard = cur[3]
        self.bind = bind
        # the leaves whose .grad the graph writes, and whether each had one when the captured call began
        self.grad_leaves = [(t, cur[4].get(id(t), t._grad is None)) for t in rec.grads]
        # the tensors it reads besides the arguments: their geometry and requires_grad as captured
        self.fixed = [(t, t._shape, t._stride, t.dtype, t.requires_grad) for t in bind if type(t) is not tuple]
        self.sig = tuple(_arg_sig(a) for a in _flatten((args, kwargs), []))
        slots = cur[2]
        slot_of = {}
        for s, wr in enumerate(slots):
            st = wr()
            if st is not None:
                slot_of[id(st)] = s
        # the return value: recorded tensors come back as new tensors over the replay's buffers
        returned = set()

        def template(o):
            if isinstance(o, Tensor):
                s = slot_of.get(id(o._storage))
                if s is not None:
                    returned.add(s)
                    return ("slot", s, o._shape, o._stride, o._offset, o.dtype, o._storage.device,
                            o._storage.backend, o._storage.size)
                for j, a in enumerate(flat):
                    if a is o:
                        return ("arg", j)
                return ("fixed", o)
            if type(o) in (list, tuple):
                return (type(o), [template(x) for x in o])
            return ("value", o)
        self.template = template(out)
        template = None  # noqa: F841 - the recursive closure refers to itself: break the cycle (it holds tensors)
        # what else the graph computed that Python still holds (a parameter's .grad): written back in place
        self.static = [(s, slots[s]) for s in slot_of.values() if s not in returned]
        self.nodes, self.info = rec.last_nodes, rec.last_info
        self.restore = []
        self.fast = None
        self.pyguards = None  # the GuardSet of the Python state the captured call read (None: jit.trace)
        # the optimizer hyperparameters bound as graph inputs: node -> [(keyword, group, key, index)]
        subst = {}
        for node, keyword, group, key, index in getattr(rec, "last_bindings", ()):
            subst.setdefault(node, []).append((keyword, group, key, index))
        self.subst = sorted(subst.items())
        self.grads = [(leaf, g) for leaf, g in rec.grads.items()]
        written = set()
        for node in rec.last_nodes:
            if node.kind != "kernel":
                for spec in node.args[:1] if node.kind == "copy" else node.args:
                    for i in _ext_uses(spec):
                        written.add(id(rec.last_ext[i]._storage))
        self.versions = [t._storage._version for t in rec.last_ext if id(t._storage) in written]

    def nodes_now(self):
        """The captured nodes with the bound hyperparameters read from their groups now (a learning rate the
        scheduler changed since the capture)."""
        nodes = list(self.nodes)
        values = []
        for i, items in self.subst:
            node = nodes[i]
            kw = dict(node.kwargs)
            for keyword, group, key, index in items:
                v = group[key]
                kw[keyword] = v = v if index is None else v[index]
                values.append(v)
            nodes[i] = node._replace(kwargs=kw)  # ir.with_consts, without its dict of positions
        if self._graphed is not None and values != self._bound:
            # a CUDA graph holds the kernels' arguments as they were captured: new values, a new graph
            self._bound = values
            self.run = self._graphed(self.plan.run)
        return nodes

    def run_bound(self, ext, nodes=None):
        """``run`` with the bound hyperparameters read now (the fast path's call when there are any)."""
        nodes = self.nodes_now()
        return self.run(ext, nodes)

    def fast_path(self, args, kwargs):
        """The replay as one generated function (Dynamo's guard function, in Python) for the common shape of call:
        positional tensor arguments, no restores or written-back tensors, a result of recorded tensors. Its guards
        are ``call``'s, written out; None when the call has another shape (``call`` serves it)."""
        T, _new, Storage = _T
        if kwargs or self.restore or self.static or self.grads or self.grad_leaves or self.versions or \
                any(type(a) is not T for a in args) or self.guard[1] or self.guard[2]:
            return None
        t = self.template
        slots = [t] if t[0] == "slot" else list(t[1]) if t[0] is tuple else None
        if slots is None or any(x[0] != "slot" for x in slots):
            return None
        ns = {"MISS": _MISS, "T": T, "NEW": _new, "STORAGE": Storage, "STATE": _state, "AC": _ac, "LAZY": _lazy,
              "RUN": self.run_bound if self.subst else self.run, "NODES": self.nodes,
              "PYGUARD": self.pyguards.check if self.pyguards is not None else None}
        k = [0]

        def c(v):
            k[0] += 1
            ns[f"K{k[0]}"] = v
            return f"K{k[0]}"
        n = len(args)
        lines = ["def call(args, kwargs):", f"    if kwargs or len(args) != {n}:", "        return MISS"]
        if n:
            lines.append(f"    {', '.join(f'a{i}' for i in range(n))}{',' if n == 1 else ''} = args")
        for i, a in enumerate(args):
            lines.append(f"    if type(a{i}) is not T or a{i}._shape != {c(a._shape)} or a{i}._stride != "
                         f"{c(a._stride)} or a{i}._offset != {a._offset} or a{i}.dtype is not {c(a.dtype)} or "
                         f"a{i}.requires_grad is not {a.requires_grad} or a{i}._storage.device != "
                         f"{c(a._storage.device)}:")
            lines.append("        return MISS")
        lines.append(f"    if STATE.enabled is not {self.guard[0]} or AC.active or LAZY.module_version != "
                     f"{self.guard[3]}:")
        lines.append("        return MISS")
        if self.pyguards is not None:
            lines.append("    if PYGUARD() is not None:")
            lines.append("        return MISS")
        for f, shape, stride, dtype, rg in self.fixed:
            lines.append(f"    if {c(f)}._shape != {c(shape)} or {c(f)}._stride != {c(stride)} or "
                         f"{c(f)}.dtype is not {c(dtype)} or {c(f)}.requires_grad is not {rg}:")
            lines.append("        return MISS")
        ext = []
        for b in self.bind:
            if type(b) is tuple:
                j, shape, stride, delta, dtype = b
                a = args[j]
                if a._shape == shape and a._stride == stride and delta == 0:
                    ext.append(f"a{j}")
                else:
                    ext.append(f"NEW(a{j}._storage, {c(shape)}, {c(stride)}, a{j}._offset + {delta}, {c(dtype)})")
            else:
                ext.append(c(b))
        lines.append(f"    bufs = RUN([{', '.join(ext)}], NODES)")
        outs = []
        for _, s_, shape, stride, off, dtype, dev, backend, size in slots:
            outs.append(f"NEW(STORAGE(bufs[{s_}], {c(dtype)}, {c(dev)}, {size}, {c(backend)}), {c(shape)}, "
                        f"{c(stride)}, {off}, {c(dtype)})")
        if t[0] == "slot":
            lines.append(f"    return {outs[0]}")
        else:
            lines.append(f"    return {c(t[0])}(({', '.join(outs)}{',' if len(outs) == 1 else ''}))")
        src = "\n".join(lines) + "\n"
        import builtins
        exec(builtins.compile(src, "<tinytorch replay>", "exec"), ns)  # noqa: S102 - our own code
        return ns["call"]

    def call(self, args, kwargs):
        fast = self.fast
        if fast is not None:
            return fast(args, kwargs)
        flat_all = _flatten((args, kwargs), []) if kwargs else _flatten(args, [])
        if len(flat_all) != len(self.sig):
            return _MISS
        T = _T[0]
        for a, s in zip(flat_all, self.sig):
            if type(a) is T or isinstance(a, T):
                if (a._shape, a._stride, a._offset, a.dtype, a._storage.device, a.requires_grad) != s:
                    return _MISS
            elif _arg_sig(a) != s:
                return _MISS
        if _guard_state(None) != self.guard:
            return _MISS
        if self.pyguards is not None and self.pyguards.check() is not None:
            return _MISS
        for t, none in self.grad_leaves:
            if (t._grad is None) != none:
                return _MISS
        for t, shape, stride, dtype, rg in self.fixed:
            if t._shape != shape or t._stride != stride or t.dtype is not dtype or t.requires_grad != rg:
                return _MISS
        _new = _T[1]
        flat = [a for a in flat_all if isinstance(a, T)]
        ext = []
        for b in self.bind:
            if type(b) is tuple:
                j, shape, stride, delta, dtype = b
                a = flat[j]
                if a._shape == shape and a._stride == stride and delta == 0:
                    ext.append(a)
                else:
                    ext.append(_new(a._storage, shape, stride, a._offset + delta, dtype))
            else:
                ext.append(b)
        for st, snap in self.restore:  # a scratch buffer the call made: as it was before the graph wrote it
            b = st.backend
            geo = (st.size,), (1,), 0
            b.copy_(b.view(st.buf, st.dtype, *geo), b.view(snap, st.dtype, *geo))
        bufs = self.run(ext, self.nodes_now() if self.subst else self.nodes)
        for v in self.versions:
            v[0] += 1
        graphed = self._graphed is not None
        for s, wr in self.static:
            st = wr()
            if st is None:
                continue
            if graphed:  # a CUDA graph's outputs are its pool's memory, reused by the next launch: copied out
                b = st.backend
                geo = (st.size,), (1,), 0
                b.copy_(b.view(st.buf, st.dtype, *geo), b.view(bufs[s], st.dtype, *geo))
            else:
                # a tensor Python still holds (a parameter's .grad) takes the new buffer, as eager makes a new
                # tensor each call (the same object here, its memory new): no copy
                st.buf = bufs[s]
        for leaf, g in self.grads:
            leaf._grad = g
        return self._build(self.template, bufs, flat)

    def why(self, args, kwargs):
        """Why ``call`` missed (for the log and ``stats``): the first guard that fails."""
        flat_all = _flatten((args, kwargs), [])
        if len(flat_all) != len(self.sig):
            return "the number of arguments changed"
        for i, (a, s) in enumerate(zip(flat_all, self.sig)):
            T = _T[0]
            got = (a._shape, a._stride, a._offset, a.dtype, a._storage.device, a.requires_grad) \
                if isinstance(a, T) else _arg_sig(a)
            if got != s:
                return f"argument {i} changed ({s[-1] if not isinstance(a, T) else 'shape, stride, dtype or device'})"
        if _guard_state(None) != self.guard:
            return "grad mode, autocast, or a module (its attributes, parameters, training) changed"
        if self.pyguards is not None:
            failed = self.pyguards.check()
            if failed is not None:
                return f"{self.pyguards.describe(failed)} no longer holds"
        for t, none in self.grad_leaves:
            if (t._grad is None) != none:
                return "a parameter's .grad was set or cleared"
        return "a tensor the graph reads changed shape, dtype or requires_grad"

    def _build(self, t, bufs, flat):
        k = t[0]
        if k == "slot":
            _, s, shape, stride, off, dtype, dev, backend, size = t
            return _T[1](_T[2](bufs[s], dtype, dev, size, backend), shape, stride, off, dtype)
        if k == "arg":
            return flat[t[1]]
        if k == "fixed" or k == "value":
            return t[1]
        return t[0](self._build(x, bufs, flat) for x in t[1])


def _ext_uses(spec):
    from .ir import Ext, TensorList
    if type(spec) is Ext:
        return (spec.index,)
    if type(spec) is TensorList:
        return [i for x in spec.items for i in _ext_uses(x)]
    return ()


class OptimizedModule:
    """What ``tinytorch.compile(module)`` returns (PyTorch's ``OptimizedModule``): calls go through the compiled
    forward; attributes, parameters and ``state_dict`` are the wrapped module's (under ``_orig_mod.``)."""

    def __new__(cls, mod, compiled):
        from ..nn.modules.module import Module

        class _Optimized(cls, Module):
            pass
        _Optimized.__name__ = _Optimized.__qualname__ = "OptimizedModule"
        self = object.__new__(_Optimized)
        Module.__init__(self)
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled
        return self

    def __init__(self, mod, compiled):
        pass

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        from ..nn.modules.module import Module
        try:
            return Module.__getattr__(self, name)
        except AttributeError:
            return getattr(Module.__getattr__(self, "_orig_mod"), name)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """Compile ``model`` (a function or an ``nn.Module``) as ``torch.compile``.

    Returns a callable with the same results as ``model``: for a module an ``OptimizedModule`` (its parameters
    and ``state_dict`` are the module's, under ``_orig_mod.``), for a function a ``CompiledFunction``. With
    ``model`` None, a decorator. Each call records the ops the function sends through the dispatcher and runs them
    as one graph (or several, split at graph breaks), made once per structure: dead code dropped, elementwise
    chains fused into generated kernels, intermediates released after their last use.

    mode: None / "default" (replays the captured graph without running the function once it is seen to be static
    and while the guards on its arguments and Python state hold; see ``compiler.api``), "reduce-overhead" (as
    default, the replay a CUDA graph on ``cuda``), "max-autotune" and "max-autotune-no-cudagraphs" (as default).
    fullgraph: a graph break, or Python state that cannot be guarded, raises ``tinytorch.compiler.Unsupported``
    naming the op or value and the line. dynamic: accepted; shapes are always specialized (a
    new shape records a new graph; after ``config.recompile_limit`` graphs (``torch._dynamo.config.cache_size_limit``)
    the function runs eagerly, with a warning).
    backend: "eager" runs the function as it is; any other name uses tinytorch's compiler. disable: return
    ``model`` itself. RuntimeError for an unknown mode (PyTorch's message).

    Source: https://pytorch.org/docs/stable/generated/torch.compile.html
    """
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def deco(m):
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return deco
    if disable:
        return model
    if not callable(model):
        raise RuntimeError("torch.compile: model must be callable")
    from ..nn.modules.module import Module
    be = backend if isinstance(backend, str) else "inductor"
    if isinstance(model, Module):
        c = CompiledFunction(model, fullgraph, dynamic, mode, be)
        c.module = model
        return OptimizedModule(model, c)
    return CompiledFunction(model, fullgraph, dynamic, mode, be)


def is_compiling():
    """Whether the caller runs inside a compiled function's capture (``torch.compiler.is_compiling``)."""
    return _lazy.active


def reset():
    """Forget every compiled graph and generated kernel held in memory (``torch.compiler.reset``)."""
    _graph.reset()


def disable(fn=None, recursive=True, *, reason=None):
    """``torch.compiler.disable``: ``fn`` always runs eagerly, even when called from a compiled function: a graph
    break (the graph recorded so far runs first, the break is logged and counted in ``stats()``; under
    ``fullgraph=True``, ``Unsupported``), then ``fn`` runs with its ops executed at once, and recording resumes
    after it. ``reason`` is named in the break. Used as ``@disable`` or ``@disable(recursive=...)``; ``recursive``
    is accepted for PyTorch's signature (tinytorch captures at the dispatcher, so the functions ``fn`` calls run
    eagerly too)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    import functools
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    why = f"{name} is decorated with torch.compiler.disable" + (f" ({reason})" if reason else "")

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        rec = _lazy.recording if _lazy.active else None
        if rec is None:
            return fn(*args, **kwargs)
        rec.sync(why)
        _lazy.active, _lazy.recording = False, None
        try:
            return fn(*args, **kwargs)
        finally:
            _lazy.active, _lazy.recording = True, rec
    run_eagerly._torchdynamo_disable = True
    return run_eagerly


def allow_in_graph(fn):
    """``torch.compiler.allow_in_graph``: ``fn`` (or each of a list of functions) unchanged. PyTorch's Dynamo would
    otherwise trace into ``fn``'s Python; tinytorch records at the dispatcher, so the ops of every function a
    compiled function calls are in its graph already. AssertionError (PyTorch's) when ``fn`` is not callable."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def is_exporting():
    """``torch.compiler.is_exporting``: whether ``torch.export`` is tracing the caller; tinytorch has no
    ``torch.export``, so never."""
    return False


def cudagraph_mark_step_begin():
    """``torch.compiler.cudagraph_mark_step_begin``: marks a new training or inference step, after which PyTorch's
    CUDA-graph trees may overwrite the previous step's outputs. tinytorch's ``reduce-overhead`` replays copy their
    outputs out of the graph's memory (``Replay.call``), so no output is ever overwritten by a later step and there
    is no step boundary to record."""
    return None


set_logs(**{k: True for k in ("recompiles", "graph_breaks")
            if k in os.environ.get("TORCH_LOGS", "").replace(" ", "").split(",")})
