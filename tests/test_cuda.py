"""The ``cuda`` device. Without a GPU: what it answers where it is unavailable, its kernels compiled by NVRTC for
sm_90 (the CUDA C prelude over the opencl backend's kernels), the cuBLAS call plan checked against a column-major
GEMM written in NumPy, the allocator's size classes and the argument packing. With a GPU (marked ``cuda``,
skipped elsewhere with the reason): training, GEMMs, memory statistics, events and the compiler on the device
(the op database runs on it from tests/test_ops.py)."""
import ctypes
import os
import sys

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, mlp_losses_cpu_and, torch
from tinytorch.backends.cuda import blas
from tinytorch.backends.cuda import runtime as rt


def test_unavailable_device_answers_as_a_cpu_only_torch():
    """Where the device is unavailable, queries answer as a CPU-only PyTorch build and uses raise torch's
    AssertionError (also a RuntimeError) naming what is missing; where it is available, they describe it."""
    why = rt.unavailable_reason()
    if why is None:
        assert tt.cuda.is_available() and tt.cuda.device_count() >= 1
        assert tt.ones(2).cuda().device.type == "cuda"
        return
    assert not tt.cuda.is_available() and tt.cuda.device_count() == 0
    assert tt.cuda.memory_allocated() == 0 and tt.cuda.memory_reserved() == 0 and not tt.cuda.is_bf16_supported()
    tt.cuda.empty_cache()
    for call in (lambda: tt.ones(1).cuda(), lambda: tt.zeros(1, device="cuda"), tt.cuda.synchronize,
                 tt.cuda.get_device_name, lambda: tt.nn.Linear(1, 1).cuda()):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled") as e:
            call()
        assert why in str(e.value) and isinstance(e.value, RuntimeError)
    assert tt.accelerator.current_accelerator() is None or tt.accelerator.current_accelerator().type != "cuda"


# every construct of the CUDA C prelude: NDRange ids in three dims, local memory, barriers, half and bfloat16
# math, the IEEE constants, by-value parameter structs
PRELUDE_KERNELS = [
    "typedef struct { long v[4]; } Params;\n"
    "__kernel void k(__global float* out, __global const float* a, Params P) {\n"
    " long g = get_global_id(0) + get_global_id(1) * get_global_size(0) + get_global_id(2);\n"
    " int lid = get_local_id(0); __local float sh[64]; sh[lid] = a[g]; barrier(CLK_LOCAL_MEM_FENCE);\n"
    " out[g] = sh[63 - lid] + (float)get_group_id(0) + (float)get_num_groups(0) + P.v[1] + get_local_size(0);\n}\n",
    "#define CT half\n__kernel void k(__global half* out, __global const half* a, long n) {\n"
    " long i = get_global_id(0); if (i >= n) return; CT x0 = a[i];\n"
    " out[i] = isnan(x0) ? x0 : exp(x0) * (CT)2 + tanh(x0) - sqrt(fabs(x0)) + (CT)INFINITY * (CT)0;\n}\n",
    "__kernel void k(__global bfloat16* out, __global const bfloat16* a, long n) {\n"
    " long i = get_global_id(0); if (i < n) out[i] = isinf(a[i]) ? (bfloat16)NAN : erf(a[i]) + log1p(a[i]);\n}\n",
    "__kernel void k(__global double* out, __global const uchar* m, __global const long* idx, ulong n) {\n"
    " long i = get_global_id(0); if (i < n) out[idx[i]] = m[i] ? rint(out[i]) : -INFINITY;\n}\n",
]


@pytest.mark.parametrize("src", PRELUDE_KERNELS, ids=["ndrange-local", "half", "bfloat16", "double-uchar-long"])
def test_prelude_kernels_compile_for_sm90(src):
    pytest.importorskip("cuda.bindings.nvrtc")
    image, _ = rt.compile_source(src, 90)
    assert image[:4] == b"\x7fELF"  # a cubin: SASS for sm_90, no PTX left to the driver


def test_compiling_leaves_the_interpreters_bytes_alone():
    """NVRTC writes its (here empty, one-byte) log into the buffer it is given: a ``bytes`` buffer would be
    CPython's shared ``b" "`` and break every later use of it (pickling among them)."""
    pytest.importorskip("cuda.bindings.nvrtc")
    rt.compile_source("__kernel void k(__global float* o) { o[0] = 1; }", 90)
    assert b" " * 1 == bytes([32]) and pickle_roundtrip_ok()


