"""Invertible transforms of random variables, for ``TransformedDistribution`` (``torch.distributions.transforms``).

A transform maps x to y = t(x), inverts with ``t.inv(y)`` and gives log |dy/dx| with
``log_abs_det_jacobian(x, y)``. With ``cache_size=1`` it remembers its last (x, y) pair, so inverting a value
it just produced returns the exact x (what tanh-squashed policies need, where atanh(tanh(x)) loses x).
"""
import math

from .._ops.unary import atanh
from .._ops.pointwise import exp, log, sigmoid, tanh
from . import constraints

__all__ = ["Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform", "TanhTransform",
           "identity_transform"]


def _softplus(x):
    from ..nn.functional import softplus
    return softplus(x)


class Transform:
    """Base class: subclasses define ``_call(x)``, ``_inverse(y)`` and ``log_abs_det_jacobian(x, y)``."""
    bijective = True
    domain = constraints.real
    codomain = constraints.real
    sign = 1

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        return _InverseTransform(self)

    def __call__(self, x):
        return self._through_cache(x, 0, self._call)

    def _inv_call(self, y):
        return self._through_cache(y, 1, self._inverse)

    def _through_cache(self, value, side, fn):
        """fn(value), or the other half of the cached (x, y) pair when ``value`` is its ``side`` (0: x, 1: y)."""
        if self._cache_size == 0:
            return fn(value)
        if value is self._cached_x_y[side]:
            return self._cached_x_y[1 - side]
        out = fn(value)
        self._cached_x_y = (value, out) if side == 0 else (out, value)
        return out

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(transform._cache_size)
        self._inv = transform
        self.domain, self.codomain = transform.codomain, transform.domain

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)


class ComposeTransform(Transform):
    """``parts`` applied in order (``torch.distributions.transforms.ComposeTransform``)."""

    def __init__(self, parts, cache_size=0):
        super().__init__(cache_size)
        self.parts = list(parts)
        if self.parts:
            self.domain, self.codomain = self.parts[0].domain, self.parts[-1].codomain

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x * 0
        total = 0
        for p in self.parts:
            y_p = p(x)
            total = total + p.log_abs_det_jacobian(x, y_p)
            x = y_p
        return total


identity_transform = ComposeTransform([])


class ExpTransform(Transform):
    """y = exp(x)."""
    codomain = constraints.positive

    def _call(self, x):
        return exp(x)

    def _inverse(self, y):
        return log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class AffineTransform(Transform):
    """y = loc + scale * x; ``event_dim`` rightmost dims form one value (their log-dets are summed)."""

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim
        if event_dim:
            self.domain = self.codomain = constraints.independent(constraints.real, event_dim)

    @property
    def sign(self):
        from .._tensor import Tensor
        return self.scale.sign() if isinstance(self.scale, Tensor) else (1 if self.scale > 0 else -1 if self.scale < 0
                                                                         else 0)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        from .._tensor import Tensor
        scale = self.scale
        r = (scale.abs().log() if isinstance(scale, Tensor) else math.log(abs(scale))) + x * 0
        for _ in range(self._event_dim):
            r = r.sum(-1)
        return r


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1) by the dtype's smallest steps."""
    codomain = constraints.unit_interval

    def _call(self, x):
        from .._dtype import finfo
        f = finfo(x.dtype)
        return sigmoid(x).clamp(min=f.tiny, max=1.0 - f.eps)

    def _inverse(self, y):
        from .._dtype import finfo
        f = finfo(y.dtype)
        y = y.clamp(min=f.tiny, max=1.0 - f.eps)
        return log(y) - log(-y + 1)

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); use ``cache_size=1`` to invert samples it produced exactly (atanh does not, near +-1)."""
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return tanh(x)

    def _inverse(self, y):
        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2), written stably (as torch and TensorFlow Probability do)
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class PowerTransform(Transform):
    """y = x ** exponent on x > 0 (``torch.distributions.transforms.PowerTransform``)."""
    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        (self.exponent,) = _as_tensors(exponent)

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


class AbsTransform(Transform):
    """y = |x| (not bijective: the inverse returns the non-negative root)."""
    bijective = False
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); inverse x = y + log(-expm1(-y))."""
    codomain = constraints.positive

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        from .._ops.pointwise import expm1
        return y + log(-expm1(-y))

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class SoftmaxTransform(Transform):
    """Unconstrained R^n -> simplex by exp and normalization (not bijective; the inverse is log)."""
    domain = constraints.independent(constraints.real, 1)
    codomain = constraints.simplex
    bijective = False

    def _call(self, x):
        probs = exp(x - x.amax(-1, keepdim=True))
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return log(y)


def _as_tensors(*args):
    from .normal import _params
    return _params(*args)


__all__ += ["PowerTransform", "AbsTransform", "SoftplusTransform", "SoftmaxTransform"]
