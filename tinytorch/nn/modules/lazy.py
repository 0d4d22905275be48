"""Lazy modules: ``nn.LazyLinear``, ``LazyConv*d``, ``LazyConvTranspose*d``, ``LazyBatchNorm*d`` and
``LazyInstanceNorm*d`` infer their input size (in_features / in_channels / num_features) from the first
input, then become the ordinary module (``cls_to_become``), as in PyTorch.

Until then their parameters are ``UninitializedParameter`` placeholders; the first call materializes those
same objects, so an optimizer created before it trains them.
"""
from ..parameter import UninitializedBuffer, UninitializedParameter
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .module import Module


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


class LazyLinear(LazyModuleMixin, Module):
    """``nn.Linear`` whose ``in_features`` is the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = 0, out_features
        self._lazy = ((out_features, bias), dict(device=device, dtype=dtype))
        _placeholders(self, ["weight"] + (["bias"] if bias else []), [], dict(device=device, dtype=dtype))
        if not bias:
            self.bias = None

    def initialize_parameters(self, input):
        args, kw = self._lazy
        self._become(Linear(input.shape[-1], *args, **kw))

    forward = Linear.forward  # runs only after the module became a Linear; shows Linear's signature

    def extra_repr(self):
        return f"in_features=0, out_features={self.out_features}, bias={self.bias is not None}"


def _channels(input, n):
    return input.shape[1] if input.ndim == n + 2 else input.shape[0]  # batched or unbatched


class _LazyConvNd(LazyModuleMixin, Module):
    _n = 2

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(out_channels, bias, device, dtype, kernel_size=kernel_size, stride=stride, padding=padding,
                        dilation=dilation, groups=groups, padding_mode=padding_mode)

    def _lazy_init(self, out_channels, bias, device, dtype, **conv_args):
        Module.__init__(self)
        self.in_channels, self.out_channels = 0, out_channels
        self._lazy = (conv_args, dict(bias=bias, device=device, dtype=dtype))
        _placeholders(self, ["weight"] + (["bias"] if bias else []), [], dict(device=device, dtype=dtype))
        if not bias:
            self.bias = None

    def initialize_parameters(self, input, *args, **kwargs):
        conv_args, kw = self._lazy
        self._become(self.cls_to_become(_channels(input, self._n), self.out_channels, **conv_args, **kw))


class _LazyConvTransposeNd(_LazyConvNd):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(out_channels, bias, device, dtype, kernel_size=kernel_size, stride=stride, padding=padding,
                        output_padding=output_padding, groups=groups, dilation=dilation, padding_mode=padding_mode)


def _lazy_conv(name, target, n, doc):
    base = _LazyConvTransposeNd if target.transposed else _LazyConvNd
    # forward is the target's (the module becomes the target before its first forward runs), so the class
    # shows the target's forward signature, as PyTorch's Lazy classes (which subclass the target) do
    return type(name, (base,), {"cls_to_become": target, "_n": n, "__doc__": doc, "forward": target.forward})


for _name, _target, _n in (("LazyConv1d", Conv1d, 1), ("LazyConv2d", Conv2d, 2), ("LazyConv3d", Conv3d, 3),
                          ("LazyConvTranspose1d", ConvTranspose1d, 1), ("LazyConvTranspose2d", ConvTranspose2d, 2),
                          ("LazyConvTranspose3d", ConvTranspose3d, 3)):
    globals()[_name] = _lazy_conv(_name, _target, _n, f"``nn.{_target.__name__}`` whose ``in_channels`` comes from "
                                                      "the first input.")


class _LazyNormBase(LazyModuleMixin, Module):
    _n = 2

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__()
        self.num_features = 0
        self._lazy = dict(eps=eps, momentum=momentum, affine=affine, track_running_stats=track_running_stats,
                          device=device, dtype=dtype, bias=bias)
        _placeholders(self, (["weight", "bias"] if bias else ["weight"]) if affine else [],
                      ["running_mean", "running_var"] if track_running_stats else [], dict(device=device, dtype=dtype))

    def initialize_parameters(self, input):
        self._become(self.cls_to_become(_channels(input, self._n) if self._n else input.shape[1], **self._lazy))


def _lazy_norm(name, target, n, doc):
    return type(name, (_LazyNormBase,), {"cls_to_become": target, "_n": n, "__doc__": doc, "forward": target.forward})


for _name, _target, _n in (("LazyBatchNorm1d", BatchNorm1d, 0), ("LazyBatchNorm2d", BatchNorm2d, 0),
                          ("LazyBatchNorm3d", BatchNorm3d, 0), ("LazyInstanceNorm1d", InstanceNorm1d, 1),
                          ("LazyInstanceNorm2d", InstanceNorm2d, 2), ("LazyInstanceNorm3d", InstanceNorm3d, 3)):
    globals()[_name] = _lazy_norm(_name, _target, _n, f"``nn.{_target.__name__}`` whose ``num_features`` is the "
                                                      "channel dim of the first input.")

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
