"""``torch.distributed``: process groups and collectives over a pluggable backend.

As in PyTorch, the functions here (``all_reduce``, ``broadcast``, ...) check their arguments, translate global
ranks into group ranks and call the group's ``ProcessGroup`` interface (``_c10d.py``), which returns a ``Work``;
they never touch a transport. Backends: ``"mpi"`` and ``"gloo"`` (what CPU PyTorch scripts name) are served by
``ProcessGroupMPI`` (``_mpi.py``, mpi4py); ``"threaded"`` simulates N ranks with N threads of one process
(``_threaded_pg.py``, for tests); ``Backend.register_backend(name, func)`` adds another. ``nccl`` is not
available.

Ranks are started by ``mpiexec`` directly (``mpiexec -n 2 python script.py``) or by the torchrun-style launcher
``python -m tinytorch.distributed.run --nproc-per-node 2 script.py``. Importing this package under an MPI launcher
fills in torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ...) from the launcher's variables when
they are missing, so scripts that read ``os.environ["RANK"]`` before ``init_process_group`` work.
"""
import datetime
import os
import pickle

from ._c10d import (AllgatherOptions, AllreduceOptions, AllToAllOptions, BarrierOptions, BroadcastOptions,  # noqa
                    DistBackendError, GatherOptions, GradBucket, ProcessGroup, ReduceOp, ReduceOptions,
                    ReduceScatterOptions, ScatterOptions, Work, current_world)
from ._mpi import abort_job, env_from_mpi_launcher  # noqa: F401 (abort_job: the launcher's worker uses it)
from .constants import default_pg_timeout

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "monitored_barrier", "all_reduce", "all_gather", "all_gather_into_tensor",
           "broadcast", "reduce", "gather", "scatter", "reduce_scatter", "reduce_scatter_tensor", "send", "recv",
           "isend", "irecv", "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
           "ReduceOp", "Backend", "ProcessGroup", "GroupMember", "Work", "DistBackendError", "get_backend",
           "new_group", "split_group", "is_torchelastic_launched", "is_mpi_available", "is_gloo_available",
           "is_nccl_available", "get_global_rank", "get_group_rank", "get_process_group_ranks", "group",
           "default_pg_timeout", "all_to_all_single", "GradBucket", "AllreduceOptions", "BroadcastOptions",
           "ReduceOptions", "AllgatherOptions", "GatherOptions", "ScatterOptions", "ReduceScatterOptions",
           "AllToAllOptions", "BarrierOptions"]

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


def _mpi_factory(name):
    def create(store, rank, world_size, timeout):
        from ._mpi import create_mpi_process_group
        return create_mpi_process_group(store, rank, world_size, timeout, name)
    return create


def _threaded_factory(store, rank, world_size, timeout):
    from ._threaded_pg import create_threaded_process_group
    return create_threaded_process_group(store, rank, world_size, timeout)


