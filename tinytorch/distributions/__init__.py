"""``tinytorch.distributions``: probability distributions with sampling, reparameterized sampling and log
densities, as ``torch.distributions`` (same names, arguments, shapes and validation), and closed-form KL
divergences between them."""
from .distribution import Distribution
from .bernoulli import Bernoulli
from .categorical import Categorical
from .exponential import Exponential
from .gamma import Beta, Gamma, Poisson
from .independent import Independent
from .laplace import Laplace
from .normal import Normal
from .uniform import Uniform
from .kl import kl_divergence, register_kl
from . import constraints, kl

__all__ = ["Distribution", "Bernoulli", "Beta", "Categorical", "Exponential", "Gamma", "Independent", "Laplace",
           "Normal", "Poisson", "Uniform", "constraints", "kl", "kl_divergence", "register_kl"]
