"""``torch.ao.quantization.fuse_modules``: replace runs of submodules (named by dotted paths) with one fused
module; the first path gets the fused module, the others an ``nn.Identity``. Forward pre-hooks of the first
module and forward hooks of the last move to the fused one. Source: PyTorch 2.13's file of this name.
"""
import copy

from ... import nn
from ...nn.utils.parametrize import type_before_parametrizations
from .fuser_method_mappings import fuse_conv_bn, fuse_conv_bn_relu, get_fuser_method  # noqa: F401

__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat"]


def _get_module(model, path):
    for part in path.split("."):
        model = getattr(model, part)
    return model


def _set_module(model, path, module):
    *parents, last = path.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, module)


def fuse_known_modules(mod_list, is_qat, additional_fuser_method_mapping=None):
    """The replacements for the modules of ``mod_list``: [fused, Identity, ...] (the Identities take the
    first module's training flag). AssertionError when no fuser exists for their types."""
    kinds = tuple(type_before_parametrizations(m) for m in mod_list)
    fuser = get_fuser_method(kinds, additional_fuser_method_mapping)
    fused = fuser(is_qat, *mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    out = [fused]
    for _ in mod_list[1:]:
        ident = nn.Identity()
        ident.training = mod_list[0].training
        out.append(ident)
    return out


def _fuse(model, modules_to_fuse, is_qat, inplace, fuser_func, fuse_custom_config_dict):
    if not inplace:
        model = copy.deepcopy(model)
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    groups = [modules_to_fuse] if all(isinstance(p, str) for p in modules_to_fuse) else modules_to_fuse
    for group in groups:
        new = fuser_func([_get_module(model, p) for p in group], is_qat, extra)
        for path, mod in zip(group, new):
            _set_module(model, path, mod)
    return model


def fuse_modules(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules, fuse_custom_config_dict=None):
    """Fuse, for inference, each run of submodules in ``modules_to_fuse`` (a list of dotted names, or a list
    of such lists): conv + bn, conv + bn + relu, conv + relu, linear + bn, linear + relu, bn + relu,
    convtranspose + bn (see fuser_method_mappings). Works on a deep copy unless ``inplace``; returns the
    model. The modules must be in eval mode for the BN folds (AssertionError "Fusion only for eval!")."""
    return _fuse(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model, modules_to_fuse, inplace=False, fuser_func=fuse_known_modules,
                     fuse_custom_config_dict=None):
    """As ``fuse_modules`` for quantization-aware training: BatchNorms are kept (``nni.ConvBn2d`` ...)."""
    return _fuse(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
