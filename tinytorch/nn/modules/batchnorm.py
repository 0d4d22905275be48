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
    r"""Batch normalization over (N, C) or (N, C, L).

    In training mode each channel is normalized by the mean and (biased) variance over the batch and
    spatial positions, ``y = (x - mean) / sqrt(var + eps) * weight + bias``, and the running averages take the
    unbiased variance; in eval mode the running averages are used (Ioffe & Szegedy 2015, "Batch Normalization:
    Accelerating Deep Network Training by Reducing Internal Covariate Shift").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root, for numerical stability.
        momentum (float, optional): the weight of the new batch statistic in the running averages
            (``running = (1 - momentum) * running + momentum * batch``); None takes the cumulative average
            (``1 / num_batches_tracked``).
        affine (bool): learn a per-channel scale ``weight`` (ones) and shift ``bias`` (zeros).
        track_running_stats (bool): keep ``running_mean`` / ``running_var`` (and ``num_batches_tracked``) and
            normalize with them in eval mode; without them the batch statistics are used in both modes.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, L)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.BatchNorm1d(3)
        >>> y = m(torch.randn(8, 3) * 5 + 2)
        >>> bool(y.mean(0).abs().max() < 1e-5)
        True
        >>> m.num_batches_tracked
        tensor(1)
    """
    _expected = (2, 3)


class BatchNorm2d(_BatchNorm):
    r"""Batch normalization over (N, C, H, W), statistics per channel over N, H and W.

    In training mode each channel is normalized by the mean and (biased) variance over the batch and
    spatial positions, ``y = (x - mean) / sqrt(var + eps) * weight + bias``, and the running averages take the
    unbiased variance; in eval mode the running averages are used (Ioffe & Szegedy 2015, "Batch Normalization:
    Accelerating Deep Network Training by Reducing Internal Covariate Shift").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root, for numerical stability.
        momentum (float, optional): the weight of the new batch statistic in the running averages
            (``running = (1 - momentum) * running + momentum * batch``); None takes the cumulative average
            (``1 / num_batches_tracked``).
        affine (bool): learn a per-channel scale ``weight`` (ones) and shift ``bias`` (zeros).
        track_running_stats (bool): keep ``running_mean`` / ``running_var`` (and ``num_batches_tracked``) and
            normalize with them in eval mode; without them the batch statistics are used in both modes.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.BatchNorm2d(4, affine=False)
        >>> m(torch.randn(2, 4, 5, 5)).shape
        torch.Size([2, 4, 5, 5])
        >>> m.running_mean.shape
        torch.Size([4])
    """
    _expected = (4,)


class BatchNorm3d(_BatchNorm):
    r"""Batch normalization over (N, C, D, H, W), statistics per channel over N, D, H and W.

    In training mode each channel is normalized by the mean and (biased) variance over the batch and
    spatial positions, ``y = (x - mean) / sqrt(var + eps) * weight + bias``, and the running averages take the
    unbiased variance; in eval mode the running averages are used (Ioffe & Szegedy 2015, "Batch Normalization:
    Accelerating Deep Network Training by Reducing Internal Covariate Shift").

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root, for numerical stability.
        momentum (float, optional): the weight of the new batch statistic in the running averages
            (``running = (1 - momentum) * running + momentum * batch``); None takes the cumulative average
            (``1 / num_batches_tracked``).
        affine (bool): learn a per-channel scale ``weight`` (ones) and shift ``bias`` (zeros).
        track_running_stats (bool): keep ``running_mean`` / ``running_var`` (and ``num_batches_tracked``) and
            normalize with them in eval mode; without them the batch statistics are used in both modes.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, D, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.BatchNorm3d(2)
        >>> m(torch.randn(2, 2, 3, 4, 4)).shape
        torch.Size([2, 2, 3, 4, 4])
    """
    _expected = (5,)


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization over (N, C, *) whose statistics torch synchronizes across the processes of a
    ``process_group`` (``torch.nn.SyncBatchNorm``). tinytorch has no ``torch.distributed``, so no group is
    ever initialized and it normalizes with the local batch, which is what torch does outside a process group.
    ValueError for inputs of fewer than 2 dims or with zero channels.

    Args:
        num_features (int): C, the number of channels.
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new batch statistic in the running averages; None takes
            the cumulative average.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and use them in eval mode.
        process_group (optional): the group the statistics would be reduced over (kept, unused here).
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, *)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.SyncBatchNorm(3)
        >>> m(torch.randn(4, 3, 2, 2)).shape
        torch.Size([4, 3, 2, 2])
        >>> net = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Conv2d(1, 3, 1), nn.BatchNorm2d(3)))
        >>> type(net[1]).__name__
        'SyncBatchNorm'
    """

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
    r"""``nn.BatchNorm1d`` whose ``num_features`` is the channel dim (dim 1) of the first input; until
    then its parameters and running statistics are uninitialized placeholders, and the first call turns the module
    into a ``BatchNorm1d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new batch statistic in the running averages.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and use them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C)` or :math:`(N, C, L)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyBatchNorm1d()
        >>> y = m(torch.randn(4, 3))
        >>> type(m).__name__, m.num_features
        ('BatchNorm1d', 3)
    """
    cls_to_become = BatchNorm1d
    _n = 0
    forward = BatchNorm1d.forward


class LazyBatchNorm2d(_LazyNormBase):
    r"""``nn.BatchNorm2d`` whose ``num_features`` is the channel dim (dim 1) of the first input; until
    then its parameters and running statistics are uninitialized placeholders, and the first call turns the module
    into a ``BatchNorm2d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new batch statistic in the running averages.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and use them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyBatchNorm2d()
        >>> y = m(torch.randn(2, 3, 4, 4))
        >>> type(m).__name__, m.num_features
        ('BatchNorm2d', 3)
    """
    cls_to_become = BatchNorm2d
    _n = 0
    forward = BatchNorm2d.forward


class LazyBatchNorm3d(_LazyNormBase):
    r"""``nn.BatchNorm3d`` whose ``num_features`` is the channel dim (dim 1) of the first input; until
    then its parameters and running statistics are uninitialized placeholders, and the first call turns the module
    into a ``BatchNorm3d``.

    Args:
        eps (float): added to the variance before its square root.
        momentum (float, optional): the weight of the new batch statistic in the running averages.
        affine (bool): learn a per-channel ``weight`` and ``bias``.
        track_running_stats (bool): keep running averages and use them in eval mode.
        device, dtype: where and as what the parameters and buffers are created.
        bias (bool, keyword-only): with ``affine``, also learn the shift.

    Shape:
        - Input: :math:`(N, C, D, H, W)`.
        - Output: the input's shape.

    Examples::

        >>> m = nn.LazyBatchNorm3d()
        >>> y = m(torch.randn(2, 3, 2, 2, 2))
        >>> type(m).__name__, m.num_features
        ('BatchNorm3d', 3)
    """
    cls_to_become = BatchNorm3d
    _n = 0
    forward = BatchNorm3d.forward
