"""The op records and the one op path: what an op declares is what the dispatcher does with it.

Every op is an ``Op`` record in ``tinytorch._dispatch.OPS``; its flags (view, mutates, complex_grad, autocast)
drive the steps of ``dispatch``; backends register kernels under op names and are checked against the registry;
Tensor methods are declared once. These tests hold the mechanism to those rules; the op database
(``tests/op_db.py``) checks the values of every op against PyTorch.
"""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _dispatch
from tinytorch._dispatch import OPS
from tinytorch._ops import optim as optim_ops
from tinytorch._ops._util import method
from tinytorch.backends.cpu import NumpyBackend
from conftest import torch


def test_a_backend_with_a_misspelt_kernel_name_is_refused_when_registered():
    b = NumpyBackend()
    b.kernels = dict(b.kernels)
    b.kernels["mull"] = lambda a, c: a * c
    with pytest.raises(RuntimeError, match="mull"):
        tt.register_backend("misspelt", b)
    assert not tt.device_module_registered("misspelt")


def test_every_kernel_of_the_builtin_backends_names_an_op():
    from tinytorch.device import get_backend
    for name in ("cpu", "opencl"):
        backend = get_backend(name)
        backend.check_kernels(OPS)
        assert set(backend.kernels) <= set(OPS)


def test_an_op_and_a_tensor_method_are_declared_once():
    with pytest.raises(RuntimeError, match="defined twice"):
        _dispatch.defop("add", lambda *a: None)
    with pytest.raises(RuntimeError, match="declared twice"):
        method("add")(lambda self, other: None)


def test_view_ops_are_flagged_and_share_storage():
    x = tt.randn(3, 4, requires_grad=True)
    for name, call in (("permute", lambda t: t.permute(1, 0)), ("view", lambda t: t.view(12)),
                       ("narrow", lambda t: t.narrow(1, 1, 2)), ("select", lambda t: t[1]),
                       ("expand", lambda t: t[:1].expand(5, 4)), ("diagonal", lambda t: t.diagonal())):
        assert OPS[name].view, name
        v = call(x)
        assert v._storage is x._storage
        assert v.grad_fn is not None


def test_in_place_ops_and_out_end_in_the_write_step():
    """``clamp_`` (no in-place kernel), ``out=`` and ``copy_`` all run the op ``copy_``, the write step (which
    names the in-place op or the function given ``out=`` in its errors)."""
    import sys
    seen = []
    code = _dispatch.write.__code__

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(frame.f_locals["op"])
    x = tt.ones(3)
    sys.setprofile(hook)
    try:
        x.clamp_(0, 0.5)
        tt.add(tt.ones(3), 1, out=x)
        x.copy_(tt.zeros(3))
    finally:
        sys.setprofile(None)
    assert seen == ["clamp_", "add", "copy_"]
    assert x.tolist() == [0.0, 0.0, 0.0]
    assert OPS["copy_"].mutates == (0,)


def test_complex_gradients_only_through_ops_declared_for_them():
    assert OPS["mul"].complex_grad and OPS["sum"].complex_grad and not OPS["sin"].complex_grad
    z = tt.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (z * z).sum().abs().backward()  # mul, sum, abs: declared
    with pytest.raises(NotImplementedError, match="sin"):
        tt.sin(z)


def test_autocast_policy_is_a_flag_of_the_op_record():
    import tinytorch.nn.functional as F  # noqa: F401 (declares the nn composites)
    assert OPS["matmul"].autocast == "lower" and OPS["prod"].autocast == "fp32"
    assert OPS["conv2d"].autocast == "lower" and OPS["conv2d"].meta is None  # a composite op
    assert OPS["add"].autocast is None
    with tt.autocast("cpu", dtype=tt.bfloat16):
        assert (tt.ones(2, 2) @ tt.ones(2, 2)).dtype is tt.bfloat16
        assert (tt.ones(2, 2) + tt.ones(2, 2)).dtype is tt.float32


