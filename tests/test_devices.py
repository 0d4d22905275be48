"""Device semantics: the meta device, a third-party device built on the public backend API (tests/mydevice.py),
transfers, and device errors."""
import importlib.util
import time

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, mlp_losses_cpu_and, torch


def test_meta_device_is_shape_only():
    t0 = time.perf_counter()
    m = tt.nn.Linear(10 ** 5, 10 ** 5, device="meta")
    assert time.perf_counter() - t0 < 1.0  # 40 GB of weights never allocated (generous bound: not a speed test)
    assert m.weight.device == tt.device("meta") and m.weight.shape == (10 ** 5, 10 ** 5)
    x = tt.empty(8, 10 ** 5, device="meta")
    y = m(x).relu().sum(1)
    assert y.shape == (8,) and y.device.type == "meta" and y.grad_fn is not None
    a = tt.zeros(2, 3, device="meta", dtype=tt.int32) + 1.5
    assert a.dtype is tt.float32 and repr(a) == "tensor(..., device='meta', size=(2, 3))"
    conv = tt.nn.Conv2d(3, 8, 3, stride=2, device="meta")
    assert conv(tt.randn(4, 3, 32, 32, device="meta")).shape == (4, 8, 15, 15)
    with pytest.raises(NotImplementedError, match="no data"):
        a.sum().item()
    with pytest.raises(NotImplementedError, match="depends on the data"):
        a[a > 0]
    with pytest.raises(RuntimeError, match="size of tensor a"):
        tt.ones(2, device="meta") + tt.ones(3, device="meta")


def test_mlp_trains_identically_on_third_party_device():
    cpu, dev = mlp_losses_cpu_and("mydev")
    np.testing.assert_allclose(cpu, dev, rtol=1e-6)
    assert dev[-1] < dev[0]


def test_conv_net_on_third_party_device_uses_decompositions():
    """mydev has no im2col / col2im / log_softmax kernels: conv and cross entropy run as decompositions."""
    from tinytorch.device import get_backend
    backend = get_backend("mydev")
    assert "im2col" not in backend.kernels and "log_softmax" not in backend.kernels
    net_th = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                 torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))
    net = tt.nn.Sequential(tt.nn.Conv2d(1, 3, 3, padding=1), tt.nn.ReLU(), tt.nn.MaxPool2d(2), tt.nn.Flatten(),
                           tt.nn.Linear(3 * 4 * 4, 5))
    net.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in net_th.state_dict().items()})
    net.to("mydev")
    a = np.random.default_rng(1).standard_normal((2, 1, 8, 8)).astype(np.float32)
    t = np.array([1, 4])
    l_tt = tt.nn.functional.cross_entropy(net(tt.tensor(a).to("mydev")), tt.tensor(t).to("mydev"))
    l_th = torch.nn.functional.cross_entropy(net_th(torch.tensor(a)), torch.tensor(t))
    l_tt.backward()
    l_th.backward()
    assert_close(l_tt.cpu(), l_th)
    assert_close(net[0].weight.grad.cpu(), net_th[0].weight.grad, rtol=1e-4, atol=1e-6)


def test_transfers_and_mixed_device_errors():
    x = tt.arange(12.0).view(3, 4).t()  # non-contiguous
    d = x.to("mydev")
    assert d.device == tt.device("mydev:0") and d.stride() == x.stride()  # no index means index 0, as cuda
    assert d.cpu().tolist() == x.tolist() and d.to("mydev:1").device == tt.device("mydev:1")
    g = tt.ones(3, requires_grad=True)
    (g.to("mydev") * 2).sum().backward()
    assert g.grad.device.type == "cpu" and g.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*mydev.*cpu"):
        d + x
    assert (d + tt.tensor(1.0)).device.type == "mydev"  # a 0-dim cpu tensor may join another device
    with pytest.raises(RuntimeError, match="index 5 is out of range"):
        tt.ones(2, device="mydev:5")
    with pytest.raises(RuntimeError, match="Expected one of .* device type at start of device string: nodev"):
        tt.device("nodev")
    with pytest.raises(RuntimeError, match="Torch not compiled with CUDA enabled"):
        tt.ones(2, device="cuda")


def test_opencl_without_a_platform_says_why(monkeypatch):
    from tinytorch.backends.opencl import runtime as ocl
    monkeypatch.setattr(ocl, "_DEVICES", [])
    with pytest.raises(RuntimeError, match="opencl device is not available: (no OpenCL platform|pyopencl is not)"):
        tt.zeros(2, device="opencl")
    assert tt.opencl.is_available() is False and tt.opencl.device_count() == 0


def test_default_device_context_and_setter_match_torch():
    """``with device(...)`` and ``set_default_device`` redirect factory functions and module parameters; from_numpy
    stays on cpu; leaving the context (or passing None) restores cpu, as in torch."""
    def probe(m):
        return [str(t.device) for t in (m.zeros(2), m.randn(2), m.tensor([1.0]), m.arange(3), m.full((2,), 1.0),
                                        m.as_tensor([1.0]), m.from_numpy(np.ones(2)), m.nn.Linear(3, 2).weight)]
    for m in (torch, tt):
        assert str(m.get_default_device()) == "cpu"
    with torch.device("meta"):
        ref = probe(torch)
    with tt.device("meta"):
        ours = probe(tt)
        big = tt.nn.Linear(10 ** 5, 10 ** 5)  # instant: no data
        assert big.weight.shape == (10 ** 5, 10 ** 5)
        with tt.device("cpu"):
            assert tt.zeros(1).device.type == "cpu"
        assert str(tt.get_default_device()) == "meta"
    assert ours == ref
    assert probe(tt) == probe(torch)
    try:
        torch.set_default_device("meta")
        tt.set_default_device("meta")
        assert probe(tt) == probe(torch)
        assert str(tt.get_default_device()) == str(torch.get_default_device())
    finally:
        torch.set_default_device(None)
        tt.set_default_device(None)
    assert tt.zeros(1).device.type == "cpu"
    with pytest.raises(RuntimeError, match="nosuchdev"):
        tt.set_default_device("nosuchdev")


