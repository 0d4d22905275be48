"""Batch normalization modules at PyTorch's module path ``torch.nn.modules.batchnorm`` (defined in ``layers`` and
``lazy``)."""
from .layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm, _BatchNorm  # noqa: F401
from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]