def pickle_roundtrip_ok():
    import io
    import pickle
    buf = io.BytesIO()
    pickle.dump({"a": [1, 2.5, "x y"]}, buf)
    return pickle.loads(buf.getvalue()) == {"a": [1, 2.5, "x y"]}


def test_nvrtc_errors_name_the_kernel_and_the_line():
    pytest.importorskip("cuda.bindings.nvrtc")
    with pytest.raises(RuntimeError, match=r"NVRTC could not compile(.|\n)*identifier \"vload4\" is undefined"):
        rt.compile_source("__kernel void k(__global float* o) { o[0] = vload4(0, o).x; }", 90)


def test_every_kernel_of_a_training_step_compiles_for_sm90():
    """The kernels the check's training steps (MLP SGD, LeNet Adam, the GPT with AdamW; two of them compiled),
    the compiler's fused kernels and a few ops in float64 and int64 build on opencl, each compiled by NVRTC as the cuda device compiles it. The
    op database's kernels are compiled by ``benchmarks/gpu_check.py --compile-only`` in CI."""
    pytest.importorskip("cuda.bindings.nvrtc")
    if not tt.opencl.is_available():
        pytest.skip(f"the kernels are recorded on opencl: {tt.backends.opencl.unavailable_reason()}")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
    import gpu_check

    def ops(lib):
        for dt in (lib.float64, lib.int64):
            x = lib.arange(12, dtype=dt, device="opencl").reshape(3, 4)
            (x.cumsum(0) + x.sum(1, keepdim=True) * x.amax(0)).sort(1)
            x[x > 3], x.gather(1, lib.zeros(3, 1, dtype=lib.int64, device="opencl")), x.T @ x
    sources = gpu_check.record_kernels(gpu_check.training, gpu_check.fused, ops)
    n, failed = gpu_check.compile_all(sources)
    assert n >= 50 and not failed, failed[:3]
    assert any(k[0] == "compiled" for k in sources)  # the compiler's fused kernels among them
    skipped = [k for k in sources if not tt.backends.cuda.backend.runs_on_cuda(k)]
    assert skipped and all(k[0].startswith("matmul") for k in skipped)  # the float GEMMs: cuBLAS calls there


class _View:
    """A strided window of a flat NumPy buffer, standing for a device array in the cuBLAS plan."""

    def __init__(self, flat, shape, strides, offset=0):
        self.flat, self.shape, self.strides, self.offset = flat, tuple(shape), tuple(strides), offset

    def numpy(self):
        return np.lib.stride_tricks.as_strided(self.flat[self.offset:], self.shape,
                                               [s * self.flat.itemsize for s in self.strides])


def _column_major_gemm(args, first, second, batch):
    """``cublasGemmStridedBatchedEx`` in NumPy (column-major, alpha 1, beta 0), on the buffers of ``first`` and
    ``second`` (its A and B)."""
    ta, tb, m, n, k, lda, sa, ldb, sb, ldc, sc = args

    def mat(v, trans, rows, cols, ld, stride, i):
        r, c = (cols, rows) if trans else (rows, cols)  # the stored matrix
        flat = v.flat[v.offset + i * stride:]
        stored = np.array([[flat[x + y * ld] for y in range(c)] for x in range(r)])
        return stored.T if trans else stored
    out = np.zeros(batch * sc)
    for i in range(batch):
        c = mat(first, ta, m, k, lda, sa, i) @ mat(second, tb, k, n, ldb, sb, i)
        for x in range(m):
            for y in range(n):
                out[i * sc + x + y * ldc] = c[x, y]
    return out


@pytest.mark.parametrize("case", ["plain", "a-transposed", "b-transposed", "both-transposed", "batched",
                                  "broadcast-b", "row-vector", "column-b", "sliced-rows", "gapped-batch"])
