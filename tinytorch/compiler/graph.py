"""A recorded graph made runnable: the passes and the interpreter of a ``Plan``.

``plan_for(recording, live)`` returns the Plan of a recording's graph, made once per structure (the op names, the
shapes, strides and dtypes of the tensors, the Python scalars and attributes, which recorded tensors are still
referenced) and kept in a bounded cache. Making a Plan runs the passes:

- dead-code elimination: a kernel whose outputs nobody holds and no kept kernel reads is dropped;
- fusion (``fusion.py``): chains of elementwise kernels become one generated kernel on backends with a code
  generator (``codegen_cpp.py`` on ``cpu``);
- memory planning: each intermediate is released right after its last reader, so the allocator reuses its memory
  for the next one; the peak of the graph's intermediates is reported (``Plan.peak_bytes``).

``Plan.run`` is the replay: one Python loop over prepared steps, one call per kernel, no meta work, no autograd.
"""
import os
import sys
from collections import OrderedDict
from math import prod as _prod

from .. import _strides

_CACHE = OrderedDict()
CACHE_SIZE = 512
stats = {"plans": 0, "hits": 0}


def debug_enabled():
    return os.environ.get("TINYTORCH_COMPILE_DEBUG", "") not in ("", "0")


def plan_for(rec, live):
    """The cached Plan of ``rec``'s graph with ``live`` (which pending storages are still referenced)."""
    key = (tuple(rec.keys), live)
    plan = _CACHE.get(key)
    if plan is not None:
        _CACHE.move_to_end(key)
        stats["hits"] += 1
        return plan
    plan = Plan(rec, live)
    _CACHE[key] = plan
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    stats["plans"] += 1
    if rec.debug or debug_enabled():
        sys.stderr.write(plan.describe(rec) + "\n")
    return plan


def reset():
    """Forget every cached Plan (``tinytorch.compiler.reset``)."""
    _CACHE.clear()
    from . import codegen_cpp
    codegen_cpp.reset()


_X, _P, _V, _L, _S, _I, _F = range(7)


def has_float(v):
    """Whether a scalar argument or attribute holds a float (read from the running call, see ``lazy._freeze``)."""
    t = type(v)
    if t is float:
        return True
    if t in (list, tuple):
        return any(has_float(x) for x in v)
    if t is dict:
        return any(has_float(x) for x in v.values())
    return False


def _prep(s, slot_info, where=None):
    """An argument spec made quick to resolve: (code, ...) with the cast dtype or None."""
    k = s[0]
    if k == "x":
        _, i, cast, item = s
        return (_I, i, None) if item else (_X, i, cast)
    if k == "p":
        _, slot, shape, stride, offset, dtype, cast = s
        if cast is dtype:
            cast = None
        oshape, odtype, backend, ostride, ooffset, _ = slot_info[slot]
        if shape == oshape and offset == ooffset and dtype is odtype and stride == ostride:
            return (_P, slot, cast, backend)
        return (_V, slot, cast, backend, dtype, shape, stride, offset)
    if k == "l":
        return (_L, s[1], [_prep(x, slot_info) for x in s[2]])
    if where is not None and has_float(s[1]):
        return (_F, where[0], where[1])  # node, position: the running call's value
    return (_S, s[1])


def _slots_of(s, acc):
    k = s[0]
    if k == "p":
        acc.append(s[1])
    elif k == "l":
        for x in s[2]:
            _slots_of(x, acc)
    return acc


def _spec_slots(node):
    acc = []
    for s in node[3]:
        _slots_of(s, acc)
    if type(node[4]) is KwSpec:
        for s in node[4].values():
            _slots_of(s, acc)
    return acc


class KwSpec(dict):
    """The keyword attributes of a recorded call when some are tensors: name -> argument spec."""


class Step:
    __slots__ = ("kind", "name", "fn", "args", "kw", "kwspec", "outs", "backend", "free", "node", "kw_live")


