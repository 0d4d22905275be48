"""torch.distributed through the in-process ``threaded`` backend (N ranks as N threads, no MPI): the collectives
against NumPy, the Work/Future handles, Backend.register_backend, DDP against one process on the concatenated
batches, and DDP's communication hooks. Fast: every world here lives in this pytest process."""
import datetime
import os
import re

import numpy as np
import pytest

import tinytorch as torch
import tinytorch.distributed as dist
from tinytorch.distributed._threaded_pg import spawn_threads
from tinytorch.distributed.algorithms.ddp_comm_hooks import default_hooks
from tinytorch.nn.parallel import DistributedDataParallel as DDP

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _in_world(fn, n=3, timeout=None):
    """Run ``fn(rank, n)`` on n threaded ranks, each inside its own default group."""
    def body(rank, size):
        kw = {} if timeout is None else {"timeout": timeout}
        dist.init_process_group("threaded", rank=rank, world_size=size, **kw)
        try:
            return fn(rank, size)
        finally:
            dist.destroy_process_group()
    return spawn_threads(n, body)


def _data(rank, shape=(2, 3), dtype=np.float64):
    return np.random.default_rng(rank).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_match_numpy(n):
    def body(r, n):
        out = {}
        for op, fn in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
                       (dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.AVG, np.mean)]:
            t = torch.tensor(_data(r))
            dist.all_reduce(t, op=op)
            out[op] = t.numpy()
        ints = torch.tensor(np.arange(6) * (r + 1))
        dist.all_reduce(ints, op=dist.ReduceOp.BXOR)
        flags = torch.tensor([r == 0, False, True])
        dist.all_reduce(flags)  # a bool SUM is a logical or
        half = torch.tensor(_data(r), dtype=torch.float16)
        dist.all_reduce(half)
        b = torch.tensor(_data(r))
        dist.broadcast(b, src=n - 1)
        red = torch.tensor(_data(r))
        dist.reduce(red, dst=1)
        lst = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
        dist.all_gather(lst, torch.tensor(_data(r)))
        cat = torch.zeros(2 * n, 3, dtype=torch.float64)
        dist.all_gather_into_tensor(cat, torch.tensor(_data(r)))
        rs = torch.zeros(2, 3, dtype=torch.float64)
        dist.reduce_scatter_tensor(rs, torch.tensor(_data(r, (2 * n, 3))))
        rs2 = torch.zeros(2, 3, dtype=torch.float64)
        dist.reduce_scatter(rs2, [torch.tensor(x) for x in _data(r, (n, 2, 3))])
        g = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)] if r == 0 else None
        dist.gather(torch.tensor(_data(r)), g, dst=0)
        sc = torch.zeros(3, dtype=torch.float64)
        dist.scatter(sc, [torch.full((3,), float(k)) .double() for k in range(n)] if r == 1 else None, src=1)
        # all_to_all_single with uneven splits: rank r sends k + 1 rows of value 10 r + k to rank k
        send = torch.tensor(np.concatenate([np.full(k + 1, 10.0 * r + k) for k in range(n)]))
        recv = torch.zeros(n * (r + 1), dtype=torch.float64)
        dist.all_to_all_single(recv, send, [r + 1] * n, [k + 1 for k in range(n)])
        objs = [None] * n
        dist.all_gather_object(objs, {"rank": r, "s": "x" * r})
        lst_b = [f"from{r}", r] if r == 0 else [None, None]
        dist.broadcast_object_list(lst_b, src=0)
        dist.barrier()
        return out, ints.numpy(), flags.numpy(), half.float().numpy(), b.numpy(), red.numpy(), \
            [t.numpy() for t in lst], cat.numpy(), rs.numpy(), rs2.numpy(), g and [t.numpy() for t in g], \
            sc.numpy(), recv.numpy(), objs, lst_b

    res = _in_world(body, n)
    every = np.stack([_data(r) for r in range(n)])
    for r, (out, ints, flags, half, b, red, lst, cat, rs, rs2, g, sc, recv, objs, lst_b) in enumerate(res):
        for op, fn in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max), (dist.ReduceOp.MIN, np.min),
                       (dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.AVG, np.mean)]:
            np.testing.assert_allclose(out[op], fn(every, axis=0), rtol=1e-12)
        want_x = np.arange(6)
        for k in range(1, n):
            want_x = want_x ^ (np.arange(6) * (k + 1))
        assert ints.tolist() == want_x.tolist()
        assert flags.tolist() == [True, False, True]
        np.testing.assert_allclose(half, np.sum([_data(k).astype(np.float16).astype(np.float32) for k in range(n)],
                                                axis=0).astype(np.float16), rtol=0)
        np.testing.assert_array_equal(b, _data(n - 1))
        np.testing.assert_allclose(red, every.sum(0) if r == 1 else _data(r), rtol=1e-12)
        for k in range(n):
            np.testing.assert_array_equal(lst[k], _data(k))
        np.testing.assert_array_equal(cat, every.reshape(2 * n, 3))
        full = np.sum([_data(k, (2 * n, 3)) for k in range(n)], axis=0)
        np.testing.assert_allclose(rs, full[2 * r:2 * r + 2], rtol=1e-12)
        np.testing.assert_allclose(rs2, np.sum([_data(k, (n, 2, 3)) for k in range(n)], axis=0)[r], rtol=1e-12)
        if r == 0:
            for k in range(n):
                np.testing.assert_array_equal(g[k], _data(k))
        else:
            assert g is None
        assert sc.tolist() == [float(r)] * 3
        assert recv.tolist() == [10.0 * k + r for k in range(n) for _ in range(r + 1)]
        assert objs == [{"rank": k, "s": "x" * k} for k in range(n)]
        assert lst_b == ["from0", 0]


