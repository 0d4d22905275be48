"""Elementwise kernels: the unary and binary op families, where, clamp, threshold_backward and casts.

A floating op with a formula (``kernels/formulas.py``) is that formula rendered by ``kernels/render.py``'s
``WGSLRenderer`` (the formula source the cpu, opencl and cuda kernels are rendered from); the tables below cover
integer and bool dtypes (computed as i32) and the ops without a formula (rounding modes, bitwise, logical ops)."""
import functools
import re

from ... import _dtype as _dt
from ...kernels import formulas
from ...kernels.render import WGSLRenderer
from ..opencl.codegen import _bshape
from .runtime import KERNELS, _is_arr
from . import wgsl

_R = WGSLRenderer()


def _isf(dt):
    return dt.is_floating_point


def _formula_expr(name, dt, kw, nargs, attrs=None):
    """Op ``name`` on floating ``dt`` with attributes ``kw`` as the WGSL rendering of its formula over x0, x1, or
    None when it has none."""
    if not _isf(dt):
        return None
    f = formulas.select(name, kw, nargs, target="wgsl")
    return None if f is None else _R.expression(f, ["x0", "x1"][:nargs], attrs)


def _unary_expr(name, dt, kw):
    e = _formula_expr(name, dt, kw, 1)
    if e is not None:
        return e
    f = _isf(dt)
    b = dt.name == "bool"
    if name == "neg":
        return "-x0"
    if name == "abs":
        return "x0" if b else "abs(x0)"
    if name == "sign":
        return "select(sign(x0), CT(0), isnan_(x0))" if f else "sign(x0)"  # torch.sign(nan) is 0
    if name in ("floor", "ceil", "trunc"):
        return f"{name}(x0)" if f else "x0"
    if name == "round":
        d = kw.get("decimals", 0)
        if not f:
            return "x0"
        s = repr(float(10.0 ** d))
        return "round(x0)" if d == 0 else f"(round(x0 * CT({s})) / CT({s}))"
    if name == "relu":
        return "max(x0, 0)"
    if name == "bitwise_not":
        if f:
            raise KeyError(name)
        return "(1 - x0)" if b else "(~x0)"
    if name == "logical_not":
        return "(x0 == CT(0))" if f else "(x0 == 0)"
    if name == "isnan":
        return "isnan_(x0)" if f else "false"
    if name == "isinf":
        return "isinf_(x0)" if f else "false"
    if name == "isfinite":
        return "!(isnan_(x0) || isinf_(x0))" if f else "true"
    if name == "nan_to_num":
        return "select(select(x0, select(s2, s1, x0 > CT(0)), isinf_(x0)), s0, isnan_(x0))" if f else "x0"
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
        if b:
            return "(x0 | x1)"
        op = "+" if name == "add" else "-"
        return f"(x0 {op} x1 * s0)" if kw.get("alpha", 1) != 1 else f"(x0 {op} x1)"
    if name == "mul":
        return "(x0 & x1)" if b else "(x0 * x1)"
    if name == "div":
        rm = kw.get("rounding_mode")
        if rm is None:
            return "(x0 / x1)"
        if f:
            return f"{rm}(x0 / x1)"
        if rm == "trunc":
            return "(x0 / x1)"
        return "(x0 / x1 - select(0, 1, (x0 % x1 != 0) && ((x0 < 0) != (x1 < 0))))"
    if name == "remainder":
        return "rem_(x0, x1)" if f else "remi_(x0, x1)"
    if name == "fmod":
        return "fmod_(x0, x1)" if f else "(x0 % x1)"
    if name == "pow":
        return "pow_(x0, x1)" if f else "ipow_(x0, x1)"
    if name == "atan2":
        if not f:
            raise KeyError(name)
        return "atan2(x0, x1)"
    if name in ("maximum", "minimum"):
        return f"{name[:3]}(x0, x1)"
    cmp = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
    if name in cmp:
        return f"(x0 {cmp[name]} x1)"
    z = "CT(0)" if f else "0"
    lg = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}
    if name in lg:
        return f"((x0 != {z}) {lg[name]} (x1 != {z}))"
    if f:
        raise KeyError(name)
    bw = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
    if name in bw:
        return f"(x0 {bw[name]} x1)"
    if name == "bitwise_left_shift":
        return "select(0, x0 << u32(x1), x1 >= 0 && x1 < 32)"
    if name == "bitwise_right_shift":
        return "select(select(0, -1, x0 < 0), x0 >> u32(x1), x1 >= 0 && x1 < 32)"
    raise KeyError(name)


