"""A recorded graph made runnable: a ``Plan`` runs the passes and writes the result out as one Python function.

``plan_for(recording, live)`` returns the Plan of a recording's graph, made once per structure (the op names, the
shapes, strides and dtypes of the tensors, the Python scalars and attributes, which recorded tensors are still
referenced) and kept in a bounded cache. Making a Plan runs the passes of ``passes.py`` on the graph (``ir.py``):
dead-code elimination, fusion (``fusion.py``), memory planning.

``Plan.run`` is the replay: one straight-line Python function, one call per kernel, no meta work, no autograd.
"""
import os
import sys
from collections import OrderedDict
from math import prod as _prod

from .. import _strides
from .ir import Const, Ext, Graph, KwSpec, Node, Pending, TensorList

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


# the generated code reads a node's fields by position: a tuple index is quicker than a NamedTuple's attribute, and
# these reads are in the replay's loop
_ARGS, _KWARGS, _VALUE = Node._fields.index("args"), Node._fields.index("kwargs"), Const._fields.index("value")


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


class Step:
    """One call of a Plan's code: a kept node (``node``: its index) or a fused group, its argument specs and the
    slots released after it (``free``)."""

    __slots__ = ("kind", "name", "fn", "args", "kw", "kwspec", "outs", "backend", "free", "node", "kw_live")


class Plan:
    """A graph's prepared steps (after the passes) and what running it needs."""

    def __init__(self, rec, live):
        from .passes import run_passes
        info = list(rec.slot_info)
        nodes = rec.nodes
        self.n_slots = len(info)
        self.n_nodes = len(nodes)
        self.live = live
        # the graph holds the recording's tensors (ext): it is not kept, only what the steps need
        graph = run_passes(Graph(nodes, info, rec.ext, rec.ext_storage, live))
        self.dead = graph.dead
        steps = []
        for g, free in zip(graph.steps, graph.free):
            st = Step()
            if isinstance(g, int):
                node = nodes[g]
                st.kind, st.name, st.fn, st.outs, st.backend = node.kind, node.name, node.kernel, node.outs, \
                    node.backend
                st.args = list(node.args)
                kw = node.kwargs
                st.kw_live = False
                if type(kw) is KwSpec:
                    st.kw, st.kwspec = None, dict(kw)
                else:
                    st.kw, st.kwspec = kw, None
                    st.kw_live = kw is not None and has_float(kw)
                st.node = g
            else:  # a fused group
                st.kind, st.name, st.fn = "fused", g.name, g.fn
                st.args = list(g.inputs)
                st.kw, st.kwspec, st.outs, st.backend, st.node = None, None, g.outs, g.backend, None
                st.kw_live = g.const_src
            st.free = free
            steps.append(st)
        self.fused = sum(1 for s in steps if s.kind == "fused")
        self.fused_nodes = sum(len(g.members) for g in graph.steps if not isinstance(g, int))
        self.steps = steps
        self.peak_bytes = graph.peak_bytes
        self.info = info
        self._run = None
        self.source = None

    def run(self, ext, nodes=None, learn=None):
        """Run the steps on the recorded existing tensors ``ext`` (and ``nodes``, the running call's or a copy made
        by ``ir.with_consts``, for the float values); returns the buffer of every pending storage still referenced
        (None for the others)."""
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

        def arg(a, where=None):
            """The expression of argument spec ``a``; ``where``: (node, position) of a positional argument, whose
            float value is read from the running call's nodes."""
            c = type(a)
            if c is Pending:
                s = a.slot
                cast = None if a.cast is a.dtype else a.cast
                shape, dtype, backend, stride, offset, _ = info[s]
                if a.shape == shape and a.offset == offset and a.dtype is dtype and a.stride == stride:
                    e = f"v{s}"  # the slot's whole tensor
                else:
                    e = f"{const(backend.view)}(b{s}, {const(a.dtype)}, {const(a.shape)}, {const(a.stride)}, " \
                        f"{a.offset})"
                return e if cast is None else f"{const(backend.cast)}({e}, {const(cast)})"
            if c is Ext:
                if a.item:
                    return f"ext[{a.index}].item()"
                if a.cast is None:
                    return f"ext[{a.index}]._native()"
                return f"_cast(ext[{a.index}], {const(a.cast)})"
            if c is TensorList:
                items = ", ".join(arg(x) for x in a.items)
                return f"[{items}]" if a.type is list else f"({items}{',' if len(a.items) == 1 else ''})"
            v = a.value
            if where is not None and has_float(v):
                return f"nodes[{where[0]}][{_ARGS}][{where[1]}][{_VALUE}]"
            return repr(v) if type(v) in (int, bool, str) or v is None else const(v)

        ns["_cast"] = lambda t, dt: t._native() if t.dtype is dt else t._storage.backend.cast(t._native(), dt)
        for k, st in enumerate(self.steps):
            args = [arg(a, (st.node, i) if st.node is not None else None) for i, a in enumerate(st.args)]
            kw = ""
            if st.kwspec is not None:
                kw = ", ".join(f"{name}={arg(a)}" for name, a in st.kwspec.items())
            elif st.kind == "fused":
                src = st.kw_live or ()
                args.insert(0, "(" + "".join(f"float(nodes[{j}][{_ARGS}][{i}][{_VALUE}]), " if w == "a" else
                                             f"float(nodes[{j}][{_KWARGS}][{i!r}]), " for w, j, i in src) + ")")
            elif st.kw_live:
                kw = f"**nodes[{st.node}][{_KWARGS}]"
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


def _contiguous(backend, nat, shape, dtype, stride, offset, size):
    """``nat`` copied into a new buffer of ``size`` elements, as a view of ``stride`` and ``offset``."""
    buf = backend.alloc(size, dtype)
    out = backend.view(buf, dtype, shape, stride, offset)
    backend.copy_(out, nat)
    return out, buf


def _fmt_spec(s, names):
    k = type(s)
    if k is Ext:
        return f"%in{s.index}"
    if k is Pending:
        return names.get(s.slot, f"%{s.slot}") + ("" if s.offset == 0 and
                                                  s.stride == _strides.contiguous_strides(s.shape)
                                                  else f".view({list(s.shape)})")
    if k is TensorList:
        return "[" + ", ".join(_fmt_spec(x, names) for x in s.items) + "]"
    return repr(s.value)


_DT = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
       "int32": "Int", "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
       "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def format_graph(nodes, slot_info):
    """The recorded ops, one per line, TorchScript-style: ``%3 : Float(128, 10) = addmm(%in0, %2, ...)``."""
    names = {}
    lines = ["graph("]
    for node in nodes:
        name, spec, kw, outs = node.name, node.args, node.kwargs, node.outs
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
