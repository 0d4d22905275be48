"""tinytorch.compile and torch.jit: compiled against eager (and against PyTorch) on the op database, on training
steps of every model family, guards, graph breaks, fullgraph errors, the generated kernels' disk cache, devices."""
import copy
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.compiler import Unsupported, codegen_cpp  # noqa: F401
from conftest import assert_close, torch
from op_db import OPS
from test_ops import make_inputs, run_both, summation_bounds, assert_within, UNIT_ROUNDOFF

HAS_OPENCL = tt.opencl.is_available()


# ---- the op database, compiled ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["cpu", "mydev"])
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_compiled_forward_matches_torch(op, device):
    f = tt.compile(lambda *xs: op.fn(tt, *xs))
    for dtype in op.dtypes:
        for shapes in op.shapes:
            xs, ys = make_inputs(op, shapes, dtype, True, False)
            xs = [x.to(device) for x in xs]
            try:
                expected = op.fn(torch, *ys)
            except Exception as e:  # the same bad input must raise the same exception type, compiled too
                with pytest.raises(type(e)):
                    f(*xs)
                continue
            got = f(*xs)
            msg = f"compiled {op.name} {dtype} {shapes}"
            if op.multilinear and dtype in UNIT_ROUNDOFF:
                assert_within(got.cpu(), expected, dtype, op, summation_bounds(op, ys)[0], msg)
            else:
                assert_close(got.cpu(), expected, dtype, op.rtol, op.atol, msg=msg)


@pytest.mark.parametrize("op", [o for o in OPS if o.grad], ids=lambda o: o.name)
def test_compiled_backward_matches_torch(op):
    """Forward and backward inside one compiled function: the autograd engine's ops are captured too."""
    def fb(w, *xs):
        out = op.fn(tt, *xs)
        (out * w.to(out.dtype)).sum().backward()
        return out
    f = tt.compile(fb)
    for dtype in [d for d in op.dtypes if d in ("float32", "float64")]:
        for shapes in op.shapes:
            xs, ys = make_inputs(op, shapes, dtype, noncontig=True, requires_grad=False)
            xs = [x.requires_grad_(x.is_floating_point() and i not in op.int_inputs) for i, x in enumerate(xs)]
            ys = [y.requires_grad_(y.is_floating_point() and i not in op.int_inputs) for i, y in enumerate(ys)]
            try:
                expected = op.fn(torch, *ys)
            except RuntimeError:
                continue
            if not expected.requires_grad:
                continue
            w = np.random.default_rng(7).standard_normal(tuple(expected.shape))
            f(tt.tensor(w), *xs)
            (expected * torch.tensor(w).to(expected.dtype)).sum().backward()
            bounds = summation_bounds(op, ys, w) if op.multilinear else [None] * len(ys)
            for i, (x, y) in enumerate(zip(xs, ys)):
                if y.grad is None:
                    continue
                assert x.grad is not None, f"{op.name}: missing grad for input {i}"
                msg = f"compiled {op.name} grad {i} {dtype} {shapes}"
                if bounds[i] is not None:
                    assert_within(x.grad, y.grad, dtype, op, bounds[i], msg)
                else:
                    assert_close(x.grad, y.grad, dtype, op.rtol, op.atol, msg=msg)


# ---- whole training steps ------------------------------------------------------------------------------------
class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, bias=False)  # BatchNorm follows: a bias would only get rounding noise
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class LSTMNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, batch_first=True)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 16)
        self.pos = nn.Parameter(tt.zeros(5, 16))
        self.block = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True, norm_first=True)
        self.ln = nn.LayerNorm(16)
        self.head = nn.Linear(16, 10)

    def forward(self, idx):
        T = idx.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        x = self.emb(idx) + self.pos[:T]
        return self.head(self.ln(self.block(x, src_mask=mask, is_causal=True))).flatten(0, 1)


def _family(name):
    g = tt.Generator().manual_seed(1)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 10))
        x = tt.randn(16, 12, generator=g)
    elif name == "cnn":
        model = CNN()
        x = tt.randn(8, 1, 8, 8, generator=g)
    elif name == "lstm":
        model = LSTMNet()
        x = tt.randn(4, 5, 6, generator=g)
    else:
        model = TinyGPT()
        x = tt.randint(0, 10, (3, 5), generator=g)
    n = x.shape[0] * (5 if name == "gpt" else 1)
    y = tt.randint(0, 10, (n,), generator=g)
    return model, x, y