def test_point_to_point_and_groups():
    def body(r, n):
        got = {}
        if r == 0:
            dist.send(torch.tensor([1.5, 2.5]), dst=2)
            w = dist.isend(torch.tensor([7.0]), dst=1, tag=3)
            w.wait()
        elif r == 1:
            t = torch.zeros(1)
            w = dist.irecv(t, src=0, tag=3)
            w.wait()
            got["tag3"] = t.tolist()
        else:
            t = torch.zeros(2)
            got["sender"] = dist.recv(t)  # any source
            got["value"] = t.tolist()
        sub = dist.new_group([1, 2])
        if r == 0:
            got["sub"] = sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1
        else:
            x = torch.tensor([float(r)])
            dist.all_reduce(x, group=sub)
            got["sub"] = (x.item(), dist.get_rank(sub), dist.get_process_group_ranks(sub),
                          dist.get_global_rank(sub, 0), dist.get_backend(sub))
            b = torch.tensor([float(r)])
            dist.broadcast(b, src=2, group=sub)  # src is a global rank
            got["sub_b"] = b.item()
        return got

    res = _in_world(body, 3)
    assert res[1]["tag3"] == [7.0] and res[2] == {"sender": 0, "value": [1.5, 2.5], "sub": res[2]["sub"],
                                                  "sub_b": 2.0}
    assert res[0]["sub"] is True
    assert res[1]["sub"] == (3.0, 0, [1, 2], 1, "threaded") and res[2]["sub"][1] == 1


def test_mismatched_tensors_raise_on_every_rank():
    def body(r, n):
        with pytest.raises(RuntimeError, match="different shapes or dtypes"):
            dist.all_reduce(torch.zeros(2 + r))
        with pytest.raises(ValueError, match="world_size=2 tensors"):
            dist.all_gather([torch.zeros(1)], torch.zeros(1))
        with pytest.raises(ValueError, match="Invalid rank 5"):
            dist.new_group([0, 5])
        with pytest.raises(ValueError, match="AVG needs a floating"):
            dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG)
        return True
    assert _in_world(body, 2) == [True, True]


def test_work_and_future():
    import threading
    started = threading.Event()

    def body(r, n):
        if r == 1:
            started.wait(10)  # rank 0 starts its all_reduce before rank 1 joins it
        t = torch.tensor([float(r + 1)])
        w = dist.all_reduce(t, async_op=True)
        early = w.is_completed() if r == 0 else None
        if r == 0:
            started.set()
        fut = w.get_future()
        chained = fut.then(lambda f: f.value()[0] * 10)
        assert chained.wait().tolist() == [30.0] and fut.done() and w.is_completed() and w.is_success()
        assert w.result()[0] is t and t.tolist() == [3.0]
        return early
    assert _in_world(body, 2)[0] is False


