"""Device semantics: the meta device, a third-party device built on the public backend API (tests/mydevice.py),
transfers, and device errors."""
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
    with pytest.raises(RuntimeError, match="'cuda' is not available"):
        tt.ones(2, device="cuda")


def test_opencl_without_a_platform_says_why(monkeypatch):
    from tinytorch.backends import opencl as ocl
    monkeypatch.setattr(ocl, "_DEVICES", [])
    with pytest.raises(RuntimeError, match="opencl device is not available: (no OpenCL platform|pyopencl is not)"):
        tt.zeros(2, device="opencl")
    assert tt.opencl.is_available() is False and tt.opencl.device_count() == 0
