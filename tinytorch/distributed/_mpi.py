"""``ProcessGroupMPI``: the MPI transport (``mpi4py``), the only module of tinytorch that calls MPI for
collectives (the launcher's worker asks MPI for the node layout).

A process group is an MPI communicator; every collective is the matching non-blocking MPI call, and its ``Work``
polls it with the group's timeout so that a dead or stuck peer turns into DistBackendError instead of a hang.
Before each collective the ranks compare the shape and dtype of what they pass (one small all-reduce), since MPI
would otherwise truncate or block. Serves the backend names ``"mpi"`` and ``"gloo"`` (what CPU PyTorch scripts
name). Also here: the torchrun environment derived from an MPI launcher's variables, and ``abort_job``.
"""
import os
import sys
import time

from ._c10d import ProcessGroup, ReduceOp, Work, reduce_op_for
from ._staging import host

__all__ = ["ProcessGroupMPI", "create_mpi_process_group", "abort_job", "env_from_mpi_launcher", "is_available"]


def is_available():
    """True when the MPI binding (``mpi4py``) can be imported."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def _MPI():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("Distributed package doesn't have MPI built in: install mpi4py and an MPI "
                           "(pip install 'tinytorch[distributed]')") from e
    return MPI


# ---- the torchrun environment, derived from an MPI launcher -------------------------------------------------------
_MPI_ENV = (  # (rank, size, local rank, local size) variables of MPICH's hydra and of Open MPI
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
)


def env_from_mpi_launcher(environ=os.environ):
    """Set RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT from an MPI
    launcher's variables when RANK is not already set (a script started with plain ``mpiexec``). GROUP_RANK
    assumes ranks are placed node by node, as mpiexec does by default. Returns whether it set them."""
    if "RANK" in environ:
        return False
    for r, s, lr, ls in _MPI_ENV:
        if r in environ and s in environ:
            rank, size = int(environ[r]), int(environ[s])
            local_size = int(environ.get(ls, size))
            environ["RANK"], environ["WORLD_SIZE"] = str(rank), str(size)
            environ["LOCAL_RANK"] = environ.get(lr, str(rank % local_size))
            environ["LOCAL_WORLD_SIZE"] = str(local_size)
            environ.setdefault("GROUP_RANK", str(rank // max(local_size, 1)))
            environ.setdefault("MASTER_ADDR", "127.0.0.1")
            environ.setdefault("MASTER_PORT", "29500")
            return True
    return False


def abort_job(message, code, comm=None):
    """Write ``message`` to stderr and abort every rank of the job with exit ``code`` (MPI_Abort on ``comm``,
    default COMM_WORLD). The message goes out in one write, and the abort waits a moment: mpiexec forwards a
    rank's stderr asynchronously, and an immediate abort cuts it short under load."""
    try:
        sys.stderr.flush()
        if message:
            os.write(2, message.encode("utf-8", "replace"))
    except OSError:
        pass
    time.sleep(0.5)
    try:
        (comm or _MPI().COMM_WORLD).Abort(code)
    except Exception:
        os._exit(code)


def _abort_on_uncaught(exc_type, exc, tb):
    """An uncaught exception on one rank must not leave the others blocked in a collective: print it, then abort
    the whole job (what ``python -m mpi4py`` does)."""
    abort_job("".join(__import__("traceback").format_exception(exc_type, exc, tb)), 1)


_excepthook = {"saved": None}


# ---- Work ------------------------------------------------------------------------------------------------------------
class _MPIWork(Work):
    """Work over MPI requests: polled with MPI_Testall, spinning briefly and then sleeping with a growing nap."""

    def __init__(self, reqs, pg, what, finish=None, result=None, statuses=None):
        super().__init__(what, finish, result, pg._timeout)
        self._reqs, self._pg, self._statuses = reqs, pg, statuses

    def _test(self):
        return _MPI().Request.Testall(self._reqs, self._statuses)

    def _block(self, seconds):
        MPI = _MPI()
        if MPI.Request.Testall(self._reqs, self._statuses):
            return True
        start = time.monotonic()
        spins, nap = 0, 0.0
        while not MPI.Request.Testall(self._reqs, self._statuses):
            spins += 1
            if spins > 200:  # after a short spin (low latency for quick collectives) back off to sleeping
                nap = min(max(nap * 2, 2e-5), 2e-3)
                time.sleep(nap)
            if time.monotonic() - start > seconds:
                return False
        return True

    def _timeout_message(self, seconds):
        return f"[Rank {self._pg.rank()}] " + super()._timeout_message(seconds)

    def source_rank(self):
        if self._statuses is None:
            return super().source_rank()
        self.wait()
        return self._statuses[0].Get_source()


