"""Renderers: a formula (``formulas.py``) written as the source of one compiled target.

As tinygrad's renderers, a primitive of ``expr.py`` is one entry of ``CStyleRenderer.code_for_op`` and every
C-style language inherits it; a subclass overrides only what its language spells differently:

  CppRenderer     the native kernels (``csrc/kernels/pointwise.inc`` via the generated header) and the fused C++
                  kernels of ``compiler/codegen_cpp.py``: ``T(1)`` constants and the ``tt_exp``/``tt_tanh``/
                  ``tt_erf``/``tt_sigmoid`` of ``csrc/kernels/vec_math.h``, so a fused kernel rounds as the native
                  loop does;
  OpenCLRenderer  OpenCL C for ``backends/opencl/elementwise.py`` and ``compiler/codegen_opencl.py``: ``(CT)1``
                  constants (``CT`` the compute type, ``OT`` the output type), OpenCL's builtins;
  CUDARenderer    CUDA C as NVRTC compiles it: OpenCL's spelling but CUDA's overloads (``erfinv``), and
                  ``kernel`` writes a whole ``__global__`` function, ``__half`` converted to float.

A WGSL renderer would override the constants (``T(1)``), ``where`` (``select(b, a, c)``) and the declarations.
"""
from .expr import walk

_LEAVES = ("arg", "const", "attr")
_BOOL_OPS = ("lt", "le", "gt", "ge", "eq", "ne", "isnan", "isinf")


def _num(v):
    """A number as a C literal that parses to the same double (``repr`` round-trips)."""
    if isinstance(v, int):
        return str(v)
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError("a formula constant must be finite")
    return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)


class CStyleRenderer:
    """The rendering shared by the C-like languages: operators, the ternary ``where``, a call per function.
    ``T`` names the compute type in the rendered source; ``cse`` binds a node used twice to a local."""

    T = "T"
    cse = True
    code_for_op = {
        "add": lambda r, a, b: f"({a} + {b})",
        "sub": lambda r, a, b: f"({a} - {b})",
        "mul": lambda r, a, b: f"({a} * {b})",
        "div": lambda r, a, b: f"({a} / {b})",
        "neg": lambda r, a: f"(-{a})",
        "lt": lambda r, a, b: f"({a} < {b})",
        "le": lambda r, a, b: f"({a} <= {b})",
        "gt": lambda r, a, b: f"({a} > {b})",
        "ge": lambda r, a, b: f"({a} >= {b})",
        "eq": lambda r, a, b: f"({a} == {b})",
        "ne": lambda r, a, b: f"({a} != {b})",
        "where": lambda r, c, a, b: f"({c} ? {a} : {b})",
        "isnan": lambda r, a: f"isnan({a})",
        "isinf": lambda r, a: f"isinf({a})",
        "exp": lambda r, a: f"exp({a})",
        "log": lambda r, a: f"log({a})",
        "sqrt": lambda r, a: f"sqrt({a})",
        "rsqrt": lambda r, a: f"rsqrt({a})",
        "tanh": lambda r, a: f"tanh({a})",
        "erf": lambda r, a: f"erf({a})",
        "fabs": lambda r, a: f"fabs({a})",
        "sigmoid": lambda r, a: f"({r.const(1)} / ({r.const(1)} + exp(-{a})))",
        "call": lambda r, fn, *xs: f"{r.function(fn)}({', '.join(xs)})",
    }

    def const(self, v):
        """A numeric constant of the compute type."""
        return f"({self.T}){_num(v)}"

    def function(self, name):
        """The spelling of libm function ``name`` (``expr.CALLS``)."""
        return name

    def cast_out(self, formula, e):
        """The formula's result ``e`` as written to its output."""
        return e

    def flag(self, e):
        """A flag attribute ``e`` as a condition."""
        return e

    def declare(self, is_bool, name, e):
        return f"const {'bool' if is_bool else self.T} {name} = {e};"

    def render(self, formula, operands=None, attrs=None, local="t", cse=None):
        """(statements, expression) of ``formula`` over ``operands`` (source strings; default: the formula's
        parameter names) and ``attrs`` ({attribute: source string}; default: the attribute names). With ``cse``,
        a node used more than once is computed once into a local named ``local`` + a number (the statements)."""
        operands = list(formula.params if operands is None else operands)
        attrs = {a: a for a in formula.attrs} if attrs is None else attrs
        cse = self.cse if cse is None else cse
        nodes = walk(formula.root)
        uses = {}
        for n in nodes:
            if n.op not in _LEAVES:
                for ch in n.args:
                    if hasattr(ch, "op"):
                        uses[id(ch)] = uses.get(id(ch), 0) + 1
        is_bool = {}
        text = {}
        stmts = []
        for n in nodes:
            if n.op == "arg":
                e, b = operands[n.args[0]], False
            elif n.op == "const":
                e, b = self.const(n.args[0]), False
            elif n.op == "attr":
                b = n.args[1] == "bool"
                e = self.flag(attrs[n.args[0]]) if b else attrs[n.args[0]]
            else:
                if n.op not in self.code_for_op:
                    raise NotImplementedError(f"{type(self).__name__} has no rendering of {n.op}")
                xs = [text[id(ch)] if hasattr(ch, "op") else ch for ch in n.args]
                if n.op == "call" and self.function(n.args[0]) is None:
                    raise NotImplementedError(f"{type(self).__name__} has no function {n.args[0]}")
                e = self.code_for_op[n.op](self, *xs)
                b = n.op in _BOOL_OPS or (n.op == "where" and is_bool[id(n.args[1])])
                if cse and uses.get(id(n), 0) > 1:
                    name = f"{local}{len(stmts)}"
                    stmts.append(self.declare(b, name, e))
                    e = name
            text[id(n)] = e
            is_bool[id(n)] = b
        return stmts, self.cast_out(formula, text[id(formula.root)])

    def expression(self, formula, operands=None, attrs=None):
        """``formula`` as one expression (no locals: a node used twice is written twice)."""
        return self.render(formula, operands, attrs, cse=False)[1]

    def supports(self, formula):
        """Whether every op of ``formula`` has a rendering here."""
        try:
            self.render(formula)
            return True
        except NotImplementedError:
            return False


