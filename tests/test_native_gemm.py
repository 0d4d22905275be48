"""The native matrix products (matmul, linear through NumPy's BLAS called from C++) and sliding-window kernels
(im2col, col2im, max pooling with indices and its backward) of the cpu backend, against the NumPy kernels and
against torch, values and gradients: 2-d and batched products with broadcast batch dims, transposed and sliced
operands, zero sizes, K = 1 and the NumPy kernel's special shapes; convolution with stride, padding, dilation and
groups; max pooling with ceil_mode, padding, dilation, NaNs and ties."""
import os

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from conftest import torch
from tinytorch.backends.cpu import native
from tinytorch.backends.cpu.registry import KERNELS

if os.environ.get("TINYTORCH_NATIVE", "1") == "0":
    pytest.skip("TINYTORCH_NATIVE=0: the native kernels are switched off for this run", allow_module_level=True)

C = native._C
DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-10, atol=1e-10)}


def test_extension_and_blas_found():
    # CI builds the extension; with NumPy's OpenBLAS (its wheels bundle one) the products must run natively
    assert C is not None, native.DISABLED_REASON
    blas = np.__config__.CONFIG.get("Build Dependencies", {}).get("blas", {}).get("name", "")
    if "openblas" in blas:
        assert native.BLAS is not None, f"NumPy links {blas}, but its cblas_sgemm was not found"
    if native.BLAS is None:
        pytest.skip(f"NumPy's BLAS ({blas or 'unknown'}) exports no CBLAS GEMM tinytorch knows: matmul runs on NumPy")
    assert "matmul" in native.NATIVE_KERNELS and "linear" in native.NATIVE_KERNELS


needs_blas = pytest.mark.skipif(C is None or native.BLAS is None, reason="no CBLAS GEMM found in NumPy's BLAS")


