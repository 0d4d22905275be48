"""The native reductions (tinytorch/csrc/reduce.cpp): sum, amax, amin over any set of dims and argmax, argmin,
max_dim, min_dim over one dim, compared with the NumPy kernels they stand in front of and with PyTorch."""
import itertools
import os

import numpy as np
import pytest
import torch

if os.environ.get("TINYTORCH_NATIVE", "1").strip() in ("0", "false", "off", "no"):
    pytest.skip("TINYTORCH_NATIVE=0: the native kernels are switched off", allow_module_level=True)

import tinytorch  # noqa: E402
from tinytorch import _C  # noqa: E402  (built in CI: a missing extension fails here)
from tinytorch.backends.cpu.native import NATIVE_KERNELS  # noqa: E402
from tinytorch.backends.cpu.registry import KERNELS  # noqa: E402

SUM, MAX, MIN = _C.REDUCE_OPS["sum"], _C.REDUCE_OPS["max"], _C.REDUCE_OPS["min"]
DTYPES = [np.float32, np.float64]


def layouts(shape, dtype, rng):
    """The same values as a contiguous array, a transposed view, a strided slice and an offset view."""
    a = rng.standard_normal(shape).astype(dtype)
    yield "contiguous", a
    if a.ndim >= 2:
        yield "transposed", np.ascontiguousarray(a.transpose()).transpose()
    big = rng.standard_normal(tuple(2 * n + 1 for n in shape)).astype(dtype)
    view = big[tuple(slice(1, 1 + 2 * n, 2) for n in shape)]
    view[...] = a
    yield "strided", view
    if a.ndim >= 1:
        buf = np.empty(a.size + 3, dtype)
        off = buf[3:].reshape(shape)
        off[...] = a
        yield "offset", off


def all_subsets(nd):
    for k in range(nd + 1):
        yield from itertools.combinations(range(nd), k)


def check_reduce(a, dims, keepdim):
    for op, name in ((SUM, "sum"), (MAX, "amax"), (MIN, "amin")):
        if op != SUM and a.size == 0:
            continue
        got = _C.reduce(op, a, dims, keepdim)
        assert got is not NotImplemented
        args = (a, dims, keepdim, None) if name == "sum" else (a, dims, keepdim)
        want = KERNELS[name](*args)
        assert got.shape == np.shape(want) and got.dtype == a.dtype
        if op == SUM:
            # error bound relative to the sum of magnitudes (cancellation leaves the rounding of the terms)
            exact = np.sum(a.astype(np.float64), axis=dims, keepdims=keepdim)
            mag = np.sum(np.abs(a.astype(np.float64)), axis=dims, keepdims=keepdim)
            eps = 2e-7 if a.dtype == np.float32 else 1e-14  # the float64 reference has its own rounding
            assert np.all(np.abs(got - exact) <= eps * (np.abs(exact) + mag) + 1e-30), (dims, a.shape)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (2, 3, 4, 5), (40, 33), (3, 1, 4)])
def test_reduce_every_subset_of_dims(shape, dtype):
    rng = np.random.default_rng(0)
    for _, a in layouts(shape, dtype, rng):
        for dims in list(all_subsets(a.ndim)) + [None]:
            for keepdim in (False, True):
                check_reduce(a, dims, keepdim)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5), (2, 3, 4, 5), (64, 3), (3, 100), (2, 1, 3)])
