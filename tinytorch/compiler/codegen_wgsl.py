"""WGSL generation for the ``webgpu`` backend: a fused elementwise run as one compute shader.

The run becomes one kernel, an invocation per element: each member a statement, its op's formula
(``kernels/formulas.py``) rendered by ``kernels/render.py``'s ``WGSLRenderer`` as the backend's own elementwise
kernels (``backends/webgpu/elementwise.py``) render it. The pipeline is built once per source into the device's
pipeline cache and recorded into its command encoder as the backend's kernels are. Operands are contiguous (or one
element, broadcast), read at their buffer offsets; the offsets and the run's constants travel in the parameter
block. WGSL has no switch for multiply-add contraction: a driver may contract across what were two kernels, so a
fused run can differ from the unfused kernels in the last bit (the tests compare within a few ulps).
"""
import hashlib

import numpy as np

from ..kernels.render import WGSLRenderer

_R = WGSLRenderer()
LANGUAGE = "wgsl"  # the Backend.kernel_language of the backends that name this module their codegen


def expression(name):
    """The codegen_cpp.Expr of op ``name`` when its fusible formula has a WGSL rendering, else None."""
    from . import codegen_cpp
    e = codegen_cpp.EXPRESSIONS.get(name)
    return e if e is not None and "wgsl" in e.formula.targets else None


def available():
    """Whether a WebGPU device is here to run the kernels."""
    from ..backends.webgpu import runtime
    return runtime.device() is not None


def build(body, input_kinds, out_pos, dtype):
    """(kernel name, WGSL source, input kinds, outputs, constants) of a fused run; None for a dtype the device
    does not compute in."""
    from ..backends.webgpu import wgsl
    from ..backends.webgpu.runtime import STORAGE
    from .codegen_cpp import member
    if dtype.name not in ("float32", "float16"):
        return None
    st = STORAGE[dtype.name]
    n_in, n_out = len(input_kinds), len(out_pos)
    n_c = sum(1 for _, refs, _ in body for r in refs if r[0] == "c")
    # bindings: outputs o{k}, inputs i{k}, then P = [n, input offsets..., constants as f32 bits...]
    decl = [f"@group(0) @binding({k}) var<storage, read_write> o{k}: array<{st}>;" for k in range(n_out)]
    decl += [f"@group(0) @binding({n_out + k}) var<storage, read> i{k}: array<{st}>;" for k in range(n_in)]
    decl.append(f"@group(0) @binding({n_out + n_in}) var<storage, read> P: array<i32>;")
    lines = [" if (gid >= P[0]) { return; }"]
    for k, kind in enumerate(input_kinds):
        lines.append(f" let a{k} = CT(i{k}[P[{1 + k}]{'' if kind == 'scalar' else ' + gid'}]);")
    for j in range(n_c):
        lines.append(f" let c{j} = CT(bitcast<f32>(P[{1 + n_in + j}]));")
    for pos, (name, refs, kw) in enumerate(body):
        e = member(name, kw, "wgsl")
        ops = [f"a{r[1]}" if r[0] == "in" else f"v{r[1]}" if r[0] == "v" else f"c{r[1]}" for r in refs[:e.nargs]]
        consts = [f"c{r[1]}" for r in refs[e.nargs:]]
        lines.append(f" let v{pos} = {_R.expression(e.formula, ops, dict(zip(e.kw_consts, consts)))};")
    for k, pos in enumerate(out_pos):
        lines.append(f" o{k}[gid] = {st}(v{pos});")
    vt = "f16" if dtype.name == "float16" else "f32"
    src = (wgsl.header(dtype) + "\n".join(decl) + "\n" + wgsl.helpers(vt) + wgsl.GID + "\n".join(lines) + "\n}\n")
    name = "fused_" + hashlib.sha256(src.encode()).hexdigest()[:16]
    return name, src, tuple(input_kinds), n_out, n_c


def launcher(kernel, n, dtype, out_shapes, backend):
    """``fn(consts, *inputs)``: allocate the outputs, record the fused kernel, return them."""
    name, src, kinds, n_out, n_c = kernel

    def fused(consts, *inputs):
        dev = inputs[0].buf.dev
        pipe = dev.pipeline(("compiled", name), lambda: src)
        outs = [backend._empty(shape, dtype, dev) for shape in out_shapes]
        words = [n] + [a.offset for a in inputs] + [int(np.array(c, np.float32).view(np.int32)) for c in consts]
        dev.launch(pipe, [o.buf.mem for o in outs] + [a.buf.mem for a in inputs] + [dev.param_buffer(words)],
                   dev.groups_1d(n))
        return outs[0] if n_out == 1 else tuple(outs)
    return fused
