"""Autograd engine: backward/grad API, accumulation, hooks, custom Functions, grad modes, deep graphs, memory."""
import gc
import weakref

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, pair, torch


def test_accumulation_and_shared_use():
    x, y = pair((3,), requires_grad=True)
    for t in (x, y):
        (t * t + t).sum().backward()
        (t * 3).sum().backward()  # accumulates into .grad
    assert_close(x.grad, y.grad)


def test_retain_graph_and_second_backward_error():
    x = tt.randn(3, requires_grad=True)
    out = (x.exp() * 2).sum()
    out.backward(retain_graph=True)
    out.backward()
    assert_close(x.grad, torch.tensor(x.detach().numpy()).exp() * 4)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def test_backward_requires_scalar_or_gradient():
    x = tt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(tt.tensor([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        tt.ones(2).sum().backward()


def test_autograd_grad_create_graph_and_allow_unused():
    x, y = pair((4,), "float64", requires_grad=True)
    gx, = tt.autograd.grad((x ** 3).sum(), x, create_graph=True)
    gy, = torch.autograd.grad((y ** 3).sum(), y, create_graph=True)
    assert_close(gx, gy, "float64")
    ggx, = tt.autograd.grad(gx.sum(), x)
    ggy, = torch.autograd.grad(gy.sum(), y)
    assert_close(ggx, ggy, "float64")
    assert x.grad is None  # grad() leaves .grad alone
    z = tt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        tt.autograd.grad(x.sum(), [x, z])
    assert tt.autograd.grad(x.sum(), [x, z], allow_unused=True)[1] is None


def test_hooks_and_retain_grad():
    x, y = pair((3,), requires_grad=True)
    seen = []
    for t in (x, y):
        h = t * 2
        h.retain_grad()
        h.register_hook(lambda g: g * 10)
        t.register_hook(lambda g: seen.append(g.sum().item()))
        (h * h).sum().backward()
    assert_close(x.grad, y.grad)
    assert seen[0] == pytest.approx(seen[1], rel=1e-5)


def test_custom_function():
    class Cube(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * 3 * x ** 2 * ctx.k, None

    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_grad_modes():
    x = tt.ones(2, requires_grad=True)
    with tt.no_grad():
        assert not (x * 2).requires_grad
        with tt.enable_grad():
            assert (x * 2).requires_grad
    with tt.inference_mode():
        assert not (x * 2).requires_grad
    tt.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    tt.set_grad_enabled(True)

    @tt.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    assert (x * 2).requires_grad
    d = (x * 2).detach()
    assert not d.requires_grad and d.grad_fn is None


def test_deep_graph_is_iterative():
    x = tt.ones(1, requires_grad=True)
    y = x
    for _ in range(20000):  # deeper than Python's recursion limit
        y = y * 1.0
    y.sum().backward()
    assert x.grad.item() == 1.0


def test_graph_is_freed_after_backward():
    x = tt.randn(10, requires_grad=True)
    refs = []
    for _ in range(50):
        out = (x.exp() * x).sum()
        refs.append(weakref.ref(out.grad_fn))
        out.backward()
        del out
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_gradcheck_catches_wrong_gradient():
    class Wrong(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2x g

    x = tt.randn(3, dtype=tt.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        tt.autograd.gradcheck(Wrong.apply, (x,))


def test_jacobian_hessian():
    x = tt.tensor([1.0, 2.0], dtype=tt.float64)
    J = tt.autograd.functional.jacobian(lambda t: t ** 2, x)
    assert J.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    H = tt.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
    assert H.tolist() == [[6.0, 0.0], [0.0, 12.0]]


def test_setitem_with_tensor_indices_inside_a_graph_matches_torch():
    # index_put saves its input; the in-place write must not invalidate it (PyTorch's original_self)
    a = np.random.default_rng(0).standard_normal((3, 4))
    res = []
    for m in (tt, torch):
        x, v = m.tensor(a, requires_grad=True), m.ones(3, 2, dtype=m.float64, requires_grad=True)
        y = x * 2
        y[:, m.tensor([0, 2])] = v * 3
        y[m.tensor([1])] = 5.0
        y.index_put_((m.tensor([2]), m.tensor([3])), m.tensor(1.5, dtype=m.float64), accumulate=True)
        (y * m.arange(4.0, dtype=m.float64)).sum().backward()
        res.append((y, x.grad, v.grad))
    for got, want in zip(res[0], res[1]):
        assert_close(got, want, "float64")


def test_detect_anomaly_names_the_node_that_returned_nan():
    import warnings
    for lib in (tt, torch):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                assert lib.is_anomaly_enabled()
                with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th"):
                    (x.sqrt() * 0).sum().backward()
        assert not lib.is_anomaly_enabled()
        (x.sqrt() * 0).sum().backward()  # outside the mode the NaN gradient just arrives
        assert bool(lib.isnan(x.grad).any())
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0).sum().backward()
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


def test_saved_tensors_hooks_match_torch():
    """saved_tensors_hooks: pack sees every tensor saved for backward (op inputs and outputs, custom Function
    saves), unpack's results are what backward uses; save_on_cpu; disable_saved_tensors_hooks."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    res = []
    for m in (torch, tt):
        class Sq(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        packed = []
        x = m.tensor(a, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(tuple(t.shape)), t * 2)[1],
                                                  lambda t: t / 2):
            y = (Sq.apply(x).sin() * x).sum()
        y.backward()
        g1 = x.grad.numpy().copy()
        x.grad = None
        with m.autograd.graph.save_on_cpu():
            z = (x.exp() * x).sum()
        z.backward()
        res.append((len(packed) > 0, g1, x.grad.numpy().copy()))
        with m.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
    assert res[0][0] and res[1][0]
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-5, atol=1e-6)
    # the hooks' results are really used: an unpack that scales changes the gradient
    x = tt.tensor(a, requires_grad=True)
    with tt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0):
        (x * x).sum().backward()  # mul's gradient reads the saved factors
    assert float(x.grad.abs().sum()) == 0.0


def test_function_setup_context_vjp_and_autograd_functional_products_match_torch():
    """Custom Functions in the setup_context style and with ``vjp`` instead of ``backward`` (grad_fn type
    ``<Name>Backward``), and autograd.functional's vjp / jvp / vhp / hvp, against torch."""
    res = []
    for m in (tt, torch):
        class Scale(m.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        y = Scale.apply(x, 3.0) + Double.apply(x)
        y.sum().backward()
        got = [x.grad.tolist(), type(Scale.apply(x, 1.0).grad_fn).__name__]
        F = m.autograd.functional
        f = lambda a, b: (a ** 2 * b).sum() * b.sum()  # noqa: E731
        a, b = m.tensor([1.0, 2.0], dtype=m.float64), m.tensor([0.5, 3.0], dtype=m.float64)
        v = (m.ones(2, dtype=m.float64), m.tensor([1.0, -1.0], dtype=m.float64))
        for fn in (F.vhp, F.hvp):
            out, prod = fn(f, (a, b), v)
            got += [out.item(), [p.tolist() for p in prod]]
        out, prod = F.vjp(lambda t: t.exp() * 2, a, m.tensor([1.0, 3.0], dtype=m.float64))
        got += [out.tolist(), prod.tolist()]
        out, prod = F.jvp(lambda s, t: (s * t, s.exp()), (a, b), v)
        got += [[o.tolist() for o in out], [p.tolist() for p in prod]]
        with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used"):
            p, q = m.ones(1, requires_grad=True), m.ones(1, requires_grad=True)
            m.autograd.grad((p * 2).sum(), [p, q])
        res.append(got)
    assert res[0][:2] == res[1][:2]
    for g, t in zip(res[0][2:], res[1][2:]):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(t, dtype=np.float64), rtol=1e-12)


def test_inference_tensors_follow_torchs_rules():
    script = []
    for m in (tt, torch):
        got = []
        with m.inference_mode():
            y = m.ones(2)
            z = m.ones(2, requires_grad=True) * 2
            y.add_(1)  # allowed inside the mode
            v = y[1:]
            got += [y.is_inference(), z.is_inference(), z.requires_grad, v.is_inference()]
            with m.inference_mode(False):
                got.append(m.ones(1).is_inference())
        n = m.ones(3)
        with m.inference_mode():
            nv = n[1:]  # a view of a normal tensor stays normal
        nv.add_(1)
        got += [nv.is_inference(), y.clone().is_inference(), y.detach().is_inference(), (y * 2).is_inference()]
        got.append(tuple((m.ones(2, requires_grad=True) + y).shape))  # add saves no input: allowed
        for bad, msg in ((lambda: y.add_(1), "Inplace update to inference tensor outside InferenceMode"),
                         (lambda: y.copy_(m.zeros(2)), "Inplace update to inference tensor outside InferenceMode"),
                         (lambda: y.__setitem__(0, 5.0), "Inplace update to inference tensor outside InferenceMode"),
                         (lambda: y.requires_grad_(), "Setting requires_grad=True on inference tensor"),
                         (lambda: m.nn.Parameter(y), "Setting requires_grad=True on inference tensor"),
                         (lambda: (m.ones(2, requires_grad=True) * y).sum(), "Inference tensors cannot be saved")):
            with pytest.raises(RuntimeError, match=msg):
                bad()
        lin = m.nn.Linear(2, 2)
        with m.inference_mode():
            out = lin(m.ones(1, 2))
        got += [out.is_inference(), out.requires_grad, lin.weight.is_inference()]
        script.append(got)
    assert script[0] == script[1]


@pytest.mark.parametrize("how", ["size", "sizes", "chunk"])
def test_split_is_one_node_of_several_views(how):
    """split / chunk: one node for all the pieces (PyTorch's SplitBackward0 / SplitWithSizesBackward0), the
    gradient of every piece in one concatenation, an unused piece's part zero, double backward through it."""
    x, y = pair((3, 7, 4), requires_grad=True, dtype="float64")
    grads, names = [], []
    for lib, t in ((tt, x), (torch, y)):
        p = t.split(3, 1) if how == "size" else t.split([2, 1, 4], 1) if how == "sizes" else t.chunk(3, 1)
        assert all(q.grad_fn is p[0].grad_fn for q in p)
        if lib is tt:
            assert [q._output_nr for q in p] == list(range(len(p)))
        names.append(p[0].grad_fn.name())
        loss = (p[0] * 2).sum() + (p[-1] ** 3).sum()  # the middle piece unused
        g, = lib.autograd.grad(loss, t, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), t)
        grads.append((g.detach(), gg))
    assert names[0] == names[1] == ("SplitWithSizesBackward0" if how == "sizes" else "SplitBackward0")
    assert_close(grads[0][0], grads[1][0])
    assert_close(grads[0][1], grads[1][1])


@pytest.mark.parametrize("lib_name", ["tinytorch", "torch"])
def test_inplace_into_a_split_piece_is_refused(lib_name):
    """PyTorch refuses an in-place write into a piece of split/chunk made in grad mode, before writing; without
    grad (no_grad, or a tensor that requires none) the write is allowed."""
    lib = tt if lib_name == "tinytorch" else torch
    x = lib.randn(3, 7, requires_grad=True)
    y = x * 1
    for pieces, name in ((y.split(3, 1), "Split"), (y.split([2, 5], 1), "SplitWithSizes"), (y.chunk(2, 1), "Split")):
        before = pieces[1].detach().clone()
        with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being modified inplace"):
            pieces[1].mul_(2)
        with pytest.raises(RuntimeError, match=f"Output 0 of {name} is a view"):
            pieces[0].copy_(lib.ones(pieces[0].shape))
        assert np.array_equal(pieces[1].detach().numpy(), before.numpy())
    with lib.no_grad():
        pieces = y.split(3, 1)
        pieces[0].mul_(2)
    z = lib.zeros(3, 7)
    z.split(3, 1)[0].add_(1)
    assert float(z.sum()) == 9.0
