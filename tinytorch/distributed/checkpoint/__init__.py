"""``torch.distributed.checkpoint`` (DCP): tinytorch does not implement distributed checkpointing (every rank
writing its shards to a planned layout). ``hf_storage`` holds the Hugging Face safetensors storage classes that
libraries import; constructing them raises NotImplementedError. Save ``dtensor.full_tensor()`` (or a
DistributedDataParallel model's ``state_dict()``) with ``torch.save`` / safetensors on one rank instead."""

_UNSUPPORTED = ("{what} is not implemented in tinytorch (no distributed checkpointing): gather tensors with "
                "DTensor.full_tensor() and save them from one rank with torch.save or safetensors")