class CppRenderer(CStyleRenderer):
    """C++ of the native loops and the fused kernels: exactly the expressions of the hand-written loops, so a
    fused kernel's results equal the native kernels' bit for bit. The type is ``T`` (a template parameter or a
    typedef)."""

    code_for_op = {
        **CStyleRenderer.code_for_op,
        # NaN is the one value unequal to itself (no -ffast-math in either build)
        "isnan": lambda r, a: f"({a} != {a})",
        "isinf": lambda r, a: f"std::isinf({a})",
        "exp": lambda r, a: f"tt_exp({a})",
        "log": lambda r, a: f"std::log({a})",
        "sqrt": lambda r, a: f"std::sqrt({a})",
        "rsqrt": lambda r, a: f"({r.const(1)} / std::sqrt({a}))",
        "tanh": lambda r, a: f"tt_tanh({a})",
        "erf": lambda r, a: f"tt_erf({a})",
        "sigmoid": lambda r, a: f"tt_sigmoid({a})",
        "fabs": lambda r, a: f"std::fabs({a})",
    }

    def const(self, v):
        return f"{self.T}({_num(v)})"

    def function(self, name):
        return None if name == "erfinv" else f"std::{name}"


class OpenCLRenderer(CStyleRenderer):
    """OpenCL C: ``CT`` the compute type, ``OT`` the output type (a comparison's is its bool type)."""

    T = "CT"
    cse = False  # the backend's kernels take one expression

    def function(self, name):
        # OpenCL C has no erfinv: backends/opencl/elementwise.py supplies erfinv_
        return "erfinv_" if name == "erfinv" else name

    def cast_out(self, formula, e):
        return f"(OT){e}" if formula.out == "bool" else e

    def flag(self, e):
        # a kernel's scalars have the compute type, and a ternary's condition must not be floating
        return f"({e} != 0)"


class CUDARenderer(OpenCLRenderer):
    """CUDA C for NVRTC: the OpenCL spelling (C casts, overloaded math functions of the CUDA math API) with
    CUDA's own ``erfinv``. ``kernel`` writes a complete elementwise kernel."""

    def function(self, name):
        return name

    # (storage type, compute type, load, store): 16-bit floats are stored as raw bits and computed in float,
    # converted by the PTX instructions, so a kernel needs no cuda_fp16.h / cuda_bf16.h on NVRTC's include path
    _STORAGE = {"float32": ("float", "float", "", ""), "float64": ("double", "double", "", ""),
                "float16": ("unsigned short", "float", "tt_h2f", "tt_f2h"),
                "bfloat16": ("unsigned short", "float", "tt_b2f", "tt_f2b")}
    _CONVERT = {
        "float16": ["static __device__ __forceinline__ float tt_h2f(unsigned short h) {",
                    '  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }',
                    "static __device__ __forceinline__ unsigned short tt_f2h(float f) {",
                    '  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }'],
        "bfloat16": ["static __device__ __forceinline__ float tt_b2f(unsigned short h) {",
                     "  return __uint_as_float((unsigned int)h << 16); }",
                     "static __device__ __forceinline__ unsigned short tt_f2b(float f) {",
                     '  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }'],
    }

    def prelude(self, dtype):
        """The helper functions the kernels of ``dtype`` need, once per program."""
        return "\n".join(self._CONVERT.get(dtype, [])) + "\n"

    def kernel(self, formula, dtype="float32", name=None):
        """The CUDA source of ``extern "C" __global__ void <name>(out, in0[, in1], attrs..., n)`` computing
        ``formula`` over ``n`` contiguous elements of ``dtype`` (float16/bfloat16 computed in float; the program
        needs ``prelude(dtype)`` before it)."""
        st, ct, load, store = self._STORAGE[dtype]
        name = name or f"tt_{formula.name}"
        ot = "bool" if formula.out == "bool" else st
        if formula.out == "bool":
            store = ""
        params = [f"{ot}* __restrict__ out"] + [f"const {st}* __restrict__ in{k}" for k in range(formula.arity)]
        params += [f"{'bool' if kind == 'bool' else ct} {a}" for a, kind in zip(formula.attrs, formula.attr_kinds)]
        params.append("long long n")
        # the types are local: the kernels of several formulas may share one program
        lines = [f'extern "C" __global__ void {name}({", ".join(params)}) {{',
                 f"  typedef {ct} CT;", f"  typedef {ot} OT;",
                 "  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;",
                 "  if (i >= n) return;"]
        ops = []
        for k in range(formula.arity):
            lines.append(f"  const CT x{k} = {load}(in{k}[i]);")
            ops.append(f"x{k}")
        stmts, e = self.render(formula, ops, cse=True)
        lines += ["  " + s for s in stmts]
        lines += [f"  out[i] = {store}({e});", "}", ""]
        return "\n".join(lines)
