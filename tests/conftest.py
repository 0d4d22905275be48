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
    from tinytorch.backends.cuda import runtime as cuda_runtime
    reason = opencl.unavailable_reason()
    lines = []
    if reason is None:
        import tinytorch
        lines.append(f"opencl: {tinytorch.opencl.get_device_name()} (the op database also runs on opencl)")
    else:
        lines.append(f"opencl: not available, OpenCL tests skipped: {reason}")
    why = cuda_runtime.unavailable_reason()
    lines.append("cuda: " + (f"{tt.cuda.get_device_name()} (tests marked cuda run)" if why is None else
                             f"not available, tests marked cuda skipped: {why}"))
    return lines


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` need tinytorch's cuda device: skipped, with the one reason, where it is unavailable.

    ``TINYTORCH_SAMPLE=N`` (CI sets it) keeps one case in N of each test marked ``sweep`` (the table-driven
    differential sweeps with thousands of cheap cases): the cases whose node id hashes to 0 mod N, plus each
    sweep's first case, so every sweep still runs; a local ``pytest`` runs them all."""
    import os
    import zlib
    n = int(os.environ.get("TINYTORCH_SAMPLE", "1") or 1)
    if n > 1:
        kept, dropped, seen = [], [], set()
        for item in items:
            fn = getattr(item, "function", None)
            if "sweep" in item.keywords and fn is not None:
                first = fn not in seen
                seen.add(fn)
                if not first and zlib.crc32(item.nodeid.encode()) % n:
                    dropped.append(item)
                    continue
            kept.append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    from tinytorch.backends.cuda import runtime as cuda_runtime
    why = cuda_runtime.unavailable_reason()
    if why is None:
        return
    skip = pytest.mark.skip(reason=f"tinytorch's cuda device is unavailable here: {why}")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


def mlp_losses_cpu_and(device, steps=5, on_step=None):
    """Train the same small MLP (same initial weights, data, Adam + clipping) on cpu and on ``device``.

    Returns (cpu losses, device losses); ``on_step(step)`` runs after each step on ``device``.
    """
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 20)).astype(np.float32), rng.integers(0, 4, 32)
    tt.manual_seed(0)
    make = lambda: tt.nn.Sequential(tt.nn.Linear(20, 16), tt.nn.ReLU(), tt.nn.Linear(16, 4))  # noqa: E731
    cpu, dev = make(), make()
    dev.load_state_dict(cpu.state_dict())
    dev.to(device)
    assert all(p.device.type == tt.device(device).type for p in dev.parameters())
    out = []
    for m, d in ((cpu, "cpu"), (dev, device)):
        opt = tt.optim.Adam(m.parameters(), lr=0.01)
        xs, ys = tt.tensor(x, device=d), tt.tensor(y, device=d)
        losses = []
        for step in range(steps):
            loss = tt.nn.functional.cross_entropy(m(xs), ys)
            opt.zero_grad()
            loss.backward()
            tt.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
            del loss
            if d != "cpu" and on_step is not None:
                on_step(step)
        out.append(losses)
    return tuple(out)
