"""``torch.nn.attention.bias``: causal masks passed as ``attn_mask`` to ``F.scaled_dot_product_attention``.

A ``CausalBias`` is a Tensor subclass whose ``__torch_function__`` catches the attention call and runs it
causally: upper-left aligned (query i sees keys j <= i; ``is_causal=True``) or lower-right aligned (query i
sees keys j <= i + (L_kv - L_q), the alignment of a query block at the end of a longer key sequence, as in
decoding with a cache). The two agree when L_q == L_kv. Source: torch/nn/attention/bias.py (PyTorch 2.13).
"""
import warnings
from enum import IntEnum, auto

from ..._tensor import Tensor
from ... import _dtype as _dt

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """The alignment of a causal mask: UPPER_LEFT (1) or LOWER_RIGHT (2)."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal ``attn_mask`` of (seq_len_q, seq_len_kv), materialised only when a kernel needs it.
    AssertionError when ``variant`` is not a CausalVariant; a UserWarning for LOWER_RIGHT with
    seq_len_q > seq_len_kv (the first queries then see no key and their outputs are NaN)."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        super().__init__()
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          stacklevel=2)

    def _materialize(self, device=None):
        """The bool mask (True = attend) of shape (seq_len_q, seq_len_kv) on ``device`` (cpu when None)."""
        from ..._ops.creation import ones
        offset = 0 if self.variant == CausalVariant.UPPER_LEFT else self.seq_len_kv - self.seq_len_q
        return ones(self.seq_len_q, self.seq_len_kv, dtype=_dt.bool, device=device or "cpu").tril(offset)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        """scaled_dot_product_attention with ``attn_mask`` (a CausalBias) applied. ValueError with
        ``is_causal`` (the bias already is the causal mask), or for LOWER_RIGHT when query, key and value
        differ in dtype or device or have fewer than 2 dims."""
        from ..functional import scaled_dot_product_attention
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p,
                                                is_causal=True, scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            _validate_sdpa_input(query, key, value)
            return scaled_dot_product_attention(query, key, value, attn_mask=attn_mask._materialize(query.device),
                                                dropout_p=dropout_p, is_causal=False, scale=scale,
                                                enable_gqa=enable_gqa)
        raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from ..functional import scaled_dot_product_attention
        if func is scaled_dot_product_attention:
            return cls._dispatch(*args, **(kwargs or {}))
        return super().__torch_function__(func, types, args, kwargs)

    def __repr__(self):
        return self._materialize().__repr__()


def _validate_sdpa_input(query, key, value):
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                         f"{query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(f"Expected query, key, and value to have the same device type, but got query.device: "
                         f"{query.device}, key.device: {key.device}, and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                         f"{query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} instead.")


def causal_upper_left(*size):
    """A CausalBias (seq_len_q, seq_len_kv) aligned at the upper left (query i sees keys 0..i).
    AssertionError unless two sizes are given."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    """A CausalBias (seq_len_q, seq_len_kv) aligned at the lower right (query i sees keys
    0..i + seq_len_kv - seq_len_q). AssertionError unless two sizes are given."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
