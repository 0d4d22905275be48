"""Differences the generated fuzzer (tests/fuzz.py) found in its long run, each checked against torch here: the
polygamma order torch's kernel reads as a C int, digamma beside its poles and at -0, clamp with ints past int64,
the autocast dtype table, bilinear's batch dims, nanmean's dtype and the pin_memory argument of every factory."""
import numpy as np
import pytest

import tinytorch
from conftest import torch


def _both(fn):
    """(torch's result or exception, tinytorch's) of ``fn(lib)``."""
    out = []
    for lib in (torch, tinytorch):
        try:
            out.append(("ret", fn(lib)))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out.append(("exc", e))
    return out


def _same(fn, rtol=2e-5, atol=1e-5):
    (kt, t), (ko, o) = _both(fn)
    assert kt == ko, (t, o)
    if kt == "exc":
        assert type(o) is type(t) and str(o) == str(t), (t, o)
        return
    if isinstance(t, torch.Tensor):
        assert str(o.dtype) == str(t.dtype) and tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)
    else:
        assert str(o) == str(t)


@pytest.mark.parametrize("n", [2 ** 31, 2 ** 31 + 5, 2 ** 32, 2 ** 32 + 1, 2 ** 32 + 3, 2 ** 40, 2 ** 62, 2 ** 63 - 1])
def test_polygamma_order_wraps_as_torchs_c_int(n):
    x = np.array([0.5, -1.5, 3.0, np.nan, np.inf, -2.0, 7.25], np.float32)
    _same(lambda lib: lib.polygamma(n, lib.from_numpy(x.copy())), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_digamma_beside_poles_and_at_signed_zero(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-5, 5, 2000), -rng.uniform(0, 1e-2, 300), rng.uniform(0, 1e-2, 300),
                        -1 + rng.uniform(0, 1e-2, 300), -1 - rng.uniform(0, 1e-2, 300),
                        [-0.0009780305, -1e-30, -2.0, -3.5, 0.0, -0.0, 1e-30, 0.25, np.inf, -np.inf, np.nan]])
    x = x.astype(dtype)
    _same(lambda lib: lib.digamma(lib.from_numpy(x.copy())), rtol=2e-5 if dtype == np.float32 else 1e-9)
    _same(lambda lib: lib.from_numpy(x.copy()).digamma_(), rtol=2e-5 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("n", [3, 300])  # NumPy's scalar path and the chunked constant-block path
@pytest.mark.parametrize("bound", [2 ** 63, 2 ** 64 - 1, -(2 ** 63) - 1])
def test_clamp_with_an_int_past_int64(n, bound):
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    _same(lambda lib: lib.from_numpy(x.copy()).clamp_min(bound))
    _same(lambda lib: lib.from_numpy(x.copy()).clamp(max=bound))


@pytest.mark.parametrize("device_type", ["cpu", "ipu", "xpu", "hip", "mps", "hpu", "meta", "vulkan", "lazy", "foo",
                                         "privateuseone", "xla", "mtia"])
def test_autocast_dtype_table(device_type):
    _same(lambda lib: lib.get_autocast_dtype(device_type))
    _same(lambda lib: lib.is_autocast_enabled(device_type))
    if device_type not in ("cuda", "xla", "privateuseone", "xpu", "mps", "hpu", "mtia"):  # those warn or need a device
        _same(lambda lib: lib.autocast(device_type).device)


def test_autocast_dtype_set_on_a_device_type_without_one():
    before = _both(lambda lib: lib.get_autocast_dtype("meta"))
    assert all(k == "exc" for k, _ in before)
    for lib in (torch, tinytorch):
        lib.set_autocast_dtype("meta", lib.float16)
    try:
        _same(lambda lib: lib.get_autocast_dtype("meta"))
    finally:
        for lib in (torch, tinytorch):
            lib.set_autocast_dtype("meta", lib.bfloat16)


@pytest.mark.parametrize("shapes", [((4,), (4,), (2, 4, 4), None), ((3, 5, 4), (3, 5, 3), (2, 4, 3), (2,)),
                                    ((2, 4, 4), (2, 4, 4), (2, 4, 4), None), ((6, 4), (6, 4), (2, 4, 4), (2,)),
                                    ((4, 4), (4, 4), (4, 4), None), ((4, 4), (4, 4), (), None)])
def test_bilinear_leading_dims_and_weight_rank(shapes):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) if s is not None else None for s in shapes]
    grads = []

    def run(lib):
        ts = [lib.from_numpy(a.copy()).requires_grad_() if a is not None else None for a in arrays]
        out = lib.nn.functional.bilinear(*ts)
        out.sum().backward()
        grads.append([t.grad.numpy() for t in ts if t is not None])
        return out
    _same(run, rtol=1e-9, atol=1e-12)
    if len(grads) == 2:
        for gt, go in zip(*grads):
            np.testing.assert_allclose(go, gt, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int64", "complex64", None])
def test_nanmean_dtype(dtype):
    def run(lib):
        x = lib.tensor([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]])
        return lib.nanmean(x, 1, dtype=getattr(lib, dtype) if dtype else None)
    _same(run)


