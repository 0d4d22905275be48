"""Pointwise ops: each is defined once here (meta, backward formula in tinytorch ops, decomposition).

Primitive ops have a kernel in every backend; composite ones (``silu``, ``lerp`` ...) are written in
primitives and get their gradient from them. More elementwise functions written in these ops are in
``unary.py`` (asinh, erfc, sinc, signbit ...) and ``binary.py`` (hypot, logaddexp, copysign, gcd ...).
"""
import builtins
import math

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import COMPLEX_DTYPES, defop, dispatch, refuse, same_shape_meta
from .._tensor import Tensor
from ._util import check_arg, check_dtype, method, scalar_check

_FLOAT = 2


# ATen's kernel names and scalar type names, for torch's "not implemented for" messages
_KERNEL_NAME = {"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}
_TORCH_TYPE_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                    "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _meta(kind, name="bitwise"):
    """Meta function for a pointwise op. kind: 'same' | 'float' | 'bool' | 'int' | 'logical'."""
    def meta(*args, **kw):
        if kind == "same" and len(args) == 2:
            a, b = args
            # fast path: two tensors of one dtype and shape need neither broadcasting nor promotion
            if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype and a._shape == b._shape:
                return [(a._shape, a.dtype)], (None, None)
        tensors = []
        scalars = []
        for a in args:
            if isinstance(a, Tensor):
                tensors.append(a)
            elif a is not None:
                scalars.append(a)
        if len(tensors) == 1:
            shape = tensors[0]._shape
            if not scalars:
                ct = tensors[0].dtype
            else:
                ct = _dt.result_type_of(tensors, scalars)
        else:
            shape = _strides.broadcast_shapes(*(t._shape for t in tensors))
            ct = _dt.result_type_of(tensors, scalars)
        if kind == "float":
            if ct.category < _FLOAT:
                ct = _dt.get_default_dtype()
            out = ct
        elif kind == "bool":
            out = _dt.bool
        elif kind == "logical":
            out = _dt.bool
            ct = None
        elif kind == "int":
            if ct.is_floating_point or ct.is_complex:
                raise NotImplementedError(f"\"{_KERNEL_NAME.get(name, name)}_cpu\" not implemented for "
                                          f"'{_TORCH_TYPE_NAME.get(ct.name, ct.name)}'")
            out = ct
        else:
            out = ct
        return [(shape, out)], [ct if isinstance(a, Tensor) else None for a in args]
    return meta


_same, _float, _bool, _int, _logical = (_meta(k) for k in ("same", "float", "bool", "int", "logical"))
same_shape_meta(_same)


def _unary(name, kind, backward=None, save_output=False, save_inputs=True, doc=None, meta=None, inplace=True,
           **flags):
    flags.setdefault("elementwise", True)
    op = defop(name, meta or (_same if kind == "same" else _float if kind == "float" else _bool), backward,
               save_inputs=save_inputs, save_output=save_output, **flags)

    def fn(input):
        return dispatch(op, (input,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or (f"Elementwise ``{name}`` of ``input`` (any shape). Returns a tensor of the same shape "
                         f"({'floating: integer inputs promote to the default dtype' if kind == 'float' else 'same dtype'}). "
                         f"Mirrors ``torch.{name}``.")
    method(name)(fn)
    if inplace:  # False: the op declares its own ``name_`` (with checks of its own)
        method(name + "_")(lambda self: self._inplace(fn))
    return fn


def _binary(name, kind, backward=None, save_inputs=True, doc=None, tensor_only=False, number_input=False, **flags):
    """Define binary op ``name``. ``tensor_only``: PyTorch's signature takes Tensors only (``maximum(x, 1.5)``
    is its argument parser's TypeError); otherwise ``other`` may also be a Number, and ``input`` too when
    ``number_input`` (PyTorch has a Scalar-self overload)."""
    meta = _meta("int", name) if kind == "int" else \
        {"same": _same, "float": _float, "bool": _bool, "logical": _logical}[kind]
    flags.setdefault("elementwise", True)
    op = defop(name, meta, backward, save_inputs=save_inputs, **flags)

    def make(pub):
        def fn(input, other):
            if tensor_only:
                check_arg(pub, "input", 1, input, "Tensor")
                check_arg(pub, "other", 2, other, "Tensor")
            elif not isinstance(other, (Tensor, int, float, builtins.complex, bool)) or \
                    not (number_input or isinstance(input, Tensor)):
                # only ops with a (Number self, Tensor other) overload (mul, remainder, bitwise_*) take a
                # Number input; the others' overloads are (Tensor, Tensor) and (Tensor, Number)
                raise TypeError(f"{pub}() received an invalid combination of arguments - got "
                                f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
                                f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                                f" * (Tensor input, Number other, *, Tensor out = None)\n")
            return dispatch(op, (input, other))
        fn.__name__ = fn.__qualname__ = pub
        fn.__doc__ = doc or (f"Elementwise ``{pub}(input, other)`` with broadcasting and type promotion; "
                             f"RuntimeError when the shapes do not broadcast. Mirrors ``torch.{pub}``.")
        return fn
    fn = make(name)
    fn._alias = make  # the same op under another public name (its errors name the alias, as PyTorch's)
    method(name)(fn)
    method(name + "_")(lambda self, other: self._inplace(fn, other))
    return fn


def _cj(x):
    """Conjugate of a complex tensor or scalar (complex backward formulas use conjugate derivatives)."""
    if isinstance(x, Tensor):
        if x.dtype.is_complex:
            from .complex import conj
            return conj(x)
        return x
    return x.conjugate() if isinstance(x, builtins.complex) else x


def _sgn(x):
    if x.dtype.is_complex:
        from .complex import sgn
        return sgn(x)
    return sign(x)


def _zero_grad(ctx, g):
    # PyTorch gives piecewise-constant ops (sign, floor, round ...) a zero gradient, not an absent one
    from .creation import zeros
    return zeros(g._shape, dtype=g.dtype, device=g.device)


# ---- float unary ops ----------------------------------------------------------------------------
exp = _unary("exp", "float", lambda c, g: g * _cj(c.out), save_output=True, save_inputs=False, complex_grad=True)
exp2 = _unary("exp2", "float", lambda c, g: g * c.out * math.log(2.0), save_output=True, save_inputs=False)
expm1 = _unary("expm1", "float", lambda c, g: g * (c.out + 1), save_output=True, save_inputs=False)
log = _unary("log", "float", lambda c, g: g / c.inputs[0])
log2 = _unary("log2", "float", lambda c, g: g / (c.inputs[0] * math.log(2.0)))
log10 = _unary("log10", "float", lambda c, g: g / (c.inputs[0] * math.log(10.0)))
log1p = _unary("log1p", "float", lambda c, g: g / (c.inputs[0] + 1))
sqrt = _unary("sqrt", "float", lambda c, g: g / (c.out * 2), save_output=True, save_inputs=False)
rsqrt = _unary("rsqrt", "float", lambda c, g: g * c.out.pow(3) * -0.5, save_output=True, save_inputs=False)
sin = _unary("sin", "float", lambda c, g: g * cos(c.inputs[0]))
cos = _unary("cos", "float", lambda c, g: -g * sin(c.inputs[0]))
tan = _unary("tan", "float", lambda c, g: g * (c.out * c.out + 1), save_output=True, save_inputs=False)
asin = _unary("asin", "float", lambda c, g: g * rsqrt(1 - c.inputs[0] * c.inputs[0]))
acos = _unary("acos", "float", lambda c, g: -g * rsqrt(1 - c.inputs[0] * c.inputs[0]))
atan = _unary("atan", "float", lambda c, g: g / (c.inputs[0] * c.inputs[0] + 1))
sinh = _unary("sinh", "float", lambda c, g: g * cosh(c.inputs[0]))
cosh = _unary("cosh", "float", lambda c, g: g * sinh(c.inputs[0]))
tanh = _unary("tanh", "float", lambda c, g: g * (1 - c.out * c.out), save_output=True, save_inputs=False)
sigmoid = _unary("sigmoid", "float", lambda c, g: g * c.out * (1 - c.out), save_output=True, save_inputs=False)
reciprocal = _unary("reciprocal", "float", lambda c, g: -g * c.out * c.out, save_output=True, save_inputs=False)
erf = _unary("erf", "float", lambda c, g: g * exp(-c.inputs[0] * c.inputs[0]) * (2 / math.sqrt(math.pi)),
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"erf_vml_cpu\" not implemented for '{T}'"))
# derivatives.yaml recomputes self.erfinv(): it saves self, not the result
erfinv = _unary("erfinv", "float", lambda c, g: g * exp(erfinv(c.inputs[0]).pow(2)) * (math.sqrt(math.pi) / 2),
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"erfinv_vml_cpu\" not implemented for '{T}'"))
arcsin, arccos, arctan = asin, acos, atan

# ---- dtype-preserving unary ops --------------------------------------------------------------------
def _neg_meta(a):
    if a.dtype is _dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    return _same(a)


neg = _unary("neg", "same", lambda c, g: -g, save_inputs=False, meta=_neg_meta, complex_grad=True)
negative = neg
def _abs_meta(a):
    outs, casts = _same(a)
    if a.dtype.is_complex:
        return [(outs[0][0], a.dtype.to_real())], casts
    return outs, casts


abs = _unary("abs", "same", lambda c, g: g * _sgn(c.inputs[0]), meta=_abs_meta, complex_grad=True, inplace=False,
             doc="Elementwise absolute value; for complex input the modulus, a float tensor (``torch.abs``).",
    refused=refuse(("bool",), NotImplementedError, "\"abs_cpu\" not implemented for '{T}'"))
absolute = abs


def _abs_(self):
    """In-place ``abs``. RuntimeError for complex ``self``, as PyTorch (the modulus is real: no complex result
    to write back)."""
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return self._inplace(abs)


method("abs_")(_abs_)
method("absolute_")(_abs_)
def _sign_meta(a):
    if a.dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    return _same(a)


sign = _unary("sign", "same", _zero_grad, save_inputs=False, meta=_sign_meta)
floor = _unary("floor", "same", _zero_grad, save_inputs=False,
    refused={**refuse(("bool",), NotImplementedError, "\"floor_vml_cpu\" not implemented for '{T}'"),
             **refuse(COMPLEX_DTYPES, NotImplementedError, "floor is not supported for complex inputs")})
ceil = _unary("ceil", "same", _zero_grad, save_inputs=False,
    refused={**refuse(("bool",), NotImplementedError, "\"ceil_vml_cpu\" not implemented for '{T}'"),
             **refuse(COMPLEX_DTYPES, NotImplementedError, "ceil is not supported for complex inputs")})
trunc = _unary("trunc", "same", _zero_grad, save_inputs=False,
    refused={**refuse(("bool",), NotImplementedError, "\"trunc_vml_cpu\" not implemented for '{T}'"),
             **refuse(COMPLEX_DTYPES, NotImplementedError, "trunc is not supported for complex inputs")})
fix = trunc
# ---- threshold_backward: the gradient of relu / threshold, one op instead of a compare and a product ----
def _threshold_bw_meta(g, x, threshold):
    return [(_strides.broadcast_shapes(g._shape, x._shape), g.dtype)], [None, None]


def _threshold_bw_decomp(g, x, threshold):
    return where(x <= threshold, 0, g)


def _threshold_bw_bw(c, gg):
    # linear in the gradient; piecewise constant in x, so x gets no gradient (as in PyTorch)
    return dispatch(_threshold_backward_op, (gg, c.inputs[1]), c.kw), None


_threshold_backward_op = defop("threshold_backward", _threshold_bw_meta, _threshold_bw_bw,
                               decomp=_threshold_bw_decomp, save_inputs=(1,), elementwise=True)  # self only


def _threshold_backward(grad_output, input, threshold):
    """``0 where input <= threshold, else grad_output`` (ATen's ``threshold_backward``, the gradient of relu
    and threshold). ``grad_output`` and ``input`` broadcast; the result has ``grad_output``'s dtype. A NaN in
    ``input`` passes the gradient, a NaN in ``grad_output`` below the threshold does not, as in PyTorch."""
    return dispatch(_threshold_backward_op, (grad_output, input), {"threshold": threshold})


relu = _unary("relu", "same", lambda c, g: _threshold_backward(g, c.out, 0), save_output=True, save_inputs=False,
              doc="max(input, 0) elementwise, same shape and dtype. Mirrors ``torch.relu``.",
    refused={**refuse(("bool",), RuntimeError, "Boolean inputs not supported for relu"),
             **refuse(COMPLEX_DTYPES, NotImplementedError, "clamp is not supported for complex types")})
isnan = _unary("isnan", "bool")
isinf = _unary("isinf", "bool")
isfinite = _unary("isfinite", "bool")
logical_not = _unary("logical_not", "bool")

_round_op = defop("round", _same, _zero_grad, save_inputs=False,
    refused=refuse(("bool",) + COMPLEX_DTYPES, NotImplementedError, "\"round_vml_cpu\" not implemented for '{T}'"),
    elementwise=True)


@method("round")
def round(input, *, decimals=0):
    """Round to ``decimals`` decimal places, halves to even, as ``torch.round``. TypeError for a non-int
    ``decimals``; NotImplementedError for integer input with nonzero ``decimals`` (as PyTorch)."""
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    if decimals and not input.dtype.is_floating_point:
        from .movement import _SCALAR_TYPE
        raise NotImplementedError(f"\"round_cpu\" not implemented for '{_SCALAR_TYPE.get(input.dtype.name)}'")
    # 10 ** decimals is inf (or 0) in every float dtype far before this bound; the kernel's int must not overflow
    decimals = builtins.max(-1000, builtins.min(decimals, 1000))
    return dispatch(_round_op, (input,), {"decimals": decimals} if decimals else {})


method("round_")(lambda self, decimals=0: self._inplace(round, decimals=decimals))


def _bitwise_not_meta(a):
    if a.dtype.is_floating_point or a.dtype.is_complex:
        raise NotImplementedError(f"\"bitwise_not_cpu\" not implemented for "
                                  f"'{_TORCH_TYPE_NAME.get(a.dtype.name, a.dtype.name)}'")
    return [(a._shape, a.dtype)], [None]


bitwise_not = method("bitwise_not")(lambda input: dispatch(_bitwise_not_op, (input,)))
_bitwise_not_op = defop("bitwise_not", _bitwise_not_meta, elementwise=True)


@method("frac")
def frac(input):
    """``input - trunc(input)`` elementwise (``torch.frac``). NotImplementedError for integral, bool and complex
    input (PyTorch's kernel is floating point only)."""
    check_dtype("frac_cpu", input.dtype, floating=True)
    return input - trunc(input).detach()


@method("positive")
def positive(input):
    """``+input``: the input itself (``torch.positive``); RuntimeError for a bool tensor, as PyTorch."""
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- binary arithmetic ----------------------------------------------------------------------------
def _add_bw(sign):
    def bw(c, g):
        a = c.kw.get("alpha", 1)
        return g, (g * (sign * a) if sign * a != 1 else g)
    return bw


_add_op = defop("add", _same, _add_bw(1), save_inputs=False, complex_grad=True, elementwise=True)
_sub_op = defop("sub", _same, _add_bw(-1), save_inputs=False, complex_grad=True, elementwise=True)


def _alpha_check(fn, alpha):
    """PyTorch's argument parser for ``alpha``: a Number (a one-element tensor counts), else TypeError."""
    if not isinstance(alpha, (int, float, builtins.complex)) and not (isinstance(alpha, Tensor) and
                                                                     alpha.numel() == 1):
        raise TypeError(f"{fn}(): argument 'alpha' must be Number, not {type(alpha).__name__}")


@method("add")
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` with broadcasting and type promotion (``torch.add``).

    RuntimeError when the shapes do not broadcast; TypeError when ``alpha`` is not a Number.
    """
    _alpha_check("add", alpha)
    r = dispatch(_add_op, (input, other), {"alpha": alpha} if alpha != 1 else None)
    return r


def _sub_check(a, b):
    """PyTorch's sub_check: RuntimeError when either operand is bool (a Python bool counts as a bool tensor, as
    PyTorch wraps it), with its own message when both are."""
    ba = a.dtype is _dt.bool if isinstance(a, Tensor) else isinstance(a, bool)
    bb = b.dtype is _dt.bool if isinstance(b, Tensor) else isinstance(b, bool)
    if ba and bb:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if ba or bb:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@method("sub")
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` with broadcasting (``torch.sub``). Bool tensors raise RuntimeError; TypeError
    when ``alpha`` is not a Number."""
    _alpha_check("sub", alpha)
    _sub_check(input, other)
    r = dispatch(_sub_op, (input, other), {"alpha": alpha} if alpha != 1 else None)
    return r


subtract = sub
@method("add_")
def _add_(self, other, *, alpha=1):
    """``Tensor.add_``: ``add`` written into ``self``."""
    _alpha_check("add_", alpha)
    return self._inplace(add, other, alpha=alpha)
@method("sub_")
def _sub_(self, other, *, alpha=1):
    """``Tensor.sub_``: ``sub`` written into ``self`` (bool operands refused first, as ``sub``)."""
    _alpha_check("sub_", alpha)
    _sub_check(self, other)
    return self._inplace(sub, other, alpha=alpha)


method("subtract_")(_sub_)
method("subtract")(sub)


def _mul_bw(c, g):
    a, b = c.inputs
    return (g * _cj(b) if c.next_edges[0] is not None else None), (g * _cj(a) if c.next_edges[1] is not None else None)


# derivatives.yaml: self's formula names other and other's names self, each saved only for the other's gradient
mul = _binary("mul", "same", _mul_bw, number_input=True, save_inputs=((0, (1,)), (1, (0,))), complex_grad=True)
multiply = mul
method("multiply")(mul)


def _div_bw(c, g):
    if c.kw.get("rounding_mode") is not None:
        return None, None
    a, b = _cj(c.inputs[0]), _cj(c.inputs[1])
    ga = g / b if c.next_edges[0] is not None else None
    gb = -g * a / (b * b) if c.next_edges[1] is not None else None
    return ga, gb


def _div_meta(a, b, rounding_mode=None):
    if rounding_mode is None:
        return _float(a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    for t in (a, b):
        if isinstance(t, Tensor) and t.dtype.is_complex:
            raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for "
                                      f"'{'ComplexFloat' if t.dtype is _dt.complex64 else 'ComplexDouble'}'")
    return _same(a, b)


# other is named by both formulas (always saved), self by other's only
_div_op = defop("div", _div_meta, _div_bw, save_inputs=((0, (1,)), 1), complex_grad=True, elementwise=True)


@method("div")
def div(input, other, *, rounding_mode=None, out=None):
    """``input / other`` (true division; ``rounding_mode`` 'trunc' or 'floor'), as ``torch.div``."""
    r = dispatch(_div_op, (input, other), {"rounding_mode": rounding_mode} if rounding_mode else None)
    return r


divide = true_divide = div
method("divide")(div)
method("true_divide")(div)
method("div_")(lambda self, other, *, rounding_mode=None: self._inplace(div, other, rounding_mode=rounding_mode))


@method("floor_divide")
def floor_divide(input, other):
    """``floor(input / other)`` elementwise (``torch.floor_divide``). NotImplementedError when both are bool."""
    if (isinstance(input, Tensor) and input.dtype is _dt.bool and
            (other.dtype is _dt.bool if isinstance(other, Tensor) else isinstance(other, bool))):
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    return div(input, other, rounding_mode="floor")


def _remainder_bw(c, g):
    a, b = c.inputs
    return g, (-g * div(a, b, rounding_mode="floor") if isinstance(b, Tensor) else None)


def _fmod_bw(c, g):
    a, b = c.inputs
    return g, (-g * div(a, b, rounding_mode="trunc") if isinstance(b, Tensor) else None)


remainder = _binary("remainder", "same", number_input=True, backward=_remainder_bw, save_inputs=((0, (1,)), (1, (1,))),
    refused=refuse(("bool",) + COMPLEX_DTYPES, NotImplementedError, "\"remainder_cpu\" not implemented for '{T}'"))
fmod = _binary("fmod", "same", _fmod_bw, save_inputs=((0, (1,)), (1, (1,))),
    refused=refuse(("bool",) + COMPLEX_DTYPES, NotImplementedError, "\"fmod_cpu\" not implemented for '{T}'"))


def _pow_bw(c, g):
    a, b = c.inputs
    ga = gb = None
    if isinstance(b, Tensor):
        # a tensor exponent: PyTorch's node saves the result (the exponent's formula) whichever gradient is
        # wanted, and unpacks it in every backward, so an in-place change of it fails backward here too
        c.out
    if c.next_edges[0] is not None:
        if isinstance(b, Tensor):
            # derivatives.yaml pow_backward_self: 0 where the exponent is 0, also at a 0 base (0 * inf)
            ga = where(b == 0, 0.0, g * b * pow(a, b - 1))
        else:
            ga = g * (b * pow(a, b - 1)) if b != 0 else g * 0
    if len(c.next_edges) > 1 and c.next_edges[1] is not None:
        out = c.out
        if isinstance(a, Tensor):
            gb = where((a == 0) & (b >= 0), 0.0, g * out * log(a))
        else:
            # pow_backward_exponent with a scalar base: log(0) = -inf (so 0 ** -1 gets -inf), 0 for b >= 0
            la = math.log(a) if a > 0 else -math.inf if a == 0 else math.nan
            gb = g * out * la
            if a == 0:
                gb = where(b >= 0, 0.0, gb)
    return ga, gb


_pow_op = defop("pow", _same, _pow_bw, save_output=True, elementwise=True)  # result: exponent's formula


@method("pow")
def pow(input, exponent):
    """``input ** exponent`` with broadcasting (``torch.pow``); integer tensors to negative integer powers raise.
    As PyTorch: NotImplementedError for a bool base to a bool tensor power, and RuntimeError for a scalar
    exponent that the base's integer, float16 or bfloat16 dtype cannot hold."""
    _pow_check(input, exponent)
    return dispatch(_pow_op, (input, exponent))


_C_TYPE = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t",
           "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _pow_check(input, exponent):
    if isinstance(exponent, Tensor) and exponent.dtype is _dt.bool and (
            isinstance(input, bool) or (isinstance(input, Tensor) and input.dtype is _dt.bool)):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if not isinstance(input, Tensor) or isinstance(exponent, (Tensor, bool)) or \
            not isinstance(exponent, (int, float)):
        return
    d = input.dtype
    if not d.is_floating_point and not d.is_complex and isinstance(exponent, int) and exponent < 0:
        # checked before the exponent's range: uint8 ** -1 is this error, not an overflow
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if d.name not in _C_TYPE:
        return
    if d.is_floating_point:
        big = math.isfinite(exponent) and builtins.abs(exponent) > _dt.finfo(d).max
    elif isinstance(exponent, int):
        info = _dt.iinfo(d)
        big = not info.min <= exponent <= info.max
    else:
        return
    if big:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE[d.name]} without overflow")


