"""The elementwise kernel formulas, each declared once (PyTorch's ``tags: pointwise`` entries, written as code).

A ``Formula`` is the op's math as a Python function over ``expr`` nodes, plus what a code generator needs to know:
the attributes read as run-time constants, the output kind, the targets it is rendered for, whether a fused
kernel may contain it. ``render.py`` writes it as C++, OpenCL C or CUDA C; ``native.py`` turns the ``cpp``
formulas into the op codes and loops of ``tinytorch._C`` at build time. The NumPy kernels
(``backends/cpu/pointwise.py``) stay hand-written: they are the reference every rendering is tested against.

Adding an elementwise formula: append a ``Formula`` below (``op`` the tinytorch op it computes when its name
differs). Rebuilding the extension gives it a native op code (``_C.UNARY_OPS``/``_C.BINARY_OPS``) and loop; an op
with a NumPy kernel whose formula needs no attributes is then registered as a native kernel
(``backends/cpu/native.py``); ``fusible`` adds it to the fused C++ and OpenCL kernels of ``tinytorch.compile``.
"""
from . import expr as E
from .expr import attr, call, eq, erf, exp, fabs, isinf, isnan, log, maximum, minimum, rsqrt, sigmoid, sqrt, tanh
from .expr import const as c
from .expr import where

TARGETS = ("cpp", "opencl", "wgsl")  # the cuda device compiles the OpenCL rendering (render.CUDARenderer); wgsl:
# the webgpu device (render.WGSLRenderer)

_SQRT1_2 = 0.70710678118654752440   # 1 / sqrt(2)
_INV_SQRT_2PI = 0.39894228040143267794  # 1 / sqrt(2 pi)
_SQRT_2_PI = 0.79788456080286535588  # sqrt(2 / pi)


class Formula:
    """One elementwise formula.

    name      unique name (the native op code is ``BIN_``/``UN_`` + its upper-case name);
    fn        the formula: a function of ``arity`` operand nodes returning a node;
    op        the tinytorch op it computes (default: ``name``);
    attrs     attribute names read as run-time constants, in the order the native kernel takes its scalars;
              ``name:bool`` for a flag;
    out       'same' (the operands' dtype) or 'bool';
    fusible   ``tinytorch.compile`` may fuse it: a fused kernel rounds it exactly as the unfused kernel does. Both
              renderings come from this one source and are compiled without multiply-add contraction (the native
              loops of ``csrc/kernels/pointwise.inc``, the fused C++ of ``compiler/codegen_cpp.py``; the OpenCL
              elementwise and fused kernels), with the same ``vec_math.h`` polynomials or libm calls. The C++
              fused kernels run only beside the native loops (not with ``TINYTORCH_NATIVE=0``, whose NumPy
              kernels round exp, tanh, log... their own way);
    when      {attribute: value} the op's call must have for this formula to apply (``approximate='tanh'``);
    defaults  {attribute: value} a call may pass that changes nothing (``alpha=1``);
    targets   the renderers it is written for (``TARGETS``): a formula without ``cpp`` has no native loop yet.
    """

    __slots__ = ("name", "fn", "arity", "op", "attrs", "attr_kinds", "out", "fusible", "when", "defaults",
                 "targets", "params", "root")

    def __init__(self, name, fn, *, op=None, attrs=(), out="same", fusible=False, when=None, defaults=None,
                 targets=TARGETS):
        self.name = name
        self.fn = fn
        code = fn.__code__
        self.arity = code.co_argcount
        self.params = code.co_varnames[:self.arity]
        self.op = op or name
        self.attrs = tuple(a.split(":")[0] for a in attrs)
        self.attr_kinds = tuple("bool" if a.endswith(":bool") else "T" for a in attrs)
        self.out = out
        self.fusible = fusible
        self.when = dict(when or {})
        self.defaults = dict(defaults or {})
        self.targets = tuple(targets)
        self.root = fn(*(E.arg(i) for i in range(self.arity)))

    def __repr__(self):
        return f"Formula({self.name})"

    def accepts(self, kw, nargs=None):
        """Whether a call of ``self.op`` with attributes ``kw`` (and ``nargs`` operands) is this formula."""
        if nargs is not None and nargs != self.arity:
            return False
        kw = kw or {}
        for k, v in kw.items():
            if k in self.attrs:
                if type(v) not in (int, float, bool):
                    return False
            elif k in self.when:
                if v != self.when[k]:
                    return False
            elif not (k in self.defaults and v == self.defaults[k] and type(v) is type(self.defaults[k])):
                return False
        if any(a not in kw for a in self.attrs):
            return False
        return all(k in kw or self.defaults.get(k, object()) == v for k, v in self.when.items())


