"""Binary elementwise functions written in the ops of ``pointwise.py`` (as ATen's BinaryOps): hypot,
logaddexp / logaddexp2, copysign, float_power, heaviside, gcd / lcm, ldexp, rsub. Every backend runs them and
autograd differentiates them through those ops (heaviside, gcd and lcm are not differentiable, as in PyTorch).

Signatures, defaults and results follow the PyTorch 2.x documentation of the function of the same name.
"""
import math

from .. import _dtype as _dt
from .._tensor import Tensor
from .._dispatch import defop as _defop
from ..autograd.grad_mode import _state as _grad_state
from ._util import SCALAR_NAMES, method
from .unary import _float, signbit


def _tensors(fn, input, other, first=1):
    """PyTorch's argument parser for a (Tensor input, Tensor other) signature: TypeError naming the first
    operand that is not a tensor. ``first`` is the position of ``other`` (1 for a Tensor method, whose ``self``
    is not counted)."""
    from ._util import check_arg
    if first == 1:
        check_arg(fn, "other", 1, other, "Tensor")
    check_arg(fn, "input", 1, input, "Tensor")
    check_arg(fn, "other", 2, other, "Tensor")


def _tensor_method(fn):
    """``Tensor.<fn>(other)``: ``fn`` with the method's argument positions in its TypeErrors."""
    def m(self, other):
        _tensors(fn.__name__, self, other, first=1)
        return fn(self, other)
    m.__name__ = m.__qualname__ = fn.__name__
    m.__doc__ = f"``torch.{fn.__name__}(self, other)`` as a Tensor method."
    return m


def hypot(input, other):
    """``sqrt(input^2 + other^2)`` elementwise, broadcast (``torch.hypot``), without overflow for huge
    operands. TypeError unless both are tensors; NotImplementedError when the operands' result dtype is not
    floating (PyTorch's kernel is compiled for floating types only)."""
    from ._util import SCALAR_NAMES
    _tensors("hypot", input, other, first=2)
    dt = _dt.result_type_of([t for t in (input, other) if isinstance(t, Tensor)],
                            [s for s in (input, other) if not isinstance(s, Tensor)])
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"hypot_cpu\" not implemented for '{SCALAR_NAMES[dt.name]}'")
    from .natives import hypot as _hypot  # one op saving what PyTorch's HypotBackward0 saves
    # both operands in the result dtype first (an int8 square would wrap around)
    return _hypot(input.to(dt), other.to(dt))


@method("logaddexp")
def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow (``torch.logaddexp``)."""
    from .pointwise import exp, log1p, maximum, where
    m = maximum(input, other)
    d = -(input - other).abs()
    r = m + log1p(exp(d))
    return where(d.isnan() & (input == other), input, r)  # both -inf or both +inf: the value itself


@method("logaddexp2")
def logaddexp2(input, other):
    """``log2(2^input + 2^other)`` (``torch.logaddexp2``): both operands in the result dtype, half types
    computed in float32 and rounded once, as PyTorch's kernel."""
    ts = [t for t in (input, other) if isinstance(t, Tensor)]
    dt = _dt.result_type_of(ts, [s for s in (input, other) if not isinstance(s, Tensor)])
    work = _dt.float32 if dt in (_dt.float16, _dt.bfloat16) else dt
    a, b = (v.to(work) if isinstance(v, Tensor) else v for v in (input, other))
    r = logaddexp(a * math.log(2.0), b * math.log(2.0)) / math.log(2.0)
    return r.to(dt) if r.dtype is not dt and dt.is_floating_point else r


@method("copysign")
def copysign(input, other):
    """|input| with the sign bit of ``other`` (``torch.copysign``)."""
    from .pointwise import where
    for a in (input, other):
        if not isinstance(a, (Tensor, int, float, bool)):
            raise TypeError(f"copysign() received an invalid combination of arguments - got ({type(input).__name__}, "
                            f"{type(other).__name__}), but expected one of: (Tensor input, Tensor other) or (Tensor "
                            "input, Number other)")
        if isinstance(a, Tensor) and a.dtype.is_complex:
            raise NotImplementedError(f"\"copysign_cpu\" not implemented for '{SCALAR_NAMES[a.dtype.name]}'")
    x = _float(input) if isinstance(input, Tensor) else input
    if not isinstance(other, Tensor):
        return where(signbit(x.new_tensor(other)), -x.abs(), x.abs())
    r = where(signbit(other), -x.abs(), x.abs())
    # adds exactly -0.0 / +0.0 (sign-preserving) so that ``other`` gets PyTorch's zero gradient
    return r + where(other.isfinite(), other * 0, -0.0)


@method("float_power")
def float_power(input, exponent):
    """``input ** exponent`` computed in float64, or complex128 when either operand is complex
    (``torch.float_power``)."""
    cplx = any(isinstance(v, complex) or isinstance(v, Tensor) and v.dtype.is_complex for v in (input, exponent))
    wide = _dt.complex128 if cplx else _dt.float64
    base = input.to(wide) if isinstance(input, Tensor) else input
    exp = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor):
        base = exp.new_tensor(base)
    return base ** exp


def _heaviside_bw(c, g):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


def _heaviside_meta(input, values, result):
    return [(result._shape, result.dtype)], [None, None, None]


# the step computed without autograd, then attached to input's and values' graph by a node whose backward
# refuses: the result requires grad as in PyTorch (whose derivative is "not implemented"), backward raises
_heaviside_op = _defop("heaviside", _heaviside_meta, _heaviside_bw, decomp=lambda input, values, result: result,
                       save_inputs=False)


