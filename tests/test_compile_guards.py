"""A compiled training step replays its graph without running Python, so every Python value it reads is guarded
(``compiler/guards.py``): each case changes Python state between (or inside) calls and checks that the compiled
step, in the default mode and in ``reduce-overhead``, trains bit for bit the model eager trains, that it still
replays where the state holds still, and how often it recompiled."""
import copy
import random

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import nn
from tinytorch.nn import functional as F

STEPS = 14
CFG = {"scale": 1.0}
SCALE = 1.0
COUNTER = 0
ACT = F.relu


class EMA:
    """An exponential moving average of a model's parameters, as training scripts keep one."""

    def __init__(self, model, decay):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]

    def update(self, model):
        with tt.no_grad():
            for s, p in zip(self.shadow, model.parameters()):
                s.mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.drop, self.fc2 = nn.Linear(8, 16), nn.Dropout(0.1), nn.Linear(16, 4)
        self.scale = 1.0
        self.register_buffer("shift", tt.zeros(4))

    def forward(self, x):
        return self.fc2(self.drop(ACT(self.fc1(x)))) * self.scale + self.shift


def _data(n=6):
    g = tt.Generator().manual_seed(7)
    return tt.randn(n, 8, generator=g), tt.randint(0, 4, (n,), generator=g)


def _reset_globals():
    global SCALE, COUNTER, ACT
    SCALE, COUNTER, ACT = 1.0, 0, F.relu
    CFG["scale"] = 1.0


def _plain(opt_name="sgd", **kw):
    """A model, its optimizer and a step function reading no extra Python state."""
    model = Net()
    opt = {"sgd": lambda: tt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, **kw),
           "adam": lambda: tt.optim.Adam(model.parameters(), lr=1e-2, **kw),
           "adamw": lambda: tt.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1, **kw)}[opt_name]()

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


# Each case: setup() -> (model, step, change(i) called before step i, data(i)).
def case_step_lr():
    model, opt, step = _plain()
    sched = tt.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    return model, step, lambda i: sched.step() if i else None, None


def case_lr_in_param_groups():
    model, opt, step = _plain("adam")

    def change(i):
        if i == 6:
            opt.param_groups[0]["lr"] = 3e-3
    return model, step, change, None


def case_closure_list():
    model, opt, _ = _plain()
    scale = [1.0]

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * scale[0], y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        if i == 5:
            scale[0] = 2.5
    return model, step, change, None


def case_rebound_closure():
    model, opt, _ = _plain()
    temp = 1.0

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) / temp, y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        nonlocal temp
        if i in (4, 9):
            temp = temp * 2
    return model, step, change, None


def case_global():
    model, opt, _ = _plain()

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * SCALE, y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        global SCALE
        if i == 7:
            SCALE = 0.5
    return model, step, change, None


def case_counter_in_if():
    model, opt, _ = _plain()

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        if COUNTER >= 6:  # a warm-up phase decided by a Python counter
            out = out * 0.5
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        global COUNTER
        COUNTER = i
    return model, step, change, None


def case_clip_threshold():
    model, opt, _ = _plain()
    limit = {"max_norm": 5.0}

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * 3, y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), limit["max_norm"])
        opt.step()
        return loss

    def change(i):
        if i == 6:
            limit["max_norm"] = 0.05
    return model, step, change, None


def case_ema_decay():
    model, opt, step0 = _plain()
    ema = EMA(model, 0.9)

    def step(x, y):
        loss = step0(x, y)
        ema.update(model)
        return loss

    def change(i):
        if i == 5:
            ema.decay = 0.5
    model.ema = ema  # so the comparison sees the shadow weights too
    return model, step, change, None


def case_adamw_weight_decay():
    model, opt, step = _plain("adamw")

    def change(i):
        if i == 6:
            opt.param_groups[0]["weight_decay"] = 0.5
    return model, step, change, None


def case_momentum_and_betas():
    model, opt, step = _plain("adam")

    def change(i):
        if i == 5:
            opt.param_groups[0]["betas"] = (0.5, 0.9)
    return model, step, change, None


def case_train_eval():
    model, opt, _ = _plain()

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        if model.training:
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    def change(i):
        model.train(i % 5 != 4)
    return model, step, change, None


def case_freeze():
    model, _, step = _plain()

    def change(i):
        if i == 6:
            model.fc1.weight.requires_grad_(False)
            model.fc1.weight.grad = None
    return model, step, change, None


def case_replaced_buffer():
    model, _, step = _plain()

    def change(i):
        if i == 5:
            model.shift = tt.full((4,), 0.25)
        if i == 9:
            with tt.no_grad():
                model.shift.add_(1.0)  # in place: the replay reads the buffer's memory
    return model, step, change, None


def case_batch_size():
    model, _, step = _plain()
    return model, step, lambda i: None, lambda i: _data(6 if i < 7 else 3)


def case_load_state_dict():
    model, _, step = _plain()
    saved = {}

    def change(i):
        if i == 3:
            saved.update(copy.deepcopy(model.state_dict()))
        if i == 8:
            model.load_state_dict(saved)
    return model, step, change, None


def case_dropout_p():
    model, _, step = _plain()

    def change(i):
        if i == 6:
            model.drop.p = 0.5
    return model, step, change, None


def case_module_attribute():
    model, _, step = _plain()

    def change(i):
        if i == 4:
            model.scale = 0.3
    return model, step, change, None


def case_grad_accumulation():
    model, opt, _ = _plain()
    state = {"micro": 0}

    def step(x, y):
        loss = F.cross_entropy(model(x), y) / 2
        loss.backward()
        if state["micro"] % 2 == 1:
            opt.step()
            opt.zero_grad()
        return loss

    def change(i):
        state["micro"] = i
    return model, step, change, None


