"""The ``opencl`` backend: tinytorch on any OpenCL 1.2+ device (AMD, Intel, Apple, NVIDIA, PoCL on a CPU).

Memory is ``pyopencl`` buffers from a caching allocator (freed blocks are kept per rounded size and
reused, as PyTorch's CUDA caching allocator does). Kernels are OpenCL C generated from small templates
(``_ELEMENTWISE`` expressions, reductions, scans, sort, a tiled GEMM, fused softmax) and compiled once
per (source, device): the program cache. Every kernel reads its inputs through (offset, strides), so
views reach kernels without a copy to contiguous memory first.

Indexing ops whose targets depend on data (advanced indexing, scatter, index_add) compute the element
offsets on the host from the index values (the indices are read back once, as PyTorch reads back a
boolean mask) and run a gather kernel or a segmented scatter kernel; duplicates accumulate in index
order, so results are deterministic and equal the cpu backend's.
"""
import functools
import math
import re

import numpy as np

from .. import _dtype as _dt
from .._strides import contiguous_strides
from .base import Backend

try:
    import pyopencl as cl
    _IMPORT_ERROR = None
except Exception as e:  # pragma: no cover - depends on the environment
    cl = None
    _IMPORT_ERROR = e

MAXD = 6  # dims handled by the generic strided index code (more dims get a kernel of their own width)
_CTYPE = {"bool": "uchar", "uint8": "uchar", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
          "float16": "half", "float32": "float", "float64": "double"}


class CLBuffer:
    """A block of device memory from the caching allocator; returned to the pool when garbage collected."""

    __slots__ = ("mem", "nbytes", "size", "dev", "__weakref__")

    def __init__(self, mem, nbytes, size, dev):
        self.mem, self.nbytes, self.size, self.dev = mem, nbytes, size, dev

    def __len__(self):
        return self.size

    def __del__(self):
        dev = self.dev
        if dev is not None and self.mem is not None:
            dev.release(self.mem, self.nbytes)


class CLArray:
    """What kernels receive: a strided window (shape, strides and offset in elements) of a CLBuffer."""

    __slots__ = ("buf", "dtype", "shape", "strides", "offset")

    def __init__(self, buf, dtype, shape, strides, offset=0):
        self.buf, self.dtype, self.shape, self.strides, self.offset = buf, dtype, shape, strides, offset

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def is_contiguous(self):
        return self.strides == contiguous_strides(self.shape) or self.size <= 1

    def view(self, shape, strides, offset=None):
        return CLArray(self.buf, self.dtype, tuple(shape), tuple(strides), self.offset if offset is None else offset)

    def permute(self, perm):
        return self.view([self.shape[p] for p in perm], [self.strides[p] for p in perm])

    def __repr__(self):
        return f"CLArray(shape={self.shape}, strides={self.strides}, offset={self.offset}, dtype={self.dtype})"


class _Device:
    """One OpenCL device: context, in-order queue, allocator pool and program cache."""

    def __init__(self, cldev, index):
        self.cldev = cldev
        self.index = index
        self.ctx = cl.Context([cldev])
        self.queue = cl.CommandQueue(self.ctx)
        ext = cldev.extensions
        self.fp64 = "cl_khr_fp64" in ext
        self.fp16 = "cl_khr_fp16" in ext
        self.name = cldev.name.strip()
        self.pool = {}
        self.allocated = self.max_allocated = self.reserved = 0
        self.kernels = {}
        self.programs = {}
        self.max_wg = cldev.max_work_group_size

    # -- caching allocator --
    def alloc(self, nbytes):
        nbytes = max(512, (nbytes + 511) // 512 * 512)  # PyTorch's 512-byte rounding: freed blocks fit more requests
        free = self.pool.get(nbytes)
        if free:
            mem = free.pop()
        else:
            try:
                mem = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)
            except cl.Error:
                self.empty_cache()
                try:
                    mem = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)
                except cl.Error as e:
                    raise RuntimeError(f"opencl:{self.index} ({self.name}) out of memory: tried to allocate "
                                       f"{nbytes} bytes; {self.allocated} bytes allocated") from e
            self.reserved += nbytes
        self.allocated += nbytes
        if self.allocated > self.max_allocated:
            self.max_allocated = self.allocated
        return mem, nbytes

    def release(self, mem, nbytes):
        self.allocated -= nbytes
        self.pool.setdefault(nbytes, []).append(mem)

    def empty_cache(self):
        for blocks in self.pool.values():
            for m in blocks:
                self.reserved -= m.size
                m.release()
        self.pool.clear()

    # -- program cache --
    def _build(self, src, what):
        header = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if self.fp64 else ""
        if self.fp16:
            header += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        try:
            return cl.Program(self.ctx, header + src).build()
        except cl.RuntimeError as e:
            raise RuntimeError(f"opencl: building kernel '{what}' failed on {self.name}:\n{e}\n"
                               f"--- source ---\n{src}") from None

    def kernel(self, key, source_fn, name="k", family=None):
        """The compiled kernel for ``key`` (built from ``source_fn()`` on first use).

        ``family()`` lists (key, source) of sibling kernels; they are compiled in the same program, because
        building a program costs far more than adding kernels to it (each kernel's own code generation then
        happens on its first launch, and only for kernels that run)."""
        k = self.kernels.get(key)
        if k is not None:
            return k
        if family is not None:
            specs = [(key, source_fn())] + [(kk, ss) for kk, ss in family() if kk != key and kk not in self.kernels]
            srcs = []
            for i, (kk, ss) in enumerate(specs):
                # helpers (names ending in '_') and the kernel get per-kernel names inside the shared program
                ss = re.sub(r"\b([a-z]+_)\(", lambda mt: f"{mt.group(1)}{i}(", ss)
                srcs.append(ss.replace("KNAME", f"k{i}"))
            try:
                prg = self._build("".join(srcs), key[0])
            except RuntimeError:
                prg = None  # a sibling that does not compile must not cost the kernel asked for
            if prg is not None:
                for i, (kk, _) in enumerate(specs):
                    self.kernels[kk] = cl.Kernel(prg, f"k{i}")
                return self.kernels[key]
        src = source_fn()
        prg = self.programs.get(src)
        if prg is None:
            prg = self.programs[src] = self._build(src.replace("KNAME", name), key[0])
        k = self.kernels[key] = cl.Kernel(prg, name)
        return k


_DEVICES = None


def _devices():
    global _DEVICES
    if _DEVICES is None:
        _DEVICES = []
        if cl is not None:
            try:
                platforms = cl.get_platforms()
            except Exception:  # no ICD loader / no platform
                platforms = []
            devs = []
            for p in platforms:
                try:
                    devs.extend(p.get_devices())
                except Exception:
                    pass
            # GPUs first, so "opencl" means the GPU when a machine has both
            devs.sort(key=lambda d: 0 if d.type & cl.device_type.GPU else 1)
            _DEVICES = [None] * len(devs)
            _DEVICES = [_LazyDev(d, i) for i, d in enumerate(devs)]
    return _DEVICES


class _LazyDev:
    """Creates the context on first use, so importing tinytorch never touches the GPU driver."""

    def __init__(self, cldev, index):
        self.cldev, self.index, self.dev = cldev, index, None

    def get(self):
        if self.dev is None:
            self.dev = _Device(self.cldev, self.index)
        return self.dev


def unavailable_reason():
    if cl is None:
        return f"pyopencl is not installed ({_IMPORT_ERROR}); `pip install pyopencl` and an OpenCL driver (ICD)"
    if not _devices():
        return "no OpenCL platform with a device was found (install an OpenCL driver, e.g. Debian's pocl-opencl-icd)"
    return None


# ---------------------------------------------------------------------------------------------------------------
# code generation helpers

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
           f"__kernel void KNAME({', '.join(params)}) {{\n long gid = get_global_id(0);\n if (gid >= P.v[1]) return;\n"
           + idx + "\n" + "\n".join(body) + f"\n out[p0] = (OT)({expr});\n}}\n#undef CT\n#undef OT\n")
    return key, src


_UNARY_FLOAT = {
    "exp": "exp(x0)", "exp2": "exp2(x0)", "expm1": "expm1(x0)", "log": "log(x0)", "log2": "log2(x0)",
    "log10": "log10(x0)", "log1p": "log1p(x0)", "sqrt": "sqrt(x0)", "rsqrt": "rsqrt(x0)", "sin": "sin(x0)",
    "cos": "cos(x0)", "tan": "tan(x0)", "asin": "asin(x0)", "acos": "acos(x0)", "atan": "atan(x0)",
    "sinh": "sinh(x0)", "cosh": "cosh(x0)", "tanh": "tanh(x0)", "sigmoid": "(CT)1 / ((CT)1 + exp(-x0))",
    "reciprocal": "(CT)1 / x0", "erf": "erf(x0)", "erfinv": "erfinv_(x0)",
}

# erfinv: Giles' single-precision approximation, then two Newton steps on erf (exact to the last bits in double)
_ERFINV = """
CT erfinv_(CT y) {
  if (y <= (CT)-1) return y == (CT)-1 ? -INFINITY : NAN;
  if (y >= (CT)1) return y == (CT)1 ? INFINITY : NAN;
  CT w = -log(((CT)1 - y) * ((CT)1 + y)), p;
  if (w < (CT)5) { w = w - (CT)2.5;
    p = (CT)2.81022636e-08; p = (CT)3.43273939e-07 + p * w; p = (CT)-3.5233877e-06 + p * w;
    p = (CT)-4.39150654e-06 + p * w; p = (CT)0.00021858087 + p * w; p = (CT)-0.00125372503 + p * w;
    p = (CT)-0.00417768164 + p * w; p = (CT)0.246640727 + p * w; p = (CT)1.50140941 + p * w;
  } else { w = sqrt(w) - (CT)3;
    p = (CT)-0.000200214257; p = (CT)0.000100950558 + p * w; p = (CT)0.00134934322 + p * w;
    p = (CT)-0.00367342844 + p * w; p = (CT)0.00573950773 + p * w; p = (CT)-0.0076224613 + p * w;
    p = (CT)0.00943887047 + p * w; p = (CT)1.00167406 + p * w; p = (CT)2.83297682 + p * w; }
  CT x = p * y;
  for (int i = 0; i < 2; ++i) x -= (erf(x) - y) / ((CT)1.1283791670955126 * exp(-x * x));
  return x;
}
"""


def _isf(dt):
    return dt.is_floating_point


def _unary_expr(name, dt, kw):
    f = _isf(dt)
    if name in _UNARY_FLOAT:
        return _UNARY_FLOAT[name]
    if name == "neg":
        return "-x0"
    if name == "abs":
        return "fabs(x0)" if f else ("x0" if dt.name in ("uint8", "bool") else "(x0 < 0 ? -x0 : x0)")
    if name == "sign":
        return "(isnan(x0) ? x0 : (CT)((x0 > 0) - (x0 < 0)))" if f else "(CT)((x0 > 0) - (x0 < 0))"
    if name in ("floor", "ceil", "trunc"):
        return f"{name}(x0)" if f else "x0"
    if name == "round":
        d = kw.get("decimals", 0)
        if not f:
            return "x0"
        return "rint(x0)" if d == 0 else f"(rint(x0 * (CT){10.0 ** d!r}) / (CT){10.0 ** d!r})"
    if name == "relu":
        return "(x0 > 0 || isnan(x0) ? x0 : (CT)0)" if f else "(x0 > 0 ? x0 : (CT)0)"
    if name == "bitwise_not":
        return "(CT)(!x0)" if dt.name == "bool" else "~x0"
    if name == "logical_not":
        return "(OT)(!x0)" if not f else "(OT)(x0 == 0)"
    if name == "isnan":
        return "(OT)isnan(x0)" if f else "(OT)0"
    if name == "isinf":
        return "(OT)isinf(x0)" if f else "(OT)0"
    if name == "isfinite":
        return "(OT)isfinite(x0)" if f else "(OT)1"
    if name == "nan_to_num":
        return "(isnan(x0) ? s0 : (isinf(x0) ? (x0 > 0 ? s1 : s2) : x0))" if f else "x0"
    if name == "clone":
        return "x0"
    raise KeyError(name)


