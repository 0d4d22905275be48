"""Discrete Fourier transforms as three ops, as in ATen: ``fft_c2c``, ``fft_r2c`` and ``fft_c2r``.

Every public function of ``tinytorch.fft`` resizes its input to the signal sizes it was asked for (zero
padding or trimming, ordinary differentiable ops) and then calls one of these. Each op transforms over
a set of dims with a normalization: "backward" scales the inverse by 1/n, "forward" the forward
transform, "ortho" both by 1/sqrt(n).

Backward formulas (PyTorch's ``FunctionsManual.cpp``): the adjoint of a DFT is the inverse DFT with the
*dual* normalization (backward <-> forward, ortho stays), so
  c2c:  grad_in = c2c(g, the other direction, dual norm)
  r2c:  grad_in = real(c2c(g zero-padded to the full last dim, inverse, dual norm))
  c2r:  grad_in = r2c(g, dual norm) with the entries whose mirror image lies outside the half spectrum
        (indices 1 .. n - n//2 - 1 of the last dim) doubled.
The kernels exist on ``cpu`` (NumPy's pocketfft); other backends run them through ``cpu``.
"""
from .. import _dtype as _dt
from .._dispatch import dispatch
from ._util import defop_on_cpu
from .._tensor import Tensor

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_OPS = {}


def _defop(name, meta, backward, save_inputs=False):
    return defop_on_cpu(name, meta, backward, _OPS, save_inputs=save_inputs, complex_grad=True)


def _c2c_meta(x, dims, norm, forward):
    return [(x._shape, x.dtype)], [None]


def _c2c_bw(c, g):
    return dispatch(_c2c_op, (g,), {"dims": c.kw["dims"], "norm": _DUAL[c.kw["norm"]],
                                    "forward": not c.kw["forward"]})


def _r2c_meta(x, dims, norm, onesided):
    shape = list(x._shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return [(tuple(shape), x.dtype.to_complex())], [None]


def _r2c_bw(c, g):
    from .complex import real
    dims, norm = c.kw["dims"], c.kw["norm"]
    c.inputs  # PyTorch's formula saves self (for its size): a modified input is an error there too
    n = c.shapes[0][dims[-1]]
    if c.kw["onesided"] and g._shape[dims[-1]] < n:
        g = _resize(g, dims[-1], n)
    return real(dispatch(_c2c_op, (g,), {"dims": dims, "norm": _DUAL[norm], "forward": False}))


def _c2r_meta(x, dims, norm, last_dim_size):
    shape = list(x._shape)
    shape[dims[-1]] = last_dim_size
    return [(tuple(shape), x.dtype.to_real())], [None]


def _c2r_bw(c, g):
    from .creation import ones
    dims = c.kw["dims"]
    gi = dispatch(_r2c_op, (g,), {"dims": dims, "norm": _DUAL[c.kw["norm"]], "onesided": True})
    m = gi._shape[dims[-1]]
    double = g._shape[dims[-1]] - m
    if double > 0:
        w = ones(m, dtype=gi.dtype.to_real(), device=gi.device)
        w[1:1 + double] = 2.0
        gi = gi * w.reshape((m,) + (1,) * (gi.ndim - 1 - dims[-1]))
    return gi


_c2c_op = _defop("fft_c2c", _c2c_meta, _c2c_bw)
_r2c_op = _defop("fft_r2c", _r2c_meta, _r2c_bw, save_inputs=True)  # self (for its size, in PyTorch's formula)
_c2r_op = _defop("fft_c2r", _c2r_meta, _c2r_bw)


def _resize(x, dim, n):
    """Trim or zero-pad ``x`` along ``dim`` to length ``n`` (differentiable)."""
    size = x._shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    from .creation import zeros
    from .shape import cat
    shape = list(x._shape)
    shape[dim] = n - size
    return cat([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)


def _check_norm(norm, op):
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise ValueError(f"Invalid normalization mode: \"{norm}\"")
    return norm


def _prepare(input, s, dim, op, default_all):
    """Wrap dims, check signal sizes; returns (dims, sizes) where a size None keeps the input's length."""
    from .. import _strides
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if dim is None:
        if s is None:
            dims = tuple(range(input.ndim)) if default_all else tuple(range(input.ndim))[-2:]
        else:
            dims = tuple(range(input.ndim - len(s), input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_strides.wrap_dim(d, input.ndim, op) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{op}: FFT dims must be unique")
    if s is None:
        sizes = (None,) * len(dims)
    else:
        s = (s,) if isinstance(s, int) else tuple(s)
        if len(s) != len(dims):
            raise RuntimeError(f"{op}: When given, dim and shape arguments must have the same length")
        sizes = tuple(None if n == -1 else n for n in s)
    for d, n in zip(dims, sizes):
        if (n if n is not None else input._shape[d]) < 1:
            raise RuntimeError(f"{op}: Invalid number of data points ({n if n is not None else input._shape[d]}) "
                               "specified")
    if not dims:
        raise RuntimeError(f"{op}: must transform at least one axis")
    return dims, sizes


def _floatify(input, op, complex_out):
    d = input.dtype
    if d.is_complex:
        return input
    if not d.is_floating_point:
        input = input.to(_dt.get_default_dtype())
    elif d in (_dt.bfloat16,):
        raise RuntimeError(f"{op}: Unsupported dtype BFloat16")
    elif d is _dt.float16:
        raise RuntimeError(f"{op}: Unsupported dtype Half (tinytorch's FFT kernels support float32 and float64)")
    return input.to(input.dtype.to_complex()) if complex_out else input


def c2c(input, s, dim, norm, forward, op, default_all=True):
    dims, sizes = _prepare(input, s, dim, op, default_all)
    norm = _check_norm(norm, op)
    if not input.dtype.is_complex:
        # a real input takes ATen's r2c path with the full spectrum (so the node saves the input, as PyTorch's
        # FftR2cBackward0); the inverse is the conjugate of the forward transform under the dual normalization
        x = _floatify(input, op, False)
        for d, n in zip(dims, sizes):
            if n is not None:
                x = _resize(x, d, n)
        r = dispatch(_r2c_op, (x,), {"dims": dims, "norm": norm if forward else _DUAL[norm], "onesided": False})
        if forward:
            return r
        from .complex import conj
        return conj(r)
    x = _floatify(input, op, True)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    return dispatch(_c2c_op, (x,), {"dims": dims, "norm": norm, "forward": forward})


def r2c(input, s, dim, norm, op, onesided=True, default_all=True):
    dims, sizes = _prepare(input, s, dim, op, default_all)
    norm = _check_norm(norm, op)
    if input.dtype.is_complex:
        raise RuntimeError(f"{op} expects a real input tensor, but got {input.dtype.name.capitalize()}")
    x = _floatify(input, op, False)
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resize(x, d, n)
    return dispatch(_r2c_op, (x,), {"dims": dims, "norm": norm, "onesided": onesided})


def c2r(input, s, dim, norm, op, default_all=True):
    dims, sizes = _prepare(input, s, dim, op, default_all)
    norm = _check_norm(norm, op)
    x = _floatify(input, op, True)
    last = sizes[-1] if sizes[-1] is not None else 2 * (x._shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({last}) specified")
    for d, n in zip(dims[:-1], sizes[:-1]):
        if n is not None:
            x = _resize(x, d, n)
    x = _resize(x, dims[-1], last // 2 + 1)
    return dispatch(_c2r_op, (x,), {"dims": dims, "norm": norm, "last_dim_size": last})
