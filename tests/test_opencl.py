"""The OpenCL device: semantics, allocator, dtype capability errors and training on it.

The op database runs on ``opencl`` from tests/test_ops.py (values and gradients against torch). This module is
skipped, with one line saying why, where no OpenCL platform exists; CI installs PoCL so it runs there.
"""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.backends.opencl import reduce as ocl_reduce
from tinytorch.backends.opencl import runtime as ocl

if not tt.opencl.is_available():
    pytest.skip(f"OpenCL suite skipped: {ocl.unavailable_reason()}", allow_module_level=True)

from conftest import assert_close, mlp_losses_cpu_and, torch  # noqa: E402

DEV = tt.device("opencl:0")


def test_device_semantics():
    x = tt.ones(2, 3, device="opencl")
    assert x.device == DEV and str(x.device) == "opencl:0"
    assert tt.opencl.device_count() >= 1 and isinstance(tt.opencl.get_device_name(), str)
    y = tt.zeros(2, 3, device="opencl:0")
    assert (x + y).device == DEV  # "opencl" and "opencl:0" are one device
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + tt.ones(2, 3)
    # a 0-dim cpu tensor joins an opencl op, as in PyTorch
    assert_close((x * tt.tensor(2.0)).cpu(), torch.full((2, 3), 2.0))
    n = tt.opencl.device_count()
    with pytest.raises(RuntimeError, match=f"opencl device index {n} is out of range"):
        tt.zeros(1, device=f"opencl:{n}")


def test_non_contiguous_transfers_round_trip():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = tt.tensor(a)
    for v, ref in ((x.permute(2, 0, 1), a.transpose(2, 0, 1)), (x[:, ::2, 1:], a[:, ::2, 1:]),
                   (x.transpose(0, 1)[1], a.transpose(1, 0, 2)[1]), (x.expand(2, 3, 4, 5), np.broadcast_to(a, (2, 3, 4, 5)))):
        d = v.to("opencl")
        assert d.shape == v.shape
        np.testing.assert_array_equal(d.cpu().numpy(), ref)
        # views of an opencl tensor read through their strides in kernels (no copy to contiguous first)
        np.testing.assert_array_equal((x.to("opencl").permute(2, 0, 1) * 1).cpu().numpy(), a.transpose(2, 0, 1))
    dense_permuted = tt.randn(4, 5).t().to("opencl")
    assert dense_permuted.stride() == (1, 5)  # the dense layout survives the copy (preserve_format)


def test_in_place_writes_through_views():
    x = tt.zeros(4, 5, device="opencl")
    x[1:3, ::2] = tt.tensor([1.0, 2.0, 3.0])
    x.t()[0].add_(10)
    x[x > 2] = -1.0
    ref = torch.zeros(4, 5)
    ref[1:3, ::2] = torch.tensor([1.0, 2.0, 3.0])
    ref.t()[0].add_(10)
    ref[ref > 2] = -1.0
    assert_close(x.cpu(), ref)
    y = tt.arange(10.0, device="opencl")
    y[1:] = y[:-1].clone()
    y[2:] = y[:-2]  # overlapping source and destination in one storage
    z = torch.arange(10.0)
    z[1:] = z[:-1].clone()
    z[2:] = z[:-2].clone()
    assert_close(y.cpu(), z)


@pytest.mark.parametrize("name", ["float16", "float64", "bfloat16"])
def test_dtype_capabilities(name):
    dt = getattr(tt, name)
    dev = tt.device("opencl").type and ocl._devices()[0].get()
    supported = {"float16": dev.fp16, "float64": dev.fp64, "bfloat16": False}[name]
    if supported:
        x = tt.ones(3, dtype=dt, device="opencl")
        assert_close((x + x).cpu(), torch.full((3,), 2.0, dtype=getattr(torch, name)), name)
        return
    with pytest.raises(TypeError, match=f"does not support {name}|{name} is not supported"):
        tt.ones(3, dtype=dt, device="opencl")
    with pytest.raises(TypeError, match=name):
        tt.ones(3, device="opencl").to(dt)


def test_kernel_build_failure_names_the_kernel_and_shows_the_log():
    dev = ocl._devices()[0].get()
    with pytest.raises(RuntimeError, match=r"building kernel 'broken_kernel' failed(.|\n)*error"):
        dev.kernel(("broken_kernel",), lambda: "__kernel void k(__global float* o) { o[0] = undefined_name; }")


def test_mlp_trains_identically_on_opencl_and_memory_returns_to_baseline():
    seen = {}

    def on_step(step):
        if step == 1:
            seen["allocated"], seen["reserved"] = tt.opencl.memory_allocated(), tt.opencl.memory_reserved()
        elif step > 1:
            # steady state: every step frees what it allocated, and freed blocks are reused, not re-reserved
            assert tt.opencl.memory_allocated() <= seen["allocated"]
            assert tt.opencl.memory_reserved() == seen["reserved"]
    import gc
    gc.collect()  # what earlier tests left to the cycle collector is not this test's to count
    before = tt.opencl.memory_allocated()
    cpu, dev = mlp_losses_cpu_and("opencl", steps=6, on_step=on_step)
    # the model and optimizer state are gone with the helper's frame: all their memory is back in the cache
    assert tt.opencl.memory_allocated() == before and tt.opencl.max_memory_allocated() > before
    np.testing.assert_allclose(cpu, dev, rtol=1e-5)
    assert dev[-1] < dev[0]