def _max_expr(a, b, f, fn):
    op = ">" if fn == "max" else "<"
    if f:  # NaN propagates, as torch.maximum
        return f"((isnan({a}) || {a} {op} {b}) ? {a} : (isnan({b}) ? {b} : ({a} {op} {b} ? {a} : {b})))"
    return f"({a} {op} {b} ? {a} : {b})"


def _binary_expr(name, dt, kw):
    f = _isf(dt)
    b = dt.name == "bool"
    if name in ("add", "sub"):
        op = "+" if name == "add" else "-"
        if b:
            return "(CT)(x0 || x1)"
        return f"x0 {op} x1 * s0" if "alpha" in kw and kw["alpha"] != 1 else f"x0 {op} x1"
    if name == "mul":
        return "(CT)(x0 && x1)" if b else "x0 * x1"
    if name == "div":
        rm = kw.get("rounding_mode")
        if rm is None:
            return "x0 / x1"
        if f:
            return "trunc(x0 / x1)" if rm == "trunc" else "floor(x0 / x1)"
        if rm == "trunc":
            return "x0 / x1"
        return "(x0 / x1 - ((x0 % x1 != 0) && ((x0 < 0) != (x1 < 0))))"
    if name == "remainder":
        if f:
            return "rem_(x0, x1)"
        return "(x0 % x1 + (((x0 % x1) != 0 && ((x0 % x1 < 0) != (x1 < 0))) ? x1 : 0))"
    if name == "fmod":
        return "fmod(x0, x1)" if f else "x0 % x1"
    if name == "pow":
        return "pow(x0, x1)" if f else "ipow_(x0, x1)"
    if name == "atan2":
        return "atan2(x0, x1)"
    if name in ("maximum", "minimum"):
        return _max_expr("x0", "x1", f, "max" if name == "maximum" else "min")
    cmp = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
    if name in cmp:
        return f"(OT)(x0 {cmp[name]} x1)"
    lg = {"logical_and": "&&", "logical_or": "||"}
    if name in lg:
        return f"(OT)((x0 != 0) {lg[name]} (x1 != 0))"
    if name == "logical_xor":
        return "(OT)((x0 != 0) != (x1 != 0))"
    bw = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
    if name in bw:
        return f"(CT)(x0 {bw[name]} x1)"
    if name == "bitwise_left_shift":
        return "(x1 >= (CT)(8 * sizeof(CT)) || x1 < 0) ? (CT)0 : (CT)(x0 << x1)"
    if name == "bitwise_right_shift":
        return "(x1 >= (CT)(8 * sizeof(CT)) || x1 < 0) ? (x0 < 0 ? (CT)-1 : (CT)0) : (CT)(x0 >> x1)"
    raise KeyError(name)


def _unary_spec(name, dt, kw):
    """(expr, out dtype, scalar dtype names, helpers) of a unary kernel."""
    out_dt = _dt.bool if name in ("isnan", "isinf", "isfinite", "logical_not") else dt
    sc = (dt.name,) * 3 if name == "nan_to_num" else ()
    return _unary_expr(name, dt, kw), out_dt, sc, (_ERFINV if name == "erfinv" else "")


_CMP_OUT = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")


def _binary_spec(name, dt, kw, pattern):
    """(expr, out dtype, input dtype names, scalar dtype names, helpers) of a binary kernel; ``pattern`` says
    which of (a, b) are tensors. Tensors become loads x{j}, Python scalars arguments s{j} (s0 is alpha)."""
    names, n_in, n_sc = [], 0, 1
    for is_t in pattern:
        if is_t:
            names.append(f"x{n_in}")
            n_in += 1
        else:
            names.append(f"s{n_sc}")
            n_sc += 1
    expr = re.sub(r"\bx([01])\b", lambda mt: names[int(mt.group(1))], _binary_expr(name, dt, kw))
    out_dt = _dt.bool if name in _CMP_OUT else dt
    helpers = _HELPERS if _isf(dt) else (_IPOW if name == "pow" else "")
    return expr, out_dt, (dt.name,) * n_in, (dt.name,) * n_sc, helpers


_HELPERS = """
CT rem_(CT a, CT b) { CT r = fmod(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }
"""
_IPOW = """
CT ipow_(CT a, CT b) {
  if (b < 0) return a == 1 ? (CT)1 : (a == -1 ? ((b % 2 == 0) ? (CT)1 : (CT)-1) : (CT)0);
  CT r = 1; while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r;
}
"""

_UNARY_NAMES = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
                "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "reciprocal", "erf", "erfinv", "neg",
                "abs", "sign", "floor", "ceil", "round", "trunc", "relu", "bitwise_not", "logical_not", "isnan",
                "isinf", "isfinite", "nan_to_num", "clone"]
_BINARY_NAMES = ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "atan2", "maximum", "minimum", "eq", "ne",
                 "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


def _is_arr(x):
    return isinstance(x, CLArray)


