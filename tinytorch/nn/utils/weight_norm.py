"""The older, hook-based weight normalization (``torch.nn.utils.weight_norm`` / ``remove_weight_norm``):
parameters ``<name>_g`` and ``<name>_v``, and a forward pre-hook that recomputes ``<name>`` before each call.
PyTorch deprecates it for ``parametrizations.weight_norm``; old checkpoints and code still use it."""
import warnings

from ..parameter import Parameter
from .parametrizations import _weight_norm, norm_except_dim

__all__ = ["weight_norm", "remove_weight_norm", "WeightNorm"]


class WeightNorm:
    """The forward pre-hook: ``module.<name> = g * v / ||v||`` from the current ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``<name>_g`` (norm over every dim but ``dim``) and a direction
    ``<name>_v``, both parameters, recombined before every forward. RuntimeError when ``name`` already has a
    weight norm. Returns ``module``."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    fn = WeightNorm(name, dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_hook_reparametrization(module, hook_type, name, what):
    """Undo the forward pre-hook reparametrization of type ``hook_type`` on ``name`` (its ``remove`` folds the
    pieces back into one parameter); ValueError "<what> of '<name>' not found" when there is none."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>``. ValueError when there is no weight
    norm on ``name``."""
    return remove_hook_reparametrization(module, WeightNorm, name, "weight_norm")