@method("pow_")
def _pow_(self, exponent):
    """``Tensor.pow_``: ``pow`` written into ``self``."""
    return self._inplace(pow, exponent)


def _ipow(self, exponent):
    # ``x **= n``: Python's operator takes no argument parser, so a Scalar int past int64 gets its
    # OverflowError here (2**63 <= n < 2**64 is a uint64 Scalar, as PyTorch's)
    if exponent.__class__ is int and not -(1 << 63) <= exponent < (1 << 64):
        raise OverflowError("int too big to convert" if exponent > 0 else "can't convert negative int to unsigned")
    return self._inplace(pow, exponent)


def _atan2_bw(c, g):
    a, b = c.inputs
    d = a * a + b * b
    return g * b / d, -g * a / d


atan2 = _binary("atan2", "float", _atan2_bw, tensor_only=True,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"atan2_cpu\" not implemented for '{T}'"))
arctan2 = atan2


def _minmax_bw(which):
    def bw(c, g):
        # PyTorch's formula: half to each at a tie, none to the loser; where either is NaN neither comparison
        # holds, so both get the whole gradient
        a, b = c.inputs
        share = where(a == b, g * 0.5, g)
        a_loses, b_loses = (a < b, a > b) if which == "max" else (a > b, a < b)
        return where(a_loses, 0.0, share), where(b_loses, 0.0, share)
    return bw


