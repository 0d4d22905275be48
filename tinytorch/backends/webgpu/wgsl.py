"""WGSL shared by the kernels: value types, loads and stores of each dtype, the helper functions WGSL's builtins
lack (``render.WGSLRenderer`` calls them), and the strided index code with its int32 parameter block."""
import functools
import math

import numpy as np

from .runtime import STORAGE

MAXD = 6  # dims of the generic strided index code (a launch of more dims gets a kernel of its own width)


def value_type(dtype):
    """The WGSL type a kernel computes a dtype's values in: bool is an i32 0/1 (WGSL's bool has no storage and no
    arithmetic), int64 its narrowed i32."""
    return {"float32": "f32", "float16": "f16"}.get(dtype.name, "i32")


def load(dtype, ref):
    """A value of ``dtype`` read from storage expression ``ref``, as ``value_type(dtype)``."""
    return f"i32({ref})" if dtype.name == "bool" else ref


def store(dtype, e):
    """Expression ``e`` (a bool, i32 or float) converted to ``dtype``'s storage type."""
    if dtype.name == "bool":
        return f"select(0u, 1u, bool({e}))"
    return f"{STORAGE[dtype.name]}({e})"


def scalar(dtype, word):
    """The scalar of ``dtype`` held in parameter word ``P[word]`` (floats travel as their f32 bits)."""
    vt = value_type(dtype)
    if vt == "i32":
        return f"P[{word}]"
    return f"{vt}(bitcast<f32>(P[{word}]))"


def scalar_word(v, dtype):
    """The int32 parameter word carrying scalar ``v`` of ``dtype``."""
    if dtype.is_floating_point:
        return int(np.array(v, np.float32).view(np.int32))
    v = int(v)
    if not -2 ** 31 <= v < 2 ** 31:
        raise RuntimeError(f"webgpu: the scalar {v} does not fit the device's 32-bit integers")
    return v


def header(*dtypes):
    """``enable f16;`` when a kernel touches float16 (WGSL requires it first in the module)."""
    return "enable f16;\n" if any(d.name == "float16" for d in dtypes) else ""


# the float helpers, written over the kernel's compute type CT: WGSL has no isnan (a compiler may assume floats are
# never NaN, so the tests read the bits), no erf/erfinv/expm1/log1p/log10, and tanh may overflow for large |x|
FLOAT_HELPERS = """
fn isnan_(x: CT) -> bool { return (bitcast<u32>(f32(x)) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_(x: CT) -> bool { return (bitcast<u32>(f32(x)) & 0x7fffffffu) == 0x7f800000u; }
fn nan_() -> CT { return CT(bitcast<f32>(0x7fc00000u)); }
fn inf_() -> CT { return CT(bitcast<f32>(0x7f800000u)); }
fn tanh_(x: CT) -> CT { if (abs(x) > CT(10.0)) { return sign(x); } return tanh(x); }
fn expm1_(x: CT) -> CT {
  let u = exp(x);
  if (u == CT(1.0)) { return x; }
  let um = u - CT(1.0);
  if (um == CT(-1.0) || isinf_(u)) { return um; }
  return um * x / log(u);
}
fn log1p_(x: CT) -> CT {
  let u = CT(1.0) + x;
  if (u == CT(1.0)) { return x; }
  if (isinf_(u)) { return log(u); }
  return log(u) * x / (u - CT(1.0));
}
fn asin_(x: CT) -> CT {
  if (isnan_(x) || abs(x) > CT(1.0)) { return nan_(); }
  return atan2(x, sqrt((CT(1.0) - x) * (CT(1.0) + x)));
}
fn acos_(x: CT) -> CT {
  if (isnan_(x) || abs(x) > CT(1.0)) { return nan_(); }
  return atan2(sqrt((CT(1.0) - x) * (CT(1.0) + x)), x);
}
fn log10_(x: CT) -> CT { return CT(log2(f32(x)) * 0.30102999566398119521); }
fn erf_(x: CT) -> CT {
  let a = abs(f32(x));
  var r: f32;
  if (a < 0.5) {
    // Taylor series of erf: 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1))
    let z = a * a;
    r = a * (1.1283791670955126 + z * (-0.37612638903183754 + z * (0.11283791670955126 + z * (
        -0.026866170645131252 + z * (0.005223977625442188 - z * 0.0008548327023450852)))));
  } else {
    // Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7)
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    r = 1.0 - p * exp(-a * a);
  }
  return CT(select(r, -r, f32(x) < 0.0));
}
fn erfinv_(y0: CT) -> CT {
  // Giles' single-precision approximation, then two Newton steps on erf
  let y = f32(y0);
  if (y <= -1.0) { return select(nan_(), -inf_(), y == -1.0); }
  if (y >= 1.0) { return select(nan_(), inf_(), y == 1.0); }
  var w = -log((1.0 - y) * (1.0 + y));
  var p: f32;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w; p = 0.00021858087 + p * w; p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257; p = 0.000100950558 + p * w; p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w; p = 0.00573950773 + p * w; p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w; p = 1.00167406 + p * w; p = 2.83297682 + p * w;
  }
  var x = p * y;
  for (var i = 0; i < 2; i++) { x -= (f32(erf_(CT(x))) - y) / (1.1283791670955126 * exp(-x * x)); }
  return CT(x);
}
fn rem_(a: CT, b: CT) -> CT { var r = fmod_(a, b); if (r != CT(0.0) && ((r < CT(0.0)) != (b < CT(0.0)))) { r += b; } return r; }
fn fmod_(a: CT, b: CT) -> CT {
  if (isinf_(b) && !isinf_(a)) { return a; }
  return a - b * trunc(a / b);
}
fn pow_(a: CT, b: CT) -> CT {
  if (b == CT(0.0) || a == CT(1.0)) { return CT(1.0); }
  let r = pow(abs(a), b);
  if (a >= CT(0.0) || isnan_(a)) { return select(r, CT(0.0), a == CT(0.0) && b > CT(0.0)); }
  if (trunc(b) != b) { return select(nan_(), r, isinf_(b)); }
  let odd = !isinf_(b) && (fract(b * CT(0.5)) != CT(0.0));
  return select(r, -r, odd);
}
"""

