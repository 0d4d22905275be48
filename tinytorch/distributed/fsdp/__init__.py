"""``torch.distributed.fsdp``: the names libraries import from it, without sharded data parallelism.

tinytorch does not implement FSDP (parameter sharding with all-gather before use and reduce-scatter of
gradients). What is here is honest about it: the policy dataclasses (``MixedPrecisionPolicy``,
``OffloadPolicy``, ``CPUOffloadPolicy``) are plain values as in PyTorch; ``FSDPModule`` and
``FullyShardedDataParallel`` are classes no module is an instance of (so ``isinstance(model, FSDP)`` checks
answer False); ``fully_shard(...)`` and ``FullyShardedDataParallel(...)`` raise NotImplementedError pointing to
``DistributedDataParallel`` (tinytorch.nn.parallel), which tinytorch implements. Source: PyTorch's
``torch/distributed/fsdp``.
"""
from dataclasses import dataclass

__all__ = ["FullyShardedDataParallel", "FSDPModule", "fully_shard", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]

_UNSUPPORTED = ("{what} is not implemented in tinytorch (no parameter sharding): wrap the model in "
                "torch.nn.parallel.DistributedDataParallel for data parallelism, or shard tensors yourself with "
                "torch.distributed.tensor.distribute_tensor")


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """FSDP2's mixed precision settings: ``param_dtype`` (compute and all-gather dtype), ``reduce_dtype``
    (gradient reduction dtype), ``output_dtype`` (cast of forward outputs), ``cast_forward_inputs``. A frozen
    dataclass, as PyTorch's."""
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """FSDP2's "no offloading" policy (the default ``offload_policy``)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """FSDP2's offload of parameters, gradients and optimizer state to host memory; ``pin_memory`` (default
    True) asks for page-locked host buffers."""
    pin_memory: bool = True


class FSDPModule:
    """The class FSDP2 mixes into a module ``fully_shard`` transformed; tinytorch never creates one, so
    ``isinstance(module, FSDPModule)`` is False for every module."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_UNSUPPORTED.format(what="FSDPModule (fully_shard)"))


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None, mp_policy=None,
                offload_policy=None, ignored_params=None, dp_mesh_dims=None):
    """FSDP2's ``fully_shard``: raises NotImplementedError (tinytorch does not shard parameters)."""
    raise NotImplementedError(_UNSUPPORTED.format(what="fully_shard (FSDP2)"))


from .fully_sharded_data_parallel import FullyShardedDataParallel  # noqa: E402  (it uses _UNSUPPORTED)
