"""2-D convolution as one op pair (``convolution`` / ``convolution_backward``: tinytorch/csrc/conv.cpp on the cpu
backend, the im2col + GEMM decomposition elsewhere) against PyTorch's ``conv2d``: values and the gradients of
input, weight and bias over float32/float64, strides, paddings (ints, pairs, 'same', 'valid'), dilations, groups
(depthwise and with a channel multiplier), batch 1 and unbatched inputs, odd sizes, non-contiguous operands,
each subset of gradients; float64 gradcheck and gradgradcheck; the native kernel is the one that runs, and the
decomposition (other backends, TINYTORCH_NATIVE=0) matches torch on its own."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch._dispatch import OPS
from tinytorch.backends.cpu import native
from conftest import torch

TOLS = {"float64": dict(rtol=1e-9, atol=1e-10), "float32": dict(rtol=2e-4, atol=2e-4)}
NATIVE = native._C is not None
needs_native = pytest.mark.skipif(not NATIVE, reason=f"native kernels off: {native.DISABLED_REASON}")


def _run(lib, arrays, grad, needs, layout, **kw):
    """(output, gradients of the operands in ``needs``) of lib's conv2d; ``layout`` 'permuted' passes x and w as
    non-contiguous views of the same values, 'sliced' x as every other column of a wider array."""
    x, w, b = arrays
    if layout == "permuted":
        tx = lib.tensor(np.ascontiguousarray(x.transpose(3, 2, 1, 0))).permute(3, 2, 1, 0)
        tw = lib.tensor(np.ascontiguousarray(w.transpose(2, 3, 0, 1))).permute(2, 3, 0, 1)
    elif layout == "sliced":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        wide[..., ::2] = x
        tx, tw = lib.tensor(wide)[..., ::2], lib.tensor(w)
    else:
        tx, tw = lib.tensor(x), lib.tensor(w)
    tb = None if b is None else lib.tensor(b)
    leaves = []
    for t, need in zip((tx, tw, tb), needs):
        if t is not None and need:
            t.requires_grad_(True)
            leaves.append(t)
    out = lib.nn.functional.conv2d(tx, tw, tb, **kw)
    grads = lib.autograd.grad(out, leaves, lib.tensor(grad)) if leaves else []
    return [out.detach().numpy()] + [g.numpy() for g in grads]


def check(x_shape, w_shape, bias=True, dtype="float32", needs=(True, True, True), layout="contiguous", seed=0, **kw):
    """Our conv2d against torch's on the same random data: the output and the gradients asked for."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype) if bias else None
    with torch.no_grad():
        out_shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None if b is None else
                                               torch.tensor(b), **kw).shape
    grad = rng.standard_normal(tuple(out_shape)).astype(dtype)
    ours = _run(tt, (x, w, b), grad, needs, layout, **kw)
    theirs = _run(torch, (x, w, b), grad, needs, layout, **kw)
    assert len(ours) == len(theirs)
    for i, (a, c) in enumerate(zip(ours, theirs)):
        assert a.shape == c.shape and a.dtype == c.dtype, (i, a.shape, c.shape, a.dtype, c.dtype)
        np.testing.assert_allclose(a, c, err_msg=f"result {i}", **TOLS[dtype])
    return ours


DTYPES = ["float32", "float64"]

