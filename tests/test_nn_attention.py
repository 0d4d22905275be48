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
