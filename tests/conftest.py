"""Shared helpers for differential tests: the same NumPy data through tinytorch and real PyTorch."""
import numpy as np
import pytest

import tinytorch as tt

torch = pytest.importorskip("torch", reason="differential tests need PyTorch: pip install -e '.[test]'")

import mydevice  # noqa: E402  (a third-party device built on the public backend API)

mydevice.register()

DT = {"float32": (tt.float32, torch.float32), "float64": (tt.float64, torch.float64),
      "float16": (tt.float16, torch.float16), "bfloat16": (tt.bfloat16, torch.bfloat16),
      "int64": (tt.int64, torch.int64), "int32": (tt.int32, torch.int32), "int16": (tt.int16, torch.int16),
      "int8": (tt.int8, torch.int8), "uint8": (tt.uint8, torch.uint8), "bool": (tt.bool, torch.bool)}

TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6), "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1e-2)}


def np_data(shape, dtype="float32", low=-2.0, high=2.0, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("int") or dtype == "uint8":
        lo = 0 if dtype == "uint8" else int(low) - 3
        return rng.integers(lo, int(high) + 4, shape).astype(dtype)
    a = rng.uniform(low, high, shape)
    return a.astype(np.float32 if dtype in ("float16", "bfloat16") else dtype)


def pair(shape, dtype="float32", low=-2.0, high=2.0, seed=0, noncontig=False, requires_grad=False):
    """The same values as a tinytorch tensor and a torch tensor (optionally non-contiguous: a transposed view)."""
    a = np_data(tuple(reversed(shape)) if noncontig else shape, dtype, low, high, seed)
    t_dt, th_dt = DT[dtype]
    x = tt.tensor(a).to(t_dt)
    y = torch.tensor(a).to(th_dt)
    if noncontig and len(shape) >= 2:
        perm = tuple(range(len(shape) - 1, -1, -1))
        x, y = x.permute(perm), y.permute(perm)
    elif noncontig:
        x, y = x, y
    if requires_grad:
        x.requires_grad_(True)
        y.requires_grad_(True)
    return x, y


def to_np(t):
    if isinstance(t, tt.Tensor):
        a = t.detach().numpy()
        return a.astype(np.float64) if a.dtype.kind == "f" or str(a.dtype) == "bfloat16" else a
    a = t.detach()
    if a.dtype == torch.bfloat16:
        a = a.float()
    return a.numpy().astype(np.float64) if a.is_floating_point() else a.numpy()


def assert_close(x, y, dtype="float32", rtol=None, atol=None, msg=""):
    """Compare a tinytorch tensor with a torch tensor: shape, dtype name and values."""
    assert tuple(x.shape) == tuple(y.shape), f"{msg} shape {tuple(x.shape)} != torch {tuple(y.shape)}"
    assert str(x.dtype) == str(y.dtype), f"{msg} dtype {x.dtype} != torch {y.dtype}"
    r, a = TOL.get(dtype, (0, 0))
    np.testing.assert_allclose(to_np(x), to_np(y), rtol=rtol if rtol is not None else r,
                               atol=atol if atol is not None else a, equal_nan=True, err_msg=msg)


def pytest_report_header(config):
    from tinytorch.backends import opencl
    reason = opencl.unavailable_reason()
    if reason is None:
        import tinytorch
        return f"opencl: {tinytorch.opencl.get_device_name()} (the op database also runs on opencl)"
    return f"opencl: not available, OpenCL tests skipped: {reason}"