@pytest.mark.parametrize("call", [
    lambda lib, **k: lib.zeros(2, **k), lambda lib, **k: lib.full((2,), 1.0, **k),
    lambda lib, **k: lib.randperm(3, **k), lambda lib, **k: lib.eye(2, **k), lambda lib, **k: lib.arange(3, **k),
    lambda lib, **k: lib.rand(2, **k), lambda lib, **k: lib.randint(0, 5, (2,), **k),
    lambda lib, **k: lib.scalar_tensor(1.0, **k), lambda lib, **k: lib.triu_indices(3, 3, **k),
    lambda lib, **k: lib.hann_window(4, **k), lambda lib, **k: lib.zeros_like(lib.ones(2), **k),
    lambda lib, **k: lib.full_like(lib.ones(2), 3.0, **k), lambda lib, **k: lib.ones(2).new_zeros(3, **k),
    lambda lib, **k: lib.ones(2).new_full((3,), 2.0, **k), lambda lib, **k: lib.empty_strided((2,), (1,), **k),
    lambda lib, **k: lib.linspace(0, 1, 3, **k)])
# (pin_memory=True is not compared: torch pins where a test before registered an accelerator backend in it)
@pytest.mark.parametrize("pin", [None, False, 1, "yes"])
def test_every_factory_reads_pin_memory(call, pin):
    (kt, t), (ko, o) = _both(lambda lib: call(lib, pin_memory=pin))
    assert kt == ko, (t, o)
    if kt == "exc":
        assert type(o) is type(t), (t, o)
    else:
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype) == str(t.dtype)


@pytest.mark.parametrize("shape", [(4, 4), (3, 4, 4), (1, 2, 4, 4), (2, 3, 5, 4)])
@pytest.mark.parametrize("scale", [None, -0.5])
def test_sdpa_with_a_key_near_the_float_maximum(shape, scale):
    """torch's CPU flash kernel (4-D, one head size) and its math path (the rest, q and k each scaled by
    sqrt(|scale|)) overflow at different keys; each call follows the path torch takes."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, k, v = (rng.standard_normal(shape).astype(np.float32) * 1.5 for _ in range(3))
        k.reshape(-1)[0] = 3e38
        _same(lambda lib: lib.nn.functional.scaled_dot_product_attention(
            *(lib.from_numpy(a.copy()) for a in (q, k, v)), scale=scale))


def test_muon_with_an_eps_past_int64():
    """Muon orthogonalises in bfloat16 and clamps the norm at eps: an int eps past int64 is cast to the float."""
    def run(lib):
        lib.manual_seed(0)
        p = lib.nn.Parameter(lib.randn(4, 4))
        opt = lib.optim.Muon([p], eps=2 ** 63)
        p.sum().backward()
        opt.step()
        return p.detach()
    _same(run)
    _same(lambda lib: lib.tensor([1.5, -2.0], dtype=lib.bfloat16).clamp(min=2 ** 63).float())


@pytest.mark.parametrize("special", [np.inf, -np.inf, 1e38])
@pytest.mark.parametrize("where", [0, 1])
def test_bilinear_contracts_input1_with_the_weight_first(special, where):
    """ATen's _trilinear meets input1 with the weight first: that order decides where an inf input gives inf and
    where inf - inf gives NaN."""
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 4, 4)).astype(np.float32) * 1.5 for _ in range(3)]
    arrays[where].reshape(-1)[0] = special
    _same(lambda lib: lib.bilinear(*(lib.from_numpy(a.copy()) for a in arrays)))


def test_range_takes_no_pin_memory():
    (kt, t), (ko, o) = _both(lambda lib: lib.range(0, 3, pin_memory=False))
    assert kt == ko == "exc" and type(o) is type(t) is TypeError and "pin_memory" in str(o)


def test_pin_memory_true_is_refused_without_a_pinned_allocator():
    """tinytorch has no pinned-memory allocator on any device: pin_memory=True raises, as a CPU-only torch does."""
    for call in (lambda: tinytorch.zeros(2, pin_memory=True), lambda: tinytorch.ones(2).new_zeros(3, pin_memory=True),
                 lambda: tinytorch.rand(2, pin_memory=True)):
        with pytest.raises(RuntimeError, match="pin_memory=True requires"):
            call()
