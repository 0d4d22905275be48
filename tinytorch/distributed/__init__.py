"""``torch.distributed`` on MPI.

A process group is an MPI communicator (``mpi4py``); every collective is the matching MPI collective, started
non-blocking and waited on with the process group's timeout so that a dead or stuck peer turns into an error
instead of a hang. Backends: ``"mpi"``, and ``"gloo"`` (what CPU PyTorch scripts name) served by the same MPI
communicator. ``nccl`` is not available.

Ranks are started by ``mpiexec`` directly (``mpiexec -n 2 python script.py``) or by the torchrun-style launcher
``python -m tinytorch.distributed.run --nproc-per-node 2 script.py``. Importing this package under an MPI launcher
fills in torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ...) from the launcher's variables when
they are missing, so scripts that read ``os.environ["RANK"]`` before ``init_process_group`` work.

Tensors of any device are staged through host NumPy buffers; float16 and bfloat16 are reduced in float32 and bool
as uint8 (MPI has no such types).
"""
import datetime
import enum
import os
import pickle
import sys
import time

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "monitored_barrier", "all_reduce", "all_gather", "all_gather_into_tensor",
           "broadcast", "reduce", "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "send", "recv",
           "isend", "irecv", "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
           "ReduceOp", "Backend", "ProcessGroup", "GroupMember", "Work", "DistBackendError", "get_backend",
           "new_group", "is_torchelastic_launched", "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "get_global_rank", "get_group_rank", "get_process_group_ranks", "group", "default_pg_timeout",
           "all_to_all_single"]

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."
from .constants import default_pg_timeout  # noqa: E402


class DistBackendError(RuntimeError):
    """A backend failure (``torch.distributed.DistBackendError``): here a collective that timed out or an MPI
    error."""


class _ReduceOpMeta(type):
    def __instancecheck__(cls, obj):  # ReduceOp.SUM is a RedOpType, and an instance of ReduceOp as in PyTorch
        return isinstance(obj, ReduceOp.RedOpType) or type.__instancecheck__(cls, obj)


class ReduceOp(metaclass=_ReduceOpMeta):
    """Reduction operations (``torch.distributed.ReduceOp``): ``ReduceOp.SUM`` ... are members of the enum
    ``ReduceOp.RedOpType``, and ``ReduceOp(op)`` gives the member for a member or its value. ``AVG`` is SUM followed
    by a division by the group size (floating and complex tensors only); ``PREMUL_SUM`` is not supported."""

    class RedOpType(enum.Enum):
        SUM = "sum"
        AVG = "avg"
        PRODUCT = "product"
        MIN = "min"
        MAX = "max"
        BAND = "band"
        BOR = "bor"
        BXOR = "bxor"
        PREMUL_SUM = "premul_sum"

    SUM, AVG, PRODUCT, MIN, MAX = RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM

    def __new__(cls, op):
        return ReduceOp.RedOpType(op)


class Backend(str):
    """A backend name (``torch.distributed.Backend``): ``Backend("GLOO") == "gloo"``; an unknown name comes back
    lower-cased (third-party backends). ValueError for a non-string."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value


def is_available():
    """True when the MPI binding (``mpi4py``) can be imported: then process groups can be created."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    return is_available()


def is_gloo_available():
    """True like ``is_mpi_available``: the ``gloo`` backend name is served by MPI."""
    return is_available()


def is_nccl_available():
    return False