def _cached(spec):
    """``spec(name, dt, kw, *rest)`` memoized on its arguments; unhashable attributes bypass the cache."""
    cache = functools.lru_cache(maxsize=4096)(lambda name, dt, items, *rest: spec(name, dt, dict(items), *rest))

    def get(name, dt, kw, *rest):
        try:
            return cache(name, dt, tuple(sorted(kw.items())), *rest)
        except TypeError:
            return spec(name, dt, kw, *rest)
    return get


_BOOL_OUT = ("isnan", "isinf", "isfinite", "logical_not", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
             "logical_or", "logical_xor")


@_cached
def _unary_spec(name, dt, kw):
    return _unary_expr(name, dt, kw), (_dt.bool if name in _BOOL_OUT else dt)


@_cached
def _binary_spec(name, dt, kw, pattern):
    """(expr, out dtype, number of tensor inputs, number of scalars); ``pattern`` says which of (a, b) are tensors.
    Tensors become loads x{j}, Python scalars s{j} (s0 is alpha)."""
    names, n_in, n_sc = [], 0, 1
    for is_t in pattern:
        if is_t:
            names.append(f"x{n_in}")
            n_in += 1
        else:
            names.append(f"s{n_sc}")
            n_sc += 1
    expr = re.sub(r"\bx([01])\b", lambda mt: names[int(mt.group(1))], _binary_expr(name, dt, kw))
    return expr, (_dt.bool if name in _BOOL_OUT else dt)


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
        try:
            expr, out_dt = _unary_spec(name, dt, kw)
        except KeyError:
            raise RuntimeError(f"webgpu: '{name}' is not implemented for {dt}") from None
        scalars = [(kw["nan"], dt), (kw["posinf"], dt), (kw["neginf"], dt)] if name == "nan_to_num" else []
        return be._ew(name, expr, [a], scalars, out_dt, a.shape)
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
        try:
            expr, out_dt = _binary_spec(name, dt, kw, (_is_arr(a), _is_arr(b)))
        except KeyError:
            raise RuntimeError(f"webgpu: '{name}' is not implemented for {dt}") from None
        scalars = [(kw.get("alpha", 1), dt)] + [(x, dt) for x in (a, b) if not _is_arr(x)]
        shape = _bshape([x.shape for x in arrs])
        return be._ew(name, expr, arrs, scalars, out_dt, shape, out=_out)
    return k


for _n in _BINARY_NAMES:
    KERNELS.add(_n, _binary(_n))


def _zero_div_check(be, b):
    from .reduce import any_nonzero
    if _is_arr(b):
        if any_nonzero(be, be._ew("eqz", "(x0 == 0)", [b], [], _dt.bool, b.shape)):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0:
        raise RuntimeError("ZeroDivisionError")


@KERNELS.register("where")
def _where(be, c, a, b):
    if not any(_is_arr(x) for x in (a, b)):
        raise RuntimeError("where: expected a tensor operand")
    dt = next(x.dtype for x in (a, b) if _is_arr(x))
    ins, names, scalars = [c], [], []
    for x in (a, b):
        if _is_arr(x):
            ins.append(x)
            names.append(f"x{len(ins) - 1}")
        else:
            scalars.append((x, dt))
            names.append(f"s{len(scalars) - 1}")
    shape = _bshape([x.shape for x in ins])
    return be._ew("where", f"select({names[1]}, {names[0]}, x0 != 0)", ins, scalars, dt, shape,
                  ct=wgsl.value_type(dt))


@KERNELS.register("threshold_backward")
def _threshold_backward(be, g, x, threshold):
    shape = _bshape([g.shape, x.shape])
    if _isf(x.dtype):
        expr = _R.expression(formulas.BY_NAME["threshold_backward"], ["x0", "x1"], {"threshold": "s0"})
    else:
        expr = "select(x0, 0, x1 <= s0)"
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
        if f:  # NaN stays NaN, in the input or the bound
            cmp = "<" if fn == "max" else ">"
            e = f"select(select({e}, {name}, {e} {cmp} {name} || isnan_({name})), {e}, isnan_({e}))"
        else:
            e = f"{fn}({e}, {name})"
    shape = _bshape([x.shape for x in ins])
    return be._ew("clamp", e, ins, scalars, dt, shape)


KERNELS.add("to_dtype", lambda be, a, dtype: be.cast(a, dtype))
