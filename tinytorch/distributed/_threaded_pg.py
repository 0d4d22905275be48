"""The in-process backend ``"threaded"``: a world of N ranks simulated by N threads of one process, for unit
tests without MPI (as PyTorch's ``torch/testing/_internal/distributed/multi_threaded_pg.py``).

``spawn_threads(world_size, fn, *args)`` runs ``fn(rank, world_size, *args)`` in one thread per rank, each with
its own ``torch.distributed`` world, so that every thread calls ``init_process_group("threaded", rank=rank,
world_size=world_size)`` and then the ordinary API. Collectives are non-blocking as MPI's: a rank deposits a
snapshot of its staged input and gets a ``Work``; the last rank to arrive computes every rank's result with
NumPy; each rank copies its own result into its tensors when its Work is waited on (so the copy and any
``then`` callbacks run in that rank's thread). Ranks must issue the same collectives in the same order; a
mismatch (another collective, other shapes or dtypes) raises RuntimeError on every rank. When one thread
raises, the others' pending Works fail at once instead of waiting for the timeout.
"""
import threading

import numpy as np

from ._c10d import DistBackendError, ProcessGroup, Work, World, reduce_op_for, set_thread_world
from ._staging import copy_into, host, numpy_reduce

__all__ = ["ProcessGroupThreaded", "spawn_threads", "create_threaded_process_group"]


class _Shared:
    """The state the member threads of one group share: the collectives in flight, by sequence number, and the
    point-to-point mailboxes."""

    def __init__(self, size, abort):
        self.size, self.abort = size, abort
        self.cond = threading.Condition()
        self.ops = {}
        self.mail = {}  # (src, dst, tag) -> list of arrays
        self.subgroups = {}


class _Op:
    __slots__ = ("kind", "payloads", "count", "results", "error", "done", "compute")

    def __init__(self, size):
        self.payloads, self.count, self.results, self.error, self.done = [None] * size, 0, None, None, False


class _ThreadWork(Work):
    def __init__(self, pg, what, ready, finish=None, result=None, timeout=None):
        super().__init__(what, finish, result, timeout or pg._timeout)
        self._pg, self._ready = pg, ready

    def _test(self):
        with self._pg._shared.cond:
            self._check_abort()
            return self._ready()

    def _check_abort(self):
        if self._pg._shared.abort.is_set() and not self._ready():
            raise DistBackendError(f"[Rank {self._pg.rank()}] {self._what}: another rank's thread failed")

    def _block(self, seconds):
        sh = self._pg._shared
        with sh.cond:
            ok = sh.cond.wait_for(lambda: self._ready() or sh.abort.is_set(), timeout=seconds)
            self._check_abort()
            return ok


def _same_signature(arrays, what):
    first = arrays[0]
    for a in arrays[1:]:
        if a.shape != first.shape or a.dtype != first.dtype:
            shapes = sorted({tuple(x.shape) for x in arrays})
            raise RuntimeError(f"{what}: the ranks passed tensors of different shapes or dtypes (shapes {shapes})")


