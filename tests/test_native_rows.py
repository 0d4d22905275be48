"""The native (C++) row kernels of the cpu backend (tinytorch/csrc/rows.cpp): softmax / log_softmax and their
gradients along any dim, layer norm forward and backward, and the NLL loss with its gradient. Each is compared with
the NumPy kernel it replaces and with torch, on contiguous, transposed, sliced, 0-d and zero-size inputs in float32
and float64, plus the special rows (-inf, NaN, +inf, huge values) and the shapes of training (GPT-sized rows,
attention scores); gradients go through tinytorch's autograd and are compared with torch's.
"""
import os

import numpy as np
import pytest
import torch

import tinytorch as tt
from tinytorch.backends.cpu import native
from tinytorch.backends.cpu.registry import KERNELS

if os.environ.get("TINYTORCH_NATIVE", "1") == "0":
    pytest.skip("TINYTORCH_NATIVE=0: the native kernels are switched off for this run", allow_module_level=True)

OPS = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "native_layer_norm",
       "native_layer_norm_backward", "nll_loss", "nll_loss_backward")
DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}


def _native(name):
    return native.NATIVE_KERNELS[name]


def _close(got, want, dtype, scale=1.0):
    tol = TOL[dtype]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol["rtol"] * scale,
                               atol=tol["atol"] * scale, equal_nan=True)