def test_cublas_plan_computes_row_major_matmul(case):
    """The (op, leading dimension, batch stride) plan for each layout, run through a column-major GEMM written in
    NumPy, gives ``a @ b``; layouts cuBLAS cannot read are copied (and then also right)."""
    rng = np.random.default_rng(0)
    M, K, N, B = 3, 4, 5, 2

    def view(shape, kind):
        rows, cols = shape[-2], shape[-1]
        nb = int(np.prod(shape[:-2]))
        flat = rng.standard_normal(nb * (rows + 2) * (cols + 3) + 7)
        outer = [rows * cols * int(np.prod(shape[i + 1:-2])) for i in range(len(shape) - 2)]
        if kind == "t":  # columns contiguous
            return _View(flat, shape, outer + [1, rows], 1)
        if kind == "pad":  # rows with a gap after each
            return _View(flat, shape, [rows * (cols + 3)] * (len(shape) - 2) + [cols + 3, 1], 2)
        if kind == "gap":  # two batch dims that one stride cannot walk (a gap after each outer entry)
            return _View(flat, shape, [rows * cols * shape[-3] + 5, rows * cols, cols, 1], 0)
        return _View(flat, shape, outer + [cols, 1], 0)
    a_shape, b_shape, ka, kb = {
        "plain": ((M, K), (K, N), "c", "c"), "a-transposed": ((M, K), (K, N), "t", "c"),
        "b-transposed": ((M, K), (K, N), "c", "t"), "both-transposed": ((M, K), (K, N), "t", "t"),
        "batched": ((B, M, K), (B, K, N), "c", "t"), "broadcast-b": ((B, M, K), (K, N), "c", "c"),
        "row-vector": ((1, K), (K, N), "c", "c"), "column-b": ((M, K), (K, 1), "c", "t"),
        "sliced-rows": ((M, K), (K, N), "pad", "pad"), "gapped-batch": ((B, B, M, K), (B, B, K, N), "gap", "c")}[case]
    a, b = view(a_shape, ka), view(b_shape, kb)
    expected = a.numpy() @ b.numpy()
    batch = expected.shape[:-2]
    ea = _View(a.flat, batch + a.shape[-2:], [0] * (len(batch) - len(a.shape) + 2) + list(a.strides), a.offset)
    eb = _View(b.flat, batch + b.shape[-2:], [0] * (len(batch) - len(b.shape) + 2) + list(b.strides), b.offset)
    args, copy_a, copy_b = blas.plan(ea, eb, a.shape[-2], a.shape[-1], b.shape[-1])
    contiguous = lambda v: _View(np.ascontiguousarray(v.numpy()).ravel(), v.shape,  # noqa: E731
                                 [int(np.prod(v.shape[i + 1:])) for i in range(len(v.shape))], 0)
    ea, eb = (contiguous(ea) if copy_a else ea), (contiguous(eb) if copy_b else eb)
    assert copy_a == (case == "gapped-batch") and not copy_b
    got = _column_major_gemm(args, eb, ea, int(np.prod(batch)))
    np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-12)


def test_caching_allocator_size_classes():
    """PyTorch's rounding: 512-byte multiples under 1 MiB, 2 MiB multiples above, so freed blocks fit later
    requests of similar size."""
    assert [rt.round_size(n) for n in (1, 512, 513, (1 << 20) - 1)] == [512, 512, 1024, 1 << 20]
    assert [rt.round_size(n) for n in (1 << 20, (2 << 20) + 1, 5 << 20)] == [2 << 20, 4 << 20, 6 << 20]


def test_kernel_arguments_are_packed_as_the_kernel_reads_them():
    """Device pointers as 8 bytes, NumPy scalars as their C type, parameter structs by value; a second launch of
    the kernel rewrites the same slots."""
    k = rt.Kernel(None, "k")
    for scale in (1, 2):
        params = np.arange(4, dtype=np.int64) * scale
        ptrs = k.pack([0x7F0000001000 * scale, np.float32(1.5 * scale), np.int64(-3 * scale), np.uint8(scale),
                       params, np.float16(0.5 * scale)])
        vals = [ctypes.c_uint64.from_address(int(ptrs[0])).value, ctypes.c_float.from_address(int(ptrs[1])).value,
                ctypes.c_int64.from_address(int(ptrs[2])).value, ctypes.c_uint8.from_address(int(ptrs[3])).value,
                list((ctypes.c_int64 * 4).from_address(int(ptrs[4]))),
                float(np.frombuffer(ctypes.string_at(int(ptrs[5]), 2), np.float16)[0])]
        assert vals == [0x7F0000001000 * scale, 1.5 * scale, -3 * scale, scale, [0, scale, 2 * scale, 3 * scale],
                        0.5 * scale]
    with pytest.raises(TypeError, match="cannot be passed"):
        rt.Kernel(None, "k").pack([1.5])


