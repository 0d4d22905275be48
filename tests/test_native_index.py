"""The native indexing kernels (tinytorch/csrc/index.cpp): index_select, index_add, gather, scatter / scatter_add,
scatter_reduce('sum'), advanced indexing and index_put by one index array on dim 0, and cat, compared with the
NumPy kernels they stand in front of and with PyTorch (an embedding's forward and backward included)."""
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

FLOATS = [np.float32, np.float64]


def variants(shape, dtype, rng):
    """The same values contiguous, transposed (as a view) and as a strided slice."""
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    yield a
    if a.ndim >= 2:
        yield np.ascontiguousarray(a.T).T
    big = np.zeros(tuple(2 * n for n in shape), dtype)
    v = big[tuple(slice(0, 2 * n, 2) for n in shape)]
    v[...] = a
    yield v


def native(name, *args, **kw):
    """The registered kernel's result, checking that the native path (not the fallback) produced it."""
    fn = {"index_select": _C.index_select, "index_add": _C.index_add, "gather": _C.gather}.get(name)
    if fn is not None:
        r = fn(*args, **kw)
        assert r is not NotImplemented
    return NATIVE_KERNELS[name](*args, **kw)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_, np.float16, np.int8])
def test_index_select_any_dtype_every_dim(dtype):
    rng = np.random.default_rng(0)
    for a in variants((4, 5, 6), dtype, rng):
        for dim in range(3):
            n = a.shape[dim]
            for idx in (rng.integers(0, n, 7), np.array([n - 1, 0, 0, n - 1]), np.zeros(0, np.int64),
                        rng.integers(0, n, 9).astype(np.int32), np.array([-1, -n, 2])):
                got = native("index_select", a, idx, dim)
                want = KERNELS["index_select"](a, idx, dim)
                assert got.dtype == want.dtype and got.flags.c_contiguous
                np.testing.assert_array_equal(got, want)
                assert not np.shares_memory(got, a)


def test_out_of_range_falls_back_to_the_numpy_error():
    a = np.ones((3, 4), np.float32)
    assert _C.index_select(a, np.array([3]), 0) is NotImplemented
    assert _C.index_select(a, np.array([-4]), 0) is NotImplemented
    assert _C.index_add(a, np.array([5]), np.ones((1, 4), np.float32), 0, 1) is NotImplemented
    assert _C.index_add(a, np.array([-1]), np.ones((1, 4), np.float32), 0, 1) is NotImplemented
    assert _C.gather(a, np.array([[4]]), 1) is NotImplemented
    assert _C.scatter(a, np.array([[4]]), np.ones((1, 1), np.float32), 1, True, False) is NotImplemented
    assert _C.index_select(a, np.array([0.5]), 0) is NotImplemented  # float index: not an index
    with pytest.raises(IndexError):
        NATIVE_KERNELS["index_select"](a, np.array([3]), 0)
    t = tinytorch.ones(3, 4)
    with pytest.raises(IndexError, match="index out of range in self"):
        t.index_select(0, tinytorch.tensor([3]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.gather(1, tinytorch.tensor([[4]]))
    with pytest.raises(IndexError, match="out of bounds"):
        t[tinytorch.tensor([7])]


@pytest.mark.parametrize("dtype", FLOATS)
def test_index_add_duplicates_alpha_and_layouts(dtype):
    rng = np.random.default_rng(1)
    for a in variants((5, 6, 40), dtype, rng):
        for dim in range(3):
            n = a.shape[dim]
            idx = np.concatenate([rng.integers(0, n, 11), [0, 0, 0, n - 1]])
            shape = list(a.shape)
            shape[dim] = len(idx)
            for src in variants(tuple(shape), dtype, rng):
                for alpha in (1, 2.5, -1):
                    got = native("index_add", a, idx, src, dim, alpha)
                    want = KERNELS["index_add"](a, idx, src, dim, alpha)
                    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)
                    ref = torch.from_numpy(np.ascontiguousarray(a)).index_add(
                        dim, torch.from_numpy(idx % n), torch.from_numpy(np.ascontiguousarray(src)), alpha=alpha)
                    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5, atol=1e-4)


