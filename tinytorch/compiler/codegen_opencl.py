"""OpenCL C generation for the ``opencl`` and ``cuda`` backends: a fused elementwise run as one kernel.

The run becomes one OpenCL C kernel, a work-item per element: each member a statement, its op's formula
(``kernels/formulas.py``) rendered by ``kernels/render.py``'s ``OpenCLRenderer`` as the backend's own elementwise
kernels (``backends/opencl/elementwise.py``) render it, contraction off, so a fused run rounds as the unfused kernels
do. It is built once per source into the device's program cache (``_Device.kernel``) and launched as the
backend's elementwise kernels are (``_Device.launch_1d``); on the cuda device the same source is compiled as CUDA C
(``kernels/render.CUDARenderer``). Operands are contiguous (or one element, broadcast), read at their buffer
offsets.
"""
import hashlib

from ..kernels.render import OpenCLRenderer

_OCL = OpenCLRenderer()
LANGUAGE = "opencl"  # the Backend.kernel_language of the backends that name this module their codegen


def expression(name):
    """The codegen_cpp.Expr of op ``name`` when its fusible formula has an OpenCL rendering, else None."""
    from . import codegen_cpp
    e = codegen_cpp.EXPRESSIONS.get(name)
    return e if e is not None and "opencl" in e.formula.targets else None


def available():
    return True


def _member(e, ops, consts):
    return _OCL.expression(e.formula, ops, dict(zip(e.kw_consts, consts)))


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
        from .codegen_cpp import member
        e = member(name, kw, "opencl")
        nargs = e.nargs
        ops = [f"a{r[1]}" if r[0] == "in" else f"v{r[1]}" if r[0] == "v" else f"c{r[1]}" for r in refs[:nargs]]
        consts = [f"c{r[1]}" for r in refs[nargs:]]
        lines.append(f"  const CT v{pos} = {_member(e, ops, consts)};")
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
    name, src, kinds, n_out, n_c = kernel
    npdt = dtype.np

    def fused(consts, *inputs):
        dev = inputs[0].buf.dev
        k = dev.kernel(("compiled", name), lambda: src, name=name)
        outs = [backend._empty(shape, dtype, dev) for shape in out_shapes]
        args = [o.buf.mem for o in outs] + [a.buf.mem for a in inputs] + [np.int64(a.offset) for a in inputs]
        args += [npdt.type(c) for c in consts] + [np.int64(n)]
        dev.launch_1d(k, n, args)
        return outs[0] if n_out == 1 else tuple(outs)
    return fused