def _rand(rng, shape, dtype):
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def _check_matmul(a, b):
    r = C.matmul(a, b)
    assert r is not NotImplemented
    assert r.flags.c_contiguous and r.dtype == a.dtype
    assert not np.shares_memory(r, a) and not np.shares_memory(r, b)
    ref = KERNELS["matmul"](a, b)
    assert r.shape == ref.shape
    np.testing.assert_allclose(r, ref, **TOL[a.dtype.type])
    t = torch.matmul(torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(b)))
    np.testing.assert_allclose(r, t.numpy(), **TOL[a.dtype.type])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa, sb", [
    ((5, 7), (7, 3)), ((1, 7), (7, 1)), ((64, 32), (32, 64)),
    ((3, 5, 7), (3, 7, 2)), ((3, 5, 7), (7, 2)), ((5, 7), (3, 7, 2)), ((3, 1, 7), (3, 7, 4)),
    ((32, 4, 64, 32), (32, 4, 32, 64)), ((2, 1, 4, 6), (3, 6, 5)), ((1, 3, 4, 6), (2, 1, 6, 5)),
    ((2, 3, 1, 6), (6, 4)), ((4, 1, 6), (6, 1)),
    ((0, 4), (4, 3)), ((4, 0), (0, 3)), ((4, 3), (3, 0)), ((0, 2, 3), (3, 4)), ((2, 3, 0), (2, 0, 5)),
    ((4, 1), (1, 5)), ((2, 4, 1), (2, 1, 5)), ((3, 4, 1), (1, 5)),
])
@needs_blas
def test_matmul_contiguous_and_broadcast(sa, sb, dtype):
    rng = np.random.default_rng(0)
    _check_matmul(_rand(rng, sa, dtype), _rand(rng, sb, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@needs_blas
def test_matmul_transposed_and_strided(dtype):
    rng = np.random.default_rng(1)
    # attention's q @ k^T: k a transposed view of a contiguous (..., N, K) tensor
    q = _rand(rng, (8, 4, 16, 8), dtype)
    k = _rand(rng, (8, 4, 16, 8), dtype)
    _check_matmul(q, k.transpose(0, 1, 3, 2))
    # both factors transposed, a permuted batch, sliced rows and columns, negative steps, a non-unit inner step
    a = _rand(rng, (6, 9, 5), dtype)
    b = _rand(rng, (6, 7, 9), dtype)
    _check_matmul(a.transpose(0, 2, 1), b.transpose(0, 2, 1))
    _check_matmul(a[:, 1:5], b.transpose(0, 2, 1)[:, :5, 2:5])
    _check_matmul(a[:, ::2, ::-1], _rand(rng, (5, 3), dtype))
    _check_matmul(a[:, :, ::2], _rand(rng, (6, 8), dtype)[::2, ::2])
    _check_matmul(a[::2, 1:], _rand(rng, (12, 3), dtype)[1::2][:5])
    # a broadcast (stride-0) batch dim and a stride-0 matrix
    _check_matmul(np.broadcast_to(_rand(rng, (1, 4, 6), dtype), (3, 4, 6)), _rand(rng, (3, 6, 2), dtype))
    _check_matmul(np.broadcast_to(_rand(rng, (1, 6), dtype), (4, 6)), _rand(rng, (6, 2), dtype))
    # a batch folded into one GEMM from a view whose rows continue across the batch
    big = _rand(rng, (4, 10, 6), dtype)
    _check_matmul(big[:, :5], _rand(rng, (6, 3), dtype))
    _check_matmul(big[:, :1], _rand(rng, (6, 3), dtype))
    _check_matmul(big.reshape(40, 6)[::10].reshape(4, 1, 6), _rand(rng, (6, 3), dtype))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@needs_blas
def test_matmul_special_shapes(dtype, threads):
    # on one thread the split-K blocks accumulate into the output; on more, into partial products
    before = tt.get_num_threads()
    tt.set_num_threads(threads)
    try:
        _special_shapes(dtype)
        _check_matmul(*(_rand(np.random.default_rng(9), s, dtype) for s in ((32, 4, 64, 32), (32, 4, 32, 64))))
    finally:
        tt.set_num_threads(before)


def _special_shapes(dtype):
    rng = np.random.default_rng(2)
    # long thin (split-K), tiny left factor times wide columns (column blocks), K = 1 with a transposed factor
    _check_matmul(_rand(rng, (6, 9000), dtype), _rand(rng, (9000, 25), dtype))
    _check_matmul(_rand(rng, (6, 25), dtype), _rand(rng, (25, 17000), dtype))
    _check_matmul(_rand(rng, (6, 17000), dtype)[:, :16500].T.T, _rand(rng, (17000, 25), dtype)[:16500])
    _check_matmul(_rand(rng, (5, 1), dtype), _rand(rng, (7, 1), dtype).T)
    _check_matmul(_rand(rng, (1, 5), dtype).T, _rand(rng, (1, 7), dtype))


@needs_blas
def test_matmul_declines_other_dtypes():
    a = np.ones((2, 3), np.int64)
    assert C.matmul(a, a.T) is NotImplemented
    assert C.matmul(np.ones((2, 3), np.float32), np.ones((3, 2), np.float64)) is NotImplemented
    assert C.matmul(np.ones((2, 3), np.float16), np.ones((3, 2), np.float16)) is NotImplemented
    # the op still works through the NumPy kernel
    x = tt.ones(2, 3, dtype=tt.int64)
    assert (x @ x.T).tolist() == [[3, 3], [3, 3]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs", [(7, 5), (5,), (2, 3, 5), (0, 5), (4, 0), (3, 1)])
@pytest.mark.parametrize("bias", [True, False])
@needs_blas
def test_linear_kernel(xs, bias, dtype):
    rng = np.random.default_rng(3)
    k = xs[-1]
    x = _rand(rng, xs, dtype)
    w = _rand(rng, (4, k), dtype)
    b = _rand(rng, (4,), dtype) if bias else None
    for xv, wv in ((x, w), (x[..., ::-1], np.asfortranarray(w)), (np.swapaxes(x, 0, -1).copy().swapaxes(0, -1), w)):
        r = C.linear(xv, wv, b)
        assert r is not NotImplemented
        ref = KERNELS["linear"](xv, wv, b)
        assert r.shape == ref.shape and r.dtype == ref.dtype
        np.testing.assert_allclose(r, ref, **TOL[dtype])
        t = torch.nn.functional.linear(torch.from_numpy(xv.copy()), torch.from_numpy(wv.copy()),
                                       None if b is None else torch.from_numpy(b))
        np.testing.assert_allclose(r, t.numpy(), **TOL[dtype])
    # a bias that is not (out,) goes to NumPy
    assert C.linear(x, w, _rand(rng, (1,), dtype)) is NotImplemented


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_and_matmul_gradients_match_torch(dtype):
    rng = np.random.default_rng(4)
    xs = _rand(rng, (3, 5, 8), dtype)
    ws = _rand(rng, (6, 8), dtype)
    bs = _rand(rng, (6,), dtype)
    ks = _rand(rng, (3, 7, 8), dtype)
    x, w, b, k = (tt.tensor(v, requires_grad=True) for v in (xs, ws, bs, ks))
    tx, tw, tb, tk = (torch.tensor(v, requires_grad=True) for v in (xs, ws, bs, ks))
    out = (F.linear(x, w, b) @ F.linear(k, w).mT).sum() + (x @ k.mT).square().sum()
    tout = (torch.nn.functional.linear(tx, tw, tb) @ torch.nn.functional.linear(tk, tw).mT).sum() + \
        (tx @ tk.mT).square().sum()
    out.backward()
    tout.backward()
    tol = TOL[np.dtype(dtype).type]
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-4 if dtype == "float32" else 1e-10)
    for a, ta in ((x, tx), (w, tw), (b, tb), (k, tk)):
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=tol["rtol"] * 10, atol=tol["atol"] * 100)


# ---- im2col / col2im --------------------------------------------------------------------------------------
GEOMS = [  # (N, C, H, W), kernel, dilation, padding, stride
    ((2, 3, 9, 8), (3, 3), (1, 1), (0, 0), (1, 1)),
    ((2, 3, 9, 8), (3, 2), (2, 1), (1, 2), (2, 3)),
    ((1, 1, 28, 28), (5, 5), (1, 1), (0, 0), (1, 1)),
    ((3, 2, 7, 7), (1, 1), (1, 1), (0, 0), (2, 2)),
    ((2, 2, 5, 6), (3, 3), (1, 2), (2, 1), (1, 2)),
    ((0, 2, 5, 6), (3, 3), (1, 1), (0, 0), (1, 1)),
    ((2, 0, 5, 6), (3, 3), (1, 1), (0, 0), (1, 1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, k, d, p, s", GEOMS)
def test_im2col_col2im_kernels(shape, k, d, p, s, dtype):
    rng = np.random.default_rng(5)
    x = _rand(rng, shape, dtype)
    for xv in (x, np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2), _rand(
            rng, shape[:3] + (2 * shape[3],), dtype)[..., ::2]):
        r = C.im2col(xv, k, d, p, s)
        ref = KERNELS["im2col"](xv, kernel_size=k, dilation=d, padding=p, stride=s)
        assert r.shape == ref.shape
        np.testing.assert_array_equal(r, ref)
    cols = _rand(rng, ref.shape, dtype)
    for cv in (cols, np.ascontiguousarray(cols.transpose(2, 1, 0)).transpose(2, 1, 0)):
        r = C.col2im(cv, shape[2:], k, d, p, s)
        ref = KERNELS["col2im"](cv, output_size=shape[2:], kernel_size=k, dilation=d, padding=p, stride=s)
        assert r.shape == ref.shape
        np.testing.assert_array_equal(r, ref)
    assert C.im2col(x.astype(np.int64), k, d, p, s) is NotImplemented


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n, cin, cout, hw, k, stride, padding, dilation, groups", [
    (2, 3, 4, 9, 3, 1, 0, 1, 1),
    (2, 4, 6, 10, 3, 2, 1, 1, 2),
    (1, 2, 2, 11, (3, 2), (2, 1), (1, 0), (2, 1), 2),
    (3, 1, 6, 28, 5, 1, 0, 1, 1),
    (2, 6, 6, 8, 3, 1, 2, 2, 6),
])
def test_conv2d_matches_torch(n, cin, cout, hw, k, stride, padding, dilation, groups, dtype):
    rng = np.random.default_rng(6)
    kk = (k, k) if isinstance(k, int) else k
    xs = _rand(rng, (n, cin, hw, hw), dtype)
    ws = _rand(rng, (cout, cin // groups) + kk, dtype)
    bs = _rand(rng, (cout,), dtype)
    x, w, b = (tt.tensor(v, requires_grad=True) for v in (xs, ws, bs))
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (xs, ws, bs))
    out = F.conv2d(x, w, b, stride, padding, dilation, groups)
    tout = torch.nn.functional.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), **tol)
    gs = _rand(rng, tuple(tout.shape), dtype)
    out.backward(tt.tensor(gs))
    tout.backward(torch.tensor(gs))
    for a, ta in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), **tol)