# (x shape, w shape, keyword arguments): stride 1 (the shifted-row path), strided (the im2col-tile path), paddings
# wider than the dilated kernel (whose input gradient takes the tile path), groups, odd sizes
CASES = [
    ((2, 3, 9, 8), (4, 3, 3, 3), {}),
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(padding=1)),
    ((2, 3, 9, 8), (5, 3, 3, 2), dict(padding=(2, 0))),
    ((1, 2, 7, 11), (3, 2, 3, 3), dict(stride=2)),
    ((2, 3, 10, 9), (4, 3, 3, 3), dict(stride=(2, 3), padding=(1, 2))),
    ((2, 4, 11, 10), (6, 2, 3, 3), dict(stride=2, padding=1, dilation=2, groups=2)),
    ((2, 3, 12, 12), (2, 3, 3, 3), dict(dilation=(2, 3), padding=(2, 3))),
    ((2, 3, 8, 8), (4, 3, 1, 1), dict(padding=1)),  # padding > dilation * (k - 1)
    ((2, 3, 8, 8), (4, 3, 3, 3), dict(padding=3)),
    ((3, 6, 7, 5), (6, 1, 3, 3), dict(padding=1, groups=6)),  # depthwise
    ((2, 4, 9, 9), (8, 1, 3, 3), dict(padding=1, groups=4)),  # depthwise with a channel multiplier
    ((2, 6, 9, 9), (9, 2, 2, 3), dict(groups=3)),
    ((1, 1, 5, 5), (1, 1, 5, 5), {}),  # a single output position
    ((2, 1, 28, 28), (6, 1, 5, 5), dict(padding=2)),  # LeNet's layers
    ((2, 6, 14, 14), (16, 6, 5, 5), {}),
    ((2, 16, 14, 14), (32, 16, 5, 5), dict(padding=2)),  # the MNIST CNN's second layer
    ((1, 8, 30, 30), (64, 8, 3, 3), {}),  # output rows computed in several chunks
    ((2, 64, 20, 20), (5, 64, 3, 3), dict(stride=2)),  # unfolded in several tiles
    ((2, 3, 1, 17), (2, 3, 1, 4), dict(stride=(5, 1))),
    ((2, 3, 6, 6), (2, 3, 2, 2), dict(stride=(100, 1))),  # a stride larger than the input
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x_shape,w_shape,kw", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_values_and_grads(dtype, x_shape, w_shape, kw):
    check(x_shape, w_shape, dtype=dtype, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k,dilation", [(3, 1), (4, 1), (2, 3), (5, 2), ((2, 5), (3, 1))])
@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
def test_padding_same_and_valid(dtype, k, dilation):
    k2 = k if isinstance(k, tuple) else (k, k)
    check((2, 3, 9, 10), (4, 3) + k2, dtype=dtype, padding="same", dilation=dilation)
    check((2, 3, 9, 10), (4, 3) + k2, dtype=dtype, padding="valid", dilation=dilation)


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False), (False, False, True),
                                   (False, True, True), (True, True, False)])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, groups=2)])
