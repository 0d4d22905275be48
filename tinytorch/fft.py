"""``torch.fft``: discrete Fourier transforms (one-, two- and n-dimensional; complex, real and inverse).

Signatures, defaults and normalizations follow https://pytorch.org/docs/stable/fft.html. ``n`` / ``s``
trim or zero-pad the input along the transformed dims first; ``norm`` is "backward" (default: the
inverse is scaled by 1/n), "forward" (the forward transform is) or "ortho" (both by 1/sqrt(n)).
Real inputs of an integer dtype are converted to the default float dtype; float32 gives complex64 and
float64 complex128. All transforms are differentiable (see ``tinytorch/_ops/fft.py``).
"""
from ._dispatch import autocast_op
from . import _dtype as _dt
from ._ops import fft as _f

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


@autocast_op("fp32")
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D DFT of ``input`` along ``dim`` (length ``n`` after trim/pad); complex output of the same shape."""
    r = _f.c2c(input, None if n is None else (n,), (dim,), norm, True, "fft_fft")
    return r


@autocast_op("fp32")
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D inverse DFT along ``dim``; complex output."""
    r = _f.c2c(input, None if n is None else (n,), (dim,), norm, False, "fft_ifft")
    return r


@autocast_op("fp32")
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D DFT over ``dim`` (default the last two)."""
    r = _f.c2c(input, s, dim, norm, True, "fft_fft2")
    return r


@autocast_op("fp32")
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D inverse DFT over ``dim``."""
    r = _f.c2c(input, s, dim, norm, False, "fft_ifft2")
    return r


@autocast_op("fp32")
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D DFT over ``dim`` (default: all dims, or the last len(s) when ``s`` is given)."""
    r = _f.c2c(input, s, dim, norm, True, "fft_fftn")
    return r


@autocast_op("fp32")
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D inverse DFT over ``dim``."""
    r = _f.c2c(input, s, dim, norm, False, "fft_ifftn")
    return r


@autocast_op("fp32")
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """1-D DFT of a real input: the n//2 + 1 non-negative frequencies along ``dim``.

    RuntimeError for complex input.
    """
    r = _f.r2c(input, None if n is None else (n,), (dim,), norm, "fft_rfft")
    return r


@autocast_op("fp32")
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of ``rfft``: a real signal of length ``n`` (default 2*(m-1) for m input frequencies)."""
    r = _f.c2r(input, None if n is None else (n,), (dim,), norm, "fft_irfft")
    return r


@autocast_op("fp32")
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """2-D DFT of a real input; the last transformed dim is halved to n//2 + 1."""
    r = _f.r2c(input, s, dim, norm, "fft_rfft2")
    return r


@autocast_op("fp32")
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of ``rfft2``: a real output."""
    r = _f.c2r(input, s, dim, norm, "fft_irfft2")
    return r


@autocast_op("fp32")
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-D DFT of a real input; the last transformed dim is halved to n//2 + 1."""
    r = _f.r2c(input, s, dim, norm, "fft_rfftn")
    return r


@autocast_op("fp32")
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of ``rfftn``: a real output."""
    r = _f.c2r(input, s, dim, norm, "fft_irfftn")
    return r


@autocast_op("fp32")
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """DFT of a Hermitian-symmetric signal given by its first half: a real output of length ``n``.

    Equals ``irfft(input.conj(), n, dim, dual norm)`` (the definition in PyTorch's docs).
    """
    from ._ops.complex import conj
    x = _f._floatify(input, "fft_hfft", True)
    r = _f.c2r(conj(x), None if n is None else (n,), (dim,), _f._DUAL[_f._check_norm(norm, "fft_hfft")],
               "fft_hfft")
    return r


@autocast_op("fp32")
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of ``hfft``: the n//2 + 1 half spectrum of a real signal, ``conj(rfft(input, dual norm))``."""
    from ._ops.complex import conj
    r = conj(_f.r2c(input, None if n is None else (n,), (dim,), _f._DUAL[_f._check_norm(norm, "fft_ihfft")],
                    "fft_ihfft"))
    return r


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    """Sample frequencies [0, 1, ..., n/2-1, -n/2, ..., -1] / (d*n) of an n-point DFT (``torch.fft.fftfreq``)."""
    from ._ops.creation import arange
    from ._ops.shape import cat
    dtype = dtype or _dt.get_default_dtype()
    pos = arange((n - 1) // 2 + 1, dtype=dtype, device=device)
    neg = arange(-(n // 2), 0, dtype=dtype, device=device)
    r = cat([pos, neg]) / (d * n)
    return r.requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kw):
    """Sample frequencies [0, 1, ..., n//2] / (d*n) of an n-point real DFT (``torch.fft.rfftfreq``)."""
    from ._ops.creation import arange
    dtype = dtype or _dt.get_default_dtype()
    return (arange(n // 2 + 1, dtype=dtype, device=device) / (d * n)).requires_grad_(requires_grad)


def _shift(input, dim, sign):
    from ._ops.shape import roll
    dims = tuple(range(input.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return roll(input, tuple(sign * (input.shape[d] // 2) for d in dims), dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre: roll by n//2 along ``dim`` (default all dims)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """Inverse of ``fftshift``: roll by -(n//2)."""
    return _shift(input, dim, -1)