def test_a_missing_rank_times_out():
    def body(r, n):
        if r == 0:
            with pytest.raises(dist.DistBackendError, match="timed out after 200 ms"):
                dist.all_reduce(torch.ones(1))
        return r
    assert _in_world(body, 2, timeout=datetime.timedelta(milliseconds=200)) == [0, 1]


def test_a_failing_rank_fails_its_peers_at_once():
    def body(r, n):
        if r == 1:
            raise KeyError("rank failure injected by the test")
        dist.all_reduce(torch.ones(1))  # would otherwise wait for the 30-minute default timeout
    with pytest.raises(KeyError, match="injected"):
        _in_world(body, 2)


def test_futures():
    f = torch.futures.Future()
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    g = f.then(lambda fut: fut.value() + 1)
    h = g.then(lambda fut: 1 / 0)
    assert not f.done()
    with pytest.raises(RuntimeError):
        f.value()
    f.set_result(1)
    assert seen == [1] and g.wait() == 2
    with pytest.raises(ZeroDivisionError):
        h.wait()
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(2)
    both = torch.futures.collect_all([f, g])
    assert [x.value() for x in both.wait()] == [1, 2]


class _Loopback(dist.ProcessGroup):
    """A user transport: one rank, every collective leaves the tensors as they are."""
    calls = []

    def name(self):
        return "loopback"

    def allreduce(self, tensors, opts):
        self.calls.append(("allreduce", opts.reduceOp))
        w = dist.Work("loopback", None, tensors)  # nothing to transfer: complete at the first poll
        w.is_completed()
        return w


def test_register_backend():
    def create(store, rank, world_size, timeout):
        assert (rank, world_size, timeout) == (0, 1, datetime.timedelta(seconds=5))
        return _Loopback(0, 1)

    dist.Backend.register_backend("loopback", create)
    try:
        assert dist.Backend.LOOPBACK == "loopback" and "loopback" in dist.Backend.backend_list
        dist.init_process_group("loopback", rank=0, world_size=1, timeout=datetime.timedelta(seconds=5))
        t = torch.ones(2)
        assert dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True).get_future().wait()[0] is t
        assert _Loopback.calls == [("allreduce", dist.ReduceOp.MAX)] and dist.get_backend() == "loopback"
        with pytest.raises(RuntimeError, match="Backend loopback does not support broadcast"):
            dist.broadcast(t, src=0)
        dist.destroy_process_group()
    finally:
        dist.Backend._factories.pop("loopback")
        dist.Backend.backend_list.remove("loopback")
        del dist.Backend.LOOPBACK
    with pytest.raises(ValueError, match="already exist"):
        dist.Backend.register_backend("gloo", create)


def test_no_transport_outside_the_backends():
    """The functions and DDP reach the process group through the interface only."""
    for rel in ("tinytorch/distributed/__init__.py", "tinytorch/nn/parallel/distributed.py",
                "tinytorch/distributed/device_mesh.py", "tinytorch/distributed/algorithms/join.py"):
        src = open(os.path.join(ROOT, rel)).read()
        transport = r"from mpi4py|import mpi4py|\bMPI\.(?:[A-Z_]{3,}|Request|Status)|\._comm\b"
        assert not re.search(transport + r"|dist\._[a-z]|distributed\._", src), rel


# ---- DDP -----------------------------------------------------------------------------------------------------------
B, STEPS = 4, 3


def _net():
    rng = np.random.default_rng(7)
    net = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=torch.float32))
    return net


def _batch(rank, step):
    rng = np.random.default_rng(1000 * step + rank)
    return torch.tensor(rng.standard_normal((B, 5)), dtype=torch.float32), torch.tensor(rng.integers(0, 3, B))


