"""The fused attention op (``_scaled_dot_product_flash_attention_for_cpu``, tinytorch/csrc/attention.cpp on the cpu
backend, its decomposition elsewhere) against PyTorch's ``scaled_dot_product_attention``: values and gradients of
query, key, value and a float mask over float32/float64, causal, bool/float masks of broadcast shapes, scale, GQA,
odd and zero-length sizes, fully masked rows; gradcheck in float64; the kernel is the one that runs."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch._dispatch import OPS
from tinytorch.backends.cpu import native
from conftest import torch

FLASH = "_scaled_dot_product_flash_attention_for_cpu"
TOLS = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-4, atol=2e-5)}
NATIVE = native._C is not None
needs_native = pytest.mark.skipif(not NATIVE, reason=f"native kernels off: {native.DISABLED_REASON}")


def _run(lib, arrays, mask, grad, **kw):
    """(output, grads of q, k, v[, mask]) of lib's scaled_dot_product_attention on these arrays."""
    q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
    m = None
    if mask is not None:
        m = lib.tensor(mask, requires_grad=mask.dtype != np.bool_)
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
    leaves = [q, k, v] + ([m] if m is not None and m.requires_grad else [])
    grads = lib.autograd.grad(out, leaves, lib.tensor(grad))
    return [out.detach().numpy()] + [g.numpy() for g in grads]