class ProcessGroupThreaded(ProcessGroup):
    """A group of threads of this process (see the module docstring); ``name()`` is ``"threaded"``."""

    def __init__(self, rank, size, shared, timeout=None):
        super().__init__(rank, size, timeout)
        self._shared = shared
        self._seq = 0
        self._groups_made = 0

    def name(self):
        return "threaded"

    def _collective(self, what, payload, compute, finish, result, timeout=None):
        """Deposit ``payload`` as this rank's part of the next collective; ``compute(payloads)`` (run by the last
        rank to arrive) returns every rank's result; ``finish(my_result)`` writes it into the tensors."""
        sh = self._shared
        with sh.cond:
            seq = self._seq
            self._seq += 1
            op = sh.ops.get(seq)
            if op is None:
                op = sh.ops[seq] = _Op(self._size)
                op.kind = what
            op.payloads[self._rank] = payload
            op.count += 1
            if op.kind != what:
                op.error = RuntimeError(f"ranks called different collectives at the same point: {op.kind} and "
                                        f"{what}")
            if op.count == self._size:
                del sh.ops[seq]
                if op.error is None:
                    try:
                        op.results = compute(op.payloads)
                    except Exception as e:  # every rank gets the same error
                        op.error = e
                op.payloads = None
                op.done = True
                sh.cond.notify_all()
        me = self._rank

        def done():
            if op.error is not None:
                raise op.error
            if finish is not None:
                finish(op.results[me])
        return _ThreadWork(self, what, lambda: op.done, done, result, timeout)

    # collectives
    def allreduce(self, tensors, opts):
        tensor = tensors[0]
        buf, wb = host(tensor)
        op = reduce_op_for(tensor.dtype, opts.reduceOp, buf.dtype.kind)

        def compute(arrays):
            _same_signature(arrays, "all_reduce")
            out = numpy_reduce(op, arrays)
            return [out] * len(arrays)
        return self._collective("all_reduce", buf.copy(), compute, lambda r: copy_into(tensor, r), [tensor],
                                opts.timeout)

    def broadcast(self, tensors, opts):
        tensor, root = tensors[0], opts.rootRank
        buf, _ = host(tensor)

        def compute(arrays):
            _same_signature(arrays, "broadcast")
            return [arrays[root]] * len(arrays)
        finish = (lambda r: copy_into(tensor, r)) if self._rank != root else None
        return self._collective("broadcast", buf.copy(), compute, finish, [tensor], opts.timeout)

    def reduce(self, tensors, opts):
        tensor, root = tensors[0], opts.rootRank
        buf, _ = host(tensor)
        op = reduce_op_for(tensor.dtype, opts.reduceOp, buf.dtype.kind)

        def compute(arrays):
            _same_signature(arrays, "reduce")
            out = [None] * len(arrays)
            out[root] = numpy_reduce(op, arrays)
            return out
        finish = (lambda r: copy_into(tensor, r)) if self._rank == root else None
        return self._collective("reduce", buf.copy(), compute, finish, [tensor], opts.timeout)

    def _allgather_base(self, output, input, opts=None):
        buf, _ = host(input)

        def compute(arrays):
            _same_signature(arrays, "all_gather_into_tensor")
            return [np.stack(arrays)] * len(arrays)
        return self._collective("all_gather_into_tensor", buf.copy(), compute, lambda r: copy_into(output, r),
                                [output])

    def allgather(self, output_tensors, input_tensors, opts=None):
        outs = output_tensors[0]
        buf, _ = host(input_tensors[0])

        def compute(arrays):
            _same_signature(arrays, "all_gather")
            return [arrays] * len(arrays)

        def finish(arrays):
            for t, a in zip(outs, arrays):
                copy_into(t, a)
        return self._collective("all_gather", buf.copy(), compute, finish, list(outs))

    def _reduce_scatter_base(self, output, input, opts):
        buf, _ = host(input)
        op = reduce_op_for(input.dtype, opts.reduceOp, buf.dtype.kind)

        def compute(arrays):
            _same_signature(arrays, "reduce_scatter_tensor")
            return np.split(numpy_reduce(op, arrays).reshape(-1), len(arrays))
        return self._collective("reduce_scatter_tensor", buf.copy(), compute, lambda r: copy_into(output, r),
                                [output], opts.timeout)

    def gather(self, output_tensors, input_tensors, opts):
        root = opts.rootRank
        outs = output_tensors[0] if self._rank == root else []
        buf, _ = host(input_tensors[0])

        def compute(arrays):
            _same_signature(arrays, "gather")
            return [arrays if r == root else None for r in range(len(arrays))]

        def finish(arrays):
            for t, a in zip(outs, arrays or []):
                copy_into(t, a)
        return self._collective("gather", buf.copy(), compute, finish, list(outs))

    def scatter(self, output_tensors, input_tensors, opts):
        root = opts.rootRank
        tensor = output_tensors[0]
        buf, _ = host(tensor)
        mine = [host(t)[0].reshape(buf.shape).astype(buf.dtype) for t in input_tensors[0]] \
            if self._rank == root else None

        def compute(payloads):
            _same_signature([p[0] for p in payloads], "scatter")
            return list(payloads[root][1])
        return self._collective("scatter", (np.empty_like(buf), mine), compute, lambda r: copy_into(tensor, r),
                                [tensor])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        buf, _ = host(input)
        rows = np.cumsum([0] + [int(s) for s in input_split_sizes])
        blocks = [np.array(buf[rows[i]:rows[i + 1]]) for i in range(self._size)]
        want = [int(s) for s in output_split_sizes]

        def compute(payloads):
            res = []
            for r, (_, need) in enumerate(payloads):
                got = [payloads[s][0][r] for s in range(len(payloads))]
                if [g.shape[0] for g in got] != need:
                    raise RuntimeError("all_to_all_single: the split sizes of the ranks do not match")
                res.append(np.concatenate(got) if got else None)
            return res
        return self._collective("all_to_all_single", (blocks, want), compute, lambda r: copy_into(output, r),
                                [output])

    def barrier(self, opts=None):
        return self._collective("barrier", None, lambda p: [None] * len(p), None, [],
                                getattr(opts, "timeout", None))

    # point to point: a send leaves a copy in the receiver's mailbox and is done at once
    def send(self, tensors, dstRank, tag=0):
        buf, _ = host(tensors[0])
        sh = self._shared
        with sh.cond:
            sh.mail.setdefault((self._rank, int(dstRank), tag), []).append(buf.copy())
            sh.cond.notify_all()
        w = _ThreadWork(self, "send", lambda: True)
        w.is_completed()
        return w

    def _recv(self, tensor, sources, tag):
        sh = self._shared
        got = {}

        def ready():
            if "arr" in got:
                return True
            for s in sources:
                box = sh.mail.get((s, self._rank, tag))
                if box:
                    got["arr"], got["src"] = box.pop(0), s
                    return True
            return False

        w = _ThreadWork(self, "recv", ready, lambda: copy_into(tensor, got["arr"]), [tensor])
        w.source_rank = lambda: (w.wait(), got["src"])[1]
        return w

    def recv(self, tensors, srcRank, tag=0):
        return self._recv(tensors[0], [int(srcRank)], tag)

    def recv_anysource(self, tensors, tag=0):
        return self._recv(tensors[0], [r for r in range(self._size) if r != self._rank], tag)

    def _new_group(self, ranks, timeout=None):
        """Every member calls it in the same order; the k-th call of each rank names the same sub-group."""
        key = (self._groups_made, tuple(ranks))
        self._groups_made += 1
        sh = self._shared
        with sh.cond:
            sub = sh.subgroups.get(key)
            if sub is None:
                sub = sh.subgroups[key] = _Shared(len(ranks), sh.abort)
        if self._rank not in ranks:
            return None
        return ProcessGroupThreaded(list(ranks).index(self._rank), len(ranks), sub, timeout or self._timeout)