class OpenCLBackend(Backend):
    """OpenCL devices through pyopencl: ``opencl:0`` .. ``opencl:N-1`` (GPUs first)."""

    def __init__(self):
        self.kernels = {}
        for n in _UNARY_NAMES:
            self.kernels[n] = self._unary(n)
        for n in _BINARY_NAMES:
            self.kernels[n] = self._binary(n)
        self.kernels.update({
            "where": self._where, "threshold_backward": self._threshold_backward, "clamp": self._clamp, "to_dtype": lambda a, dtype: self.cast(a, dtype),
            "sum": self._red("sum"), "prod": self._red("prod"), "amax": self._red("amax"),
            "amin": self._red("amin"), "all": self._red("all"), "any": self._red("any"),
            "max_dim": self._arg_red("max", True), "min_dim": self._arg_red("min", True),
            "argmax": self._arg_red("max", False), "argmin": self._arg_red("min", False),
            "cumsum": self._scan("sum"), "cumprod": self._scan("prod"), "sort": self._sort, "topk": self._topk,
            "matmul": self._matmul, "einsum": self._einsum, "cat": self._cat, "flip": self._flip,
            "tril": lambda a, diagonal: self._tri(a, diagonal, "tril"),
            "triu": lambda a, diagonal: self._tri(a, diagonal, "triu"),
            "gather": self._gather, "index_select": self._index_select, "index": self._index,
            "index_put": self._index_put, "scatter": self._scatter, "index_add": self._index_add,
            "softmax": lambda a, dim: self._softmax(a, dim, False),
            "log_softmax": lambda a, dim: self._softmax(a, dim, True),
            "softmax_backward": lambda g, out, dim: self._softmax_backward(g, out, dim, False),
            "log_softmax_backward": lambda g, out, dim: self._softmax_backward(g, out, dim, True),
            "native_layer_norm": self._layer_norm, "linear": self._linear,
            "nll_loss": self._nll_loss, "nll_loss_backward": self._nll_loss_backward,
            "im2col": self._im2col, "col2im": self._col2im, "max_pool2d_with_indices": self._max_pool2d,
            "max_pool2d_with_indices_backward": self._max_pool2d_backward,
        })
        self.inplace_kernels = {n: self._inplace_binary(n) for n in ("add", "sub", "mul", "div")}
        self.inplace_kernels.update({"sgd_momentum_step": self._sgd_momentum_step, "adam_step": self._adam_step})

    # ---- devices ----
    def is_available(self):
        return bool(_devices())

    def unavailable_reason(self):
        return unavailable_reason()

    def device_count(self):
        return len(_devices())

    def _dev(self, index=None):
        devs = _devices()
        if not devs:
            raise RuntimeError(f"opencl device is not available: {unavailable_reason()}")
        return devs[index or 0].get()

    def dev_for(self, index):
        return self._dev(index)

    def synchronize(self, index=None):
        self._dev(index).queue.finish()

    def memory_allocated(self, index=None):
        return self._dev(index).allocated

    # ---- allocator ----
    def _check_dtype(self, dtype, dev):
        if dtype.name == "float64" and not dev.fp64:
            raise TypeError(f"opencl:{dev.index} ({dev.name}) does not support float64: the device lacks cl_khr_fp64")
        if dtype.name == "float16" and not dev.fp16:
            raise TypeError(f"opencl:{dev.index} ({dev.name}) does not support float16: the device lacks cl_khr_fp16")
        if dtype.name not in _CTYPE:
            raise TypeError(f"opencl: dtype {dtype} is not supported by the OpenCL backend")

    def _alloc(self, numel, dtype, dev):
        self._check_dtype(dtype, dev)
        mem, nbytes = dev.alloc(max(1, numel) * dtype.itemsize)
        return CLBuffer(mem, nbytes, numel, dev)

    def alloc(self, numel, dtype, index=None):
        return self._alloc(numel, dtype, self._dev(index))

    def _empty(self, shape, dtype, dev):
        buf = self._alloc(math.prod(shape), dtype, dev)
        return CLArray(buf, dtype, tuple(shape), contiguous_strides(tuple(shape)), 0)

    def from_numpy(self, arr, device=None):
        dev = self._dev(device.index if device is not None else None)
        dtype = _dt.from_numpy_dtype(arr.dtype)
        buf = self._alloc(arr.size, dtype, dev)
        if arr.size:
            cl.enqueue_copy(dev.queue, buf.mem, np.ascontiguousarray(arr), is_blocking=False)
            dev.queue.finish()  # the host array may be freed or reused by the caller right after
        return buf

    def to_numpy(self, native):
        a = native
        if not a.size:
            return np.empty(a.shape, a.dtype.np)
        if not a.is_contiguous():
            a = self._copy(a)
        out = np.empty(a.shape, a.dtype.np)
        cl.enqueue_copy(a.buf.dev.queue, out, a.buf.mem, src_offset=a.offset * a.dtype.itemsize, is_blocking=True)
        return out

    def reinterpret(self, buf, old_dtype, new_dtype):
        return buf  # cl buffers are bytes; CLArray carries the dtype

    def view(self, buf, dtype, shape, strides, offset):
        return CLArray(buf, dtype, shape, strides, offset)

    def wrap(self, native, dtype):
        a = native
        if a.dtype is not dtype:
            a = self.cast(a, dtype)
        return a, a.buf, a.strides, a.offset

    def cast(self, native, dtype):
        if native.dtype is dtype:
            return self._copy(native)
        f = _isf(native.dtype)
        expr = "(OT)(x0 != 0)" if dtype.name == "bool" else "(OT)x0"
        if dtype.name == "bool" and f:
            expr = "(OT)(x0 != 0 || isnan(x0))"
        return self._ew("cast", expr, [native], [], dtype, native.shape)

    def copy_(self, dst, src):
        if _is_arr(src) and src.buf is dst.buf:
            src = self._copy(src)  # overlapping source and destination: read everything before writing
        if not _is_arr(src):
            self._ew("fill", "(OT)s0", [], [(src, dst.dtype)], dst.dtype, dst.shape, out=dst)
            return
        expr = "(OT)x0" if dst.dtype.name != "bool" else "(OT)(x0 != 0)"
        self._ew("copy", expr, [self._expand(src, dst.shape)], [], dst.dtype, dst.shape, out=dst)

    # ---- the elementwise engine ----
    def _expand(self, a, shape):
        """A broadcast view of ``a`` with ``shape`` (stride 0 in broadcast dims)."""
        if a.shape == tuple(shape):
            return a
        lead = len(shape) - a.ndim
        st = [0] * lead + [s if n != 1 or m == 1 else 0 for s, n, m in zip(a.strides, a.shape, shape[lead:])]
        return a.view(shape, st)

    def _ew(self, name, expr, inputs, scalars, out_dtype, shape, out=None, ptr=(), collapse=True, coords=(),
            helpers="", ct=None, family=None):
        """Run ``out[i] = expr`` over ``shape``: inputs are ``x{k}`` (loaded at their strided offset) or, for
        k in ``ptr``, raw pointers ``A{k}`` with offset ``p{k + 1}``; scalars are ``s{j}`` of the given dtypes.
        ``family()`` may list sibling kernels (same operand signature) to compile in the same program."""
        shape = tuple(shape)
        n = math.prod(shape)
        dev = (out.buf.dev if out is not None else inputs[0].buf.dev) if (out is not None or inputs) else self._dev()
        if out is None:
            out = self._empty(shape, out_dtype, dev)
        if n == 0:
            return out
        ops = [out] + list(inputs)
        strides = [list(o.strides) if o.shape == shape else list(self._expand(o, shape).strides) for o in ops]
        if collapse:
            cshape, cst = _collapse(list(shape), strides)
            if not cshape:
                cshape, cst = [1], [[0] for _ in ops]
        else:
            cshape, cst = list(reversed(shape)) or [1], [list(reversed(s)) or [0] for s in strides]
        m = max(MAXD, len(cshape))
        in_types = tuple(a.dtype.name for a in inputs)
        sc_types = tuple(dt.name for _, dt in scalars)
        key, src = _ew_spec(name, expr, out_dtype.name, in_types, sc_types, tuple(ptr), m, coords, ct, helpers)
        fam = None
        if family is not None:
            def fam():
                return [_ew_spec(*(f[:6] + (m,) + f[7:])) for f in family()]
        k = dev.kernel(key, lambda: src, family=fam)
        meta = _meta(cshape, cst, [o.offset for o in ops], m)
        args = [out.buf.mem] + [a.buf.mem for a in inputs] + [meta]
        for v, dt in scalars:
            args.append(np.array(v, dtype=dt.np)[()] if dt.name != "bool" else np.uint8(bool(v)))
        _set_args(k, *args)
        _launch_1d(dev, k, n)
        return out

    def _copy(self, a):
        return self._ew("copy", "x0", [a], [], a.dtype, a.shape)

    def _prep(self, args, out_dtype=None):
        """Split kernel arguments into arrays and scalars (Python numbers become ``s{j}``)."""
        arrs = [a for a in args if _is_arr(a)]
        dt = arrs[0].dtype
        shape = _bshape([a.shape for a in arrs])
        return arrs, dt, shape

    def _unary(self, name):
        def k(a, **kw):
            dt = a.dtype
            expr, out_dt, sc_dts, helpers = _unary_spec(name, dt, kw)
            scalars = []
            if name == "nan_to_num":
                scalars = [(kw["nan"], dt), (kw["posinf"], dt), (kw["neginf"], dt)]

            def family():  # every unary op of this dtype, compiled in one program
                out = []
                for n2 in _UNARY_NAMES:
                    if n2 == "nan_to_num" or (n2 in _UNARY_FLOAT and not _isf(dt)) or (n2 == "bitwise_not" and _isf(dt)):
                        continue
                    e2, o2, s2, h2 = _unary_spec(n2, dt, {})
                    out.append((n2, e2, o2.name, (dt.name,), s2, (), MAXD, (), None, h2))
                return out
            return self._ew(name, expr, [a], scalars, out_dt, a.shape, helpers=helpers,
                            family=family if name != "nan_to_num" else None)
        return k

    def _binary(self, name):
        def k(a, b, _out=None, **kw):
            arrs = [x for x in (a, b) if _is_arr(x)]
            dt = arrs[0].dtype
            if name == "div" and kw.get("rounding_mode") is not None and not _isf(dt) or \
                    name in ("remainder", "fmod") and not _isf(dt):
                self._zero_div_check(b)
            if name == "pow" and not _isf(dt) and not _is_arr(b) and b < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            pattern = (_is_arr(a), _is_arr(b))
            expr, out_dt, in_dts, sc_dts, helpers = _binary_spec(name, dt, kw, pattern)
            inputs = [x for x in (a, b) if _is_arr(x)]
            scalars = [(kw.get("alpha", 1), dt)] + [(x, dt) for x in (a, b) if not _is_arr(x)]
            shape = _bshape([x.shape for x in inputs])

            def family():  # every binary op of this dtype and operand pattern, compiled in one program
                out = []
                for n2 in _BINARY_NAMES:
                    if _isf(dt) and n2.startswith("bitwise") or not _isf(dt) and n2 == "atan2":
                        continue
                    e2, o2, i2, s2, h2 = _binary_spec(n2, dt, {}, pattern)
                    out.append((n2, e2, o2.name, i2, s2, (), MAXD, (), None, h2))
                return out
            return self._ew(name, expr, inputs, scalars, out_dt, shape, helpers=helpers, family=family, out=_out)
        return k

    # ---- in-place kernels: the optimizer's updates in one pass each, no temporary and no copy back ----
    def _inplace_binary(self, name):
        k = self._binary(name)

        def ik(dst, other, alpha=1, rounding_mode=None):
            if _is_arr(other):
                if other.dtype is not dst.dtype:
                    other = self.cast(other, dst.dtype)
                elif other.buf is dst.buf and (other.offset, other.strides, other.shape) != \
                        (dst.offset, dst.strides, dst.shape):
                    other = self._copy(other)  # a partly overlapping operand: read it all before writing
            if alpha != 1:
                k(dst, other, _out=dst, alpha=alpha)
            else:
                k(dst, other, _out=dst)
        return ik

    def _fused_update(self, name, body, arrays, scalars):
        """One kernel over dense tensors of one shape: ``body`` reads/writes ``a{i}[j]``, scalars ``s{i}``.
        Returns False when an operand is not contiguous (the caller then runs separate elementwise passes)."""
        if any(not a.is_contiguous() for a in arrays):
            return False
        dt, dev, n = arrays[0].dtype, arrays[0].buf.dev, arrays[0].size
        if n == 0:
            return True
        ct = _ct(dt)

        def source():
            params = ", ".join(f"__global {ct}* a{i}, long o{i}" for i in range(len(arrays)))
            scs = "".join(f", {ct} s{i}" for i in range(len(scalars)))
            ptrs = " ".join(f"a{i} += o{i};" for i in range(len(arrays)))
            return (f"typedef {ct} T;\n__kernel void k({params}{scs}, long n) {{\n long j = get_global_id(0);"
                    f" if (j >= n) return; {ptrs}\n {body}\n}}\n")
        k = dev.kernel(("fused_update", name, dt.name, len(arrays), len(scalars)), source)
        args = []
        for a in arrays:
            args += [a.buf.mem, np.int64(a.offset)]
        args += [dt.np.type(v) for v in scalars] + [np.int64(n)]
        _set_args(k, *args)
        _launch_1d(dev, k, n)
        return True

    def _sgd_momentum_step(self, p, g, buf, lr, momentum, weight_decay):
        dt = p.dtype
        if self._fused_update("sgd", "T d = a1[j] + a0[j] * s2; T b = a2[j] * s1 + d; a2[j] = b; a0[j] -= b * s0;",
                              [p, g, buf], [lr, momentum, weight_decay]):
            return
        if weight_decay:
            self._ew("sgd_buf_wd", "x0 * s0 + x1 + x2 * s1", [buf, g, p], [(momentum, dt), (weight_decay, dt)], dt,
                     p.shape, out=buf)
        else:
            self._ew("sgd_buf", "x0 * s0 + x1", [buf, g], [(momentum, dt)], dt, p.shape, out=buf)
        self._ew("sgd_p", "x0 - x1 * s0", [p, buf], [(lr, dt)], dt, p.shape, out=p)

    def _adam_step(self, p, g, m, v, vmax, lr, beta1, beta2, eps, step, weight_decay, decoupled):
        dt = p.dtype
        l2 = weight_decay if weight_decay and not decoupled else 0.0
        decay = 1 - lr * weight_decay if weight_decay and decoupled else 1.0
        sc = [beta1, 1 - beta1, beta2, 1 - beta2, l2, decay, math.sqrt(1 - beta2 ** step), eps,
              lr / (1 - beta1 ** step)]
        body = ("T gr = a1[j] + a0[j] * s4; T mm = a2[j] * s0 + gr * s1; T vv = a3[j] * s2 + gr * gr * s3;"
                " a2[j] = mm; a3[j] = vv;")
        if vmax is not None:
            body += " T vm = a4[j]; vm = (vm > vv || isnan(vm)) ? vm : vv; a4[j] = vm; vv = vm;"
        body += " a0[j] = a0[j] * s5 - mm / (sqrt(vv) / s6 + s7) * s8;"
        if self._fused_update("adam" + ("_amsgrad" if vmax is not None else ""), body,
                              [p, g, m, v] + ([vmax] if vmax is not None else []), sc):
            return
        if weight_decay and not decoupled:
            g = self._ew("adam_wd", "x0 + x1 * s0", [g, p], [(weight_decay, dt)], dt, p.shape)
        self._ew("adam_m", "x0 * s0 + x1 * s1", [m, g], [(beta1, dt), (1 - beta1, dt)], dt, p.shape, out=m)
        self._ew("adam_v", "x0 * s0 + x1 * x1 * s1", [v, g], [(beta2, dt), (1 - beta2, dt)], dt, p.shape, out=v)
        if vmax is not None:
            self._binary("maximum")(vmax, v, _out=vmax)
            v = vmax
        decay = 1 - lr * weight_decay if weight_decay and decoupled else 1.0
        self._ew("adam_p", "x0 * s0 - x1 / (sqrt(x2) / s1 + s2) * s3", [p, m, v],
                 [(decay, dt), (math.sqrt(1 - beta2 ** step), dt), (eps, dt), (lr / (1 - beta1 ** step), dt)], dt,
                 p.shape, out=p)

    def _zero_div_check(self, b):
        if _is_arr(b):
            if self._any(self._ew("eqz", "(OT)(x0 == 0)", [b], [], _dt.bool, b.shape)):
                raise RuntimeError("ZeroDivisionError")
        elif b == 0:
            raise RuntimeError("ZeroDivisionError")

    def _any(self, a):
        r = self._red("any")(a, tuple(range(a.ndim)), False)
        return bool(self.to_numpy(r))

    def _where(self, c, a, b):
        ins = [c] + [x for x in (a, b) if _is_arr(x)]
        dt = next(x.dtype for x in (a, b) if _is_arr(x)) if any(_is_arr(x) for x in (a, b)) else None
        if dt is None:
            raise RuntimeError("where: expected a tensor operand")
        names, scalars, k = [], [], 1
        for x in (a, b):
            if _is_arr(x):
                names.append(f"x{k}")
                k += 1
            else:
                names.append(f"s{len(scalars)}")
                scalars.append((x, dt))
        shape = _bshape([x.shape for x in ins])
        return self._ew("where", f"(x0 ? {names[0]} : {names[1]})", ins, scalars, dt, shape,
                        ct=_ct(dt))

    def _threshold_backward(self, g, x, threshold):
        shape = _bshape([g.shape, x.shape])
        return self._ew("threshold_backward", "(x1 <= s0 ? (OT)0 : x0)", [g, x], [(threshold, x.dtype)], g.dtype,
                        shape)

    def _clamp(self, a, lo, hi):
        dt = a.dtype
        f = _isf(dt)
        ins, scalars, e = [a], [], "x0"
        for v, fn in ((lo, "max"), (hi, "min")):
            if v is None:
                continue
            if _is_arr(v):
                ins.append(v)
                name = f"x{len(ins) - 1}"
            else:
                scalars.append((v, dt))
                name = f"s{len(scalars) - 1}"
            e = _max_expr(e, name, f, fn) if not f else \
                f"(isnan({e}) ? {e} : ({e} {'<' if fn == 'max' else '>'} {name} ? {name} : {e}))"
        shape = _bshape([x.shape for x in ins])
        return self._ew("clamp", e, ins, scalars, dt, shape)

    # ---- reductions ----
    def _reduce(self, a, dims, keepdim, init, combine, final, acc_ct, out_dtype, name, arg=False, val="x"):
        dims = sorted({d % a.ndim for d in dims}) if a.ndim else []
        kept = [d for d in range(a.ndim) if d not in dims]
        dev = a.buf.dev
        oshape_k = [a.shape[d] for d in kept]
        oshape = tuple(1 if d in dims else a.shape[d] for d in range(a.ndim)) if keepdim else tuple(oshape_k)
        nout = math.prod(oshape_k)
        R = math.prod(a.shape[d] for d in dims)
        out = self._empty(oshape, out_dtype, dev)
        idx_out = self._empty(oshape, _dt.int64, dev) if arg else None
        if nout == 0:
            return (out, idx_out) if arg else out
        ks, kst = _collapse(oshape_k, [[a.strides[d] for d in kept]])
        rs, rst = _collapse([a.shape[d] for d in dims], [[a.strides[d] for d in dims]])
        mk, mr = max(MAXD, len(ks)), max(MAXD, len(rs))
        meta = np.zeros(4 + 2 * mk + 2 * mr, np.int64)
        meta[0], meta[1], meta[2], meta[3] = len(ks), len(rs), R, a.offset
        meta[4:4 + len(ks)] = ks
        meta[4 + mk:4 + mk + len(ks)] = kst[0]
        meta[4 + 2 * mk:4 + 2 * mk + len(rs)] = rs
        meta[4 + 2 * mk + mr:4 + 2 * mk + mr + len(rs)] = rst[0]
        # many outputs: one work-item each and no barriers (CPU drivers emulate work-group barriers slowly)
        L = 1 if nout >= 64 and R <= 4096 else _group_size(R, dev)
        key = ("reduce", name, a.dtype.name, out_dtype.name, acc_ct, mk, mr, L, arg, val, init, combine)

        def source():
            kk = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{4 + d}]; r /= P.v[{4 + d}]; base += c * P.v[{4 + mk + d}]; }}\n"
                         for d in range(mk))
            rr = "".join(f"if (P.v[1] > {d}) {{ long c = q % P.v[{4 + 2 * mk + d}]; q /= P.v[{4 + 2 * mk + d}]; "
                         f"off += c * P.v[{4 + 2 * mk + mr + d}]; }}\n" for d in range(mr))
            if arg:
                upd = f"if ({combine}) {{ acc = v; ai = j; }}"
                tree = (f"for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ ACC v = sh[lid + s]; long j = si[lid + s]; "
                        f"if (({combine}) || (v == acc || (isnan_(v) && isnan_(acc))) && j < ai) {{ acc = v; ai = j; }} "
                        f"sh[lid] = acc; si[lid] = ai; }} barrier(CLK_LOCAL_MEM_FENCE); acc = sh[lid]; ai = si[lid]; }}")
                store = "out[o] = (OT)acc; oi[o] = ai;"
                extra = ", __global long* oi"
                shi = f"__local long si[{L}]; long ai = 0x7fffffffffffffffL;"
                shset = "si[lid] = ai;"
            else:
                upd = f"acc = {combine};"
                tree = (f"for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ ACC v = sh[lid + s]; acc = {combine}; "
                        f"sh[lid] = acc; }} barrier(CLK_LOCAL_MEM_FENCE); acc = sh[lid]; }}")
                store = f"out[o] = (OT)({final});"
                extra = shi = shset = ""
            isnan_def = "#define isnan_(x) isnan(x)\n" if _isf(a.dtype) else "#define isnan_(x) 0\n"
            return (_struct(len(meta)) + f"typedef {_ct(a.dtype)} IT;\ntypedef {acc_ct} ACC;\ntypedef {_ct(out_dtype)} OT;\n"
                    + isnan_def +
                    f"__kernel void k(__global OT* out, __global const IT* a, Params P{extra}) {{\n"
                    f" long o = get_group_id(0); int lid = get_local_id(0);\n"
                    f" long r = o, base = P.v[3];\n{kk}"
                    f" ACC acc = {init}; {shi}\n"
                    f" for (long j = lid; j < P.v[2]; j += {L}) {{ long q = j, off = 0;\n"
                    f"  if (P.v[1] == 1) off = j * P.v[{4 + 2 * mk + mr}]; else {{\n{rr} }}\n"
                    f"  IT x = a[base + off]; ACC v = (ACC)({val}); {upd} }}\n"
                    f" __local ACC sh[{L}]; sh[lid] = acc; {shset} barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f" {tree}\n if (lid == 0) {{ {store} }}\n}}\n")
        k = dev.kernel(key, source)
        args = [out.buf.mem, a.buf.mem, meta] + ([idx_out.buf.mem] if arg else [])
        _set_args(k, *args)
        cl.enqueue_nd_range_kernel(dev.queue, k, (nout * L,), (L,))
        return (out, idx_out) if arg else out

    def _red(self, name):
        def k(a, dims, keepdim, dtype=None):
            dt = a.dtype
            f = _isf(dt)
            if name in ("sum", "prod"):
                out_dt = dtype or (dt if f else _dt.int64)
                acc = _ct(out_dt)
                init = "(ACC)0" if name == "sum" else "(ACC)1"
                comb = "acc + v" if name == "sum" else "acc * v"
                return self._reduce(a, dims, keepdim, init, comb, "acc", acc, out_dt, name)
            if name in ("all", "any"):
                init = "(ACC)1" if name == "all" else "(ACC)0"
                comb = "(ACC)(acc && v)" if name == "all" else "(ACC)(acc || v)"
                val = "(x != 0 || isnan(x))" if f else "(x != 0)"
                return self._reduce(a, dims, keepdim, init, comb, "acc", "uchar", _dt.bool, name, val=val)
            fn = "max" if name == "amax" else "min"
            init = ("-INFINITY" if fn == "max" else "INFINITY") if f else \
                ({"max": _lim(dt, False), "min": _lim(dt, True)}[fn])
            return self._reduce(a, dims, keepdim, init, _max_expr("acc", "v", f, fn), "acc", _ct(dt), dt, name)
        return k

    def _arg_red(self, fn, values):
        def k(a, dim, keepdim):
            dt = a.dtype
            f = _isf(dt)
            op = ">" if fn == "max" else "<"
            comb = f"((isnan(v) && !isnan(acc)) || (!isnan(acc) && v {op} acc))" if f else f"(v {op} acc)"
            init = ("NAN" if False else ("-INFINITY" if fn == "max" else "INFINITY")) if f else \
                ({"max": _lim(dt, False), "min": _lim(dt, True)}[fn])
            # the first element always wins over the initial value (ties at the initial value included)
            comb = f"(ai == 0x7fffffffffffffffL || {comb})"
            if a.ndim == 0:
                a = a.view((1,), (0,))
                vals, idx = self._reduce(a, (0,), False, init, comb, "acc", _ct(dt), dt, "arg" + fn, arg=True)
                vals, idx = vals.view((), ()), idx.view((), ())
            else:
                vals, idx = self._reduce(a, (dim,), keepdim, init, comb, "acc", _ct(dt), dt, "arg" + fn, arg=True)
            return (vals, idx) if values else idx
        return k

    def _scan(self, name):
        def k(a, dim, dtype=None):
            out_dt = dtype or (a.dtype if _isf(a.dtype) else _dt.int64)
            if a.ndim == 0:
                return self.cast(a, out_dt)
            n = a.shape[dim]
            perm = [d for d in range(a.ndim) if d != dim] + [dim]
            src = a.permute(perm)
            out = self._empty(src.shape, out_dt, a.buf.dev)
            rows = math.prod(src.shape[:-1])
            if rows and n:
                op = "+" if name == "sum" else "*"
                init = "0" if name == "sum" else "1"
                # one work-item per row; the row's strided start comes from the elementwise index code
                row_view = src.view(src.shape[:-1], src.strides[:-1])
                out_rows = out.view(src.shape[:-1], [s for s in out.strides[:-1]])
                self._ew("scan_" + name, f"scan_(A0, p1, s0, s1, (__global OT*)out, p0, {init})",
                         [row_view], [(n, _dt.int64), (src.strides[-1], _dt.int64)], out_dt, out_rows.shape,
                         out=out_rows, ptr=(0,), ct=_ct(out_dt),
                         helpers=(f"OT scan_(__global const {_ct(a.dtype)}* a, long p, long n, long s, __global OT* o, "
                                  f"long q, OT acc) {{ for (long j = 0; j < n; ++j) {{ acc = acc {op} (OT)a[p + j * s]; "
                                  f"o[q + j] = acc; }} return o[q]; }}\n"))
            inv = [0] * a.ndim
            for i, p in enumerate(perm):
                inv[p] = i
            return out.permute(inv)
        return k

    def _sort_impl(self, a, dim, descending):
        """Rank sort: each element's rank in its row (ties in index order, so stable; NaN sorts as the largest
        value, as in PyTorch) is its position. O(n^2) per row but one parallel pass."""
        if a.ndim == 0:
            a = a.view((1,), (0,))
        n = a.shape[dim]
        perm = [d for d in range(a.ndim) if d != dim] + [dim]
        src = self._copy(a.permute(perm))
        dev = a.buf.dev
        vals = self._empty(src.shape, a.dtype, dev)
        idx = self._empty(src.shape, _dt.int64, dev)
        if src.size:
            f = _isf(a.dtype)
            if f:
                lt = "((!isnan(x) && isnan(y)) || x < y)" if not descending else "((isnan(x) && !isnan(y)) || x > y)"
                eq = "(x == y || (isnan(x) && isnan(y)))"
            else:
                lt = "(x < y)" if not descending else "(x > y)"
                eq = "(x == y)"
            key = ("sort", a.dtype.name, descending)

            def source():
                return (f"typedef {_ct(a.dtype)} T;\n"
                        f"__kernel void k(__global T* vals, __global long* idx, __global const T* a, long n, long total) {{\n"
                        f" long g = get_global_id(0); if (g >= total) return; long row = g / n, i = g % n; __global const T* p = a + row * n;\n"
                        f" T y = p[i]; long r = 0;\n"
                        f" for (long j = 0; j < n; ++j) {{ T x = p[j]; if ({lt} || ({eq} && j < i)) ++r; }}\n"
                        f" vals[row * n + r] = y; idx[row * n + r] = i;\n}}\n")
            k = dev.kernel(key, source)
            _set_args(k, vals.buf.mem, idx.buf.mem, src.buf.mem, np.int64(n), np.int64(src.size))
            _launch_1d(dev, k, src.size)
        inv = [0] * a.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        return vals.permute(inv), idx.permute(inv)

    def _sort(self, a, dim, descending, stable=False):
        v, i = self._sort_impl(a, dim, descending)
        if a.ndim == 0:
            return v.view((), ()), i.view((), ())
        return v, i

    def _topk(self, a, k, dim, largest, sorted):
        v, i = self._sort_impl(a, dim, largest)
        if a.ndim == 0:
            return self._copy(v.view((), ())), self._copy(i.view((), ()))
        shape = list(v.shape)
        shape[dim] = k
        return self._copy(v.view(shape, v.strides)), self._copy(i.view(shape, i.strides))

    # ---- linear algebra ----
    def _matmul(self, a, b):
        dt = a.dtype
        batch = _bshape([a.shape[:-2], b.shape[:-2]])
        M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
        dev = a.buf.dev
        out = self._empty(tuple(batch) + (M, N), dt, dev)
        if out.size == 0:
            return out
        if K == 0:
            return self._ew("fill", "(OT)0", [], [], dt, out.shape, out=out)
        nt = _isf(dt) and a.strides[-1] == 1 and b.strides[-2] == 1 and b.strides[-1] >= K and K >= 16 \
            and (N % _VN or b.strides[-1] != 1)
        if not nt and _isf(dt) and N % _VN and M * K * N >= 4096:
            # pad N to the vector width: two small copies, then the register-blocked kernel (the local-memory
            # fallback below is slow on CPU drivers, which emulate local memory)
            Np = -(-N // _VN) * _VN
            bp = self._empty(b.shape[:-1] + (Np,), dt, dev)
            self._ew("fill", "(OT)0", [], [], dt, bp.shape, out=bp)
            self.copy_(bp.view(b.shape, bp.strides), b)
            outp = self._matmul(a, bp)
            return self._copy(outp.view(out.shape, outp.strides))
        fast = _isf(dt) and N % _VN == 0 and not nt
        if fast and (b.strides[-1] != 1 or b.strides[-2] != N):
            b = self._copy(b)  # O(K*N) to give the O(M*K*N) kernel rows of B it can load as vectors
        ab = self._expand(a.view(a.shape[:-2], a.strides[:-2]), batch)
        bb = self._expand(b.view(b.shape[:-2], b.strides[:-2]), batch)
        nb = math.prod(batch)
        bshape, bst = _collapse(list(batch), [list(contiguous_strides(tuple(batch))), list(ab.strides), list(bb.strides)]) \
            if batch else ([], [[], [], []])
        mb = max(3, len(bshape))
        meta = np.zeros(8 + 4 * mb, np.int64)
        meta[0:8] = [len(bshape), M, N, K, a.strides[-2], a.strides[-1], b.strides[-2], b.strides[-1]]
        meta[8:8 + len(bshape)] = bshape
        for j, st in enumerate(bst):
            meta[8 + (j + 1) * mb: 8 + (j + 1) * mb + len(st)] = st
        bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                       f"pa += c * P.v[{8 + 2 * mb + d}]; pb += c * P.v[{8 + 3 * mb + d}]; "
                       f"po += c * P.v[{8 + mb + d}]; }}\n" for d in range(mb))
        if fast:
            return self._matmul_vec(out, a, b, ab, bb, meta, mb, bidx, nb, M, N)
        if nt:
            return self._matmul_nt(out, a, b, ab, bb, meta, mb, bidx, nb, M, N)
        TS, WPT = 32, 4  # 32x32 output tile per work-group, 4 outputs per work-item (along rows)
        key = ("matmul", dt.name, mb)

        def source():
            bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                           f"pa += c * P.v[{8 + 2 * mb + d}]; pb += c * P.v[{8 + 3 * mb + d}]; "
                           f"po += c * P.v[{8 + mb + d}]; }}\n" for d in range(mb))
            return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\n"
                    f"__kernel __attribute__((reqd_work_group_size({TS}, {TS // WPT}, 1)))\n"
                    f"void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob) {{\n"
                    f" const int tc = get_local_id(0), tr = get_local_id(1);\n"
                    f" const long col = get_group_id(0) * {TS} + tc, row0 = get_group_id(1) * {TS};\n"
                    f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                    f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sak = P.v[5], sbk = P.v[6], sbn = P.v[7];\n"
                    f" __local T As[{TS}][{TS + 1}], Bs[{TS}][{TS + 1}];\n"
                    f" T acc[{WPT}];\n for (int w = 0; w < {WPT}; ++w) acc[w] = 0;\n"
                    f" for (long t = 0; t < K; t += {TS}) {{\n"
                    f"  for (int w = 0; w < {WPT}; ++w) {{ int lr = tr + w * {TS // WPT};\n"
                    f"   long ar = row0 + lr, ak = t + tc, bk = t + lr;\n"
                    f"   As[lr][tc] = (ar < M && ak < K) ? A[pa + ar * sam + ak * sak] : (T)0;\n"
                    f"   Bs[lr][tc] = (bk < K && col < N) ? B[pb + bk * sbk + col * sbn] : (T)0; }}\n"
                    f"  barrier(CLK_LOCAL_MEM_FENCE);\n"
                    f"  for (int kk = 0; kk < {TS}; ++kk) {{ T bv = Bs[kk][tc];\n"
                    f"   for (int w = 0; w < {WPT}; ++w) acc[w] += As[tr + w * {TS // WPT}][kk] * bv; }}\n"
                    f"  barrier(CLK_LOCAL_MEM_FENCE);\n }}\n"
                    f" for (int w = 0; w < {WPT}; ++w) {{ long row = row0 + tr + w * {TS // WPT};\n"
                    f"  if (row < M && col < N) out[po * M * N + row * N + col] = acc[w]; }}\n}}\n")
        k = dev.kernel(key, source)
        _set_args(k, out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset))
        gx = (N + TS - 1) // TS * TS
        gy = (M + TS - 1) // TS * (TS // WPT)
        cl.enqueue_nd_range_kernel(dev.queue, k, (gx, gy, nb), (TS, TS // WPT, 1))
        return out

    def _matmul_vec(self, out, a, b, ab, bb, meta, mb, bidx, nb, M, N):
        """GEMM for N % 16 == 0 with row-major B: each work-item computes a 4 x 16 block of C with 16-wide vector
        accumulators over B's rows (register blocking; no local memory, which CPU drivers emulate slowly)."""
        dt = a.dtype
        dev = a.buf.dev
        RM, VN, LX, LY = 4, _VN, 4, 8
        key = ("matmul_vec", dt.name, mb)

        def source():
            accs = " ".join(f"V acc{r} = 0;" for r in range(RM))
            # rows past M are clamped for loads and skipped for stores, so M needs no padding
            rows = " ".join(f"long ra{r} = pa + min(row0 + {r}, M - 1) * sam;" for r in range(RM))
            upd = " ".join(f"acc{r} += A[ra{r} + k * sak] * bv;" for r in range(RM))
            st = " ".join(f"if (row0 + {r} < M) vstore{VN}(acc{r}, 0, out + po * M * N + (row0 + {r}) * N + col0);"
                          for r in range(RM))
            return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\ntypedef {_ct(dt)}{VN} V;\n"
                    f"__kernel void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob) {{\n"
                    f" const long col0 = get_global_id(0) * {VN}, row0 = get_global_id(1) * {RM};\n"
                    f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                    f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sak = P.v[5];\n"
                    f" if (col0 >= N || row0 >= M) return;\n"
                    f" {accs} {rows}\n"
                    f" for (long k = 0; k < K; ++k) {{ V bv = vload{VN}(0, B + pb + k * N + col0); {upd} }}\n"
                    f" {st}\n}}\n")
        k = dev.kernel(key, source)
        _set_args(k, out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset))
        gx = -(-(N // VN) // LX) * LX
        gy = -(-(-(-M // RM)) // LY) * LY
        cl.enqueue_nd_range_kernel(dev.queue, k, (gx, gy, nb), (LX, LY, 1))
        return out

    def _linear(self, x, w, b):
        """``x @ w.T + b`` as one NT GEMM with the bias added in the store (rows of x and w contiguous along K)."""
        if x.ndim == 1:  # (K,) -> (N,)
            out = self._linear(x.view((1,) + x.shape, (0,) + x.strides), w, b)
            return out.view(out.shape[1:], out.strides[1:])
        if w.ndim == 1:  # a weight vector (K,): (..., K) -> (...)
            out = self._linear(x, w.view((1,) + w.shape, (0,) + w.strides), b)
            return out.view(out.shape[:-1], out.strides[:-1])
        K = x.shape[-1]
        if not _isf(x.dtype) or x.strides[-1] != 1 or w.strides[-1] != 1 or K < 16 or \
                (b is not None and b.dtype is not x.dtype):
            out = self._matmul(x, w.view((w.shape[1], w.shape[0]), (w.strides[1], w.strides[0])))
            return self._binary("add")(out, b, _out=out) if b is not None else out
        if x.ndim == 2:
            x2 = x
        else:
            xc = x if x.is_contiguous() else self._copy(x)
            x2 = xc.view((math.prod(x.shape[:-1]), K), (K, 1))
        M, N = x2.shape[0], w.shape[0]
        out = self._empty((M, N), x.dtype, x.buf.dev)
        if out.size:
            bias = None
            if b is not None:
                bias = b if b.is_contiguous() else self._copy(b)
            meta = np.zeros(8 + 12, np.int64)
            meta[0:8] = [0, M, N, K, x2.strides[0], 1, 1, w.strides[0]]
            bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                           f"pa += c * P.v[{8 + 6 + d}]; pb += c * P.v[{8 + 9 + d}]; "
                           f"po += c * P.v[{8 + 3 + d}]; }}\n" for d in range(3))
            self._matmul_nt(out, x2, w, x2, w, meta, 3, bidx, 1, M, N, bias=bias)
        return out.view(x.shape[:-1] + (N,), contiguous_strides(x.shape[:-1] + (N,)))

    def _matmul_nt(self, out, a, b, ab, bb, meta, mb, bidx, nb, M, N, bias=None):
        """GEMM for A with rows contiguous along K and B stored transposed (B^T row-major, as in ``x @ W.T``):
        each work-item computes a 4 x 4 block of C as dot products of 8-wide vectors along K, so the
        transposed operand needs no copy."""
        dt = a.dtype
        dev = a.buf.dev
        RM, RN, VK, LX, LY = 4, 4, 8, 8, 4
        key = ("matmul_nt", dt.name, mb, bias is not None)

        def source():
            ii, jj = range(RM), range(RN)
            rows = " ".join(f"long ra{i} = pa + min(m0 + {i}, M - 1) * sam;" for i in ii)
            cols = " ".join(f"long rb{j} = pb + min(n0 + {j}, N - 1) * sbn;" for j in jj)
            accs = " ".join(f"V c{i}{j} = 0;" for i in ii for j in jj)
            vl = " ".join(f"V a{i} = vload{VK}(0, A + ra{i} + k);" for i in ii) + " " + \
                " ".join(f"V b{j} = vload{VK}(0, B + rb{j} + k);" for j in jj)
            upd = " ".join(f"c{i}{j} += a{i} * b{j};" for i in ii for j in jj)
            hs = " ".join(f"T s{i}{j} = " + " + ".join(f"c{i}{j}.s{q}" for q in range(VK)) + ";" for i in ii for j in jj)
            tail = " ".join(f"T x{i} = A[ra{i} + k];" for i in ii) + " " + \
                " ".join(f"T y{j} = B[rb{j} + k];" for j in jj) + " " + \
                " ".join(f"s{i}{j} += x{i} * y{j};" for i in ii for j in jj)
            bv = " + bias[bo + min(n0 + {j}, N - 1)]" if bias is not None else ""
            st = " ".join(f"if (m0 + {i} < M && n0 + {j} < N) out[po * M * N + (m0 + {i}) * N + n0 + {j}] = s{i}{j}"
                          + bv.format(j=j) + ";" for i in ii for j in jj)
            return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\ntypedef {_ct(dt)}{VK} V;\n"
                    f"__kernel void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob"
                    + (", __global const T* bias, long bo" if bias is not None else "") + ") {\n"
                    f" const long n0 = get_global_id(0) * {RN}, m0 = get_global_id(1) * {RM};\n"
                    f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                    f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sbn = P.v[7];\n"
                    f" if (n0 >= N || m0 >= M) return;\n {rows} {cols}\n {accs}\n long k = 0;\n"
                    f" for (; k + {VK} <= K; k += {VK}) {{ {vl} {upd} }}\n {hs}\n"
                    f" for (; k < K; ++k) {{ {tail} }}\n {st}\n}}\n")
        k = dev.kernel(key, source)
        _set_args(k, out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset),
                   *((bias.buf.mem, np.int64(bias.offset)) if bias is not None else ()))
        gx = -(-(-(-N // RN)) // LX) * LX
        gy = -(-(-(-M // RM)) // LY) * LY
        cl.enqueue_nd_range_kernel(dev.queue, k, (gx, gy, nb), (LX, LY, 1))
        return out

    def _einsum(self, *ops, equation):
        """einsum as one broadcast product over all letters, then a sum over the contracted ones."""
        from .._geometry import parse_einsum  # the op's own parser: '...' and implicit output
        terms, rhs = parse_einsum(equation, ops)
        letters = list(dict.fromkeys("".join(terms)))
        sizes = {}
        views = []
        for t, a in zip(terms, ops):
            st = {}
            for c, n, s in zip(t, a.shape, a.strides):
                sizes[c] = max(sizes.get(c, 1), n)
                st[c] = st.get(c, 0) + s  # a repeated letter is a diagonal: strides add up
            views.append((a, t, st))
        full = [c for c in rhs] + [c for c in letters if c not in rhs]
        shape = tuple(sizes[c] for c in full)
        expanded = []
        for a, t, st in views:
            dims = {c: n for c, n in zip(t, a.shape)}
            expanded.append(a.view(shape, [st.get(c, 0) if dims.get(c, 1) != 1 else 0 for c in full]))
        prod = expanded[0] if len(expanded) == 1 else None
        if prod is None:
            expr = " * ".join(f"x{i}" for i in range(len(expanded)))
            prod = self._ew("einsum_prod", expr, expanded, [], ops[0].dtype, shape)
        nred = len(full) - len(rhs)
        if nred == 0:
            return self._copy(prod)
        return self._red("sum")(prod, tuple(range(len(rhs), len(full))), False, ops[0].dtype)

    # ---- data movement ----
    def _cat(self, *ts, dim):
        ref = next((t for t in ts if t.ndim != 1 or t.shape[0] != 0), ts[0])
        ts = [t for t in ts if t.ndim == ref.ndim]
        shape = list(ref.shape)
        shape[dim] = sum(t.shape[dim] for t in ts)
        dt = ts[0].dtype
        out = self._empty(tuple(shape), dt, ts[0].buf.dev)
        pos = 0
        for t in ts:
            n = t.shape[dim]
            if n:
                dst = out.view(t.shape, out.strides, out.offset + pos * out.strides[dim])
                self.copy_(dst, t)
            pos += n
        return out

    def _flip(self, a, dims):
        off = a.offset
        st = list(a.strides)
        for d in dims:
            d %= a.ndim
            if a.shape[d]:
                off += (a.shape[d] - 1) * st[d]
            st[d] = -st[d]
        return self._copy(a.view(a.shape, st, off))

    def _tri(self, a, diagonal, which):
        cond = "(c0 - c1 <= s0)" if which == "tril" else "(c0 - c1 >= s0)"
        return self._ew(which, f"({cond} ? x0 : (CT)0)", [a], [(diagonal, _dt.int64)], a.dtype, a.shape,
                        collapse=False, coords=(0, 1))

    def _gather(self, a, index, dim):
        st = list(a.strides)
        sdim = st[dim] if a.ndim else 0
        if a.ndim:
            st[dim] = 0
        av = a.view(index.shape, st) if a.ndim else a.view(index.shape, [0] * index.ndim)
        return self._ew("gather", "A0[p1 + x1 * s0]", [av, index], [(sdim, _dt.int64)], a.dtype, index.shape,
                        ptr=(0,), ct=_ct(a.dtype))

    def _index_select(self, a, index, dim):
        if a.ndim == 0:
            return self._copy(a)
        shape = list(a.shape)
        shape[dim] = index.shape[0] if index.ndim else 1
        st = list(a.strides)
        sdim = st[dim]
        st[dim] = 0
        iv = index.view(shape, [index.strides[0] if (d == dim and index.ndim) else 0 for d in range(a.ndim)])
        return self._ew("index_select", "A0[p1 + x1 * s0]", [a.view(shape, st), iv], [(sdim, _dt.int64)],
                        a.dtype, shape, ptr=(0,), ct=_ct(a.dtype))

    def _take(self, a, sel):
        """out[i] = a's storage at element offsets ``sel`` (host int64 array); shape of ``sel``."""
        dev = a.buf.dev
        s = self._upload(sel.astype(np.int64).reshape(-1), dev)
        base = a.view(sel.shape, [0] * sel.ndim, 0)
        return self._ew("take", "A0[x1]", [base, s.view(sel.shape, contiguous_strides(sel.shape))], [], a.dtype,
                        sel.shape, ptr=(0,), ct=_ct(a.dtype))

    def _upload(self, arr, dev):
        arr = np.ascontiguousarray(arr)
        dtype = _dt.from_numpy_dtype(arr.dtype)
        buf = self._alloc(arr.size, dtype, dev)
        if arr.size:
            cl.enqueue_copy(dev.queue, buf.mem, arr, is_blocking=True)
        return CLArray(buf, dtype, arr.shape, contiguous_strides(arr.shape), 0)

    def _offsets(self, a):
        """Host array of ``a``'s element offsets into its buffer, shape of ``a``."""
        offs = np.full(a.shape, a.offset, np.int64)
        for d, (n, s) in enumerate(zip(a.shape, a.strides)):
            sh = [1] * a.ndim
            sh[d] = n
            offs = offs + (np.arange(n, dtype=np.int64) * s).reshape(sh)
        return offs

    def _index(self, a, *indices, spec):
        host = [self.to_numpy(i) for i in indices]
        idx = tuple(host[s[1]] if isinstance(s, tuple) else s for s in spec)
        sel = self._offsets(a)[idx]
        return self._take(a, np.ascontiguousarray(sel))

    def _segmented(self, out, targets, values, mode):
        """out.flat[targets[j]] (op)= values.flat[j] for all j; duplicates combine in j order."""
        targets = targets.reshape(-1)
        if targets.size == 0:
            return out
        dev = out.buf.dev
        order = np.argsort(targets, kind="stable")
        t_sorted = targets[order]
        starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
        seg = np.r_[starts, t_sorted.size].astype(np.int64)
        uniq = t_sorted[starts]
        vals = values if values.is_contiguous() else self._copy(values)
        o_d, s_d, u_d = (self._upload(x.astype(np.int64), dev) for x in (order, seg, uniq))
        ct = _ct(out.dtype)
        combine = {"set": "v", "add": "acc + v", "multiply": "acc * v"}[mode]
        key = ("segmented", out.dtype.name, mode)

        def source():
            return (f"typedef {ct} T;\n__kernel void k(__global T* out, __global const T* vals, __global const long* order,"
                    f" __global const long* seg, __global const long* tgt, long voff, long n) {{\n"
                    f" long u = get_global_id(0); if (u >= n) return;\n T acc = out[tgt[u]];\n"
                    f" for (long j = seg[u]; j < seg[u + 1]; ++j) {{ T v = vals[voff + order[j]]; acc = {combine}; }}\n"
                    f" out[tgt[u]] = acc;\n}}\n")
        k = dev.kernel(key, source)
        _set_args(k, out.buf.mem, vals.buf.mem, o_d.buf.mem, s_d.buf.mem, u_d.buf.mem, np.int64(vals.offset),
                   np.int64(uniq.size))
        _launch_1d(dev, k, uniq.size)
        return out

    def _index_put(self, a, values, *indices, spec, accumulate=False):
        out = self._copy(a)
        host = [self.to_numpy(i) for i in indices]
        idx = tuple(host[s[1]] if isinstance(s, tuple) else s for s in spec)
        sel = np.arange(out.size, dtype=np.int64).reshape(out.shape)[idx]
        if values.ndim > sel.ndim or any(v != 1 and v != s for v, s in zip(values.shape[::-1], sel.shape[::-1])):
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                               f"indexing result of shape {list(sel.shape)}")
        vals = self._copy(self._expand(values, sel.shape))
        return self._segmented(out, sel, vals, "add" if accumulate else "set")

    def _scatter(self, a, index, src, dim, reduce=None):
        out = self._copy(a)
        ih = self.to_numpy(index)
        if a.ndim == 0:
            tg = np.zeros(ih.shape, np.int64)
        else:
            grids = np.indices(ih.shape, dtype=np.int64)
            grids[dim] = ih % a.shape[dim]
            tg = sum(g * s for g, s in zip(grids, out.strides))
        if _is_arr(src):
            vals = self._copy(src.view(ih.shape, src.strides) if src.ndim else src.view(ih.shape, [0] * ih.ndim))
        else:
            vals = self._ew("fill", "(OT)s0", [], [(src, a.dtype)], a.dtype, ih.shape, out=self._empty(ih.shape, a.dtype, a.buf.dev))
        return self._segmented(out, np.asarray(tg, np.int64), vals, reduce or "set")

    def _index_add(self, a, index, src, dim, alpha=1):
        out = self._copy(a)
        ih = self.to_numpy(index).reshape(-1)
        if a.ndim == 0:
            tg = np.zeros(src.shape, np.int64)
        else:
            grids = np.indices(src.shape, dtype=np.int64)
            grids[dim] = ih[grids[dim]] % a.shape[dim]
            tg = sum(g * s for g, s in zip(grids, out.strides))
        vals = self._ew("scale", "x0 * s0", [src], [(alpha, a.dtype)], a.dtype, src.shape) if alpha != 1 else src
        return self._segmented(out, np.asarray(tg, np.int64), vals, "add")

    # ---- fused nn kernels ----
    def _softmax(self, a, dim, log):
        """Row-wise (log-)softmax in one kernel: one work-group per row (max, sum of exp, write)."""
        dim %= max(a.ndim, 1)
        if a.ndim == 0:
            return self._ew("softmax0", "(CT)0" if log else "(CT)1", [a], [], a.dtype, ())
        dev = a.buf.dev
        perm = [d for d in range(a.ndim) if d != dim] + [dim]
        src = a.permute(perm)
        out = self._empty(src.shape, a.dtype, dev)
        n = src.shape[-1]
        rows = math.prod(src.shape[:-1])
        if rows and n:
            rs, rst = _collapse(list(src.shape[:-1]), [list(src.strides[:-1])])
            m = max(MAXD, len(rs))
            meta = np.zeros(4 + 2 * m, np.int64)
            meta[0], meta[1], meta[2], meta[3] = len(rs), n, src.strides[-1], src.offset
            meta[4:4 + len(rs)] = rs
            meta[4 + m:4 + m + len(rs)] = rst[0]
            L = _group_size(n, dev)
            key = ("softmax", a.dtype.name, log, m, L)

            def source():
                kk = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{4 + d}]; r /= P.v[{4 + d}]; base += c * P.v[{4 + m + d}]; }}\n"
                             for d in range(m))
                fin = "(x - mx) - log(s)" if log else "exp(x - mx) / s"
                return (_struct(len(meta)) + f"typedef {_ct(a.dtype)} T;\n"
                        f"__kernel void k(__global T* out, __global const T* a, Params P) {{\n"
                        f" long o = get_group_id(0); int lid = get_local_id(0); long r = o, base = P.v[3];\n{kk}"
                        f" const long n = P.v[1], s1 = P.v[2];\n __local T sh[{L}];\n"
                        f" T mx = -INFINITY; for (long j = lid; j < n; j += {L}) {{ T x = a[base + j * s1]; mx = (isnan(x) || x > mx) ? x : mx; }}\n"
                        f" sh[lid] = mx; barrier(CLK_LOCAL_MEM_FENCE);\n"
                        f" for (int s = {L} / 2; s > 0; s >>= 1) {{ if (lid < s) {{ T y = sh[lid + s]; if (isnan(y) || y > sh[lid]) sh[lid] = y; }} barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                        f" mx = sh[0]; if (mx == -INFINITY) mx = 0; barrier(CLK_LOCAL_MEM_FENCE);\n"
                        f" T s = 0; for (long j = lid; j < n; j += {L}) s += exp(a[base + j * s1] - mx);\n"
                        f" sh[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);\n"
                        f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                        f" s = sh[0];\n"
                        f" for (long j = lid; j < n; j += {L}) {{ T x = a[base + j * s1]; out[o * n + j] = {fin}; }}\n}}\n")
            k = dev.kernel(key, source)
            _set_args(k, out.buf.mem, a.buf.mem, meta)
            cl.enqueue_nd_range_kernel(dev.queue, k, (rows * L,), (L,))
        inv = [0] * a.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        return out.permute(inv)

    def _softmax_backward(self, g, out, dim, log):
        """The (log-)softmax gradient in one kernel, one work-group per row: s = sum(g) (log) or sum(g * out),
        then g - exp(out) * s (log) or out * (g - s)."""
        dim %= max(out.ndim, 1)
        if out.ndim == 0:
            return self._ew("softmax_bw0", "(OT)0", [out], [], out.dtype, ())
        dev = out.buf.dev
        perm = [d for d in range(out.ndim) if d != dim] + [dim]
        gs, os_ = (x if x.is_contiguous() else self._copy(x) for x in (self._expand(g, out.shape).permute(perm),
                                                                         out.permute(perm)))
        res = self._empty(os_.shape, out.dtype, dev)
        n = os_.shape[-1]
        rows = math.prod(os_.shape[:-1])
        if rows and n:
            L = _group_size(n, dev)
            key = ("softmax_backward", out.dtype.name, log, L)

            def source():
                term = "x" if log else "x * y"
                fin = "x - exp(y) * s" if log else "y * (x - s)"
                return (f"typedef {_ct(out.dtype)} T;\n"
                        f"__kernel void k(__global T* res, __global const T* g, long go, __global const T* o, long oo,"
                        f" long n) {{\n long base = get_group_id(0) * n; int lid = get_local_id(0);\n"
                        f" __local T sh[{L}];\n"
                        f" T s = 0; for (long j = lid; j < n; j += {L}) {{ T x = g[go + base + j], y = o[oo + base + j];"
                        f" s += {term}; }}\n"
                        f" sh[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);\n"
                        f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n"
                        f" s = sh[0];\n"
                        f" for (long j = lid; j < n; j += {L}) {{ T x = g[go + base + j], y = o[oo + base + j];"
                        f" res[base + j] = {fin}; }}\n}}\n")
            k = dev.kernel(key, source)
            _set_args(k, res.buf.mem, gs.buf.mem, np.int64(gs.offset), os_.buf.mem, np.int64(os_.offset), np.int64(n))
            cl.enqueue_nd_range_kernel(dev.queue, k, (rows * L,), (L,))
        inv = [0] * out.ndim
        for i, p in enumerate(perm):
            inv[p] = i
        return res.permute(inv)

    def _layer_norm(self, a, w, b, normalized_ndim, eps):
        """(out, mean, rstd) in one kernel: one work-group per row of the normalized dims (mean, variance, write)."""
        dev = a.buf.dev
        if not a.is_contiguous():
            a = self._copy(a)
        n = math.prod(a.shape[a.ndim - normalized_ndim:])
        rows = math.prod(a.shape[:a.ndim - normalized_ndim])
        stat_shape = a.shape[:a.ndim - normalized_ndim] + (1,) * normalized_ndim
        out = self._empty(a.shape, a.dtype, dev)
        mean, rstd = self._empty(stat_shape, a.dtype, dev), self._empty(stat_shape, a.dtype, dev)
        if rows and n:
            w = w if w is None or w.is_contiguous() else self._copy(w)
            b = b if b is None or b.is_contiguous() else self._copy(b)
            L = _group_size(n, dev)

            def source():
                red = (f" sh[lid] = acc; barrier(CLK_LOCAL_MEM_FENCE);\n"
                       f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; "
                       f"barrier(CLK_LOCAL_MEM_FENCE); }}\n")
                return (f"typedef {_ct(a.dtype)} T;\n"
                        f"__kernel void k(__global T* out, __global T* mo, __global T* ro, __global const T* a, long ao,"
                        f" __global const T* w, long wo, __global const T* b, long bo, long n, T eps, int flags) {{\n"
                        f" long o = get_group_id(0); int lid = get_local_id(0); __local T sh[{L}];\n"
                        f" __global const T* x = a + ao + o * n;\n"
                        f" T acc = 0; for (long j = lid; j < n; j += {L}) acc += x[j];\n{red}"
                        f" T mean = sh[0] / n; barrier(CLK_LOCAL_MEM_FENCE);\n"
                        f" acc = 0; for (long j = lid; j < n; j += {L}) {{ T d = x[j] - mean; acc += d * d; }}\n{red}"
                        f" T rstd = rsqrt(sh[0] / n + eps);\n"
                        f" if (lid == 0) {{ mo[o] = mean; ro[o] = rstd; }}\n"
                        f" for (long j = lid; j < n; j += {L}) {{ T y = (x[j] - mean) * rstd;"
                        f" if (flags & 1) y *= w[wo + j]; if (flags & 2) y += b[bo + j]; out[o * n + j] = y; }}\n}}\n")
            k = dev.kernel(("layer_norm", a.dtype.name, L), source)
            _set_args(k, out.buf.mem, mean.buf.mem, rstd.buf.mem, a.buf.mem, np.int64(a.offset),
                       (w if w is not None else a).buf.mem, np.int64(w.offset if w is not None else 0),
                       (b if b is not None else a).buf.mem, np.int64(b.offset if b is not None else 0),
                       np.int64(n), a.dtype.np.type(eps), np.int32((w is not None) | ((b is not None) << 1)))
            cl.enqueue_nd_range_kernel(dev.queue, k, (rows * L,), (L,))
        return out, mean, rstd

    def _nll_source(self, dt, backward):
        """One work-group does all N samples: per-sample weights (0 for ignore_index, class weight if given),
        their sum, then the loss (forward) or the gradient (backward, after zero-filling its (N, C) output)."""
        L = _LOCAL
        red = (" sh[lid] = acc; barrier(CLK_LOCAL_MEM_FENCE);\n"
               f" for (int t = {L} / 2; t > 0; t >>= 1) {{ if (lid < t) sh[lid] += sh[lid + t]; barrier(CLK_LOCAL_MEM_FENCE); }}\n")
        head = (f"typedef {_ct(dt)} T;\n"
                "inline T wt(long t, long C, long ig, __global const T* w, long wo, int hw) {\n"
                " return (t == ig || t < 0 || t >= C) ? (T)0 : (hw ? w[wo + t] : (T)1); }\n")
        if not backward:
            return head + (
                "__kernel void k(__global T* out, __global long* bad, __global const T* x, long xo, long sx0, long sx1,"
                " __global const long* tg, long to, long st, __global const T* w, long wo, int hw, long N, long C,"
                " long ig, int red) {\n"
                f" int lid = get_local_id(0); __local T sh[{L}]; __local long shb[{L}];\n"
                " T acc = 0, ws = 0; long b = -1;\n"
                f" for (long i = lid; i < N; i += {L}) {{ long t = tg[to + i * st];\n"
                "  if (t != ig && (t < 0 || t >= C)) b = t;\n"
                "  T wi = wt(t, C, ig, w, wo, hw); T li = wi == 0 ? (T)0 : -x[xo + i * sx0 + t * sx1] * wi;\n"
                "  if (red == 0) out[i] = li; acc += li; ws += wi; }\n"
                " shb[lid] = b;\n" + red + " T total = sh[0]; barrier(CLK_LOCAL_MEM_FENCE); acc = ws;\n" + red +
                " if (lid == 0) { long bb = -1; for (int j = 0; j < " + str(L) + "; ++j) if (shb[j] != -1) bb = shb[j];\n"
                "  bad[0] = bb; if (red == 1) out[0] = total / sh[0]; if (red == 2) out[0] = total; }\n}\n")
        return head + (
            "__kernel void k(__global T* out, __global const T* g, long go, long sg, __global const long* tg, long to,"
            " long st, __global const T* w, long wo, int hw, long N, long C, long ig, int red) {\n"
            f" int lid = get_local_id(0); __local T sh[{L}];\n"
            f" for (long j = lid; j < N * C; j += {L}) out[j] = 0;\n"
            " T acc = 0; if (red == 1) { for (long i = lid; i < N; i += " + str(L) + ") acc += wt(tg[to + i * st], C, ig, w, wo, hw);\n"
            + red + " }\n T ws = red == 1 ? sh[0] : (T)1;\n barrier(CLK_GLOBAL_MEM_FENCE);\n"
            f" for (long i = lid; i < N; i += {L}) {{ long t = tg[to + i * st]; T wi = wt(t, C, ig, w, wo, hw);\n"
            "  if (wi != 0) out[i * C + t] = -wi * g[go + i * sg] / ws; }\n}\n")

    def _nll_loss(self, x, t, w, ignore_index, reduction):
        dev = x.buf.dev
        n, c = x.shape
        red = {"none": 0, "mean": 1, "sum": 2}[reduction]
        out = self._empty((n,) if red == 0 else (), x.dtype, dev)
        if n == 0:
            return self._ew("fill", "(OT)NAN" if red == 1 else "(OT)0", [], [], x.dtype, (), out=out) if red else out
        w = w if w is None or w.is_contiguous() else self._copy(w)
        bad = self._empty((1,), _dt.int64, dev)
        k = dev.kernel(("nll_loss", x.dtype.name), lambda: self._nll_source(x.dtype, False))
        _set_args(k, out.buf.mem, bad.buf.mem, x.buf.mem, np.int64(x.offset), np.int64(x.strides[0]),
                   np.int64(x.strides[1]), t.buf.mem, np.int64(t.offset), np.int64(t.strides[0]),
                   (w if w is not None else x).buf.mem, np.int64(w.offset if w is not None else 0),
                   np.int32(w is not None), np.int64(n), np.int64(c), np.int64(ignore_index), np.int32(red))
        cl.enqueue_nd_range_kernel(dev.queue, k, (_LOCAL,), (_LOCAL,))
        b = int(self.to_numpy(bad)[0])  # the one host sync: out-of-range targets raise here, as on cpu
        if b != -1:
            raise IndexError(f"Target {b} is out of bounds.")
        return out

    def _nll_loss_backward(self, g, t, w, num_classes, ignore_index, reduction):
        dev = g.buf.dev
        n = t.shape[0]
        out = self._empty((n, num_classes), g.dtype, dev)
        if out.size == 0:
            return out
        w = w if w is None or w.is_contiguous() else self._copy(w)
        k = dev.kernel(("nll_loss_backward", g.dtype.name), lambda: self._nll_source(g.dtype, True))
        _set_args(k, out.buf.mem, g.buf.mem, np.int64(g.offset), np.int64(g.strides[0] if g.ndim else 0),
                   t.buf.mem, np.int64(t.offset), np.int64(t.strides[0]),
                   (w if w is not None else g).buf.mem, np.int64(w.offset if w is not None else 0),
                   np.int32(w is not None), np.int64(n), np.int64(num_classes), np.int64(ignore_index),
                   np.int32({"none": 0, "mean": 1, "sum": 2}[reduction]))
        cl.enqueue_nd_range_kernel(dev.queue, k, (_LOCAL,), (_LOCAL,))
        return out

    # ---- convolution and pooling primitives: one work-item per output row or element, index math inline ----
    _GEOM = "const long N = P.v[0], C = P.v[1], H = P.v[2], W = P.v[3], oh = P.v[12], ow = P.v[13];\n"

    def _geom_kernel(self, name, dt, body, meta, extra="", ptr_types=("T", "T")):
        # the window geometry is compiled in (one build per kernel size / stride / padding / dilation):
        # constant strides turn the index divisions into shifts and multiplies, which CPU drivers need
        consts = "".join(f"#define {n} {int(v)}L\n" for n, v in zip(("kh", "kw", "dh", "dw", "ph", "pw", "sh", "sw"),
                                                                  meta[4:12]))
        src = (_struct(20) + consts + f"typedef {_ct(dt)} T;\n"
               f"__kernel void k(__global {ptr_types[0]}* out, __global const {ptr_types[1]}* X, Params P{extra}) {{\n"
               f" long g = get_global_id(0);\n" + self._GEOM + body + "}\n")
        return src

    def _run_geom(self, dev, key, source, args, n):
        key = key + tuple(int(v) for v in args[2][4:12])
        k = dev.kernel(key, source)
        _set_args(k, *args)
        _launch_1d(dev, k, n)

    @staticmethod
    def _geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, strides=(0, 0, 0, 0), offset=0):
        meta = np.zeros(20, np.int64)
        meta[:14] = [n, c, h, w, *kernel_size, *dilation, *padding, *stride, oh, ow]
        meta[14:18] = strides
        meta[18] = offset
        return meta

    def _im2col(self, x, kernel_size, dilation, padding, stride):
        n, c, h, w = x.shape
        (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        dev = x.buf.dev
        out = self._empty((c * kh * kw, n, oh * ow), x.dtype, dev)
        rows = c * kh * kw * n * oh
        if out.size:
            body = (" if (g >= C * kh * kw * N * oh) return;\n"
                    " long y = g % oh, t = g / oh; long b = t % N; t /= N; long kj = t % kw; t /= kw;"
                    " long ki = t % kh, c = t / kh;\n"
                    " __global T* o = out + g * ow; long iy = y * sh - ph + ki * dh;\n"
                    " if (iy < 0 || iy >= H) { for (long q = 0; q < ow; ++q) o[q] = 0; return; }\n"
                    " long base = P.v[18] + b * P.v[14] + c * P.v[15] + iy * P.v[16];\n"
                    " for (long q = 0; q < ow; ++q) { long ix = q * sw - pw + kj * dw;"
                    " o[q] = (ix >= 0 && ix < W) ? X[base + ix * P.v[17]] : (T)0; }\n")
            meta = self._geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
            self._run_geom(dev, ("im2col", x.dtype.name), lambda: self._geom_kernel("im2col", x.dtype, body, meta),
                           [out.buf.mem, x.buf.mem, meta], rows)
        return out

    def _col2im(self, cols, output_size, kernel_size, dilation, padding, stride):
        (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
        h, w = output_size
        ckk, n, L = cols.shape
        c = ckk // (kh * kw)
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        dev = cols.buf.dev
        if not cols.is_contiguous() or cols.offset:
            cols = self._copy(cols)
        out = self._empty((n, c, h, w), cols.dtype, dev)
        if out.size:
            # a gather over the windows that cover each pixel: no atomics, each output written once
            body = (" if (g >= N * C * H) return;\n"
                    " long hh = g % H, t = g / H; long c = t % C, b = t / C;\n"
                    " for (long ww = 0; ww < W; ++ww) { T acc = 0;\n"
                    "  for (long ki = 0; ki < kh; ++ki) { long yy = hh + ph - ki * dh;"
                    " if (yy < 0 || yy % sh) continue; long y = yy / sh; if (y >= oh) continue;\n"
                    "   for (long kj = 0; kj < kw; ++kj) { long xx = ww + pw - kj * dw;"
                    " if (xx < 0 || xx % sw) continue; long x = xx / sw; if (x >= ow) continue;\n"
                    "    acc += X[(((c * kh + ki) * kw + kj) * N + b) * oh * ow + y * ow + x]; } }\n"
                    "  out[g * W + ww] = acc; }\n")
            meta = self._geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow)
            self._run_geom(dev, ("col2im", cols.dtype.name), lambda: self._geom_kernel("col2im", cols.dtype, body, meta),
                           [out.buf.mem, cols.buf.mem, meta], n * c * h)
        return out

    def _max_pool2d(self, x, kernel_size, stride, padding, dilation, ceil_mode):
        from .._geometry import pool_geometry
        n, c, h, w = x.shape
        oh, ow, _, _ = pool_geometry(h, w, kernel_size, stride, padding, dilation, ceil_mode)
        dev = x.buf.dev
        out = self._empty((n, c, oh, ow), x.dtype, dev)
        idx = self._empty((n, c, oh, ow), _dt.int64, dev)
        if out.size:
            nan = "isnan(v)" if _isf(x.dtype) else "0"
            # PyTorch's rule: the first maximum wins, a NaN takes the window (the last NaN), padding never wins
            body = (" if (g >= N * C * oh * ow) return;\n"
                    " long ox = g % ow, t = g / ow; long oy = t % oh; t /= oh; long c = t % C, b = t / C;\n"
                    " long base = P.v[18] + b * P.v[14] + c * P.v[15]; int found = 0; T best = 0; long bi = 0;\n"
                    " for (long ki = 0; ki < kh; ++ki) { long iy = oy * sh - ph + ki * dh; if (iy < 0 || iy >= H) continue;\n"
                    "  for (long kj = 0; kj < kw; ++kj) { long ix = ox * sw - pw + kj * dw; if (ix < 0 || ix >= W) continue;\n"
                    f"   T v = X[base + iy * P.v[16] + ix * P.v[17]]; if (!found || v > best || {nan}) {{"
                    " best = v; bi = iy * W + ix; found = 1; } } }\n"
                    " out[g] = best; oi[g] = bi;\n")
            meta = self._geom_meta(n, c, h, w, kernel_size, dilation, padding, stride, oh, ow, x.strides, x.offset)
            self._run_geom(dev, ("max_pool2d", x.dtype.name),
                           lambda: self._geom_kernel("max_pool2d", x.dtype, body, meta, extra=", __global long* oi"),
                           [out.buf.mem, x.buf.mem, meta, idx.buf.mem], out.size)
        return out, idx

    def _max_pool2d_backward(self, g, idx, input_shape, disjoint):
        n, c, h, w = input_shape
        dev = g.buf.dev
        out = self._empty(tuple(input_shape), g.dtype, dev)
        self._ew("fill", "(OT)0", [], [], g.dtype, out.shape, out=out)
        if g.size == 0:
            return out
        g = g if g.is_contiguous() and not g.offset else self._copy(g)
        idx = idx if idx.is_contiguous() and not idx.offset else self._copy(idx)
        per = g.size // (n * c)
        if not disjoint:  # overlapping windows: several winners may share a pixel, so sum by segments
            flat = self.to_numpy(idx).reshape(n * c, -1) + (np.arange(n * c, dtype=np.int64) * (h * w))[:, None]
            return self._segmented(out, flat, g, "add")
        # disjoint windows: each pixel wins at most once, so a plain scatter is exact
        body = (" if (g >= N * C * oh * ow) return;\n"
                " long nc = g / (oh * ow); out[nc * H * W + X[g]] = G[g];\n")
        meta = self._geom_meta(n, c, h, w, (1, 1), (1, 1), (0, 0), (1, 1), 1, per)
        self._run_geom(dev, ("max_pool2d_backward", g.dtype.name),
                       lambda: self._geom_kernel("max_pool2d_backward", g.dtype, body, meta, extra=", __global const T* G",
                                                 ptr_types=("T", "long")),
                       [out.buf.mem, idx.buf.mem, meta, g.buf.mem], g.size)
        return out


# One fixed work-group size per kernel: drivers that compile per work-group size (PoCL does) then build each
# kernel once instead of once per tensor shape.
_LOCAL = 64
_VN = 16  # vector width of the register-blocked GEMM


def _set_args(k, *args):
    """``k.set_args(*args)``, after declaring the kernel's by-value argument types on its first call.

    pyopencl's untyped path converts each by-value argument by trial (15-20 us per numpy scalar or
    parameter struct on PoCL, more than the launch itself); with the types declared it packs them
    directly (under 1 us). A kernel's signature is fixed, so the first call's argument types hold for all."""
    if k not in _TYPED:
        types = []
        for a in args:
            if isinstance(a, np.ndarray):
                types.append(np.dtype((np.void, a.nbytes)))  # a struct passed by value
            elif isinstance(a, np.generic) and a.dtype.kind in "biuf" and a.dtype.char in "?bBhHiIlLqQfd":
                types.append(a.dtype)
            else:
                types.append(None)  # memory objects, local memory: pyopencl's generic path
        k.set_scalar_arg_dtypes(types)
        _TYPED.add(k)
    k.set_args(*args)


_TYPED = set()


# Work-group size of the kernels whose work-items are independent (elementwise, gathers, updates). PoCL runs a
# work-group as one vectorized loop with a fixed cost per group: 256 items per group run an SGD update over 200k
# floats in 127 us against 232 us with 64 (and GPUs take 256 as readily as 64).
_EW_LOCAL = 256


def _launch_1d(dev, k, n):
    """Enqueue ``k`` over ``n`` independent work-items (kernels check ``j < n`` themselves)."""
    loc = min(_EW_LOCAL, dev.max_wg)
    cl.enqueue_nd_range_kernel(dev.queue, k, ((n + loc - 1) // loc * loc,), (loc,))


def _group_size(n, dev):
    """Work-items cooperating on one reduction row: one for short rows, else a fixed power of two."""
    return 1 if n <= 32 else min(_LOCAL, dev.max_wg)


def _lim(dt, hi):
    if dt.name == "bool":
        return "(ACC)1" if hi else "(ACC)0"
    info = np.iinfo(dt.np)
    v = info.max if hi else info.min
    if dt.name == "int64" and not hi:
        return "(ACC)(-9223372036854775807L - 1)"
    return f"(ACC){v}L" if dt.name == "int64" else f"(ACC){v}"


def _bshape(shapes):
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