# ---- on a GPU ----
@pytest.mark.cuda
def test_training_on_cuda_matches_cpu():
    cpu, dev = mlp_losses_cpu_and("cuda", steps=5)
    np.testing.assert_allclose(dev, cpu, rtol=1e-4)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_matmul_layouts_on_cuda_match_torch(dtype):
    """cuBLAS (floats) and the generated kernel (integers) over transposed, batched and broadcast operands."""
    rng = np.random.default_rng(0)
    tol = {"float16": 2e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
    for sa, sb, ta, tb in (((5, 7), (7, 3), False, False), ((5, 7), (3, 7), False, True),
                           ((7, 5), (7, 3), True, False), ((2, 4, 5, 7), (7, 6), False, False),
                           ((2, 5, 7), (2, 6, 7), False, True), ((7,), (7, 3), False, False)):
        a = rng.integers(-3, 4, sa) if dtype == "int64" else rng.standard_normal(sa)
        b = rng.integers(-3, 4, sb) if dtype == "int64" else rng.standard_normal(sb)
        x = tt.tensor(a).to(getattr(tt, dtype)).cuda()
        y = tt.tensor(b).to(getattr(tt, dtype)).cuda()
        p, q = torch.tensor(a).to(getattr(torch, dtype)), torch.tensor(b).to(getattr(torch, dtype))
        x, p = (x.mT, p.mT) if ta else (x, p)
        y, q = (y.mT, q.mT) if tb else (y, q)
        got, expected = (x @ y).cpu(), p.float() @ q.float() if dtype in ("float16", "bfloat16") else p @ q
        np.testing.assert_allclose(got.float().numpy(), expected.float().numpy(), rtol=tol, atol=tol)
    w, bias = tt.randn(6, 7).cuda(), tt.randn(6).cuda()
    xin = tt.randn(3, 4, 7).cuda()
    assert_close(tt.nn.functional.linear(xin, w, bias).cpu(),
                 torch.nn.functional.linear(torch.tensor(xin.cpu().numpy()), torch.tensor(w.cpu().numpy()),
                                            torch.tensor(bias.cpu().numpy())), "float32", 1e-5, 1e-5)


@pytest.mark.cuda
def test_memory_statistics_events_and_streams():
    tt.cuda.synchronize()
    base = tt.cuda.memory_allocated()
    x = tt.empty(1 << 20, device="cuda")
    assert tt.cuda.memory_allocated() - base == 4 << 20 and tt.cuda.max_memory_allocated() >= base + (4 << 20)
    del x
    assert tt.cuda.memory_allocated() == base and tt.cuda.memory_reserved() >= 4 << 20
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() <= base + (2 << 20) * 64
    start, end = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True)
    start.record()
    y = tt.ones(1 << 20, device="cuda") * 2
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0 and float(y.sum()) == 2 * (1 << 20)
    assert tt.cuda.get_device_capability() >= (7, 0) and tt.cuda.get_device_name()
    free, total = tt.cuda.mem_get_info()
    assert 0 < free <= total == tt.cuda.get_device_properties().total_memory
    with tt.cuda.stream(tt.cuda.Stream()):
        assert float((tt.ones(3, device="cuda") + 1).sum()) == 6.0
    last = tt.cuda.device_count() - 1
    with tt.cuda.device(last):  # a bare "cuda" means the current device
        assert tt.cuda.current_device() == last and tt.ones(1, device="cuda").device == tt.device("cuda", last)
    assert tt.cuda.current_device() == 0


@pytest.mark.cuda
def test_autocast_and_grad_scaler_on_cuda():
    """torch.autocast("cuda") runs matmuls in float16 (cuBLAS, float32 accumulation), GradScaler scales and steps."""
    model = tt.nn.Linear(16, 4).cuda()
    opt = tt.optim.SGD(model.parameters(), lr=0.1)
    scaler = tt.amp.GradScaler("cuda")
    x = tt.randn(8, 16).cuda()
    with tt.autocast("cuda"):
        out = model(x)
        loss = out.float().pow(2).mean()
    assert out.dtype is tt.float16 and scaler.is_enabled()
    before = model.weight.detach().cpu().clone()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert not tt.equal(model.weight.detach().cpu(), before)


@pytest.mark.cuda
def test_compiled_step_on_cuda_matches_eager():
    """tinytorch.compile on the cuda device: fused kernels rendered as CUDA, the same losses as eager."""
    def run(compiled):
        tt.manual_seed(0)
        model = tt.nn.Sequential(tt.nn.Linear(32, 64), tt.nn.ReLU(), tt.nn.Linear(64, 4)).cuda()
        opt = tt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = tt.randn(16, 32).cuda(), tt.randint(0, 4, (16,)).cuda()

        def step():
            loss = tt.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        fn = tt.compile(step) if compiled else step
        return [float(fn()) for _ in range(4)]
    np.testing.assert_allclose(run(True), run(False), rtol=1e-5)


