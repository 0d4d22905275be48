from .._tensor import Size
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform


def _sum_rightmost(value, dim):
    for _ in range(dim):
        value = value.sum(-1)
    return value


class TransformedDistribution(Distribution):
    """The distribution of t_n(...t_1(X)) for X ~ ``base_distribution`` and ``transforms`` [t_1, ..., t_n]
    (``torch.distributions.TransformedDistribution``). log_prob inverts the transforms and subtracts their
    log |det J|; rsample exists when the base has it. A transform whose event_dim exceeds the base's event
    dims reinterprets base batch dims as event dims (``Independent``), as torch."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, list) or not all(isinstance(t, Transform) for t in transforms):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        self.transforms = transforms
        transform = ComposeTransform(transforms)
        base_event_dim = len(base_distribution.event_shape)
        extra = max([t.domain.event_dim for t in transforms] + [0]) - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = max([transform.codomain.event_dim if transforms else 0, len(base_distribution.event_shape)])
        cut = len(shape) - event_dim
        super().__init__(Size(shape[:cut]), Size(shape[cut:]), validate_args=validate_args)

    @property
    def support(self):
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=Size()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        lp = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            lp = lp - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return lp + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
