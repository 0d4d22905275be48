"""OpenCL C generation for the ``opencl`` backend: a fused elementwise run as one kernel.

The run becomes one OpenCL C kernel, a work-item per element: each member a statement written with the expressions
of the backend's own elementwise kernels (``backends/opencl/elementwise.py``), contraction off, so a fused run
rounds as the unfused kernels do. It is built once per source into the device's program cache
(``runtime._Device.kernel``) and launched as the backend's elementwise kernels are (``runtime._launch_1d``). Operands
are contiguous (or one element, broadcast), read at their buffer offsets.
"""
import hashlib
import re

EXPRESSIONS = {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "relu", "reciprocal", "sqrt",
               "rsqrt", "threshold_backward"}


def expression(name):
    """The codegen_cpp.Expr of ``name`` when OpenCL can fuse it (same arity and attributes), else None."""
    from . import codegen_cpp
    return codegen_cpp.EXPRESSIONS.get(name) if name in EXPRESSIONS else None


def available():
    return True


def _member(name, dtype, ops, consts):
    from ..backends.opencl import elementwise as ew
    if name == "threshold_backward":
        e = f"({ops[1]} <= {consts[0]} ? (CT)0 : {ops[0]})"
        return e
    if len(ops) == 1:
        e = ew._unary_expr(name, dtype, {})
    else:
        e = ew._binary_expr(name, dtype, {})
    return re.sub(r"\bx([01])\b", lambda m: ops[int(m.group(1))], e)


def build(body, input_kinds, out_pos, dtype):
    """(kernel name, OpenCL source, input kinds, outputs, constants) of a fused run."""
    from ..backends.opencl.codegen import _CTYPE
    T = _CTYPE[dtype.name]
    n_c = sum(1 for _, refs, _ in body for r in refs if r[0] == "c")
    params = [f"__global {T}* o{k}" for k in range(len(out_pos))]
    params += [f"__global const {T}* i{k}" for k in range(len(input_kinds))]
    params += [f"long f{k}" for k in range(len(input_kinds))]  # the inputs' element offsets
    params += [f"{T} c{j}" for j in range(n_c)] + ["long n"]
    lines = ["  const long g = get_global_id(0);", "  if (g >= n) return;"]
    for k, kind in enumerate(input_kinds):
        lines.append(f"  const CT a{k} = i{k}[f{k}{'' if kind == 'scalar' else ' + g'}];")
    for pos, (name, refs, kw) in enumerate(body):
        nargs = expression(name).nargs
        ops = [f"a{r[1]}" if r[0] == "in" else f"v{r[1]}" if r[0] == "v" else f"c{r[1]}" for r in refs[:nargs]]
        consts = [f"c{r[1]}" for r in refs[nargs:]]
        lines.append(f"  const CT v{pos} = {_member(name, dtype, ops, consts)};")
    for k, pos in enumerate(out_pos):
        lines.append(f"  o{k}[g] = v{pos};")
    text = "\n".join(lines)
    name = "fused_" + hashlib.sha256((text + ",".join(params)).encode()).hexdigest()[:16]
    src = (f"#pragma OPENCL FP_CONTRACT OFF\n#define CT {T}\n#define OT {T}\n"
           f"__kernel void {name}({', '.join(params)}) {{\n{text}\n}}\n#undef CT\n#undef OT\n")
    return name, src, tuple(input_kinds), len(out_pos), n_c


def launcher(kernel, n, dtype, out_shapes, backend):
    """``fn(consts, *inputs)``: allocate the outputs, launch the fused kernel, return them."""
    import numpy as np
    from ..backends.opencl.runtime import _launch_1d, _set_args
    name, src, kinds, n_out, n_c = kernel
    npdt = dtype.np

    def fused(consts, *inputs):
        dev = inputs[0].buf.dev
        k = dev.kernel(("compiled", name), lambda: src, name=name)
        outs = [backend._empty(shape, dtype, dev) for shape in out_shapes]
        args = [o.buf.mem for o in outs] + [a.buf.mem for a in inputs] + [np.int64(a.offset) for a in inputs]
        args += [npdt.type(c) for c in consts] + [np.int64(n)]
        _set_args(k, *args)
        _launch_1d(dev, k, n)
        return outs[0] if n_out == 1 else tuple(outs)
    return fused