# ---- max pooling -----------------------------------------------------------------------------------------
POOLS = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (1, 2), (1, 0), (2, 1), False),
    ((2, 3), (3, 2), (1, 1), (2, 2), True),
    ((3, 3), (3, 3), (0, 1), (1, 1), True),
]


def _pool_inputs(rng, dtype):
    x = _rand(rng, (2, 3, 9, 10), dtype)
    ties = np.round(x * 2) / 2  # many equal values: the first maximum must win
    ties[0, 0, :3, :3] = 1.0
    nan = x.copy()
    nan[0, 1, 2, 3] = nan[1, 2, 5, 5] = nan[1, 2, 5, 7] = np.nan
    nan[1, 0] = np.nan
    inf = x.copy()
    inf[0, 0] = -np.inf  # windows of only -inf report their first in-bounds element
    wide = _rand(rng, (1, 2, 7, 53), dtype)  # several vectors of windows per row, the last ones at the array's end
    wide[0, 1, 3, 40:46] = np.nan
    return [x, ties, nan, inf, x.transpose(0, 1, 3, 2), wide, np.round(wide), wide[:, :, :, 1:]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k, s, p, d, ceil", POOLS)
def test_max_pool_kernels(k, s, p, d, ceil, dtype):
    rng = np.random.default_rng(7)
    for x in _pool_inputs(rng, dtype):
        v, i = C.max_pool2d_with_indices(x, k, s, p, d, ceil)
        rv, ri = KERNELS["max_pool2d_with_indices"](x, kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
        np.testing.assert_array_equal(v, rv)
        np.testing.assert_array_equal(i, ri)
        assert i.dtype == np.int64
        tv, ti = torch.nn.functional.max_pool2d(torch.from_numpy(x.copy()), k, s, p, d, ceil, return_indices=True)
        np.testing.assert_array_equal(v, tv.numpy())
        np.testing.assert_array_equal(i, ti.numpy())
        g = _rand(rng, v.shape, dtype)
        disjoint = all(ss >= dd * (kk - 1) + 1 for ss, dd, kk in zip(s, d, k))
        gi = C.max_pool2d_with_indices_backward(g, i, x.shape, disjoint)
        ref = KERNELS["max_pool2d_with_indices_backward"](g, i, input_shape=x.shape, disjoint=disjoint)
        np.testing.assert_allclose(gi, ref, **TOL[dtype])
        gi = C.max_pool2d_with_indices_backward(g.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2), i,
                                                x.shape, disjoint)
        np.testing.assert_allclose(gi, ref, **TOL[dtype])
    assert C.max_pool2d_with_indices(np.zeros(x.shape, np.int32), k, s, p, d, ceil) is NotImplemented
    bad = np.full(i.shape, 10 ** 6, np.int64)
    assert C.max_pool2d_with_indices_backward(g, bad, x.shape, disjoint) is NotImplemented


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k, s, p, d, ceil", POOLS)
def test_max_pool2d_matches_torch(k, s, p, d, ceil, dtype):
    rng = np.random.default_rng(8)
    for xs in _pool_inputs(rng, dtype):
        x = tt.tensor(xs, requires_grad=True)
        tx = torch.tensor(xs, requires_grad=True)
        out, idx = F.max_pool2d(x, k, s, p, d, ceil, return_indices=True)
        tout, tidx = torch.nn.functional.max_pool2d(tx, k, s, p, d, ceil, return_indices=True)
        np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
        np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
        gs = _rand(rng, tuple(tout.shape), dtype)
        out.backward(tt.tensor(gs))
        tout.backward(torch.tensor(gs))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **TOL[np.dtype(dtype).type])