def case_counter_inside():
    """The function increments its own Python counter: a replay cannot, so it is never replayed."""
    model, opt, _ = _plain()
    state = {"n": 0}

    def step(x, y):
        state["n"] += 1
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * (1 + state["n"] % 3), y)
        loss.backward()
        opt.step()
        return loss
    return model, step, lambda i: None, None


def case_python_random():
    model, opt, _ = _plain()

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * random.random(), y)
        loss.backward()
        opt.step()
        return loss
    return model, step, lambda i: random.seed(i), None


def case_config_dict():
    model, opt, _ = _plain()

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * CFG["scale"], y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        if i == 5:
            CFG["scale"] = 4.0
    return model, step, change, None


def case_numpy_array():
    model, opt, _ = _plain()
    w = np.ones(4, np.float32)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x) * tt.tensor(w), y)
        loss.backward()
        opt.step()
        return loss

    def change(i):
        if i == 6:
            w[2] = 3.0
    return model, step, change, None


def case_global_function():
    model, _, step = _plain()

    def change(i):
        global ACT
        if i == 6:
            ACT = F.gelu
    return model, step, change, None




def _train(setup, mode):
    _reset_globals()
    tt.manual_seed(0)
    random.seed(0)
    model, step, change, data = setup()
    fn = step if mode == "eager" else tt.compile(step, mode=mode)
    losses = []
    for i in range(STEPS):
        change(i)
        x, y = data(i) if data else _data()
        tt.manual_seed(100 + i)
        losses.append(fn(x, y).item())
    state = [t.detach().numpy().copy() for t in model.parameters()] + [b.numpy().copy() for b in model.buffers()]
    if hasattr(model, "ema"):
        state += [s.numpy().copy() for s in model.ema.shadow]
    return losses, state, fn


def _cases():
    return {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


# replays expected: the state holds still for several calls in a row (not the cases whose Python runs each call)
NO_REPLAY = {"counter_inside", "python_random", "grad_accumulation", "train_eval", "counter_in_if"}


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
@pytest.mark.parametrize("case", sorted(n[5:] for n in dir() if n.startswith("case_")) + ["lr_read_by_the_step",
                                                                                        "per_step_schedule"])
def test_python_state_changes_train_as_eager(case, mode):
    want_losses, want_state, _ = _train(_cases()[case], "eager")
    losses, state, fn = _train(_cases()[case], mode)
    assert losses == want_losses
    for a, b in zip(state, want_state):
        assert np.array_equal(a, b)
    st = fn.stats()
    assert st["calls"] == STEPS
    if case in NO_REPLAY:
        return
    assert st["replays"] >= 3, st
    assert st["recompiles"] <= 3, st


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "adamw"])
def test_lr_schedule_is_a_graph_input(opt_name):
    """A learning rate that changes every step is an input of the graph (the fused optimizer kernels' hyperparameters
    are read from the group on each replay): one graph, no recompiles, no retraces, every call after the capture a
    replay, and the parameters bit for bit eager's."""
    results = []
    for compiled in (False, True):
        _reset_globals()
        tt.manual_seed(0)
        model, opt, step = _plain(opt_name)
        sched = tt.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=40)
        fn = tt.compile(step) if compiled else step
        x, y = _data()
        losses = []
        for _ in range(30):
            tt.manual_seed(1)
            losses.append(fn(x, y).item())
            sched.step()
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    assert results[0][0] == results[1][0]
    assert all(np.array_equal(a, b) for a, b in zip(results[0][1], results[1][1]))
    st = fn.stats()
    # SGD's first step makes the momentum buffers: a graph of its own; after it, one graph
    assert st["recompiles"] == (opt_name == "sgd") and st["retraces"] == 0, st
    assert st["replays"] >= 26, st


def case_lr_read_by_the_step():
    """The step reads the learning rate itself (a decay it applies by hand): that read is guarded by value, so a
    scheduled change runs the Python again."""
    model, opt, _ = _plain()
    sched = tt.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with tt.no_grad():
            for p in model.parameters():
                p.mul_(1 - opt.param_groups[0]["lr"] * 0.01)
        opt.step()
        return loss
    return model, step, lambda i: sched.step() if i else None, None


def case_per_step_schedule():
    model, opt, step = _plain("adamw")
    sched = tt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    return model, step, lambda i: sched.step() if i else None, None


def test_unguardable_state_runs_python_and_fullgraph_raises():
    it = iter(range(100))
    w = tt.ones(3)

    def f(x):
        return x * next(it) + w
    cf = tt.compile(f)
    got = [cf(tt.ones(3)).tolist() for _ in range(5)]
    assert got == [[1.0 + k] * 3 for k in range(5)]
    st = cf.stats()
    assert st["replays"] == 0 and "iterator" in st["unguardable"]
    with pytest.raises(tt.compiler.Unsupported, match=r"cannot be guarded.*range_iterator.*test_compile_guards.py:\d+"):
        tt.compile(f, fullgraph=True)(tt.ones(3))


def test_guard_failures_are_logged(caplog):
    tt.compiler.set_logs(recompiles=True, graph_breaks=True)
    try:
        scale = [1.0]
        cf = tt.compile(lambda x: x * scale[0])
        x = tt.ones(2)
        for _ in range(3):
            cf(x)
        scale[0] = 2.0
        with caplog.at_level("INFO", logger="tinytorch.compiler"):
            assert cf(x).tolist() == [2.0, 2.0]
        assert any("guard failed" in r.message and "scale" in r.message for r in caplog.records)
    finally:
        tt.compiler.set_logs(recompiles=False, graph_breaks=False)
    assert cf.__class__.__name__ in {type(c).__name__ for c in [cf]}
    assert any(s["calls"] == 4 for s in tt.compiler.stats().values())
