"""``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``: DDP communication hooks that average a bucket
with one all-reduce, optionally through a narrower dtype.

Each hook takes ``(process_group, bucket)`` (``process_group`` None: the default group), starts an asynchronous
``all_reduce`` and returns a ``torch.futures.Future`` of the averaged bucket. Source: PyTorch's
``torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py`` (same algorithms: divide first, to keep fp16
sums in range; compress by casting; decompress into the bucket's own buffer).
"""
from ...._dtype import bfloat16, float16
from ...._tensor import Tensor
from ... import all_reduce, group as _group_member

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook", "fp16_compress_wrapper",
           "bf16_compress_wrapper"]


def _group_or_world(process_group):
    return process_group if process_group is not None else _group_member.WORLD


def _allreduce_fut(process_group, tensor):
    """Divide ``tensor`` by the group size in place, all-reduce it (SUM) asynchronously: a Future of
    ``tensor``."""
    pg = _group_or_world(process_group)
    tensor.div_(pg.size())
    return all_reduce(tensor, group=pg, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Average ``bucket.buffer()`` over the group with one all-reduce (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    pg = _group_or_world(process_group)
    buffer = bucket[0] if isinstance(bucket, tuple) else bucket.buffer()
    compressed = buffer.to(dtype).div_(pg.size())

    def decompress(fut):
        value = fut if isinstance(fut, Tensor) else fut.value()[0]
        buffer.copy_(value)  # in place, as PyTorch's hook does (peak memory)
        return buffer
    return all_reduce(compressed, group=pg, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Cast the bucket to float16, divide by the group size, all-reduce, cast back into the bucket."""
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """As ``fp16_compress_hook``, through bfloat16. DDP's ``register_comm_hook`` refuses it (TypeError) as
    PyTorch's does without CUDA and NCCL; it can be called on a bucket directly."""
    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            out = bucket.buffer()
            out.copy_(fut.value())
            return out
        return fut.then(decompress)
    # PyTorch's names: DDP recognises the bf16 wrapper by it
    wrapped.__name__ = wrapped.__qualname__ = ("bf16" if dtype is bfloat16 else "fp16") + \
        "_compress_wrapper_hook"
    return wrapped


def fp16_compress_wrapper(hook):
    """A hook that runs ``hook`` on the bucket cast to float16 and casts its result back. Note: as PyTorch's,
    the result is written into the float16 copy (the DDP reducer copies it back into the bucket)."""
    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    """As ``fp16_compress_wrapper``, through bfloat16."""
    return _compress_wrapper(bfloat16, hook)
