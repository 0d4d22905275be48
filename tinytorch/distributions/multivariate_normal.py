import math

from .._ops.random import randn
from .._ops.linalg_composites import solve_triangular
from .._ops.lapack import cholesky, inv
from .._ops.shape import broadcast_shapes
from .._tensor import Size
from . import constraints
from .distribution import Distribution


def _batch_mahalanobis(L, x):
    """||L^-1 x||^2 over the last dim, L (*, k, k) lower triangular, x (*, k)."""
    y = solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return (y * y).sum(-1)


class MultivariateNormal(Distribution):
    """Multivariate normal N(loc, Sigma) over vectors of size k (``torch.distributions.MultivariateNormal``),
    given exactly one of ``covariance_matrix`` (*, k, k), ``precision_matrix`` (its inverse) or ``scale_tril``
    (the lower Cholesky factor L, Sigma = L L^T); loc (*, k). The batch shape broadcasts loc's and the
    matrix's. Reparameterized: rsample = loc + L eps, eps ~ N(0, I). ValueError for a missing / double
    parameter or a non-positive-definite matrix."""
    arg_constraints = {"loc": constraints.real, "covariance_matrix": constraints.dependent,
                       "precision_matrix": constraints.dependent, "scale_tril": constraints.dependent}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        mat = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        if mat.ndim < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch = broadcast_shapes(tuple(mat.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        self.loc = loc.expand(batch + (k,))
        validate = Distribution._validate_default if validate_args is None else validate_args
        try:
            if scale_tril is not None:
                self._unbroadcasted_scale_tril = scale_tril
            elif covariance_matrix is not None:
                self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
            else:
                self._unbroadcasted_scale_tril = cholesky(inv(precision_matrix))
        except RuntimeError as e:  # LinAlgError: not positive definite
            if validate:
                raise ValueError(f"Expected the matrix of distribution MultivariateNormal to be positive-definite: "
                                 f"{e}") from None
            raise
        self._given = {"scale_tril": scale_tril, "covariance_matrix": covariance_matrix,
                       "precision_matrix": precision_matrix}
        super().__init__(Size(batch), Size((k,)), validate_args=validate_args)

    @property
    def scale_tril(self):
        L = self._unbroadcasted_scale_tril
        return L.expand(tuple(self.batch_shape) + tuple(L.shape[-2:]))

    @property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self.batch_shape) + tuple(L.shape[-2:]))

    @property
    def precision_matrix(self):
        return inv(self.covariance_matrix)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return (L * L).sum(-1).expand(tuple(self.batch_shape) + tuple(self.event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        L = self._unbroadcasted_scale_tril
        return L.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.event_shape[0]
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self.event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(tuple(self.batch_shape)) if self.batch_shape else h

    def __repr__(self):
        name = next(n for n, v in self._given.items() if v is not None)
        return f"MultivariateNormal(loc: {self.loc.shape}, {name}: {getattr(self, name).shape})"