class _FakeDriver:
    """The driver calls the allocator and CUDA graphs make, answering as the driver does, and logging them."""

    class CUstreamCaptureMode:
        CU_STREAM_CAPTURE_MODE_RELAXED = 1

    def __init__(self):
        self.next, self.log = 0x10000, []

    def cuMemAlloc(self, n):
        self.next += 1 << 24
        return (0, self.next)

    def __getattr__(self, name):
        def call(*args):
            self.log.append(name)
            return (0, f"{name}-result") if name in ("cuStreamEndCapture", "cuGraphInstantiate") else (0,)
        return call


@pytest.fixture
def fake_device(monkeypatch):
    """A ``runtime._Device`` over the fake driver (no GPU needed), used by ``graphs.CUDAGraph``."""
    import threading
    from tinytorch.backends.cuda import graphs
    drv = _FakeDriver()
    monkeypatch.setattr(rt, "cu", drv)
    d = rt._Device.__new__(rt._Device)
    d.index, d.name, d.stream, d.ctx = 0, "fake", "stream", "ctx"
    d._local = threading.local()
    d._local.on = True
    d.pool, d.allocated, d.max_allocated, d.reserved, d.max_reserved = {}, 0, 0, 0, 0
    d.capturing, d.graph_blocks = None, {}
    monkeypatch.setattr(graphs, "_device", lambda index: d)
    return d, drv


def test_cuda_graph_private_pool(fake_device):
    """Blocks allocated while capturing belong to the graph: freed during the capture they are reused inside it,
    freed after it they return to it, never to the device's pool, until the graph is reset."""
    from tinytorch.backends.cuda.graphs import CUDAGraph, graph
    d, drv = fake_device
    before, _ = d.alloc(1000)
    g = CUDAGraph()
    with graph(g):
        a, _ = d.alloc(1000)
        assert a != before
        d.release(a, 1024)
        b, _ = d.alloc(1000)
        c, _ = d.alloc(5 << 20)
        with pytest.raises(rt.CaptureError, match="not permitted"):
            d.read(np.empty(1), c, 0)
        with pytest.raises(rt.CaptureError):
            d.finish()
    assert b == a and drv.log.count("cuStreamBeginCapture") == 1 and "cuGraphInstantiate" in drv.log
    d.release(before, 1024)
    d.release(b, 1024)
    assert d.pool == {1024: [before]} and g._pool.free == {1024: [b]}
    assert d.alloc(1000)[0] == before  # the device's allocations never get a graph's block
    g.replay()
    assert drv.log[-1] == "cuGraphLaunch"
    g.reset()
    assert d.pool[1024] == [b]  # the graph's free blocks are the device's again ...
    d.release(c, 6 << 20)
    assert d.pool[6 << 20] == [c] and not d.graph_blocks  # ... and so are live ones, once freed


def test_cuda_graph_capture_failure_leaves_the_stream_usable(fake_device):
    from tinytorch.backends.cuda.graphs import CUDAGraph, graph
    d, drv = fake_device
    g = CUDAGraph()
    with pytest.raises(rt.CaptureError):
        with graph(g):
            d.write(np.zeros(2), 0x1000)
    assert d.capturing is None and drv.log.count("cuStreamEndCapture") == 1
    d.finish()
    with pytest.raises(RuntimeError, match="nothing was captured"):
        g.replay()


def test_reduce_overhead_plan_through_a_cuda_graph(fake_device):
    """``graphed``: the first call runs the plan, the second captures and launches it, later calls launch the graph;
    an input at a new address is copied into the captured one before the launch and back after; a plan that reads
    the host during capture runs as it is from then on."""
    from tinytorch.backends.cuda import graphs
    d, drv = fake_device
    copies = []

    class Arr:
        def __init__(self, mem):
            self.buf = type("B", (), {"mem": mem, "dev": d})()
            self.offset, self.shape, self.strides, self.dtype = 0, (2,), (1,), tt.float32

    class Backend:
        def copy_(self, dst, src):
            copies.append((dst.buf.mem, src.buf.mem))

    class Ext:
        def __init__(self, mem):
            self.arr = Arr(mem)
            self._storage = type("S", (), {"backend": Backend()})()

        def _native(self):
            return self.arr
    calls = []

    def run(ext, nodes=None, learn=None):
        calls.append(d.capturing is not None)
        return ["out"]
    fn = graphs.graphed(run)
    w, x = Ext(0x100), Ext(0x200)
    assert fn([w, x]) == ["out"] and calls == [False]
    assert fn([w, x]) == ["out"] and calls == [False, True] and drv.log.count("cuGraphLaunch") == 1
    assert fn([w, x]) == ["out"] and len(calls) == 2 and drv.log.count("cuGraphLaunch") == 2 and not copies
    assert fn([w, Ext(0x300)]) == ["out"] and copies == [(0x200, 0x300), (0x300, 0x200)]
    assert len(calls) == 2 and drv.log.count("cuGraphLaunch") == 3

    def host_reading(ext, nodes=None, learn=None):
        calls.append("host")
        if d.capturing is not None:
            d.read(np.empty(1), 0x100, 0)
        return ["out"]
    fn = graphs.graphed(host_reading)
    for _ in range(4):
        assert fn([w]) == ["out"]
    assert calls[2:] == ["host"] * 5 and d.capturing is None  # warm-up, failed capture + its rerun, two plain runs


