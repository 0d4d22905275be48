"""The multi-tensor optimizer updates (ops ``fused_adam``, ``fused_sgd``, ``fused_rmsprop``, ``fused_adagrad``):
Adam/AdamW, SGD, RMSprop and Adagrad against torch.optim over several steps, the native kernel
(tinytorch/csrc/optim.cpp) against the NumPy kernel and the op's decomposition, and the dispatcher's handling
of tensor lists (version counters, refusals, devices without a kernel)."""
import os
import sys

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch
from tinytorch._dispatch import OPS
from tinytorch._ops import optim as optim_ops
from tinytorch.backends.cpu import fused as numpy_kernels
from tinytorch.backends.cpu.native import NATIVE_KERNELS

if os.environ.get("TINYTORCH_NATIVE", "1").strip() in ("0", "false", "off", "no"):
    pytest.skip("TINYTORCH_NATIVE=0: the native kernels are switched off", allow_module_level=True)
from tinytorch import _C  # noqa: E402  (built in CI: a missing extension fails the module)

# every parameter layout the update meets: matrices, a 0-d scalar, a vector, an empty tensor, a 3-d tensor
SHAPES = [(7, 5), (), (13,), (0,), (4, 3, 2)]

CONFIGS = [
    ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)), ("Adam", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.02, weight_decay=0.5, amsgrad=True, maximize=True)),
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("SGD", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, centered=True)), ("RMSprop", dict(lr=0.01, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.5, centered=True, maximize=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, weight_decay=0.1, maximize=True)),
]


def _grads(dtype, steps):
    """Per step, one gradient per parameter (NumPy), the same for both libraries; the (13,) parameter has none
    at step 1 (so step counts differ across the group and SGD creates that buffer a step late)."""
    rng = np.random.default_rng(7)
    out = []
    for s in range(steps):
        out.append([None if (s == 1 and shape == (13,)) else np.asarray(rng.standard_normal(shape)).astype(dtype)
                    for shape in SHAPES])
    return out


def _set_grad(lib, p, g):
    if g is None:
        p.grad = None
    elif g.ndim == 2:  # a non-contiguous gradient: the transpose of a contiguous one
        p.grad = lib.tensor(np.ascontiguousarray(g.T)).t()
    else:
        p.grad = lib.tensor(g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_optimizer_steps_match_torch(name, kw, dtype):
    rng = np.random.default_rng(3)
    init = [np.asarray(rng.standard_normal(s)).astype(dtype) for s in SHAPES]
    ours = [tt.nn.Parameter(tt.tensor(a)) for a in init]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    o_tt, o_th = getattr(tt.optim, name)(ours, **kw), getattr(torch.optim, name)(theirs, **kw)
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
    for grads in _grads(dtype, 5):
        for lib, ps, o in ((tt, ours, o_tt), (torch, theirs, o_th)):
            for p, g in zip(ps, grads):
                _set_grad(lib, p, g)
            o.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **tol)
    for a, b in zip(ours, theirs):
        sa, sb = o_tt.state[a], o_th.state[b]
        assert set(sa) == set(sb)
        for k in sb:
            if isinstance(sb[k], torch.Tensor):
                np.testing.assert_allclose(np.asarray(sa[k].numpy()), sb[k].numpy(), **tol, err_msg=k)


# ---- the native kernel, the NumPy kernel and the decomposition of each op ----------------------------------------

def _op_case(name, dtype, seed, shapes=SHAPES):
    """(arrays, attributes) for op ``name``: lists of NumPy arrays in the op's argument order (None for an absent
    list) and the keyword attributes, with every option on that the kernel branches on."""
    rng = np.random.default_rng(seed)

    def lst(pos=False):
        return [np.asarray(np.abs(rng.standard_normal(s)) if pos else rng.standard_normal(s)).astype(dtype)
                for s in shapes]
    steps = [np.array(i % 3, dtype=np.float32) for i in range(len(shapes))]  # state['step'] before the update
    if name == "fused_adam":
        return [lst(), lst(), lst(), lst(True), lst(True), steps], dict(
            lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1, decoupled=seed % 2 == 0,
            maximize=seed % 3 == 0)
    if name == "fused_sgd":
        return [lst(), lst(), lst()], dict(lr=0.1, momentum=0.9, dampening=0.1 * (seed % 2), nesterov=seed % 2 == 0,
                                           weight_decay=0.01, maximize=seed % 3 == 0, is_first_step=seed % 4 == 1)
    if name == "fused_rmsprop":
        return [lst(), lst(), lst(True), lst(), lst(), steps], dict(
            lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.1, momentum=0.5, centered=seed % 2 == 0,
            maximize=seed % 3 == 0)
    return [lst(), lst(), lst(True), steps], dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, eps=1e-10,
                                           maximize=seed % 3 == 0)


def _copy(arrays):
    return [None if a is None else [x.copy() for x in a] for a in arrays]