def test_index_add_is_deterministic_with_duplicates():
    rng = np.random.default_rng(2)
    a = np.zeros((3, 4096), np.float32)
    idx = rng.integers(0, 3, 5000)
    src = rng.standard_normal((5000, 4096)).astype(np.float32)
    r1 = _C.index_add(a, idx, src, 0, 1)
    old = tinytorch.get_num_threads()
    try:
        tinytorch.set_num_threads(1)
        r2 = _C.index_add(a, idx, src, 0, 1)
    finally:
        tinytorch.set_num_threads(old)
    np.testing.assert_array_equal(r1, r2)
    exact = np.zeros((3, 4096))
    np.add.at(exact, idx, src.astype(np.float64))
    np.testing.assert_allclose(r1, exact, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64])
def test_gather_vs_numpy_and_torch(dtype):
    rng = np.random.default_rng(3)
    for a in variants((4, 5, 6), dtype, rng):
        for dim in range(3):
            for ishape in ((4, 5, 6), (2, 3, 9) if dim == 2 else (3, 5, 6) if dim == 0 else (4, 8, 2)):
                idx = rng.integers(0, a.shape[dim], ishape)
                got = native("gather", a, idx, dim)
                np.testing.assert_array_equal(got, KERNELS["gather"](a, idx, dim))
                np.testing.assert_array_equal(got, torch.gather(torch.from_numpy(np.ascontiguousarray(a)), dim,
                                                                torch.from_numpy(idx)).numpy())
    a = np.arange(6.0).reshape(2, 3)
    assert native("gather", a, np.zeros((0, 3), np.int64), 0).shape == (0, 3)
    np.testing.assert_array_equal(native("gather", a, np.array([[2, 0]], np.int32), 1), [[2.0, 0.0]])


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_and_scatter_add(dtype):
    rng = np.random.default_rng(4)
    for a in variants((4, 5, 6), dtype, rng):
        for dim in range(3):
            n = a.shape[dim]
            for ishape in ((4, 5, 6), (2, 3, 4)):
                idx = rng.integers(0, n, ishape)  # duplicates
                for src in list(variants(tuple(s + 1 for s in ishape), dtype, rng)) + [2.5]:
                    for reduce in (None, "add"):
                        got = NATIVE_KERNELS["scatter"](a, idx, src, dim, reduce)
                        assert _C.scatter(a, idx, src, dim, reduce == "add", False) is not NotImplemented
                        if reduce is None and isinstance(src, np.ndarray):
                            # duplicate destinations: any of the written values is right; compare where unique
                            t = torch.from_numpy(np.ascontiguousarray(a)).scatter(
                                dim, torch.from_numpy(idx), torch.from_numpy(np.ascontiguousarray(src)))
                            seen = np.zeros(a.shape, np.int64)
                            np.put_along_axis(seen, idx, 1, dim) if ishape == a.shape else None
                            if ishape == a.shape:
                                cnt = np.zeros(a.shape, np.int64)
                                ii = list(np.indices(idx.shape, sparse=True))
                                ii[dim] = idx
                                np.add.at(cnt, tuple(ii), 1)
                                np.testing.assert_array_equal(got[cnt <= 1], t.numpy()[cnt <= 1])
                            continue
                        want = KERNELS["scatter"](a, idx, src, dim, reduce)
                        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # scatter_reduce('sum') with and without self
    a = rng.standard_normal((3, 4)).astype(np.float32)
    idx = np.array([[0, 1, 0, 2], [2, 2, 0, 0]])
    src = rng.standard_normal((2, 4)).astype(np.float32)
    for include_self in (True, False):
        got = NATIVE_KERNELS["scatter_reduce"](a, idx, src, 0, "sum", include_self)
        want = torch.from_numpy(a).scatter_reduce(0, torch.from_numpy(idx), torch.from_numpy(src), "sum",
                                                  include_self=include_self)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6)
    assert NATIVE_KERNELS["scatter_reduce"](a, idx, src, 0, "amax", True).shape == (3, 4)  # NumPy kernel


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_])
def test_index_dim0_and_index_put(dtype):
    rng = np.random.default_rng(5)
    spec = (("t", 0),)
    for a in variants((7, 3, 4), dtype, rng):
        for idx in (rng.integers(0, 7, (2, 5)), np.array([6, -1, 0, 0]), np.zeros(0, np.int64),
                    rng.integers(-7, 7, 9).astype(np.int32)):
            for sp in (spec, spec + (slice(None),)):
                got = NATIVE_KERNELS["index"](a, idx, spec=sp)
                np.testing.assert_array_equal(got, KERNELS["index"](a, idx, spec=sp))
            rshape = idx.shape + a.shape[1:]
            for values in (rng.standard_normal(rshape).astype(dtype), np.array(3, dtype),
                           rng.standard_normal((1, 4)).astype(dtype), rng.standard_normal((3, 1)).astype(dtype),
                           np.ascontiguousarray(rng.standard_normal(rshape[::-1]).astype(dtype).T)):
                for accumulate in ((False, True) if dtype in FLOATS else (False,)):
                    assert _C.index_put0(a, values, idx, accumulate) is not NotImplemented
                    got = NATIVE_KERNELS["index_put"](a, values, idx, spec=spec, accumulate=accumulate)
                    want = KERNELS["index_put"](a, values, idx, spec=spec, accumulate=accumulate)
                    if accumulate or len(np.unique(idx % 7)) == idx.size:
                        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # other index forms go to the NumPy kernel
    a = np.arange(12.0).reshape(3, 4)
    assert NATIVE_KERNELS["index"](a, np.array([True, False, True]), spec=spec).shape == (2, 4)
    np.testing.assert_array_equal(NATIVE_KERNELS["index"](a, np.array([1, 2]), spec=(slice(None), ("t", 0))),
                                  a[:, [1, 2]])


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.bool_, np.float16])
def test_cat(dtype):
    rng = np.random.default_rng(6)
    for dim in range(3):
        parts = []
        for k, n in enumerate((3, 1, 0, 4)):
            shape = [2, 3, 5]
            shape[dim] = n
            parts.append(list(variants(tuple(shape), dtype, rng))[k % 3 if n else 0])
        got = NATIVE_KERNELS["cat"](*parts, dim=dim)
        assert _C.cat(parts, dim) is not NotImplemented
        np.testing.assert_array_equal(got, np.concatenate(parts, dim))
        assert got.flags.c_contiguous
    a = np.ones((2, 3), np.float32)
    assert _C.cat([a, np.ones((2, 3), np.float64)], 0) is NotImplemented  # mixed dtypes: NumPy promotes
    assert _C.cat([a, np.ones((3, 3), np.float32)], 1) is NotImplemented
    big = [rng.standard_normal((32, 64, 128)).astype(np.float32) for _ in range(4)]
    np.testing.assert_array_equal(_C.cat(big, 2), np.concatenate(big, 2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_forward_backward_vs_torch(dtype):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((65, 16))
    idx = rng.integers(0, 65, (8, 12))
    idx[0, :4] = 3  # duplicates accumulate in the gradient
    for padding_idx in (None, 3):
        a = tinytorch.tensor(w, dtype=getattr(tinytorch, dtype), requires_grad=True)
        b = torch.tensor(w, dtype=getattr(torch, dtype), requires_grad=True)
        ya = tinytorch.nn.functional.embedding(tinytorch.tensor(idx), a, padding_idx=padding_idx)
        yb = torch.nn.functional.embedding(torch.tensor(idx), b, padding_idx=padding_idx)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-6)
        g = rng.standard_normal(yb.shape)
        ya.backward(tinytorch.tensor(g, dtype=a.dtype))
        yb.backward(torch.tensor(g, dtype=b.dtype))
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_indexing_ops_grads_vs_torch():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((5, 6))
    idx = rng.integers(0, 5, (3, 6))
    for fn in (lambda m, t: m.gather(t, 0, m.tensor(idx)), lambda m, t: t[m.tensor([4, 0, 0, 2])],
               lambda m, t: m.cat([t, t * 2, t[:, :2]], 1), lambda m, t: t.index_select(1, m.tensor([5, 1, 1])),
               lambda m, t: m.zeros(5, 6, dtype=t.dtype).scatter_add(0, m.tensor(idx), t[:3] * 3),
               lambda m, t: m.zeros(9, 6, dtype=t.dtype).index_add(0, m.tensor([8, 1, 1, 0, 2]), t)):
        a = tinytorch.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        ya, yb = fn(tinytorch, a), fn(torch, b)
        np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-6)
        w = rng.standard_normal(yb.shape)
        (ya * tinytorch.tensor(w)).sum().backward()
        (yb * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6, atol=1e-9)