maximum = _binary("maximum", "same", _minmax_bw("max"), tensor_only=True,
    refused=refuse(COMPLEX_DTYPES, RuntimeError, "maximum not implemented for complex tensors."))
minimum = _binary("minimum", "same", _minmax_bw("min"), tensor_only=True,
    refused=refuse(COMPLEX_DTYPES, RuntimeError, "minimum not implemented for complex tensors."))


def fmax(input, other):
    """Elementwise maximum that ignores NaN: the other value where one is NaN, NaN only where both are
    (``torch.fmax``, C's fmax). Broadcasts and promotes like ``maximum``; at ties the gradient goes to
    ``input``, as in torch."""
    check_arg("fmax", "input", 1, input, "Tensor")
    check_arg("fmax", "other", 2, other, "Tensor")
    return where((input >= other) | isnan(other), input, other)


def fmin(input, other):
    """Elementwise minimum that ignores NaN (``torch.fmin``); see ``fmax``."""
    check_arg("fmin", "input", 1, input, "Tensor")
    check_arg("fmin", "other", 2, other, "Tensor")
    return where((input <= other) | isnan(other), input, other)

# ---- comparisons, logical and bitwise ---------------------------------------------------------------
eq = _binary("eq", "bool")
ne = _binary("ne", "bool")
lt = _binary("lt", "bool",
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"lt_cpu\" not implemented for '{T}'"))
le = _binary("le", "bool",
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"le_cpu\" not implemented for '{T}'"))
gt = _binary("gt", "bool",
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"gt_cpu\" not implemented for '{T}'"))
ge = _binary("ge", "bool",
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "\"ge_cpu\" not implemented for '{T}'"))
greater, greater_equal, less, less_equal, not_equal = (
    f._alias(n) for f, n in ((gt, "greater"), (ge, "greater_equal"), (lt, "less"), (le, "less_equal"),
                             (ne, "not_equal")))