def is_torchelastic_launched():
    """True when started by a torchrun-style launcher (``TORCHELASTIC_RUN_ID`` set)."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


# ---- the torchrun environment, derived from an MPI launcher -------------------------------------------------------
_MPI_ENV = (  # (rank, size, local rank, local size) variables of MPICH's hydra and of Open MPI
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
)


def _env_from_mpi_launcher(environ=os.environ):
    """Set RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT from an MPI
    launcher's variables when RANK is not already set (a script started with plain ``mpiexec``). GROUP_RANK
    assumes ranks are placed node by node, as mpiexec does by default."""
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


_env_from_mpi_launcher()


# ---- process groups --------------------------------------------------------------------------------------------------
class ProcessGroup:
    """A process group: an MPI communicator, the global ranks it holds, its backend name and timeout."""

    def __init__(self, comm, ranks, backend, timeout):
        self._comm, self._ranks, self._backend, self._timeout = comm, list(ranks), Backend(backend), timeout

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default process group once initialized; ``NON_GROUP_MEMBER`` is what
    ``new_group`` returns on a rank outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember
_state = {"default": None, "groups": [], "excepthook": None}


def is_initialized():
    """True after ``init_process_group`` (and before ``destroy_process_group``)."""
    return _state["default"] is not None


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("Distributed package doesn't have MPI built in: install mpi4py and an MPI "
                           "(pip install 'tinytorch[distributed]')") from e
    return MPI


def _abort_on_uncaught(exc_type, exc, tb):
    """An uncaught exception on one rank must not leave the others blocked in a collective: print it, then abort
    the whole job (what ``python -m mpi4py`` does)."""
    abort_job("".join(__import__("traceback").format_exception(exc_type, exc, tb)), 1)


def abort_job(message, code, comm=None):
    """Write ``message`` to stderr and abort every rank of the job with exit ``code`` (MPI_Abort on ``comm``,
    default COMM_WORLD). The message goes out in one write, and the abort waits a moment: mpiexec forwards a
    rank's stderr asynchronously, and an immediate abort cuts it short under load."""
    import time
    try:
        sys.stderr.flush()
        if message:
            os.write(2, message.encode("utf-8", "replace"))
    except OSError:
        pass
    time.sleep(0.5)
    try:
        (comm or _mpi().COMM_WORLD).Abort(code)
    except Exception:
        os._exit(code)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Initialize the default process group over all MPI ranks (``torch.distributed.init_process_group``).

    ``backend``: ``"mpi"``, ``"gloo"`` (served by MPI) or None (gloo); ``"nccl"`` raises RuntimeError. The ranks
    and their number come from MPI; ``rank`` / ``world_size``, when given, must agree with it (ValueError
    otherwise). ``init_method`` and ``store`` are accepted but unused: mpiexec already connected the ranks.
    ``timeout`` (a ``datetime.timedelta``, default 30 minutes) bounds every collective of the group.
    ValueError when called twice."""
    if _state["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "gloo" if backend is None else str(backend).lower()
    if name.startswith("cpu:"):  # "cpu:gloo,cuda:nccl" style: take the cpu entry
        name = name.split(",")[0].split(":", 1)[1]
    if "," in name:
        name = [p.split(":", 1)[-1] for p in name.split(",")][0]
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in ("gloo", "mpi"):
        raise ValueError(f"Invalid backend: '{backend}'")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    MPI = _mpi()
    world = MPI.COMM_WORLD
    if world_size not in (-1, None) and int(world_size) != world.Get_size():
        raise ValueError(f"world_size={world_size} but MPI started {world.Get_size()} ranks")
    if rank not in (-1, None) and int(rank) != world.Get_rank():
        raise ValueError(f"rank={rank} but this MPI rank is {world.Get_rank()}")
    comm = world.Dup()
    comm.Set_errhandler(MPI.ERRORS_RETURN)  # an MPI error becomes a Python exception, not an abort
    pg = ProcessGroup(comm, range(comm.Get_size()), name, timeout or default_pg_timeout)
    _state["default"] = pg
    _state["groups"] = [pg]
    GroupMember.WORLD = pg
    if sys.excepthook is sys.__excepthook__ and comm.Get_size() > 1:
        _state["excepthook"] = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def destroy_process_group(group=None):
    """Free ``group``'s communicator; with None, every process group and the default one (afterwards
    ``is_initialized()`` is False and ``init_process_group`` may be called again)."""
    if _state["default"] is None:
        raise AssertionError("Process group cannot be None")
    targets = list(_state["groups"]) if group is None or group is _state["default"] else [group]
    for pg in targets:
        try:
            pg._comm.Free()
        except Exception:
            pass
        if pg in _state["groups"]:
            _state["groups"].remove(pg)
    if group is None or group is _state["default"]:
        _state["default"] = None
        _state["groups"] = []
        GroupMember.WORLD = None
        if _state["excepthook"] is not None:
            sys.excepthook = _state["excepthook"]
            _state["excepthook"] = None


def _group(group):
    pg = _state["default"]
    if pg is None:
        raise ValueError(_NOT_INIT)
    if group is None:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A process group of the given global ``ranks`` (all of them when None); every rank of the default group
    must call it, in the same order (``torch.distributed.new_group``). Ranks outside get
    ``GroupMember.NON_GROUP_MEMBER``. ValueError for a rank outside the world."""
    world = _group(None)
    n = world.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
    for r in ranks:
        if r < 0 or r >= n:
            raise ValueError(f"Invalid rank {r}, rank should be in the interval [0, {n - 1}]")
    MPI = _mpi()
    sub = world._comm.Create(world._comm.Get_group().Incl(ranks))
    if sub == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    sub.Set_errhandler(MPI.ERRORS_RETURN)
    pg = ProcessGroup(sub, ranks, backend or world._backend, timeout or world._timeout)
    _state["groups"].append(pg)
    return pg