def _rand(shape, dtype, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def test_extension_is_built_and_rows_are_registered():
    # CI builds the extension from a clean clone: a missing _C is a build failure, not a reason to skip
    assert native._C is not None, native.DISABLED_REASON
    for name in OPS:
        assert hasattr(native._C, name), name
        assert native.NATIVE_KERNELS[name].__name__ == f"native_{name}"


# ---- softmax / log_softmax ---------------------------------------------------------------------------------------
def _layouts(dtype):
    """(array, dim) pairs: last and other dims, transposed and sliced views, 0-d, 1-d, zero-size, rows longer than
    a summation block, more adjacent rows than one inner block, and the shapes of a GPT's logits and attention."""
    base = _rand((4, 6, 5), dtype, 1, 3)
    wide = _rand((3, 9, 300), dtype, 2, 3)
    cases = [(base, d) for d in range(3)]
    cases += [(wide, 1), (wide, 0), (_rand((3, 5000), dtype, 3, 4), 1), (_rand((5000, 3), dtype, 4, 4), 0)]
    cases += [(base.transpose(2, 0, 1), d) for d in range(3)]
    cases += [(base[:, ::2, 1:], 1), (base[::-1, :, ::3], 2), (_rand((40, 70), dtype, 5).T, 0),
              (_rand((40, 70), dtype, 5).T, 1)]
    cases += [(np.asarray(1.5, dtype), 0), (_rand((7,), dtype, 6), 0), (np.zeros((0, 5), dtype), 1),
              (np.zeros((3, 0), dtype), 1), (np.zeros((3, 0, 2), dtype), 0)]
    cases += [(_rand((32 * 64, 512), dtype, 7, 2), 1), (_rand((32 * 4 * 64, 64), dtype, 8, 2), 1)]
    return cases


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_matches_numpy_kernel_and_torch(name, dtype):
    for x, dim in _layouts(dtype):
        got = _native(name)(x, dim=dim)
        assert got.shape == x.shape and got.dtype == x.dtype
        assert got.flags.c_contiguous and not np.shares_memory(got, x)
        want = getattr(torch, name)(torch.from_numpy(np.array(x)), dim).numpy()
        _close(got, want, dtype)
        if x.ndim:  # the op hands a 0-d input to its kernel as shape (1,): the NumPy kernel never sees one
            _close(got, KERNELS[name](x, dim=dim), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward_matches_numpy_kernel(name, dtype):
    gname = name + "_backward"
    for i, (x, dim) in enumerate(_layouts(dtype)):
        out = _native(name)(x, dim=dim)
        g = _rand(x.shape, dtype, 100 + i)
        if g.ndim >= 2:
            g = np.asfortranarray(g)  # a non-contiguous gradient
        got = _native(gname)(g, out, dim=dim)
        assert got.shape == x.shape and got.flags.c_contiguous
        if not x.ndim:
            continue
        # the row sums differ in order from NumPy's: a few ulps of the sum, times the row's largest term
        _close(got, KERNELS[gname](g, out, dim=dim), dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_special_rows_match_torch_on_every_dim(dtype):
    a = _rand((24, 64), dtype, 9)
    a[1] = -np.inf
    a[2, 5] = np.nan
    a[3, 7] = np.inf
    a[4, :2] = np.inf
    a[5] += 1e4
    a[6] -= 1e4
    a[7, 1:] = -np.inf
    a[8, 3] = -np.inf
    a[9] = 1e30
    for name in ("softmax", "log_softmax"):
        fn = getattr(torch, name)
        _close(_native(name)(a, dim=1), fn(torch.from_numpy(a), 1).numpy(), dtype)
        at = np.ascontiguousarray(a.T)  # the same rows along dim 0 of a contiguous array (the inner-dim loop)
        _close(_native(name)(at, dim=0), fn(torch.from_numpy(at), 0).numpy(), dtype)
        a3 = np.ascontiguousarray(np.broadcast_to(a.T[:, None, :], (64, 3, 24)))
        _close(_native(name)(a3, dim=0), fn(torch.from_numpy(a3), 0).numpy(), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradients_through_autograd_match_torch(name, dtype):
    for shape, dim in (((6, 10), 1), ((4, 5, 6), 0), ((4, 5, 6), 1), ((2, 3, 200), 2), ((300, 3), 0)):
        x = _rand(shape, dtype, 11, 2)
        g = _rand(shape, dtype, 12)
        a = tt.tensor(x, requires_grad=True)
        (getattr(tt, name)(a.transpose(0, -1), dim).transpose(0, -1) * tt.tensor(g)).sum().backward()
        b = torch.tensor(x, requires_grad=True)
        (getattr(torch, name)(b.transpose(0, -1), dim).transpose(0, -1) * torch.tensor(g)).sum().backward()
        _close(a.grad.numpy(), b.grad.numpy(), dtype, scale=10)


def test_softmax_threads_give_identical_results():
    # rows are independent: the chunking over threads cannot change a value
    x = _rand((512, 300), np.float32, 13, 3)
    x3 = _rand((16, 300, 40), np.float32, 14, 3)
    n = tt.get_num_threads()
    try:
        tt.set_num_threads(1)
        one = [_native(k)(a, dim=1) for k in ("softmax", "log_softmax") for a in (x, x3)]
        tt.set_num_threads(max(n, 2))
        many = [_native(k)(a, dim=1) for k in ("softmax", "log_softmax") for a in (x, x3)]
    finally:
        tt.set_num_threads(n)
    for u, v in zip(one, many):
        np.testing.assert_array_equal(u, v)


def test_softmax_arguments_by_keyword_or_position_and_fallbacks():
    C = native._C
    x = _rand((3, 4), np.float32, 15)
    np.testing.assert_array_equal(C.softmax(x, 1), C.softmax(x, dim=1))
    np.testing.assert_array_equal(C.softmax(x, -1), C.softmax(x=x, dim=1))
    assert C.softmax(x, 2) is NotImplemented  # out of range: the NumPy kernel reports it
    assert C.softmax(x, dim=1, bogus=0) is NotImplemented
    assert C.softmax(x) is NotImplemented
    assert C.softmax(x.astype(np.float16), 1) is NotImplemented
    assert C.softmax(np.arange(4), 0) is NotImplemented
    # arrays the loops cannot read as float* (another byte order, unaligned elements): left to NumPy
    swapped = x.astype(x.dtype.newbyteorder())
    assert C.softmax(swapped, 1) is NotImplemented
    np.testing.assert_allclose(_native("softmax")(swapped, dim=1), C.softmax(x, 1), rtol=1e-6)
    unaligned = np.frombuffer(bytearray(x.nbytes + 1), np.float32, count=x.size, offset=1).reshape(x.shape)
    assert C.log_softmax(unaligned, 1) is NotImplemented
    assert C.nll_loss(x, np.frombuffer(bytearray(25), np.int64, 3, 1), None, -100, "sum") is NotImplemented
    assert C.softmax_backward(x, x[:, :2], 1) is NotImplemented  # mismatched shapes
    assert C.softmax_backward(x, x.astype(np.float64), 1) is NotImplemented
    # float16 / bfloat16 run on the NumPy kernels, as before
    h = torch.tensor(x).half()
    got = tt.softmax(tt.tensor(x).half(), 1)
    np.testing.assert_allclose(got.float().numpy(), torch.softmax(h, 1).float().numpy(), atol=1e-3)
    got = tt.log_softmax(tt.tensor(x).bfloat16(), 1)
    np.testing.assert_allclose(got.float().numpy(), torch.log_softmax(h.bfloat16(), 1).float().numpy(), atol=2e-2)


# ---- layer norm ----------------------------------------------------------------------------------------------------
def _ln_cases(dtype):
    """(x, w, b, normalized_ndim): affine, weight or bias only, none; 1-3 normalized dims; non-contiguous inputs
    and parameters; rows longer than a summation block; a GPT-sized batch; a mean far from 0."""
    x3 = _rand((4, 6, 8), dtype, 20, 2) + 3
    out = []
    for k in (1, 2, 3):
        shp = x3.shape[3 - k:]
        w, b = _rand(shp, dtype, 21), _rand(shp, dtype, 22)
        out += [(x3, w, b, k), (x3, None, None, k), (x3, w, None, k), (x3, None, b, k)]
    w8 = _rand((8, 2), dtype, 23)[:, 0]  # a strided weight
    out += [(x3.transpose(1, 0, 2), w8, w8[::-1], 1), (x3[:, ::2], w8, None, 1)]
    out += [(_rand((3, 5000), dtype, 24, 3) - 7, _rand(5000, dtype, 25), _rand(5000, dtype, 26), 1)]
    out += [(_rand((32 * 64, 128), dtype, 27), _rand(128, dtype, 28), _rand(128, dtype, 29), 1)]
    out += [(_rand((5, 7), dtype, 30) * 1e-3 + 1e3, None, None, 1), (_rand((7,), dtype, 31), None, None, 1)]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_matches_numpy_kernel_and_torch(dtype):
    for x, w, b, k in _ln_cases(dtype):
        got = _native("native_layer_norm")(x, w, b, normalized_ndim=k, eps=1e-5)
        ref = KERNELS["native_layer_norm"](x, w, b, normalized_ndim=k, eps=1e-5)
        t = lambda a: None if a is None else torch.from_numpy(np.array(a))  # noqa: E731
        want = torch.native_layer_norm(t(x), x.shape[x.ndim - k:], t(w), t(b), 1e-5)
        t64 = lambda a: None if a is None else t(a).double()  # noqa: E731
        exact = torch.native_layer_norm(t64(x), x.shape[x.ndim - k:], t64(w), t64(b), 1e-5)
        offset = abs(float(x.mean())) > 100  # mean >> spread: float32 PyTorch and NumPy lose digits there
        for g, r, tw, te in zip(got, ref, want, exact):
            assert g.shape == r.shape and g.dtype == x.dtype and g.flags.c_contiguous
            # the shifted two-pass statistics: as accurate as the float64 computation rounded to dtype (in float64
            # the reference itself loses digits on the offset row: rstd ~300 times the rounding of a mean ~1000)
            _close(g, te.numpy().reshape(g.shape).astype(dtype), dtype,
                   scale=500 if offset and dtype == np.float64 else 5)
            if not offset:
                _close(g, tw.numpy().reshape(g.shape), dtype, scale=5)
                _close(g, r, dtype, scale=5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_backward_matches_numpy_kernel(dtype):
    for i, (x, w, b, k) in enumerate(_ln_cases(dtype)):
        _, mean, rstd = KERNELS["native_layer_norm"](x, w, b, normalized_ndim=k, eps=1e-5)
        g = _rand(x.shape, dtype, 40 + i)
        for need in ((True, True, True), (True, False, False), (False, True, False), (False, False, True),
                     (False, True, True)):
            got = _native("native_layer_norm_backward")(g, x, mean, rstd, w, normalized_ndim=k, need=need)
            ref = KERNELS["native_layer_norm_backward"](g, x, mean, rstd, w, normalized_ndim=k, need=need)
            for j, (u, v) in enumerate(zip(got, ref)):
                assert u.shape == v.shape and u.dtype == x.dtype
                if need[j]:
                    _close(u, v, dtype, scale=20)
                else:
                    assert not u.any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_gradients_through_autograd_match_torch(dtype):
    for shape, nshape, affine in (((16, 32), (32,), True), ((4, 6, 8), (6, 8), True), ((64, 128), (128,), False),
                                  ((2, 3, 700), (700,), True)):
        x = _rand(shape, dtype, 50, 2) + 1
        g = _rand(shape, dtype, 51)
        a = tt.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        if affine:
            wa = tt.tensor(_rand(nshape, dtype, 52), requires_grad=True)
            ba = tt.tensor(_rand(nshape, dtype, 53), requires_grad=True)
            wb = torch.tensor(wa.detach().numpy(), requires_grad=True)
            bb = torch.tensor(ba.detach().numpy(), requires_grad=True)
        else:
            wa = ba = wb = bb = None
        (tt.nn.functional.layer_norm(a, nshape, wa, ba) * tt.tensor(g)).sum().backward()
        (torch.nn.functional.layer_norm(b, nshape, wb, bb) * torch.tensor(g)).sum().backward()
        _close(a.grad.numpy(), b.grad.numpy(), dtype, scale=50)
        if affine:
            _close(wa.grad.numpy(), wb.grad.numpy(), dtype, scale=50)
            _close(ba.grad.numpy(), bb.grad.numpy(), dtype, scale=50)


def test_layer_norm_module_and_edge_shapes_match_torch():
    m = tt.nn.LayerNorm(12)
    mt = torch.nn.LayerNorm(12)
    x = _rand((5, 3, 12), np.float32, 60)
    _close(m(tt.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(), np.float32)
    for shape in ((0, 4), (3, 0)):  # zero-size: the NumPy kernel's
        z = np.zeros(shape, np.float32)
        got = tt.nn.functional.layer_norm(tt.tensor(z), shape[1:])
        assert tuple(got.shape) == shape
    # float16 with float32 parameters runs on the NumPy kernel
    assert native._C.native_layer_norm(x.astype(np.float16), None, None, 1, 1e-5) is NotImplemented


def test_layer_norm_backward_is_deterministic_across_threads():
    x = _rand((2048, 64), np.float32, 61)
    w = _rand(64, np.float32, 62)
    g = _rand(x.shape, np.float32, 63)
    _, mean, rstd = _native("native_layer_norm")(x, w, None, normalized_ndim=1, eps=1e-5)
    run = lambda: _native("native_layer_norm_backward")(g, x, mean, rstd, w, normalized_ndim=1,  # noqa: E731
                                                        need=(True, True, True))
    first = run()
    for _ in range(3):
        for u, v in zip(first, run()):
            np.testing.assert_array_equal(u, v)
    n = tt.get_num_threads()
    try:
        tt.set_num_threads(1)
        one = run()
    finally:
        tt.set_num_threads(n)
    np.testing.assert_array_equal(one[0], first[0])  # gx is per row: identical for any thread count
    for u, v in zip(one[1:], first[1:]):
        _close(u, v, np.float32)


# ---- NLL loss ------------------------------------------------------------------------------------------------------
def _nll_cases(dtype):
    rng = np.random.default_rng(70)
    x = np.log(rng.random((9, 5))).astype(dtype)
    t = rng.integers(0, 5, 9)
    t[[1, 4]] = -100
    w = rng.random(5).astype(dtype) + 0.5
    big = _rand((2048, 65), dtype, 71)
    tb = rng.integers(0, 65, 2048)
    t2 = np.where(t == -100, 2, t)
    return [(x, t, None, -100), (x, t, w, -100), (x, t2, w, 2), (x, np.full(9, -100), None, -100),
            (np.asfortranarray(x), t[::-1].copy()[::-1], w, -100), (x[::2], t[::2], w[::-1], -100),
            (big, tb, None, -100), (big, tb, _rand(65, dtype, 72) ** 2, 3), (x[:0], t[:0], None, -100)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_matches_torch_and_numpy_kernel(reduction, dtype):
    for x, t, w, ig in _nll_cases(dtype):
        got = _native("nll_loss")(x, t, w, ignore_index=ig, reduction=reduction)
        assert got.dtype == x.dtype and got.shape == ((len(t),) if reduction == "none" else ())
        tw = None if w is None else torch.from_numpy(np.array(w))
        want = torch.nn.functional.nll_loss(torch.from_numpy(np.array(x)), torch.from_numpy(np.array(t)), tw,
                                            ignore_index=ig, reduction=reduction)
        _close(got, want.numpy(), dtype, scale=5)
        if len(t) and (t != ig).any():  # the NumPy kernel gives -0 * x for ignored rows where torch gives 0
            _close(got, KERNELS["nll_loss"](x, t, w, ignore_index=ig, reduction=reduction), dtype, scale=5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_backward_matches_torch(reduction, dtype):
    for i, (x, t, w, ig) in enumerate(_nll_cases(dtype)):
        g = _rand((len(t),), dtype, 80 + i)[::-1] if reduction == "none" else np.asarray(0.7, dtype)
        got = _native("nll_loss_backward")(g, t, w, num_classes=x.shape[1], ignore_index=ig, reduction=reduction)
        assert got.shape == x.shape and got.dtype == dtype
        xt = torch.tensor(np.array(x), requires_grad=True)
        tw = None if w is None else torch.from_numpy(np.array(w))
        loss = torch.nn.functional.nll_loss(xt, torch.from_numpy(np.array(t)), tw, ignore_index=ig,
                                            reduction=reduction)
        if len(t):
            loss.backward(torch.from_numpy(np.array(g)))
            _close(got, xt.grad.numpy(), dtype, scale=5)
        if len(t) and (t != ig).any() and reduction != "mean" or (t != ig).all():
            ref = KERNELS["nll_loss_backward"](g, t, w, num_classes=x.shape[1], ignore_index=ig, reduction=reduction)
            _close(got, ref, dtype, scale=5)


def test_nll_loss_out_of_range_target_raises_as_before():
    x = np.log(np.full((3, 4), 0.25, np.float32))
    for bad in (7, -3):
        t = np.array([0, bad, 1])
        assert native._C.nll_loss(x, t, None, -100, "mean") is NotImplemented
        assert native._C.nll_loss_backward(np.asarray(1.0, np.float32), t, None, 4, -100, "sum") is NotImplemented
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            _native("nll_loss")(x, t, None, ignore_index=-100, reduction="mean")
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            _native("nll_loss_backward")(np.asarray(1.0, np.float32), t, None, num_classes=4, ignore_index=-100,
                                         reduction="sum")
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            tt.nn.functional.nll_loss(tt.tensor(x), tt.tensor(t))
    assert native._C.nll_loss(x, np.array([0, 1, 2], np.int32), None, -100, "mean") is NotImplemented
    assert native._C.nll_loss(x, np.array([0, 1, 2]), None, -100, "avg") is NotImplemented


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_with_ignore_index_and_weights_matches_torch(dtype):
    rng = np.random.default_rng(90)
    for shape, C in (((64, 10), 10), ((8, 7, 3), 7)):
        x = _rand(shape, dtype, 91, 3)
        t = rng.integers(0, C, (shape[0],) + shape[2:])
        t.reshape(-1)[::5] = 1  # some of them the ignored class
        w = (rng.random(C) + 0.5).astype(dtype)
        for kw in (dict(), dict(ignore_index=1), dict(weight=w), dict(weight=w, ignore_index=1, reduction="sum"),
                   dict(weight=w, reduction="none"), dict(label_smoothing=0.1, ignore_index=1)):
            ka = {k: tt.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
            kb = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
            a = tt.tensor(x, requires_grad=True)
            b = torch.tensor(x, requires_grad=True)
            la = tt.nn.functional.cross_entropy(a, tt.tensor(t), **ka)
            lb = torch.nn.functional.cross_entropy(b, torch.tensor(t), **kb)
            _close(la.detach().numpy(), lb.detach().numpy(), dtype, scale=10)
            la.sum().backward()
            lb.sum().backward()
            _close(a.grad.numpy(), b.grad.numpy(), dtype, scale=10)
