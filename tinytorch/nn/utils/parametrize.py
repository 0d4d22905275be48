"""Parametrizations (``torch.nn.utils.parametrize``): ``module.weight`` becomes the output of a chain of
modules applied to a stored ``original`` tensor, recomputed at each access, so constraints (unit norm,
orthogonality, a reparametrized gain) hold while the optimizer updates ``original``.

As in PyTorch, the module's class is swapped for a subclass that has a property per parametrized name, and the
originals live in ``module.parametrizations[name]`` (state_dict keys ``parametrizations.<name>.original``,
or ``original0``, ``original1``, ... when the first parametrization's ``right_inverse`` returns several)."""
import contextlib

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations", "transfer_parametrizations_and_params"]

_cache_enabled = [0]
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside, each parametrized tensor is computed once per module and reused (PyTorch's ``cached``)."""
    _cache_enabled[0] += 1
    try:
        yield
    finally:
        _cache_enabled[0] -= 1
        if not _cache_enabled[0]:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its ``original`` (or ``original0``, ``original1``, ...)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with no_grad():
            new = first.right_inverse(original) if hasattr(first, "right_inverse") else original
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.dtype is not original.dtype or tuple(new.shape) != tuple(original.shape)):
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype or shape.\n"
                                 f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}\n"
                                 f"original.shape: {tuple(original.shape)}\n"
                                 f"right_inverse(original).shape: {tuple(new.shape)}\n")
            with no_grad():
                original.copy_(new) if new is not original else None
            self._register(original, "original")
        else:
            for i, t in enumerate(new):
                self._register(Parameter(t.detach().clone(), original.requires_grad)
                               if isinstance(original, Parameter) else t.detach().clone(), f"original{i}")

    def _register(self, t, name):
        if isinstance(t, Parameter):
            self.register_parameter(name, t)
        else:
            self.register_buffer(name, t)

    def right_inverse(self, value):
        """Store ``value`` as the parametrized tensor: run the right inverses backwards into the originals."""
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        mods = list(self)
        x = mods[0](self.original) if self.is_tensor else \
            mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _parametrized_class(module):
    cls = type(module)
    if getattr(cls, "_is_parametrized_class", False):
        return cls
    return type(f"Parametrized{cls.__name__}", (cls,), {"_is_parametrized_class": True, "_base_class": cls})


def _make_property(name):
    def get(self):
        plist = self.parametrizations[name]
        if _cache_enabled[0]:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    return property(get, set_)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` (a parameter or buffer) by ``parametrization``, a Module whose
    forward maps the stored original(s) to the tensor and whose optional ``right_inverse`` maps a tensor back.
    A second registration on the same name chains after the first. ValueError when the name is neither a
    parameter nor a buffer, or when (without ``unsafe``) the parametrization changes the dtype or shape.
    Returns ``module``."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            if not isinstance(X, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(X).__name__}.")
            if X.dtype is not Y.dtype or tuple(X.shape) != tuple(Y.shape):
                raise ValueError("Registering a parametrization may not change the dtype or shape of the tensor, "
                                 "unless `unsafe` flag is enabled.")
        plist.append(parametrization)
        return module
    if tensor_name in module._parameters:
        original = module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        original = module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    if original is None:
        raise ValueError(f"Module '{module}' has no tensor '{tensor_name}' to parametrize (it is None)")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not unsafe:
        Z = plist()
        if not isinstance(Z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
        if Z.dtype is not original.dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized dtype: {original.dtype}\nparametrized dtype: {Z.dtype}")
        if tuple(Z.shape) != tuple(original.shape):
            raise ValueError("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized shape: {original.shape}\nparametrized shape: {Z.shape}")
    module._parameters.pop(tensor_name, None)
    module._buffers.pop(tensor_name, None)
    if "parametrizations" not in module._modules:
        module.parametrizations = ModuleDict()
        module.__class__ = _parametrized_class(module)
    module.parametrizations[tensor_name] = plist
    setattr(module.__class__, tensor_name, _make_property(tensor_name))
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has parametrizations (on ``tensor_name``, if given)."""
    plists = module._modules.get("parametrizations")
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrization of ``tensor_name``: the tensor becomes a plain parameter again, holding its
    current parametrized value (``leave_parametrized``) or the original. ValueError when it is not
    parametrized, or when leave_parametrized=False and there are several originals."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                if t.dtype is original.dtype and tuple(t.shape) == tuple(original.shape):
                    original.copy_(t)
                else:
                    original = Parameter(t.detach().clone(), original.requires_grad) \
                        if isinstance(original, Parameter) else t.detach().clone()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach().clone(), plist.original0.requires_grad) \
            if isinstance(plist.original0, Parameter) else t.detach().clone()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = module.__class__._base_class
    return module


def type_before_parametrizations(module):
    """The module's class before parametrizations swapped it."""
    return getattr(type(module), "_base_class", type(module))


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Register on ``to_module`` the parametrizations of ``from_module`` (all, or ``tensor_name``'s) and copy
    their originals."""
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations)
    for name in names:
        plist = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            orig = plist.original if plist.is_tensor else plist.original0
            to_module.register_parameter(name, Parameter(orig.detach().clone()))
        for p in plist:
            register_parametrization(to_module, name, p, unsafe=True)
        with no_grad():
            for key, t in plist.named_parameters(recurse=False):
                getattr(to_module.parametrizations[name], key).copy_(t)
    return to_module
