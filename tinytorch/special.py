"""``torch.special``: special functions under SciPy-style names (https://pytorch.org/docs/stable/special.html).

Most are the elementwise ops of the top-level namespace under another name; the gamma family (gammaln, psi,
polygamma, multigammaln, zeta) lives in ``tinytorch/_ops/special.py``. Bessel functions other than i0/i1 (and
their scaled forms) and spherical_bessel_j0, orthogonal polynomials, erfcx, log_ndtr and the incomplete gamma functions are not implemented: asking for one raises
AttributeError.
"""
import math

from . import _ops
from ._ops import pointwise as _pw
from ._ops import reduce as _red
from ._ops import special as _sp
from ._ops import unary as _unary
from ._ops import nn as _nn

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc",
           "softmax", "xlog1py", "xlogy", "zeta", "gammainc", "gammaincc", "spherical_bessel_j0"]

digamma = psi = _sp.digamma
gammaln = _sp.lgamma
polygamma = _sp.polygamma
zeta = _sp.zeta
gammainc, gammaincc = _sp.igamma, _sp.igammac
entr = _sp.entr
spherical_bessel_j0 = _sp.spherical_bessel_j0
i0, i0e, i1, i1e = _sp.i0, _sp.special_i0e, _sp.i1, _sp.special_i1e
erf, erfinv, exp2, expm1, log1p, logit, xlogy = _pw.erf, _pw.erfinv, _pw.exp2, _pw.expm1, _pw.log1p, _pw.logit, _pw.xlogy
expit = _pw.sigmoid
erfc, sinc = _unary.erfc, _unary.sinc
logsumexp = _red.logsumexp
round = _pw.round


def multigammaln(input, p):
    """The multivariate log-gamma of dimension ``p`` (``torch.special.multigammaln``; see ``mvlgamma``)."""
    return _sp.mvlgamma(input, p)


def ndtr(input):
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2, elementwise (``torch.special.ndtr``). Written with
    erf, its relative accuracy in the far left tail (below x = -5 in float64, -3 in float32) is that of 1 + erf
    there, while torch uses erfc; absolute errors stay at the dtype's epsilon."""
    x = _sp._as_float(input)
    return (1 + _pw.erf(x * (1 / math.sqrt(2)))) * 0.5


def ndtri(input):
    """The inverse of ndtr: sqrt 2 * erfinv(2p - 1), elementwise (``torch.special.ndtri``); +-inf at 1 and 0."""
    p = _sp._as_float(input)
    return _pw.erfinv(2 * p - 1) * math.sqrt(2)


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where input == 0 (``torch.special.xlog1py``)."""
    return _pw.where(input == 0, 0.0, input * _pw.log1p(other))


def softmax(input, dim, *, dtype=None):
    """``torch.special.softmax``: the softmax along ``dim`` (see ``tinytorch.softmax``)."""
    return _nn.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``torch.special.log_softmax``: log of the softmax along ``dim`` (see ``tinytorch.log_softmax``)."""
    return _nn.log_softmax(input, dim, dtype=dtype)


del _ops
