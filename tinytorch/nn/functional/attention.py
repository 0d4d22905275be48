"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``."""
import math

from ...amp.autocast_mode import autocast_op
from ... import _dtype as _dt
from ...backends import _sdp
from ..._ops.creation import ones, zeros
from .activation import softmax
from .dropout import dropout
from .linear import linear
from .padding import pad


def _float_mask(mask, dtype, name):
    """A bool mask (True = masked out) as an additive float mask (-inf where True); float masks as they are."""
    if mask is None:
        return None
    if mask.dtype.is_floating_point:
        return mask.to(dtype)
    if mask.dtype.name != "bool":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return zeros(mask._shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention with explicit weights (``torch.nn.functional.multi_head_attention_forward``, what
    ``nn.MultiheadAttention`` runs): query (L, N, E) or unbatched (L, E), key / value (S, N, E_k / E_v);
    in_proj_weight (3E, E) (or q/k/v_proj_weight with ``use_separate_proj_weight``), out_proj (E, E).
    ``key_padding_mask`` (N, S), ``attn_mask`` (L, S) or (N*H, L, S): bool (True = masked) or additive float;
    ``static_k`` / ``static_v`` (N*H, S, E/H) replace the projected keys / values. Returns (output (L, N, E),
    weights (N, L, S) averaged over heads, (N, H, L, S), or None without ``need_weights``). AssertionError /
    RuntimeError on inconsistent sizes, as torch."""
    from ..._ops.shape import cat
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D "
                             "query tensor")
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, e = query._shape
    if e != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {e}")
    h = num_heads
    hd = e // h
    if hd * h != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {h}")
    if use_separate_proj_weight:
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3)
    q = linear(query, wq, bq)
    k = linear(key, wk, bk) if static_k is None else None
    v = linear(value, wv, bv) if static_v is None else None
    attn_mask = _float_mask(attn_mask, q.dtype, "attn_mask")
    key_padding_mask = _float_mask(key_padding_mask, q.dtype, "key_padding_mask")
    if attn_mask is not None and attn_mask.ndim == 2:
        attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key." if static_k is not None
                                 else "bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, bsz, e)])
        v = cat([v, bias_v.expand(1, bsz, e)])
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
    q = q.reshape(tgt_len, bsz * h, hd).transpose(0, 1)
    k = static_k if static_k is not None else k.reshape(k._shape[0], bsz * h, hd).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(v._shape[0], bsz * h, hd).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros((bsz * h, 1, hd), dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros((bsz * h, 1, hd), dtype=v.dtype, device=v.device)], dim=1)
        attn_mask = pad(attn_mask, (0, 1)) if attn_mask is not None else None
        key_padding_mask = pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
    src_len = k._shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask._shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask._shape)}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, h, 1, src_len).reshape(bsz * h, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    scores = (q * (1.0 / math.sqrt(hd))).matmul(k.transpose(1, 2))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p)
    out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, e)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, h, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    return out, (weights.squeeze(0) if unbatched else weights)


# the C++ type names ATen's messages print for a dtype (caffe2::TypeMeta)
_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _sdpa_check_inputs(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's argument parse and ``validate_sdpa_input`` checks, before anything is computed: TypeError for
    a non-Tensor query / key / value / attn_mask, a non-float dropout_p / scale, a non-bool is_causal /
    enable_gqa; RuntimeError for mixed dtypes of query, key and value, a rank below 2, an attn_mask of a dtype
    other than bool, float32 or query's."""
    from ..._ops._util import check_arg
    fn = "scaled_dot_product_attention"
    for name, v in (("query", query), ("key", key), ("value", value)):
        check_arg(fn, name, None, v, "Tensor")
    check_arg(fn, "attn_mask", None, attn_mask, "Tensor?")
    check_arg(fn, "dropout_p", None, dropout_p, "float")
    check_arg(fn, "is_causal", None, is_causal, "bool")
    check_arg(fn, "scale", None, scale, "float?")
    check_arg(fn, "enable_gqa", None, enable_gqa, "bool")
    name = lambda t: _CPP_TYPE.get(t.dtype.name, t.dtype.name)  # noqa: E731
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{name(query)} key.dtype: {name(key)} and value.dtype: {name(value)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dt.bool, _dt.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {name(attn_mask)} and  query.dtype: {name(query)} instead.")


@autocast_op("lower")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + bias) @ value (Vaswani et al. 2017, "Attention Is All You Need").

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``scale`` defaults to 1/sqrt(E).
    ``attn_mask``: bool (True = attend) or float (added), broadcastable to (..., L, S). ``is_causal`` masks
    key positions after the query position (the top-left aligned lower triangle, as PyTorch). ``dropout_p``
    drops attention weights (always applied, as in PyTorch: pass 0.0 in eval). ``enable_gqa`` lets key/value
    have fewer heads (dim -3) than query, repeated to match.

    RuntimeError when both ``attn_mask`` and ``is_causal`` are given, shapes do not match, or the backends
    allowed (``torch.nn.attention.sdpa_kernel``) leave no kernel PyTorch could run (tinytorch/backends/_sdp.py).
    Source: torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x docs, reference implementation).
    """
    _sdpa_check_inputs(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query._shape[-1] != key._shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same embedding size, got "
                           f"{query._shape[-1]} and {key._shape[-1]}")
    _sdp.check_kernel_available(query, key, value, dropout_p)
    if enable_gqa and query.ndim >= 3 and key._shape[-3] != query._shape[-3]:
        rep = query._shape[-3] // key._shape[-3]
        key = key.repeat_interleave(rep, dim=-3)
        value = value.repeat_interleave(rep, dim=-3)
    L, S = query._shape[-2], key._shape[-2]
    s = 1.0 / math.sqrt(query._shape[-1]) if scale is None else scale
    # scaling the (L, E) query costs less than scaling the (L, S) scores
    scores = (query * s) @ key.transpose(-2, -1)
    if is_causal:
        attn_mask = ones(L, S, dtype=_dt.bool, device=query.device).tril()
    if attn_mask is not None:
        if attn_mask.dtype is _dt.bool:  # as PyTorch: a bool mask becomes an additive 0 / -inf bias
            attn_mask = zeros(attn_mask._shape, dtype=scores.dtype, device=scores.device).masked_fill(
                attn_mask.logical_not(), float("-inf"))
        scores = scores + attn_mask
    # PyTorch's math path uses _safe_softmax: a row whose scores are all -inf (every key masked) attends to
    # nothing and gives 0, not softmax's 0/0 NaN; softmax runs on zeros there so its gradient stays finite (0)
    from ..._ops.pointwise import where
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    attn = where(dead, 0.0, softmax(where(dead, 0.0, scores), -1))
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn @ value
