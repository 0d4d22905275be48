"""The seam between ``torch.distributed``'s functions and a transport, as PyTorch's ``c10d``.

A ``ProcessGroup`` is the interface every backend implements: collectives over lists of tensors with an options
record (``allreduce(tensors, AllreduceOptions)``, ``broadcast``, ``allgather``, ``_allgather_base``,
``reduce_scatter``, ``_reduce_scatter_base``, ``gather``, ``scatter``, ``alltoall_base``, ``barrier``, ``send``,
``recv``, ``recv_anysource``), each returning a ``Work``. The functions of ``tinytorch.distributed`` and DDP call
only these; the MPI transport (``ProcessGroupMPI``, ``_mpi.py``) and the in-process one (``_threaded_pg.py``)
implement them. Source: PyTorch's ``torch/csrc/distributed/c10d/{ProcessGroup,Backend,Work}.hpp``.
"""
import datetime
import enum

from .constants import default_pg_timeout

__all__ = ["DistBackendError", "ReduceOp", "Work", "ProcessGroup", "AllreduceOptions", "BroadcastOptions",
           "ReduceOptions", "AllgatherOptions", "GatherOptions", "ScatterOptions", "ReduceScatterOptions",
           "AllToAllOptions", "BarrierOptions", "GradBucket"]


