"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``."""
import math

from ...amp.autocast_mode import autocast_op
from ... import _dtype as _dt
from ...backends import _sdp
from ..._dispatch import dispatch
from ..._ops.nn import _flash_op, _masked_scores, _repeat_kv
from ..._ops.creation import zeros
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


def _fused_args(query, key, value, attn_mask, enable_gqa):
    """(q, k, v, mask) as the fused op takes them — 4-D, the mask a (B, H, L, S) broadcast view — or None when
    the call is outside what the op covers (the math path then runs, and raises PyTorch's errors)."""
    dt = query.dtype
    if dt not in (_dt.float32, _dt.float64) or key.dtype is not dt or value.dtype is not dt:
        return None
    nd = query.ndim
    # PyTorch's CPU flash kernel takes 4-D inputs with one head size (sdp_utils_cpp.h); other calls run its math
    # path, whose rounding (and overflow near the float maximum) the math path here reproduces
    if nd != 4 or key.ndim != nd or value.ndim != nd or query._shape[-1] == 0 or \
            value._shape[-1] != query._shape[-1]:
        return None
    if attn_mask is not None and (attn_mask.ndim > nd or not (attn_mask.dtype is _dt.bool or attn_mask.dtype is dt)):
        return None
    if query.device != key.device or query.device != value.device or (
            attn_mask is not None and attn_mask.device != query.device):
        return None
    pad4 = (1,) * (4 - nd)
    q = query.reshape(pad4 + tuple(query._shape)) if nd < 4 else query
    k = key.reshape(pad4 + tuple(key._shape)) if nd < 4 else key
    v = value.reshape(pad4 + tuple(value._shape)) if nd < 4 else value
    B, H, L, _ = q._shape
    Bk, Hk, S, _ = k._shape
    if Bk != B or v._shape[0] != B or v._shape[1] != Hk or v._shape[2] != S:
        return None
    if Hk != H and not (enable_gqa and nd >= 3 and Hk > 0 and H % Hk == 0):
        return None
    mask = None
    if attn_mask is not None:
        ms = (1,) * (4 - attn_mask.ndim) + tuple(attn_mask._shape)
        if any(m != 1 and m != w for m, w in zip(ms, (B, H, L, S))):
            return None
        mask = attn_mask.reshape(ms).expand(B, H, L, S)
    return q, k, v, mask


@autocast_op("lower")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + bias) @ value (Vaswani et al. 2017, "Attention Is All You Need").

    query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). ``scale`` defaults to 1/sqrt(E).
    ``attn_mask``: bool (True = attend) or float (added), broadcastable to (..., L, S). ``is_causal`` masks
    key positions after the query position (the top-left aligned lower triangle, as PyTorch). ``dropout_p``
    drops attention weights (always applied, as in PyTorch: pass 0.0 in eval). ``enable_gqa`` lets key/value
    have fewer heads (dim -3) than query, repeated to match.

    Without dropout, 4-D float32/float64 inputs with matching batch dims and one head size run as one op,
    ``_scaled_dot_product_flash_attention_for_cpu`` (the cpu backend's fused kernel, tinytorch/csrc/attention.cpp,
    FlashAttention-2's tiles; other backends run its decomposition); the rest, and dropout (PyTorch's CPU draws it
    on its math path), run the math path: matmul, mask, safe softmax, dropout, matmul.

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
    if attn_mask is not None and attn_mask.ndim < 2 and dropout_p == 0.0 and _sdp.enabled("flash") and \
            query.ndim == key.ndim == value.ndim == 4 and query.numel() and key.numel() and value.numel():
        # PyTorch's CPU flash-kernel choice reads the mask's size(-2) (sdp_utils_cpp.h, check_attn_mask_shape)
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if attn_mask.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    s = 1.0 / math.sqrt(query._shape[-1]) if scale is None else scale
    # a non-finite scale (inf - inf in the softmax) takes the math path, whose NaNs are PyTorch's
    fused = _fused_args(query, key, value, attn_mask, enable_gqa) if dropout_p == 0.0 and math.isfinite(s) else None
    if fused is not None:
        out = dispatch(_flash_op, fused, {"is_causal": bool(is_causal), "scale": float(s)})[0]
        return out.reshape(tuple(query._shape[:-1]) + (value._shape[-1],)) if query.ndim != 4 else out
    if enable_gqa and query.ndim >= 3 and key._shape[-3] != query._shape[-3]:
        key, value = _repeat_kv(query, key, value)
    scores = _masked_scores(query, key, attn_mask, is_causal, s)
    # PyTorch's math path uses _safe_softmax: a row whose scores are all -inf (every key masked) attends to
    # nothing and gives 0, not softmax's 0/0 NaN; softmax runs on zeros there so its gradient stays finite (0)
    from ..._ops.pointwise import where
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    attn = where(dead, 0.0, softmax(where(dead, 0.0, scores), -1))
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn @ value