def _step_fn(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
@pytest.mark.parametrize("family", ["mlp", "cnn", "lstm", "gpt"])
def test_training_step_compiled_equals_eager(family, mode):
    """The same seed, the same kernels: a compiled step gives eager's parameters bit for bit (dropout included).
    The CNN within 1e-5: its first compiled call gives a convolution's intermediate the contiguous layout before
    the kernel's own layout is learned, so a few sums run in another order (ulps) on that call."""
    tt.manual_seed(0)
    model, x, y = _family(family)
    twin = copy.deepcopy(model)
    opt = tt.optim.Adam(model.parameters(), lr=1e-2)
    opt2 = tt.optim.Adam(twin.parameters(), lr=1e-2)
    step = tt.compile(_step_fn(model, opt), mode=mode)
    eager = _step_fn(twin, opt2)
    steps = 100
    for i in range(steps):
        tt.manual_seed(i)
        a = step(x, y)
        tt.manual_seed(i)
        b = eager(x, y)
        if family != "cnn":
            assert a.item() == b.item(), f"{family} step {i}: {a.item()} != {b.item()}"
    if mode:  # a static step (dropout's draws are graph nodes): replayed
        assert step.replays > 0
    same = np.array_equal if family != "cnn" else lambda u, v: np.allclose(u, v, rtol=1e-5, atol=1e-7)
    for (n, p), q in zip(model.named_parameters(), twin.parameters()):
        assert same(p.detach().numpy(), q.detach().numpy()), n
    for b1, b2 in zip(model.buffers(), twin.buffers()):
        assert same(b1.numpy(), b2.numpy())


def test_reduce_overhead_replays_a_static_step():
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 10))
    twin = copy.deepcopy(model)
    opt, opt2 = tt.optim.SGD(model.parameters(), lr=0.1), tt.optim.SGD(twin.parameters(), lr=0.1)
    step = tt.compile(_step_fn(model, opt), mode="reduce-overhead")
    eager = _step_fn(twin, opt2)
    x, y = tt.randn(16, 12), tt.randint(0, 10, (16,))
    for _ in range(10):
        assert step(x, y).item() == eager(x, y).item()
    # call 1 starts with no .grad, calls 2 and 3 with one: the same graph twice from call 3, replays from call 4
    assert step.replays == 7
    for p, q in zip(model.parameters(), twin.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
        assert np.array_equal(p.grad.numpy(), q.grad.numpy())
    # zero_grad outside the compiled function: the .grad state is guarded
    opt.zero_grad()
    opt2.zero_grad()
    assert step(x, y).item() == eager(x, y).item()


@pytest.mark.parametrize("device", ["cpu"] + (["opencl"] if HAS_OPENCL else []))
def test_replay_restores_scratch_buffers_and_reads_views_of_parameters(device):
    """A buffer the function makes and fills in place (zeros, then an accumulating write) starts from its made
    value on every replay; a view of a parameter made each call reads the parameter's current memory."""
    w = nn.Parameter(tt.randn(4, 3, device=device), requires_grad=False)

    def f(x, idx):
        buf = tt.zeros(5, 3, device=device)
        buf.index_add_(0, idx, x)  # reads what the buffer held
        buf.index_add_(0, idx, x)
        return (buf[:4] * w.t().t()).sum(1)
    cf = tt.compile(f, mode="reduce-overhead")
    idx = tt.tensor([0, 2, 2, 4], device=device)
    for i in range(6):
        x = tt.full((4, 3), float(i), device=device)
        with tt.no_grad():
            w.mul_(1.5)
        assert np.array_equal(cf(x, idx).detach().cpu().numpy(), f(x, idx).detach().cpu().numpy()), i
    assert cf.replays >= 2


def test_dropout_draws_are_graph_nodes_and_replays_draw_anew():
    """Dropout's draws are recorded as nodes: they happen when the graph runs, in eager's order, so a replay draws
    fresh numbers from the generator, the same numbers eager draws after the same seed."""
    f = lambda x: F.dropout(x, 0.5) * 3  # noqa: E731
    cf = tt.compile(f, mode="reduce-overhead")
    x = tt.ones(100)
    tt.manual_seed(0)
    outs = [cf(x).numpy().copy() for _ in range(6)]
    tt.manual_seed(0)
    want = [f(x).numpy().copy() for _ in range(6)]
    assert cf.replays >= 3
    assert all(np.array_equal(a, b) for a, b in zip(outs, want))
    assert not np.array_equal(outs[3], outs[4])


def test_host_draws_are_never_replayed_and_keep_eager_order():
    def f(x):
        a = F.dropout(x, 0.5)  # recorded
        return a + tt.randn(x.shape)  # drawn on the host: the recorded draw runs first
    cf = tt.compile(f, mode="reduce-overhead")
    x = tt.ones(50)
    tt.manual_seed(1)
    got = [cf(x).numpy().copy() for _ in range(5)]
    tt.manual_seed(1)
    want = [f(x).numpy().copy() for _ in range(5)]
    assert cf.replays == 0
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_new_batch_size_and_eval_recapture():
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
    cm = tt.compile(model)
    for mode in (None, "reduce-overhead"):
        cm = tt.compile(model, mode=mode)
        for n in (3, 5, 3):
            x = tt.randn(n, 4)
            model.eval()
            assert np.array_equal(cm(x).detach().numpy(), model(x).detach().numpy())
        model.train()
        tt.manual_seed(3)
        a = cm(x)
        tt.manual_seed(3)
        assert np.array_equal(a.detach().numpy(), model(x).detach().numpy())
    assert isinstance(cm, nn.Module) and set(cm.state_dict()) == {"_orig_mod." + k for k in model.state_dict()}


def test_default_mode_sees_python_state():
    scale = [2.0]
    calls = {"n": 0}

    def f(x):
        calls["n"] += 1
        if calls["n"] % 2:  # a step counter in an if
            return x * scale[0]
        return x - scale[0]
    cf = tt.compile(f)
    x = tt.ones(3)
    assert cf(x).tolist() == [2.0] * 3
    assert cf(x).tolist() == [-1.0] * 3
    scale[0] = 5.0  # a changed closure value
    assert cf(x).tolist() == [5.0] * 3
    assert cf(x).tolist() == [-4.0] * 3


def test_graph_breaks_give_eager_results():
    def f(x):
        y = x.exp()
        s = y.sum().item()  # a host value in the middle
        if y.max() > 2:  # a data-dependent branch
            y = y * 2
        idx = (y > 3).nonzero()  # a data-dependent shape
        return y / s, idx, y[y > 3]
    cf = tt.compile(f)
    x = tt.tensor([0.1, 1.0, 1.5, -1.0])
    got, want = cf(x), f(x)
    for g, w in zip(got, want):
        assert np.array_equal(g.numpy(), w.numpy())
    assert len(cf.breaks) >= 3
    reasons = " ".join(r for r, _ in cf.breaks)
    assert "item" in reasons and "nonzero" in reasons


def test_fullgraph_names_the_op_and_line():
    def f(x):
        y = x + 1
        return y.sum().item()
    with pytest.raises(Unsupported, match=r"item.*test_compile.py:\d+"):
        tt.compile(f, fullgraph=True)(tt.ones(2))
    assert tt.compile(lambda x: (x + 1).relu(), fullgraph=True)(tt.ones(2)).tolist() == [2.0, 2.0]


def test_recompile_limit_warns_and_runs_eagerly():
    f = tt.compile(lambda x: x * 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for k in range(1, 13):  # a new shape each call: a new graph each call
            assert f(tt.ones(k)).tolist() == [2.0] * k
    assert any("cache_size_limit" in str(m.message) for m in w)
    assert f.eager


def test_float_scalars_are_read_each_call():
    """A learning rate from a scheduler or a float argument changing every call is not part of the graph's key:
    one graph, every call with its own values, as eager."""
    tt.manual_seed(0)
    m = nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 3))
    twin = copy.deepcopy(m)
    opts = [tt.optim.Adam(mm.parameters(), lr=1e-2) for mm in (m, twin)]
    scheds = [tt.optim.lr_scheduler.CosineAnnealingLR(o, T_max=50) for o in opts]

    def step_of(model, opt):
        def step(x, y, s):
            opt.zero_grad()
            loss = F.cross_entropy((model(x) * s + 0.5) / s, y)
            loss.backward()
            opt.step()
            return loss
        return step
    step, eager = tt.compile(step_of(m, opts[0])), step_of(twin, opts[1])
    x, y = tt.randn(8, 10), tt.randint(0, 3, (8,))
    for i in range(20):
        assert step(x, y, 1.0 + i * 0.1).item() == eager(x, y, 1.0 + i * 0.1).item()
        for s in scheds:
            s.step()
    assert len(step.graphs) <= 2 and not step.eager