@method("heaviside")
def heaviside(input, values):
    """Step function: 0 where input < 0, ``values`` where input == 0, 1 where input > 0 (``torch.heaviside``).
    RuntimeError unless both have one dtype; TypeError unless both are tensors, as PyTorch. Not differentiable:
    the result requires grad when an operand does, and backward through it raises RuntimeError, as PyTorch."""
    from .pointwise import where
    from ._util import check_arg
    check_arg("heaviside", "input", 1, input, "Tensor")
    check_arg("heaviside", "values", 2, values, "Tensor")
    v = values if isinstance(values, Tensor) else input.new_tensor(values)
    if v.dtype is not input.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different dtypes: {input.dtype} "
                           f"and {v.dtype}")
    from ..autograd.grad_mode import no_grad
    with no_grad():
        r = where(input == 0, v, (input > 0).to(input.dtype))
    if (input.requires_grad or v.requires_grad) and _grad_state.enabled:
        from .._dispatch import dispatch
        return dispatch(_heaviside_op, (input, v, r))
    return r


def _int_pair(op, a, b):
    """Both operands in their integral result dtype; NotImplementedError naming it, as PyTorch's kernel, when
    that is floating, complex or bool."""
    from ._util import SCALAR_NAMES
    dt = _dt.result_type_of([a, b])
    if dt.is_floating_point or dt.is_complex or dt is _dt.bool:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{SCALAR_NAMES[dt.name]}'")
    return a.to(dt), b.to(dt)


def gcd(input, other):
    """Elementwise greatest common divisor of integer tensors, non-negative (``torch.gcd``), by Euclid's
    algorithm on whole tensors. RuntimeError for floating-point inputs."""
    from .pointwise import where, abs as _abs
    _tensors("gcd", input, other, first=2)
    b = other
    input, b = _int_pair("gcd", input, b)
    x, y = _abs(input), _abs(b)
    x, y = x + y * 0, y + x * 0  # broadcast both to the result shape
    while bool((y != 0).any()):
        nz = y != 0
        r = where(nz, x.remainder(where(nz, y, 1)), 0)
        x, y = where(nz, y, x), r
    return x


def lcm(input, other):
    """Elementwise least common multiple of integer tensors, non-negative (``torch.lcm``); 0 when either is 0."""
    from .pointwise import where, abs as _abs
    _tensors("lcm", input, other, first=2)
    b = other
    input, b = _int_pair("lcm", input, b)
    g = gcd(input, b)
    return where(g == 0, 0, _abs(input // where(g == 0, 1, g) * b))


for _n in ("gcd", "lcm"):
    method(_n)(_tensor_method(globals()[_n]))
    method(_n + "_")(lambda self, other, _f=globals()[_n]: self._inplace(_f, other))


def ldexp(input, other):
    """``input * 2 ** other`` (``torch.ldexp``): as PyTorch, the result type is that of ``input`` times
    ``2.0 ** other`` taken in ``other``'s floating dtype (the default dtype for an integral ``other``), so a
    float16 input with a float32 ``other`` gives float32 and a complex ``other`` a complex result; a half-type
    ``other``'s power is rounded to that type first, as PyTorch's. TypeError
    unless both are tensors; NotImplementedError for a bool ``other``, as PyTorch's exp2 kernel."""
    from .pointwise import pow as _pow
    _tensors("ldexp", input, other, first=2)
    if other.dtype is _dt.bool:
        raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
    two = other.dtype if other.dtype.is_floating_point or other.dtype.is_complex else _dt.get_default_dtype()
    if two in (_dt.float16, _dt.bfloat16):
        return input * _pow(2.0, other)  # PyTorch's power rounded in the half type: that rounding shows
    # otherwise the power in the result dtype: PyTorch's, in other's dtype, is within an ulp of it (its float32
    # pow is not always correctly rounded, so rounding here too could land two ulps away)
    res = _dt.promote_types(input.dtype, two)
    return input * _pow(2.0, other.to(res))


@method("ldexp_")
def _ldexp_(self, other):
    """``Tensor.ldexp_``: ``ldexp`` written into ``self``; RuntimeError for an integral or bool ``self``
    (PyTorch's message names ldexp itself)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"ldexp_(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    from .._dispatch import _TYPE_NAMES, _can_cast
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_TYPE_NAMES[self.dtype.name]}")
    # the multiplication's result type (other's 2 ** other promoted with self) must fit in self
    two = other.dtype if other.dtype.is_floating_point or other.dtype.is_complex else _dt.get_default_dtype()
    common = _dt.promote_types(self.dtype, two)
    if common is not self.dtype and not _can_cast(common, self.dtype):
        raise RuntimeError(f"result type {_TYPE_NAMES[common.name]} can't be cast to the desired output type "
                           f"{_TYPE_NAMES[self.dtype.name]}")
    return self._inplace(ldexp, other)


method("hypot")(_tensor_method(hypot))
method("ldexp")(_tensor_method(ldexp))


def rsub(input, other, *, alpha=1):
    """``other - alpha * input`` (``torch.rsub``). RuntimeError for a bool operand, as ``sub``; TypeError
    unless ``input`` is a tensor (PyTorch has no Number-input overload)."""
    if not isinstance(input, Tensor) or not isinstance(other, (Tensor, int, float, complex, bool)):
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n * (Tensor input, Tensor other, *, "
                        "Number alpha = 1)\n * (Tensor input, Number other, Number alpha = 1)\n")
    from .pointwise import _sub_check
    _sub_check(input, other)
    return other - input * alpha if alpha != 1 else other - input


__all__ = ["hypot", "logaddexp", "logaddexp2", "copysign", "float_power", "heaviside", "gcd", "lcm", "ldexp", "rsub"]
