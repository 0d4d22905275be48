"""OpenCL C code generation shared by the kernels: C type names, the strided index code and its parameter
block, the elementwise kernel source, and small expression helpers."""
import functools
import math

import numpy as np

MAXD = 6  # dims handled by the generic strided index code (more dims get a kernel of their own width)
_CTYPE = {"bool": "uchar", "uint8": "uchar", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
          "float16": "half", "float32": "float", "float64": "double",
          "bfloat16": "bfloat16"}  # CUDA C only (kernels/render.CUDARenderer); OpenCL C has none


def _ct(dtype):
    return _CTYPE[dtype.name]


def _collapse(shape, strides_list):
    """Drop size-1 dims and merge dims that are contiguous with their inner neighbour in every operand.

    Returns (shape, [strides per operand]) innermost-first (slot 0 is the fastest-varying dim).
    """
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    shp = [shape[d] for d in reversed(dims)]
    sts = [[s[d] for d in reversed(dims)] for s in strides_list]
    i = 1
    while i < len(shp):
        if all(st[i] == st[i - 1] * shp[i - 1] for st in sts):
            shp[i - 1] *= shp[i]
            del shp[i]
            for st in sts:
                del st[i]
        else:
            i += 1
    return shp, sts


def _index_code(nops, nd, names):
    """OpenCL code computing each operand's element offset p{k} from the flat index ``gid`` (meta in P)."""
    m = max(MAXD, nd)
    lines = [f"long r = gid;"]
    lines += [f"long p{k} = P.v[{2 + m + k * (m + 1)}];" for k in range(nops)]
    # fast path: one dim (contiguous or uniformly strided operands)
    lines.append("if (P.v[0] == 1) {")
    lines += [f"  p{k} += r * P.v[{2 + m + k * (m + 1) + 1}];" for k in range(nops)]
    if "c0" in names:
        lines.append("  c0 = r;")
    lines.append("} else {")
    for d in range(m):
        lines.append(f"  if (P.v[0] > {d}) {{ long c = r % P.v[{2 + d}]; r /= P.v[{2 + d}];")
        lines += [f"    p{k} += c * P.v[{2 + m + k * (m + 1) + 1 + d}];" for k in range(nops)]
        if f"c{d}" in names:
            lines.append(f"    c{d} = c;")
        lines.append("  }")
    lines.append("}")
    decl = "".join(f"long {n} = 0; " for n in names)
    return decl + "\n".join(lines), m


def _meta(shape, strides_list, offsets, m):
    return _meta_cached(tuple(shape), tuple(map(tuple, strides_list)), tuple(offsets), m)


@functools.lru_cache(maxsize=4096)
def _meta_cached(shape, strides_list, offsets, m):
    """The int64 parameter block read by ``_index_code``: nd, numel, shape[m], then (offset, strides[m]) each."""
    v = np.zeros(2 + m + len(strides_list) * (m + 1), np.int64)
    v[0] = len(shape)
    v[1] = math.prod(shape)
    v[2:2 + len(shape)] = shape
    for k, (st, off) in enumerate(zip(strides_list, offsets)):
        base = 2 + m + k * (m + 1)
        v[base] = off
        v[base + 1: base + 1 + len(st)] = st
    return v


def _struct(n):
    return f"typedef struct {{ long v[{n}]; }} Params;\n"


# the first line of an elementwise kernel's body (scoped to it, as the pragma is inside the compound statement):
# a formula's multiply-adds are not contracted, as in the fused kernels of compiler/codegen_opencl.py, so a fused
# run rounds as these kernels do (the cuda device compiles with --fmad=false and ignores the pragma)
_NO_CONTRACT = "#pragma OPENCL FP_CONTRACT OFF\n"


@functools.lru_cache(maxsize=4096)  # a training step asks for the same few kernels over and over
def _ew_spec(name, expr, out_t, in_types, sc_types, ptr=(), m=MAXD, coords=(), ct=None, helpers=""):
    """(cache key, OpenCL source) of an elementwise kernel; the kernel function is named ``KNAME`` and its
    typedefs are macros, so several kernels can share one program."""
    ct = ct or _CTYPE[in_types[0] if in_types else out_t]
    key = (name, expr, out_t, in_types, sc_types, tuple(ptr), m, coords, ct)
    nops = 1 + len(in_types)
    idx, _ = _index_code(nops, m, [f"c{d}" for d in coords] if coords else [])
    params = ["__global OT* out"]
    body = []
    for k, t in enumerate(in_types):
        params.append(f"__global const {_CTYPE[t]}* A{k}")
        if k not in ptr:
            body.append(f"{_CTYPE[t]} x{k} = A{k}[p{k + 1}];")
    nparams = 2 + m + nops * (m + 1)
    params.append(f"Params{nparams} P")
    params += [f"{_CTYPE[t]} s{j}" for j, t in enumerate(sc_types)]
    src = (f"#ifndef PARAMS{nparams}\n#define PARAMS{nparams}\ntypedef struct {{ long v[{nparams}]; }} Params{nparams};\n#endif\n"
           f"#define CT {ct}\n#define OT {_CTYPE[out_t]}\n" + helpers +
           f"__kernel void KNAME({', '.join(params)}) {{\n" + _NO_CONTRACT + " long gid = get_global_id(0);\n if (gid >= P.v[1]) return;\n"
           + idx + "\n" + "\n".join(body) + f"\n out[p0] = (OT)({expr});\n}}\n#undef CT\n#undef OT\n")
    return key, src


def _isf(dt):
    return dt.is_floating_point


def _max_expr(a, b, f, fn):
    op = ">" if fn == "max" else "<"
    if f:  # NaN propagates, as torch.maximum
        return f"((isnan({a}) || {a} {op} {b}) ? {a} : (isnan({b}) ? {b} : ({a} {op} {b} ? {a} : {b})))"
    return f"({a} {op} {b} ? {a} : {b})"


def _lim(dt, hi):
    if dt.name == "bool":
        return "(ACC)1" if hi else "(ACC)0"
    info = np.iinfo(dt.np)
    v = info.max if hi else info.min
    if dt.name == "int64" and not hi:
        return "(ACC)(-9223372036854775807L - 1)"
    return f"(ACC){v}L" if dt.name == "int64" else f"(ACC){v}"


def _bshape(shapes):
    """The broadcast shape of ``shapes`` (RuntimeError when they do not broadcast)."""
    if len(shapes) == 1 or all(shp == shapes[0] for shp in shapes):
        return tuple(shapes[0])
    out = []
    for shp in shapes:
        shp = list(shp)
        if len(shp) > len(out):
            out = [1] * (len(shp) - len(out)) + out
        for i in range(1, len(shp) + 1):
            n = shp[-i]
            if out[-i] == 1:
                out[-i] = n
            elif n != 1 and n != out[-i]:
                raise RuntimeError(f"shapes {shapes} are not broadcastable")
    return tuple(out)
