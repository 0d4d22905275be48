"""``torch.nn.attention.flex_attention``: attention with a user score modification and mask, run eagerly.

``flex_attention(q, k, v, score_mod, block_mask)`` computes softmax(score_mod(q k^T * scale, b, h, q_idx,
kv_idx) masked by ``block_mask.mask_mod``) v on the dense (B, H, L, S) score matrix, which is what PyTorch's
eager (uncompiled) path computes: working precision float32 (float64 for float64 input), masked entries -inf,
fully masked rows giving 0 output and -inf log-sum-exp. PyTorch compiles the same function into block-sparse
kernels; tinytorch has only this dense form (fine on the CPU for moderate lengths; gradients come from the
ops it is built of).

``score_mod`` / ``mask_mod`` are called once, on index tensors shaped to broadcast against the scores:
b (B, 1, 1, 1), h (1, H, 1, 1), q_idx (1, 1, L, 1), kv_idx (1, 1, 1, S), and score (B, H, L, S). Functions
written for PyTorch's per-element vmap work when they use tensor operations (comparisons, arithmetic,
indexing a tensor with an index, ``torch.where``); Python control flow on an index does not, as under vmap.

``create_block_mask`` evaluates the mask densely and builds PyTorch's ``BlockMask`` from it: the same
kv_num_blocks / kv_indices (partial blocks), full_kv_* (full blocks) and their q-major transposes, so its
``to_dense``, ``sparsity``, printing and slicing agree with PyTorch's. As in PyTorch's eager path, attention
itself reads only the block mask's ``mask_mod``. Source: torch/nn/attention/flex_attention.py and
torch/_higher_order_ops/flex_attention.py (math_attention), PyTorch 2.13.
"""
import functools
import inspect
import itertools
import math
import operator
import warnings
from enum import Enum
from typing import NamedTuple, TypedDict