def test_compile_api_surface():
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        tt.compile(lambda x: x, mode="fast")
    m = nn.Linear(3, 2)
    assert tt.compile(m, disable=True) is m
    deco = tt.compile(mode="reduce-overhead")(lambda x: x + 1)
    assert deco(tt.ones(1)).tolist() == [2.0]
    m.compile()
    x = tt.randn(4, 3)
    assert np.array_equal(m(x).detach().numpy(), F.linear(x, m.weight, m.bias).detach().numpy())
    assert not tt.compiler.is_compiling()
    seen = []
    tt.compile(lambda x: seen.append(tt.compiler.is_compiling()) or x)(tt.ones(1))
    assert seen == [True]


def test_compiled_module_backward_is_one_node():
    """compile(module) with grad on: the autograd engine sees one node for the region, whose backward is a
    compiled graph; gradients reach the parameters and an input that requires grad, as eager's."""
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.GELU(), nn.LayerNorm(7), nn.Linear(7, 3))
    twin = copy.deepcopy(model)
    cm = tt.compile(model)
    for _ in range(3):
        x = tt.randn(4, 5)
        x1, x2 = (x * 1.0).requires_grad_(), (x * 1.0).requires_grad_()
        out = cm(x1 * 2)
        assert out.grad_fn.name() == "CompiledFunctionBackward"
        out.pow(2).sum().backward()
        twin(x2 * 2).pow(2).sum().backward()
        assert np.array_equal(x1.grad.numpy(), x2.grad.numpy())
    for p, q in zip(model.parameters(), twin.parameters()):
        assert np.array_equal(p.grad.numpy(), q.grad.numpy())
    with tt.no_grad():
        assert cm(x).grad_fn is None


