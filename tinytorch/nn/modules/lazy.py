"""``LazyModuleMixin`` (PyTorch's ``torch.nn.modules.lazy``): the lazy modules (``nn.LazyLinear``,
``LazyConv*d``, ``LazyConvTranspose*d``, ``LazyBatchNorm*d``, ``LazyInstanceNorm*d``, each defined next to the
module it becomes) infer their input size (in_features / in_channels / num_features) from the first input, then
become the ordinary module (``cls_to_become``), as in PyTorch.

Until then their parameters are ``UninitializedParameter`` placeholders; the first call materializes those
same objects, so an optimizer created before it trains them.
"""
from ..parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["LazyModuleMixin"]

_MOVED = {"LazyLinear": "linear", "LazyConv1d": "conv", "LazyConv2d": "conv", "LazyConv3d": "conv",
          "LazyConvTranspose1d": "conv", "LazyConvTranspose2d": "conv", "LazyConvTranspose3d": "conv",
          "LazyBatchNorm1d": "batchnorm", "LazyBatchNorm2d": "batchnorm", "LazyBatchNorm3d": "batchnorm",
          "LazyInstanceNorm1d": "instancenorm", "LazyInstanceNorm2d": "instancenorm",
          "LazyInstanceNorm3d": "instancenorm"}


class LazyModuleMixin:
    """Runs ``initialize_parameters(*input)`` on the first call while parameters are uninitialized."""

    cls_to_become = None

    def has_uninitialized_params(self):
        stores = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer)) for t in stores)

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            if not isinstance(self, LazyModuleMixin):  # it became cls_to_become: call as that class
                return type(self).__call__(self, *args, **kwargs)
        return super().__call__(*args, **kwargs)

    def _become(self, real):
        """Take over the state of ``real`` (an instance of ``cls_to_become`` built for the inferred size),
        materializing this module's placeholders in place, and turn into that class."""
        for store in ("_parameters", "_buffers"):
            mine, theirs = self.__dict__[store], real.__dict__[store]
            for name, t in theirs.items():
                old = mine.get(name)
                if isinstance(old, (UninitializedParameter, UninitializedBuffer)) and t is not None:
                    old.materialize(tuple(t.shape), t.device, t.dtype)
                    old.detach().copy_(t.detach())
                    theirs[name] = old
        keep = {k: v for k, v in self.__dict__.items() if k in ("training",) or k.endswith("_hooks")}
        self.__dict__.update(real.__dict__)
        self.__dict__.update(keep)
        self.__class__ = self.cls_to_become


def _placeholders(module, params, buffers, factory):
    for name in params:
        module.register_parameter(name, UninitializedParameter(**factory))
    for name in buffers:
        module.register_buffer(name, UninitializedBuffer(**factory))


def _channels(input, n):
    return input.shape[1] if input.ndim == n + 2 else input.shape[0]  # batched or unbatched


def __getattr__(name):
    # the Lazy classes were defined here before moving next to their targets: whole modules pickled then
    # (and code importing them from here) still find them
    if name in _MOVED:
        import importlib
        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