for _a, _f in (("greater", greater), ("greater_equal", greater_equal), ("less", less), ("less_equal", less_equal),
               ("not_equal", not_equal)):
    method(_a)(_f)
logical_and = _binary("logical_and", "logical", tensor_only=True)
logical_or = _binary("logical_or", "logical", tensor_only=True)
logical_xor = _binary("logical_xor", "logical", tensor_only=True)
bitwise_and = _binary("bitwise_and", "int", number_input=True)
bitwise_or = _binary("bitwise_or", "int", number_input=True)
bitwise_xor = _binary("bitwise_xor", "int", number_input=True)
bitwise_left_shift = _binary("bitwise_left_shift", "int", number_input=True,
    refused=refuse(("bool",), NotImplementedError, "\"lshift_cpu\" not implemented for '{T}'"))
bitwise_right_shift = _binary("bitwise_right_shift", "int", number_input=True,
    refused=refuse(("bool",), NotImplementedError, "\"rshift_cpu\" not implemented for '{T}'"))


# ---- where / clamp ----------------------------------------------------------------------------------
def _where_meta(cond, a, b):
    if not isinstance(cond, Tensor) or cond.dtype is not _dt.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{getattr(cond, 'dtype', type(cond).__name__)}")
    ts = [t for t in (a, b) if isinstance(t, Tensor)]
    sc = [s for s in (a, b) if not isinstance(s, Tensor)]
    ct = _dt.result_type_of(ts, sc)
    shape = _strides.broadcast_shapes(*(t._shape for t in (cond, *ts)))
    return [(shape, ct)], [None, ct if isinstance(a, Tensor) else None, ct if isinstance(b, Tensor) else None]