def test_arg_reductions_every_dim(shape, dtype):
    rng = np.random.default_rng(1)
    for _, a in layouts(shape, dtype, rng):
        a = np.round(a * 2)  # ties: the first index wins
        for dim, keepdim in itertools.product(range(-a.ndim, a.ndim), (False, True)):
            for op, name, dname in ((MAX, "argmax", "max_dim"), (MIN, "argmin", "min_dim")):
                got = _C.arg_reduce(op, False, a, dim, keepdim)
                np.testing.assert_array_equal(got, KERNELS[name](a, dim, keepdim))
                assert got.dtype == np.int64
                v, i = _C.arg_reduce(op, True, a, dim, keepdim)
                wv, wi = KERNELS[dname](a, dim % a.ndim, keepdim)
                np.testing.assert_array_equal(v, wv)
                np.testing.assert_array_equal(i, wi)
                t = torch.from_numpy(np.ascontiguousarray(a))
                tv, ti = (torch.max if op == MAX else torch.min)(t, dim, keepdim)
                np.testing.assert_array_equal(i, ti.numpy())
                np.testing.assert_array_equal(v, tv.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf_as_torch(dtype):
    a = np.array([[1, np.nan, 3, np.nan], [np.inf, -np.inf, 2, 0], [-np.inf, -np.inf, np.nan, 5],
                  [0, 0, 0, 0]], dtype)
    big = np.tile(a, (1, 40))  # long rows take the vectorized path
    for x in (a, a.T, big, big.T, np.ascontiguousarray(big.T)):
        t = torch.from_numpy(np.ascontiguousarray(x))
        for dim in (0, 1):
            for op, tf in ((MAX, torch.max), (MIN, torch.min)):
                v, i = _C.arg_reduce(op, True, x, dim, False)
                tv, ti = tf(t, dim)
                np.testing.assert_array_equal(v, tv.numpy())
                np.testing.assert_array_equal(i, ti.numpy())
                np.testing.assert_array_equal(_C.arg_reduce(op, False, x, dim, False),
                                              (torch.argmax if op == MAX else torch.argmin)(t, dim).numpy())
                np.testing.assert_array_equal(_C.reduce(op, x, (dim,), False),
                                              (torch.amax if op == MAX else torch.amin)(t, dim).numpy())
            np.testing.assert_array_equal(_C.reduce(SUM, x, (dim,), False), torch.sum(t, dim).numpy())
        for op, tf in ((MAX, torch.amax), (MIN, torch.amin), (SUM, torch.sum)):
            np.testing.assert_array_equal(_C.reduce(op, x, None, False), tf(t).numpy())


def test_zero_size_and_0d():
    z = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(_C.reduce(SUM, z, (0,), False), np.zeros(3, np.float32))
    assert _C.reduce(SUM, z, (1,), True).shape == (0, 1)
    assert _C.reduce(MAX, z, (1,), False).shape == (0,)
    assert _C.reduce(MAX, z, (0,), False) is NotImplemented  # no maximum of nothing: the op raises first
    assert _C.reduce(SUM, z, None, False).shape == ()
    assert _C.arg_reduce(MAX, False, z, 1, False).shape == (0,)
    assert _C.arg_reduce(MAX, False, z, 0, False) is NotImplemented
    s = np.array(2.5, np.float64)
    for op in (SUM, MAX, MIN):
        r = _C.reduce(op, s, (), False)
        assert r.shape == () and r == 2.5 and not np.shares_memory(r, s)
    assert _C.arg_reduce(MAX, False, s, 0, False) is NotImplemented
    # through the ops: the errors of empty reductions stay PyTorch's
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        tinytorch.zeros(0, 3).amax(0)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        tinytorch.zeros(0, 3).max()
    assert tinytorch.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]


def test_unhandled_dtypes_fall_back():
    a = np.arange(12).reshape(3, 4)
    assert _C.reduce(SUM, a, (0,), False) is NotImplemented
    assert _C.arg_reduce(MAX, False, a, 0, False) is NotImplemented
    assert NATIVE_KERNELS["sum"](a, (0,), False, None).tolist() == [12, 15, 18, 21]
    h = np.ones((3, 4), np.float16)
    assert NATIVE_KERNELS["sum"](h, (1,), False, None).dtype == np.float16


def test_fuzz_random_shapes_strides_offsets():
    rng = np.random.default_rng(1234)
    for _ in range(400):
        nd = int(rng.integers(0, 5))
        shape = tuple(int(rng.choice([1, 2, 3, 5, 8, 17, 64])) for _ in range(nd))
        dtype = DTYPES[int(rng.integers(2))]
        steps = tuple(int(rng.choice([1, 1, 2, -1])) for _ in range(nd))
        base = rng.standard_normal(tuple(n * abs(s) + 2 for n, s in zip(shape, steps))).astype(dtype)
        sl = tuple(slice(1, 1 + n * s, s) if s > 0 else slice(n, 0, s) for n, s in zip(shape, steps))
        a = base[sl] if nd else base
        if nd >= 2 and rng.integers(2):
            a = a.transpose(rng.permutation(nd))
        k = int(rng.integers(0, nd + 1))
        dims = tuple(sorted(rng.choice(nd, k, replace=False).tolist())) if nd else ()
        dims = None if rng.integers(5) == 0 else dims
        check_reduce(a, dims, bool(rng.integers(2)))
        if nd:
            d = int(rng.integers(nd))
            for op, name in ((MAX, "max_dim"), (MIN, "min_dim")):
                v, i = _C.arg_reduce(op, True, a, d, False)
                wv, wi = KERNELS[name](a, d, False)
                np.testing.assert_array_equal(v, wv)
                np.testing.assert_array_equal(i, wi)


@pytest.mark.parametrize("shape,dims", [((100000,), None), ((3, 70000), (1,)), ((70000, 3), (0,)),
                                        ((5, 40000), None), ((300, 5, 400), (0, 2)), ((2, 50000, 3), (1,)),
                                        ((2048, 512), (0,)), ((64, 4, 4096), (0, 1))])
