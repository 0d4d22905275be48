"""The dispatcher's common path in C (csrc/dispatch.cpp) against its reference, ``_dispatch.python_dispatch``, and
against torch: the same results, graphs, saved tensors, errors and fallbacks, and no leaked objects."""
import gc
import sys
import weakref

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _dispatch
from conftest import torch

pytestmark = pytest.mark.skipif(_dispatch._C is None, reason="the C dispatcher needs the native kernels (built _C)")

OPS = _dispatch.OPS


def _both(op, args, kw=None):
    """The call through the C dispatcher and through the Python reference."""
    return _dispatch.dispatch(op, args, kw), _dispatch.python_dispatch(op, args, kw)


def _same_tensor(a, b):
    assert type(a) is type(b)
    assert a.dtype is b.dtype and a.shape == b.shape and a.stride() == b.stride()
    assert a.requires_grad == b.requires_grad
    assert (a.grad_fn is None) == (b.grad_fn is None)
    if a.grad_fn is not None:
        assert a.grad_fn.name() == b.grad_fn.name()
        assert [e is None for e in a.grad_fn.next_edges] == [e is None for e in b.grad_fn.next_edges]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_the_c_path_is_installed_and_the_reference_kept():
    assert _dispatch.dispatch is _dispatch._C.dispatch
    assert _dispatch.python_dispatch.__code__.co_name == "dispatch"


@pytest.mark.parametrize("name,args", [
    ("add", lambda: (tt.randn(3, 4), tt.randn(4))),
    ("add", lambda: (tt.randn(3, 4), 2.5)),
    ("mul", lambda: (tt.arange(6).reshape(2, 3), 1.5)),
    ("div", lambda: (tt.arange(6).reshape(2, 3), tt.arange(1, 4))),
    ("eq", lambda: (tt.randn(5), tt.randn(5))),
    ("exp", lambda: (tt.randn(2, 3, dtype=tt.float64),)),
    ("relu", lambda: (tt.randn(2, 3).t(),)),
    ("matmul", lambda: (tt.randn(3, 4), tt.randn(4, 5))),
])
def test_results_equal_the_reference(name, args):
    a = args()
    c, p = _both(OPS[name], a)
    _same_tensor(c, p)


def test_recorded_graph_equals_the_reference_and_torch():
    x0 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    w0 = np.random.default_rng(1).standard_normal((4,)).astype(np.float32)
    grads = []
    for d in (_dispatch.dispatch, _dispatch.python_dispatch):
        x, w = tt.tensor(x0, requires_grad=True), tt.tensor(w0, requires_grad=True)
        y = d(OPS["mul"], (x, w))
        z = d(OPS["exp"], (y,))
        assert z.grad_fn.name() == "ExpBackward0" and y.grad_fn.name() == "MulBackward0"
        assert y.grad_fn._seq < z.grad_fn._seq  # the engine runs the newest ready node first
        z.sum().backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
    tx, tw = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    (tx * tw).exp().sum().backward()
    for gx, gw in grads:
        np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-6)


def test_saved_input_modified_in_place_raises_torchs_error():
    x = tt.randn(3, requires_grad=True)
    a = x * 1.0
    y = a.exp() * a  # mul saves a
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    tx = torch.randn(3, requires_grad=True)
    ta = tx * 1.0
    ty = ta.exp() * ta
    ta.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_saved_output_is_an_alias_with_its_version():
    x = tt.randn(4, requires_grad=True)
    y = x.exp()  # exp saves its output
    node = y.grad_fn
    assert node._out is not y and node._out._storage is y._storage
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-6)


def test_saved_tensor_hooks_take_the_python_path():
    packed = []
    x = tt.randn(3, requires_grad=True)
    with tt.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y = x * x
    assert packed
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)


def test_view_step():
    x = tt.randn(3, 4, requires_grad=True)
    v = x.t()
    assert v._base is x and v.t()._base is x
    assert v.grad_fn is not None and v.requires_grad
    assert v._storage is x._storage and v.stride() == (1, 4)
    with tt.no_grad():
        assert x.t().grad_fn is None
    (v * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 4), 2, np.float32))


@pytest.mark.parametrize("call,exc", [
    (lambda m: m.add(m.ones(3), m.ones(4)), RuntimeError),
    (lambda m: m.ones(3) @ m.ones(2), RuntimeError),
    (lambda m: m.ones(2, dtype=m.bool) - m.ones(2, dtype=m.bool), RuntimeError),
    (lambda m: m.matmul(m.ones(2, 3), m.ones(2, 3)), RuntimeError),
    (lambda m: m.ones(3).view(2, 2), RuntimeError),
])
def test_errors_are_torchs(call, exc):
    with pytest.raises(exc) as ours:
        call(tt)
    with pytest.raises(exc) as theirs:
        call(torch)
    assert str(ours.value) == str(theirs.value)


def test_refused_dtype_raises_before_the_kernel():
    with pytest.raises(NotImplementedError) as ours:
        tt.erf(tt.ones(2, dtype=tt.complex64))
    with pytest.raises(NotImplementedError) as theirs:
        torch.erf(torch.ones(2, dtype=torch.complex64))
    assert str(ours.value) == str(theirs.value)


def test_a_tracer_sees_the_python_reference():
    seen = []
    code = _dispatch.python_dispatch.__code__

    def hook(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(frame.f_locals["op"].name)
    a = tt.ones(2)
    sys.setprofile(hook)
    try:
        a + a
    finally:
        sys.setprofile(None)
    assert seen == ["add"]


def test_inference_mode_marks_the_storage():
    with tt.inference_mode():
        y = tt.ones(2) + 1
    assert y.is_inference()
    z = tt.ones(2) + 1
    assert not z.is_inference()
    x = tt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y


def test_grad_mode_off_records_nothing():
    x = tt.ones(2, requires_grad=True)
    with tt.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad


def test_integer_outputs_get_no_node():
    x = tt.ones(2, requires_grad=True)
    assert (x > 0).grad_fn is None and not (x > 0).requires_grad


def test_no_object_is_leaked():
    a, w = tt.ones(8), tt.ones(8, requires_grad=True)
    for _ in range(100):
        (a + a).t()
        (w * a).sum()
    gc.collect()
    before = len(gc.get_objects())
    refs = []
    for _ in range(2000):
        r = a + a
        refs.append(weakref.ref(r._storage))
        v = r.t()
        g = w * a
        refs.append(weakref.ref(g.grad_fn))
        del r, v, g
    gc.collect()
    assert all(ref() is None for ref in refs)
    assert len(gc.get_objects()) - before - len(refs) < 100  # the weak references themselves are objects


def test_ops_with_an_autocast_policy_follow_autocast():
    """matmul and linear carry an autocast policy: with autocast off the C path runs them; under autocast the
    Python path casts, as torch does."""
    x0 = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    w0 = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    x, w = tt.tensor(x0), tt.tensor(w0, requires_grad=True)
    c, p = _both(OPS["linear"], (x, w, None))
    _same_tensor(c, p)
    tx, tw = torch.tensor(x0), torch.tensor(w0, requires_grad=True)
    with tt.autocast("cpu", dtype=tt.bfloat16), torch.autocast("cpu", dtype=torch.bfloat16):
        ours, theirs = tt.nn.functional.linear(x, w), torch.nn.functional.linear(tx, tw)
        assert str(ours.dtype) == str(theirs.dtype) == "torch.bfloat16"
        assert str((x @ w.t()).dtype) == str((tx @ tw.t()).dtype)
    assert (x @ w.t()).dtype is tt.float32