def _where_bw(c, g):
    cond = c.inputs[0]
    return None, where(cond, g, 0.0), where(cond, 0.0, g)


_where_op = defop("where", _where_meta, _where_bw, save_inputs=(0,), complex_grad=True, elementwise=True)  # condition


@method("where")
def where(condition, input=None, other=None):
    """``input`` where ``condition`` else ``other``, broadcast together (``torch.where``).

    ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.
    """
    if not isinstance(condition, Tensor) or not all(v is None or isinstance(v, (Tensor, int, float, builtins.complex))
                                                    for v in (input, other)):
        got = ", ".join(type(v).__name__ for v in (condition, input, other) if v is not None)
        raise TypeError(f"where() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor condition)\n * (Tensor condition, Tensor input, Tensor other)\n"
                        " * (Tensor condition, Number self, Tensor other)\n"
                        " * (Tensor condition, Tensor input, Number other)\n"
                        " * (Tensor condition, Number self, Number other)")
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor) and isinstance(condition, Tensor):
        # two scalars: the kernel needs one tensor operand to carry the result dtype
        from .creation import full
        input = full((), input, dtype=_dt.result_type_of([], [input, other]), device=condition.device)
    return dispatch(_where_op, (condition, input, other))


def _clamp_meta(a, lo=None, hi=None):
    ts = [t for t in (a, lo, hi) if isinstance(t, Tensor)]
    sc = [s for s in (lo, hi) if s is not None and not isinstance(s, Tensor)]
    ct = _dt.result_type_of(ts, sc)
    shape = _strides.broadcast_shapes(*(t._shape for t in ts))
    return [(shape, ct)], [ct if isinstance(t, Tensor) else None for t in (a, lo, hi)]


