"""``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook``: PowerSGD gradient compression (Vogels et al.,
https://arxiv.org/abs/1905.13727) as a DDP communication hook.

For each parameter's gradient M (viewed as n x m) worth compressing, two thin matrices P (n x r) and Q (m x r)
replace it on the wire: P = M Q, all-reduced and orthogonalized; Q = M^T P, all-reduced; M is then approximated
by P Q^T / world_size. Vectors and small matrices are all-reduced as they are, in one batch. Error feedback adds
last step's approximation error to the gradient before compressing; warm start reuses last step's Q. Before
``start_powerSGD_iter`` iterations the hook is a plain all-reduce. Source: PyTorch's
``torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py`` (the same state, random stream and order of
operations, so that the same seeds give the same training; ``batched_powerSGD_hook`` is not provided).
"""
from collections import defaultdict

import numpy as np

from ...._dtype import bfloat16, float16
from ...._ops.creation import empty, zeros
from ...._ops.generator import manual_seed
from ...._ops.linalg import bmm
from ...._ops.random import randn
from ...._ops.shape import cat
from ....linalg import qr
from ....random import fork_rng
from ... import all_reduce, group as _group_member
from . import default_hooks

__all__ = ["PowerSGDState", "powerSGD_hook"]


def _orthogonalize(matrices, epsilon=0):
    """Orthonormalize the columns of each matrix of the batch ``matrices`` (b x n x r, r <= n) in place:
    Gram-Schmidt for rank <= 2 or half precision, else QR."""
    if not (matrices.dim() == 3 and matrices.shape[2] <= matrices.shape[1]):
        raise AssertionError
    if matrices.shape[2] <= 2 or matrices.dtype in (float16, bfloat16):
        _orthogonalize_gram_schmidt(matrices, epsilon)
    else:
        q, _ = qr(matrices)
        matrices.copy_(q)


def _orthogonalize_gram_schmidt(matrices, epsilon=0):
    cols = matrices.shape[2]
    for i in range(cols):
        col = matrices[:, :, i:i + 1]
        if epsilon == 0:
            col.div_(col.norm(dim=1, keepdim=True))
        else:
            col.div_(col.norm(dim=1, keepdim=True) + epsilon)
        if i + 1 < cols:
            rest = matrices[:, :, i + 1:]
            rest.sub_((col * rest).sum(dim=1, keepdim=True) * col)


def _should_compress(num_rows, num_cols, matrix_approximation_rank, min_compression_rate):
    """(worth compressing, elements before, elements after): compress when the low-rank pair is smaller than
    the matrix by more than ``min_compression_rate``."""
    uncompressed = num_rows * num_cols
    compressed = (num_rows + num_cols) * matrix_approximation_rank
    return compressed * min_compression_rate < uncompressed, uncompressed, compressed


class PowerSGDState:
    """The hyperparameters and the per-bucket memory of PowerSGD
    (``torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.PowerSGDState``).

    ``process_group`` (None: the default group); ``matrix_approximation_rank`` (r, default 1);
    ``start_powerSGD_iter`` (plain all-reduce before it, default 1000); ``min_compression_rate`` (2);
    ``use_error_feedback`` / ``warm_start`` (True); ``orthogonalization_epsilon`` (0); ``random_seed`` (0: the
    NumPy RandomState seeding the initial Qs); ``compression_stats_logging_frequency``;
    ``batch_tensors_with_same_shape`` (False; True raises NotImplementedError here). ValueError when error feedback
    or warm start is on and ``start_powerSGD_iter`` <= 1, as PyTorch's."""

    __slots__ = ["process_group", "matrix_approximation_rank", "start_powerSGD_iter", "min_compression_rate",
                 "orthogonalization_epsilon", "use_error_feedback", "warm_start", "batch_tensors_with_same_shape",
                 "rng", "error_dict", "p_memory_dict", "q_memory_dict", "iter", "total_numel_before_compression",
                 "total_numel_after_compression", "compression_stats_logging_frequency", "next_stats_report"]

    def __init__(self, process_group, matrix_approximation_rank=1, start_powerSGD_iter=1_000,
                 min_compression_rate=2, use_error_feedback=True, warm_start=True, orthogonalization_epsilon=0,
                 random_seed=0, compression_stats_logging_frequency=10_000, batch_tensors_with_same_shape=False):
        if (use_error_feedback or warm_start) and start_powerSGD_iter <= 1:
            raise ValueError("Expect `start_powerSGD_iter` > 1 if `use_error_feedback` or `warm_start` is enabled, "
                             "because PowerSGD can only be applied after the first two iterations in DDP.")
        if batch_tensors_with_same_shape:
            raise NotImplementedError("PowerSGDState: batch_tensors_with_same_shape=True is not supported")
        self.process_group = process_group
        self.matrix_approximation_rank = matrix_approximation_rank
        self.start_powerSGD_iter = start_powerSGD_iter
        self.min_compression_rate = min_compression_rate
        self.use_error_feedback = use_error_feedback
        self.warm_start = warm_start
        self.orthogonalization_epsilon = orthogonalization_epsilon
        self.rng = np.random.RandomState(random_seed)
        self.error_dict = {}
        self.p_memory_dict = {}
        self.q_memory_dict = {}
        self.iter = 0
        self.total_numel_before_compression = 0
        self.total_numel_after_compression = 0
        self.compression_stats_logging_frequency = max(1, compression_stats_logging_frequency)
        self.next_stats_report = 0
        self.batch_tensors_with_same_shape = batch_tensors_with_same_shape

    def __getstate__(self):
        return {s: getattr(self, s) for s in self.__slots__ if s != "process_group"}

    def __setstate__(self, state):
        self.process_group = _group_member.WORLD  # a process group does not pickle: the default one
        for k, v in state.items():
            setattr(self, k, v)

    def maybe_increase_iter(self, bucket):
        """Count an iteration when the last bucket of a backward is handled."""
        if bucket.is_last():
            self.iter += 1

    def compression_stats(self):
        """(compression rate, elements before compression, elements after) so far."""
        after = self.total_numel_after_compression
        rate = self.total_numel_before_compression / after if after > 0 else 0
        return rate, self.total_numel_before_compression, after


