"""The WebGPU device: semantics, allocator, batching, dtype refusals, kernels against torch (cpu), and training.

The op database runs on ``webgpu`` from tests/test_ops.py (values and gradients against torch). This module is
skipped, with one line saying why, where no WebGPU adapter exists; CI installs Mesa's lavapipe so it runs there.
"""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.backends.webgpu import runtime as wg

if not tt.webgpu.is_available():
    pytest.skip(f"WebGPU suite skipped: {wg.unavailable_reason()}", allow_module_level=True)

from conftest import assert_close, mlp_losses_cpu_and, torch  # noqa: E402

DEV = tt.device("webgpu:0")


def test_device_semantics():
    x = tt.ones(2, 3, device="webgpu")
    assert x.device == DEV and str(x.device) == "webgpu:0"
    assert tt.webgpu.device_count() == 1 and isinstance(tt.webgpu.get_device_name(), str)
    assert (x + tt.zeros(2, 3, device="webgpu:0")).device == DEV
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + tt.ones(2, 3)
    assert_close((x * tt.tensor(2.0)).cpu(), torch.full((2, 3), 2.0))  # a 0-dim cpu tensor joins
    with pytest.raises(RuntimeError, match="webgpu device index 1 is out of range"):
        tt.zeros(1, device="webgpu:1")


def test_transfers_views_and_in_place_writes():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = tt.tensor(a)
    for v, ref in ((x.permute(2, 0, 1), a.transpose(2, 0, 1)), (x[:, ::2, 1:], a[:, ::2, 1:]),
                   (x.expand(2, 3, 4, 5), np.broadcast_to(a, (2, 3, 4, 5)))):
        np.testing.assert_array_equal(v.to("webgpu").cpu().numpy(), ref)
    np.testing.assert_array_equal((x.to("webgpu").permute(2, 0, 1) * 1).cpu().numpy(), a.transpose(2, 0, 1))
    y = tt.zeros(4, 5, device="webgpu")
    y[1:3, ::2] = tt.tensor([1.0, 2.0, 3.0])
    y.t()[0].add_(10)
    y[y > 2] = -1.0
    ref = torch.zeros(4, 5)
    ref[1:3, ::2] = torch.tensor([1.0, 2.0, 3.0])
    ref.t()[0].add_(10)
    ref[ref > 2] = -1.0
    assert_close(y.cpu(), ref)
    z = tt.arange(10.0, device="webgpu")
    z[2:] = z[:-2]  # overlapping source and destination in one buffer
    assert_close(z.cpu(), torch.tensor([0.0, 1, 0, 1, 2, 3, 4, 5, 6, 7]))


def test_float64_refused_as_mps_refuses_it():
    msg = "Cannot convert a WebGPU Tensor to float64 dtype as the WebGPU framework doesn't support float64"
    with pytest.raises(TypeError, match=msg):
        tt.ones(3, dtype=tt.float64, device="webgpu")
    with pytest.raises(TypeError, match=msg):
        tt.ones(3, dtype=tt.float64).to("webgpu")
    with pytest.raises(TypeError, match=msg):
        tt.ones(3, device="webgpu").double()
    with pytest.raises(TypeError, match="uint8"):
        tt.ones(3, dtype=tt.uint8, device="webgpu")


def test_int64_indices_are_narrowed_to_int32():
    idx = tt.tensor([2, 0, 1, 2], device="webgpu")
    assert idx.dtype == tt.int64
    src = tt.tensor([10.0, 20.0, 30.0], device="webgpu")
    assert_close(src[idx].cpu(), torch.tensor([30.0, 10.0, 20.0, 30.0]))
    assert_close(src.argmax().cpu(), torch.tensor(2))
    big = tt.tensor([2 ** 31 - 1, -2 ** 31])
    assert_close(big.to("webgpu").cpu(), torch.tensor([2 ** 31 - 1, -2 ** 31]))
    with pytest.raises(RuntimeError, match="outside the int32 range"):
        tt.tensor([2 ** 31]).to("webgpu")


def test_float16_where_the_adapter_has_shader_f16():
    if not wg.device().fp16:
        with pytest.raises(TypeError, match="shader-f16"):
            tt.ones(2, dtype=tt.float16, device="webgpu")
        return
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float16)
    x = tt.tensor(a, device="webgpu")
    assert_close((x * 2 + 1).cpu(), torch.tensor(a) * 2 + 1, "float16")
    assert_close(x.sum(1).cpu(), torch.tensor(a).sum(1), "float16")


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "erf", "gelu", "expm1", "log1p", "asin", "acos",
                                  "erfinv", "sqrt", "rsqrt", "relu", "sign", "round", "isnan", "log10"])
