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

  WGSLRenderer    WGSL for the ``webgpu`` device (``backends/webgpu``): ``CT(1)`` constants (``CT`` an ``alias``),
                  ``select(b, a, c)`` for ``where``, and helper functions (``isnan_``, ``erf_``, ``expm1_`` ...)
                  for what WGSL's builtins lack; the backend's kernel prelude defines them.
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
    """CUDA C for NVRTC: the OpenCL C kernels (expressions rendered as ``OpenCLRenderer`` renders them, in the
    kernel templates of ``backends/opencl``) under a prelude that maps OpenCL C's few differences onto CUDA C, as
    tinygrad's C-style renderers share one language and differ in per-target prefixes: ``__kernel`` ->
    ``extern "C" __global__``, ``__global`` -> nothing, ``__local`` -> ``__shared__``, ``barrier`` ->
    ``__syncthreads``, ``get_global_id(d)`` -> ``blockIdx.d * blockDim.d + threadIdx.d`` (and the other work-item
    functions), ``uchar``/``ulong``. A kernel naming ``half`` or ``bfloat16`` also gets ``LOW_PRECISION``: the CUDA
    headers' ``__half`` and ``__nv_bfloat16`` (``cuda_fp16.h``, ``cuda_bf16.h``), math evaluated in float and
    rounded back, as the OpenCL kernels' half path. ``program(src)`` is what the ``cuda`` device compiles."""

    PRELUDE = r"""
    typedef unsigned char uchar;
    typedef unsigned short ushort;
    typedef unsigned int uint;
    typedef unsigned long ulong;
    #define __kernel extern "C" __global__
    #define __global
    #define __constant const
    #define __local __shared__
    #define CLK_LOCAL_MEM_FENCE 1
    #define CLK_GLOBAL_MEM_FENCE 2
    #define barrier(flags) __syncthreads()
    #ifndef INFINITY
    #define INFINITY __int_as_float(0x7f800000)
    #endif
    #ifndef NAN
    #define NAN __int_as_float(0x7fffffff)
    #endif
    static __device__ __forceinline__ long tt_dim3(uint3 v, int d) { return d == 0 ? v.x : (d == 1 ? v.y : v.z); }
    static __device__ __forceinline__ long tt_dim3(dim3 v, int d) { return d == 0 ? v.x : (d == 1 ? v.y : v.z); }
    static __device__ __forceinline__ long get_local_id(int d) { return tt_dim3(threadIdx, d); }
    static __device__ __forceinline__ long get_group_id(int d) { return tt_dim3(blockIdx, d); }
    static __device__ __forceinline__ long get_local_size(int d) { return tt_dim3(blockDim, d); }
    static __device__ __forceinline__ long get_num_groups(int d) { return tt_dim3(gridDim, d); }
    static __device__ __forceinline__ long get_global_id(int d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
    static __device__ __forceinline__ long get_global_size(int d) { return get_num_groups(d) * get_local_size(d); }
    """

    LOW_PRECISION = r"""
    #include <cuda_fp16.h>
    #include <cuda_bf16.h>
    typedef __half half;
    typedef __nv_bfloat16 bfloat16;
    #define TT_LOWP_FN(f) \
      static __device__ __forceinline__ half f(half x) { return __float2half(f(__half2float(x))); } \
      static __device__ __forceinline__ bfloat16 f(bfloat16 x) { return __float2bfloat16(f(__bfloat162float(x))); }
    TT_LOWP_FN(exp) TT_LOWP_FN(exp2) TT_LOWP_FN(expm1) TT_LOWP_FN(log) TT_LOWP_FN(log2) TT_LOWP_FN(log10)
    TT_LOWP_FN(log1p) TT_LOWP_FN(sqrt) TT_LOWP_FN(rsqrt) TT_LOWP_FN(sin) TT_LOWP_FN(cos) TT_LOWP_FN(tan)
    TT_LOWP_FN(asin) TT_LOWP_FN(acos) TT_LOWP_FN(atan) TT_LOWP_FN(sinh) TT_LOWP_FN(cosh) TT_LOWP_FN(tanh)
    TT_LOWP_FN(erf) TT_LOWP_FN(fabs) TT_LOWP_FN(floor) TT_LOWP_FN(ceil) TT_LOWP_FN(trunc) TT_LOWP_FN(rint)
    #define TT_LOWP_FN2(f) \
      static __device__ __forceinline__ half f(half x, half y) { \
        return __float2half(f(__half2float(x), __half2float(y))); } \
      static __device__ __forceinline__ bfloat16 f(bfloat16 x, bfloat16 y) { \
        return __float2bfloat16(f(__bfloat162float(x), __bfloat162float(y))); }
    TT_LOWP_FN2(pow) TT_LOWP_FN2(fmod) TT_LOWP_FN2(atan2) TT_LOWP_FN2(fmin) TT_LOWP_FN2(fmax)
    TT_LOWP_FN2(copysign) TT_LOWP_FN2(hypot) TT_LOWP_FN2(remainder) TT_LOWP_FN2(nextafter)
    // a 16-bit float against a plain number: exact overloads, where C++ would otherwise find two equally good
    // ones (the number converted to the 16-bit type, or the 16-bit value to float); computed in float, as OpenCL
    // C computes half op int
    #define TT_LOWP_MIXED(T, TO, FROM, S) \
      static __device__ __forceinline__ bool operator==(T a, S b) { return FROM(a) == (float)b; } \
      static __device__ __forceinline__ bool operator!=(T a, S b) { return FROM(a) != (float)b; } \
      static __device__ __forceinline__ bool operator<(T a, S b) { return FROM(a) < (float)b; } \
      static __device__ __forceinline__ bool operator<=(T a, S b) { return FROM(a) <= (float)b; } \
      static __device__ __forceinline__ bool operator>(T a, S b) { return FROM(a) > (float)b; } \
      static __device__ __forceinline__ bool operator>=(T a, S b) { return FROM(a) >= (float)b; } \
      static __device__ __forceinline__ bool operator==(S a, T b) { return (float)a == FROM(b); } \
      static __device__ __forceinline__ bool operator!=(S a, T b) { return (float)a != FROM(b); } \
      static __device__ __forceinline__ bool operator<(S a, T b) { return (float)a < FROM(b); } \
      static __device__ __forceinline__ bool operator<=(S a, T b) { return (float)a <= FROM(b); } \
      static __device__ __forceinline__ bool operator>(S a, T b) { return (float)a > FROM(b); } \
      static __device__ __forceinline__ bool operator>=(S a, T b) { return (float)a >= FROM(b); } \
      static __device__ __forceinline__ T operator+(T a, S b) { return TO(FROM(a) + (float)b); } \
      static __device__ __forceinline__ T operator-(T a, S b) { return TO(FROM(a) - (float)b); } \
      static __device__ __forceinline__ T operator*(T a, S b) { return TO(FROM(a) * (float)b); } \
      static __device__ __forceinline__ T operator/(T a, S b) { return TO(FROM(a) / (float)b); } \
      static __device__ __forceinline__ T operator+(S a, T b) { return TO((float)a + FROM(b)); } \
      static __device__ __forceinline__ T operator-(S a, T b) { return TO((float)a - FROM(b)); } \
      static __device__ __forceinline__ T operator*(S a, T b) { return TO((float)a * FROM(b)); } \
      static __device__ __forceinline__ T operator/(S a, T b) { return TO((float)a / FROM(b)); }
    #define TT_LOWP_MIXED_ALL(T, TO, FROM) \
      TT_LOWP_MIXED(T, TO, FROM, int) TT_LOWP_MIXED(T, TO, FROM, long) TT_LOWP_MIXED(T, TO, FROM, long long) \
      TT_LOWP_MIXED(T, TO, FROM, unsigned) TT_LOWP_MIXED(T, TO, FROM, float) TT_LOWP_MIXED(T, TO, FROM, double)
    TT_LOWP_MIXED_ALL(half, __float2half, __half2float)
    TT_LOWP_MIXED_ALL(bfloat16, __float2bfloat16, __bfloat162float)
    #define TT_LOWP_PRED(f) \
      static __device__ __forceinline__ bool f(half x) { return f(__half2float(x)); } \
      static __device__ __forceinline__ bool f(bfloat16 x) { return f(__bfloat162float(x)); }
    TT_LOWP_PRED(isnan) TT_LOWP_PRED(isinf) TT_LOWP_PRED(isfinite)
    """

    def program(self, src):
        """The CUDA C program of OpenCL C kernel source ``src``."""
        low = "half" in src or "bfloat16" in src
        return self.PRELUDE + (self.LOW_PRECISION if low else "") + src