def get_rank(group=None):
    """This process's rank in ``group`` (the default group when None); -1 outside the group."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of ranks in ``group``; -1 outside the group."""
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    """The backend name of ``group`` (``"gloo"`` or ``"mpi"``)."""
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    """The global ranks of ``group``, in group-rank order."""
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    ranks = _group(group)._ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of global rank ``global_rank``."""
    ranks = _group(group)._ranks
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# ---- host staging ----------------------------------------------------------------------------------------------------
_STAGE = {"float16": "float32", "bfloat16": "float32", "bool": "uint8"}


def _host(t):
    """``(buf, writeback)``: a contiguous NumPy array with ``t``'s values in a dtype MPI knows, and a function
    that copies a result array back into ``t`` (None when ``buf`` is ``t``'s own memory)."""
    import numpy as np
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    d = t.detach()
    direct = d.device.type == "cpu" and d.is_contiguous() and str(d.dtype).split(".")[-1] not in _STAGE
    if direct:
        return d.numpy(), None
    a = d.cpu().numpy()
    stage = _STAGE.get(a.dtype.name)
    buf = np.array(a, dtype=stage or a.dtype, order="C")  # a copy; np.array keeps 0-d arrays 0-d

    def writeback(res):
        from .._ops.creation import from_numpy
        r = res != 0 if a.dtype == np.bool_ else res.astype(a.dtype, copy=False)
        from ..autograd.grad_mode import no_grad
        with no_grad():
            t.copy_(from_numpy(np.array(r, order="C").reshape(tuple(t.shape))).to(t.device))
    return buf, writeback


def _mpi_op(op, buf):
    MPI = _mpi()
    if isinstance(op, str):
        op = ReduceOp(op)
    if op is ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by the mpi/gloo backend")
    if op is ReduceOp.AVG and buf.dtype.kind not in "fc":
        raise ValueError(f"ReduceOp.AVG needs a floating or complex tensor, got {buf.dtype}")
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
            ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op], op


def _reduction(dtype, op, buf):
    """(MPI op, ReduceOp) for reducing ``buf``, the host array of a tensor of ``dtype``: a bool tensor's ops are
    the logical ones."""
    if str(dtype) == "torch.bool":
        op = _bool_op(ReduceOp(op) if isinstance(op, str) else op)
    return _mpi_op(op, buf)