# ---- devices ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", ["mydev"] + (["opencl"] if HAS_OPENCL else []))
def test_training_step_on_other_devices(device):
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 10)).to(device)
    twin = copy.deepcopy(model)
    opt, opt2 = tt.optim.SGD(model.parameters(), lr=0.1), tt.optim.SGD(twin.parameters(), lr=0.1)
    x, y = tt.randn(8, 12).to(device), tt.randint(0, 10, (8,)).to(device)
    for mode in (None, "reduce-overhead"):
        step = tt.compile(_step_fn(model, opt), mode=mode)
        eager = _step_fn(twin, opt2)
        for _ in range(6):
            assert step(x, y).item() == eager(x, y).item()
        assert not step.breaks  # the loss's target check reads the batch on the host: no graph break
        if mode:
            assert step.replays > 0
    for p, q in zip(model.parameters(), twin.parameters()):
        assert np.array_equal(p.detach().cpu().numpy(), q.detach().cpu().numpy())


@pytest.mark.parametrize("device", ["cpu"] + (["opencl"] if HAS_OPENCL else []))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_elementwise_runs_match_eager_bit_for_bit(device, dtype):
    """Chains of the fusable ops (vertical and horizontal, with Python and 0-dim tensor scalars) run as one
    generated kernel per run (C++ on cpu, OpenCL C on opencl) and round as the unfused kernels do."""
    import tinytorch.compiler.graph as G
    dt = getattr(tt, dtype)

    def f(x, y, m, s):
        a = (x * y + x) / 0.9
        b = tt.relu(a - y) * m
        c = tt.maximum(b, -a).neg().abs() + s
        d = tt.minimum(c.sqrt(), c.rsqrt()).reciprocal()
        return b, d * 2
    g = tt.Generator().manual_seed(0)
    x, y, m = [tt.randn(64, 33, generator=g).to(dt).to(device) for _ in range(3)]
    s = tt.tensor(0.25, dtype=dt).to(device)
    cf = tt.compile(f)
    for _ in range(2):
        got, want = cf(x, y, m, s), f(x, y, m, s)
    for a, b in zip(got, want):
        assert np.array_equal(a.cpu().numpy(), b.cpu().numpy(), equal_nan=True)
    plan = [p for p in G._CACHE.values()][-1]
    assert plan.fused >= 1 and plan.fused_nodes >= 8, plan.describe()