def test_each_subset_of_gradients(needs, kw):
    """Only the gradients asked for are computed (convolution_backward's output_mask)."""
    check((2, 4, 9, 8), (6, 4 // kw.get("groups", 1), 3, 3), needs=needs, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["permuted", "sliced"])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, dilation=2, padding=2)])
def test_non_contiguous_operands(dtype, layout, kw):
    check((2, 3, 9, 8), (4, 3, 3, 3), dtype=dtype, layout=layout, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
def test_without_bias_batch_one_and_unbatched(dtype):
    check((1, 3, 7, 9), (4, 3, 3, 3), bias=False, dtype=dtype, padding=1)
    check((3, 7, 9), (4, 3, 3, 3), dtype=dtype, padding=(0, 1))
    check((3, 7, 9), (4, 3, 3, 3), dtype=dtype, stride=2)


def test_empty_batch():
    out = check((0, 3, 6, 6), (4, 3, 3, 3))
    assert out[0].shape == (0, 4, 4, 4)
    np.testing.assert_array_equal(out[2], 0)
    np.testing.assert_array_equal(out[3], 0)


def test_conv1d_and_conv3d_run_through_it():
    rng = np.random.default_rng(3)
    for fn, xs, ws, kw in (("conv1d", (2, 3, 11), (4, 3, 3), dict(padding=1, stride=2)),
                           ("conv3d", (2, 2, 5, 6, 6), (3, 2, 2, 3, 3), dict(padding=1))):
        x, w = rng.standard_normal(xs), rng.standard_normal(ws)
        res = []
        for lib in (tt, torch):
            tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
            out = getattr(lib.nn.functional, fn)(tx, tw, **kw)
            out.square().sum().backward()
            res.append((out.detach().numpy(), tx.grad.numpy(), tw.grad.numpy()))
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def test_gradcheck_float64():
    rng = np.random.default_rng(7)
    x = tt.tensor(rng.standard_normal((2, 4, 6, 5)), requires_grad=True)
    w = tt.tensor(rng.standard_normal((4, 2, 3, 2)), requires_grad=True)
    b = tt.tensor(rng.standard_normal(4), requires_grad=True)
    F = tt.nn.functional
    for kw in (dict(padding=1, groups=2), dict(stride=2, dilation=(1, 2), groups=2)):
        assert tt.autograd.gradcheck(lambda x, w, b, kw=kw: F.conv2d(x, w, b, **kw), (x, w, b))
        assert tt.autograd.gradgradcheck(lambda x, w, b, kw=kw: F.conv2d(x, w, b, **kw), (x, w, b))


def test_double_backward_matches_torch():
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 7, 6), (4, 3, 3, 3))]
    res = []
    for lib in (tt, torch):
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.conv2d(x, w, padding=1)
        gx, = lib.autograd.grad(out.sin().sum(), [x], create_graph=True)
        gw, = lib.autograd.grad(gx.square().sum(), [w])
        res.append((gx.detach().numpy(), gw.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


@needs_native
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2)])
def test_the_native_kernels_run(monkeypatch, kw):
    from tinytorch.device import get_backend
    table = get_backend(tt.device("cpu")).kernels  # the table the dispatcher reads
    for name in ("convolution", "convolution_backward"):
        assert table[name] is native.NATIVE_KERNELS[name]
    seen = []
    for name in ("convolution", "convolution_backward"):
        kern = table[name]
        monkeypatch.setitem(table, name, lambda *a, _k=kern, _n=name, **k: seen.append(_n) or _k(*a, **k))
    for name in ("convolution", "convolution_backward"):
        monkeypatch.setattr(OPS[name], "decomp", lambda *a, **k: pytest.fail("the decomposition ran"))
    check((2, 3, 9, 8), (4, 3, 3, 3), **kw)
    assert seen == ["convolution", "convolution_backward"]


@pytest.mark.parametrize("mask", [(True, True, True), (True, False, False), (False, True, True)])
@pytest.mark.parametrize("kw", [dict(stride=(1, 1), padding=(1, 0), dilation=(1, 1), groups=1),
                                dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)])
@pytest.mark.parametrize("limit", [None, 20000, 1])  # a device binding at most `limit` bytes: image blocks
def test_decomposition_matches_torch(mask, kw, limit, monkeypatch):
    """The op pair's decompositions (what other backends and TINYTORCH_NATIVE=0 run) against torch, also where
    the device's largest binding (``Backend.max_tensor_bytes``, a WebGPU adapter's) holds the columns of only
    some images (blocks of 2 or 3 of the 5 at 20000 bytes, one at a time at 1)."""
    from tinytorch._ops.nn import _convolution_backward_decomp, _convolution_decomp
    from tinytorch.backends.cpu import NumpyBackend
    monkeypatch.setattr(NumpyBackend, "max_tensor_bytes", lambda self, index=None: limit)
    rng = np.random.default_rng(9)
    x, w, b = rng.standard_normal((5, 4, 8, 7)), rng.standard_normal((6, 4 // kw["groups"], 3, 2)), \
        rng.standard_normal(6)
    out = _convolution_decomp(tt.tensor(x), tt.tensor(w), tt.tensor(b), **kw)
    X, W, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ref = torch.nn.functional.conv2d(X, W, B, **kw)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-10)
    g = rng.standard_normal(tuple(ref.shape))
    grads = _convolution_backward_decomp(tt.tensor(g), tt.tensor(x), tt.tensor(w), output_mask=mask, **kw)
    grads = grads if isinstance(grads, tuple) else (grads,)
    ref_grads = [r for r, m in zip(torch.autograd.grad(ref, [X, W, B], torch.tensor(g)), mask) if m]
    assert len(grads) == len(ref_grads)
    for a, r in zip(grads, ref_grads):
        np.testing.assert_allclose(a.numpy(), r.numpy(), rtol=1e-9, atol=1e-10)


def test_other_dtypes_take_the_composite_path(monkeypatch):
    """float16 / bfloat16 (PyTorch's CPU conv computes them) run im2col + matmul op by op, not the op pair."""
    for name in ("convolution", "convolution_backward"):
        monkeypatch.setattr(OPS[name], "meta", lambda *a, **k: pytest.fail("the op ran"))
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 6, 6)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    for t_dt, th_dt in ((tt.bfloat16, torch.bfloat16), (tt.float16, torch.float16)):
        ours = tt.nn.functional.conv2d(tt.tensor(x).to(t_dt), tt.tensor(w).to(t_dt), padding=1)
        ref = torch.nn.functional.conv2d(torch.tensor(x).to(th_dt), torch.tensor(w).to(th_dt), padding=1)
        np.testing.assert_allclose(ours.float().numpy(), ref.float().numpy(), rtol=3e-2, atol=3e-2)


