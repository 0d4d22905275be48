"""The ``Distribution`` base class: shapes, argument validation and the sample / rsample contract."""
from ..autograd.grad_mode import no_grad
from .._tensor import Size, Tensor
from . import constraints


class Distribution:
    """Base class of probability distributions (``torch.distributions.Distribution``).

    ``batch_shape``: the shape of independent parameter sets; ``event_shape``: the shape of one draw.
    ``sample(sample_shape)`` returns sample_shape + batch_shape + event_shape, without gradient;
    ``rsample`` the same through the reparameterization trick (Kingma & Welling 2014), with gradient,
    where ``has_rsample``. Invalid parameters raise ValueError when validation is on (the default).
    """
    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None
    _validate_default = True

    @staticmethod
    def set_default_validate_args(value):
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        self._validate_args = Distribution._validate_default if validate_args is None else validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraint is constraints.dependent or name not in self.__dict__:
                    continue  # parameters given the other way (probs vs logits) are derived, not checked
                value = getattr(self, name)
                if not isinstance(value, Tensor):
                    continue
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                        f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid "
                        f"values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        raise NotImplementedError

    def sample_n(self, n):
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        if not isinstance(sample_shape, (tuple, list)):
            sample_shape = (sample_shape,)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        if self.support is None:
            return
        if not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        params = ", ".join(f"{k}: {getattr(self, k).shape if getattr(self, k).numel() != 1 else getattr(self, k)}"
                           for k in self.arg_constraints if k in self.__dict__)
        return f"{type(self).__name__}({params})"