def _clamp(a):
    lo, hi = attr("min"), attr("max")
    r = where(attr("has_min", bool), where(a < lo, lo, a), a)
    r = where(attr("has_max", bool), where(r > hi, hi, r), r)
    return where(isnan(a), a, r)


def _gelu_backward(g, x):
    # phi's exponent -x^2/2 written as -u * u with u = x / sqrt(2), erf's own argument: the C++ rendering then
    # shares the range reduction and polynomial of the exp inside vec_math.h's tt_erf(u) (one exp, not two:
    # ~1.4x faster); -u * u is -x^2/2 to within 2 ulp, a relative change of phi below 1e-6 where it matters
    u = x * _SQRT1_2
    cdf = c(0.5) * (1 + erf(u))
    pdf = exp(-u * u) * _INV_SQRT_2PI
    return g * (cdf + x * pdf)


def _gelu_tanh_backward(g, x):
    kb, kk = c(_SQRT_2_PI), c(0.044715)
    x2 = x * x
    inner = kb * (x + kk * x2 * x)
    t = tanh(inner)
    left, right = c(0.5) * x, 1 + t
    dinner = kb * (1 + c(3) * kk * x2)
    return g * (c(0.5) * right + left * (1 - t * t) * dinner)


def _silu_backward(g, x):
    sg = sigmoid(x)
    return g * sg * (1 + x * (1 - sg))


def _spherical_bessel_j0(x):
    # ATen's spherical_bessel_j0_forward (Math.h): its Taylor series below |x| = 0.5, 0 at +-inf
    x2 = x * x
    series = 1 + x2 * (c(-1) / c(6) + x2 * (c(1) / c(120) + x2 * (c(-1) / c(5040) + x2 * (
        c(1) / c(362880) + x2 * (c(-1) / c(39916800) + x2 * (c(1) / c(6227020800)))))))
    return where(isinf(x), 0, where(fabs(x) < 0.5, series, call("sin", x) / x))


# the GPU backends with a math library of their own (webgpu supplies the calls WGSL lacks as helpers)
_OPENCL = ("opencl", "wgsl")


def _libm(name):
    def f(a):
        return call(name, a)
    return f