def _finisher(op, out, size, wb):
    """What completes a reduction into ``out`` once MPI is done: AVG divides by the group's size, and a staged
    result is written back to its tensor (``wb``)."""
    def finish():
        if op is ReduceOp.AVG:
            out[...] = out / size
        if wb is not None:
            wb(out)
    return finish


def _bool_op(op):
    """A bool tensor staged as uint8: SUM is logical or (MAX), PRODUCT logical and (MIN)."""
    return {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.AVG: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)


def _signature_check(pg, arr, what):
    """Raise RuntimeError on every rank when the ranks pass tensors of different shapes or dtypes: MPI would
    otherwise truncate, read past a buffer or block. One small MAX all-reduce of (n, dtype, shape, and their
    negatives): equal everywhere exactly when the maximum equals minus the maximum of the negatives."""
    import zlib
    import numpy as np
    MPI = _mpi()
    code = zlib.crc32(arr.dtype.str.encode()) if arr is not None else 0
    shape = zlib.crc32(repr(tuple(arr.shape)).encode()) if arr is not None else 0
    n = arr.size if arr is not None else 0
    mine = np.array([n, code, shape, -n, -code, -shape], dtype=np.int64)
    out = np.empty_like(mine)
    _wait([pg._comm.Iallreduce(mine, out, op=MPI.MAX)], pg, what)
    if (out[:3] != -out[3:]).any():
        raise RuntimeError(f"{what}: the ranks passed tensors of different shapes or dtypes (this rank: shape "
                           f"{tuple(arr.shape)}, {arr.dtype}; element counts across ranks {-out[3]}..{out[0]})")


def _wait(reqs, pg, what, timeout=None, statuses=None):
    """Wait for MPI requests, polling, and raise DistBackendError after the group's timeout: a peer that died
    or never joins the collective must not block this rank forever."""
    MPI = _mpi()
    limit = (timeout or pg._timeout).total_seconds()
    if MPI.Request.Testall(reqs, statuses):
        return
    start = time.monotonic()
    spins, nap = 0, 0.0
    while not MPI.Request.Testall(reqs, statuses):
        spins += 1
        if spins > 200:  # after a short spin (low latency for quick collectives) back off to sleeping
            nap = min(max(nap * 2, 2e-5), 2e-3)
            time.sleep(nap)
        if time.monotonic() - start > limit:
            raise DistBackendError(f"[Rank {_state['default'].rank() if _state['default'] else '?'}] {what} "
                                   f"timed out after {limit * 1000:.0f} ms (process group timeout): a rank "
                                   "died or did not join the collective")


class Work:
    """The handle of an ``async_op=True`` operation (``torch.distributed.Work``): ``wait()`` blocks until it is
    done (raising DistBackendError after the group's timeout) and finishes the copy back into the tensors;
    ``is_completed()`` polls."""

    def __init__(self, reqs, pg, what, finish=None, result=None):
        self._reqs, self._pg, self._what, self._finish, self._result = reqs, pg, what, finish, result
        self._done = False
        self._exc = None
        self._statuses = None

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def is_completed(self):
        if self._done:
            return True
        if _mpi().Request.Testall(self._reqs, self._statuses):
            self._complete()
        return self._done

    def wait(self, timeout=None):
        if not self._done:
            try:
                _wait(self._reqs, self._pg, self._what, timeout, self._statuses)
            except Exception as e:
                self._exc = e
                raise
            self._complete()
        return True

    def is_success(self):
        return self._done and self._exc is None

    def exception(self):
        return self._exc

    def result(self):
        self.wait()
        return list(self._result or [])

    def source_rank(self):
        """The global rank a finished receive came from."""
        self.wait()
        return self._pg._ranks[self._statuses[0].Get_source()]


def _run(reqs, pg, what, finish, async_op, result=None):
    w = Work(reqs, pg, what, finish, result)
    if async_op:
        return w
    w.wait()
    return None


def _check_rank(pg, r, name):
    if r is None or not 0 <= int(r) < pg.size():
        raise ValueError(f"Invalid {name} rank {r}: expected a rank in [0, {pg.size() - 1}]")
    return int(r)