def test_large_split_reductions(shape, dims):
    """Few outputs and many elements: the reduction splits into blocks; sums stay accurate and deterministic."""
    rng = np.random.default_rng(7)
    for dtype in DTYPES:
        a = (rng.standard_normal(shape) + 3).astype(dtype)
        check_reduce(a, dims, False)
        r1 = _C.reduce(SUM, a, dims, False)
        old = tinytorch.get_num_threads()
        try:
            tinytorch.set_num_threads(1)
            r2 = _C.reduce(SUM, a, dims, False)
        finally:
            tinytorch.set_num_threads(old)
        np.testing.assert_array_equal(r1, r2)


def test_float32_sum_accuracy():
    """float32 sums accumulate in double: as accurate as PyTorch's cascade sum on a long, badly scaled row."""
    a = np.full(1 << 22, 0.1, np.float32)
    a[::7] = 1e4
    exact = np.sum(a.astype(np.float64))
    got = _C.reduce(SUM, a, None, False)
    want = torch.from_numpy(a).sum().item()
    assert abs(float(got) - exact) <= abs(want - exact) + 1e-7 * exact


@pytest.mark.parametrize("dtype", [tinytorch.float32, tinytorch.float64])
def test_ops_values_and_grads_vs_torch(dtype):
    tdt = getattr(torch, str(dtype).split(".")[1])
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5, 4))
    for fn in (lambda m, t: t.sum((0, 2)), lambda m, t: t.sum(1, keepdim=True), lambda m, t: t.amax((1, 2)),
               lambda m, t: t.amin(0), lambda m, t: t.transpose(0, 2).sum(0),
               lambda m, t: t.max(1)[0], lambda m, t: t.min(2, keepdim=True)[0],
               lambda m, t: t.sum(), lambda m, t: t[:, ::2].amax(-1)):
        a = tinytorch.tensor(x, dtype=dtype, requires_grad=True)
        b = torch.tensor(x, dtype=tdt, requires_grad=True)
        ya, yb = fn(tinytorch, a), fn(torch, b)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-6)
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    t = tinytorch.tensor(x, dtype=dtype)
    np.testing.assert_array_equal(t.argmax(1).numpy(), torch.tensor(x).argmax(1).numpy())
    np.testing.assert_array_equal(t.argmin().numpy(), torch.tensor(x).argmin().numpy())


def test_broadcast_stride_zero_inputs():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5, 1, 7)).astype(np.float32)
    a = np.broadcast_to(x, (5, 300, 7))
    for dims in list(all_subsets(3)) + [None]:
        check_reduce(a, dims, False)
    for d in range(3):
        v, i = _C.arg_reduce(MAX, True, a, d, False)
        wv, wi = KERNELS["max_dim"](a, d, False)
        np.testing.assert_array_equal(v, wv)
        np.testing.assert_array_equal(i, wi)


@pytest.mark.parametrize("shape,dim", [((70000, 3), 0), ((2048, 512), 0), ((3, 70000), 1), ((100000, 1), 0)])
def test_sums_at_least_as_accurate_as_the_numpy_kernel(shape, dim):
    """Against exactly rounded sums (math.fsum): the native sums' error is no larger than ``_fsum``'s (BLAS)."""
    import math
    from tinytorch.backends.cpu.reduce import _fsum
    rng = np.random.default_rng(11)
    for dtype in DTYPES:
        a = (rng.standard_normal(shape) + 3).astype(dtype)
        cols = np.moveaxis(a.astype(np.float64), dim, -1).reshape(-1, shape[dim])
        exact = np.array([math.fsum(c) for c in cols])
        err = lambda r: np.max(np.abs(np.asarray(r, np.float64).reshape(-1) - exact) / np.abs(exact))  # noqa: E731
        assert err(_C.reduce(SUM, a, (dim,), False)) <= err(_fsum(a, (dim,))) + np.finfo(dtype).eps


@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_reductions_fuzz_special_values(dtype):
    """Rows of every length through the vector and scalar paths, drawn from few values (ties), infinities and
    NaN: the same index and value as torch."""
    rng = np.random.default_rng(5)
    vals = np.array([0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan], dtype)
    for n in list(range(1, 70)) + [127, 128, 129, 300]:
        for p_nan in (0.0, 0.02):
            pool = vals if p_nan else vals[:-1]
            a = rng.choice(pool, size=(9, n)).astype(dtype)
            if p_nan == 0.0:
                a[a != a] = 0
            t = torch.from_numpy(a)
            for x, tx, d in ((a, t, 1), (a.T, t.T, 0)):
                for op, tf in ((MAX, torch.max), (MIN, torch.min)):
                    v, i = _C.arg_reduce(op, True, x, d, False)
                    tv, ti = tf(tx, d)
                    np.testing.assert_array_equal(i, ti.numpy(), err_msg=f"n={n}")
                    np.testing.assert_array_equal(v, tv.numpy())
                    np.testing.assert_array_equal(_C.reduce(op, x, (d,), False),
                                                  (torch.amax if op == MAX else torch.amin)(tx, d).numpy())
