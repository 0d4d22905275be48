"""Elementwise kernels: the unary and binary op families (each dtype's family compiled in one program),
where, clamp, threshold_backward and casts.

A floating op with a formula (``kernels/formulas.py``) is that formula rendered by ``kernels/render.py``'s
``OpenCLRenderer`` (as the fused kernels of ``compiler/codegen_opencl.py`` render it); the if-chains below cover the
integer and bool dtypes and the ops without a formula (rounding modes, bitwise, logical ops)."""
import functools
import re

from ... import _dtype as _dt
from ...kernels import formulas
from ...kernels.render import OpenCLRenderer
from .codegen import MAXD, _bshape, _ct, _isf, _max_expr
from .reduce import _red
from .runtime import KERNELS, _is_arr

_OCL = OpenCLRenderer()


def _formula_expr(name, dt, kw, nargs, attrs=None):
    """Op ``name`` on floating ``dt`` with attributes ``kw`` as the OpenCL rendering of its formula
    (``kernels/formulas.py``) over operands x0, x1 (attributes named by ``attrs``), or None when it has none."""
    if not _isf(dt):
        return None
    f = formulas.select(name, kw, nargs, target="opencl")
    return None if f is None else _OCL.expression(f, ["x0", "x1"][:nargs], attrs)


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


def _unary_expr(name, dt, kw):
    e = _formula_expr(name, dt, kw, 1)
    if e is not None:
        return e
    f = _isf(dt)
    if name == "neg":
        return "-x0"
    if name == "abs":
        return "x0" if dt.name in ("uint8", "bool") else "(x0 < 0 ? -x0 : x0)"
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
        return "(x0 > 0 ? x0 : (CT)0)"
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


def _binary_expr(name, dt, kw):
    e = _formula_expr(name, dt, kw, 2, {"alpha": "s0"})
    if e is not None:
        return e
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


def _cached(spec):
    """``spec(name, dt, kw, *rest)`` memoized on its arguments (the kernels ask for the same few specs on every
    call, and rendering a formula costs tens of microseconds); unhashable attributes bypass the cache."""
    cache = functools.lru_cache(maxsize=4096)(lambda name, dt, items, *rest: spec(name, dt, dict(items), *rest))

    def get(name, dt, kw, *rest):
        try:
            return cache(name, dt, tuple(sorted(kw.items())), *rest)
        except TypeError:
            return spec(name, dt, kw, *rest)
    return get


@_cached
def _unary_spec(name, dt, kw):
    """(expr, out dtype, scalar dtype names, helpers) of a unary kernel."""
    out_dt = _dt.bool if name in ("isnan", "isinf", "isfinite", "logical_not") else dt
    sc = (dt.name,) * 3 if name == "nan_to_num" else ()
    return _unary_expr(name, dt, kw), out_dt, sc, (_ERFINV if name == "erfinv" else "")


_CMP_OUT = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")


@_cached
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
                "isinf", "isfinite", "nan_to_num", "clone", "special_spherical_bessel_j0"]
_BINARY_NAMES = ["add", "sub", "mul", "div", "remainder", "fmod", "pow", "atan2", "maximum", "minimum", "eq", "ne",
                 "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


def _unary(name):
    def k(be, a, **kw):
        dt = a.dtype
        expr, out_dt, sc_dts, helpers = _unary_spec(name, dt, kw)
        scalars = []
        if name == "nan_to_num":
            scalars = [(kw["nan"], dt), (kw["posinf"], dt), (kw["neginf"], dt)]

        def family():  # every unary op of this dtype, compiled in one program
            out = []
            for n2 in _UNARY_NAMES:
                if n2 == "nan_to_num" or (n2 == "bitwise_not" and _isf(dt)):
                    continue
                try:
                    e2, o2, s2, h2 = _unary_spec(n2, dt, {})
                except KeyError:  # a floating-only op (exp, sin ...) on an integer dtype
                    continue
                out.append((n2, e2, o2.name, (dt.name,), s2, (), MAXD, (), None, h2))
            return out
        return be._ew(name, expr, [a], scalars, out_dt, a.shape, helpers=helpers,
                      family=family if name != "nan_to_num" else None)
    return k


for _n in _UNARY_NAMES:
    KERNELS.add(_n, _unary(_n))


def _binary(name):
    def k(be, a, b, _out=None, **kw):
        arrs = [x for x in (a, b) if _is_arr(x)]
        dt = arrs[0].dtype
        if name == "div" and kw.get("rounding_mode") is not None and not _isf(dt) or \
                name in ("remainder", "fmod") and not _isf(dt):
            _zero_div_check(be, b)
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
        return be._ew(name, expr, inputs, scalars, out_dt, shape, helpers=helpers, family=family, out=_out)
    return k


for _n in _BINARY_NAMES:
    KERNELS.add(_n, _binary(_n))


def _zero_div_check(be, b):
    if _is_arr(b):
        if _any(be, be._ew("eqz", "(OT)(x0 == 0)", [b], [], _dt.bool, b.shape)):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0:
        raise RuntimeError("ZeroDivisionError")


def _any(be, a):
    r = _red("any")(be, a, tuple(range(a.ndim)), False)
    return bool(be.to_numpy(r))


@KERNELS.register("where")
def _where(be, c, a, b):
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
    return be._ew("where", f"(x0 ? {names[0]} : {names[1]})", ins, scalars, dt, shape,
                  ct=_ct(dt))


@KERNELS.register("threshold_backward")
def _threshold_backward(be, g, x, threshold):
    shape = _bshape([g.shape, x.shape])
    expr = _OCL.expression(formulas.BY_NAME["threshold_backward"], ["x0", "x1"], {"threshold": "s0"})
    return be._ew("threshold_backward", expr, [g, x], [(threshold, x.dtype)], g.dtype, shape)


@KERNELS.register("clamp")
def _clamp(be, a, lo, hi):
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
    return be._ew("clamp", e, ins, scalars, dt, shape)


KERNELS.add("to_dtype", lambda be, a, dtype: be.cast(a, dtype))