from ... import _dtype as _dt
from ..._tensor import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False  # PyTorch's debug switch; tinytorch always runs eagerly
_WARNED = set()


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of PyTorch's compiled kernels (block sizes, stages ...); accepted and unused here."""


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention`` should return: ``lse`` (log-sum-exp of each row's scores)
    and ``max_scores`` (each row's largest score)."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs asked for by an AuxRequest (None where not asked)."""

    lse: Tensor = None
    max_scores: Tensor = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn):
    """SCORE_MOD for a function of 5 positional parameters without defaults, MASK_MOD for 4;
    AssertionError otherwise."""
    code = getattr(fn, "__code__", None)
    if code is not None:
        n = code.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n = sum(1 for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return _ModificationType.SCORE_MOD if n == 5 else _ModificationType.MASK_MOD


def _identity(score, batch, head, token_q, token_kv):
    return score


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod keeping everything: a 0-d True."""
    return batch.new_ones(size=(), dtype=_dt.bool, device=batch.device)


def _sliced_mask_mod_error(batch, head, token_q, token_kv):
    """The mask_mod of a sliced BlockMask: using it is an error (the slice no longer knows the positions)."""
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. When you slice a BlockMask using [], the mask_mod attribute "
        "is reset. You must set it from the original BlockMask's mask_mod.\n\nIncorrect usage:\n  base_mask = "
        "create_block_mask(my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(sliced_mask.mask_mod, offset)  # WRONG!\n\nCorrect usage:\n  base_mask = "
        "create_block_mask(my_mask_fn, ...)\n  sliced_mask = base_mask[:, :, block_idx]\n  sliced_mask.mask_mod = "
        "apply_offset(base_mask.mask_mod, offset)  # Use base_mask!")


def or_masks(*mask_mods):
    """The mask_mod that keeps what any of ``mask_mods`` keeps. RuntimeError if one is not callable."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        out = b.new_zeros((), dtype=_dt.bool)
        for m in mask_mods:
            out = out | m(b, h, q_idx, kv_idx)
        return out
    return or_mask


def and_masks(*mask_mods):
    """The mask_mod that keeps what all of ``mask_mods`` keep. RuntimeError if one is not callable."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        out = b.new_ones((), dtype=_dt.bool)
        for m in mask_mods:
            out = out & m(b, h, q_idx, kv_idx)
        return out
    return and_mask


def _index_grids(B, H, L, S, device):
    from ..._ops.creation import arange
    return (arange(B, device=device).view(B, 1, 1, 1), arange(H, device=device).view(1, H, 1, 1),
            arange(L, device=device).view(1, 1, L, 1), arange(S, device=device).view(1, 1, 1, S))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense bool mask (B, H, Q_LEN, KV_LEN) of a mask_mod (True = attend), or of a score_mod (True
    where it does not give -inf on zero scores). B / H None mean 1; ``device`` defaults to the cpu."""
    from ..._ops.creation import zeros
    device = device or "cpu"
    B, H = B or 1, H or 1
    b, h, m, n = _index_grids(B, H, Q_LEN, KV_LEN, device)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = mod_fn(zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        mask = out.isneginf().logical_not()
    else:
        mask = mod_fn(b, h, m, n)
    if not isinstance(mask, Tensor):
        raise TypeError(f"the mask_mod must return a tensor, got {type(mask).__name__}")
    return mask.to(_dt.bool).expand(B, H, Q_LEN, KV_LEN).contiguous()


def _ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    """(..., rows, num_cols) int32 0/1: the first ``num_blocks_in_row`` columns listed per row set to 1."""
    from ..._ops.creation import arange, zeros
    *batch, rows, entries = col_indices.shape
    listed = arange(entries, device=col_indices.device) < num_blocks_in_row.unsqueeze(-1)
    # unlisted entries write into a spare column that is cut off
    target = col_indices.long().masked_fill(listed.logical_not(), num_cols)
    dense = zeros(*batch, rows, num_cols + 1, dtype=_dt.int32, device=col_indices.device)
    dense.scatter_(-1, target, 1)
    return dense[..., :num_cols].contiguous()


def _dense_to_ordered(dense_mask):
    """(count per row, column indices with the set columns first, each group ascending), both int32."""
    dense_mask = dense_mask.to(_dt.int32)
    order = dense_mask.argsort(dim=-1, descending=True, stable=True)
    return dense_mask.sum(dim=-1).to(_dt.int32).contiguous(), order.to(_dt.int32).contiguous()


def _transpose_ordered(num_blocks_in_row, col_indices):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _adjust_num_blocks_and_indices(num_blocks, indices, new_num_rows, new_num_cols):
    from ..._ops.pointwise import where
    indices = indices[:, :, :new_num_rows, :new_num_cols]
    num_blocks = num_blocks[:, :, :new_num_rows]
    num_blocks = where(num_blocks < new_num_cols, num_blocks, new_num_cols)
    num_blocks = (indices < num_blocks[:, :, :, None]).sum(dim=-1).to(_dt.int32)
    return num_blocks, indices


class BlockMask:
    """A block-sparse attention mask in PyTorch's format: per (batch, head, row of Q_BLOCK_SIZE queries) the
    number and the indices of the KV_BLOCK_SIZE-key blocks that are partly (``kv_num_blocks`` /
    ``kv_indices``) or fully (``full_kv_*``) attended, the same by columns (``q_*``), the ``BLOCK_SIZE``
    (q, kv), the sequence lengths and the element-wise ``mask_mod``. Build one with ``create_block_mask`` or
    ``from_kv_blocks``. RuntimeError when ``kv_indices`` has fewer than 2 dims, AssertionError when only one
    of a num_blocks / indices pair is given."""

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks",
                     "q_indices", "full_q_num_blocks", "full_q_indices", "dq_write_order", "dq_write_order_full",
                     "dq_kv_order"]

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE=(_DEFAULT_SPARSE_BLOCK_SIZE, _DEFAULT_SPARSE_BLOCK_SIZE), mask_mod=noop_mask, *,
                 dq_write_order=None, dq_write_order_full=None, dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if kv_num_blocks is None:
            raise AssertionError("kv_num_blocks must be provided")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError("full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        # the deterministic-backward schedule of PyTorch's kernels: carried, never computed here
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None,
                       compute_q_blocks=True, *, dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its kv-major block lists; the q-major lists are derived (``compute_q_blocks``),
        ``seq_lengths`` defaults to the block counts times BLOCK_SIZE, ``mask_mod`` to noop_mask."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num, q_idx, fq_num, fq_idx = None, None, None, None
        if compute_q_blocks:
            q_num, q_idx = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                fq_num, fq_idx = _transpose_ordered(full_kv_num_blocks, full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths=seq_lengths, kv_num_blocks=kv_num_blocks, kv_indices=kv_indices,
                   full_kv_num_blocks=full_kv_num_blocks, full_kv_indices=full_kv_indices, q_num_blocks=q_num,
                   q_indices=q_idx, full_q_num_blocks=fq_num, full_q_indices=fq_idx, BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask, dq_write_order=dq_write_order,
                   dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten=True):
        """The attributes in PyTorch's order (the two lengths and block sizes flattened unless not
        ``flatten``)."""
        sizes = tuple(self.BLOCK_SIZE) if flatten else (self.BLOCK_SIZE,)
        lengths = tuple(self.seq_lengths) if flatten else (self.seq_lengths,)
        return (*lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *sizes, self.mask_mod)

    @property
    def shape(self):
        """(*batch dims, Q_LEN, KV_LEN)."""
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def numel(self):
        """The number of mask elements, sparsity not counted."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self):
        """The percentage of the (padded) mask that lies in blocks not computed."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self):
        """The (..., q blocks, kv blocks) int32 0/1 map of the blocks computed (partial or full)."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to_string(self, grid_size=(20, 20), limit=4):
        """The block map drawn per (batch, head) (at most ``limit`` of them), full cells as "██", partly
        computed ones as "░░", as PyTorch prints it."""
        dense = self.to_dense()
        *batch_dims, rows, cols = dense.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = rows, cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))

        def draw(*idx):
            cur = dense
            for i in idx:
                cur = cur[i]
            text = f"{idx}\n"
            for r in range(0, rows, row_step):
                for c in range(0, cols, col_step):
                    frac = float(cur[r:r + row_step, c:c + col_step].float().mean())
                    text += ("█" if frac == 1 else " " if frac == 0 else "░") * 2
                text += "\n"
            return text
        parts = []
        for k, idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if k == limit:
                parts += ["...", "To print out more, set BlockMask.to_string(limit=N)",
                          "You can also index (BlockMask[batch, head]) to choose a specific batch or head"]
                break
            parts.append(draw(*idx))
        return "\n".join(parts)

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n{self.to_string().strip()}\n)"

    def __repr__(self):
        def shape_of(x):
            return x.shape if x is not None else None
        name = self.mask_mod.__name__ if hasattr(self.mask_mod, "__name__") else self.mask_mod
        return (f"BlockMask(\n    kv_num_blocks={self.kv_num_blocks.shape},\n    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_of(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_of(self.full_kv_indices)},\n    q_num_blocks={shape_of(self.q_num_blocks)},\n"
                f"    q_indices={shape_of(self.q_indices)},\n    full_q_num_blocks={shape_of(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_of(self.full_q_indices)},\n    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n    sparsity={self.sparsity():.2f}%,\n    mask_mod={name}\n)")

    def __getitem__(self, index):
        """The BlockMask of the selected batch / head / q-block rows (ints keep their dim); its mask_mod
        raises if used (the slice has lost the positions it would need)."""
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1)) if isinstance(i, int) else i
                      for i, n in zip(padded, sizes))

        def pick(x):
            return None if x is None else x[index]
        return BlockMask.from_kv_blocks(pick(self.kv_num_blocks), pick(self.kv_indices),
                                        pick(self.full_kv_num_blocks), pick(self.full_kv_indices),
                                        BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
                                        seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)

    def _adjust(self, new_q_len, new_kv_len):
        """The mask cropped (upper left) to new sequence lengths."""
        rows = -(-new_q_len // self.BLOCK_SIZE[0])
        cols = -(-new_kv_len // self.BLOCK_SIZE[1])
        kv_num, kv_idx = _adjust_num_blocks_and_indices(self.kv_num_blocks, self.kv_indices, rows, cols)
        f_num = f_idx = None
        if self.full_kv_num_blocks is not None:
            f_num, f_idx = _adjust_num_blocks_and_indices(self.full_kv_num_blocks, self.full_kv_indices, rows, cols)
        return self.from_kv_blocks(kv_num, kv_idx, f_num, f_idx, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                   seq_lengths=(new_q_len, new_kv_len), compute_q_blocks=self.q_indices is not None)

    def to(self, device):
        """A copy with every tensor moved to ``device``."""
        moved = {a: (getattr(self, a).to(device) if isinstance(getattr(self, a), Tensor) else getattr(self, a))
                 for a in self._TENSOR_ATTRS}
        return BlockMask(seq_lengths=self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                         dq_kv_order_spt=self.dq_kv_order_spt)


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, KV_BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                                separate_full_blocks=False):
    """(partial, full) int8 block maps (B, H, q blocks, kv blocks) of a bool (.., Q, KV) mask padded with
    False to whole blocks; without ``separate_full_blocks`` every block with a True is "partial" and full is
    None."""
    from ..functional import pad
    if mask.dtype is not _dt.bool:
        raise AssertionError(f"mask.dtype must be torch.bool, got {mask.dtype}")
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    q_pad = -mask.shape[-2] % Q_BLOCK_SIZE
    kv_pad = -mask.shape[-1] % KV_BLOCK_SIZE
    mask = pad(mask, (0, kv_pad, 0, q_pad))
    B, H, Q, KV = mask.shape
    counts = mask.reshape(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE) \
        .permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full_blocks:
        whole = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        return ((counts > 0) & (counts < whole)).to(_dt.int8), (counts == whole).to(_dt.int8)
    return (counts > 0).to(_dt.int8), None


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The BlockMask of ``mask_mod(b, h, q_idx, kv_idx)`` (True = attend) for B batches and H heads (None:
    1, broadcast over all) of Q_LEN queries and KV_LEN keys, in blocks of BLOCK_SIZE (an int or (q, kv)).
    ``device`` defaults to the cpu (tinytorch has no default accelerator). AssertionError when ``mask_mod``
    does not take exactly 4 positional arguments; ValueError for a non-bool ``dq_kv_order``;
    NotImplementedError for ``compute_dq_write_order`` (a schedule of PyTorch's backward kernels)."""
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    q_bs, kv_bs = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        warnings.warn("_compile flag on create_block_mask was originally added to work around a torch.compile "
                      "limitation. That limitation has since been addressed. So, to compile create_block_mask, we "
                      "suggest doing torch.compile(create_block_mask). This still works for now, but will be "
                      "removed in the future.", DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        raise NotImplementedError("create_block_mask(compute_dq_write_order=True): the dQ write order schedules "
                                  "PyTorch's fused backward kernels, which tinytorch does not have")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, q_bs, kv_bs, separate_full_blocks)
    p_num, p_idx = _dense_to_ordered(partial)
    f_num, f_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(p_num, p_idx, f_num, f_idx, BLOCK_SIZE=(q_bs, kv_bs), mask_mod=mask_mod,
                                    seq_lengths=(Q_LEN, KV_LEN))


def _create_empty_block_mask(query, key):
    from ..._ops.creation import ones, zeros
    return BlockMask.from_kv_blocks(kv_num_blocks=ones([1, 1, 1], dtype=_dt.int32, device=query.device),
                                    kv_indices=zeros([1, 1, 1, 1], dtype=_dt.int32, device=query.device),
                                    BLOCK_SIZE=_LARGE_SPARSE_BLOCK_SIZE, seq_lengths=(1, 1))


def _check_inputs(query, key, value, block_mask, enable_gqa):
    from .bias import _validate_sdpa_input
    if query.device != key.device or query.device != value.device:
        _validate_sdpa_input(query, key, value)
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        _validate_sdpa_input(query, key, value)
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got E={query.size(-1)} "
                         f"and E={key.size(-1)}.")
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={query.size(-3)} "
                         f"and Hkv={key.size(-3)}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                         f"Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(f"Expect query and key/value to have the same batch size, or non-none block_mask, but "
                             f"got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(f"Expect query and key/value to have the same batch size, or block_mask and query to "
                             f"have the same batch size, but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                             f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")


def _check_block_mask_lengths(block_mask, query, key):
    if block_mask.BLOCK_SIZE[0] == _LARGE_SPARSE_BLOCK_SIZE and block_mask.BLOCK_SIZE[1] == _LARGE_SPARSE_BLOCK_SIZE:
        return
    bq, bkv = block_mask.shape[-2], block_mask.shape[-1]
    lq, lkv = query.size(-2), key.size(-2)
    if lq > bq or lkv > bkv:
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={lq} and "
                         f"kv_len={lkv}. As the block mask was created for a smaller length than you're using it for, "
                         "you likely need to create a new block mask.")
    if (lq < bq and lkv <= bkv) or (lq <= bq and lkv < bkv):
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={lq} and "
                         f"kv_len={lkv}. As the block mask was created for a larger length than you're using it for, "
                         "you can either 1. create a new block mask with the correct length, or 2. 'adjust' the "
                         "existing block mask to the correct length by calling block_mask._adjust(q_len, kv_len). This "
                         "essentially 'crops' the block mask to the upper left corner, which does not work for all "
                         "mask_mods!")


