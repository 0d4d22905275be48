"""Batch normalization modules (PyTorch's ``torch.nn.modules.batchnorm``)."""
from ..._ops.creation import ones, tensor, zeros
from ... import _dtype
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, _channels, _placeholders
from .module import Module

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]


class _BatchNorm(Module):
    _expected = (2, 3)
    _version = 2  # version 2 added num_batches_tracked (older checkpoints load without it)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._has_bias = affine and bias
        if affine:
            self.weight = Parameter(ones(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=_dtype.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.ndim not in self._expected:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._expected)} input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise RuntimeError(f"running_mean should contain {input.shape[1]} elements not {self.num_features}")
        momentum = self.momentum if self.momentum is not None else 0.0
        use_batch = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                momentum = 1.0 / float(self.num_batches_tracked.item())
        return F.batch_norm(input, self.running_mean if (not self.training or self.track_running_stats) else None,
                            self.running_var if (not self.training or self.track_running_stats) else None,
                            self.weight, self.bias, use_batch, momentum, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self._has_bias}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L)."""
    _expected = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W)."""
    _expected = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W)."""
    _expected = (5,)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, *) whose statistics torch synchronizes across the processes of a
    ``process_group`` (``torch.nn.SyncBatchNorm``). tinytorch has no ``torch.distributed``, so no group is
    ever initialized and it normalizes with the local batch, which is what torch does outside a process group.
    ValueError for inputs of fewer than 2 dims or with zero channels."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def forward(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        self._expected = (input.ndim,)
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d replaced by a SyncBatchNorm that shares its parameters and
        buffers (recursively; other modules are kept)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group, bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


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


class LazyBatchNorm1d(_LazyNormBase):
    """``nn.BatchNorm1d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = BatchNorm1d
    _n = 0
    forward = BatchNorm1d.forward


class LazyBatchNorm2d(_LazyNormBase):
    """``nn.BatchNorm2d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = BatchNorm2d
    _n = 0
    forward = BatchNorm2d.forward


class LazyBatchNorm3d(_LazyNormBase):
    """``nn.BatchNorm3d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = BatchNorm3d
    _n = 0
    forward = BatchNorm3d.forward
