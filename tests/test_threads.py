"""Thread-local autograd state, as in PyTorch: grad mode, inference mode, autocast and saved-tensor hooks belong
to the thread that sets them, and a new thread starts with grad enabled, no autocast and no hooks.

Each behaviour test runs on both libraries (``m`` is tinytorch or torch): torch passing shows the test states
PyTorch's behaviour; tinytorch passing shows we match it. Barriers force the interleavings that a process-wide
switch gets wrong (one thread inside ``no_grad`` while the other runs forward and backward)."""
import threading

import numpy as np
import pytest
import torch

import tinytorch as tt

LIBS = pytest.mark.parametrize("m", [tt, torch], ids=["tinytorch", "torch"])
TIMEOUT = 60  # seconds a barrier waits before the test fails instead of hanging


def _run_threads(targets, names=None):
    """Run each callable in its own thread (named ``names[i]``); re-raise the first exception a thread raised."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the main thread below
                errors.append(e)
        return run
    threads = [threading.Thread(target=wrap(fn), name=None if names is None else names[i])
               for i, fn in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors:
        raise errors[0]


# ---------------------------------------------------------------- two trainings at once


def _make(m, seed):
    """A small MLP with NumPy-seeded weights (the same for both libraries and every run), its SGD optimizer,
    and its data."""
    rng = np.random.default_rng(seed)
    model = m.nn.Sequential(m.nn.Linear(6, 16), m.nn.Tanh(), m.nn.Linear(16, 3))
    with m.no_grad():
        for p in model.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = m.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    y = m.tensor(rng.standard_normal((8, 3)).astype(np.float32))
    return model, opt, x, y


def _train_step(m, model, opt, x, y):
    opt.zero_grad()
    loss = m.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def _evaluate(m, model, x):
    out = model(x)
    assert not out.requires_grad  # called under no_grad
    return out.sum().item()


STEPS = 6


def _sequential(m, seed, eval_first=True):
    model, opt, x, y = _make(m, seed)
    losses, evals = [], []
    for _ in range(STEPS):
        if not eval_first:
            losses.append(_train_step(m, model, opt, x, y))
        with m.no_grad():
            evals.append(_evaluate(m, model, x))
        if eval_first:
            losses.append(_train_step(m, model, opt, x, y))
    return [p.detach().numpy().copy() for p in model.parameters()], losses, evals


@LIBS
def test_two_threads_train_while_the_other_is_in_no_grad(m):
    """Each step, thread A evaluates under no_grad while thread B runs its forward, backward and optimizer
    step (held there by barriers), then the roles swap. Bit-identical to the same trainings run one after the
    other in the main thread."""
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    results = {}

    def worker(idx, seed, model, opt, x, y):
        def run():
            losses, evals = [], []
            try:
                for _ in range(STEPS):
                    for role in (0, 1):
                        if role == idx:  # evaluate: inside no_grad across the other thread's training step
                            with m.no_grad():
                                barrier.wait()
                                ev = _evaluate(m, model, x)
                                barrier.wait()
                        else:  # train while the other thread sits in no_grad
                            barrier.wait()
                            assert m.is_grad_enabled()
                            losses.append(_train_step(m, model, opt, x, y))
                            barrier.wait()
                    evals.append(ev)
            except BaseException:
                barrier.abort()  # release the other thread instead of leaving it to time out
                raise
            results[seed] = ([p.detach().numpy().copy() for p in model.parameters()], losses, evals)
        return run

    # models are built in the main thread (the default generator is process-wide, as PyTorch's)
    made = {s: _make(m, s) for s in (1, 2)}
    _run_threads([worker(i, s, *made[s]) for i, s in enumerate((1, 2))])
    assert m.is_grad_enabled()
    for idx, seed in enumerate((1, 2)):
        params, losses, evals = _sequential(m, seed, eval_first=idx == 0)  # thread 0 evaluates first each step
        tparams, tlosses, tevals = results[seed]
        assert tlosses == losses and tevals == evals
        for a, b in zip(tparams, params):
            assert np.array_equal(a, b)


def test_threaded_training_matches_torch():
    """The trainings themselves agree with torch's (a sanity check that the threaded runs compute the model)."""
    for seed in (1, 2):
        ours, ol, _ = _sequential(tt, seed)
        ref, rl, _ = _sequential(torch, seed)
        np.testing.assert_allclose(ol, rl, rtol=1e-5, atol=1e-6)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- grad mode


@LIBS
def test_overlapping_no_grad_blocks_leave_grad_enabled(m):
    """A enters no_grad, B enters, A leaves, B leaves: with one process-wide flag B would restore 'off'."""
    for _ in range(20):
        barrier = threading.Barrier(2, timeout=TIMEOUT)
        seen = []

        def first():
            with m.no_grad():
                barrier.wait()  # 1: both inside
                barrier.wait()  # 2
            barrier.wait()  # 3: A has left, B still inside
            seen.append(m.is_grad_enabled())
            barrier.wait()  # 4: B has left
            seen.append(m.is_grad_enabled())

        def second():
            barrier.wait()  # 1
            with m.no_grad():
                barrier.wait()  # 2
                barrier.wait()  # 3
                seen.append(m.is_grad_enabled())
            barrier.wait()  # 4
            seen.append(m.is_grad_enabled())

        _run_threads([first, second])
        assert sorted(seen) == [False, True, True, True]
        assert m.is_grad_enabled()
        x = m.ones(2, requires_grad=True)
        assert (x * 2).requires_grad


