"""The older, hook-based spectral normalization (``torch.nn.utils.spectral_norm`` / ``remove_spectral_norm``,
Miyato et al. 2018, "Spectral Normalization for Generative Adversarial Networks"): the parameter
``<name>_orig``, power-iteration buffers ``<name>_u`` and ``<name>_v``, and a forward pre-hook that sets
``<name> = <name>_orig / sigma``. ``parametrizations.spectral_norm`` is the newer form; GAN code and
checkpoints still use this one (its state_dict keys are ``weight_orig``, ``weight_u``, ``weight_v``)."""
from ... import nn as _nn
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter

__all__ = ["spectral_norm", "remove_spectral_norm", "SpectralNorm"]


class SpectralNorm:
    """The forward pre-hook. sigma = u . (W v), W the weight as a (size of ``dim``, rest) matrix; in training
    mode each call first runs ``n_power_iterations`` steps that update the ``u`` / ``v`` buffers in place."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        w = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(w.t() @ u, dim=0, eps=self.eps, out=v)
                    u = F.normalize(w @ v, dim=0, eps=self.eps, out=u)
                # the buffers change again next call: the graph keeps copies
                u, v = u.clone(), v.clone()
        sigma = u.dot(w @ v)
        return weight / sigma

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration before every
    forward (``torch.nn.utils.spectral_norm``). ``dim`` is the output dim of the weight (default 0; 1 for
    transposed convolutions). RuntimeError when ``name`` already has one; ValueError when the parameter is
    None. Returns ``module``."""
    if dim is None:
        dim = 1 if isinstance(module, (_nn.ConvTranspose1d, _nn.ConvTranspose2d, _nn.ConvTranspose3d)) else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    if weight is None:
        raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
    with no_grad():
        w = fn.reshape_weight_to_matrix(weight)
        h, wd = w.shape
        u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(weight.new_empty(wd).normal_(0, 1), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())  # a plain attribute until the first forward, as torch
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name="weight"):
    """Fold the spectral norm of ``name`` back into one parameter. ValueError when there is none."""
    from .weight_norm import remove_hook_reparametrization
    return remove_hook_reparametrization(module, SpectralNorm, name, "spectral_norm")