@pytest.mark.parametrize("device", ["cpu", "opencl"])
@pytest.mark.parametrize("amsgrad,decoupled", [(False, False), (True, True)])
def test_fused_adam_kernel_is_a_fast_path_of_the_decomposition(device, amsgrad, decoupled):
    """The backend's fused kernel and the op's decomposition (the reference math) give the same update."""
    from tinytorch.device import get_backend
    if "adam_step" not in get_backend(device).kernels:
        pytest.fail(f"{device} has no fused adam_step kernel")
    rng = np.random.default_rng(0)
    p, g, m, v = (rng.standard_normal(257) for _ in range(4))
    v = np.abs(v)
    kw = dict(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, step=3, weight_decay=0.1, decoupled=decoupled)
    results = []
    for use_kernel in (True, False):
        ts = [tt.tensor(a, dtype=tt.float64, device=device) for a in (p, g, m, v)]
        vmax = tt.tensor(v * 1.5, dtype=tt.float64, device=device) if amsgrad else None
        versions = [t._version for t in ts]
        if use_kernel:
            optim_ops.adam_step(*ts, vmax, **kw)
        else:
            optim_ops._adam_update(*ts, vmax, **kw)
        assert [t._version > v0 for t, v0 in zip(ts, versions)] == [True, False, True, True]
        results.append([t.cpu().numpy() for t in ts] + ([vmax.cpu().numpy()] if amsgrad else []))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_adam_steps_follow_torch():
    """``optim.AdamW`` runs through the ``fused_adam`` op (kernel on cpu); PyTorch's AdamW is the reference."""
    w0 = np.random.default_rng(1).standard_normal((5, 3))
    ours = tt.nn.Parameter(tt.tensor(w0))
    ref = torch.nn.Parameter(torch.tensor(w0))
    o1, o2 = tt.optim.AdamW([ours], lr=0.1, amsgrad=True), torch.optim.AdamW([ref], lr=0.1, amsgrad=True)
    for _ in range(5):
        o1.zero_grad(), o2.zero_grad()
        (ours ** 3).sum().backward()
        (ref ** 3).sum().backward()
        o1.step(), o2.step()
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_a_new_op_is_one_declaration_plus_optional_kernels(device):
    """``special.spherical_bessel_j0`` was added as one record in tinytorch/_ops/special.py (meta, decomposition,
    flags) and one kernel per backend: the kernel and the decomposition agree, and the op's flags give PyTorch's
    behaviour (no gradient; float16/bfloat16/complex refused with its message)."""
    from tinytorch._ops.special import _spherical_bessel_j0_decomp
    from tinytorch.device import get_backend
    op = OPS["special_spherical_bessel_j0"]
    assert op.decomp is not None and op.backward is None and not op.differentiable
    assert op.name in get_backend(device).kernels
    x = tt.tensor(np.random.default_rng(2).uniform(-12, 12, 500).tolist() + [0.0, 0.25, float("inf")],
                  dtype=tt.float64, device=device, requires_grad=True)
    y = tt.special.spherical_bessel_j0(x)
    assert not y.requires_grad and not torch.special.spherical_bessel_j0(torch.ones(1, requires_grad=True)).requires_grad
    np.testing.assert_allclose(y.cpu().numpy(), _spherical_bessel_j0_decomp(x.detach()).cpu().numpy(), rtol=4e-16)
    for dt in ("float16", "bfloat16", "complex64"):
        with pytest.raises(NotImplementedError) as ours:
            tt.special.spherical_bessel_j0(tt.ones(2, dtype=getattr(tt, dt)))
        with pytest.raises(NotImplementedError) as theirs:
            torch.special.spherical_bessel_j0(torch.ones(2, dtype=getattr(torch, dt)))
        assert str(ours.value) == str(theirs.value)


def test_spherical_bessel_j0_promotes_integers_as_torch():
    for dt in ("int64", "int32", "uint8", "bool"):
        ours = tt.special.spherical_bessel_j0(tt.tensor([0, 1, 3], dtype=getattr(tt, dt)))
        ref = torch.special.spherical_bessel_j0(torch.tensor([0, 1, 3], dtype=getattr(torch, dt)))
        assert ours.dtype.name == str(ref.dtype).split(".")[1]
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=2e-7)


def test_a_training_step_sends_its_tensor_work_through_dispatch():
    """Views, in-place updates, ``out=``, device copies, dtype views and the fused optimizer update all reach
    ``dispatch`` (observed with a profiler hook on its code object, so nothing in the package is patched)."""
    import sys
    seen = []
    code = _dispatch.python_dispatch.__code__

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(frame.f_locals["op"].name)
    model = tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.ReLU(), tt.nn.Linear(8, 3))
    opt = tt.optim.AdamW(model.parameters(), lr=0.1)
    x, y = tt.randn(5, 4), tt.tensor([0, 1, 2, 0, 1])
    sys.setprofile(hook)
    try:
        opt.zero_grad()
        loss = tt.nn.functional.cross_entropy(model(x.t().contiguous().t()), y)
        loss.backward()
        opt.step()
        z = tt.zeros(3)
        z.add_(1)
        tt.add(z, 2, out=z)
        z.to("meta")
        z.view(tt.int32)
        tt.view_as_real(tt.tensor([1 + 1j]))
    finally:
        sys.setprofile(None)
    for name in ("linear", "permute", "fused_adam", "add", "copy_", "to_copy", "view_dtype", "view_as_real"):
        assert name in seen, (name, sorted(set(seen)))