def _to_tensors(arrays, device="cpu", steps_on_cpu=False):
    """Tensors of the op's arrays; with ``steps_on_cpu`` the step counts (the last list of the ops that have
    them) stay on the cpu, where an optimizer keeps them."""
    out = [None if a is None else [tt.tensor(x, device=device) for x in a] for a in arrays]
    if steps_on_cpu and len(arrays) in (4, 6):
        out[-1] = [tt.tensor(x) for x in arrays[-1]]
    return out


OP_NAMES = ["fused_adam", "fused_sgd", "fused_rmsprop", "fused_adagrad"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", OP_NAMES)
def test_native_kernel_equals_numpy_kernel_and_decomposition(name, seed, dtype):
    """The native loops do the NumPy kernel's arithmetic operation by operation (no multiply-add contraction),
    so the two agree bit for bit; the decomposition (tinytorch ops per tensor) agrees to rounding."""
    arrays, kw = _op_case(name, dtype, seed)
    native = _copy(arrays)
    assert getattr(_C, name)(*native, *kw.values()) is None  # the native loop ran (no NotImplemented)
    numpy = _copy(arrays)
    numpy_kernels.KERNELS[name](*numpy, **kw)
    ts = _to_tensors(arrays)
    OPS[name].decomp(*ts, **kw)
    tol = dict(rtol=1e-6, atol=1e-7) if dtype == "float32" else dict(rtol=1e-13, atol=1e-15)
    for a, b, t in zip(native, numpy, ts):
        for x, y, z in zip(a or [], b or [], t or []):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_allclose(x, z.numpy(), **tol)


@pytest.mark.parametrize("name", OP_NAMES)
def test_large_tensors_run_on_threads_and_agree(name):
    """Tensors above the grain size are cut into chunks that several threads share with the small ones."""
    shapes = [(70000,), (3,), (300, 257), ()]
    arrays, kw = _op_case(name, "float32", 1, shapes)
    old = tt.get_num_threads()
    try:
        results = []
        for n in (1, max(old, 2)):
            tt.set_num_threads(n)
            out = _copy(arrays)
            assert getattr(_C, name)(*out, *kw.values()) is None
            results.append(out)
    finally:
        tt.set_num_threads(old)
    numpy = _copy(arrays)
    numpy_kernels.KERNELS[name](*numpy, **kw)
    for a, b, c in zip(*results, numpy):
        for x, y, z in zip(a or [], b or [], c or []):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(x, z)


def test_native_kernel_declines_what_it_does_not_handle_and_numpy_runs():
    """A written buffer that is not contiguous, mixed or other dtypes, a step count that is not float32:
    NotImplemented with nothing written (the step counts included), and the registered cpu kernel (native with
    the NumPy fallback) still gives the NumPy kernel's result. A non-contiguous gradient is only read: the native
    loop runs on a contiguous copy."""
    arrays, kw = _op_case("fused_adam", "float64", 0, [(6, 4), (5,)])
    bad_param = _copy(arrays)
    bad_param[0][0] = np.asfortranarray(bad_param[0][0])
    assert _C.fused_adam(*bad_param, *kw.values()) is NotImplemented
    mixed = _copy(arrays)
    mixed[2][1] = mixed[2][1].astype(np.float32)
    assert _C.fused_adam(*mixed, *kw.values()) is NotImplemented
    half = [None if a is None else [x.astype(np.float16) for x in a[:5]] for a in arrays[:5]] + [_copy(arrays)[5]]
    assert _C.fused_adam(*half, *kw.values()) is NotImplemented
    f64_steps = _copy(arrays)
    f64_steps[5] = [x.astype(np.float64) for x in f64_steps[5]]
    assert _C.fused_adam(*f64_steps, *kw.values()) is NotImplemented
    for case in (bad_param, mixed, half, f64_steps):
        for x, y in zip(case[5], arrays[5]):
            assert x == y
    ref = _copy(bad_param)
    numpy_kernels.KERNELS["fused_adam"](*ref, **kw)
    NATIVE_KERNELS["fused_adam"](*bad_param, **kw)
    for a, b in zip(bad_param, ref):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    strided_grad = _copy(arrays)
    strided_grad[1][0] = np.ascontiguousarray(strided_grad[1][0].T).T
    ref = _copy(strided_grad)
    assert _C.fused_adam(*strided_grad, *kw.values()) is None
    numpy_kernels.KERNELS["fused_adam"](*ref, **kw)
    for a, b in zip(strided_grad, ref):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


# ---- the dispatcher with tensor lists ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", OP_NAMES)
def test_every_written_tensor_gets_its_version_bumped(name):
    arrays, kw = _op_case(name, "float32", 2)
    ts = _to_tensors(arrays)
    before = [None if a is None else [t._version for t in a] for a in ts]
    getattr(optim_ops, name)(*ts, **kw)
    written = set(OPS[name].mutates)
    for i, (a, v) in enumerate(zip(ts, before)):
        for t, v0 in zip(a or [], v or []):
            assert (t._version > v0) == (i in written), (i, t._version, v0)


def test_a_leaf_that_requires_grad_is_refused_with_grad_mode_on():
    arrays, kw = _op_case("fused_sgd", "float32", 0, [(3,), (2,)])
    ps, gs, bufs = _to_tensors(arrays)
    ps[1].requires_grad_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        optim_ops.fused_sgd(ps, gs, bufs, **kw)
    assert ps[0]._version == 0  # refused before anything was written
    with tt.no_grad():
        optim_ops.fused_sgd(ps, gs, bufs, **kw)
    assert ps[1]._version == 1


@pytest.mark.parametrize("name", OP_NAMES)
def test_devices_without_the_kernel_run_the_decomposition(name):
    """The third-party test device (primitive kernels only) and the meta device run the op through its
    decomposition; the values on ``mydev`` are the cpu kernel's."""
    arrays, kw = _op_case(name, "float64", 3)
    cpu = _to_tensors(arrays)
    getattr(optim_ops, name)(*cpu, **kw)
    for steps_on_cpu in (False, True):
        dev = _to_tensors(arrays, "mydev", steps_on_cpu)
        getattr(optim_ops, name)(*dev, **kw)
        for a, b in zip(cpu, dev):
            for x, y in zip(a or [], b or []):
                np.testing.assert_allclose(x.numpy(), y.cpu().numpy(), rtol=1e-13, atol=1e-15)
    meta = _to_tensors(arrays, "meta", steps_on_cpu=True)
    getattr(optim_ops, name)(*meta, **kw)
    assert meta[0][0].shape == cpu[0][0].shape


@pytest.mark.skipif(not tt.opencl.is_available(), reason="no OpenCL device")
@pytest.mark.parametrize("name,kw", [c for c in CONFIGS if c[0] in ("Adam", "AdamW", "SGD")][:6])
def test_opencl_runs_the_per_tensor_fused_kernels(name, kw):
    """OpenCL registers no list kernel: the decomposition calls its per-tensor fused updates."""
    init = [np.asarray(np.random.default_rng(4).standard_normal(s)) for s in SHAPES]
    res = []
    for device in ("cpu", "opencl"):
        ps = [tt.nn.Parameter(tt.tensor(a, device=device)) for a in init]
        o = getattr(tt.optim, name)(ps, **kw)
        for grads in _grads("float64", 3):
            for p, g in zip(ps, grads):
                p.grad = None if g is None else tt.tensor(g, device=device)
            o.step()
        res.append([p.detach().cpu().numpy() for p in ps])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ---- which path an optimizer takes -------------------------------------------------------------------------------

def _ops_run(fn):
    seen = []
    code = tt._dispatch.python_dispatch.__code__

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(frame.f_locals["op"].name)
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw,fused", [({}, True), ({"foreach": False}, False), ({"differentiable": True}, False),
                                      ({"foreach": True}, True), ({"fused": True}, True)])