# (m, k, n) off the packed GEMM's blocks (kernels/gemm.inc): rows not a multiple of its 12 (6) row block, columns
# not a multiple of its slivers (a last sliver of one vector or less, and of more), several k panels of unequal use, more columns than one B panel, one row or column,
# and products large enough to be split over two threads by columns or (few columns) by rows
PACKED_SHAPES = [(13, 17, 33), (128, 784, 256), (25, 600, 1100), (200, 1030, 40), (1, 300, 70), (300, 70, 1),
                 (131, 257, 9), (97, 9, 520), (50, 40, 84)]


def _check_packed(dtype, threads):
    rng = np.random.default_rng(21)
    before = tt.get_num_threads()
    tt.set_num_threads(threads)
    try:
        for m, k, n in PACKED_SHAPES:
            for ta in (False, True):
                for tb in (False, True):
                    a = _rand(rng, (k, m), dtype).T if ta else _rand(rng, (m, k), dtype)
                    b = _rand(rng, (n, k), dtype).T if tb else _rand(rng, (k, n), dtype)
                    _check_matmul(a, b)
            # linear: the bias is C's start and the product adds to it (beta = 1)
            x, w, bias = _rand(rng, (m, k), dtype), _rand(rng, (n, k), dtype), _rand(rng, (n,), dtype)
            t = torch.nn.functional.linear(*(torch.from_numpy(v) for v in (x, w, bias)))
            np.testing.assert_allclose(C.linear(x, w, bias), t.numpy(), **TOL[dtype])
    finally:
        tt.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
