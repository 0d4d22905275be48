"""``tinytorch.distributions``: probability distributions with sampling, reparameterized sampling and log
densities, as ``torch.distributions`` (same names, arguments, shapes and validation)."""
from .distribution import Distribution
from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal
from .uniform import Uniform
from . import constraints

__all__ = ["Distribution", "Bernoulli", "Categorical", "Normal", "Uniform", "constraints"]