def _group_peer(pg, global_rank, group_rank, name):
    """A peer's rank inside ``pg`` from a global rank (``src=``/``dst=``) or a group rank (``group_src=``)."""
    if group_rank is not None:
        return _check_rank(pg, group_rank, name)
    if global_rank is None:
        raise ValueError(f"{name} rank must be given")
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(int(global_rank))


# ---- collectives -----------------------------------------------------------------------------------------------------
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over all ranks of ``group`` in place, every rank getting the result
    (``torch.distributed.all_reduce``; MPI_Iallreduce). Every rank must pass a tensor of the same size and dtype
    (RuntimeError otherwise). Returns a Work with ``async_op=True``, else None."""
    pg = _group(group)
    if pg is None:
        return None
    buf, wb = _host(tensor)
    _signature_check(pg, buf, "all_reduce")
    mop, op = _reduction(tensor.dtype, op, buf)
    out = buf
    req = pg._comm.Iallreduce(_mpi().IN_PLACE, out, op=mop)
    finish = _finisher(op, out, pg.size(), wb)
    return _run([req], pg, "all_reduce", finish, async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` (a global rank; or ``group_src``, a rank in ``group``) into ``tensor`` on
    every rank (``torch.distributed.broadcast``; MPI_Ibcast). Sizes and dtypes must match (RuntimeError)."""
    pg = _group(group)
    if pg is None:
        return None
    root = _group_peer(pg, src, group_src, "src")
    buf, wb = _host(tensor)
    _signature_check(pg, buf, "broadcast")
    req = pg._comm.Ibcast(buf, root=root)
    return _run([req], pg, "broadcast", (lambda: wb(buf)) if wb is not None and pg.rank() != root else None,
                async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the ranks into ``tensor`` of rank ``dst`` only (``torch.distributed.reduce``;
    MPI_Ireduce); the other ranks' tensors are left as they were."""
    pg = _group(group)
    if pg is None:
        return None
    root = _group_peer(pg, dst, group_dst, "dst")
    buf, wb = _host(tensor)
    _signature_check(pg, buf, "reduce")
    mop, op = _reduction(tensor.dtype, op, buf)
    MPI = _mpi()
    me = pg.rank() == root
    req = pg._comm.Ireduce(MPI.IN_PLACE if me else buf, buf if me else None, op=mop, root=root)
    return _run([req], pg, "reduce", _finisher(op, buf, pg.size(), wb) if me else None, async_op, [tensor])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's ``input_tensor`` along dim 0 (or stack it: ``output_tensor`` of shape
    ``(world_size, *input.shape)``) into ``output_tensor`` on every rank
    (``torch.distributed.all_gather_into_tensor``; MPI_Iallgather). ValueError unless the output holds exactly
    world_size times the input's elements of the same dtype."""
    pg = _group(group)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("output tensor must have the same dtype as the input tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    inp, _ = _host(input_tensor)
    out, wb = _host(output_tensor)
    _signature_check(pg, inp, "all_gather_into_tensor")
    req = pg._comm.Iallgather(inp, out)
    return _run([req], pg, "all_gather_into_tensor", (lambda: wb(out)) if wb is not None else None, async_op,
                [output_tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list[r]`` with rank r's ``tensor`` on every rank (``torch.distributed.all_gather``;
    MPI_Iallgather). ``tensor_list`` holds world_size tensors of ``tensor``'s size and dtype (ValueError)."""
    import numpy as np
    pg = _group(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"tensor_list must hold world_size={pg.size()} tensors, got {len(tensor_list)}")
    for t in tensor_list:
        if t.numel() != tensor.numel() or t.dtype != tensor.dtype:
            raise ValueError("all_gather: every tensor of tensor_list must have the input tensor's size and dtype")
    inp, _ = _host(tensor)
    _signature_check(pg, inp, "all_gather")
    out = np.empty((pg.size(),) + inp.shape, dtype=inp.dtype)
    req = pg._comm.Iallgather(inp, out)

    def finish():
        for t, piece in zip(tensor_list, out):
            _copy_into(t, piece)
    return _run([req], pg, "all_gather", finish, async_op, list(tensor_list))


def _copy_into(t, arr):
    """Write host array ``arr`` (staged dtype allowed) into tensor ``t`` of any device and dtype."""
    import numpy as np
    from .._ops.creation import from_numpy
    from ..autograd.grad_mode import no_grad
    with no_grad():
        src = from_numpy(np.array(arr, order="C").reshape(tuple(t.shape)))
        t.copy_(src.to(device=t.device, dtype=t.dtype))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world_size times ``output``'s elements: rank r's share is the r-th chunk along dim 0)
    over the ranks and leave share r in ``output`` on rank r (``torch.distributed.reduce_scatter_tensor``;
    MPI_Ireduce_scatter_block). ValueError for mismatched sizes or dtypes."""
    pg = _group(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError("input tensor must have the same dtype as the output tensor")
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    inp, _ = _host(input)
    inp = inp.copy()  # the send buffer is read while the receive buffer is written
    out, wb = _host(output)
    _signature_check(pg, inp, "reduce_scatter_tensor")
    mop, op = _reduction(input.dtype, op, inp)
    req = pg._comm.Ireduce_scatter_block(inp, out, op=mop)
    finish = _finisher(op, out, pg.size(), wb)
    return _run([req], pg, "reduce_scatter_tensor", finish, async_op, [output])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[r]`` over the ranks into ``output`` of rank r (``torch.distributed.reduce_scatter``).
    ``input_list`` holds world_size tensors of ``output``'s size (ValueError)."""
    import numpy as np
    from .._ops.creation import from_numpy
    pg = _group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"input_list must hold world_size={pg.size()} tensors, got {len(input_list)}")
    stacked = np.stack([t.detach().cpu().numpy().reshape(tuple(output.shape)) for t in input_list])
    return reduce_scatter_tensor(output, from_numpy(stacked).to(output.dtype), op, group, async_op)


