"""DataLoader iterators and worker processes against PyTorch's: batches (values and order), worker seeding and
get_worker_info, IterableDataset sharding, errors raised in workers, timeouts, persistent workers, shutdown,
and the option checks. Datasets are tiny and most loaders use the "fork" context, to keep the suite fast."""
import gc
import os
import random
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.utils.data import dataloader as ttdl
from conftest import torch

FORK = "fork"


def as_lists(batches):
    """Nested Python values of a list of batches, for comparing tinytorch's loaders with torch's."""
    def conv(b):
        if hasattr(b, "tolist"):
            return b.tolist()
        if isinstance(b, (list, tuple)):
            return [conv(x) for x in b]
        if isinstance(b, dict):
            return {k: conv(v) for k, v in b.items()}
        return b
    return [conv(b) for b in batches]


class Squares:
    """Map-style: sample i is (i, i*i); built for either module."""

    def __init__(self, m, n=11):
        self.m, self.n = m, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.m.tensor([float(i)]), i * i


class WhoLoads:
    """Sample i records the worker that loaded it and that worker's random state."""

    def __init__(self, m, n=6):
        self.m, self.n = m, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        w = self.m.utils.data.get_worker_info()
        return {"i": i, "id": w.id, "num_workers": w.num_workers, "seed": w.seed, "same_dataset": w.dataset is self,
                "initial_seed": self.m.initial_seed(), "py": random.random(), "np": float(np.random.rand()),
                "rand": self.m.rand(1).item(), "pid": os.getpid(), "offset": getattr(self, "offset", -1)}


def _set_offset(worker_id):
    info = tt.utils.data.get_worker_info() or torch.utils.data.get_worker_info()
    info.dataset.offset = 100 * worker_id + random.randint(0, 9)  # seeded before worker_init_fn runs