def check(q_shape, k_shape, v_shape, dtype="float64", mask=None, seed=0, torch_math=False, **kw):
    """Our results against torch's on the same random data; ``torch_math``: against torch's math backend."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (q_shape, k_shape, v_shape)]
    out_shape = tuple(q_shape[:-1]) + (v_shape[-1],)
    grad = rng.standard_normal(out_shape).astype(dtype)
    if mask is not None and mask.dtype != np.bool_:
        mask = mask.astype(dtype)
    ours = _run(tt, arrays, mask, grad, **kw)
    if torch_math:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with sdpa_kernel(SDPBackend.MATH):
            theirs = _run(torch, arrays, mask, grad, **kw)
    else:
        theirs = _run(torch, arrays, mask, grad, **kw)
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a.shape == b.shape, (i, a.shape, b.shape)
        assert a.dtype == b.dtype, (i, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, err_msg=f"result {i}", **TOLS[dtype])
    return ours


DTYPES = ["float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L,S,E,Ev", [(5, 7, 4, 6), (1, 1, 3, 3), (1, 9, 8, 8), (9, 1, 8, 2), (64, 64, 16, 16),
                                      (65, 130, 5, 7), (130, 63, 8, 8), (200, 3, 4, 4)])
def test_values_and_grads(dtype, L, S, E, Ev):
    check((2, 3, L, E), (2, 3, S, E), (2, 3, S, Ev), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L,S", [(7, 7), (70, 130), (130, 70), (1, 5), (5, 1), (129, 129)])
def test_causal(dtype, L, S):
    check((2, 2, L, 8), (2, 2, S, 8), (2, 2, S, 8), dtype, is_causal=True)


@pytest.mark.parametrize("scale", [0.3, 1.0, 0.0, -0.7])
def test_scale(scale):
    check((1, 2, 9, 4), (1, 2, 11, 4), (1, 2, 11, 4), scale=scale)
    check((1, 2, 9, 4), (1, 2, 11, 4), (1, 2, 11, 4), "float32", scale=scale, mask=np.tri(9, 11) > 0)
    # torch's CPU flash kernel multiplies the causal mask's -inf by the scale, which makes every row NaN for a
    # scale <= 0 (a bug of that kernel; its math path and an explicit bool mask give the softmax): compared with
    # the math path there
    check((1, 2, 9, 4), (1, 2, 11, 4), (1, 2, 11, 4), "float32", scale=scale, is_causal=True, torch_math=scale <= 0)


MASK_SHAPES = [(2, 3, 9, 11), (9, 11), (1, 11), (9, 1), (3, 1, 11), (2, 1, 9, 11), (1, 3, 1, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", MASK_SHAPES)
def test_bool_mask(dtype, shape):
    rng = np.random.default_rng(1)
    mask = rng.random(shape) > 0.3
    check((2, 3, 9, 4), (2, 3, 11, 4), (2, 3, 11, 5), dtype, mask=mask)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", MASK_SHAPES)
def test_float_mask_and_its_gradient(dtype, shape):
    rng = np.random.default_rng(2)
    mask = rng.standard_normal(shape)
    res = check((2, 3, 9, 4), (2, 3, 11, 4), (2, 3, 11, 5), dtype, mask=mask)
    assert res[-1].shape == shape  # the mask's gradient, summed over its broadcast dims


@pytest.mark.parametrize("mask_shape", [(11,), ()])
@pytest.mark.parametrize("mask_dtype", ["bool", "float64"])
def test_mask_of_fewer_than_two_dims(mask_shape, mask_dtype):
    """4-D inputs: PyTorch's flash-kernel choice reads the mask's size(-2) and raises IndexError; 2-D inputs (its
    math path) broadcast the mask."""
    mask = np.random.default_rng(10).random(mask_shape) > 0.3
    mask = mask if mask_dtype == "bool" else mask.astype(mask_dtype)
    errors = []
    for lib in (tt, torch):
        with pytest.raises(IndexError) as info:
            q = lib.ones(2, 3, 9, 4, dtype=lib.float64)
            k = lib.ones(2, 3, 11, 4, dtype=lib.float64)
            lib.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=lib.tensor(mask))
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    if mask_shape:
        check((9, 4), (11, 4), (11, 3), mask=mask)


def test_float_mask_with_minus_inf():
    rng = np.random.default_rng(3)
    mask = rng.standard_normal((2, 1, 70, 90))
    mask[rng.random(mask.shape) < 0.4] = -np.inf
    check((2, 2, 70, 8), (2, 2, 90, 8), (2, 2, 90, 8), mask=mask)
    check((2, 2, 70, 8), (2, 2, 90, 8), (2, 2, 90, 8), "float32", mask=mask)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fully_masked_rows_give_zero_and_zero_gradients(dtype):
    rng = np.random.default_rng(4)
    bmask = rng.random((2, 3, 9, 70)) > 0.5
    bmask[0, 1, 3] = False
    bmask[1, :, 8] = False
    out, dq, dk, dv = check((2, 3, 9, 4), (2, 3, 70, 4), (2, 3, 70, 6), dtype, mask=bmask)
    assert np.all(out[0, 1, 3] == 0) and np.all(out[1, :, 8] == 0)
    assert np.all(dq[0, 1, 3] == 0) and np.all(dq[1, :, 8] == 0)
    assert all(np.isfinite(x).all() for x in (out, dq, dk, dv))
    fmask = np.where(bmask, rng.standard_normal(bmask.shape), -np.inf)
    res = check((2, 3, 9, 4), (2, 3, 70, 4), (2, 3, 70, 6), dtype, mask=fmask)
    assert all(np.isfinite(x).all() for x in res)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("H,Hk", [(4, 2), (6, 1), (4, 4), (6, 3)])
def test_grouped_query_attention(dtype, H, Hk):
    check((2, H, 9, 8), (2, Hk, 13, 8), (2, Hk, 13, 5), dtype, enable_gqa=True)
    check((2, H, 70, 8), (2, Hk, 70, 8), (2, Hk, 70, 8), dtype, enable_gqa=True, is_causal=True)
    mask = np.random.default_rng(5).random((H, 9, 13)) > 0.4
    check((2, H, 9, 8), (2, Hk, 13, 8), (2, Hk, 13, 5), dtype, enable_gqa=True, mask=mask)


@pytest.mark.parametrize("q_shape,k_shape", [((0, 5, 4), (0, 7, 4)), ((3, 0, 4), (3, 7, 4)), ((3, 5, 4), (3, 0, 4)),
                                             ((2, 0, 0, 4), (2, 0, 0, 4)), ((5, 4), (0, 4)), ((0, 4), (6, 4))])
def test_zero_length(q_shape, k_shape):
    v_shape = tuple(k_shape[:-1]) + (3,)
    out = check(q_shape, k_shape, v_shape)[0]
    assert np.all(out == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("q_shape,k_shape,v_shape", [((5, 4), (7, 4), (7, 3)), ((3, 5, 4), (3, 7, 4), (3, 7, 6)),
                                                     ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 4))])
def test_two_and_three_dims(dtype, q_shape, k_shape, v_shape):
    check(q_shape, k_shape, v_shape, dtype)
    check(q_shape, k_shape, v_shape, dtype, is_causal=True)


def test_strided_inputs():
    """Transposed, expanded and sliced views read through their strides (and copies where BLAS needs them)."""
    rng = np.random.default_rng(6)
    base = rng.standard_normal((2, 9, 3, 8))
    mbase = rng.standard_normal((3, 9, 9))  # transposed into the (key, query) order: read through its strides
    arrays = {}
    for lib in (tt, torch):
        t = lib.tensor(base, requires_grad=True)
        q = t.transpose(1, 2)  # (2, 3, 9, 8), rows 24 elements apart
        k = t[:, :, :1].transpose(1, 2).expand(2, 3, 9, 8)  # stride 0 over heads
        v = t.transpose(1, 2).transpose(-1, -2)[..., :9].transpose(-1, -2)  # columns not contiguous
        v = v.flip(2)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        mb = lib.tensor(mbase, requires_grad=True)
        out2 = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mb.transpose(-1, -2))
        gt, gm = lib.autograd.grad(out.square().sum() + out2.sin().sum(), [t, mb])
        arrays[lib] = (out.detach().numpy(), out2.detach().numpy(), gt.numpy(), gm.numpy())
    for a, b in zip(arrays[tt], arrays[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_gradcheck_float64():
    rng = np.random.default_rng(7)
    q = tt.tensor(rng.standard_normal((1, 2, 5, 3)), requires_grad=True)
    k = tt.tensor(rng.standard_normal((1, 1, 6, 3)), requires_grad=True)
    v = tt.tensor(rng.standard_normal((1, 1, 6, 4)), requires_grad=True)
    m = tt.tensor(rng.standard_normal((5, 6)), requires_grad=True)
    F = tt.nn.functional
    assert tt.autograd.gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, enable_gqa=True),
                                 (q, k, v, m))
    assert tt.autograd.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.4,
                                                                                 enable_gqa=True), (q, k, v))
    assert tt.autograd.gradgradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                     (q, k, v))


def test_double_backward_matches_torch():
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in ((2, 2, 5, 3), (2, 2, 6, 3), (2, 2, 6, 4))]
    res = []
    for lib in (tt, torch):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        with lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH) if lib is torch else _nothing():
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
            gq, = lib.autograd.grad(out.sin().sum(), [q], create_graph=True)
            gk, gv = lib.autograd.grad(gq.square().sum(), [k, v])
        res.append((gk.numpy(), gv.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_dropout_runs_the_math_path(monkeypatch):
    """PyTorch's CPU flash kernel refuses dropout (sdp_utils_cpp.cpp: check_for_dropout); its math path draws the
    mask from the generator, and so must ours: the fused op must not run."""
    calls = []
    op = OPS[FLASH]
    monkeypatch.setattr(op, "decomp", lambda *a, **kw: calls.append(1) or pytest.fail("fused op ran"))
    if NATIVE:
        from tinytorch.device import get_backend
        monkeypatch.setitem(get_backend(tt.device("cpu")).kernels, FLASH, lambda *a, **kw: pytest.fail("fused ran"))
    q = tt.randn(2, 2, 4, 3)
    tt.manual_seed(0)
    out = tt.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert out.shape == (2, 2, 4, 3) and not calls


@needs_native
def test_the_native_kernel_runs(monkeypatch):
    from tinytorch.device import get_backend
    table = get_backend(tt.device("cpu")).kernels  # the table the dispatcher reads
    assert FLASH in native.NATIVE_KERNELS and FLASH + "_backward" in native.NATIVE_KERNELS
    assert table[FLASH] is native.NATIVE_KERNELS[FLASH]
    seen = []
    for name in (FLASH, FLASH + "_backward"):
        kern = table[name]
        monkeypatch.setitem(table, name, lambda *a, _k=kern, _n=name, **kw: seen.append(_n) or _k(*a, **kw))
    monkeypatch.setattr(OPS[FLASH], "decomp", lambda *a, **kw: pytest.fail("the decomposition ran"))
    check((2, 3, 9, 4), (2, 3, 11, 4), (2, 3, 11, 4), "float32")
    assert seen == [FLASH, FLASH + "_backward"]


@pytest.mark.parametrize("grad_mask", [False, True])
def test_decomposition_matches_torch(grad_mask):
    """The op's decomposition (what other backends and TINYTORCH_NATIVE=0 run) against torch, forward and
    backward, with GQA, a broadcast float mask and a fully masked row."""
    from tinytorch._ops.nn import _flash_backward_decomp, _flash_decomp
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 6, 3), (2, 2, 7, 3), (2, 2, 7, 5)))
    mask = rng.standard_normal((1, 4, 6, 7))
    mask[0, 1, 2] = -np.inf
    g = rng.standard_normal((2, 4, 6, 5))
    tq, tk, tv = (tt.tensor(a) for a in (q, k, v))
    tm = tt.tensor(mask).expand(2, 4, 6, 7)
    out, lse = _flash_decomp(tq, tk, tv, tm, is_causal=False, scale=0.5)
    grads = _flash_backward_decomp(tt.tensor(g), tq, tk, tv, out, lse, tm, is_causal=False, scale=0.5,
                                   grad_mask=grad_mask)
    Q, K, V, M = (torch.tensor(a, requires_grad=True) for a in (q, k, v, mask))
    ref = torch.nn.functional.scaled_dot_product_attention(Q, K, V, M, scale=0.5, enable_gqa=True)
    ref_grads = torch.autograd.grad(ref, [Q, K, V, M], torch.tensor(g))
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-11)
    assert len(grads) == 4 if grad_mask else len(grads) == 3
    for a, b in zip(grads[:3], ref_grads[:3]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)
    if grad_mask:
        np.testing.assert_allclose(grads[3].numpy().sum(0, keepdims=True), ref_grads[3].numpy(), rtol=1e-9,
                                   atol=1e-11)


def test_meta_device_shapes():
    q = tt.empty(2, 4, 6, 3, device="meta")
    k = tt.empty(2, 2, 7, 3, device="meta")
    v = tt.empty(2, 2, 7, 5, device="meta")
    out = tt.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    assert out.shape == (2, 4, 6, 5) and out.device.type == "meta"


@needs_native
@pytest.mark.parametrize("L,S", [(300, 257), (1, 1000)])
def test_threads(L, S):
    """Enough (batch, head, query block) tiles to spread over the pool, with the GIL released."""
    old = tt.get_num_threads()
    tt.set_num_threads(2)
    try:
        check((3, 4, L, 16), (3, 2, S, 16), (3, 2, S, 16), "float32", enable_gqa=True, is_causal=L > 1)
    finally:
        tt.set_num_threads(old)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape,b_shape", [((8, 80, 70), (8, 70, 60)), ((2, 5, 64, 90), (2, 5, 90, 64)),
                                             ((9, 3, 200), (9, 200, 700))])
def test_batched_matmul_of_medium_products(dtype, a_shape, b_shape):
    """Products above the single-thread size, many of them: each one GEMM on one pool thread (blas.cpp)."""
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    old = tt.get_num_threads()
    tt.set_num_threads(2)
    try:
        ours = tt.matmul(tt.tensor(a), tt.tensor(b)).numpy()
        ours_t = tt.bmm(tt.tensor(a).reshape(-1, *a_shape[-2:]), tt.tensor(b).reshape(-1, *b_shape[-2:])).numpy()
    finally:
        tt.set_num_threads(old)
    ref = torch.matmul(torch.tensor(a), torch.tensor(b)).numpy()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours, ref, **tol)
    np.testing.assert_allclose(ours_t.reshape(ref.shape), ref, **tol)


def test_grad_fn_is_named_as_torch():
    names = []
    for lib in (tt, torch):
        q = lib.ones(2, 4, 5, 3, requires_grad=True)
        names.append(lib.nn.functional.scaled_dot_product_attention(q, q, q).grad_fn.name())
    assert names[0] == names[1] == "ScaledDotProductFlashAttentionForCpuBackward0"


@needs_native
def test_without_blas():
    """Without a BLAS (set_blas(0, 0) disables it): the fused kernel's tiles never call one, and the ops around it
    fall back to NumPy's products."""
    if native.BLAS is None:
        pytest.skip("no BLAS found: every other test ran the loops already")
    mask = np.random.default_rng(12).standard_normal((2, 1, 9, 70))
    native._C.set_blas(0, 0, False)
    try:
        check((2, 3, 9, 5), (2, 3, 70, 5), (2, 3, 70, 4), "float32", mask=mask)
        check((2, 4, 70, 5), (2, 2, 70, 5), (2, 2, 70, 6), is_causal=True, enable_gqa=True)
    finally:
        native._C.set_blas(*native.BLAS)
    check((2, 3, 9, 5), (2, 3, 70, 5), (2, 3, 70, 4), mask=mask)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L,S,E,Ev,causal", [(67, 131, 12, 20, True), (131, 67, 20, 12, False), (64, 64, 36, 9, True),
                                             (3, 66, 1, 17, False), (66, 66, 33, 3, True)])