def test_unary_ops_match_torch(name):
    a = np.random.default_rng(1).uniform(-0.99, 0.99, (6, 9)).astype(np.float32)
    a[0, :3] = [np.nan, np.inf, -np.inf]
    a[1, :2] = [0.0, -0.0]
    if name in ("log", "log10", "sqrt", "rsqrt"):
        a = np.abs(a)
    fn = (lambda m: m.nn.functional.gelu) if name == "gelu" else (lambda m: getattr(m, name))
    got = fn(tt)(tt.tensor(a, device="webgpu"))
    # gelu: torch's float64 result, rounded: its vectorized float32 kernel gives nan for +inf on some AVX-512 CPUs
    # (its scalar and float64 paths give inf, as x * Phi(x) does)
    want = fn(torch)(torch.tensor(a, dtype=torch.float64)).float() if name == "gelu" else fn(torch)(torch.tensor(a))
    assert_close(got.cpu(), want, "float32", rtol=2e-6, atol=2e-6, msg=name)


def test_elementwise_kernels_are_rendered_from_the_shared_formulas():
    from tinytorch.backends.webgpu import elementwise
    from tinytorch.kernels import formulas
    from tinytorch.kernels.render import WGSLRenderer
    gelu = formulas.select("gelu", {}, 1, target="wgsl")
    assert gelu is not None and "wgsl" in gelu.targets
    expr = elementwise._unary_spec("gelu", tt.float32, {})[0]
    assert expr == WGSLRenderer().expression(gelu, ["x0"]) and "erf_(" in expr
    assert WGSLRenderer().expression(formulas.BY_NAME["relu"], ["x"]).startswith("select(")


def test_binary_integer_and_bool_ops_match_torch():
    rng = np.random.default_rng(2)
    a, b = rng.integers(-20, 20, (4, 6)).astype(np.int32), rng.integers(1, 7, (4, 6)).astype(np.int32)
    x, y = tt.tensor(a, device="webgpu"), tt.tensor(b, device="webgpu")
    p, q = torch.tensor(a), torch.tensor(b)
    for f in (lambda m, u, v: u + v * 3, lambda m, u, v: u // v, lambda m, u, v: u % v, lambda m, u, v: u ** 2,
              lambda m, u, v: m.maximum(u, v), lambda m, u, v: u & v, lambda m, u, v: u << 2,
              lambda m, u, v: (u > v) | (u == 3), lambda m, u, v: m.where(u > 0, u, v)):
        assert_close(f(tt, x, y).cpu(), f(torch, p, q), "int32")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x // (y * 0)


def test_reductions_match_torch():
    a = np.random.default_rng(3).standard_normal((5, 70, 3)).astype(np.float32)
    a[1, 5, 2] = np.nan
    x, t = tt.tensor(a, device="webgpu"), torch.tensor(a)
    for f in (lambda m, u: u.sum(1), lambda m, u: u.mean((0, 2)), lambda m, u: u.amax(1),
              lambda m, u: u.min(1).values, lambda m, u: u.max(1).indices, lambda m, u: u.argmin(0),
              lambda m, u: u.sum(), lambda m, u: (u > 0).any(1), lambda m, u: (u > -3).all(),
              lambda m, u: u.transpose(0, 2).sum(-1), lambda m, u: u.cumsum(1), lambda m, u: u.sort(1).indices):
        assert_close(f(tt, x).cpu(), f(torch, t), "float32", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((70, 130), (130, 65)), ((2, 1, 33, 17), (5, 17, 9)),
                                   ((64, 64), (64, 64)), ((1, 300), (300, 1))])
def test_tiled_matmul_matches_torch(sa, sb):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    got = tt.tensor(a, device="webgpu") @ tt.tensor(b, device="webgpu")
    assert_close(got.cpu(), torch.tensor(a) @ torch.tensor(b), "float32", rtol=1e-4, atol=1e-4)
    # transposed views go to the kernel through their strides
    at = tt.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device="webgpu").transpose(-1, -2)
    assert_close((at @ tt.tensor(b, device="webgpu")).cpu(), torch.tensor(a) @ torch.tensor(b), "float32",
                 rtol=1e-4, atol=1e-4)
    bias = rng.standard_normal(sb[-1]).astype(np.float32)
    a2, b2 = a.reshape((-1,) + sa[-2:])[0], b.reshape((-1,) + sb[-2:])[0]  # first matrices of the batches
    got = tt.addmm(tt.tensor(bias, device="webgpu"), tt.tensor(a2, device="webgpu"), tt.tensor(b2, device="webgpu"))
    want = torch.addmm(torch.tensor(bias), torch.tensor(a2), torch.tensor(b2))
    assert_close(got.cpu(), want, "float32", rtol=1e-4, atol=1e-4)