# ---- the IR ---------------------------------------------------------------------------------------------------
def _recorded(fn, *args):
    """``fn(*args)`` run as one graph: (its result, the recording, the graph's Plan)."""
    from tinytorch.compiler import lazy
    lazy._bind_tensor()
    rec = lazy.Recording()
    out = rec.run(fn, *args)
    return out, rec, rec.plans[-1]


@pytest.mark.parametrize("n", [10, 1000])  # unfused kernels, a fused run (its generated kernel reads the floats)
def test_a_plan_reads_float_consts_from_the_nodes_it_runs_on(n):
    """A float is not part of a graph's cache key: the Plan reads it from the nodes given to ``Plan.run``, so
    ``ir.with_consts`` runs a cached plan with other values, and leaves the recorded nodes as they were."""
    from tinytorch.compiler import ir
    x = tt.linspace(-1, 1, n)
    out, rec, plan = _recorded(lambda x: (x * 0.5 + 2.0).relu(), x)
    j = next(j for j, node in enumerate(rec.last_nodes) if node.name == "mul")
    assert rec.last_nodes[j].args[1] == ir.Const(0.5)
    nodes = ir.with_consts(rec.last_nodes, {(j, 1): -3.0})
    bufs = plan.run(rec.last_ext, nodes)
    got = out._storage.backend.to_numpy(bufs[out._storage.slot])
    assert np.array_equal(got, (x * -3.0 + 2.0).relu().numpy())
    assert rec.last_nodes[j].args[1].value == 0.5 and nodes[j].args[1].value == -3.0


def test_with_consts_replaces_a_float_attribute():
    """A float attribute of a node (the learning rate of a fused optimizer update) is read from the nodes too."""
    from tinytorch.compiler import ir
    w, twin = nn.Parameter(tt.ones(4)), nn.Parameter(tt.ones(4))
    w.grad, twin.grad = tt.full((4,), 2.0), tt.full((4,), 2.0)
    opt, eager = tt.optim.SGD([w], lr=0.1), tt.optim.SGD([twin], lr=0.1)
    _, rec, plan = _recorded(opt.step)
    j = next(j for j, node in enumerate(rec.last_nodes) if node.kind == "mutate")
    plan.run(rec.last_ext, ir.with_consts(rec.last_nodes, {(j, "lr"): 0.25}))
    eager.step()
    eager.param_groups[0]["lr"] = 0.25
    eager.step()
    assert np.array_equal(w.detach().numpy(), twin.detach().numpy())
    assert rec.last_nodes[j].kwargs["lr"] == 0.1


@pytest.mark.parametrize("device", ["cpu"] + (["opencl"] if HAS_OPENCL else []))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_transcendental_runs_match_eager_bit_for_bit(device, dtype):
    """exp, tanh, sigmoid, GELU (both approximations) and log in a fused run: vec_math.h's polynomials (or libm,
    or the OpenCL builtins) round in the fused kernel as in the unfused one, no multiply-add contracted in
    either, so the compiled result equals eager to the last bit."""
    import tinytorch.compiler.graph as G
    if device == "cpu" and not codegen_cpp.available():
        pytest.skip("no C++ code generator here (no compiler, or TINYTORCH_NATIVE=0): plans run unfused")
    dt = getattr(tt, dtype)

    def f(x, w, b, y):
        h = F.gelu(x @ w + b) * y
        s = tt.sigmoid(h) * h
        t = tt.tanh(s) + 1
        g = F.gelu(t - y, approximate="tanh")
        return g, (g.abs() + 0.5).log() - (-s).exp()
    g = tt.Generator().manual_seed(1)
    x, y = [(tt.randn(64, 40, generator=g) * 3).to(dt).to(device) for _ in range(2)]
    w, b = tt.randn(40, 40, generator=g).to(dt).to(device) * 0.5, tt.randn(40, generator=g).to(dt).to(device)
    y[0, :4] = tt.tensor([float("nan"), float("inf"), -float("inf"), -0.0], dtype=dt)
    cf = tt.compile(f)
    for _ in range(2):
        got, want = cf(x, w, b, y), f(x, w, b, y)
    for a, e in zip(got, want):
        # to the last bit and the sign of zero; a NaN's sign is the operand order the compiler chose (x86 keeps
        # the first operand's NaN, and a + b may be emitted as b + a), as in the eager kernels' own loop paths
        a, e = a.cpu().numpy(), e.cpu().numpy()
        nan = np.isnan(e)
        assert np.array_equal(np.isnan(a), nan) and a[~nan].tobytes() == e[~nan].tobytes()
    plan = [p for p in G._CACHE.values()][-1]
    names = " ".join(st.name for st in plan.steps if st.kind == "fused")
    assert plan.fused >= 1 and plan.fused_nodes >= 12, plan.describe()
    # the opencl backend records gelu as its decomposition (erf, tanh, mul ...)
    for op in ("sigmoid", "tanh", "exp", "log") + (("gelu",) if device == "cpu" else ()):
        assert f"_{op}_" in names, (op, names)


