"""``tinytorch.distributions``: probability distributions with sampling, reparameterized sampling and log
densities, as ``torch.distributions`` (same names, arguments, shapes and validation), and closed-form KL
divergences between them."""
from .distribution import Distribution
from .bernoulli import Bernoulli
from .categorical import Categorical
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Beta, Chi2, Gamma, Poisson
from .binomial import Binomial
from .cauchy import Cauchy
from .geometric import Geometric
from .one_hot_categorical import Multinomial, OneHotCategorical
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .log_normal import LogNormal
from .studentT import StudentT
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform
from .kl import kl_divergence, register_kl
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform, TanhTransform, Transform,
                         identity_transform)
from .weibull import HalfCauchy, Pareto, Weibull
from .negative_binomial import NegativeBinomial
from .mixture_same_family import MixtureSameFamily
from .relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from . import constraints, kl, transforms

__all__ = ["Distribution", "Bernoulli", "Beta", "Binomial", "Categorical", "Geometric", "Multinomial",
           "OneHotCategorical", "Cauchy", "Chi2", "Dirichlet", "Exponential", "Gamma",
           "Gumbel", "HalfNormal", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "Poisson",
           "StudentT", "Uniform", "constraints", "kl", "kl_divergence", "register_kl", "TransformedDistribution",
           "Transform", "ComposeTransform", "ExpTransform", "AffineTransform", "SigmoidTransform", "TanhTransform",
           "identity_transform", "transforms", "AbsTransform", "PowerTransform", "SoftmaxTransform",
           "SoftplusTransform", "HalfCauchy", "Pareto", "Weibull", "NegativeBinomial", "MixtureSameFamily",
           "RelaxedBernoulli", "RelaxedOneHotCategorical"]
