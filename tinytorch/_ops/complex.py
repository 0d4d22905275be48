"""Complex tensors: real/imaginary parts, conj, angle, sgn, polar, view_as_real / view_as_complex.

Autograd follows PyTorch's convention for complex numbers (the conjugate Wirtinger derivative): the
gradient of a real loss L with respect to z = x + iy is dL/dx + i dL/dy, so a holomorphic op's
backward multiplies by the *conjugate* derivative, and the gradient reaching a real input is the real
part of what flows back. Only ops declared with ``complex_grad=True`` differentiate complex tensors;
others raise NotImplementedError instead of returning a wrong gradient.

Unlike PyTorch, ``real``, ``imag``, ``conj`` and ``view_as_real`` return new tensors, not views: the
parts of a complex element are not addressable by strides of a real dtype in every backend's storage.
The kernels exist on ``cpu``; other backends run them through ``cpu`` (their decomposition).
"""
import math

from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from .._tensor import Tensor
from ._util import defop_on_cpu, method


_OPS = {}


def _defop(name, meta, backward, **kw):
    return defop_on_cpu(name, meta, backward, _OPS, complex_grad=True, **kw)


def _to_real_meta(a):
    return [(a._shape, a.dtype.to_real()), ], [None]


def _check_complex(a, op):
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    if not a.dtype.is_complex:
        raise RuntimeError(f"{op} is not implemented for tensors with non-complex dtypes.")


_real_op = _defop("real", _to_real_meta, lambda c, g: g, save_inputs=False)
_imag_op = _defop("imag", _to_real_meta, lambda c, g: g * 1j, save_inputs=False)
_conj_op = _defop("conj", lambda a: ([(a._shape, a.dtype)], [None]), lambda c, g: conj(g), save_inputs=False)


def _var_geometry(x):
    # the complex storage seen as its real dtype: shape (*, 2), strides doubled, (real, imag) adjacent
    return x._shape + (2,), tuple(2 * s for s in x._stride) + (1,), 2 * x._offset, x.dtype.to_real()


_var_view_op = defop("view_as_real", _var_geometry, lambda c, g: view_as_complex(g), save_inputs=False, view=True,
                     complex_grad=True)


def _as_real_view(input):
    """``view_as_real`` as a true view (the view op above); None when the backend cannot reinterpret its
    buffers (the caller then copies, with ``view_as_real_copy``)."""
    try:
        return dispatch(_var_view_op, (input,))
    except NotImplementedError:
        return None


def real(input):
    """Real part of a complex tensor: a view of float dtype sharing its memory, so writes to it change
    ``input`` (``torch.real``). A real tensor is returned as is."""
    if not input.dtype.is_complex:
        return input
    v = _as_real_view(input)
    return dispatch(_real_op, (input,)) if v is None else v.select(-1, 0)


def imag(input):
    """Imaginary part of a complex tensor: a view of float dtype sharing its memory (``torch.imag``).

    RuntimeError for a real tensor, as in PyTorch.
    """
    _check_complex(input, "imag")
    v = _as_real_view(input)
    return dispatch(_imag_op, (input,)) if v is None else v.select(-1, 1)


method("real")(property(real))
method("imag")(property(imag))


@method("conj")
def conj(input):
    """Complex conjugate (a new tensor; real tensors are returned as is) (``torch.conj``)."""
    if not input.dtype.is_complex:
        return input
    return dispatch(_conj_op, (input,))


conj_physical = conj
method("conj_physical")(conj)
method("resolve_conj")(lambda self: self)
method("resolve_neg")(lambda self: self)


def resolve_conj(input):
    """Identity: tinytorch materialises conjugates, so there is no lazy conjugate bit to resolve. TypeError
    for a non-tensor, as PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"resolve_conj(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def resolve_neg(input):
    """Identity: tinytorch materialises negations, so there is no lazy negative bit to resolve. TypeError
    for a non-tensor, as PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"resolve_neg(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


@method("is_conj")
def is_conj(input):
    """Always False: conj() returns a materialised tensor, never a lazily conjugated view. TypeError for a
    non-tensor, as PyTorch's argument parser."""
    from ._util import check_arg
    check_arg("is_conj", "input", 1, input, "Tensor")
    return False


def _var_meta(a):
    if not a.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return [(a._shape + (2,), a.dtype.to_real())], [None]