def test_kernels_are_batched_into_few_submits():
    dev = wg.device()
    x = tt.ones(1000, device="webgpu")
    tt.webgpu.synchronize()
    before = dev.submits
    for _ in range(50):
        x = x * 1.01 + 0.5
    assert dev.submits == before  # recorded, not yet submitted
    assert dev.pending >= 100
    got = x.cpu()  # the host read submits once and waits
    assert dev.submits == before + 1 and dev.pending == 0
    ref = torch.ones(1000)
    for _ in range(50):
        ref = ref * 1.01 + 0.5
    assert_close(got, ref, "float32", rtol=1e-5)


def test_allocator_reuses_freed_blocks_and_reports_memory():
    tt.webgpu.empty_cache()
    base = tt.webgpu.memory_allocated()
    x = tt.empty(10000, device="webgpu")
    assert tt.webgpu.memory_allocated() == base + 40448  # 40000 bytes rounded up to 512
    reserved = tt.webgpu.memory_reserved()
    mem = x._storage.buf.mem
    del x
    assert tt.webgpu.memory_allocated() == base
    y = tt.empty(10000, device="webgpu")
    assert tt.webgpu.memory_reserved() == reserved  # the freed block came back, no new buffer
    assert y._storage.buf.mem is mem
    assert tt.webgpu.max_memory_allocated() >= base + 40448
    tt.webgpu.reset_peak_memory_stats()
    assert tt.webgpu.max_memory_allocated() == tt.webgpu.memory_allocated()
    del y
    tt.webgpu.empty_cache()
    assert tt.webgpu.memory_reserved() < reserved


def test_mlp_trains_to_the_cpu_losses_with_adam():
    cpu, dev = mlp_losses_cpu_and("webgpu", steps=6)
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-6)
    assert dev[-1] < dev[0]


def test_mlp_trains_with_sgd_and_softmax_cross_entropy():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((16, 8)).astype(np.float32), rng.integers(0, 3, 16)
    out = []
    for d in ("cpu", "webgpu"):
        tt.manual_seed(1)
        m = tt.nn.Sequential(tt.nn.Linear(8, 12), tt.nn.ReLU(), tt.nn.Linear(12, 3)).to(d)
        opt = tt.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        xs, ys = tt.tensor(x, device=d), tt.tensor(y, device=d)
        losses = []
        for _ in range(5):
            logits = m(xs)
            loss = tt.nn.functional.cross_entropy(logits, ys) + 0.0 * tt.softmax(logits, 1).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        out.append(losses)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_small_cnn_trains_to_the_cpu_losses():
    """Convolution (im2col / col2im kernels), max pooling and its backward, Adam: the same losses as on cpu."""
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((8, 1, 12, 12)).astype(np.float32), rng.integers(0, 5, 8)
    out = []
    for d in ("cpu", "webgpu"):
        tt.manual_seed(2)
        m = tt.nn.Sequential(tt.nn.Conv2d(1, 4, 3, padding=1), tt.nn.ReLU(), tt.nn.MaxPool2d(2),
                             tt.nn.Conv2d(4, 6, 3, stride=2), tt.nn.ReLU(), tt.nn.MaxPool2d(2, stride=1),
                             tt.nn.Flatten(), tt.nn.Linear(6, 5)).to(d)
        opt = tt.optim.Adam(m.parameters(), lr=0.01)
        xs, ys = tt.tensor(x, device=d), tt.tensor(y, device=d)
        losses = []
        for _ in range(3):
            loss = tt.nn.functional.cross_entropy(m(xs), ys)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        out.append(losses)
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_compiled_elementwise_runs_fuse_into_wgsl_kernels():
    """tinytorch.compile fuses a chain of elementwise ops into one generated WGSL kernel (the formulas rendered by
    WGSLRenderer) whose results equal the eager kernels' within a few ulps (WGSL cannot forbid a driver to contract
    a multiply and an add, which it may do inside the fused kernel) and torch's."""
    import tinytorch.compiler.graph as G

    def chain(mod, x, y, m, s):
        a = (x * y + x) / 0.9
        b = mod.relu(a - y) * m
        c = mod.maximum(b, -a).neg().abs() + s
        d = mod.minimum(c.sqrt(), c.rsqrt()).reciprocal()
        return b, d * 2

    def f(x, y, m, s):
        return chain(tt, x, y, m, s)
    g = tt.Generator().manual_seed(0)
    xs = [tt.randn(64, 33, generator=g) for _ in range(3)]
    x, y, m = [v.to("webgpu") for v in xs]
    s = tt.tensor(0.25).to("webgpu")
    cf = tt.compile(f)
    for _ in range(2):
        got, want = cf(x, y, m, s), f(x, y, m, s)
    ref = chain(torch, *[torch.tensor(v.numpy()) for v in xs], torch.tensor(0.25))
    for a, b, r in zip(got, want, ref):
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-6, atol=1e-7)
        assert_close(a.cpu(), r, "float32", rtol=1e-5, atol=1e-6)
    plan = [p for p in G._CACHE.values()][-1]
    assert plan.fused >= 1 and plan.fused_nodes >= 8, plan.describe()