def test_meta_device_shapes():
    x = tt.empty(2, 4, 9, 8, device="meta")
    w = tt.empty(6, 2, 3, 3, device="meta")
    out = tt.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2)
    assert out.shape == (2, 6, 5, 4) and out.device.type == "meta"


def test_grad_fn_is_named_as_torch():
    names = []
    for lib in (tt, torch):
        x = lib.ones(2, 3, 5, 5, requires_grad=True)
        names.append(lib.nn.functional.conv2d(x, lib.ones(4, 3, 3, 3)).grad_fn.name())
    assert names[0] == names[1] == "ConvolutionBackward0"


@needs_native
@pytest.mark.parametrize("kw", [dict(padding=2), dict(stride=2, padding=1)])
def test_threads(kw):
    """Enough images to spread over the pool, with the GIL released; the weight gradient summed over
    partitions; a single image split between the threads."""
    old = tt.get_num_threads()
    tt.set_num_threads(2)
    try:
        check((16, 6, 14, 14), (16, 6, 5, 5), **kw)
        check((16, 6, 14, 14), (16, 6, 5, 5), dtype="float64", **kw)
        check((1, 8, 30, 31), (64, 8, 3, 3), **kw)  # one image: its output chunks split between the threads
        check((1, 4, 9, 9), (4, 2, 3, 3), groups=2, **kw)
    finally:
        tt.set_num_threads(old)