class Backend(str):
    """A backend name (``torch.distributed.Backend``): ``Backend("GLOO") == "gloo"``; an unknown name comes back
    lower-cased (third-party backends). ValueError for a non-string.

    ``Backend.register_backend(name, func, extended_api=False, devices=None)`` makes ``init_process_group(name)``
    create the default group with ``func(store, rank, world_size, timeout)``, which returns a ``ProcessGroup``
    (subclass it and implement the collectives); ``new_group`` then asks that group for sub-groups. Registering
    a built-in name raises ValueError."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, MPI]
    _factories = {"gloo": _mpi_factory("gloo"), "mpi": _mpi_factory("mpi"), "threaded": _threaded_factory}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        """Register ``func(store, rank, world_size, timeout) -> ProcessGroup`` under ``name`` (see the class
        docstring). ``extended_api=True`` is not supported (ValueError)."""
        if name.lower() in (cls.GLOO, cls.NCCL, cls.MPI, cls.UNDEFINED):
            raise ValueError(f"{name.upper()} c10d backend already exist")
        if extended_api:
            raise ValueError("register_backend: extended_api=True is not supported")
        if not hasattr(Backend, name.upper()):
            setattr(Backend, name.upper(), name.lower())
        if name.lower() not in Backend.backend_list:
            Backend.backend_list.append(name.lower())
        Backend._factories[name.lower()] = func


def is_available():
    """True when the MPI binding (``mpi4py``) can be imported: then process groups can be created."""
    from ._mpi import is_available as mpi
    return mpi()


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


env_from_mpi_launcher()


# ---- process groups --------------------------------------------------------------------------------------------------
class _GroupMemberMeta(type):
    @property
    def WORLD(cls):  # the calling thread's world under the in-process backend
        return current_world().default


class GroupMember(metaclass=_GroupMemberMeta):
    """``GroupMember.WORLD`` is the default process group once initialized (None before); ``NON_GROUP_MEMBER``
    is what ``new_group`` returns on a rank outside the new group."""
    NON_GROUP_MEMBER = -100


group = GroupMember


def is_initialized():
    """True after ``init_process_group`` (and before ``destroy_process_group``)."""
    return current_world().default is not None


def _backend_name(backend):
    name = "gloo" if backend is None else str(backend).lower()
    if name.startswith("cpu:"):  # "cpu:gloo,cuda:nccl" style: take the cpu entry
        name = name.split(",")[0].split(":", 1)[1]
    if "," in name:
        name = [p.split(":", 1)[-1] for p in name.split(",")][0]
    return name


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Initialize the default process group (``torch.distributed.init_process_group``).

    ``backend``: ``"mpi"``, ``"gloo"`` (served by MPI; the default), ``"threaded"`` (the in-process backend), or
    a name given to ``Backend.register_backend``; ``"nccl"`` raises RuntimeError, an unknown name ValueError. With
    MPI the ranks and their number come from MPI, and ``rank`` / ``world_size``, when given, must agree with it
    (ValueError otherwise); ``init_method`` and ``store`` are passed to a registered backend's factory (MPI
    ignores them: mpiexec already connected the ranks). ``timeout`` (a ``datetime.timedelta``, default 30
    minutes) bounds every collective of the group (TypeError otherwise). ValueError when called twice."""
    world = current_world()
    if world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if name == "nccl":
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name not in Backend._factories:
        raise ValueError(f"Invalid backend: '{backend}'")
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    timeout = timeout or default_pg_timeout
    pg = Backend._factories[name](store, -1 if rank is None else rank, -1 if world_size is None else world_size,
                                  timeout)
    if not isinstance(pg, ProcessGroup):
        raise TypeError(f"the factory of backend {name!r} returned {type(pg).__name__}, not a ProcessGroup")
    pg.set_timeout(timeout)
    world.default = pg
    world.ranks = {pg: list(range(pg.size()))}
    world.backends = {pg: name}


def destroy_process_group(group=None):
    """Shut ``group`` down; with None, every process group and the default one (afterwards ``is_initialized()``
    is False and ``init_process_group`` may be called again). AssertionError before ``init_process_group``."""
    world = current_world()
    if world.default is None:
        raise AssertionError("Process group cannot be None")
    everything = group is None or group is world.default
    targets = world.groups() if everything else [group]
    for pg in targets:
        pg.shutdown()
        world.ranks.pop(pg, None)
        world.backends.pop(pg, None)
    if everything:
        world.default = None


def _group(group):
    pg = current_world().default
    if pg is None:
        raise ValueError(_NOT_INIT)
    if group is None:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def _register(pg, ranks, backend):
    world = current_world()
    world.ranks[pg] = [int(r) for r in ranks]
    world.backends[pg] = backend
    return pg


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
    sub = world._new_group(ranks, timeout)
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    return _register(sub, ranks, backend or current_world().backends[world])


def split_group(parent_pg=None, split_ranks=None, timeout=None, pg_options=None, group_desc=None, backend=None):
    """Split ``parent_pg`` (the default group when None) into the groups listed by ``split_ranks`` (lists of
    global ranks, disjoint), called by every member of the parent with the same lists
    (``torch.distributed.split_group``). Returns the group holding this rank, or None. A list equal to the whole
    parent in order gives the parent itself. ValueError for an empty ``split_ranks`` or a rank listed twice."""
    parent = _group(parent_pg)
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    world = current_world()
    parent_ranks = world.ranks[parent]
    seen = set()
    for line in split_ranks:
        for r in line:
            if r in seen:
                raise ValueError(f"rank {r} appears in more than one split group")
            if r not in parent_ranks:
                raise ValueError(f"rank {r} is not a member of the parent group")
            seen.add(r)
    mine = None
    for line in split_ranks:
        line = [int(r) for r in line]
        if line == parent_ranks:
            mine = parent
            continue
        sub = parent._new_group([parent_ranks.index(r) for r in line], timeout)
        if sub is not None:
            mine = _register(sub, line, backend or world.backends[parent])
    return mine


