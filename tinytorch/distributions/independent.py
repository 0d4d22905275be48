from .._tensor import Size
from . import constraints
from .distribution import Distribution


class Independent(Distribution):
    """Reinterprets the rightmost ``reinterpreted_batch_ndims`` batch dims of ``base_distribution`` as event
    dims (``torch.distributions.Independent``): log_prob and entropy sum over them. A diagonal Gaussian over
    vectors is ``Independent(Normal(loc, scale), 1)``. ValueError when more dims are asked for than the base
    batch shape has."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        bshape = tuple(base_distribution.batch_shape)
        if n > len(bshape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(bshape)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        split = len(bshape) - n
        super().__init__(Size(bshape[:split]), Size(bshape[split:] + tuple(base_distribution.event_shape)),
                         validate_args=False if validate_args is None else validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @property
    def support(self):
        return self.base_dist.support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, x):
        n = self.reinterpreted_batch_ndims
        return x.sum(tuple(range(-n, 0))) if n else x

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


del constraints