class Plan:
    """A graph's prepared steps (after the passes) and what running it needs."""

    def __init__(self, rec, live):
        nodes = rec.nodes
        info = list(rec.slot_info)
        self.n_slots = len(info)
        self.n_nodes = len(nodes)
        self.live = live
        # dead-code elimination, backwards from what is still referenced and from the side effects
        needed = set(i for i, l in enumerate(live) if l)
        keep = [False] * len(nodes)
        for j in range(len(nodes) - 1, -1, -1):
            node = nodes[j]
            if node[0] != "kernel" or any(s in needed for s in node[5]):
                keep[j] = True
                needed.update(_spec_slots(node))
        kept = [j for j in range(len(nodes)) if keep[j]]
        self.dead = len(nodes) - len(kept)
        from . import fusion
        groups = fusion.fuse(rec, kept, live)
        steps = []
        for g in groups:
            st = Step()
            if isinstance(g, int):
                node = nodes[g]
                st.kind, st.name, st.fn, spec, kw, st.outs, st.backend = node
                st.args = [_prep(s, info, (g, i)) for i, s in enumerate(spec)]
                st.kw_live = False
                if type(kw) is KwSpec:
                    st.kw, st.kwspec = None, {k: _prep(v, info) for k, v in kw.items()}
                else:
                    st.kw, st.kwspec = kw, None
                    st.kw_live = kw is not None and has_float(kw)
                st.node = g
            else:  # a fused group: (kernel callable, input specs, out slots)
                st.kind, st.name, st.fn = "fused", g.name, g.fn
                st.args = [_prep(s, info) for s in g.inputs]
                st.kw, st.kwspec, st.outs, st.backend, st.node = None, None, g.outs, g.backend, None
                st.kw_live = g.const_src
            steps.append(st)
        self.fused = sum(1 for s in steps if s.kind == "fused")
        self.fused_nodes = sum(len(g.members) for g in groups if not isinstance(g, int))
        # memory planning: release each intermediate after its last reader
        last = {}
        for i, st in enumerate(steps):
            for a in st.args:
                for s in _arg_slots(a):
                    last[s] = i
            if st.kwspec:
                for a in st.kwspec.values():
                    for s in _arg_slots(a):
                        last[s] = i
        frees = [[] for _ in steps]
        for s, i in last.items():
            if not live[s]:
                frees[i].append(s)
        for i, st in enumerate(steps):
            for s in st.outs:  # an output nobody reads (a dropped group member's) goes at once
                if s not in last and not live[s]:
                    frees[i].append(s)
            st.free = tuple(frees[i])
        self.steps = steps
        # the peak of the intermediates' bytes, as the steps allocate and release them
        cur = peak = 0
        for st in steps:
            for s in st.outs:
                shape, dtype = info[s][:2]
                cur += _prod(shape) * dtype.itemsize
            peak = max(peak, cur)
            for s in st.free:
                shape, dtype = info[s][:2]
                cur -= _prod(shape) * dtype.itemsize
        self.peak_bytes = peak
        self.info = info
        self._run = None
        self.source = None

    def run(self, ext, nodes=None, learn=None):
        """Run the steps on the recorded existing tensors ``ext`` (and the running call's ``nodes``, for the
        float scalars); returns the buffer of every pending storage still referenced (None for the others)."""
        if self._run is None:
            self._run = self._generate()
            if debug_enabled():
                sys.stderr.write(f"tinytorch.compile: the plan's code\n{self.source}")
        return self._run(ext, nodes, learn)

    def _generate(self):
        """The steps as one straight-line Python function (Inductor's wrapper code, in Python): a line per kernel
        call, its arguments written out, nothing interpreted at run time."""
        ns = {"_contiguous": _contiguous}
        consts = {}

        def const(v):
            k = f"K{len(consts)}"
            consts[k] = v
            ns[k] = v
            return k

        info = self.info
        lines = ["def run(ext, nodes, learn):"]
        produced = set()

        def arg(a):
            c = a[0]
            if c == _P:
                e = f"v{a[1]}"
                return e if a[2] is None else f"{const(a[3].cast)}({e}, {const(a[2])})"
            if c == _X:
                e = f"ext[{a[1]}]._native()"
                if a[2] is None:
                    return e
                return f"_cast(ext[{a[1]}], {const(a[2])})"
            if c == _S:
                v = a[1]
                return repr(v) if type(v) in (int, bool, str) or v is None else const(v)
            if c == _V:
                e = f"{const(a[3].view)}(b{a[1]}, {const(a[4])}, {const(a[5])}, {const(a[6])}, {a[7]})"
                return e if a[2] is None else f"{const(a[3].cast)}({e}, {const(a[2])})"
            if c == _L:
                items = ", ".join(arg(x) for x in a[2])
                return f"[{items}]" if a[1] is list else f"({items}{',' if len(a[2]) == 1 else ''})"
            if c == _F:
                return f"nodes[{a[1]}][3][{a[2]}][1]"
            return f"ext[{a[1]}].item()"  # _I

        ns["_cast"] = lambda t, dt: t._native() if t.dtype is dt else t._storage.backend.cast(t._native(), dt)
        for k, st in enumerate(self.steps):
            args = [arg(a) for a in st.args]
            kw = ""
            if st.kwspec is not None:
                kw = ", ".join(f"{name}={arg(a)}" for name, a in st.kwspec.items())
            elif st.kind == "fused":
                src = st.kw_live or ()
                args.insert(0, "(" + "".join(f"float(nodes[{j}][3][{i}][1]), " if w == "a" else
                                             f"float(nodes[{j}][4][{i!r}]), " for w, j, i in src) + ")")
            elif st.kw_live:
                kw = f"**nodes[{st.node}][4]"
            elif st.kw:
                kw = f"**{const(st.kw)}"
            call = f"{const(st.fn)}({', '.join(args + ([kw] if kw else []))})" if st.kind != "copy" else \
                f"{const(st.backend.copy_)}({args[0]}, {args[1]})"
            lines.append(f"    # {st.kind} {st.name}")
            if st.kind in ("kernel", "fused"):
                outs = st.outs
                lines.append(f"    r = {call}")
                wrap = const(st.backend.wrap)
                for i, s in enumerate(outs):
                    shape, dtype, backend, xstride, xoff, xsize = info[s]
                    r = "r" if len(outs) == 1 else f"r[{i}]"
                    lines.append(f"    v{s}, b{s}, s_, o_ = {wrap}({r}, {const(dtype)})")
                    if _prod(shape) > 1:
                        lines.append(f"    if o_ != {xoff} or s_ != {const(xstride)}:")
                        lines.append(f"        v{s}, b{s} = _fix({k}, {i}, {s}, v{s}, b{s}, s_, o_, learn)")
                    produced.add(s)
            else:
                lines.append(f"    {call}")
            for s in st.free:
                lines.append(f"    v{s} = b{s} = None")
        lines.append("    return [" + ", ".join(f"b{s}" if self.live[s] and s in produced else "None"
                                               for s in range(self.n_slots)) + "]")
        steps = self.steps

        def _fix(k, i, s, nat, buf, stride, off, learn):
            # the recorded tensor promised another layout: keep the promise, and learn this one
            st = steps[k]
            shape, dtype, backend, xstride, xoff, xsize = info[s]
            if learn is not None and st.node is not None:
                learn(st.node, i, (stride, off, getattr(buf, "size", _prod(shape))))
            return _contiguous(backend, nat, shape, dtype, xstride, xoff, xsize)
        ns["_fix"] = _fix
        arg = None  # noqa: F841 - the recursive closure refers to itself: no cycle kept alive
        self.source = "\n".join(lines) + "\n"
        exec(compile(self.source, f"<tinytorch graph {id(self):x}>", "exec"), ns)  # noqa: S102 - our own code
        return ns["run"]

    def describe(self, rec=None):
        lines = [f"tinytorch.compile: graph of {rec.name if rec else '?'}: {self.n_nodes} ops, {self.dead} dead, "
                 f"{self.fused_nodes} fused into {self.fused} kernels, {len(self.steps)} steps, "
                 f"peak intermediates {self.peak_bytes / 1e6:.3f} MB"]
        if rec is not None:
            lines.append(format_graph(rec.nodes, rec.slot_info))
        return "\n".join(lines)