def _train_ddp(n, hook=None, state=None, **kw):
    def body(r, n):
        model = DDP(_net(), **kw)
        if hook is not None:
            model.register_comm_hook(state() if callable(state) else state, hook)  # a callable: one per rank
        opt = torch.optim.SGD(model.parameters(), lr=0.3)
        losses = []
        for step in range(STEPS):
            x, y = _batch(r, step)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return [p.detach().numpy().copy() for p in model.module.parameters()], losses
    return _in_world(body, n)


def _train_one_process(n):
    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.3)
    for step in range(STEPS):
        xs, ys = zip(*[_batch(r, step) for r in range(n)])
        loss = torch.nn.functional.cross_entropy(net(torch.cat(xs)), torch.cat(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().numpy() for p in net.parameters()]


@pytest.mark.parametrize("kw", [{}, {"bucket_cap_mb": 0.00005}, {"gradient_as_bucket_view": True}])
def test_ddp_equals_one_process(kw):
    ref = _train_one_process(3)
    for params, _ in _train_ddp(3, **kw):
        for a, b in zip(params, ref):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_allreduce_hook_equals_the_default():
    base = _train_ddp(2)
    hooked = _train_ddp(2, default_hooks.allreduce_hook, None)
    for (pa, la), (pb, lb) in zip(base, hooked):
        assert la == lb  # world size 2: pre-dividing and dividing by 2 are exact
        for a, b in zip(pa, pb):
            np.testing.assert_array_equal(a, b)


def test_fp16_compression_hook():
    """The compressed gradient is the average of the ranks' gradients rounded to float16: training matches
    plain DDP to float16's precision, and the replicas stay identical."""
    base = _train_ddp(2)
    comp = _train_ddp(2, default_hooks.fp16_compress_hook, None)
    for (pa, _), (pb, _) in zip(base, comp):
        for a, b in zip(pa, pb):
            np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)
    for a, b in zip(comp[0][0], comp[1][0]):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(base[0][0], comp[0][0]))  # it did compress


def test_bf16_hook_on_a_bucket_and_refused_by_ddp():
    """DDP refuses the bf16 hooks without CUDA/NCCL, with PyTorch's error; called on a bucket, the hook averages
    through bfloat16 into the bucket's own buffer."""
    from conftest import torch as real
    with pytest.raises(TypeError, match="BF16 all reduce communication hook required CUDA"):
        _train_ddp(2, default_hooks.bf16_compress_hook, None)
    vals = [np.array([1.0, 3.14159, -2.5e-3, 1000.5], dtype=np.float32), np.array([2.0, 1.0, 7.77, -3.0], np.float32)]

    def body(r, n):
        buf = torch.tensor(vals[r])
        bucket = dist.GradBucket(0, buf, [], [], True)
        out = default_hooks.bf16_compress_hook(None, bucket).wait()
        return out is buf, buf.numpy().copy()
    res = _in_world(body, 2)
    want = sum(real.tensor(v).to(real.bfloat16).div_(2) for v in vals).float().numpy()
    for same, got in res:
        assert same
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [lambda: (lambda state, bucket: None), lambda: 3])
def test_register_comm_hook_argument_errors(make):
    def body(r, n):
        model = DDP(_net())
        hook = make()
        if callable(hook):
            def typed(state, bucket: int):
                return None
            with pytest.raises(ValueError, match="bucket annotation should be dist.GradBucket"):
                model.register_comm_hook(None, typed)
            model.register_comm_hook(None, hook)  # returns None: caught at the first backward
            x, y = _batch(r, 0)
            with pytest.raises(RuntimeError, match="must return a torch.futures.Future"):
                torch.nn.functional.cross_entropy(model(x), y).backward()
        else:
            with pytest.raises(TypeError, match="must be callable"):
                model.register_comm_hook(None, hook)
        return True
    assert _in_world(body, 2) == [True, True]