def test_no_generated_kernels_without_the_native_kernels():
    """With TINYTORCH_NATIVE=0 eager runs NumPy's kernels, whose exp and tanh round as NumPy does, not as the
    native loops the fused kernels copy: tinytorch.compile then runs the recorded kernels one by one."""
    code = ("import warnings; warnings.simplefilter('ignore')\n"
            "import numpy as np, tinytorch as tt\n"
            "import tinytorch.compiler.graph as G\n"
            "from tinytorch.compiler import codegen_cpp\n"
            "f = lambda x: tt.tanh(tt.sigmoid(x) * x).exp() + 1\n"
            "x = tt.randn(64, 64)\n"
            "cf = tt.compile(f)\n"
            "same = all(np.array_equal(cf(x).numpy(), f(x).numpy()) for _ in range(2))\n"
            "print(codegen_cpp.available(), same, sum(p.fused for p in G._CACHE.values()))\n")
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TINYTORCH_NATIVE="0"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True", "0"], r.stdout


# ---- torch.jit ------------------------------------------------------------------------------------------------
def test_jit_trace_graph_and_values():
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    x = tt.randn(3, 4)
    traced = tt.jit.trace(model, x)
    g = str(traced.graph)
    assert "linear" in g and "relu" in g
    for n in (3, 6):
        x = tt.randn(n, 4)
        assert np.array_equal(traced(x).detach().numpy(), model(x).detach().numpy())
    f = tt.jit.trace(lambda a, b: (a * b).sum(1), (tt.ones(2, 3), tt.ones(2, 3)))
    assert f(tt.ones(2, 3), tt.full((2, 3), 2.0)).tolist() == [6.0, 6.0]
    scripted = tt.jit.script(model)
    assert np.array_equal(scripted(x).detach().numpy(), model(x).detach().numpy())
    with pytest.raises(NotImplementedError, match="state_dict"):
        tt.jit.save(traced, "/nonexistent/m.pt")


# ---- the generated kernels' disk cache ---------------------------------------------------------------------------
_FUSED = """
import json, numpy as np, tinytorch as tt
from tinytorch.compiler import codegen_cpp
f = tt.compile(lambda x, y: ((x * y + x) / 3.0 - y).relu())
x, y = tt.linspace(-2, 2, 1000), tt.linspace(1, 3, 1000)
got = f(x, y)
want = ((x * y + x) / 3.0 - y).relu()
print(json.dumps(dict(codegen_cpp.stats, same=bool(np.array_equal(got.numpy(), want.numpy())))))
"""


def _run_fused(cache):
    env = dict(os.environ, TINYTORCH_CACHE_DIR=str(cache))
    r = subprocess.run([sys.executable, "-c", _FUSED], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not tt.compiler.codegen_cpp.available(), reason="no C++ compiler: plans run unfused")
def test_kernel_cache_is_shared_between_processes_and_rebuilt_when_corrupt(tmp_path):
    first = _run_fused(tmp_path)
    assert first["same"] and first["compiled"] == 1 and first["disk_hits"] == 0
    second = _run_fused(tmp_path)
    assert second["same"] and second["compiled"] == 0 and second["disk_hits"] == 1
    libs = list((tmp_path / "kernels").glob("*.so"))
    assert len(libs) == 1
    libs[0].write_bytes(b"not a shared library")
    third = _run_fused(tmp_path)
    assert third["same"] and third["compiled"] == 1
    # two processes compiling the same kernel at once into an empty cache: both load a whole library
    empty = tmp_path / "race"
    env = dict(os.environ, TINYTORCH_CACHE_DIR=str(empty))
    procs = [subprocess.Popen([sys.executable, "-c", _FUSED], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0 and '"same": true' in out
    assert len(list((empty / "kernels").glob("*.so"))) == 1
    assert not list((empty / "kernels").glob("*.part"))