def _arg_slots(a):
    c = a[0]
    if c == _P or c == _V:
        return (a[1],)
    if c == _L:
        return [s for x in a[2] for s in _arg_slots(x)]
    return ()


def _contiguous(backend, nat, shape, dtype, stride, offset, size):
    """``nat`` copied into a new buffer of ``size`` elements, as a view of ``stride`` and ``offset``."""
    buf = backend.alloc(size, dtype)
    out = backend.view(buf, dtype, shape, stride, offset)
    backend.copy_(out, nat)
    return out, buf


def _fmt_spec(s, names):
    k = s[0]
    if k == "x":
        return f"%in{s[1]}"
    if k == "p":
        return names.get(s[1], f"%{s[1]}") + ("" if s[4] == 0 and s[3] == _strides.contiguous_strides(s[2])
                                               else f".view({list(s[2])})")
    if k == "l":
        return "[" + ", ".join(_fmt_spec(x, names) for x in s[2]) + "]"
    v = s[1]
    return repr(v)


_DT = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
       "int32": "Int", "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
       "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def format_graph(nodes, slot_info):
    """The recorded ops, one per line, TorchScript-style: ``%3 : Float(128, 10) = addmm(%in0, %2, ...)``."""
    names = {}
    lines = ["graph("]
    for node in nodes:
        kind, name, _, spec, kw, outs, _ = node
        args = ", ".join(_fmt_spec(s, names) for s in spec)
        if kw:
            args += ", " + ", ".join(f"{k}={_fmt_spec(v, names) if type(kw) is KwSpec else repr(v)}"
                                     for k, v in kw.items())
        if outs:
            lhs = ", ".join(f"%{s} : {_DT.get(slot_info[s][1].name, slot_info[s][1].name)}"
                            f"({', '.join(str(d) for d in slot_info[s][0])})" for s in outs)
            lines.append(f"  {lhs} = {name}({args})")
        else:
            lines.append(f"  {name}({args})  # writes in place")
    lines.append(")")
    return "\n".join(lines)