def test_grad_bucket_and_hook_errors():
    seen = []

    def spy(state, bucket):
        state.append((bucket.index(), bucket.is_last(), [tuple(p.shape) for p in bucket.parameters()],
                      [tuple(g.shape) for g in bucket.gradients()], bucket.buffer().numel()))
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())  # no communication: local gradients
        return fut

    def body(r, n):
        model = DDP(_net(), bucket_cap_mb=0.00005)
        model.register_comm_hook(seen if r == 0 else [], spy)
        with pytest.raises(RuntimeError, match="can only be called once"):
            model.register_comm_hook(None, spy)
        x, y = _batch(r, 0)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        return model.module[0].weight.grad.numpy().copy()

    grads = _in_world(body, 2)
    assert not np.array_equal(grads[0], grads[1])  # the hook returned each rank's own gradients
    assert [s[0] for s in seen] == list(range(len(seen))) and len(seen) > 1
    assert [s[1] for s in seen] == [False] * (len(seen) - 1) + [True]
    assert seen[0][2] == [(3,)] and all(s[2] == s[3] for s in seen)
    assert sum(s[4] for s in seen) == sum(p.numel() for p in _net().parameters())


@pytest.mark.parametrize("first", [1, 2])
def test_join_uneven_inputs_equals_one_process(first):
    """Rank r has first + r batches (a rank with a single batch joins before the others rebuild their
    buckets); inside ``model.join()`` the ranks that run out shadow the others' all-reduces
    with zeros. Gradients are divided by the initial world size, so step t's update is that of one process on
    the loss sum over the ranks still training, divided by the world size."""
    n = 3

    def body(r, n):
        model = DDP(_net(), bucket_cap_mb=0.00005)
        opt = torch.optim.SGD(model.parameters(), lr=0.3)
        with model.join():
            for step in range(first + r):
                x, y = _batch(r, step)
                loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return [p.detach().numpy().copy() for p in model.module.parameters()]

    net = _net()
    opt = torch.optim.SGD(net.parameters(), lr=0.3)
    for step in range(first + n - 1):
        total = sum(torch.nn.functional.cross_entropy(net(_batch(r, step)[0]), _batch(r, step)[1])
                    for r in range(n) if step < first + r)
        opt.zero_grad()
        (total / n).backward()
        opt.step()
    for params in _in_world(body, n):
        for a, b in zip(params, net.parameters()):
            np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_join_throw_on_early_termination():
    def body(r, n):
        model = DDP(_net())
        with pytest.raises(RuntimeError, match="exhausted"):
            with model.join(throw_on_early_termination=True):
                for step in range(1 + 2 * r):
                    x, y = _batch(r, step)
                    torch.nn.functional.cross_entropy(model(x), y).backward()
        return True
    assert _in_world(body, 2) == [True, True]


