"""Instance normalization modules (PyTorch's ``torch.nn.modules.instancenorm``)."""
from .. import functional as F
from .batchnorm import _BatchNorm, _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_BatchNorm):
    """Instance normalization (``F.instance_norm``); no affine parameters and no running statistics by default."""
    _expected = (3,)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        batched = self._expected[0]
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D input)")
        x = input.unsqueeze(0) if input.ndim == batched - 1 else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features ({self.num_features}), but got: "
                             f"{x.shape[1]}.")
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                              self.momentum if self.momentum is not None else 0.1, self.eps)
        return out.squeeze(0) if input.ndim == batched - 1 else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L)."""
    _expected = (3,)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W)."""
    _expected = (4,)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or (C, D, H, W)."""
    _expected = (5,)


class LazyInstanceNorm1d(_LazyNormBase):
    """``nn.InstanceNorm1d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = InstanceNorm1d
    _n = 1
    forward = InstanceNorm1d.forward


class LazyInstanceNorm2d(_LazyNormBase):
    """``nn.InstanceNorm2d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = InstanceNorm2d
    _n = 2
    forward = InstanceNorm2d.forward


class LazyInstanceNorm3d(_LazyNormBase):
    """``nn.InstanceNorm3d`` whose ``num_features`` is the channel dim of the first input."""
    cls_to_become = InstanceNorm3d
    _n = 3
    forward = InstanceNorm3d.forward