_spawned = threading.local()


def create_threaded_process_group(store, rank, world_size, timeout):
    """The ``Backend.register_backend`` factory of ``"threaded"``: rank ``rank`` of the world that
    ``spawn_threads`` started in this thread. RuntimeError in a thread it did not start, ValueError when rank or
    world_size disagree with it."""
    shared = getattr(_spawned, "shared", None)
    if shared is None:
        raise RuntimeError("the threaded backend runs ranks started by tinytorch.distributed._threaded_pg."
                           "spawn_threads")
    if int(world_size) != shared.size or int(rank) != _spawned.rank:
        raise ValueError(f"rank={rank}, world_size={world_size} but this thread is rank {_spawned.rank} of "
                         f"{shared.size}")
    return ProcessGroupThreaded(int(rank), shared.size, shared, timeout)


def spawn_threads(world_size, fn, *args, timeout=120):
    """Run ``fn(rank, world_size, *args)`` in ``world_size`` threads, each a rank with its own distributed
    world, and return their results in rank order. The first exception raised by a rank is raised here (with
    the rank added to its message's notes) once every thread has ended; the others' pending collectives fail
    at once. RuntimeError when a thread is still running after ``timeout`` seconds."""
    abort = threading.Event()
    shared = _Shared(int(world_size), abort)
    results, errors = [None] * world_size, [None] * world_size

    def body(rank):
        _spawned.shared, _spawned.rank = shared, rank
        set_thread_world(World())
        try:
            results[rank] = fn(rank, world_size, *args)
        except BaseException as e:  # reported by the spawning thread below
            errors[rank] = e
            abort.set()
            with shared.cond:
                shared.cond.notify_all()
        finally:
            set_thread_world(None)
            _spawned.shared = None

    threads = [threading.Thread(target=body, args=(r,), name=f"rank{r}", daemon=True) for r in range(world_size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        if t.is_alive():
            abort.set()
            raise RuntimeError(f"spawn_threads: {t.name} still running after {timeout} s")
    # the first failure, not the peers' "another rank failed" that it caused
    first = next((e for e in errors if e is not None and not isinstance(e, DistBackendError)), None) \
        or next((e for e in errors if e is not None), None)
    if first is not None:
        first.add_note(f"(raised on rank {errors.index(first)} of spawn_threads)")
        raise first
    return results
