"""PyTorch's ``torch.nn.modules.linear_cross_entropy`` holds only the private autograd pieces of its batch-chunked
kernel (nothing public). tinytorch computes ``F.linear_cross_entropy`` / ``nn.LinearCrossEntropyLoss`` as a linear
layer followed by cross entropy, so this module only exists for programs that import it."""

__all__ = []