class Shards:
    """Iterable-style: each worker yields every num_workers-th number of range(n), starting at its id."""

    def __init__(self, m, n=9, reported_len=None):
        self.m, self.n, self.reported_len = m, n, reported_len

    def __iter__(self):
        w = self.m.utils.data.get_worker_info()
        start, step = (0, 1) if w is None else (w.id, w.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n if self.reported_len is None else self.reported_len


def shards(m, **kw):
    return type("ShardsDS", (Shards, m.utils.data.IterableDataset), {})(m, **kw)


class Failing:
    def __init__(self, exc):
        self.exc = exc

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise self.exc
        return i


class Slow:
    """Sample 0 takes ``delay`` seconds."""

    def __init__(self, delay, n=8):
        self.delay, self.n = delay, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 0:
            time.sleep(self.delay)
        return i


@pytest.mark.parametrize("shuffle,drop_last", [(False, False), (True, False), (True, True)])
def test_worker_batches_equal_single_process_and_torchs(shuffle, drop_last):
    got = {}
    for m in (tt, torch):
        for workers in (0, 2):
            ctx = FORK if workers else None
            dl = m.utils.data.DataLoader(Squares(m), batch_size=3, shuffle=shuffle, drop_last=drop_last,
                                         num_workers=workers, multiprocessing_context=ctx,
                                         generator=m.Generator().manual_seed(7))
            got[m.__name__, workers] = as_lists(dl)
    assert got["tinytorch", 2] == got["tinytorch", 0] == got["torch", 2] == got["torch", 0]
    assert len(got["torch", 2]) == (3 if drop_last else 4)


def test_default_context_without_batching_and_random_stream_after_epoch():
    """The platform's default context, batch_size=None (default_convert), shuffling from the default
    generator: same items as torch's, and the default generator is left in torch's state."""
    got = []
    for m in (tt, torch):
        m.manual_seed(11)
        items = as_lists(m.utils.data.DataLoader(list(range(7)), batch_size=None, shuffle=True, num_workers=2))
        got.append((items, m.rand(3).tolist()))
    assert got[0] == got[1]
    assert sorted(got[0][0]) == list(range(7)) and got[0][0] != list(range(7))


def test_in_order_false_returns_ready_batches_first():
    dl = tt.utils.data.DataLoader(Slow(3.0), batch_size=2, num_workers=2, multiprocessing_context=FORK,
                                  in_order=False)
    out = as_lists(dl)
    ordered = as_lists(tt.utils.data.DataLoader(Slow(0.0), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    want = as_lists(torch.utils.data.DataLoader(Slow(0.0), batch_size=2, num_workers=2, multiprocessing_context=FORK,
                                                in_order=False))
    assert ordered == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert sorted(out) == sorted(want) == ordered
    assert out[0] != [0, 1]  # worker 0 was still sleeping on sample 0 while worker 1 answered


@pytest.mark.parametrize("seeded", ["generator", "manual_seed"])
def test_worker_seeds_and_worker_info_equal_torchs(seeded):
    got = []
    for m in (tt, torch):
        ds = WhoLoads(m)
        if seeded == "generator":
            kw = {"generator": m.Generator().manual_seed(2024)}
        else:
            m.manual_seed(99)
            kw = {}
        dl = m.utils.data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=FORK,
                                     worker_init_fn=_set_offset, **kw)
        got.append([{k: v for k, v in item.items() if k != "pid"} for item in as_lists(dl)])
    assert got[0] == got[1]
    assert [r["id"] for r in got[0]] == [0, 1, 0, 1, 0, 1]
    assert all(r["num_workers"] == 2 and r["same_dataset"] and r["initial_seed"] == r["seed"] for r in got[0])
    assert got[0][1]["seed"] == got[0][0]["seed"] + 1 and got[0][0]["offset"] // 100 == 0 and got[0][1]["offset"] >= 100


def test_numpy_seed_state_is_torchs():
    from torch.utils.data._utils.worker import _generate_state
    for base, wid in [(0, 0), (1, 3), (2 ** 63 - 1, 7), (883951781600517636, 1)]:
        assert ttdl._worker._numpy_seed_state(base, wid) == _generate_state(base, wid)


def test_get_worker_info_is_none_in_main_process_and_immutable_in_workers():
    assert tt.utils.data.get_worker_info() is None
    info = ttdl._worker.WorkerInfo(id=0, num_workers=1, seed=5, dataset=None)
    with pytest.raises(AttributeError):
        info.id = 3
    assert repr(info) == repr(torch.utils.data._utils.worker.WorkerInfo(id=0, num_workers=1, seed=5, dataset=None))


@pytest.mark.parametrize("workers,persistent", [(0, False), (2, False), (2, True)])
def test_iterable_dataset_sharded_with_get_worker_info(workers, persistent):
    got = []
    for m in (tt, torch):
        dl = m.utils.data.DataLoader(shards(m), batch_size=2, num_workers=workers, persistent_workers=persistent,
                                     multiprocessing_context=FORK if workers else None)
        got.append([as_lists(dl), as_lists(dl)])  # two epochs
        assert len(dl) == 5
    assert got[0] == got[1]
    assert sorted(sum(got[0][0], [])) == list(range(9))


def test_iterable_dataset_longer_than_its_len_warns_as_torch():
    msgs = []
    for m in (tt, torch):
        dl = m.utils.data.DataLoader(shards(m, n=6, reported_len=2), batch_size=None, num_workers=2,
                                     multiprocessing_context=FORK)
        assert len(dl) == 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            items = as_lists(dl)
        assert sorted(items) == list(range(6))
        msgs.append([str(x.message).split(" was reported", 1)[1] for x in w if "Length of" in str(x.message)])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 4
    assert "(when accessing len(dataloader)), but 3 samples have been fetched. For multiprocessing" in msgs[0][0]


def test_iterable_dataset_rejects_sampler_options_as_torch():
    for kw in ({"shuffle": True}, {"sampler": [0, 1]}, {"batch_sampler": [[0]]}):
        errs = []
        for m in (tt, torch):
            with pytest.raises(ValueError) as e:
                m.utils.data.DataLoader(shards(m), **kw)
            errs.append(str(e.value))
        assert errs[0] == errs[1]


@pytest.mark.parametrize("exc", [ValueError("bad sample 3"), KeyError("k3")])
def test_worker_exception_reraised_with_worker_id_and_traceback(exc):
    msgs = []
    for m in (tt, torch):
        it = iter(m.utils.data.DataLoader(Failing(exc), batch_size=2, num_workers=2, multiprocessing_context=FORK))
        assert as_lists([next(it)]) == [[0, 1]]
        with pytest.raises(type(exc)) as e:
            next(it)
        msgs.append(str(e.value))
        assert as_lists(it) == [[4, 5]]  # the epoch goes on after a failed batch, as torch's
    for msg in msgs:
        assert f"Caught {type(exc).__name__} in DataLoader worker process 1.\nOriginal Traceback (most recent call " \
               "last):\n" in msg
        assert "in __getitem__\n    raise self.exc\n" in msg and msg.rstrip().endswith(f"{type(exc).__name__}: {exc}")
    assert msgs[0].splitlines()[:2] == msgs[1].splitlines()[:2]


def test_workers_stop_cleanly_when_a_failed_iterator_is_collected():
    """The raised exception's traceback holds the iterator in a reference cycle: only the cyclic garbage
    collector frees it, and its workers must still be told to exit (not terminated after a wait)."""
    it = iter(tt.utils.data.DataLoader(Failing(ValueError("x")), batch_size=2, num_workers=2,
                                       multiprocessing_context=FORK))
    workers = list(it._workers)
    next(it)
    with pytest.raises(ValueError) as e:
        next(it)
    del it, e
    start = time.monotonic()
    gc.collect()
    assert [w.exitcode for w in workers] == [0, 0] and time.monotonic() - start < 4


def test_worker_init_fn_exception_is_raised_at_first_batch():
    def init(worker_id):
        raise RuntimeError(f"init failed in {worker_id}")
    it = iter(tt.utils.data.DataLoader(list(range(4)), num_workers=1, multiprocessing_context=FORK,
                                       worker_init_fn=init))
    with pytest.raises(RuntimeError, match=r"Caught RuntimeError in DataLoader worker process 0\.\n(.|\n)*init failed "
                                           r"in 0"):
        next(it)


def test_timeout_raises_torchs_error():
    msgs = []
    for m in (tt, torch):
        it = iter(m.utils.data.DataLoader(Slow(0.6, n=2), batch_size=None, num_workers=1,
                                          multiprocessing_context=FORK, timeout=0.2))
        with pytest.raises(RuntimeError) as e:
            next(it)
        msgs.append(str(e.value))
        it._shutdown_workers()
    assert msgs[0] == msgs[1] == "DataLoader timed out after 0.2 seconds"


def test_persistent_workers_keep_their_processes_across_epochs():
    dl = tt.utils.data.DataLoader(WhoLoads(tt), batch_size=2, num_workers=2, multiprocessing_context=FORK,
                                  persistent_workers=True)
    assert dl._iterator is None
    first = as_lists(dl)
    it = dl._iterator
    workers = list(it._workers)
    second = as_lists(dl)
    assert dl._iterator is it and iter(dl) is it
    pids = [workers[0].pid] * 2, [workers[1].pid] * 2, [workers[0].pid] * 2
    assert [b["pid"] for b in first] == [b["pid"] for b in second] == list(pids)
    assert [b["i"] for b in second] == [[0, 1], [2, 3], [4, 5]]
    assert all(w.is_alive() for w in workers)
    # an epoch abandoned halfway: the next one still starts from the first batch
    partial = iter(dl)
    next(partial)
    assert [b["i"] for b in as_lists(dl)] == [[0, 1], [2, 3], [4, 5]]
    del dl, it, partial
    gc.collect()
    assert [w.exitcode for w in workers] == [0, 0]


def test_workers_stop_cleanly_at_epoch_end_and_on_del():
    it = iter(tt.utils.data.DataLoader(WhoLoads(tt), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    workers = list(it._workers)
    assert len({w.pid for w in workers}) == 2 and all(w.is_alive() for w in workers)
    assert len(list(it)) == 3
    assert [w.exitcode for w in workers] == [0, 0] and it._shutdown
    it = iter(tt.utils.data.DataLoader(WhoLoads(tt), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    workers = list(it._workers)
    next(it)
    del it
    assert [w.exitcode for w in workers] == [0, 0]  # told to exit, not terminated


def test_persistent_workers_are_shut_down_at_interpreter_exit(tmp_path):
    """Workers still alive at exit are told to stop before multiprocessing terminates them: their own exit
    handlers run (each writes a marker), even when the program made a weakref.finalize before importing
    multiprocessing (whose exit hook then runs after multiprocessing's)."""
    script = textwrap.dedent(f"""
        import tempfile, weakref
        early = weakref.finalize(tempfile, print, "")
        import multiprocessing.util
        import tinytorch as tt

        def mark(path):
            open(path, "w").close()

        def init(worker_id):
            multiprocessing.util.Finalize(None, mark, args=(r"{tmp_path}/%d" % worker_id,), exitpriority=1)

        dl = tt.utils.data.DataLoader(list(range(6)), batch_size=2, num_workers=2, persistent_workers=True,
                                      multiprocessing_context="fork", worker_init_fn=init)
        assert [b.tolist() for b in dl] == [[0, 1], [2, 3], [4, 5]]
        print(" ".join(str(w.pid) for w in dl._iterator._workers), flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__))))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1"]
    for pid in map(int, r.stdout.split()):
        with pytest.raises(ProcessLookupError):  # exited and reaped, not left behind
            os.kill(pid, 0)


def test_iterator_classes_and_attributes():
    ds = tt.utils.data.TensorDataset(tt.arange(5))
    it = iter(tt.utils.data.DataLoader(ds, batch_size=2))
    assert type(it) is ttdl._SingleProcessDataLoaderIter and isinstance(it, ttdl._BaseDataLoaderIter)
    assert (len(it), it._num_yielded, it._dataset_kind) == (3, 0, tt.utils.data._DatasetKind.Map)
    assert iter(it) is it and it._index_sampler is it._index_sampler and next(it)[0].tolist() == [0, 1]
    assert it._num_yielded == 1
    it._reset(tt.utils.data.DataLoader(ds, batch_size=2))
    assert it._num_yielded == 0 and next(it)[0].tolist() == [0, 1]
    mp = iter(tt.utils.data.DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context=FORK))
    assert type(mp) is ttdl._MultiProcessingDataLoaderIter and isinstance(mp, ttdl._BaseDataLoaderIter)
    assert len(mp) == 3 and [b[0].tolist() for b in mp] == [[0, 1], [2, 3], [4]]
    in_flight = []
    for m in (tt, torch):  # prefetch_factor tasks per worker are sent at once
        it = iter(m.utils.data.DataLoader(list(range(20)), batch_size=2, num_workers=2, prefetch_factor=3,
                                          multiprocessing_context=FORK))
        in_flight.append((it._send_idx, it._tasks_outstanding, it._workers_num_tasks))
        next(it)  # one batch returned, one more task sent (answers that came early are held, not counted here)
        in_flight.append((it._send_idx, it._workers_num_tasks))
        it._shutdown_workers()
    assert in_flight[:2] == in_flight[2:] == [(6, 6, [3, 3]), (7, [3, 3])]
    for m in (tt, torch):
        with pytest.raises(NotImplementedError):
            import pickle
            pickle.dumps(iter(m.utils.data.DataLoader([1, 2])))


class Dying:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 0:
            os._exit(3)
        return i


def test_worker_that_dies_is_reported(monkeypatch):
    monkeypatch.setattr(ttdl, "MP_STATUS_CHECK_INTERVAL", 0.1)  # how often a waiting reader checks the workers
    it = iter(tt.utils.data.DataLoader(Dying(), batch_size=None, num_workers=1, multiprocessing_context=FORK))
    pid = it._workers[0].pid
    with pytest.raises(RuntimeError, match=rf"^DataLoader worker \(pid\(s\) {pid}\) exited unexpectedly$"):
        next(it)
    assert it._workers[0].exitcode == 3


def test_spawn_context_pickles_the_loader_state():
    ds = tt.utils.data.TensorDataset(tt.arange(8.0), tt.arange(8))
    kw = dict(batch_size=3, shuffle=True)
    want = as_lists(tt.utils.data.DataLoader(ds, generator=tt.Generator().manual_seed(4), **kw))
    got = as_lists(tt.utils.data.DataLoader(ds, generator=tt.Generator().manual_seed(4), num_workers=1,
                                            multiprocessing_context="spawn", **kw))
    assert got == want and sorted(sum((b[1] for b in got), [])) == list(range(8))


def test_getitems_batches_in_workers():
    class Batched:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            return [(i, len(idx)) for i in idx]
    got = as_lists(tt.utils.data.DataLoader(Batched(), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    assert got == [[[0, 1], [2, 2]], [[2, 3], [2, 2]], [[4], [1]]]


def test_option_errors_match_torchs():
    cases = [dict(num_workers=2, multiprocessing_context="nope"), dict(multiprocessing_context="fork"),
             dict(num_workers=2, multiprocessing_context=3), dict(timeout=-1), dict(num_workers=1, prefetch_factor=-1),
             dict(batch_size=None, drop_last=True), dict(num_workers=-1)]
    for kw in cases:
        errs = []
        for m in (tt, torch):
            with pytest.raises((ValueError, TypeError)) as e:
                m.utils.data.DataLoader([1, 2], **kw)
            errs.append((type(e.value), str(e.value)))
        assert errs[0] == errs[1], kw
    for m in (tt, torch):
        dl = m.utils.data.DataLoader([1, 2], num_workers=1, multiprocessing_context="spawn")
        assert dl.multiprocessing_context.get_start_method() == "spawn" and dl.prefetch_factor == 2
        for attr in ("batch_size", "sampler", "dataset", "persistent_workers"):
            with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
                setattr(dl, attr, None)
        dl.num_workers = 3  # not guarded, as in torch
        assert m.utils.data.DataLoader([1, 2], batch_sampler=[[0, 1]]).batch_size is None


def test_single_process_iterator_rejects_timeout_as_torch():
    for m in (tt, torch):
        with pytest.raises(AssertionError, match="_SingleProcessDataLoaderIter requires timeout == 0"):
            iter(m.utils.data.DataLoader([1, 2], timeout=1))


def test_pin_memory_without_accelerator_warns_as_torch(monkeypatch):
    monkeypatch.setattr(tt.accelerator, "is_available", lambda: False)
    msgs = []
    # torch warns only where it finds no accelerator (a device registered with it earlier in the process is one)
    for m in (tt, torch) if not torch.accelerator.is_available() else (tt,):
        with pytest.warns(UserWarning) as w:
            batches = as_lists(m.utils.data.DataLoader([1, 2, 3], batch_size=2, pin_memory=True, num_workers=1,
                                                       multiprocessing_context=FORK))
        assert batches == [[1, 2], [3]]
        msgs.append([str(x.message) for x in w])
    assert all(msg == ["'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                       "won't be used."] for msg in msgs), msgs


def test_too_many_workers_warns_as_torch():
    n = ttdl._cpu_count() + 1
    msgs = []
    for m in (tt, torch):
        with pytest.warns(UserWarning) as w:
            m.utils.data.DataLoader([1], num_workers=n)
        msgs.append(str(w[0].message))
    assert msgs[0] == msgs[1] and msgs[0].startswith(f"This DataLoader will create {n} worker processes in total.")