INT_HELPERS = """
fn ipow_(a0: CT, b0: CT) -> CT {
  var a = a0; var b = b0;
  if (b < 0) { if (a == 1) { return 1; } if (a == -1) { return select(-1, 1, b % 2 == 0); } return 0; }
  var r = 1;
  loop { if (b == 0) { break; } if ((b & 1) != 0) { r *= a; } a *= a; b = b >> 1u; }
  return r;
}
fn remi_(a: CT, b: CT) -> CT { let r = a % b; return select(r, r + b, r != 0 && ((r < 0) != (b < 0))); }
"""


def helpers(ct):
    """The helper functions for compute type ``ct`` (with its ``alias CT``)."""
    return f"alias CT = {ct};\n" + (FLOAT_HELPERS if ct in ("f32", "f16") else INT_HELPERS)


def index_code(nops, m, coords=False, nd=None):
    """WGSL computing each operand's element offset p{k} from the flat index ``gid`` (parameter layout of
    ``meta``: nd, numel, shape[m], then (offset, strides[m]) per operand, innermost dim first); with ``coords``
    also the coordinates c0 and c1 of the two innermost dims. With ``nd`` (the launch's number of dims, known when
    the kernel is built) the loop is unrolled to exactly those dims: a dense or uniformly strided launch (one dim
    after merging) then costs one multiply-add per operand, no division."""
    lines = ["var r = gid; var c0 = 0; var c1 = 0;"]
    lines += [f"var p{k} = P[{2 + m + k * (m + 1)}];" for k in range(nops)]
    if nd is not None:
        for d in range(nd):
            last = d == nd - 1
            lines.append(f"{{ let c = {'r' if last else f'r % P[{2 + d}]'};" + ("" if last else f" r = r / P[{2 + d}];"))
            if coords and d < 2:
                lines.append(f"  c{d} = c;")
            lines += [f"  p{k} += c * P[{2 + m + k * (m + 1) + 1 + d}];" for k in range(nops)]
            lines.append("}")
        return "\n".join(lines)
    lines.append("for (var d = 0; d < P[0]; d++) {")
    lines.append(f"  let sz = P[2 + d]; let c = r % sz; r = r / sz;")
    if coords:
        lines.append("  if (d == 0) { c0 = c; } if (d == 1) { c1 = c; }")
    lines += [f"  p{k} += c * P[{2 + m + k * (m + 1) + 1} + d];" for k in range(nops)]
    lines.append("}")
    return "\n".join(lines)


def meta(shape, strides_list, offsets, m):
    """The int32 parameter block of ``index_code`` (RuntimeError when a geometry does not fit 32 bits)."""
    return list(_meta(tuple(shape), tuple(map(tuple, strides_list)), tuple(offsets), m))


@functools.lru_cache(maxsize=4096)
def _meta(shape, strides_list, offsets, m):
    v = [0] * (2 + m + len(strides_list) * (m + 1))
    v[0] = len(shape)
    v[1] = math.prod(shape)
    v[2:2 + len(shape)] = shape
    for k, (st, off) in enumerate(zip(strides_list, offsets)):
        base = 2 + m + k * (m + 1)
        v[base] = off
        v[base + 1: base + 1 + len(st)] = st
    if any(not -2 ** 31 <= x < 2 ** 31 for x in v):
        raise RuntimeError("webgpu: a tensor's size or offset does not fit the device's 32-bit indices")
    return tuple(v)


GID = ("@compute @workgroup_size(256)\nfn main(@builtin(global_invocation_id) gi: vec3<u32>, "
       "@builtin(num_workgroups) nw: vec3<u32>) {\n let gid = i32(gi.y * nw.x * 256u + gi.x);\n")


def bindings(out_dtype, in_dtypes, out_access="read_write"):
    """The binding declarations: ``out`` at 0, inputs ``A{k}`` at 1.., the parameter block ``P`` last."""
    lines = [f"@group(0) @binding(0) var<storage, {out_access}> out: array<{STORAGE[out_dtype.name]}>;"]
    for k, d in enumerate(in_dtypes):
        lines.append(f"@group(0) @binding({k + 1}) var<storage, read> A{k}: array<{STORAGE[d.name]}>;")
    lines.append(f"@group(0) @binding({len(in_dtypes) + 1}) var<storage, read> P: array<i32>;")
    return "\n".join(lines) + "\n"