def test_freed_tensors_return_to_the_caching_allocator():
    tt.opencl.synchronize()
    before = tt.opencl.memory_allocated()
    x = tt.randn(1000, 100, device="opencl")
    assert tt.opencl.memory_allocated() >= before + 400000
    reserved = tt.opencl.memory_reserved()
    del x
    assert tt.opencl.memory_allocated() == before
    y = tt.randn(1000, 100, device="opencl")  # same size: the cached block is reused
    assert tt.opencl.memory_reserved() == reserved
    del y
    tt.opencl.empty_cache()
    assert tt.opencl.memory_reserved() < reserved


def test_conv_net_step_matches_cpu():
    tt.manual_seed(1)
    nn = tt.nn
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    x = tt.randn(5, 1, 8, 8)
    y = tt.tensor([0, 1, 2, 1, 0])
    grads = {}
    for d in ("cpu", "opencl"):
        net.to(d)
        net.zero_grad()
        loss = nn.functional.cross_entropy(net(x.to(d)), y.to(d))
        loss.backward()
        grads[d] = [p.grad.cpu().numpy() for p in net.parameters()] + [loss.item()]
    for a, b in zip(grads["cpu"], grads["opencl"]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_matmul_against_numpy_for_tile_edges():
    rng = np.random.default_rng(0)
    # both kernels: the tiled one (any N) and the vector one (N % 16 == 0), with ragged M
    for m, k, n in ((1, 1, 1), (33, 17, 65), (64, 64, 64), (5, 100, 3), (70, 1, 40), (33, 17, 64), (3, 9, 16)):
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        got = (tt.tensor(a, device="opencl") @ tt.tensor(b, device="opencl")).cpu().numpy()
        np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    a = rng.standard_normal((2, 1, 7, 9)).astype(np.float32)
    for n in (4, 32):
        b = rng.standard_normal((3, n, 9)).astype(np.float32).transpose(0, 2, 1)  # batched, broadcast, strided B
        got = (tt.tensor(a).to("opencl") @ tt.tensor(b.transpose(0, 2, 1)).to("opencl").transpose(-1, -2)).cpu()
        np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,dim,keepdim", [((1 << 17,), None, False), ((3, 70000), 1, True),
                                               ((70000, 3), 0, False), ((2, 300, 400), (1, 2), True)])
def test_reductions_of_many_elements_into_few_outputs(shape, dim, keepdim):
    """Few outputs over many elements are split over many work-groups and combined by a second pass
    (``reduce.SPLIT_MIN``): sum, amax, amin, all, any and an integer sum against torch."""
    reduced = [shape[d] for d in ((dim,) if isinstance(dim, int) else dim or range(len(shape)))]
    assert np.prod(reduced) >= ocl_reduce.SPLIT_MIN  # the split path
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x, t = tt.tensor(a, device="opencl"), torch.tensor(a)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    for fn in ("sum", "amax", "amin"):
        assert_close(getattr(x, fn)(**kw).cpu(), getattr(t, fn)(**kw), "float32", 1e-4, 1e-3, msg=fn)
    for fn in ("all", "any"):
        assert_close(getattr(x > -3, fn)(**kw).cpu(), getattr(t > -3, fn)(**kw), "bool", msg=fn)
    n = tt.arange(int(np.prod(shape)), device="opencl", dtype=tt.int32).reshape(shape)
    m = torch.arange(int(np.prod(shape)), dtype=torch.int32).reshape(shape)
    assert_close(n.sum(**kw).cpu(), m.sum(**kw), "int64")


@pytest.mark.parametrize("opt_name,kw", [("Adam", {}), ("AdamW", {"weight_decay": 0.1}),
                                         ("Adam", {"amsgrad": True, "maximize": True, "weight_decay": 0.01})])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_on_opencl_is_one_kernel_per_parameter_and_compiles_to_one_graph(opt_name, kw, dtype):
    """Adam on opencl is the backend's fused kernel (the step counts stay on the cpu, bumped on the host), with
    the cpu's values; a compiled step is then one graph with no break, replayed."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 6)), rng.integers(0, 3, 16)
    dt = getattr(tt, dtype)
    runs = {}
    for dev, compiled in (("cpu", False), ("opencl", False), ("opencl", True)):
        tt.manual_seed(0)
        m = tt.nn.Sequential(tt.nn.Linear(6, 8), tt.nn.Tanh(), tt.nn.Linear(8, 3)).to(dt).to(dev)
        opt = getattr(tt.optim, opt_name)(m.parameters(), lr=0.05, **kw)
        xs, ys = tt.tensor(x, dtype=dt, device=dev), tt.tensor(y, device=dev)

        def step():
            opt.zero_grad()
            loss = tt.nn.functional.cross_entropy(m(xs), ys)
            loss.backward()
            opt.step()
            return loss
        fn = tt.compile(step) if compiled else step
        losses = [fn().item() for _ in range(8)]
        runs[dev, compiled] = losses, [p.detach().cpu().numpy() for p in m.parameters()], fn
        assert all(st["step"].device.type == "cpu" and st["step"].item() == 8 for st in opt.state.values())
    tol = 1e-5 if dtype == "float32" else 1e-12
    for key in (("opencl", False), ("opencl", True)):
        np.testing.assert_allclose(runs[key][0], runs["cpu", False][0], rtol=tol)
        for a, b in zip(runs[key][1], runs["cpu", False][1]):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    st = runs["opencl", True][2].stats()
    assert not st["graph_breaks"] and st["replays"] >= 5, st