class WGSLRenderer(CStyleRenderer):
    """WGSL (WebGPU's shading language) for ``backends/webgpu``: ``CT`` the compute type (an ``alias`` in the
    kernel), ``select`` for ``where``, and the helpers ``isnan_``/``isinf_``/``erf_``/``expm1_``/``log1p_``/``log10_``/
    ``erfinv_``/``asin_``/``acos_`` of the backend's prelude where WGSL has no builtin (it has no ``isnan``: a shader compiler may
    assume floats are never NaN, so the test reads the bits). WGSL converts nothing implicitly, hence the typed
    constants and the flag test against ``CT(0)``."""

    T = "CT"
    cse = False  # the backend's kernels take one expression
    code_for_op = {
        **CStyleRenderer.code_for_op,
        "where": lambda r, c, a, b: f"select({b}, {a}, {c})",
        "isnan": lambda r, a: f"isnan_({a})",
        "isinf": lambda r, a: f"isinf_({a})",
        "rsqrt": lambda r, a: f"inverseSqrt({a})",
        "erf": lambda r, a: f"erf_({a})",
        "fabs": lambda r, a: f"abs({a})",
        "tanh": lambda r, a: f"tanh_({a})",  # a driver's tanh may overflow to NaN for large |x|
    }
    # asin and acos too: Vulkan lets a driver's asin/acos be off by thousands of ulps (lavapipe's are)
    _HELPERS = {"expm1": "expm1_", "log1p": "log1p_", "log10": "log10_", "erfinv": "erfinv_", "asin": "asin_",
                "acos": "acos_"}

    def const(self, v):
        # an abstract WGSL literal converted to the compute type (f32 or f16); integers keep a ".0" so that
        # CT(1.0) is a float literal whatever CT is
        s = _num(v)
        if "." not in s and "e" not in s:
            s += ".0"
        return f"CT({s})"

    def function(self, name):
        return self._HELPERS.get(name, name)

    def flag(self, e):
        return f"({e} != CT(0))"