@pytest.mark.parametrize("device", ["cpu"] + (["opencl"] if tt.opencl.is_available() else []))
def test_view_dtype_reinterprets_bytes_as_torch(device):
    """view(dtype) over the same memory: same element size, wider and narrower elements, bool/uint8, complex;
    writes show through with one version counter; the layout errors name both dtypes."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3, 4)).astype(np.float32)
    cases = [lambda m, x: x.view(m.int32), lambda m, x: x.view(m.float64), lambda m, x: x.view(m.uint8),
             lambda m, x: x.view(m.float16), lambda m, x: x[:, 2:].view(m.float64), lambda m, x: x.view(m.complex64),
             lambda m, x: x.view(m.int32).view(m.float32), lambda m, x: x.t().view(m.int32)]
    for f in cases:
        ref = f(torch, torch.tensor(base))
        ours = f(tt, tt.tensor(base, device=device))
        assert tuple(ours.shape) == tuple(ref.shape) and ours.stride() == ref.stride()
        assert ours.storage_offset() == ref.storage_offset()
        np.testing.assert_array_equal(ours.cpu().numpy(), ref.numpy())
    x = tt.ones(2, 4, device=device)
    z = x.view(tt.int32)
    z[0, 0] = 0
    assert x[0, 0].item() == 0.0 and x._version == z._version == 1
    assert not tt.ones(3, requires_grad=True).view(tt.int32).requires_grad
    for m, dev in ((torch, "cpu"), (tt, device)):
        for bad, msg in ((lambda: m.arange(6.0, device=dev)[::2].view(m.float64), "size\\(-1\\) must be divisible by 2"),
                         (lambda: m.arange(5.0, device=dev)[1:].view(m.float64), "storage_offset\\(\\) must be divisible"),
                         (lambda: m.tensor(2.0, device=dev).view(m.float16), "dim\\(\\) cannot be 0 to view Float as Half"),
                         (lambda: m.ones(4, 2, device=dev).t().view(m.float64), "stride\\(-1\\) must be 1 to view Float "
                                                                                 "as Double \\(different element sizes\\)")):
            with pytest.raises(RuntimeError, match=msg):
                bad()


def test_view_dtype_on_meta_and_on_a_backend_without_reinterpret():
    assert tuple(tt.zeros(4, 6, device="meta").view(tt.float64).shape) == (4, 3)
    import mydevice  # noqa: F401  (registers mydev, which does not implement Backend.reinterpret)
    with pytest.raises(NotImplementedError, match="'mydev' device.*Backend.reinterpret"):
        tt.ones(4, device="mydev").view(tt.int32)


def test_backend_switch_modules_and_accelerator():
    """torch.backends.cudnn / cuda / mps / mkldnn report unavailable, as on a CPU-only torch build, and their
    flags can be set; cuda.matmul.allow_tf32 is the float32 matmul precision. torch.accelerator finds the first
    available non-cpu device (opencl, else the test suite's mydev), so the tutorial idiom runs on it."""
    for m in (torch, tt):
        assert not m.backends.cudnn.is_available() and not m.backends.mps.is_available()
        assert not m.backends.mps.is_built()
        m.backends.cudnn.benchmark = True
        m.backends.cudnn.deterministic = True
        m.backends.cudnn.benchmark = False
        m.backends.cudnn.deterministic = False
        try:
            m.backends.cuda.matmul.allow_tf32 = True
            assert m.get_float32_matmul_precision() == "high" and m.backends.cuda.matmul.allow_tf32
        finally:
            m.backends.cuda.matmul.allow_tf32 = False
        assert m.get_float32_matmul_precision() == "highest"
        assert m.cpu.is_available() and m.cpu.device_count() == 1
    assert not torch.backends.cuda.is_built()  # the CPU wheel
    # tinytorch's cuda device is built in; it is usable given cuda-bindings (the cuda extra) and a driver
    assert tt.backends.cuda.is_built() == (importlib.util.find_spec("cuda.bindings") is not None)
    import mydevice  # noqa: F401
    expected = "opencl" if tt.opencl.is_available() else "mydev"
    assert tt.accelerator.is_available() and tt.accelerator.current_accelerator().type == expected
    device = tt.accelerator.current_accelerator().type if tt.accelerator.is_available() else "cpu"
    x = tt.ones(2, 3, device=device)
    assert (x @ x.T).cpu().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert tt.accelerator.device_count() >= 1 and tt.accelerator.current_device_index() == 0
    tt.accelerator.synchronize()
    with tt.cpu.amp.autocast():
        assert (tt.ones(2, 2) @ tt.ones(2, 2)).dtype is tt.bfloat16


def test_cuda_requests_raise_torchs_assertion():
    """Asking for CUDA raises torch's "not compiled with CUDA" AssertionError (also a RuntimeError, like the
    other unavailable-device errors), from every entry point."""
    for call in (lambda: tt.ones(1).cuda(), lambda: tt.ones(1).to("cuda"), lambda: tt.zeros(1, device="cuda:0"),
                 lambda: tt.nn.Linear(1, 1).cuda(), lambda: tt.cuda.synchronize()):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            call()
        with pytest.raises(RuntimeError, match="cuda device is unavailable here .*NVIDIA|cuda-bindings"):
            call()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        torch.ones(1).cuda()