_BACKENDS = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")


def _check_kernel_options(kernel_options):
    """PyTorch's checks of the options (they select among its kernels; tinytorch has one, so no option changes
    the result)."""
    opts = kernel_options or {}
    if "BACKEND" in opts and opts.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError("BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. BACKEND supersedes the "
                           "legacy knob; please drop FORCE_USE_FLEX_ATTENTION and only specify the desired BACKEND.")
    if "BACKEND" in opts and opts["BACKEND"] not in _BACKENDS:
        raise ValueError(f"Invalid BACKEND value '{opts['BACKEND']}'. Must be one of {_BACKENDS}")
    for key in ("OUTPUT_LOGSUMEXP", "OUTPUT_MAX"):
        if key in opts:
            raise AssertionError(f"{key} must not be in kernel_options")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """Attention with a score modification and a mask, computed densely (see the module docstring).

    query (B, Hq, L, E), key (B or 1, Hkv, S, E), value (B or 1, Hkv, S, Ev) -> (B, Hq, L, Ev) in query's
    dtype. ``score_mod(score, b, h, q_idx, kv_idx)`` returns the modified scores (default: unchanged);
    ``block_mask.mask_mod`` says which scores to keep (default: all). ``scale`` defaults to 1/sqrt(E);
    ``enable_gqa`` lets Hq be a multiple of Hkv. ``return_aux=AuxRequest(lse=True, max_scores=True)`` also
    returns an AuxOutput with the rows' log-sum-exp (natural log) and maximum scores (B, Hq, L), float32 (or
    float64; PyTorch computes max_scores only off the CPU, tinytorch everywhere); ``return_lse`` (deprecated,
    FutureWarning) returns (output, lse). ``kernel_options`` tune PyTorch's compiled kernels: checked as
    PyTorch checks them, then ignored. ValueError / NotImplementedError / RuntimeError for the
    shape, head, batch, length and device mismatches PyTorch rejects, with its messages."""
    from ..._ops.creation import full, tensor
    from ..._ops.pointwise import where
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if score_mod is None:
        score_mod = _identity
    if block_mask is None:
        block_mask = _create_empty_block_mask(query, key)
    if getattr(block_mask, "mask_mod", None) is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    _check_block_mask_lengths(block_mask, query, key)
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if query.device != block_mask.kv_num_blocks.device:
        raise RuntimeError(f"Expect q/k/v and block_mask to be on the same device but got {query.device} and "
                           f"{block_mask.kv_num_blocks.device}.")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    _check_kernel_options(kernel_options)
    if return_lse and "deprecated_return_lse" not in _WARNED:
        _WARNED.add("deprecated_return_lse")
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning, stacklevel=2)

    group = query.size(1) // key.size(1)
    if group > 1:
        key = key.repeat_interleave(group, dim=1)
        value = value.repeat_interleave(group, dim=1)
    B, H, L = query.size(0), query.size(1), query.size(2)
    S = key.size(2)
    key = key.expand(B, *key.shape[1:])
    value = value.expand(B, *value.shape[1:])
    work = _dt.float64 if query.dtype is _dt.float64 else _dt.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    b, h, m, n = _index_grids(B, H, L, S, query.device)
    keep = block_mask.mask_mod(b, h, m, n)
    modded = score_mod(scores, b, h, m, n)
    post = where(keep, modded, tensor(-math.inf, dtype=work, device=query.device))
    post = post.expand(B, H, L, S)
    dead = (post == -math.inf).all(dim=-1)
    lse = where(dead, full((), -math.inf, dtype=work, device=query.device), post.logsumexp(dim=-1))
    max_scores = post.max(dim=-1).values
    # a fully masked row has weights 0 (PyTorch's _safe_softmax), not NaN
    probs = where(dead.unsqueeze(-1), full((), 0.0, dtype=work, device=query.device), post.softmax(dim=-1))
    out = probs.to(query.dtype) @ value.to(query.dtype)
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    want_max = return_aux is not None and return_aux.max_scores
    if return_aux is not None:
        return out, AuxOutput(lse=lse if want_lse else None, max_scores=max_scores if want_max else None)
    if return_lse:
        return out, lse
    return out