def _vac_meta(a):
    if a.dtype is _dt.float16:
        raise RuntimeError("view_as_complex: complex32 (ComplexHalf) is not supported by tinytorch")
    if a.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"view_as_complex is only supported for float, double and half tensors, but got a "
                           f"tensor of scalar type: {a.dtype.name.capitalize()}")
    if not a._shape or a._shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return [(a._shape[:-1], a.dtype.to_complex())], [None]


_var_op = _defop("view_as_real_copy", _var_meta, lambda c, g: view_as_complex(g), save_inputs=False)
_vac_op = _defop("view_as_complex", _vac_meta, lambda c, g: view_as_real(g), save_inputs=False)


def view_as_real(input):
    """Complex (*) -> real (*, 2) holding (real, imag) pairs, a view sharing ``input``'s memory
    (``torch.view_as_real``); a copy on a backend that cannot reinterpret its buffers. RuntimeError for a
    real tensor."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        v = _as_real_view(input)
        if v is not None:
            return v
    return dispatch(_var_op, (input,))


def view_as_complex(input):
    """Real (*, 2) -> complex (*) (``torch.view_as_complex``; a copy here, not a view).

    RuntimeError unless the last dim has size 2 and the dtype is float16/32/64.
    """
    return dispatch(_vac_op, (input,))


def _check_real_pair(real, imag, out=None):
    """PyTorch's dtype checks of ``torch.complex`` / ``torch.polar``: one dtype, float16/32/64, and an ``out`` of
    exactly the matching complex dtype (no casting into ``out`` for these two)."""
    a, b = _dt._SCALAR_TYPE[real.dtype.name], _dt._SCALAR_TYPE[imag.dtype.name]
    # the float check comes first: PyTorch names both dtypes when either is not Half/Float/Double
    for t in (real, imag):
        if not t.dtype.is_floating_point or t.dtype is _dt.bfloat16:
            raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {a} and {b}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {a} but got scalar type {b} for second argument")
    if isinstance(out, Tensor) and out.dtype is not real.dtype.to_complex():
        raise RuntimeError(f"Expected object of scalar type {_dt._SCALAR_TYPE[real.dtype.to_complex().name]} but "
                           f"got scalar type {_dt._SCALAR_TYPE[out.dtype.name]} for argument 'out'")


def complex(real, imag, *, out=None):
    """``real + i*imag`` from two float tensors of one dtype (``torch.complex``)."""
    _check_real_pair(real, imag, out)
    from .shape import stack
    from .movement import broadcast_tensors
    r = view_as_complex(stack(broadcast_tensors(real, imag), -1))
    return r


def polar(abs, angle, *, out=None):
    """``abs * (cos(angle) + i*sin(angle))`` (``torch.polar``): abs and angle float16/32/64 tensors of one
    dtype, result the matching complex dtype. TypeError for a non-tensor, RuntimeError for mixed or non-float
    dtypes and for an ``out`` of another dtype, as PyTorch (checked before anything is computed)."""
    from .pointwise import cos, sin
    for name, pos, v in (("abs", 1, abs), ("angle", 2, angle)):
        if not isinstance(v, Tensor):
            raise TypeError(f"polar(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")
    _check_real_pair(abs, angle, out)
    r = complex(abs * cos(angle), abs * sin(angle))
    return r


@method("angle")
def angle(input):
    """Argument of complex numbers, atan2(imag, real), in radians; for real input pi where negative, else 0
    (``torch.angle``). Integer input gives the default float dtype."""
    from .pointwise import atan2, where
    if input.dtype.is_complex:
        return atan2(imag(input), real(input))
    x = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    # NaN stays NaN (x * 0 only where x is NaN, as -inf * 0 would be NaN too); the gradient is 0 everywhere
    return where(x != x, x * 0, where(x < 0, math.pi, 0.0).to(x.dtype))


@method("sgn")
def sgn(input):
    """``z / |z|`` for complex z (0 at 0); ``sign`` for real input (``torch.sgn``)."""
    from .pointwise import abs as _abs, sign, where
    if not input.dtype.is_complex:
        return sign(input)
    a = _abs(input)
    return where(a == 0, 0.0, input / where(a == 0, 1.0, a))


def is_complex(input):
    """True when the tensor's dtype is complex64 or complex128 (``torch.is_complex``)."""
    return input.dtype.is_complex


__all__ = ["real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "view_as_real",
           "view_as_complex", "complex", "polar", "angle", "sgn", "is_complex"]
