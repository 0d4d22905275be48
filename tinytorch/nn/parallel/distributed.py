"""``nn.parallel.DistributedDataParallel`` on a ``tinytorch.distributed`` process group (any backend).

The Reducer, as PyTorch's: parameters are cut into buckets in reverse registration order (the order in which
backward usually produces their gradients), at most ``bucket_cap_mb`` each (the first one 1 MiB, so that
communication starts early). A post-accumulate-grad hook on every parameter copies its gradient into its bucket
(a flat tensor of the parameters' dtype); when a bucket is full its communication hook runs while backward still
runs (the default: the gradients pre-divided by the world size, then an asynchronous ``all_reduce``; or the hook
given to ``register_comm_hook``, which gets a ``GradBucket`` and returns a ``torch.futures.Future``). Buckets are
launched strictly in bucket order, so every rank issues the same collectives in the same order. When the last
bucket is launched, the reducer waits for every future and writes its tensor back into ``.grad``. DDP talks to the
process group only through ``torch.distributed``'s public functions.
"""
import contextlib

import numpy as np

from ...distributed.algorithms.join import Join, JoinHook, Joinable
from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class _Bucket:
    __slots__ = ("params", "offsets", "buffer", "pending", "ready", "future", "launched")

    def __init__(self, params, dtype):
        from ..._ops.creation import zeros
        self.params = params
        self.offsets, n = [], 0
        for p in params:
            self.offsets.append(n)
            n += p.numel()
        self.buffer = zeros(n, dtype=dtype)
        self.pending, self.ready, self.future, self.launched = len(params), [False] * len(params), None, False


_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


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