def test_microkernel_edges(dtype, L, S, E, Ev, causal):
    """Sizes off the tile microkernel's register blocks (6 rows by 2 vectors, then 1 vector, then single columns),
    E and Ev not multiples of 8, the causal diagonal cutting blocks, a broadcast float mask on the others."""
    mask = None if causal else np.random.default_rng(3).standard_normal((1, 2, L, S))
    check((2, 2, L, E), (2, 2, S, E), (2, 2, S, Ev), dtype, mask=mask, is_causal=causal)


@needs_native
def test_tiles_of_the_default_capability():
    """The SSE2 build of the tiles (kernels/attention.inc under cpu_default.cpp: 16-byte vectors, no FMA), which a
    process picks once at start when TINYTORCH_CPU_CAPABILITY=default."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import numpy as np; from test_attention_native import check\n"
            "m = np.random.default_rng(4).standard_normal((2, 1, 70, 67))\n"
            "for dt in ('float32', 'float64'):\n"
            "    check((2, 2, 70, 12), (2, 2, 67, 12), (2, 2, 67, 10), dt, mask=m)\n"
            "    check((2, 4, 70, 9), (2, 2, 70, 9), (2, 2, 70, 20), dt, is_causal=True, enable_gqa=True)\n"
            "from tinytorch import _C; assert _C.cpu_capability() == 'default', _C.cpu_capability()\n")
    env = dict(os.environ, TINYTORCH_CPU_CAPABILITY="default")
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=here, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("a_shape,b_shape,ta", [((128, 64, 32), (128, 32, 64), False), ((7, 5, 3), (7, 3, 9), False),
                                                ((6, 33, 19), (6, 33, 21), True), ((3, 1, 6, 10), (4, 10, 13), False),
                                                ((9, 2, 64), (9, 2, 64), True)])
def test_batched_matmul_of_small_products(dtype, a_shape, b_shape, ta):
    """Products of at most 64^3 multiply-adds with a row-major right factor run in the tile microkernel (blas.cpp's
    run_batched): sizes off its register blocks, a transposed left factor (read through its strides), broadcast
    batch dims."""
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    old = tt.get_num_threads()
    tt.set_num_threads(2)
    try:
        x = tt.tensor(a).transpose(-2, -1) if ta else tt.tensor(a)
        ours = tt.matmul(x, tt.tensor(b)).numpy()
    finally:
        tt.set_num_threads(old)
    y = torch.tensor(a).transpose(-2, -1) if ta else torch.tensor(a)
    ref = torch.matmul(y, torch.tensor(b)).numpy()
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours, ref, **tol)
