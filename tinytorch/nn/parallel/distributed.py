"""``nn.parallel.DistributedDataParallel`` on a ``tinytorch.distributed`` process group (MPI).

The Reducer, as PyTorch's: parameters are cut into buckets in reverse registration order (the order in which
backward usually produces their gradients), at most ``bucket_cap_mb`` each (the first one 1 MiB, so that
communication starts early). A post-accumulate-grad hook on every parameter copies its gradient into its bucket;
when a bucket is full its all-reduce (MPI_Iallreduce) is started while backward still runs, and buckets are
launched strictly in bucket order, so every rank issues the same collectives in the same order. When the last
bucket is launched, the reducer waits for all of them and writes the averaged gradients back into ``.grad``.
"""
import contextlib

import numpy as np

from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25
_STAGE = {"float16": np.float32, "bfloat16": np.float32}


def _np_dtype(t):
    return np.dtype(t.detach()[:0].cpu().numpy().dtype) if t.numel() else np.dtype("float32")


class _Bucket:
    __slots__ = ("params", "offsets", "buffer", "pending", "ready", "request", "launched")

    def __init__(self, params, dtype):
        self.params = params
        self.offsets, n = [], 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.buffer = np.zeros(n, dtype=_STAGE.get(dtype.name, dtype))
        self.pending, self.ready, self.request, self.launched = len(params), [False] * len(params), None, False


def _flatten_tensors(obj, out):
    from ..._tensor import Tensor
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _flatten_tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flatten_tensors(o, out)
    return out