def get_rank(group=None):
    """This process's rank in ``group`` (the default group when None); -1 outside the group."""
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of ranks in ``group``; -1 outside the group."""
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    """The backend name of ``group`` (``"gloo"``, ``"mpi"``, ``"threaded"``, ...)."""
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return current_world().backends.get(pg, pg.name())


def get_process_group_ranks(group):
    """The global ranks of ``group``, in group-rank order."""
    return list(current_world().ranks[_group(group)])


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    ranks = current_world().ranks[_group(group)]
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of global rank ``global_rank``."""
    ranks = current_world().ranks[_group(group)]
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


# ---- argument checks shared by the collectives ----------------------------------------------------------------
def _tensor(t, what):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(t).__name__}")
    return t


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
    ranks = current_world().ranks[pg]
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return ranks.index(int(global_rank))


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


# ---- collectives -----------------------------------------------------------------------------------------------------
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over all ranks of ``group`` in place, every rank getting the result
    (``torch.distributed.all_reduce``). Every rank must pass a tensor of the same size and dtype (RuntimeError
    otherwise). Returns a Work with ``async_op=True``, else None."""
    pg = _group(group)
    if pg is None:
        return None
    return _finish(pg.allreduce([_tensor(tensor, "all_reduce")], AllreduceOptions(reduceOp=op)), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` (a global rank; or ``group_src``, a rank in ``group``) into ``tensor`` on
    every rank (``torch.distributed.broadcast``). Sizes and dtypes must match (RuntimeError)."""
    pg = _group(group)
    if pg is None:
        return None
    root = _group_peer(pg, src, group_src, "src")
    return _finish(pg.broadcast([_tensor(tensor, "broadcast")], BroadcastOptions(rootRank=root)), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the ranks into ``tensor`` of rank ``dst`` only (``torch.distributed.reduce``);
    the other ranks' tensors are left as they were."""
    pg = _group(group)
    if pg is None:
        return None
    root = _group_peer(pg, dst, group_dst, "dst")
    return _finish(pg.reduce([_tensor(tensor, "reduce")], ReduceOptions(reduceOp=op, rootRank=root)), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's ``input_tensor`` along dim 0 (or stack it: ``output_tensor`` of shape
    ``(world_size, *input.shape)``) into ``output_tensor`` on every rank
    (``torch.distributed.all_gather_into_tensor``). ValueError unless the output holds exactly world_size times
    the input's elements of the same dtype."""
    pg = _group(group)
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise ValueError("output tensor must have the same dtype as the input tensor")
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    return _finish(pg._allgather_base(output_tensor, input_tensor, AllgatherOptions()), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list[r]`` with rank r's ``tensor`` on every rank (``torch.distributed.all_gather``).
    ``tensor_list`` holds world_size tensors of ``tensor``'s size and dtype (ValueError)."""
    pg = _group(group)
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise ValueError(f"tensor_list must hold world_size={pg.size()} tensors, got {len(tensor_list)}")
    for t in tensor_list:
        if t.numel() != tensor.numel() or t.dtype != tensor.dtype:
            raise ValueError("all_gather: every tensor of tensor_list must have the input tensor's size and dtype")
    return _finish(pg.allgather([list(tensor_list)], [_tensor(tensor, "all_gather")], AllgatherOptions()),
                   async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world_size times ``output``'s elements: rank r's share is the r-th chunk along dim 0)
    over the ranks and leave share r in ``output`` on rank r (``torch.distributed.reduce_scatter_tensor``).
    ValueError for mismatched sizes or dtypes."""
    pg = _group(group)
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise ValueError("input tensor must have the same dtype as the output tensor")
    if input.numel() != output.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    return _finish(pg._reduce_scatter_base(output, input, ReduceScatterOptions(reduceOp=op)), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[r]`` over the ranks into ``output`` of rank r (``torch.distributed.reduce_scatter``).
    ``input_list`` holds world_size tensors of ``output``'s size (ValueError)."""
    pg = _group(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"input_list must hold world_size={pg.size()} tensors, got {len(input_list)}")
    return _finish(pg.reduce_scatter([output], [list(input_list)], ReduceScatterOptions(reduceOp=op)), async_op)


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
    """Collect every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (``torch.distributed.gather``).
    ``gather_list`` (world_size tensors) is required on dst and must be None elsewhere (ValueError)."""
    pg = _group(group)
    if pg is None:
        return None
    root, me = _rooted(pg, dst, group_dst, "dst", gather_list, "gather_list", "destination")
    outs = [list(gather_list)] if me else []
    return _finish(pg.gather(outs, [_tensor(tensor, "gather")], GatherOptions(rootRank=root)), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Send ``scatter_list[r]`` of rank ``src`` to ``tensor`` of rank r (``torch.distributed.scatter``).
    ``scatter_list`` is required on src and must be None elsewhere (ValueError)."""
    pg = _group(group)
    if pg is None:
        return None
    root, me = _rooted(pg, src, group_src, "src", scatter_list, "scatter_list", "source")
    ins = [list(scatter_list)] if me else []
    return _finish(pg.scatter([_tensor(tensor, "scatter")], ins, ScatterOptions(rootRank=root)), async_op)


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Block until every rank of ``group`` reaches the barrier (``torch.distributed.barrier``), at most
    ``timeout`` (default: the group's) before DistBackendError."""
    pg = _group(group)
    if pg is None:
        return None
    w = pg.barrier(BarrierOptions(timeout=timeout))
    if async_op:
        return w
    w.wait(timeout)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """``barrier`` with a timeout (``torch.distributed.monitored_barrier``)."""
    return barrier(group, timeout=timeout)


# ---- point to point --------------------------------------------------------------------------------------------------
def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst`` (``torch.distributed.isend``); returns a Work."""
    pg = _group(group)
    if pg is None:
        return None
    return pg.send([_tensor(tensor, "isend")], _group_peer(pg, dst, group_dst, "dst"), tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank when None) (``torch.distributed.irecv``);
    returns a Work whose ``source_rank()`` tells the sender's rank in the group once done."""
    pg = _group(group)
    if pg is None:
        return None
    _tensor(tensor, "irecv")
    if src is None and group_src is None:
        return pg.recv_anysource([tensor], tag)
    return pg.recv([tensor], _group_peer(pg, src, group_src, "src"), tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it is out (``torch.distributed.send``)."""
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None) and return the sender's global rank
    (``torch.distributed.recv``)."""
    w = irecv(tensor, src, group, tag, group_src)
    w.wait()
    return current_world().ranks[_group(group)][w.source_rank()]


# ---- Python objects: pickled into uint8 tensors ---------------------------------------------------------------------
def _obj_bcast(pg, obj, root):
    """Pickle ``obj`` on ``root`` and broadcast it (its size, then its bytes)."""
    import numpy as np
    from .._ops.creation import from_numpy
    me = pg.rank() == root
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy() if me else None
    n = from_numpy(np.array([data.size if me else 0], dtype=np.int64))
    pg.broadcast([n], BroadcastOptions(rootRank=root)).wait()
    buf = from_numpy(data if me else np.zeros(int(n.item()), dtype=np.uint8))
    pg.broadcast([buf], BroadcastOptions(rootRank=root)).wait()
    return obj if me else pickle.loads(buf.numpy().tobytes())


def _obj_allgather(pg, obj):
    """Every rank's ``obj``, in rank order: the sizes are all-gathered, then the pickles padded to the
    longest."""
    import numpy as np
    from .._ops.creation import from_numpy
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    mine = from_numpy(np.array([data.size], dtype=np.int64))
    sizes = from_numpy(np.zeros(pg.size(), dtype=np.int64))
    pg._allgather_base(sizes, mine).wait()
    sizes = [int(s) for s in sizes.numpy()]
    padded = np.zeros(max(sizes), dtype=np.uint8)
    padded[:data.size] = data
    out = from_numpy(np.zeros((pg.size(), max(sizes)), dtype=np.uint8))
    pg._allgather_base(out, from_numpy(padded)).wait()
    rows = out.numpy()
    return [pickle.loads(rows[r, :s].tobytes()) for r, s in enumerate(sizes)]


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
    object_list[:] = _obj_allgather(pg, obj)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Collect every rank's ``obj`` into ``object_gather_list`` on rank ``dst``
    (``torch.distributed.gather_object``)."""
    pg = _group(group)
    if pg is None:
        return
    if dst is None and group_dst is None:
        dst = 0
    root = _group_peer(pg, dst, group_dst, "dst")
    objs = _obj_allgather(pg, obj)
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
    is split by ``output_split_sizes``) (``torch.distributed.all_to_all_single``). ValueError for split sizes
    that do not match the tensors or the group size, or for differing dtypes."""
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
    import math
    row_in = math.prod(input.shape[1:]) if input.dim() else 1
    row_out = math.prod(output.shape[1:]) if output.dim() else 1
    if row_in != row_out:
        raise ValueError("all_to_all_single: input and output rows must hold the same number of elements")
    return _finish(pg.alltoall_base(output, input, outs, ins, AllToAllOptions()), async_op)


def __getattr__(name):
    # DeviceMesh lives in device_mesh.py (NumPy-heavy); loaded on first use, as ``torch.distributed.DeviceMesh``
    if name in ("DeviceMesh", "init_device_mesh"):
        from . import device_mesh
        return getattr(device_mesh, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
