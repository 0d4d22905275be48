"""MultiheadAttention and the Transformer layers against torch with the same weights: state_dict keys and shapes,
outputs, attention weights and parameter gradients."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch


def _pair(make):
    torch.manual_seed(0)
    m_th = make(torch.nn).double()
    m_tt = make(tt.nn).double()
    sd_th = m_th.state_dict()
    assert list(sd_th) == list(m_tt.state_dict())
    for k, v in m_tt.state_dict().items():
        assert tuple(v.shape) == tuple(sd_th[k].shape), k
    m_tt.load_state_dict({k: tt.tensor(v.numpy()) for k, v in sd_th.items()})
    m_th.train()  # dropout is 0: train mode keeps torch off its fused inference fast path
    m_tt.train()
    return m_th, m_tt


def _inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in shapes]
    return [torch.tensor(a, requires_grad=True) for a in arrs], [tt.tensor(a, requires_grad=True) for a in arrs]


def _check(m_th, m_tt, out_th, out_tt, xs_th, xs_tt):
    assert_close(out_tt.detach(), out_th.detach(), "float64", 1e-9, 1e-10)
    (out_th * torch.tensor(np.linspace(-1, 1, out_th.numel()).reshape(out_th.shape))).sum().backward()
    (out_tt * tt.tensor(np.linspace(-1, 1, out_tt.numel()).reshape(out_tt.shape))).sum().backward()
    for (name, p_th), (_, p_tt) in zip(m_th.named_parameters(), m_tt.named_parameters()):
        assert_close(p_tt.grad, p_th.grad, "float64", 1e-8, 1e-10, msg=name)
    for a, b in zip(xs_tt, xs_th):
        assert_close(a.grad, b.grad, "float64", 1e-8, 1e-10)


def _bool_mask(lib, shape, seed):
    m = np.random.default_rng(seed).random(shape) < 0.3
    m[..., 0] = False  # every query keeps one key
    return lib.tensor(m)


MHA = [
    ("basic", dict(), {}),
    ("batch_first", dict(batch_first=True), {}),
    ("kdim_vdim", dict(kdim=5, vdim=3), {}),
    ("bias_kv_zero_attn", dict(add_bias_kv=True, add_zero_attn=True), {"kpm": True, "mask": "bool"}),
    ("no_bias", dict(bias=False), {"mask": "float", "average": False}),
    ("masks", dict(), {"kpm": True, "mask": "bool"}),
    ("mask_3d", dict(), {"mask": "bool3d"}),
    ("unbatched", dict(), {"unbatched": True, "kpm": True}),
]


@pytest.mark.parametrize("name,kw,opts", MHA, ids=[m[0] for m in MHA])
def test_multihead_attention_matches_torch(name, kw, opts):
    E, H, L, S, N = 8, 2, 4, 6, 3
    m_th, m_tt = _pair(lambda nn: nn.MultiheadAttention(E, H, **kw))
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    if opts.get("unbatched"):
        shapes = [(L, E), (S, kd), (S, vd)]
    elif kw.get("batch_first"):
        shapes = [(N, L, E), (N, S, kd), (N, S, vd)]
    else:
        shapes = [(L, N, E), (S, N, kd), (S, N, vd)]
    xs_th, xs_tt = _inputs(shapes)
    args = [{}, {}]
    for lib, a in ((torch, args[0]), (tt, args[1])):
        if opts.get("kpm"):
            a["key_padding_mask"] = _bool_mask(lib, (S,) if opts.get("unbatched") else (N, S), 1)
        if opts.get("mask") == "bool":
            a["attn_mask"] = _bool_mask(lib, (L, S), 2)
        elif opts.get("mask") == "bool3d":
            a["attn_mask"] = _bool_mask(lib, (N * H, L, S), 2)
        elif opts.get("mask") == "float":
            a["attn_mask"] = lib.tensor(np.random.default_rng(3).standard_normal((L, S)))
        a["average_attn_weights"] = opts.get("average", True)
    out_th, w_th = m_th(*xs_th, **args[0])
    out_tt, w_tt = m_tt(*xs_tt, **args[1])
    assert_close(w_tt.detach(), w_th.detach(), "float64", 1e-9, 1e-10)
    _check(m_th, m_tt, out_th, out_tt, xs_th, xs_tt)
    out2, w2 = m_tt(*xs_tt, need_weights=False, **{k: v for k, v in args[1].items() if k != "average_attn_weights"})
    assert w2 is None and tuple(out2.shape) == tuple(out_th.shape)


LAYERS = [
    ("encoder_layer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), "enc"),
    ("encoder_layer_pre_gelu_bf", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                                                        norm_first=True, batch_first=True), "enc_bf"),
    ("encoder", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                                 nn.LayerNorm(8)), "enc"),
    ("decoder_layer", lambda nn: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), "dec"),
    ("decoder", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True),
                                                 2), "dec"),
    ("transformer", lambda nn: nn.Transformer(8, 2, 2, 1, 16, dropout=0.0), "full"),
]


@pytest.mark.parametrize("name,make,kind", LAYERS, ids=[x[0] for x in LAYERS])
def test_transformer_layers_match_torch(name, make, kind):
    m_th, m_tt = _pair(make)
    S, T, N, E = 5, 4, 2, 8
    kpm = np.zeros((N, S), bool)
    kpm[0, -2:] = True
    if kind in ("enc", "enc_bf"):
        xs_th, xs_tt = _inputs([(N, S, E) if kind == "enc_bf" else (S, N, E)])
        mask_th = torch.nn.Transformer.generate_square_subsequent_mask(S, dtype=torch.float64)
        mask_tt = tt.nn.Transformer.generate_square_subsequent_mask(S, dtype=tt.float64)
        assert_close(mask_tt, mask_th, "float64")
        key = "src_key_padding_mask"
        name_mask = "mask" if name == "encoder" else "src_mask"
        out_th = m_th(xs_th[0], **{name_mask: mask_th, key: torch.tensor(kpm)})
        out_tt = m_tt(xs_tt[0], **{name_mask: mask_tt, key: tt.tensor(kpm)})
    elif kind == "dec":
        xs_th, xs_tt = _inputs([(T, N, E), (S, N, E)])
        out_th = m_th(*xs_th, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64),
                      memory_key_padding_mask=torch.tensor(kpm))
        out_tt = m_tt(*xs_tt, tgt_mask=tt.nn.Transformer.generate_square_subsequent_mask(T, dtype=tt.float64),
                      memory_key_padding_mask=tt.tensor(kpm))
    else:
        xs_th, xs_tt = _inputs([(S, N, E), (T, N, E)])
        out_th = m_th(*xs_th, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64),
                      src_key_padding_mask=torch.tensor(kpm), memory_key_padding_mask=torch.tensor(kpm))
        out_tt = m_tt(*xs_tt, tgt_mask=tt.nn.Transformer.generate_square_subsequent_mask(T, dtype=tt.float64),
                      src_key_padding_mask=tt.tensor(kpm), memory_key_padding_mask=tt.tensor(kpm))
    _check(m_th, m_tt, out_th, out_tt, xs_th, xs_tt)


def test_attention_errors_match_torch():
    for lib in (torch, tt):
        with pytest.raises(AssertionError, match="divisible"):
            lib.nn.MultiheadAttention(10, 3)
        m = lib.nn.MultiheadAttention(8, 2)
        x = lib.zeros(3, 2, 8)
        with pytest.raises(RuntimeError, match="Need attn_mask"):
            m(x, x, x, is_causal=True)
        with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
            lib.nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("variant", ["plain", "bias_kv_zero_attn", "separate", "static_kv", "unbatched"])
def test_functional_multi_head_attention_forward_matches_torch(variant):
    """F.multi_head_attention_forward called directly (as CLIP's attention pooling does), outputs, weights and
    gradients against torch."""
    rng = np.random.default_rng(0)
    E, H, L, S, N = 8, 2, 3, 4, 2
    arrs = {n: rng.standard_normal(s).astype(np.float32) for n, s in {
        "q": (L, N, E), "k": (S, N, E), "v": (S, N, E), "w_in": (3 * E, E), "b_in": (3 * E,), "w_out": (E, E),
        "b_out": (E,), "bk": (1, 1, E), "bv": (1, 1, E), "wq": (E, E), "wk": (E, E), "wv": (E, E),
        "sk": (N * H, S, E // H), "sv": (N * H, S, E // H)}.items()}
    mask = np.triu(np.ones((L, S), bool), 1)
    kpm = np.zeros((N, S), bool)
    kpm[1, -1] = True
    res = []
    for m in (torch, tt):
        t = {n: m.tensor(a, requires_grad=True) for n, a in arrs.items()}
        kw = dict(attn_mask=m.tensor(mask), key_padding_mask=m.tensor(kpm))
        q, k, v = t["q"], t["k"], t["v"]
        if variant == "bias_kv_zero_attn":
            kw.update(bias_k=t["bk"], bias_v=t["bv"], add_zero_attn=True)
            kw["attn_mask"] = kw["key_padding_mask"] = None
        if variant == "separate":
            kw.update(use_separate_proj_weight=True, q_proj_weight=t["wq"], k_proj_weight=t["wk"],
                      v_proj_weight=t["wv"])
        if variant == "static_kv":
            kw.update(static_k=t["sk"], static_v=t["sv"])
        if variant == "unbatched":
            q, k, v = q[:, 0], k[:, 0], v[:, 0]
            kw["key_padding_mask"] = kw["key_padding_mask"][0]
        args = dict(bias_k=None, bias_v=None, add_zero_attn=False)
        args.update({a: kw.pop(a) for a in ("bias_k", "bias_v", "add_zero_attn") if a in kw})
        out, w = m.nn.functional.multi_head_attention_forward(
            q, k, v, E, H, t["w_in"], t["b_in"], args["bias_k"], args["bias_v"], args["add_zero_attn"], 0.0,
            t["w_out"], t["b_out"], training=True, need_weights=True, average_attn_weights=False, **kw)
        (out.sum() + (w * w).sum()).backward()
        res.append((out, w, {n: x.grad for n, x in t.items()}))
    (o_th, w_th, g_th), (o_tt, w_tt, g_tt) = res
    assert_close(o_tt, o_th.detach(), "float32", 1e-4, 1e-5)
    assert_close(w_tt, w_th.detach(), "float32", 1e-4, 1e-5)
    for n, g in g_th.items():
        if g is None:
            assert g_tt[n] is None, n
        else:
            assert_close(g_tt[n], g, "float32", 1e-4, 1e-5, msg=n)
