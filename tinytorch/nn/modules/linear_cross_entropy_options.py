"""``LinearCrossEntropyOptions`` (PyTorch's ``torch.nn.modules.linear_cross_entropy_options``)."""

__all__ = ["LinearCrossEntropyOptions"]


class LinearCrossEntropyOptions:
    """Settings of torch's batch-chunked ``linear_cross_entropy`` kernel (``torch.nn.LinearCrossEntropyOptions``).
    tinytorch keeps them (they show in the loss module's repr) and runs the reference computation, whose values
    are the same."""

    def __init__(self, allow_retain_graph=False, batch_chunk_size=None, chunking_method="auto", acc_policy="auto",
                 acc_dtype=None):
        self.allow_retain_graph, self.batch_chunk_size = allow_retain_graph, batch_chunk_size
        self.chunking_method, self.acc_policy, self.acc_dtype = chunking_method, acc_policy, acc_dtype

    def __repr__(self):
        return (f"LinearCrossEntropyOptions(allow_retain_graph={self.allow_retain_graph}, batch_chunk_size="
                f"{self.batch_chunk_size}, chunking_method={self.chunking_method!r}, acc_policy={self.acc_policy!r}, "
                f"acc_dtype={self.acc_dtype})")