def _reachable_leaves(outputs):
    """The leaf tensors whose AccumulateGrad nodes the graph of ``outputs`` reaches (find_unused_parameters)."""
    from ...autograd.engine import AccumulateGrad
    seen, stack, leaves = set(), [], set()
    for t in outputs:
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            leaves.add(id(t))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
            continue
        for e in node.next_edges:
            if e is not None and id(e[0]) not in seen:
                stack.append(e[0])
    return leaves


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of a process group (``torch.nn.parallel.DistributedDataParallel``).

    ``module``'s parameters and buffers are broadcast from rank 0 at construction (``init_sync``); after each
    ``backward`` every parameter's ``.grad`` holds the average over the ranks of the local gradients, so that an
    optimizer step keeps the replicas identical. Gradients are all-reduced in buckets of ``bucket_cap_mb``
    (default 25) MiB started from autograd hooks while backward runs.

    ``broadcast_buffers``: re-broadcast rank 0's buffers (e.g. BatchNorm statistics) at every forward.
    ``find_unused_parameters``: parameters the forward's output does not depend on are marked ready at once
    (their gradient counts as zero; one used nowhere keeps ``.grad`` unchanged). Without it, a parameter that
    gets no gradient leaves the reduction unfinished and the next forward raises RuntimeError, as PyTorch's.
    ``gradient_as_bucket_view``: ``.grad`` becomes a view into the bucket buffer (cpu, float32/float64
    parameters), saving the copy out of the bucket. ``no_sync()``: a context in which backward only accumulates
    local gradients (gradient accumulation); the next synchronized backward averages the sum.
    ``device_ids``/``output_device``/``dim`` are accepted for compatibility: inputs are not moved or scattered.

    Raises ValueError without an initialized process group, RuntimeError when the module has no parameter that
    requires a gradient or when the ranks hold different parameter shapes."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        from ... import distributed as dist
        pg = dist._group(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of process_group")
        self.module = module
        self.process_group = pg
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = bool(gradient_as_bucket_view)
        self.static_graph = bool(static_graph)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((_DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        seen, params = set(), []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._params = params
        self._np_dtypes = [_np_dtype(p) for p in params]
        self._index = {id(p): i for i, p in enumerate(params)}
        self._verify_same_model(dist, pg)
        if init_sync:
            self._broadcast_coalesced(list(module.parameters()) + list(module.buffers()))
        self._build_buckets()
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(params)]
        self._armed = False
        self._fired = 0
        self._views = {}  # parameter index -> its .grad when that is a view into the bucket
        self._stats = {"exposed_wait_s": 0.0, "reductions": 0}

    # ---- construction ------------------------------------------------------------------------------------------------
    def _verify_same_model(self, dist, pg):
        shapes = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        every = dist._obj_allgather(pg, shapes, "DistributedDataParallel")
        for r, s in enumerate(every):
            if s != shapes:
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {pg.rank()} has "
                                   f"{len(shapes)} params, while rank {r} has inconsistent {len(s)} params "
                                   "(or shapes/dtypes differ).")

    def _broadcast_coalesced(self, tensors):
        """Broadcast ``tensors`` from rank 0: one MPI_Ibcast per dtype of a packed host buffer."""
        from ... import distributed as dist
        from ...autograd.grad_mode import no_grad
        from ..._ops.creation import from_numpy
        groups = {}
        for t in tensors:
            if t.numel():
                groups.setdefault(str(t.dtype), []).append(t)
        pg = self.process_group
        for ts in groups.values():
            parts = [t.detach().cpu().numpy().reshape(-1) for t in ts]
            dt = parts[0].dtype
            stage = _STAGE.get(dt.name)
            flat = np.concatenate([p.astype(stage) if stage else p for p in parts])
            if dt == np.bool_:
                flat = flat.view(np.uint8)
            dist._wait([pg._comm.Ibcast(flat, root=0)], pg, "DistributedDataParallel broadcast")
            if pg.rank() == 0:
                continue
            if dt == np.bool_:
                flat = flat.view(np.bool_)
            off = 0
            with no_grad():
                for t in ts:
                    n = t.numel()
                    piece = flat[off:off + n].reshape(tuple(t.shape))
                    t.copy_(from_numpy(np.array(piece, dtype=dt, order="C")).to(t.device))
                    off += n

    def _build_buckets(self):
        """Buckets in reverse parameter order, one dtype each, the first capped at 1 MiB, the rest at
        bucket_cap_mb (PyTorch's Reducer layout)."""
        self._buckets, self._where = [], {}
        cur, cur_bytes, cur_dtype = [], 0, None
        cap = min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)

        def close():
            nonlocal cur, cur_bytes, cap
            if cur:
                b = _Bucket([self._params[i] for i in cur], cur_dtype)
                for k, i in enumerate(cur):
                    self._where[i] = (len(self._buckets), k)
                self._buckets.append(b)
                cap = self.bucket_bytes_cap
            cur, cur_bytes = [], 0

        for i in reversed(range(len(self._params))):
            p = self._params[i]
            dt = self._np_dtypes[i]
            nbytes = p.numel() * dt.itemsize
            if cur and (dt != cur_dtype or cur_bytes + nbytes > cap):
                close()
            cur_dtype = dt
            cur.append(i)
            cur_bytes += nbytes
        close()

    # ---- forward -----------------------------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        from ...autograd.grad_mode import is_grad_enabled
        if self._armed and self._fired:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss.")
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs:
                self._broadcast_coalesced(bufs)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        else:
            self._armed = False
        return out

    def _prepare_for_backward(self, out):
        self._armed, self._fired, self._next_launch = True, 0, 0
        for b in self._buckets:
            b.pending, b.ready, b.request, b.launched = len(b.params), [False] * len(b.params), None, False
        self._used = np.ones(len(self._params), dtype=np.uint8)
        if self.find_unused_parameters:
            reach = _reachable_leaves(_flatten_tensors(out, []))
            for i, p in enumerate(self._params):
                if id(p) not in reach:
                    self._used[i] = 0
                    self._mark_ready(i, None)
            if not self._used.any():
                self._finalize()

    # ---- backward hooks ----------------------------------------------------------------------------------------------
    def _make_hook(self, i):
        def hook(p):
            if self._armed:
                self._fired += 1
                self._mark_ready(i, p)
        return hook

    def _mark_ready(self, i, p):
        from ... import distributed as dist
        bi, k = self._where[i]
        b = self._buckets[bi]
        if b.ready[k]:
            return
        b.ready[k] = True
        off, n = b.offsets[k], b.params[k].numel()
        if p is None:
            b.buffer[off:off + n] = 0
        else:
            g = p.grad
            if not (self.gradient_as_bucket_view and g is not None and self._views.get(i) is g):
                b.buffer[off:off + n] = g.detach().cpu().numpy().reshape(-1)
        b.pending -= 1
        started_before = self._next_launch  # buckets already in flight while backward still produces gradients
        MPI = dist._mpi()
        # launch full buckets in bucket order only: every rank must issue the same collectives in the same order
        while self._next_launch < len(self._buckets) and self._buckets[self._next_launch].pending == 0:
            nb = self._buckets[self._next_launch]
            nb.request = self.process_group._comm.Iallreduce(MPI.IN_PLACE, nb.buffer, op=MPI.SUM)
            nb.launched = True
            self._next_launch += 1
        inflight = [x.request for x in self._buckets if x.request is not None]
        if inflight:
            MPI.Request.Testall(inflight)  # MPI progresses non-blocking collectives only inside MPI calls
        if self._next_launch == len(self._buckets):
            self._stats["buckets_started_during_backward"] = started_before
            self._finalize()

    def _finalize(self):
        import time
        from ... import distributed as dist
        from ...autograd.grad_mode import no_grad
        from ..._ops.creation import from_numpy
        pg = self.process_group
        t0 = time.perf_counter()
        dist._wait([b.request for b in self._buckets if b.request is not None], pg,
                   "DistributedDataParallel gradient all_reduce")
        self._stats["exposed_wait_s"] += time.perf_counter() - t0
        self._stats["reductions"] += 1
        used = self._used
        if self.find_unused_parameters:
            MPI = dist._mpi()
            used = self._used.copy()
            dist._wait([pg._comm.Iallreduce(MPI.IN_PLACE, used, op=MPI.MAX)], pg, "DistributedDataParallel")
        world = pg.size()
        index = self._index
        with no_grad():
            for b in self._buckets:
                b.buffer /= world
                for k, p in enumerate(b.params):
                    if not used[index[id(p)]]:
                        continue  # no rank used it: .grad stays as it was
                    off, n = b.offsets[k], p.numel()
                    piece = b.buffer[off:off + n].reshape(tuple(p.shape))
                    g = p.grad
                    i = index[id(p)]
                    if self.gradient_as_bucket_view and p.device.type == "cpu" and b.buffer.dtype == self._np_dtypes[i]:
                        if g is None or self._views.get(i) is not g:
                            p.grad = self._views[i] = from_numpy(piece)
                    elif g is None:
                        p.grad = from_numpy(np.array(piece, order="C")).to(device=p.device, dtype=p.dtype)
                    else:
                        g.copy_(from_numpy(np.array(piece, order="C")).to(device=p.device, dtype=p.dtype))
        self._armed = False
        self._fired = 0

    # ---- API ---------------------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """A context in which backward passes accumulate local gradients without all-reducing them; the first
        backward after it averages the accumulated gradients (``DistributedDataParallel.no_sync``)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _get_ddp_logging_data(self):
        return {"bucket_sizes": [b.buffer.nbytes for b in self._buckets], "world_size": self.process_group.size(),
                "find_unused_parameters": self.find_unused_parameters, **self._stats}