def _rooted(pg, peer, group_peer, kind, lst, list_name, role):
    """(root's rank in ``pg``, whether this rank is it) of a rooted collective (gather, scatter), with PyTorch's
    ValueErrors for the list argument: required on the root with one entry per rank, None elsewhere."""
    if peer is None and group_peer is None:
        peer = 0
    root = _group_peer(pg, peer, group_peer, kind)
    me = pg.rank() == root
    if me:
        if lst is None or len(lst) != pg.size():
            raise ValueError(f"Argument ``{list_name}`` must be specified on {role} rank.")
    elif lst:
        raise ValueError(f"Argument ``{list_name}`` must NOT be specified on non-{role} ranks.")
    return root, me


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Collect every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (``torch.distributed.gather``;
    MPI_Igather). ``gather_list`` (world_size tensors) is required on dst and must be None elsewhere
    (ValueError)."""
    import numpy as np
    pg = _group(group)
    if pg is None:
        return None
    root, me = _rooted(pg, dst, group_dst, "dst", gather_list, "gather_list", "destination")
    inp, _ = _host(tensor)
    _signature_check(pg, inp, "gather")
    out = np.empty((pg.size(),) + inp.shape, dtype=inp.dtype) if me else None
    req = pg._comm.Igather(inp, out, root=root)

    def finish():
        if me:
            for t, piece in zip(gather_list, out):
                _copy_into(t, piece)
    return _run([req], pg, "gather", finish, async_op, list(gather_list or []))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send ``scatter_list[r]`` of rank ``src`` to ``tensor`` of rank r (``torch.distributed.scatter``;
    MPI_Iscatter). ``scatter_list`` is required on src and must be None elsewhere (ValueError)."""
    import numpy as np
    pg = _group(group)
    if pg is None:
        return None
    root, me = _rooted(pg, src, group_src, "src", scatter_list, "scatter_list", "source")
    out, wb = _host(tensor)
    _signature_check(pg, out, "scatter")
    send = np.stack([_host(t)[0].reshape(out.shape).astype(out.dtype, copy=False) for t in scatter_list]) \
        if me else None
    req = pg._comm.Iscatter(send, out, root=root)
    return _run([req], pg, "scatter", (lambda: wb(out)) if wb is not None else None, async_op, [tensor])


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Block until every rank of ``group`` reaches the barrier (``torch.distributed.barrier``; MPI_Ibarrier),
    at most ``timeout`` (default: the group's) before DistBackendError."""
    pg = _group(group)
    if pg is None:
        return None
    w = Work([pg._comm.Ibarrier()], pg, "barrier")
    if async_op:
        return w
    w.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """``barrier`` with a timeout (``torch.distributed.monitored_barrier``)."""
    return barrier(group, timeout=timeout)


# ---- point to point --------------------------------------------------------------------------------------------------
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst`` (``torch.distributed.isend``; MPI_Isend); returns a Work."""
    pg = _group(group)
    if pg is None:
        return None
    peer = _group_peer(pg, dst, group_dst, "dst")
    buf, _ = _host(tensor)
    buf = buf.copy()  # the caller may change tensor before the send completes
    return Work([pg._comm.Isend(buf, dest=peer, tag=tag)], pg, "send")


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None) (``torch.distributed.irecv``;
    MPI_Irecv); returns a Work whose ``source_rank()`` tells the sender once done."""
    MPI = _mpi()
    pg = _group(group)
    if pg is None:
        return None
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _group_peer(pg, src, group_src, "src")
    buf, wb = _host(tensor)
    req = pg._comm.Irecv(buf, source=peer, tag=tag)
    w = Work([req], pg, "recv", (lambda: wb(buf)) if wb is not None else None)
    w._statuses = [MPI.Status()]
    return w


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is out (``torch.distributed.send``)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None) and return the sender's rank
    (``torch.distributed.recv``)."""
    w = irecv(tensor, src, group, tag, group_src)
    w.wait()
    return w.source_rank()


# ---- Python objects --------------------------------------------------------------------------------------------------
def _obj_bcast(pg, obj, root):
    """Pickle ``obj`` on ``root`` and broadcast it (a size, then the bytes: two MPI_Ibcast, with the timeout)."""
    import numpy as np
    me = pg.rank() == root
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8) if me else None
    n = np.array([data.size if me else 0], dtype=np.int64)
    _wait([pg._comm.Ibcast(n, root=root)], pg, "broadcast_object_list")
    if not me:
        data = np.empty(int(n[0]), dtype=np.uint8)
    _wait([pg._comm.Ibcast(data, root=root)], pg, "broadcast_object_list")
    return obj if me else pickle.loads(data.tobytes())


def _obj_allgather(pg, obj, what):
    import numpy as np
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    sizes = np.empty(pg.size(), dtype=np.int64)
    _wait([pg._comm.Iallgather(np.array([data.size], dtype=np.int64), sizes)], pg, what)
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    offs = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    _wait([pg._comm.Iallgatherv(data, [out, sizes, offs, _mpi().BYTE])], pg, what)
    return [pickle.loads(out[o:o + s].tobytes()) for o, s in zip(offs, sizes)]


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s items on every rank by those of rank ``src`` (picklable objects;
    ``torch.distributed.broadcast_object_list``). Lists must have the same length on every rank."""
    pg = _group(group)
    if pg is None:
        return
    if src is None and group_src is None:
        src = 0
    root = _group_peer(pg, src, group_src, "src")
    got = _obj_bcast(pg, list(object_list), root)
    if len(got) != len(object_list):
        raise RuntimeError(f"broadcast_object_list: rank {root} sent {len(got)} objects, this rank's list holds "
                           f"{len(object_list)}")
    object_list[:] = got