class _Reordered(torch.nn.Module):
    """Registration order a, b, c; backward produces c's gradient first, then a's, then b's last."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(3)
        self.a = torch.nn.Linear(5, 5)
        self.b = torch.nn.Linear(5, 5)
        self.c = torch.nn.Linear(5, 3)
        self.unused = torch.nn.Linear(5, 3)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=torch.float32))

    def forward(self, x):
        return self.c(torch.tanh(self.a(torch.tanh(self.b(x)))))


@pytest.mark.parametrize("static", [False, True])
def test_buckets_rebuilt_in_gradient_order_and_static_graph(static):
    """After the first iteration the buckets follow the order in which gradients became ready; with
    static_graph the unused parameter found in the first iteration is remembered. Training equals one process
    on the concatenated batches throughout."""
    def body(r, n):
        net = _Reordered()
        if not static:
            net.unused.requires_grad_(False)
        model = DDP(net, bucket_cap_mb=0.0001, static_graph=static)
        before = [[id(p) for p in b.params] for b in model._buckets]
        opt = torch.optim.SGD(model.parameters(), lr=0.3)
        for step in range(STEPS):
            x, y = _batch(r, step)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        after = [[id(p) for p in b.params] for b in model._buckets]
        names = {id(p): k for k, p in net.named_parameters()}
        return [[names[i] for i in b] for b in before], [[names[i] for i in b] for b in after], \
            [p.detach().numpy().copy() for p in net.parameters()]

    ref = _Reordered()
    opt = torch.optim.SGD(ref.parameters(), lr=0.3)
    for step in range(STEPS):
        xs, ys = zip(*[_batch(r, step) for r in range(2)])
        loss = torch.nn.functional.cross_entropy(ref(torch.cat(xs)), torch.cat(ys))
        opt.zero_grad()
        loss.backward()
        opt.step()
    for before, after, params in _in_world(body, 2):
        flat_before = [k for b in before for k in b]
        flat_after = [k for b in after for k in b]
        assert flat_before[:2] == (["unused.bias", "unused.weight"] if static else ["c.bias", "c.weight"])
        # gradients of c come first, then a's, then b's; the unused parameter (never ready) goes last
        assert flat_after[:6] == ["c.bias", "c.weight", "a.bias", "a.weight", "b.bias", "b.weight"] or \
            flat_after[:6] == ["c.weight", "c.bias", "a.weight", "a.bias", "b.weight", "b.bias"], flat_after
        for a, b in zip(params, ref.parameters()):
            np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_split_group_and_device_mesh():
    """split_group hands each rank the group of its line; a DeviceMesh's per-dimension groups come from it."""
    def body(r, n):
        mine = dist.split_group(split_ranks=[[0, 2], [1, 3]])
        x = torch.tensor([float(r)])
        dist.all_reduce(x, group=mine)
        with pytest.raises(ValueError, match="more than one split group"):
            dist.split_group(split_ranks=[[0, 1], [1, 2, 3]])
        mesh = dist.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        return (dist.get_process_group_ranks(mine), x.item(),
                dist.get_process_group_ranks(mesh.get_group("dp")), dist.get_process_group_ranks(mesh.get_group("tp")))
    res = _in_world(body, 4)
    for r, (ranks, total, dp, tp) in enumerate(res):
        assert ranks == ([0, 2] if r % 2 == 0 else [1, 3]) and total == (2.0 if r % 2 == 0 else 4.0)
        assert dp == [r % 2, r % 2 + 2] and tp == [r // 2 * 2, r // 2 * 2 + 1], (r, dp, tp)


def test_full_rank_powersgd_equals_plain_ddp():
    """PowerSGD at full rank (r = min(n, m)) reconstructs the averaged gradient exactly, so from its first
    compressed step (the third) training equals plain DDP; one parameter per bucket also gives buckets with no
    uncompressed tensor."""
    from tinytorch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as psgd
    with pytest.raises(ValueError, match="start_powerSGD_iter"):
        psgd.PowerSGDState(None, start_powerSGD_iter=1)
    states = []

    def make():
        states.append(psgd.PowerSGDState(None, matrix_approximation_rank=6, start_powerSGD_iter=2,
                                         min_compression_rate=0.1))
        return states[-1]
    import threading
    lock = threading.Lock()

    def hook(state, bucket):
        # the hook seeds and draws from the global generator, which the threads (ranks) of this process share:
        # one rank at a time (the collectives it starts are non-blocking)
        with lock:
            return psgd.powerSGD_hook(state, bucket)
    base = _train_ddp(2, bucket_cap_mb=0.00001)
    comp = _train_ddp(2, hook, make, bucket_cap_mb=0.00001)
    for st in states:
        # the low-rank path ran: at full rank the P, Q pairs hold more elements than the matrices
        assert st.iter == 3 and st.total_numel_after_compression > st.total_numel_before_compression
    for (pa, la), (pb, lb) in zip(base, comp):
        np.testing.assert_allclose(la, lb, rtol=1e-6)
        for a, b in zip(pa, pb):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_join_with_gradient_accumulation_and_buffers():
    """Under join(), no_sync micro-steps and a BatchNorm's buffers: the joined rank follows the training ranks'
    sync decisions (the flag all-reduce), so the collectives keep matching; the replicas end identical."""
    def body(r, n):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 3))
        model = DDP(net)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with model.join():
            for step in range(2 * (1 + r)):
                x, y = _batch(r, step)
                if step % 2 == 0:
                    with model.no_sync():
                        torch.nn.functional.cross_entropy(model(x), y).backward()
                else:
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                    opt.zero_grad()
        return [t.detach().numpy().copy() for t in list(net.parameters()) + list(net.buffers())]
    res = _in_world(body, 3)
    for other in res[1:]:
        for a, b in zip(res[0], other):
            np.testing.assert_array_equal(a, b)