def test_default_groups_take_the_multi_tensor_op_and_the_others_the_per_tensor_one(kw, fused, dtype):
    """One ``fused_adam`` call for the group, run by the cpu kernel (float64 params with their float32 step
    counts included: no per-tensor ``adam_step`` from the decomposition)."""
    dt = getattr(tt, dtype)
    ps = [tt.nn.Parameter(tt.ones(3, dtype=dt)), tt.nn.Parameter(tt.ones(2, 2, dtype=dt))]
    for p in ps:
        p.grad = tt.ones(p.shape, dtype=dt)
    o = tt.optim.Adam(ps, **kw)
    for _ in range(2):
        seen = _ops_run(o.step)
        assert ("fused_adam" in seen) == fused and ("adam_step" in seen) == (not fused)
        assert seen.count("fused_adam") <= 1 and ("add" in seen) == (not fused)  # fused: no step.add_(1)
    assert o.state[ps[0]]["step"].item() == 2 and o.state[ps[0]]["step"].dtype is tt.float32


def test_a_group_of_mixed_dtypes_makes_one_call_per_dtype_and_complex_params_go_per_tensor():
    ps = [tt.nn.Parameter(tt.ones(3)), tt.nn.Parameter(tt.ones(2, dtype=tt.float64)), tt.nn.Parameter(tt.ones(4))]
    for p in ps:
        p.grad = tt.ones(p.shape, dtype=p.dtype)
    seen = _ops_run(tt.optim.SGD(ps, lr=0.1, momentum=0.9).step)
    assert seen.count("fused_sgd") == 2
    c = tt.nn.Parameter(tt.tensor([1 + 1j, 2 - 1j]))
    c.grad = tt.tensor([0.5 + 0.25j, -1j])
    seen = _ops_run(tt.optim.SGD([c], lr=0.1).step)
    assert "fused_sgd" not in seen
    np.testing.assert_allclose(c.detach().numpy(), [0.95 + 0.975j, 2 - 0.9j])