def _clamp_bw(c, g):
    a, lo, hi = c.inputs
    mask = None
    if lo is not None:
        mask = a >= lo
    if hi is not None:
        m2 = a <= hi
        mask = m2 if mask is None else mask & m2
    return where(mask, g, 0.0), None, None


_clamp_op = defop("clamp", _clamp_meta, _clamp_bw,
    refused=refuse(COMPLEX_DTYPES, NotImplementedError, "clamp is not supported for complex types"), elementwise=True)


def _clamp_tensor_bw(c, g):
    # PyTorch's clamp_backward / clamp_backward_min_max: the input keeps the gradient where it lies in
    # [min, max] (ties included), a bound takes it where it decided the value; a NaN anywhere decides nothing
    a, lo, hi = c.inputs
    if lo is not None and hi is not None:
        ga = where((a >= lo) & (a <= hi), g, 0.0)
        glo = where((a < lo) & (lo < hi), g, 0.0)
        ghi = where((a > hi) | (hi < lo), g, 0.0)
    elif lo is not None:
        ga, glo, ghi = where(a >= lo, g, 0.0), where(a < lo, g, 0.0), None
    else:
        ga, glo, ghi = where(a <= hi, g, 0.0), None, where(a > hi, g, 0.0)
    return ga, glo if isinstance(lo, Tensor) else None, ghi if isinstance(hi, Tensor) else None


def _clamp_tensor_values(a, lo=None, hi=None):
    out = a if lo is None else maximum(a, lo)  # NaN bounds and NaN input propagate, as PyTorch's clamp
    return out if hi is None else minimum(out, hi)


# clamp with a tensor bound: the values of min(max(x, lo), hi), the gradients of PyTorch's clamp
_clamp_tensor_op = defop("clamp_tensor", _clamp_meta, _clamp_tensor_bw, decomp=_clamp_tensor_values,
                         elementwise=True)


@method("clamp")
def clamp(input, min=None, max=None):
    """Clamp every element into [min, max] (scalars or broadcastable tensors), as ``torch.clamp``.

    RuntimeError when both bounds are None.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if input.dtype.is_complex:
            raise NotImplementedError("clamp is not supported for complex types")
        return dispatch(_clamp_tensor_op, (input, min, max))
    if input.dtype is _dt.bool and all(b is None or isinstance(b, bool) for b in (min, max)):
        # a bool result: PyTorch's scalar clamp kernels have no bool version
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            ("clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu")
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return dispatch(_clamp_op, (input, min, max))


clip = clamp
method("clip")(clamp)
def _clamp_(self, min=None, max=None):
    """``Tensor.clamp_``: ``clamp`` written into ``self``. RuntimeError when a number bound makes the result
    dtype one ``self`` cannot hold (PyTorch's message names self's C++ type)."""
    from .creation import _CPP_NAMES
    bounds = [b for b in (min, max) if b is not None and not isinstance(b, Tensor)]
    if builtins.any(isinstance(b, builtins.complex) for b in bounds):
        raise NotImplementedError("clamp is not supported for complex types")
    if bounds and not isinstance(min, Tensor) and not isinstance(max, Tensor):
        common = _dt.result_type_of([self], bounds)
        if common is not self.dtype and common.category > self.dtype.category:
            from .._dispatch import _TYPE_NAMES
            raise RuntimeError(f"result type {_TYPE_NAMES[common.name]} can't be cast to the desired output type "
                               f"{_CPP_NAMES[self.dtype.name]}")
    return self._inplace(clamp, min, max)


method("clamp_")(_clamp_)
method("clip_")(_clamp_)
method("clamp_min")(lambda self, min: clamp(self, min=min))
method("clamp_max")(lambda self, max: clamp(self, max=max))
method("clamp_min_")(lambda self, min: _clamp_(self, min, None))
method("clamp_max_")(lambda self, max: _clamp_(self, None, max))


def _nan_to_num_meta(a, **kw):
    return [(a._shape, a.dtype)], [None]


_nan_to_num_op = defop("nan_to_num", _nan_to_num_meta, lambda c, g: g * isfinite(c.inputs[0]), elementwise=True)


@method("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace NaN with ``nan`` and +/-inf with ``posinf``/``neginf`` (default: the dtype's max/min).

    TypeError, as PyTorch's argument parser, when a replacement is not a number (or None)."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not isinstance(v, bool):  # PyTorch's parser takes a bool as a float
            check_arg("nan_to_num", name, None, v, "float")
    nan, posinf, neginf = (v.item() if isinstance(v, Tensor) else v for v in (nan, posinf, neginf))
    if nan is None:
        nan = 0.0
    if input.dtype.is_floating_point:
        fi = _dt.finfo(input.dtype)
        posinf = fi.max if posinf is None else posinf
        neginf = fi.min if neginf is None else neginf
    return dispatch(_nan_to_num_op, (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


method("nan_to_num_")(lambda self, nan=0.0, posinf=None, neginf=None: self._inplace(nan_to_num, nan, posinf, neginf))

_identity_op = defop("clone", _same, lambda c, g: g, save_inputs=False, complex_grad=True)


def _identity(x):
    return dispatch(_identity_op, (x,))


# ---- composites ------------------------------------------------------------------------------------
@method("square")
def square(input):
    """``input * input`` (``torch.square``); a bool input squares as int64, as PyTorch's ``pow(input, 2)``.
    TypeError for a non-tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"square(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dtype is _dt.bool:
        input = input.to(_dt.int64)
    return input * input