# ---- the process group -----------------------------------------------------------------------------------------------
class ProcessGroupMPI(ProcessGroup):
    """A process group on an MPI communicator ``comm`` (errors returned, not fatal). ``name()`` is the backend
    name it was created for (``"gloo"`` or ``"mpi"``). Ranks passed to its methods are ranks in the group."""

    def __init__(self, comm, timeout=None, name="mpi"):
        super().__init__(comm.Get_rank(), comm.Get_size(), timeout)
        self._comm, self._name = comm, name

    def name(self):
        return self._name

    def _wait(self, reqs, what):
        _MPIWork(reqs, self, what).wait()

    def _signature_check(self, arr, what):
        """Raise RuntimeError on every rank when the ranks pass arrays of different shapes or dtypes. One small
        MAX all-reduce of (n, dtype, shape, and their negatives): equal everywhere exactly when the maximum
        equals minus the maximum of the negatives."""
        import zlib
        import numpy as np
        MPI = _MPI()
        code = zlib.crc32(arr.dtype.str.encode()) if arr is not None else 0
        shape = zlib.crc32(repr(tuple(arr.shape)).encode()) if arr is not None else 0
        n = arr.size if arr is not None else 0
        mine = np.array([n, code, shape, -n, -code, -shape], dtype=np.int64)
        out = np.empty_like(mine)
        self._wait([self._comm.Iallreduce(mine, out, op=MPI.MAX)], what)
        if (out[:3] != -out[3:]).any():
            raise RuntimeError(f"{what}: the ranks passed tensors of different shapes or dtypes (this rank: shape "
                               f"{tuple(arr.shape)}, {arr.dtype}; element counts across ranks {-out[3]}..{out[0]})")

    def _op(self, dtype, op, buf):
        MPI = _MPI()
        op = reduce_op_for(dtype, op, buf.dtype.kind)
        return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
                ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR,
                ReduceOp.BXOR: MPI.BXOR}[op], op

    def _finisher(self, op, out, wb):
        size = self.size()

        def finish():
            if op is ReduceOp.AVG:
                out[...] = out / size
            if wb is not None:
                wb(out)
        return finish

    def _work(self, reqs, what, finish=None, result=None, timeout=None):
        w = _MPIWork(reqs, self, what, finish, result)
        if timeout is not None:
            w._timeout = timeout
        return w

    # collectives
    def allreduce(self, tensors, opts):
        tensor = tensors[0]
        buf, wb = host(tensor)
        self._signature_check(buf, "all_reduce")
        mop, op = self._op(tensor.dtype, opts.reduceOp, buf)
        req = self._comm.Iallreduce(_MPI().IN_PLACE, buf, op=mop)
        return self._work([req], "all_reduce", self._finisher(op, buf, wb), [tensor], opts.timeout)

    def broadcast(self, tensors, opts):
        tensor, root = tensors[0], opts.rootRank
        buf, wb = host(tensor)
        self._signature_check(buf, "broadcast")
        req = self._comm.Ibcast(buf, root=root)
        finish = (lambda: wb(buf)) if wb is not None and self.rank() != root else None
        return self._work([req], "broadcast", finish, [tensor], opts.timeout)

    def reduce(self, tensors, opts):
        tensor, root = tensors[0], opts.rootRank
        buf, wb = host(tensor)
        self._signature_check(buf, "reduce")
        mop, op = self._op(tensor.dtype, opts.reduceOp, buf)
        me = self.rank() == root
        req = self._comm.Ireduce(_MPI().IN_PLACE if me else buf, buf if me else None, op=mop, root=root)
        return self._work([req], "reduce", self._finisher(op, buf, wb) if me else None, [tensor], opts.timeout)

    def _allgather_base(self, output, input, opts=None):
        inp, _ = host(input)
        out, wb = host(output)
        self._signature_check(inp, "all_gather_into_tensor")
        req = self._comm.Iallgather(inp, out)
        return self._work([req], "all_gather_into_tensor", (lambda: wb(out)) if wb is not None else None, [output])

    def allgather(self, output_tensors, input_tensors, opts=None):
        import numpy as np
        from ._staging import copy_into
        tensor_list = output_tensors[0]
        inp, _ = host(input_tensors[0])
        self._signature_check(inp, "all_gather")
        out = np.empty((self.size(),) + inp.shape, dtype=inp.dtype)
        req = self._comm.Iallgather(inp, out)

        def finish():
            for t, piece in zip(tensor_list, out):
                copy_into(t, piece)
        return self._work([req], "all_gather", finish, list(tensor_list))

    def _reduce_scatter_base(self, output, input, opts):
        inp, _ = host(input)
        inp = inp.copy()  # the send buffer is read while the receive buffer is written
        out, wb = host(output)
        self._signature_check(inp, "reduce_scatter_tensor")
        mop, op = self._op(input.dtype, opts.reduceOp, inp)
        req = self._comm.Ireduce_scatter_block(inp, out, op=mop)
        return self._work([req], "reduce_scatter_tensor", self._finisher(op, out, wb), [output], opts.timeout)

    def gather(self, output_tensors, input_tensors, opts):
        import numpy as np
        from ._staging import copy_into
        root = opts.rootRank
        me = self.rank() == root
        gather_list = output_tensors[0] if me else []
        inp, _ = host(input_tensors[0])
        self._signature_check(inp, "gather")
        out = np.empty((self.size(),) + inp.shape, dtype=inp.dtype) if me else None
        req = self._comm.Igather(inp, out, root=root)

        def finish():
            if me:
                for t, piece in zip(gather_list, out):
                    copy_into(t, piece)
        return self._work([req], "gather", finish, list(gather_list))

    def scatter(self, output_tensors, input_tensors, opts):
        import numpy as np
        root = opts.rootRank
        me = self.rank() == root
        tensor = output_tensors[0]
        out, wb = host(tensor)
        self._signature_check(out, "scatter")
        send = np.stack([host(t)[0].reshape(out.shape).astype(out.dtype, copy=False) for t in input_tensors[0]]) \
            if me else None
        req = self._comm.Iscatter(send, out, root=root)
        return self._work([req], "scatter", (lambda: wb(out)) if wb is not None else None, [tensor])

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        import numpy as np
        MPI = _MPI()
        inp, _ = host(input)
        out, wb = host(output)
        row_in = int(np.prod(inp.shape[1:], dtype=np.int64)) if inp.ndim else 1
        row_out = int(np.prod(out.shape[1:], dtype=np.int64)) if out.ndim else 1
        counts_in = np.array(input_split_sizes, dtype=np.int64) * row_in
        counts_out = np.array(output_split_sizes, dtype=np.int64) * row_out
        displ_in = np.concatenate([[0], np.cumsum(counts_in)[:-1]])
        displ_out = np.concatenate([[0], np.cumsum(counts_out)[:-1]])
        send = np.ascontiguousarray(inp).reshape(-1)
        recv = out.reshape(-1)
        mtype = MPI._typedict[send.dtype.char]
        req = self._comm.Ialltoallv([send, counts_in, displ_in, mtype], [recv, counts_out, displ_out, mtype])
        return self._work([req], "all_to_all_single", (lambda: wb(out)) if wb is not None else None, [output])

    def barrier(self, opts=None):
        return self._work([self._comm.Ibarrier()], "barrier", timeout=getattr(opts, "timeout", None))

    def send(self, tensors, dstRank, tag=0):
        buf, _ = host(tensors[0])
        buf = buf.copy()  # the caller may change the tensor before the send completes
        return self._work([self._comm.Isend(buf, dest=dstRank, tag=tag)], "send")

    def recv(self, tensors, srcRank, tag=0):
        MPI = _MPI()
        buf, wb = host(tensors[0])
        req = self._comm.Irecv(buf, source=srcRank, tag=tag)
        return _MPIWork([req], self, "recv", (lambda: wb(buf)) if wb is not None else None, list(tensors),
                        [MPI.Status()])

    def recv_anysource(self, tensors, tag=0):
        return self.recv(tensors, _MPI().ANY_SOURCE, tag)

    # groups
    def _new_group(self, ranks, timeout=None):
        MPI = _MPI()
        sub = self._comm.Create(self._comm.Get_group().Incl(list(ranks)))
        if sub == MPI.COMM_NULL:
            return None
        sub.Set_errhandler(MPI.ERRORS_RETURN)
        return ProcessGroupMPI(sub, timeout or self._timeout, self._name)

    def _split(self, color, key, timeout=None):
        """The group of the members that pass the same ``color`` (None: none), ordered by ``key``; every member
        calls it (MPI_Comm_split)."""
        MPI = _MPI()
        comm = self._comm.Split(MPI.UNDEFINED if color is None else color, key)
        if comm == MPI.COMM_NULL:
            return None
        comm.Set_errhandler(MPI.ERRORS_RETURN)
        return ProcessGroupMPI(comm, timeout or self._timeout, self._name)

    def shutdown(self):
        try:
            self._comm.Free()
        except Exception:
            pass
        if _excepthook["saved"] is not None and self._size > 1:
            sys.excepthook = _excepthook["saved"]
            _excepthook["saved"] = None


def create_mpi_process_group(store, rank, world_size, timeout, name="mpi"):
    """The ``Backend.register_backend`` factory of ``"mpi"`` and ``"gloo"``: a process group over all MPI ranks
    (a duplicate of COMM_WORLD). ``rank`` / ``world_size`` (-1: take MPI's) must agree with MPI's (ValueError).
    In a job of several ranks an uncaught exception then aborts the whole job."""
    MPI = _MPI()
    world = MPI.COMM_WORLD
    if world_size not in (-1, None) and int(world_size) != world.Get_size():
        raise ValueError(f"world_size={world_size} but MPI started {world.Get_size()} ranks")
    if rank not in (-1, None) and int(rank) != world.Get_rank():
        raise ValueError(f"rank={rank} but this MPI rank is {world.Get_rank()}")
    comm = world.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)  # an MPI error becomes a Python exception, not an abort
    pg = ProcessGroupMPI(comm, timeout, name)
    if sys.excepthook is sys.__excepthook__ and comm.Get_size() > 1:
        _excepthook["saved"] = sys.excepthook
        sys.excepthook = _abort_on_uncaught
    return pg