@needs_native
def test_kernels_refuse_bad_arguments():
    C = native._C
    x, w = np.zeros((1, 2, 5, 5), np.float32), np.zeros((3, 2, 3, 3), np.float32)
    with pytest.raises(TypeError):
        C.conv2d_forward(x.astype(np.int64), w, None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(TypeError):
        C.conv2d_forward(x, w.astype(np.float64), None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ValueError):
        C.conv2d_forward(x, w, None, (1, 1), (0, 0), (1, 1), 2)  # 2 channels cannot be 2 groups of 2
    with pytest.raises(ValueError):
        C.conv2d_forward(x, w, np.zeros(2, np.float32), (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(ValueError):
        C.conv2d_backward(np.zeros((1, 3, 2, 2), np.float32), x, w, (1, 1), (0, 0), (1, 1), 1, True, True, True)


@needs_native
def test_without_blas():
    """The strided path's own GEMM loops, which run when no BLAS was found (set_blas(0, 0) disables it)."""
    if native.BLAS is None:
        pytest.skip("no BLAS found: every other test ran the loops already")
    native._C.set_blas(0, 0, False)
    try:
        check((2, 4, 9, 8), (6, 2, 3, 3), stride=2, padding=1, groups=2)
        check((2, 3, 9, 8), (4, 3, 3, 3), dtype="float64", stride=(1, 2))
    finally:
        native._C.set_blas(*native.BLAS)


def _random_case(seed):
    """A random small geometry: channels, groups, kernel, stride, padding (incl. wider than the kernel), dilation."""
    rng = np.random.default_rng(1000 + seed)
    groups = int(rng.choice([1, 1, 2, 3]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 5))
    k = tuple(int(v) for v in rng.integers(1, 5, 2))
    d = tuple(int(v) for v in rng.integers(1, 3, 2))
    s = tuple(int(v) for v in rng.choice([1, 1, 2, 3], 2))
    p = tuple(int(v) for v in rng.integers(0, 4, 2))
    hw = tuple(max(int(rng.integers(1, 12)), d[i] * (k[i] - 1) + 1 - 2 * p[i]) for i in range(2))
    n = int(rng.integers(1, 4))
    return (n, cin) + hw, (cout, cin // groups) + k, dict(stride=s, padding=p, dilation=d, groups=groups)


@pytest.mark.sweep
@pytest.mark.parametrize("seed", range(40))
def test_random_geometries(seed):
    x_shape, w_shape, kw = _random_case(seed)
    check(x_shape, w_shape, dtype="float64", seed=seed, **kw)


# The issue's layers at a small batch, with channel counts that are not multiples of the kernels' register blocks
# (4 output rows, 3 vectors of positions) or of a vector: the edges of every block of the shifted-row kernels.
BLOCK_EDGE_CASES = [
    ((2, 5, 14, 14), (7, 5, 5, 5), dict(padding=2)),
    ((1, 3, 28, 28), (13, 3, 3, 3), dict(padding=1)),
    ((2, 9, 11, 13), (6, 3, 3, 3), dict(padding=1, groups=3)),
    ((1, 6, 14, 14), (10, 6, 3, 3), dict(padding=2, dilation=2)),
    ((2, 7, 9, 10), (5, 7, 3, 5), dict(padding=(1, 2), dilation=(2, 1))),
]


@pytest.mark.parametrize("x_shape,w_shape,kw", BLOCK_EDGE_CASES, ids=[f"edge{i}" for i in range(len(BLOCK_EDGE_CASES))])
def test_channel_counts_off_the_blocks(x_shape, w_shape, kw):
    check(x_shape, w_shape, **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(padding=1), dict(padding=1, groups=2), dict(dilation=2, padding=2)])
def test_channels_last_input(dtype, kw):
    """Channels-last operands (torch's memory format; strided NHWC memory to the kernel) give the same values and
    gradients as contiguous ones."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 9, 10)).astype(dtype)
    w = rng.standard_normal((8, 6 // kw.get("groups", 1), 3, 3)).astype(dtype)
    b = rng.standard_normal(8).astype(dtype)
    res = []
    for lib in (tt, torch):
        tx = lib.tensor(x).contiguous(memory_format=lib.channels_last).requires_grad_(True)
        tw = lib.tensor(w).contiguous(memory_format=lib.channels_last).requires_grad_(True)
        tb = lib.tensor(b).requires_grad_(True)
        out = lib.nn.functional.conv2d(tx, tw, tb, **kw)
        g = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        grads = lib.autograd.grad(out, (tx, tw, tb), g)
        res.append([out.detach().numpy()] + [t.numpy() for t in grads])
    for a, c in zip(*res):
        np.testing.assert_allclose(a, c, **TOLS[dtype])


@needs_native
@pytest.mark.parametrize("threads,kw", [(2, dict(padding=1)), (2, dict(padding=2, dilation=2)),
                                        (3, dict(padding=1, groups=2)), (4, dict())])
def test_batch_one_backward_split_between_threads(threads, kw):
    """Batch 1 with fewer groups than threads: the rows of dW / dB and the chunks of dX are shared out between the
    threads (odd row counts leave some threads a partial block or nothing)."""
    old = tt.get_num_threads()
    tt.set_num_threads(threads)
    try:
        check((1, 8, 20, 21), (30, 8 // kw.get("groups", 1), 3, 3), **kw)
        check((1, 4, 16, 16), (6, 4 // kw.get("groups", 1), 3, 3), dtype="float64", **kw)
        check((1, 4, 48, 48), (2, 4 // kw.get("groups", 1), 3, 3), **kw)  # fewer register blocks than threads
    finally:
        tt.set_num_threads(old)