@needs_blas
def test_packed_gemm_against_torch(dtype, threads):
    """matmul and linear in the packed GEMM of the best capability this CPU has, all four transpositions."""
    _check_packed(dtype, threads)


@pytest.mark.parametrize("capability, gemm_threads", [("default", "pool"), ("avx2", "pool"), ("best", "blas")])
@needs_blas
def test_packed_gemm_other_capabilities(capability, gemm_threads):
    """The same products in a process capped at another capability (picked once at start): the AVX2 microkernel
    (6 x 2 vectors of 8 floats), and on 'default' the BLAS, which has no packed GEMM; and with
    TINYTORCH_GEMM_THREADS=blas, where large products go to the BLAS and its own threads."""
    import subprocess
    import sys
    order = ["default", "avx2", "avx512"]
    if capability != "best" and order.index(C.cpu_capability()) < order.index(capability):
        pytest.skip(f"this CPU's best capability is {C.cpu_capability()}")
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import numpy as np\nfrom test_native_gemm import _check_packed, C\n"
            f"assert {capability!r} == 'best' or C.cpu_capability() == {capability!r}, C.cpu_capability()\n"
            "for dt in (np.float32, np.float64):\n    _check_packed(dt, 2)\n")
    env = dict(os.environ, TINYTORCH_GEMM_THREADS=gemm_threads)
    if capability != "best":
        env["TINYTORCH_CPU_CAPABILITY"] = capability
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=here, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