def powerSGD_hook(state, bucket):
    """The PowerSGD communication hook (see the module docstring): a Future of the bucket, whose gradients are
    replaced in place by the averaged (low-rank approximated, for the compressed ones) gradients."""
    pg = state.process_group if state.process_group is not None else _group_member.WORLD
    world_size = pg.size()
    input_tensor = bucket.buffer()
    if state.iter < state.start_powerSGD_iter:
        state.maybe_increase_iter(bucket)
        return default_hooks._allreduce_fut(pg, input_tensor)

    dtype = input_tensor.dtype
    index = bucket.index()
    input_copy = None
    if state.use_error_feedback:
        if index in state.error_dict:
            input_tensor.add_(state.error_dict[index])
        else:
            state.error_dict[index] = zeros(input_tensor.shape[0], dtype=dtype)
        input_copy = input_tensor.detach().clone()

    to_compress, uncompressed = [], []
    ps_size = qs_size = 0
    for grad in bucket.gradients():
        matrix = grad.view(grad.shape[0], -1)
        n, m = matrix.shape
        r = min(n, m, state.matrix_approximation_rank)
        worth, before, after = _should_compress(n, m, r, state.min_compression_rate)
        state.total_numel_before_compression += before
        if worth:
            to_compress.append(matrix)
            ps_size += n * r
            qs_size += m * r
            state.total_numel_after_compression += after
        else:
            uncompressed.append(grad)
            state.total_numel_after_compression += before

    flat_uncompressed = cat([t.reshape(-1) for t in uncompressed]) if uncompressed \
        else empty(0, dtype=dtype)
    fresh = False
    if not state.warm_start or index not in state.p_memory_dict:
        fresh = True
        state.p_memory_dict[index] = empty(ps_size, dtype=dtype)
        state.q_memory_dict[index] = empty(qs_size, dtype=dtype)

    by_shape = defaultdict(list)
    for t in to_compress:
        by_shape[tuple(t.shape)].append(t)
    matrices, ps, qs = [], [], []
    p_at = q_at = 0
    for group in by_shape.values():
        for t in group:
            mat = t.unsqueeze(0)
            _, n, m = mat.shape
            r = min(n, m, state.matrix_approximation_rank)
            matrices.append(mat)
            ps.append(state.p_memory_dict[index][p_at:p_at + n * r].view(1, n, r))
            qs.append(state.q_memory_dict[index][q_at:q_at + m * r].view(1, m, r))
            p_at += n * r
            q_at += m * r

    if not fresh:
        for q in qs:
            _orthogonalize(q, state.orthogonalization_epsilon)
    else:
        # the same stream as PyTorch's: a seed from the state's RandomState, the global generator left alone
        with fork_rng(devices=[]):
            manual_seed(state.rng.randint(1_000_000_000))
            for q in qs:
                q.copy_(randn(*q.shape, dtype=dtype))
                _orthogonalize(q, state.orthogonalization_epsilon)

    for mat, q, p in zip(matrices, qs, ps):
        p.copy_(bmm(mat, q))

    first = all_reduce(flat_uncompressed, group=pg, async_op=True).get_future()

    def unpack_and_allreduce_ps(fut):
        flat = fut.value()[0].div_(world_size)
        at = 0
        for t in uncompressed:
            t.copy_(flat[at:at + t.numel()].view_as(t))
            at += t.numel()
        return all_reduce(state.p_memory_dict[index], group=pg, async_op=True).get_future().wait()[0]

    def compute_qs(fut):
        state.p_memory_dict[index] = fut.value()
        for p in ps:
            _orthogonalize(p, state.orthogonalization_epsilon)
        for mat, p, q in zip(matrices, ps, qs):
            q.copy_(bmm(mat.transpose(1, 2), p))
        return all_reduce(state.q_memory_dict[index], group=pg, async_op=True).get_future().wait()[0]

    def decompress(fut):
        state.q_memory_dict[index] = fut.value().div_(world_size)
        for p, q, mat in zip(ps, qs, matrices):
            mat.copy_(bmm(p, q.transpose(1, 2)))
        if state.use_error_feedback:
            state.error_dict[index] = input_copy - input_tensor
        if not state.warm_start:
            state.p_memory_dict.clear()
            state.q_memory_dict.clear()
        state.maybe_increase_iter(bucket)
        return input_tensor

    return first.then(unpack_and_allreduce_ps).then(compute_qs).then(decompress)