class _DDPJoinHook(JoinHook):
    """What a rank that ran out of inputs does while others still train (PyTorch's ``_DDPJoinHook``): each round
    it mirrors a training iteration's collectives (the buffer broadcast, then the communication hook on zero
    buckets, then the unused-parameter flags); at the end the ranks adopt the model of the last rank to join."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        if ddp._ready_order and not ddp._rebuilt:
            ddp._rebuild_buckets()  # the training ranks rebuild in this round's forward: take part
        if ddp.broadcast_buffers and ddp.require_forward_param_sync:
            bufs = list(ddp.module.buffers())
            if bufs:
                ddp._broadcast_coalesced(bufs)
        # whether the training ranks synchronize this backward (not under no_sync); the next round's buffer
        # broadcast follows it, as on the training ranks
        sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = sync
        if sync:
            ddp._match_all_reduce_for_bwd_pass()

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
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
    ``static_graph``: the graph is taken to be the same every iteration: the parameters unused in the first
    iteration are remembered (no graph traversal or flag all-reduce afterwards). After the first iteration the
    buckets are rebuilt in the order the gradients became ready (rank 0's order, as PyTorch's Reducer), unless
    ``find_unused_parameters`` without ``static_graph``. ``join()``: the context for uneven inputs
    (``torch.distributed.algorithms.join.Join``): ranks that run out of batches shadow the others' collectives.

    Raises ValueError without an initialized process group, RuntimeError when the module has no parameter that
    requires a gradient or when the ranks hold different parameter shapes."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        super().__init__()
        Joinable.__init__(self)
        from ... import distributed as dist
        pg = dist.group.WORLD if process_group is None else process_group
        if pg is None:
            raise ValueError(_NOT_INIT)
        if pg is dist.GroupMember.NON_GROUP_MEMBER:
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
        self._index = {id(p): i for i, p in enumerate(params)}
        self._verify_same_model(dist, pg)
        if init_sync:
            self._broadcast_coalesced(list(module.parameters()) + list(module.buffers()))
        self._build_buckets()
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(params)]
        self._armed = False
        self._fired = 0
        self._views = {}  # parameter index -> its .grad when that is a view into the bucket
        self._comm_hook = None
        self._stats = {"exposed_wait_s": 0.0, "reductions": 0}
        self._ready_order = []  # parameter indices in the order their gradients became ready (first iteration)
        self._rebuilt = False
        self._static_used = None  # static_graph: the global used-parameter map of the first iteration
        self._divide_by_initial_world_size = True
        self._divisor = pg.size()

    # ---- construction ------------------------------------------------------------------------------------------------
    def _verify_same_model(self, dist, pg):
        shapes = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        every = [None] * pg.size()
        dist.all_gather_object(every, shapes, group=pg)
        for r, s in enumerate(every):
            if s != shapes:
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {pg.rank()} has "
                                   f"{len(shapes)} params, while rank {r} has inconsistent {len(s)} params "
                                   "(or shapes/dtypes differ).")

    def _broadcast_coalesced(self, tensors):
        """Broadcast ``tensors`` from the group's rank 0: one broadcast per dtype of a packed cpu tensor."""
        from ... import distributed as dist
        from ...autograd.grad_mode import no_grad
        from ..._ops.shape import cat
        groups = {}
        for t in tensors:
            if t.numel():
                groups.setdefault(str(t.dtype), []).append(t)
        pg = self.process_group
        src = dist.get_global_rank(pg, 0)
        with no_grad():
            for ts in groups.values():
                flat = cat([t.detach().cpu().reshape(-1) for t in ts])
                dist.broadcast(flat, src=src, group=pg)
                if pg.rank() == 0:
                    continue
                off = 0
                for t in ts:
                    n = t.numel()
                    t.copy_(flat[off:off + n].reshape(tuple(t.shape)).to(t.device))
                    off += n

    def _build_buckets(self, order=None):
        """Buckets over the parameters in ``order`` (default: reverse registration order), one dtype each, the
        first capped at 1 MiB, the rest at bucket_cap_mb (PyTorch's Reducer layout)."""
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

        for i in (reversed(range(len(self._params))) if order is None else order):
            p = self._params[i]
            nbytes = p.numel() * p.element_size()
            if cur and (p.dtype != cur_dtype or cur_bytes + nbytes > cap):
                close()
            cur_dtype = p.dtype
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
        work = Join.notify_join_context(self)
        if work is not None and not self._divide_by_initial_world_size:
            self._divisor = int(work.result()[0].item())  # the ranks still training
        else:
            self._divisor = self.process_group.size()
        if self._ready_order and not self._rebuilt:
            self._rebuild_buckets()
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs:
                self._broadcast_coalesced(bufs)
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self._prepare_for_backward(out)
        else:
            # as PyTorch's: the next forward skips the buffer broadcast after one that does not synchronize
            self.require_forward_param_sync = False
            self._armed = False
        return out

    def _prepare_for_backward(self, out):
        self._armed, self._fired, self._next_launch = True, 0, 0
        for b in self._buckets:
            b.pending, b.ready, b.future, b.launched = len(b.params), [False] * len(b.params), None, False
        self._used = np.ones(len(self._params), dtype=np.uint8)
        if self._static_used is not None:
            # static graph: the first iteration's unused parameters, without walking the graph again
            for i in np.flatnonzero(self._local_unused_first):
                self._used[i] = 0
                self._mark_ready(int(i), None)
            if not self._used.any():
                self._finalize()
        elif self.find_unused_parameters or self.static_graph:
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
        from ...autograd.grad_mode import no_grad
        bi, k = self._where[i]
        b = self._buckets[bi]
        if b.ready[k]:
            return
        b.ready[k] = True
        if not self._rebuilt and p is not None:
            self._ready_order.append(i)
        off, n = b.offsets[k], b.params[k].numel()
        view = b.buffer[off:off + n]
        with no_grad():
            if p is None:
                view.zero_()
            else:
                g = p.grad
                if not (self.gradient_as_bucket_view and g is not None and self._views.get(i) is g):
                    view.copy_(g.detach().reshape(-1).to(device=view.device, dtype=view.dtype))
                if self._comm_hook is None:
                    # PyTorch's Reducer pre-divides while copying when no hook is registered
                    view.mul_(1.0 / self._divisor)
        b.pending -= 1
        started_before = self._next_launch  # buckets already in flight while backward still produces gradients
        # launch full buckets in bucket order only: every rank must issue the same collectives in the same order
        while self._next_launch < len(self._buckets) and self._buckets[self._next_launch].pending == 0:
            nb = self._buckets[self._next_launch]
            nb.future = self._run_comm_hook(self._next_launch, nb)
            nb.launched = True
            self._next_launch += 1
        if self._comm_hook is None:
            # MPI progresses non-blocking collectives only inside its calls. Not with a hook: completing a future
            # runs its callbacks, which may start collectives (PowerSGD), and each rank would start them at its
            # own moment; they run in bucket order in _finalize instead, the same on every rank
            for x in self._buckets:
                if x.future is not None:
                    x.future.done()
        if self._next_launch == len(self._buckets):
            self._stats["buckets_started_during_backward"] = started_before
            self._finalize()

    def _run_comm_hook(self, index, bucket):
        from ... import distributed as dist
        gb = dist.GradBucket(index, bucket.buffer, bucket.params, bucket.offsets, index == len(self._buckets) - 1)
        if self._comm_hook is None:
            work = dist.all_reduce(bucket.buffer, group=self.process_group, async_op=True)
            return work.get_future().then(lambda fut: fut.value()[0])
        state, hook = self._comm_hook
        fut = hook(state, gb)
        if not hasattr(fut, "wait") or not hasattr(fut, "value"):
            raise RuntimeError("Communication hook must return a torch.futures.Future, got "
                               f"{type(fut).__name__}")
        return fut

    def _finalize(self):
        import time
        from ... import distributed as dist
        from ...autograd.grad_mode import no_grad
        from ..._ops.creation import from_numpy
        pg = self.process_group
        t0 = time.perf_counter()
        results = []
        for b in self._buckets:
            value = b.future.wait() if b.future is not None else b.buffer
            if isinstance(value, (list, tuple)):
                value = value[0]
            if value.numel() != b.buffer.numel():
                raise RuntimeError(f"Communication hook returned a tensor of {value.numel()} elements for a bucket "
                                   f"of {b.buffer.numel()}")
            results.append(value)
        self._stats["exposed_wait_s"] += time.perf_counter() - t0
        self._stats["reductions"] += 1
        used = self._used
        if self._static_used is not None:
            used = self._static_used
        elif self.find_unused_parameters or self.static_graph:
            flags = from_numpy(self._used.copy())
            dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=pg)
            used = flags.numpy()
            if self.static_graph:
                self._static_used, self._local_unused_first = used.copy(), self._used == 0
        index = self._index
        with no_grad():
            for b, value in zip(self._buckets, results):
                if value is not b.buffer:
                    b.buffer.copy_(value.reshape(-1).to(dtype=b.buffer.dtype, device=b.buffer.device))
                for k, p in enumerate(b.params):
                    i = index[id(p)]
                    if not used[i]:
                        continue  # no rank used it: .grad stays as it was
                    off, n = b.offsets[k], p.numel()
                    piece = b.buffer[off:off + n].view(tuple(p.shape))
                    g = p.grad
                    if self.gradient_as_bucket_view and p.device.type == "cpu":
                        if g is None or self._views.get(i) is not g:
                            p.grad = self._views[i] = piece
                    elif g is None:
                        p.grad = piece.to(device=p.device, dtype=p.dtype).clone()
                    else:
                        g.copy_(piece.to(device=p.device, dtype=p.dtype))
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

    # ---- bucket rebuilding -------------------------------------------------------------------------------------------
    def _rebuild_buckets(self):
        """Rebuild the buckets in the order gradients became ready in the first iteration; every rank takes rank
        0's order, so that all issue the same collectives (PyTorch's Reducer::rebuild_buckets)."""
        from ... import distributed as dist
        self._rebuilt = True
        if self.find_unused_parameters and not self.static_graph:
            return
        order = list(dict.fromkeys(self._ready_order))
        order += [i for i in reversed(range(len(self._params))) if i not in set(order)]
        box = [order]
        dist.broadcast_object_list(box, src=dist.get_global_rank(self.process_group, 0), group=self.process_group)
        self._build_buckets(box[0])
        self._views = {}  # .grad views into the old buckets: the next backward copies into the new ones
        self._ready_order = []

    # ---- join ----------------------------------------------------------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """A ``Join`` context for inputs of different lengths per rank (``DistributedDataParallel.join``): a rank
        that leaves the ``with`` body early keeps taking part in the others' gradient all-reduces (with zero
        gradients) until all are done, then every rank adopts the model of the last rank to finish.
        ``divide_by_initial_world_size``: average over the whole world (True) or over the ranks still training."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The ``JoinHook`` of this DDP model (``divide_by_initial_world_size`` in kwargs, default True)."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self._params[0].device

    @property
    def join_process_group(self):
        return self.process_group

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        """Under ``join()``: all-reduce whether this rank synchronizes its next backward (a joined rank: no); a
        joined rank learns from it whether any training rank does."""
        from ... import distributed as dist
        from ..._ops.creation import tensor
        flag = tensor([1.0 if not is_joined_rank and self.require_backward_grad_sync else 0.0])
        dist.all_reduce(flag, group=self.process_group)
        return bool(flag.item()) if is_joined_rank else None

    def _match_all_reduce_for_bwd_pass(self):
        """A joined rank's side of one backward: the communication hook run on zero buckets, in bucket order,
        then the unused-parameter flags (zeros) when the training ranks all-reduce them."""
        from ... import distributed as dist
        from ..._ops.creation import from_numpy
        futures = []
        for k, b in enumerate(self._buckets):
            zero = _Bucket(b.params, b.buffer.dtype)
            futures.append(self._run_comm_hook(k, zero))
        for f in futures:
            f.wait()
        if self._static_used is None and (self.find_unused_parameters or self.static_graph):
            dist.all_reduce(from_numpy(np.zeros(len(self._params), dtype=np.uint8)), op=dist.ReduceOp.MAX,
                            group=self.process_group)

    def _sync_final_model(self, is_last_joiner):
        """Every rank takes the parameters and buffers of the highest-ranked last joiner."""
        from ... import distributed as dist
        from ..._ops.creation import tensor
        pg = self.process_group
        me = tensor([pg.rank() if is_last_joiner else -1])
        dist.all_reduce(me, op=dist.ReduceOp.MAX, group=pg)
        src = dist.get_global_rank(pg, int(me.item()))
        from ...autograd.grad_mode import no_grad
        from ..._ops.shape import cat
        with no_grad():
            groups = {}
            for t in list(self.module.parameters()) + list(self.module.buffers()):
                if t.numel():
                    groups.setdefault(str(t.dtype), []).append(t)
            for ts in groups.values():
                flat = cat([t.detach().cpu().reshape(-1) for t in ts])
                dist.broadcast(flat, src=src, group=pg)
                off = 0
                for t in ts:
                    t.copy_(flat[off:off + t.numel()].reshape(tuple(t.shape)).to(t.device))
                    off += t.numel()

    def register_comm_hook(self, state, hook):
        """Replace the gradient all-reduce by ``hook(state, bucket) -> torch.futures.Future``
        (``DistributedDataParallel.register_comm_hook``): called with a ``dist.GradBucket`` as each bucket is
        ready; the future's value (a tensor of the bucket's size, or a list holding one) becomes the bucket's
        gradients. The bucket is not pre-divided by the world size: the hook averages. Ready-made hooks:
        ``torch.distributed.algorithms.ddp_comm_hooks`` (``default_hooks.allreduce_hook``,
        ``fp16_compress_hook``, ``powerSGD_hook.powerSGD_hook``). TypeError when ``hook`` is not callable, and for
        the bf16 hooks (PyTorch allows them only with CUDA and NCCL); ValueError for a ``bucket`` or return
        annotation other than ``dist.GradBucket`` / ``torch.futures.Future[torch.Tensor]``; RuntimeError when a
        hook is already registered."""
        import inspect
        from ... import distributed as dist
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (inspect.Parameter.empty, dist.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
        if sig.return_annotation is not inspect.Signature.empty and \
                "Future" not in getattr(sig.return_annotation, "__name__", str(sig.return_annotation)):
            raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")
        if getattr(hook, "__name__", "") in ("bf16_compress_hook", "bf16_compress_wrapper_hook"):
            raise TypeError("BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+ or XPU and XCCL")
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = (state, hook)

    def _get_ddp_logging_data(self):
        return {"bucket_sizes": [b.buffer.numel() * b.buffer.element_size() for b in self._buckets],
                "world_size": self.process_group.size(),
                "find_unused_parameters": self.find_unused_parameters, **self._stats}