class DistBackendError(RuntimeError):
    """A backend failure (``torch.distributed.DistBackendError``): a collective that timed out, a transport
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


def reduce_op_for(dtype, op, kind):
    """The ReduceOp a backend applies to a tensor of ``dtype`` staged as a host array of NumPy ``kind``: a bool
    tensor (staged as uint8) reduces logically (SUM/AVG: or = MAX, PRODUCT: and = MIN). ValueError for
    PREMUL_SUM, and for AVG of a non-floating tensor."""
    if isinstance(op, str):
        op = ReduceOp(op)
    if str(dtype) == "torch.bool":
        op = {ReduceOp.SUM: ReduceOp.MAX, ReduceOp.AVG: ReduceOp.MAX, ReduceOp.PRODUCT: ReduceOp.MIN}.get(op, op)
    if op is ReduceOp.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is not supported by this backend")
    if op is ReduceOp.AVG and kind not in "fc":
        raise ValueError(f"ReduceOp.AVG needs a floating or complex tensor, got {dtype}")
    return op


# ---- options records (torch.distributed.AllreduceOptions, ...) ----------------------------------------------------
class _Options:
    _fields = ()

    def __init__(self, **kw):
        self.timeout = kw.pop("timeout", None)
        for name, default in self._fields:
            setattr(self, name, kw.pop(name, default))
        if kw:
            raise TypeError(f"{type(self).__name__}: unexpected options {sorted(kw)}")

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields)
        return f"{type(self).__name__}({inner})"


class AllreduceOptions(_Options):
    """``reduceOp`` (ReduceOp.SUM), ``timeout`` (None: the group's)."""
    _fields = (("reduceOp", ReduceOp.SUM),)


class BroadcastOptions(_Options):
    """``rootRank``: the source's rank in the group; ``rootTensor`` (0)."""
    _fields = (("rootRank", 0), ("rootTensor", 0))


class ReduceOptions(_Options):
    """``reduceOp``, ``rootRank`` (the destination's rank in the group), ``rootTensor``."""
    _fields = (("reduceOp", ReduceOp.SUM), ("rootRank", 0), ("rootTensor", 0))


class AllgatherOptions(_Options):
    _fields = ()


class GatherOptions(_Options):
    """``rootRank``: the destination's rank in the group."""
    _fields = (("rootRank", 0),)


class ScatterOptions(_Options):
    """``rootRank``: the source's rank in the group."""
    _fields = (("rootRank", 0),)


class ReduceScatterOptions(_Options):
    _fields = (("reduceOp", ReduceOp.SUM),)


class AllToAllOptions(_Options):
    _fields = ()


class BarrierOptions(_Options):
    _fields = (("device_ids", ()),)


# ---- Work ----------------------------------------------------------------------------------------------------------
class Work:
    """The handle of a started operation (``torch.distributed.Work``).

    ``wait(timeout=None)`` blocks until the operation is done (DistBackendError after ``timeout``, a
    ``datetime.timedelta``, or the group's timeout), then finishes it (the copy of staged results into the
    tensors); ``is_completed()`` polls without blocking; ``get_future()`` returns a ``torch.futures.Future``
    completed with the list of output tensors when the work completes; ``result()`` waits and returns that list.
    A backend subclasses it and implements ``_test()`` (non-blocking: is the transfer over?) and
    ``_block(seconds)`` (wait at most that long; False on timeout)."""

    def __init__(self, what="", finish=None, result=None, timeout=None):
        self._what, self._finish, self._result = what, finish, result
        self._timeout = timeout or default_pg_timeout
        self._done = False
        self._exc = None
        self._future = None

    # what a backend provides
    def _test(self):
        return True

    def _block(self, seconds):
        return self._test()

    def _timeout_message(self, seconds):
        return f"{self._what} timed out after {seconds * 1000:.0f} ms (process group timeout): a rank died or " \
               "did not join the collective"

    def _complete(self, exc=None):
        if self._done:
            return
        self._done = True
        if exc is None and self._finish is not None:
            try:
                self._finish()
            except Exception as e:
                exc = e
        self._exc = exc
        if self._future is not None:
            if exc is None:
                self._future.set_result(list(self._result or []))
            else:
                self._future.set_exception(exc)
        if exc is not None:
            raise exc

    def is_completed(self):
        """True once the operation is over (and its results are in the tensors)."""
        if not self._done and self._test():
            self._complete()
        return self._done

    def wait(self, timeout=None):
        """Block until done; DistBackendError after ``timeout`` (default: the group's). Returns True."""
        if self._done:
            if self._exc is not None:
                raise self._exc
            return True
        if isinstance(timeout, (int, float)):  # PyTorch's Python binding takes a timedelta; ms are also seen
            timeout = datetime.timedelta(milliseconds=timeout)
        seconds = (timeout or self._timeout).total_seconds()
        try:
            ok = self._block(seconds)
        except Exception as e:
            self._complete(e)
            raise
        if not ok:
            self._complete(DistBackendError(self._timeout_message(seconds)))
        self._complete()
        return True

    def synchronize(self):
        self.wait()

    def is_success(self):
        """True when completed without an error."""
        return self._done and self._exc is None

    def exception(self):
        """The error the operation ended with, or None."""
        return self._exc

    def result(self):
        """Wait, then return the output tensors."""
        self.wait()
        return list(self._result or [])

    def source_rank(self):
        """The sender's rank of a finished ``recv`` from any source; RuntimeError for other operations."""
        raise RuntimeError("sourceRank() may only be called on recv or recvAnySource work objects")

    def get_future(self):
        """A ``torch.futures.Future`` completed with the output tensors (a list) when this work completes.
        Waiting on the future drives the work (MPI progresses only inside its calls)."""
        from ..futures import Future
        if self._future is None:
            self._future = Future()
            self._future._driver = self
            if self._done:
                if self._exc is None:
                    self._future.set_result(list(self._result or []))
                else:
                    self._future.set_exception(self._exc)
        return self._future


class _DoneWork(Work):
    """A Work already completed (an operation with nothing to transfer)."""

    def __init__(self, result=None):
        super().__init__("done", None, result)
        self._complete()


# ---- the interface -------------------------------------------------------------------------------------------------
class ProcessGroup:
    """A group of ranks and the transport between them (``torch.distributed.ProcessGroup``).

    ``ProcessGroup(rank, size)``: this process's rank in the group and the group's size. A backend subclasses
    it and implements the collectives it supports; each takes lists of tensors (one per device: one here) and an
    options record, starts the operation and returns a ``Work``. The base class raises RuntimeError for every
    collective. ``_new_group(ranks)`` (a sub-group of the given group ranks, called by every member; None on a
    rank outside) and ``shutdown()`` are what ``new_group``, ``split_group`` and ``destroy_process_group`` use.
    """

    def __init__(self, rank, size, timeout=None):
        self._rank, self._size = int(rank), int(size)
        self._timeout = timeout or default_pg_timeout

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        """The backend's name (``"mpi"``, ``"threaded"``, ...)."""
        return type(self).__name__

    def getBackendName(self):
        return self.name()

    def set_timeout(self, timeout):
        self._timeout = timeout

    def __repr__(self):
        return f"{type(self).__name__}(rank={self._rank}, size={self._size})"

    def _unsupported(self, what):
        raise RuntimeError(f"Backend {self.name()} does not support {what}")

    def allreduce(self, tensors, opts=None):
        self._unsupported("allreduce")

    def broadcast(self, tensors, opts=None):
        self._unsupported("broadcast")

    def reduce(self, tensors, opts=None):
        self._unsupported("reduce")

    def allgather(self, output_tensors, input_tensors, opts=None):
        self._unsupported("allgather")

    def _allgather_base(self, output, input, opts=None):
        self._unsupported("_allgather_base")

    def gather(self, output_tensors, input_tensors, opts=None):
        self._unsupported("gather")

    def scatter(self, output_tensors, input_tensors, opts=None):
        self._unsupported("scatter")

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        """Default: stack each rank's inputs and run ``_reduce_scatter_base``."""
        from .._ops.creation import from_numpy
        import numpy as np
        out = output_tensors[0]
        stacked = np.stack([t.detach().cpu().numpy().reshape(tuple(out.shape)) for t in input_tensors[0]])
        return self._reduce_scatter_base(out, from_numpy(stacked).to(out.dtype), opts)

    def _reduce_scatter_base(self, output, input, opts=None):
        self._unsupported("_reduce_scatter_base")

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        self._unsupported("alltoall_base")

    def barrier(self, opts=None):
        self._unsupported("barrier")

    def send(self, tensors, dstRank, tag=0):
        self._unsupported("send")

    def recv(self, tensors, srcRank, tag=0):
        self._unsupported("recv")

    def recv_anysource(self, tensors, tag=0):
        self._unsupported("recv_anysource")

    def _new_group(self, ranks, timeout=None):
        self._unsupported("new_group")

    def shutdown(self):
        """Release the transport's resources (called by ``destroy_process_group``)."""


# ---- DDP's view of a bucket ----------------------------------------------------------------------------------------
class GradBucket:
    """What a DDP communication hook receives (``torch.distributed.GradBucket``): ``buffer()`` (the flattened
    gradients of the bucket's parameters, one 1-D tensor), ``index()`` (the bucket's position; bucket 0 holds the
    gradients ready last), ``is_last()``, ``parameters()`` and ``gradients()`` (views of ``buffer()`` shaped as the
    parameters), ``set_buffer(tensor)``."""

    def __init__(self, index, buffer, params, offsets, is_last):
        self._index, self._buffer, self._params, self._offsets, self._last = index, buffer, params, offsets, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def is_last(self):
        return self._last

    def parameters(self):
        return list(self._params)

    def gradients(self):
        return [self._buffer[o:o + p.numel()].view(tuple(p.shape)) for o, p in zip(self._offsets, self._params)]


# ---- the world: the default group and the registry of groups ------------------------------------------------------
class World:
    """What ``init_process_group`` sets up: the default group, every group created since, with its global ranks
    and backend name. One per process; the in-process backend gives each of its threads its own."""

    def __init__(self):
        self.default = None
        self.ranks = {}  # group -> its global ranks, in group-rank order
        self.backends = {}  # group -> the backend name it was created with

    def groups(self):
        return list(self.ranks)


_process_world = World()
_thread_world = __import__("threading").local()


def current_world():
    """The calling thread's World when it runs a rank of the in-process backend, else the process's."""
    return getattr(_thread_world, "world", None) or _process_world


def set_thread_world(world):
    """Give the calling thread its own World (None: back to the process's)."""
    _thread_world.world = world
