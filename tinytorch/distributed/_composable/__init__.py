"""``torch.distributed._composable``: the composable APIs' home; ``fsdp`` holds FSDP2's names (see
:mod:`tinytorch.distributed.fsdp`: tinytorch does not shard parameters)."""