def test_every_driver_and_nvrtc_name_the_device_calls_exists():
    """The runtime is only run on a GPU; at least every cuda-bindings function and enum member it names must exist
    in the installed bindings (a misspelt one would fail on the first GPU)."""
    import re
    cu = pytest.importorskip("cuda.bindings.driver")
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    missing = []
    for f in ("tinytorch/backends/cuda/runtime.py", "tinytorch/backends/cuda/graphs.py", "tinytorch/cuda.py"):
        with open(os.path.join(root, f)) as fh:
            src = fh.read()
        for mod, name in [(cu, m) for m in re.findall(r"\bcu\.([A-Za-z_][\w.]*)", src)] + \
                         [(nvrtc, m) for m in re.findall(r"\bnvrtc\.([A-Za-z_]\w*)", src)]:
            obj = mod
            for part in name.split("."):
                if part == "value":
                    break
                if not hasattr(obj, part):
                    missing.append(f"{f}: {name}")
                    break
                obj = getattr(obj, part)
    assert not missing and len(re.findall(r"\bcu\.", src)) > 5, missing


def test_cuda_graph_runs_host_checks_after_each_replay(fake_device):
    """A kernel checked on the host (nll_loss's target bounds) registers its check while captured; each replay
    runs it after the launch."""
    from tinytorch.backends.cuda.graphs import CUDAGraph, graph
    d, drv = fake_device
    seen = []
    g = CUDAGraph()
    with graph(g):
        d.capturing.checks.append(lambda: seen.append(drv.log[-1]))
    assert seen == []
    g.replay()
    g.replay()
    assert seen == ["cuGraphLaunch", "cuGraphLaunch"]


@pytest.mark.parametrize("s1,s2,expected", [((0,), (), (0,)), ((), (0,), (0,)), ((1, 3), (5, 1), (5, 3)),
                                            ((2, 1), (0,), (2, 0))])
def test_cublas_batch_broadcast_keeps_empty_batches(s1, s2, expected):
    """The batch shape of a cuBLAS matmul is broadcast as torch broadcasts: a size-1 dim takes the other's size,
    0 included (an empty batch times a matrix is an empty batch; found on an H200: (0, 3, 5) @ (5, 2))."""
    assert tuple(blas._broadcast(s1, s2)) == expected == tuple(torch.broadcast_shapes(s1, s2))


@pytest.mark.cuda
@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_compiled_step_with_lr_schedule_on_cuda(mode):
    """A compiled train step on cuda with a learning rate changed every step (OneCycleLR): replayed (in
    reduce-overhead through CUDA graphs, captured again when the bound hyperparameters change), with eager's
    losses and parameters."""
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.standard_normal((32, 20)).astype(np.float32), device="cuda")
    y = tt.tensor(rng.integers(0, 4, 32), device="cuda")
    runs = []
    for compiled in (False, True):
        tt.manual_seed(0)
        m = tt.nn.Sequential(tt.nn.Linear(20, 16), tt.nn.ReLU(), tt.nn.Linear(16, 4)).cuda()
        opt = tt.optim.AdamW(m.parameters(), lr=0.01)
        sched = tt.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=20)

        def step():
            opt.zero_grad()
            loss = tt.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        fn = tt.compile(step, mode=mode) if compiled else step
        losses = []
        for _ in range(12):
            losses.append(fn().item())
            sched.step()
        runs.append((losses, [p.detach().cpu().numpy() for p in m.parameters()], fn))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5)
    for a, b in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    st = runs[1][2].stats()
    assert st["replays"] >= 8 and st["retraces"] == 0, st