FORMULAS = [
    # ---- binary: the native loops of csrc/kernels/pointwise.inc, the fused kernels, OpenCL
    Formula("add", lambda a, b: a + b, fusible=True, defaults={"alpha": 1}),
    Formula("add_alpha", lambda a, b: a + attr("alpha") * b, op="add", attrs=("alpha",)),
    Formula("sub", lambda a, b: a - b, fusible=True, defaults={"alpha": 1}),
    Formula("sub_alpha", lambda a, b: a - attr("alpha") * b, op="sub", attrs=("alpha",)),
    Formula("mul", lambda a, b: a * b, fusible=True),
    Formula("div", lambda a, b: a / b, fusible=True, defaults={"rounding_mode": None}),
    Formula("maximum", maximum, fusible=True),
    Formula("minimum", minimum, fusible=True),
    Formula("eq", eq, out="bool"),
    Formula("ne", E.ne, out="bool"),
    Formula("lt", lambda a, b: a < b, out="bool"),
    Formula("le", lambda a, b: a <= b, out="bool"),
    Formula("gt", lambda a, b: a > b, out="bool"),
    Formula("ge", lambda a, b: a >= b, out="bool"),
    # relu's gradient: g where x > threshold, else 0
    Formula("threshold_backward", lambda g, x: where(x <= attr("threshold"), 0, g), attrs=("threshold",),
            fusible=True),
    # sigmoid's and tanh's gradients from the saved output
    Formula("sigmoid_backward", lambda g, y: g * (1 - y) * y, fusible=True),
    Formula("tanh_backward", lambda g, y: g * (1 - y * y), fusible=True),
    Formula("gelu_backward", _gelu_backward, when={"approximate": "none"}, defaults={"approximate": "none"},
            fusible=True),
    Formula("gelu_tanh_backward", _gelu_tanh_backward, op="gelu_backward", when={"approximate": "tanh"},
            fusible=True),
    Formula("silu_backward", _silu_backward, fusible=True),
    # ---- unary
    Formula("neg", lambda a: -a, fusible=True),
    # -0 gives +0, NaN stays NaN
    Formula("abs", lambda a: where(a < 0, -a, where(eq(a, 0), 0, a)), fusible=True),
    Formula("exp", exp, fusible=True),
    Formula("sqrt", sqrt, fusible=True),
    Formula("rsqrt", rsqrt, fusible=True),
    Formula("reciprocal", lambda a: 1 / a, fusible=True),
    Formula("tanh", tanh, fusible=True),
    Formula("sigmoid", sigmoid, fusible=True),
    Formula("relu", lambda a: where(isnan(a), a, where(a > 0, a, 0)), fusible=True),
    Formula("silu", lambda a: a * sigmoid(a), fusible=True),
    Formula("gelu", lambda a: a * c(0.5) * (1 + erf(a * _SQRT1_2)), when={"approximate": "none"},
            defaults={"approximate": "none"}, fusible=True),
    Formula("gelu_tanh", lambda a: c(0.5) * a * (1 + tanh(_SQRT_2_PI * (a + c(0.044715) * a * a * a))),
            op="gelu", when={"approximate": "tanh"}, fusible=True),
    Formula("square", lambda a: a * a, fusible=True),
    # NaN stays NaN; a bound is applied only when given (has_min / has_max)
    Formula("clamp", _clamp, attrs=("min", "max", "has_min:bool", "has_max:bool")),
    # libm's log, not correctly rounded: fusible because the native loop and a fused kernel call the same one
    Formula("log", log, fusible=True),
    # ---- the float unary ops the OpenCL backend computes with its device's math library (no native loop yet)
    *(Formula(n, _libm(n), targets=_OPENCL)
      for n in ("exp2", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                "cosh", "erfinv")),
    Formula("erf", erf, targets=_OPENCL),
    Formula("special_spherical_bessel_j0", _spherical_bessel_j0, targets=_OPENCL),
]

BY_NAME = {f.name: f for f in FORMULAS}
if len(BY_NAME) != len(FORMULAS):
    raise RuntimeError("two formulas share a name")


def for_target(target):
    """The formulas rendered for ``target`` ('cpp', 'opencl' or 'wgsl'), in declaration order."""
    return [f for f in FORMULAS if target in f.targets]


def native():
    """(binary, unary): the formulas with a native loop in ``tinytorch._C``, in op-code order."""
    fs = for_target("cpp")
    return [f for f in fs if f.arity == 2], [f for f in fs if f.arity == 1]


def select(op, kw=None, nargs=None, target=None, fusible=None):
    """The first formula computing op ``op`` called with attributes ``kw`` (and ``nargs`` operands), rendered
    for ``target`` and, when ``fusible`` is given, with that flag; None when there is none."""
    for f in FORMULAS:
        if f.op == op and (target is None or target in f.targets) and (fusible is None or f.fusible == fusible) \
                and f.accepts(kw, nargs):
            return f
    return None


def fusible_ops():
    """The ops that have a fusible formula (``Op.fusible``)."""
    return frozenset(f.op for f in FORMULAS if f.fusible)
