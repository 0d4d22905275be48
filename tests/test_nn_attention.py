"""torch.nn.attention against PyTorch: SDPBackend, sdpa_kernel's switches and errors, the causal biases as
attn_mask, and flex_attention / create_block_mask."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.attention as tattn
import tinytorch.nn.attention.bias as tbias
from conftest import torch
import torch.nn.attention as rattn  # noqa: E402
import torch.nn.attention.bias as rbias  # noqa: E402


def _qkv(shape_q=(2, 3, 5, 8), shape_kv=None, seed=0):
    shape_kv = shape_kv or shape_q
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s).astype(np.float32) for s in (shape_q, shape_kv, shape_kv)]
    return [tt.tensor(a) for a in arrs], [torch.tensor(a) for a in arrs]


def test_sdpbackend_members():
    assert [(n, int(m)) for n, m in tattn.SDPBackend.__members__.items()] == \
        [(n, int(m)) for n, m in rattn.SDPBackend.__members__.items()]
    assert str(tattn.SDPBackend.MATH) == str(rattn.SDPBackend.MATH)
    assert repr(tattn.SDPBackend.FLASH_ATTENTION) == repr(rattn.SDPBackend.FLASH_ATTENTION)


def _backends(mod):
    return [getattr(mod.SDPBackend, n) for n in ("MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION",
                                                  "OVERRIDEABLE", "ERROR")]


SETS = [[0], [1], [2], [3], [4], [5], [], [1, 0], [2, 3], [0, 2]]


@pytest.mark.parametrize("which", SETS)
@pytest.mark.parametrize("case", ["plain", "dropout", "3d", "mask", "causal"])
def test_sdpa_kernel_selection_matches(which, case):
    (tq, tk, tv), (rq, rk, rv) = _qkv()
    kw = {}
    if case == "dropout":
        kw = {"dropout_p": 0.5}
    elif case == "3d":
        tq, tk, tv, rq, rk, rv = tq[0], tk[0], tv[0], rq[0], rk[0], rv[0]
    elif case == "mask":
        m = np.tril(np.ones((5, 5), bool))
        kw_t, kw_r = {"attn_mask": tt.tensor(m)}, {"attn_mask": torch.tensor(m)}
    elif case == "causal":
        kw = {"is_causal": True}
    if case != "mask":
        kw_t = kw_r = kw

    def run(mod, F, q, k, v, kws):
        be = _backends(mod)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                with mod.sdpa_kernel([be[i] for i in which]):
                    out = F.scaled_dot_product_attention(q, k, v, **kws)
                return "ok", out, [str(x.message).split(" (Triggered")[0] for x in w]
            except Exception as e:
                return (type(e).__name__, str(e)), None, [str(x.message).split(" (Triggered")[0] for x in w]

    rs, rout, rw = run(rattn, torch.nn.functional, rq, rk, rv, kw_r)
    ts, tout, tw = run(tattn, tt.nn.functional, tq, tk, tv, kw_t)
    assert ts == rs
    assert tw == rw
    if rs == "ok" and case != "dropout":
        np.testing.assert_allclose(tout.numpy(), rout.numpy(), rtol=1e-5, atol=1e-5)
    # the switches are back to all-on afterwards
    assert tt.backends.cuda.math_sdp_enabled() and tt.backends.cuda.flash_sdp_enabled()


def test_sdpa_kernel_restores_on_error_and_as_decorator_and_priority():
    (tq, tk, tv), _ = _qkv()
    with pytest.raises(KeyError):
        with tattn.sdpa_kernel(tattn.SDPBackend.EFFICIENT_ATTENTION):
            assert not tt.backends.cuda.math_sdp_enabled()
            raise KeyError("x")
    assert tt.backends.cuda.math_sdp_enabled() and tt.backends.cuda.mem_efficient_sdp_enabled()

    @tattn.sdpa_kernel([tattn.SDPBackend.CUDNN_ATTENTION])
    def f():
        return tt.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found"):
        f()
    assert tt.nn.functional.scaled_dot_product_attention(tq, tk, tv).shape == tq.shape
    with tattn.sdpa_kernel([tattn.SDPBackend.MATH, tattn.SDPBackend.CUDNN_ATTENTION], set_priority=True):
        with rattn.sdpa_kernel([rattn.SDPBackend.MATH, rattn.SDPBackend.CUDNN_ATTENTION], set_priority=True):
            assert [int(b) for b in tattn._cur_sdpa_kernel_backends(True)] == \
                [int(b) for b in rattn._cur_sdpa_kernel_backends(True)]
    for bad in ("math", (tattn.SDPBackend.MATH,), 0):
        rbad = bad if not isinstance(bad, tuple) else (rattn.SDPBackend.MATH,)
        with pytest.raises(AssertionError) as re_:
            rattn.sdpa_kernel(rbad).__enter__()
        with pytest.raises(AssertionError) as te:
            tattn.sdpa_kernel(bad).__enter__()
        assert str(te.value) == str(re_.value)
    tt.backends.cuda.enable_math_sdp(False)
    try:
        assert not tt.backends.cuda.math_sdp_enabled()
        assert tattn.SDPBackend.MATH not in tattn._cur_sdpa_kernel_backends()
    finally:
        tt.backends.cuda.enable_math_sdp(True)


@pytest.mark.parametrize("lq,lkv", [(4, 4), (3, 7), (6, 6), (2, 9)])
@pytest.mark.parametrize("variant", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_matches(lq, lkv, variant):
    (tq, tk, tv), (rq, rk, rv) = _qkv((2, 2, lq, 8), (2, 2, lkv, 8), seed=lq * 10 + lkv)
    tb, rb = getattr(tbias, variant)(lq, lkv), getattr(rbias, variant)(lq, lkv)
    assert isinstance(tb, tt.Tensor) and isinstance(tb, tbias.CausalBias)
    np.testing.assert_array_equal(tb._materialize().numpy(), rb._materialize().numpy())
    assert repr(tb) == repr(rb)
    t = tt.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tb)
    r = torch.nn.functional.scaled_dot_product_attention(rq, rk, rv, attn_mask=rb)
    np.testing.assert_allclose(t.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        tt.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tb, is_causal=True)


def test_causal_bias_errors_and_warning():
    with pytest.raises(AssertionError, match="causal_lower_right only supports 2D tensors"):
        tbias.causal_lower_right(2, 3, 4)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        tbias.CausalBias(1, 2, 3)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        tbias.causal_lower_right(5, 3)
    assert int(tbias.CausalVariant.UPPER_LEFT) == int(rbias.CausalVariant.UPPER_LEFT) == 1
    (tq, tk, tv), _ = _qkv((1, 1, 2, 4), (1, 1, 3, 4))
    with pytest.raises(ValueError, match="Expected query, key, and value to have the same dtype"):
        tt.nn.functional.scaled_dot_product_attention(tq, tk.double(), tv, attn_mask=tbias.causal_lower_right(2, 3))


# ---- flex_attention -------------------------------------------------------------------------------------------

import tinytorch.nn.attention.flex_attention as tflex  # noqa: E402
import torch.nn.attention.flex_attention as rflex  # noqa: E402

rflex._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True  # torch's eager reference, without compiling


def _causal(b, h, q, kv):
    return q >= kv


def _window(b, h, q, kv):
    return (q - kv) <= 3


def _late(b, h, q, kv):
    return q >= 2


MASKS = {"causal": lambda m: _causal, "window": lambda m: m.and_masks(_causal, _window),
         "or": lambda m: m.or_masks(_window, _late), "rows_dead": lambda m: m.and_masks(_causal, _late),
         "noop": lambda m: m.noop_mask}


def _bm_tensors(bm):
    names = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
             "full_q_num_blocks", "full_q_indices"]
    return {n: (None if getattr(bm, n) is None else getattr(bm, n).numpy().tolist()) for n in names}


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("B,H,L,S,bs", [(None, None, 11, 11, 4), (2, 3, 9, 13, (2, 5)), (1, 2, 16, 16, 8),
                                         (2, None, 7, 5, 128)])
def test_create_block_mask_matches(mask, B, H, L, S, bs):
    tb = tflex.create_block_mask(MASKS[mask](tflex), B, H, L, S, device="cpu", BLOCK_SIZE=bs)
    rb = rflex.create_block_mask(MASKS[mask](rflex), B, H, L, S, device="cpu", BLOCK_SIZE=bs)
    assert _bm_tensors(tb) == _bm_tensors(rb)
    assert tb.shape == rb.shape and tb.BLOCK_SIZE == rb.BLOCK_SIZE and tb.seq_lengths == rb.seq_lengths
    assert tb.sparsity() == pytest.approx(rb.sparsity())
    assert str(tb) == str(rb)
    assert repr(tb).replace("tinytorch.", "torch.") == repr(rb)
    assert tb.to_dense().numpy().tolist() == rb.to_dense().numpy().tolist()
    np.testing.assert_array_equal(tflex.create_mask(MASKS[mask](tflex), B, H, L, S).numpy(),
                                  rflex.create_mask(MASKS[mask](rflex), B, H, L, S, device="cpu").numpy())
    sl_t, sl_r = tb[0], rb[0]
    assert _bm_tensors(sl_t) == _bm_tensors(sl_r) and sl_t.shape == sl_r.shape
    if L > 4 and S > 4:
        assert _bm_tensors(tb._adjust(L - 3, S - 4)) == _bm_tensors(rb._adjust(L - 3, S - 4))


def _score_mods(mod, lib):
    bias = lib.tensor(np.linspace(-1, 1, 3 * 9 * 9).reshape(3, 9, 9).astype(np.float32))
    slopes = lib.tensor(np.array([0.5, 0.25, 0.125], np.float32))
    return {
        None: None,
        "relative": lambda s, b, h, q, kv: s + (q - kv) * 0.1,
        "alibi": lambda s, b, h, q, kv: s - slopes[h] * (q - kv).abs(),
        "table": lambda s, b, h, q, kv: s + bias[h, q, kv],
        "softcap": lambda s, b, h, q, kv: 2.0 * lib.tanh(s / 2.0),
    }[mod]


@pytest.mark.parametrize("score_mod", [None, "relative", "alibi", "table", "softcap"])
@pytest.mark.parametrize("mask", [None, "causal", "rows_dead", "or"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_flex_attention_matches(score_mod, mask, dtype):
    (tq, tk, tv), (rq, rk, rv) = _qkv((2, 3, 9, 8))
    if dtype == "float64":
        tq, tk, tv, rq, rk, rv = (x.double() for x in (tq, tk, tv, rq, rk, rv))
    tbm = rbm = None
    if mask is not None:
        tbm = tflex.create_block_mask(MASKS[mask](tflex), 2, 3, 9, 9, device="cpu", BLOCK_SIZE=4)
        rbm = rflex.create_block_mask(MASKS[mask](rflex), 2, 3, 9, 9, device="cpu", BLOCK_SIZE=4)
    aux = tflex.AuxRequest(lse=True, max_scores=True)
    t, ta = tflex.flex_attention(tq, tk, tv, score_mod=_score_mods(score_mod, tt), block_mask=tbm, return_aux=aux)
    # (torch computes max_scores only off the CPU: compared below with the scores torch's SDPA math implies)
    r, ra = rflex.flex_attention(rq, rk, rv, score_mod=_score_mods(score_mod, torch), block_mask=rbm,
                                 return_aux=rflex.AuxRequest(lse=True))
    assert t.dtype == tt.float64 if dtype == "float64" else t.dtype == tt.float32
    tol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(t.numpy(), r.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ta.lse.numpy(), ra.lse.numpy(), rtol=tol, atol=tol)
    # the largest kept score per row, from torch: scores through score_mod, -inf where masked
    work = torch.float64 if dtype == "float64" else torch.float32
    sc = (rq.to(work) @ rk.to(work).transpose(-2, -1)) / np.sqrt(8)
    b, h, q, kv = (torch.arange(n).view(*[n if i == d else 1 for i in range(4)]) for d, n in enumerate(sc.shape))
    if score_mod is not None:
        sc = _score_mods(score_mod, torch)(sc, b, h, q, kv)
    if mask is not None:
        sc = sc.masked_fill(~MASKS[mask](rflex)(b, h, q, kv).expand(sc.shape), -float("inf"))
    np.testing.assert_allclose(ta.max_scores.numpy(), sc.max(-1).values.numpy(), rtol=tol, atol=tol)


def test_flex_attention_gqa_scale_broadcast_batch_and_lse():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 4, 6, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, 7, 8)).astype(np.float32)
    v = rng.standard_normal((1, 2, 7, 5)).astype(np.float32)
    tbm = tflex.create_block_mask(lambda b, h, q_, kv: kv <= q_ + b, 2, 1, 6, 7, device="cpu", BLOCK_SIZE=2)
    rbm = rflex.create_block_mask(lambda b, h, q_, kv: kv <= q_ + b, 2, 1, 6, 7, device="cpu", BLOCK_SIZE=2)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        t, tl = tflex.flex_attention(tt.tensor(q), tt.tensor(k), tt.tensor(v), block_mask=tbm, scale=0.3,
                                     enable_gqa=True, return_lse=True)
    r, rl = rflex.flex_attention(torch.tensor(q), torch.tensor(k), torch.tensor(v), block_mask=rbm, scale=0.3,
                                 enable_gqa=True, return_lse=True)
    np.testing.assert_allclose(t.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tl.numpy(), rl.numpy(), rtol=1e-5, atol=1e-5)


def test_flex_attention_gradients_match_causal_sdpa():
    (tq, tk, tv), (rq, rk, rv) = _qkv((1, 2, 7, 4), seed=3)
    for x in (tq, tk, tv, rq, rk, rv):
        x.requires_grad_(True)
    bm = tflex.create_block_mask(_causal, None, None, 7, 7, device="cpu", BLOCK_SIZE=4)
    g = np.random.default_rng(4).standard_normal((1, 2, 7, 4)).astype(np.float32)
    tflex.flex_attention(tq, tk, tv, block_mask=bm).backward(tt.tensor(g))
    torch.nn.functional.scaled_dot_product_attention(rq, rk, rv, is_causal=True).backward(torch.tensor(g))
    for a, b in ((tq, rq), (tk, rk), (tv, rv)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["short_mask", "long_mask", "heads", "gqa_ratio", "3d", "batch", "sliced",
                                  "mask_arity", "embed", "lse_and_aux", "backend", "backend_force"])
def test_flex_attention_errors_match(case):
    def run(m, lib):
        q = lib.zeros(2, 4, 8, 4)
        k = lib.zeros(2, 4, 8, 4)
        bm = m.create_block_mask(_causal, None, None, 8, 8, device="cpu", BLOCK_SIZE=4)
        if case == "short_mask":
            return m.flex_attention(q, k, k, block_mask=m.create_block_mask(_causal, None, None, 4, 8, device="cpu"))
        if case == "long_mask":
            return m.flex_attention(q, k, k, block_mask=m.create_block_mask(_causal, None, None, 8, 16, device="cpu"))
        if case == "heads":
            return m.flex_attention(q, lib.zeros(2, 3, 8, 4), lib.zeros(2, 3, 8, 4))
        if case == "gqa_ratio":
            return m.flex_attention(q, lib.zeros(2, 3, 8, 4), lib.zeros(2, 3, 8, 4), enable_gqa=True)
        if case == "3d":
            return m.flex_attention(q[0], k[0], k[0])
        if case == "batch":
            return m.flex_attention(q, k[:1], k[:1])
        if case == "sliced":
            return m.flex_attention(q, k, k, block_mask=bm[:, :, :1])
        if case == "mask_arity":
            return m.create_block_mask(lambda b, h, q_: q_ > 0, None, None, 8, 8, device="cpu")
        if case == "embed":
            return m.flex_attention(q, lib.zeros(2, 4, 8, 3), lib.zeros(2, 4, 8, 3))
        if case == "backend":
            return m.flex_attention(q, k, k, kernel_options={"BACKEND": "CUDNN"})
        if case == "backend_force":
            return m.flex_attention(q, k, k, kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": True})
        return m.flex_attention(q, k, k, return_lse=True, return_aux=m.AuxRequest(lse=True))
    with pytest.raises(Exception) as re_:
        run(rflex, torch)
    with pytest.raises(type(re_.value)) as te:
        run(tflex, tt)
    assert str(te.value) == str(re_.value)