def all_gather_object(object_list, obj, group=None):
    """Set ``object_list[r]`` to rank r's ``obj`` on every rank (``torch.distributed.all_gather_object``);
    ``object_list`` must have world_size items (ValueError)."""
    pg = _group(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"object_list must hold world_size={pg.size()} items, got {len(object_list)}")
    object_list[:] = _obj_allgather(pg, obj, "all_gather_object")


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Collect every rank's ``obj`` into ``object_gather_list`` on rank ``dst``
    (``torch.distributed.gather_object``)."""
    pg = _group(group)
    if pg is None:
        return
    if dst is None and group_dst is None:
        dst = 0
    root = _group_peer(pg, dst, group_dst, "dst")
    objs = _obj_allgather(pg, obj, "gather_object")
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
        object_gather_list[:] = objs


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Put item r of rank ``src``'s ``scatter_object_input_list`` into ``scatter_object_output_list[0]`` of rank
    r (``torch.distributed.scatter_object_list``)."""
    pg = _group(group)
    if pg is None:
        return
    if src is None and group_src is None:
        src = 0
    root = _group_peer(pg, src, group_src, "src")
    items = _obj_bcast(pg, list(scatter_object_input_list) if pg.rank() == root else None, root)
    scatter_object_output_list[0] = items[pg.rank()]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """Split ``input`` along dim 0 into one block per rank (``input_split_sizes`` rows each, equal blocks when
    None), send block r to rank r, and write the blocks received, in rank order, into ``output`` (whose dim 0
    is split by ``output_split_sizes``) (``torch.distributed.all_to_all_single``; MPI_Ialltoallv). ValueError
    for split sizes that do not match the tensors or the group size, or for differing dtypes."""
    import numpy as np
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise ValueError("all_to_all_single: input and output must have the same dtype")

    def splits(t, sizes, what):
        rows = t.shape[0] if t.dim() else 1
        if sizes is None or len(sizes) == 0:
            if rows % n:
                raise ValueError(f"all_to_all_single: {what} dim 0 ({rows}) is not divisible by the group size {n}")
            return [rows // n] * n
        sizes = [int(x) for x in sizes]
        if len(sizes) != n or sum(sizes) != rows or min(sizes) < 0:
            raise ValueError(f"all_to_all_single: {what}_split_sizes {sizes} must hold {n} sizes summing to "
                             f"dim 0 ({rows})")
        return sizes
    ins = splits(input, input_split_sizes, "input")
    outs = splits(output, output_split_sizes, "output")
    inp, _ = _host(input)
    out, wb = _host(output)
    row_in = int(np.prod(inp.shape[1:], dtype=np.int64)) if inp.ndim else 1
    row_out = int(np.prod(out.shape[1:], dtype=np.int64)) if out.ndim else 1
    if row_in != row_out:
        raise ValueError("all_to_all_single: input and output rows must hold the same number of elements")
    counts_in = np.array(ins, dtype=np.int64) * row_in
    counts_out = np.array(outs, dtype=np.int64) * row_out
    displ_in = np.concatenate([[0], np.cumsum(counts_in)[:-1]])
    displ_out = np.concatenate([[0], np.cumsum(counts_out)[:-1]])
    send = np.ascontiguousarray(inp).reshape(-1)
    recv = out.reshape(-1)
    MPI = _mpi()
    mtype = MPI._typedict[send.dtype.char]
    req = pg._comm.Ialltoallv([send, counts_in, displ_in, mtype], [recv, counts_out, displ_out, mtype])
    return _run([req], pg, "all_to_all_single", (lambda: wb(out)) if wb is not None else None, async_op, [output])


def __getattr__(name):
    # DeviceMesh lives in device_mesh.py (NumPy-heavy); loaded on first use, as ``torch.distributed.DeviceMesh``
    if name in ("DeviceMesh", "init_device_mesh"):
        from . import device_mesh
        return getattr(device_mesh, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
