"""Ready-made parametrizations (``torch.nn.utils.parametrizations``): ``weight_norm`` (Salimans & Kingma 2016,
"Weight Normalization") and ``spectral_norm`` (Miyato et al. 2018, "Spectral Normalization for Generative
Adversarial Networks"), registered through ``parametrize``."""
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept, size-1 elsewhere); dim -1: of all of v."""
    if dim == -1:
        return v.norm(pow)
    d = dim % v.ndim
    return v.norm(pow, dim=tuple(i for i in range(v.ndim) if i != d), keepdim=True)


def _weight_norm(v, g, dim=0):
    """w = g * v / ||v|| (norm over every dim but ``dim``): ``torch._weight_norm``."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as g * v / ||v|| (the norm over every dim but ``dim``; None: the whole
    tensor), with g in ``parametrizations.<name>.original0`` and v in ``original1``. A state_dict saved with
    the older ``nn.utils.weight_norm`` keys (``<name>_g``, ``<name>_v``) loads into it. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    if hasattr(module, "_register_load_state_dict_pre_hook"):
        module._register_load_state_dict_pre_hook(compat)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            w = self._matrix(weight)
            h, wd = w.shape
            self.register_buffer("_u", F.normalize(w.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(w.new_empty(wd).normal_(0, 1), dim=0, eps=eps))
            self._power_method(w, 15)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, w, iterations):
        # u and v are updated in place (they are buffers); forward clones them before use
        for _ in range(iterations):
            self._u.copy_(F.normalize(w @ self._v, dim=0, eps=self.eps))
            self._v.copy_(F.normalize(w.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (w @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as W / sigma(W), sigma estimated by power iteration on W reshaped to a
    matrix around ``dim`` (default 0; 1 for transposed convolutions), ``n_power_iterations`` per forward in
    training mode; the vectors are buffers ``_u`` / ``_v`` of ``parametrizations.<name>[0]``. ValueError when
    the module has no such tensor."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import conv
        transposed = tuple(getattr(conv, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                           if hasattr(conv, n))
        dim = 1 if transposed and isinstance(module, transposed) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