@method("lerp")
def lerp(input, end, weight):
    """``input + weight * (end - input)`` (``torch.lerp``); weight a Number or a broadcastable tensor.

    As PyTorch: TypeError when ``input``/``end`` are not tensors or ``weight`` is neither tensor nor Number;
    RuntimeError when ``end`` (or a weight tensor that is not 0-d) has another dtype than ``input``;
    NotImplementedError for integral and bool input (its kernel is floating point and complex only).
    """
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)
            and isinstance(weight, (Tensor, int, float, builtins.complex))):
        raise TypeError(f"lerp() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(end).__name__}, {type(weight).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight)\n * (Tensor input, Tensor end, Number weight)")
    from .creation import _CPP_NAMES
    for arg, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype and (arg == "end" or t.ndim):
            raise RuntimeError(f"expected dtype {_CPP_NAMES[input.dtype.name]} for `{arg}` but got dtype "
                               f"{_CPP_NAMES[t.dtype.name]}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        check_dtype(kernel, input.dtype, floating=True, complex_ok=True)
    if isinstance(weight, Tensor) and input.dtype.is_floating_point:
        from .natives import lerp as _lerp  # one op saving what PyTorch's LerpBackward1 saves
        return _lerp(input, end, weight)
    # PyTorch's two-sided formula (exact at both ends; an infinite input gives +-inf, not inf - inf = NaN)
    small = (weight.abs() if isinstance(weight, Tensor) else builtins.abs(weight)) < 0.5
    diff = end - input
    if isinstance(small, Tensor):
        return where(small, input + weight * diff, end - diff * (1 - weight))
    return input + weight * diff if small else end - diff * (1 - weight)


def _in_result_dtype(*ts):
    """The tensors converted to their common dtype: PyTorch's fused kernels compute every product in the
    result dtype (a float64 input with float32 factors multiplies them in float64)."""
    dt = _dt.result_type_of(ts)
    return tuple(t if t.dtype is dt else t.to(dt) for t in ts)


def _addc_args(fn, input, tensor1, tensor2):
    # PyTorch's signature takes the three operands as Tensors only
    for pos, (name, v) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        check_arg(fn, name, pos, v, "Tensor")


@method("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (``torch.addcmul``); TypeError for a non-tensor operand,
    NotImplementedError when all three are bool (PyTorch's kernel has no bool version)."""
    _addc_args("addcmul", input, tensor1, tensor2)
    if input.dtype is _dt.bool and tensor1.dtype is _dt.bool and tensor2.dtype is _dt.bool:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    input, tensor1, tensor2 = _in_result_dtype(input, tensor1, tensor2)
    return input + (tensor1 * tensor2) * value


@method("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (``torch.addcdiv``); TypeError for a non-tensor operand,
    RuntimeError when both divided tensors are integral or bool (PyTorch dropped integer addcdiv)."""
    _addc_args("addcdiv", input, tensor1, tensor2)
    if not any(t.dtype.is_floating_point or t.dtype.is_complex for t in (tensor1, tensor2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    input, tensor1, tensor2 = _in_result_dtype(input, tensor1, tensor2)
    if not any(t.dtype.is_complex for t in (input, tensor1, tensor2)):
        from .natives import addcdiv as _addcdiv  # one op saving what PyTorch's AddcdivBackward0 saves
        return _addcdiv(input, tensor1, tensor2, value)
    return input + (tensor1 / tensor2) * value


method("addcmul_")(lambda self, t1, t2, *, value=1: self._inplace(addcmul, t1, t2, value=value))
method("addcdiv_")(lambda self, t1, t2, *, value=1: self._inplace(addcdiv, t1, t2, value=value))
method("lerp_")(lambda self, end, weight: self._inplace(lerp, end, weight))


@method("logit")
def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to [eps, 1 - eps] when eps is given (``torch.logit``);
    integral and bool input is computed in the default float dtype, as PyTorch's unary float ops."""
    if isinstance(input, Tensor) and not (input.dtype.is_floating_point or input.dtype.is_complex):
        input = input.to(_dt.get_default_dtype())
    if isinstance(input, Tensor) and input.dtype.is_complex:
        from ._util import check_dtype
        check_dtype("logit_cpu", input.dtype, floating=True)
    if eps is not None and eps == eps:  # a NaN eps clamps nothing in PyTorch's kernel (its comparisons fail)
        input = clamp(input, eps, 1 - eps)
    return log(input / (1 - input))


@method("xlogy")
def xlogy(input, other):
    """``input * log(other)``, 0 where input == 0 (``torch.xlogy``). Either operand may be a Number (not
    both: TypeError, as PyTorch); integer inputs give the default float dtype."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"xlogy() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor self, Tensor other)\n"
                        " * (Number self, Tensor other)\n * (Tensor self, Number other)")
    from .creation import full
    t = input if isinstance(input, Tensor) else other
    # a Number operand joins as a 0-d tensor of the default float dtype: it takes part in type promotion as
    # PyTorch's wrapped scalar does (a float64 tensor stays float64, an integer tensor gives float32)
    input, other = (v if isinstance(v, Tensor) else
                    full((), scalar_check(v, "xlogy", "other"), dtype=_dt.get_default_dtype(), device=t.device)
                    for v in (input, other))
    # both operands in the result dtype first, so a float16 other of a float32 input has its log in float32
    dt = _dt.result_type_of((input, other))
    if dt.is_complex:
        raise NotImplementedError(f"\"xlogy_cpu\" not implemented for '{_dt._SCALAR_TYPE[dt.name]}'")
    if not dt.is_floating_point:
        dt = _dt.get_default_dtype()
    input, other = input.to(dt), other.to(dt)
    from .natives import xlogy as _xlogy  # one op saving both operands, as PyTorch's XlogyBackward0
    return _xlogy(input, other)


# operators ---------------------------------------------------------------------------------------------
def _rsub(self, other):
    return sub(other, self)


def _rdiv(self, other):
    # PyTorch's ``other / self`` is ``self.reciprocal() * other``: the reciprocal is rounded in self's dtype
    # first (a float16 self gives a float16 reciprocal, then the product promotes)
    if not isinstance(other, (Tensor, int, float, builtins.complex, bool)):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and 'Tensor'")
    return mul(reciprocal(self), other)


def _operator(fn, name):
    """``Tensor.<name>`` from ``fn(self, other)``, as PyTorch's operators: an ``other`` that is not an operand
    (None, or a non-tensor the op refuses with TypeError: a str, a list, a dtype...) gives NotImplemented, so
    Python tries the reflected operator and then its own default. Hence ``x == 'a'`` is False and ``x != None``
    True, while ``x < 'a'`` and ``x + 'a'`` raise Python's TypeError ("'<' not supported between instances of
    'Tensor' and 'str'"). A TypeError with a tensor (or NumPy array) operand is a real error and propagates; an int
    outside [-2**63, 2**64) raises PyTorch's OverflowError."""
    def op(self, other):
        if other is None:
            return NotImplemented
        if other.__class__ is int and not -0x8000000000000000 <= other < 0x10000000000000000:
            # PyTorch's Scalar holds an int64 or a uint64: its argument parser refuses a wider int
            raise OverflowError("int too big to convert" if other > 0 else "can't convert negative int to unsigned")
        try:
            return fn(self, other)
        except TypeError:
            if isinstance(other, Tensor) or hasattr(other, "__array_interface__"):
                raise
            return NotImplemented
    op.__name__ = op.__qualname__ = name
    return op


for _name, _fn in (("__add__", lambda self, o: dispatch(_add_op, (self, o))),
                   ("__radd__", lambda self, o: dispatch(_add_op, (o, self))),
                   ("__sub__", sub), ("__rsub__", _rsub), ("__mul__", mul), ("__rmul__", lambda self, o: mul(o, self)),
                   ("__truediv__", div), ("__rtruediv__", _rdiv), ("__floordiv__", floor_divide),
                   ("__rfloordiv__", lambda self, o: floor_divide(o, self)), ("__mod__", remainder),
                   ("__rmod__", lambda self, o: remainder(o, self)), ("__pow__", pow),
                   ("__rpow__", lambda self, o: pow(o, self)), ("__eq__", eq), ("__ne__", ne), ("__lt__", lt),
                   ("__le__", le), ("__gt__", gt), ("__ge__", ge)):
    method(_name)(_operator(_fn, _name))
method("__neg__")(neg)
method("__pos__")(positive)
method("__abs__")(abs)


def _logic_or_bitwise(logical, bitwise):
    def f(self, other):
        # an int scalar promotes a bool tensor to int64 (``mask | 1`` is int64), a bool scalar does not
        if self.dtype is _dt.bool and (isinstance(other, bool) or isinstance(other, Tensor) and other.dtype is _dt.bool):
            return logical(self, other) if isinstance(other, Tensor) else logical(self, _scalar_bool(self, other))
        return bitwise(self, other)
    return f


def _scalar_bool(like, v):
    from .creation import tensor
    return tensor(builtins.bool(v), device=like.device)


method("__and__")(method("__rand__")(_logic_or_bitwise(logical_and, bitwise_and)))
method("__or__")(method("__ror__")(_logic_or_bitwise(logical_or, bitwise_or)))
method("__xor__")(method("__rxor__")(_logic_or_bitwise(logical_xor, bitwise_xor)))
def _invert(self):
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


method("__invert__")(_invert)
method("__lshift__")(bitwise_left_shift)
method("__rshift__")(bitwise_right_shift)
method("__iadd__")(lambda self, o: self._inplace(add, o))
method("__isub__")(lambda self, o: _sub_(self, o))
method("__imul__")(lambda self, o: self._inplace(mul, o))
method("__itruediv__")(lambda self, o: self._inplace(div, o))
method("__ipow__")(_ipow)
method("__iand__")(lambda self, o: self._inplace(Tensor.__and__, o))
method("__ior__")(lambda self, o: self._inplace(Tensor.__or__, o))
method("__ixor__")(lambda self, o: self._inplace(Tensor.__xor__, o))
method("__imod__")(lambda self, o: self._inplace(remainder, o))
method("__ifloordiv__")(lambda self, o: self._inplace(floor_divide, o))