@LIBS
def test_new_thread_starts_with_grad_enabled(m):
    seen = {}
    x = m.ones(2, requires_grad=True)

    def probe():
        seen["grad"] = m.is_grad_enabled()
        seen["inference"] = m.is_inference_mode_enabled()
        seen["records"] = (x * 2).requires_grad

    with m.no_grad():
        _run_threads([probe])
        assert not m.is_grad_enabled()
    assert seen == {"grad": True, "inference": False, "records": True}
    with m.inference_mode():
        _run_threads([probe])
        assert m.is_inference_mode_enabled()
    assert seen == {"grad": True, "inference": False, "records": True}


@LIBS
def test_set_grad_enabled_in_a_thread_stays_in_that_thread(m):
    done = threading.Event()
    release = threading.Event()
    inner = {}

    def switch_off():
        m.set_grad_enabled(False)
        done.set()
        release.wait(TIMEOUT)
        inner["grad"] = m.is_grad_enabled()

    t = threading.Thread(target=switch_off)
    t.start()
    done.wait(TIMEOUT)
    try:
        assert m.is_grad_enabled()
    finally:
        release.set()
        t.join(TIMEOUT)
    assert inner == {"grad": False}


@LIBS
def test_inference_tensors_cross_threads(m):
    """An inference tensor made in one thread is still one in another (the check is not thread-local)."""
    box = {}

    def make():
        with m.inference_mode():
            box["t"] = m.ones(3)

    _run_threads([make])
    t = box["t"]
    assert t.is_inference()
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        t.add_(1)


# ---------------------------------------------------------------- autocast


@LIBS
def test_autocast_in_one_thread_does_not_affect_another(m):
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    seen = {}
    a = m.ones(4, 4)

    def inside():
        with m.autocast("cpu", dtype=m.bfloat16):
            barrier.wait()  # 1: other thread runs its matmul now
            seen["inside"] = (a @ a).dtype
            seen["inside_enabled"] = m.is_autocast_enabled("cpu")
            barrier.wait()  # 2

    def outside():
        barrier.wait()  # 1
        seen["outside"] = (a @ a).dtype
        seen["outside_enabled"] = m.is_autocast_enabled("cpu")
        barrier.wait()  # 2

    _run_threads([inside, outside])
    assert seen == {"inside": m.bfloat16, "inside_enabled": True, "outside": m.float32, "outside_enabled": False}


@LIBS
def test_new_thread_starts_without_autocast(m):
    seen = {}
    a = m.ones(4, 4)

    def probe():
        seen["enabled"] = m.is_autocast_enabled("cpu")
        seen["dtype"] = (a @ a).dtype
        seen["cpu_dtype"] = m.get_autocast_dtype("cpu")

    m.set_autocast_dtype("cpu", m.float16)
    try:
        with m.autocast("cpu", dtype=m.float16):
            _run_threads([probe])
            assert (a @ a).dtype == m.float16
    finally:
        m.set_autocast_dtype("cpu", m.bfloat16)
    assert seen == {"enabled": False, "dtype": m.float32, "cpu_dtype": m.bfloat16}


# ---------------------------------------------------------------- saved-tensor hooks


@LIBS
def test_saved_tensor_hooks_are_per_thread(m):
    """Hooks active in one thread do not pack the tensors another thread saves meanwhile, and that other thread
    may enter disable_saved_tensors_hooks (which refuses to nest inside active hooks)."""
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    packers = []

    def pack(t):
        packers.append(threading.current_thread().name)
        return t

    def hooked():
        x = m.ones(3, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            barrier.wait()  # 1: the other thread records its graph now, while these hooks are active
            barrier.wait()  # 2
            (x * x).sum().backward()

    def other():
        x = m.ones(3, requires_grad=True)
        barrier.wait()  # 1
        (x * x).sum().backward()
        with m.autograd.graph.disable_saved_tensors_hooks("off here"):
            (x * x).sum().backward()
        barrier.wait()  # 2

    _run_threads([hooked, other], names=["hooked", "other"])
    assert packers and set(packers) == {"hooked"}


# ---------------------------------------------------------------- default device


@LIBS
def test_default_device_is_per_thread(m):
    """``set_default_device`` and ``with torch.device(...)`` affect only the calling thread, as in PyTorch (the
    default dtype, by contrast, is process-wide in both)."""
    seen = {}

    def probe(key):
        def run():
            seen[key] = (str(m.empty(1).device), str(m.get_default_device()))
        return run

    try:
        m.set_default_device("meta")
        _run_threads([probe("set")])
        assert m.empty(1).device.type == "meta"
    finally:
        m.set_default_device(None)
    with m.device("meta"):
        _run_threads([probe("with")])
        assert m.zeros(2).device.type == "meta"
    assert m.zeros(2).device.type == "cpu"
    assert seen == {"set": ("cpu", "cpu"), "with": ("cpu", "cpu")}
