"""The CPU profiler of tinytorch's ops (``torch.autograd.profiler``): the legacy ``profile``, ``record_function``
and ``emit_nvtx``, and the recorder that ``tinytorch.profiler`` and ``tinytorch.utils.flop_counter`` build on.

How calls are seen: ``_dispatch.dispatch`` tests one module-level value, ``_dispatch._observer``; it is None
unless a listener (a running profiler, a ``FlopCounterMode``, ``emit_nvtx``) is registered here, and then every
dispatched op goes through ``_observe``, which tells each listener when the op starts and ends. The autograd
engine likewise hands each backward node to ``engine._node_observer``. So with nothing registered, no op pays more
than that one test.

Event names follow PyTorch's: an op is ``aten::<name>`` (a few tinytorch op names differ from ATen's and are
mapped, ``max_dim`` -> ``aten::max``), a backward node ``autograd::engine::evaluate_function: <Node>`` enclosing
``<Node>`` (``torch::autograd::AccumulateGrad`` for a leaf's), a ``record_function`` range its given name.
"""
import threading
import time
import traceback
import warnings

from .. import _dispatch
from . import engine as _engine
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, _format_time  # noqa: F401

__all__ = ["profile", "record_function", "emit_nvtx", "EventList", "FunctionEvent", "FunctionEventAvg"]

# tinytorch op names whose ATen name differs (the rest are aten::<name>)
_ATEN_NAMES = {"max_dim": "max", "min_dim": "min", "to_copy": "_to_copy", "to_dtype": "_to_copy",
               "view_dtype": "view", "fft_r2c": "_fft_r2c", "fft_c2c": "_fft_c2c", "fft_c2r": "_fft_c2r",
               "softmax_backward": "_softmax_backward_data", "log_softmax_backward": "_log_softmax_backward_data",
               "cross_entropy": "cross_entropy_loss", "fused_adam": "_fused_adam_", "fused_sgd": "_fused_sgd_",
               "fused_adagrad": "_fused_adagrad_", "fused_rmsprop": "_fused_rmsprop_", "index_put": "index_put_",
               "scaled_dot_product_attention": "scaled_dot_product_attention"}


def aten_name(op_name):
    """The profiler's name of tinytorch op ``op_name``: ``aten::`` and ATen's spelling of the op."""
    return "aten::" + _ATEN_NAMES.get(op_name, op_name)


_listeners = []  # registered listeners, in registration order


def _add_listener(listener):
    _listeners.append(listener)
    _dispatch._observer = _observe
    _engine._node_observer = _observe_node


def _remove_listener(listener):
    if listener in _listeners:
        _listeners.remove(listener)
    if not _listeners:
        _dispatch._observer = None
        _engine._node_observer = None


def _observe(op, args, kw, out):
    """``dispatch`` with every listener told of the call: ``enter(name, op, args, kw)`` before and
    ``exit(token, result)`` after (also when the op raises, with result None)."""
    ls = tuple(_listeners)
    tokens = [lis.op_enter(op, args, kw) for lis in ls]
    result = None
    try:
        result = _dispatch.dispatch(op, args, kw, out, True)
        return result
    finally:
        for lis, tok in zip(reversed(ls), reversed(tokens)):
            lis.op_exit(tok, result)


def _observe_node(node, fn, *args):
    """Run ``fn(*args)`` (a backward node's work) as the events PyTorch's engine records for ``node``."""
    ls = tuple(lis for lis in _listeners if hasattr(lis, "node_enter"))
    tokens = [lis.node_enter(node, args) for lis in ls]
    try:
        return fn(*args)
    finally:
        for lis, tok in zip(reversed(ls), reversed(tokens)):
            lis.node_exit(tok)


def _now_us():
    return time.perf_counter_ns() / 1000.0


def _shapes(args):
    from .._tensor import Tensor
    return [list(a.shape) if isinstance(a, Tensor) else [] for a in args]


def _fresh_bytes(args, result):
    """Bytes of the result tensors that do not share storage with an input: what the op allocated."""
    from .._tensor import Tensor
    if result is None:
        return 0
    outs = result if isinstance(result, (tuple, list)) else (result,)
    inputs = {id(a._storage) for a in args if isinstance(a, Tensor)}
    return sum(o.numel() * o.element_size() for o in outs
               if isinstance(o, Tensor) and id(o._storage) not in inputs)


def _link_node(ev, result):
    # a forward op that recorded a graph node carries the node's sequence number, as PyTorch's events do
    node = getattr(result[0] if isinstance(result, tuple) and result else result, "grad_fn", None)
    if node is not None and ev.sequence_nr < 0 and not ev.cpu_children:
        ev.sequence_nr = node._seq


class _Collector:
    """Records the calls made while it is registered as ``FunctionEvent``s, nested by when they ran.

    One open-event stack per thread: an event opened inside another becomes its child. ``start()`` registers,
    ``stop()`` unregisters; ``events`` are the closed events in the order they started.
    """

    def __init__(self, record_shapes=False, with_stack=False, with_flops=False, profile_memory=False,
                 use_device=None):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.use_device = use_device
        self.events = []
        self._local = threading.local()
        self._next_id = 0
        self.active = False

    def start(self):
        self.active = True
        _add_listener(self)

    def stop(self):
        self.active = False
        _remove_listener(self)

    def _open(self):
        st = getattr(self._local, "stack", None)
        if st is None:
            st = self._local.stack = []
        return st

    def open(self, name, input_shapes=None, scope=0, sequence_nr=-1, user=False, stack_skip=3):
        """Start an event; returns it (the token ``close`` takes)."""
        stack = self._open()
        trace_name = None
        if name.startswith("ProfilerStep#"):  # PyTorch groups all steps under one name; the trace keeps each
            trace_name, name = name, "ProfilerStep*"
        ev = FunctionEvent(self._next_id, name, threading.get_native_id(), _now_us(), 0.0, input_shapes, None,
                           scope, sequence_nr, user, use_device=self.use_device, trace_name=trace_name)
        self._next_id += 1
        if self.with_stack:
            frames = traceback.extract_stack()[:-stack_skip]
            ev.stack = [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
                        if "/tinytorch/" not in f.filename.replace("\\", "/")]
        if stack:
            parent = stack[-1]
            ev.set_cpu_parent(parent)
            parent.append_cpu_child(ev)
        stack.append(ev)
        self.events.append(ev)
        return ev

    def close(self, ev):
        ev.time_range.end = _now_us()
        stack = self._open()
        # an event is closed last-in first-out; a record_function left open by an exception is closed with it
        while stack:
            top = stack.pop()
            if top is ev:
                break
            top.time_range.end = ev.time_range.end

    def op_enter(self, op, args, kw):
        return self.open(aten_name(op.name), _shapes(args) if self.record_shapes else None)

    def op_exit(self, ev, result):
        _link_node(ev, result)
        self.close(ev)

    def node_enter(self, node, args):
        from .engine import AccumulateGrad
        name = "torch::autograd::AccumulateGrad" if type(node) is AccumulateGrad else node.name()
        seq = -1 if type(node) is AccumulateGrad else node._seq
        outer = self.open("autograd::engine::evaluate_function: " + name, None, 0, seq)
        shapes = None
        if self.record_shapes:
            grads = args[0]
            if not isinstance(grads, (list, tuple)):
                grads = [grads]
            shapes = _shapes([g for g in grads if g is not None])
        inner = self.open(name, shapes, 1, seq)
        return outer, inner

    def node_exit(self, token):
        outer, inner = token
        self.close(inner)
        self.close(outer)

    def function_events(self):
        return EventList(self.events, use_device=self.use_device, profile_memory=self.profile_memory,
                         with_flops=self.with_flops)


class _FlopsCollector(_Collector):
    """A collector that also gives each op event its FLOP count (``with_flops``)."""

    _in_formula = 0  # how many ops with a FLOP formula are running: ops inside them are their work, not counted

    def op_enter(self, op, args, kw):
        from ..utils.flop_counter import _FORMULAS
        ev = super().op_enter(op, args, kw)
        counted = op.name in _FORMULAS
        ev._call = (op, args, kw, self._in_formula > 0, counted)
        self._in_formula += counted
        return ev

    def op_exit(self, ev, result):
        from ..utils.flop_counter import _count_flops
        op, args, kw, nested, counted = ev._call
        del ev._call
        self._in_formula -= counted
        ev.flops = _count_flops(op, args, kw, result, nested)
        _link_node(ev, result)
        if self.profile_memory:
            ev.cpu_memory_usage = _fresh_bytes(args, result)
        self.close(ev)


class _MemoryCollector(_Collector):
    """A collector that also gives each op event the bytes its outputs allocated (``profile_memory``)."""

    def op_enter(self, op, args, kw):
        ev = super().op_enter(op, args, kw)
        ev._args = args
        return ev

    def op_exit(self, ev, result):
        ev.cpu_memory_usage = _fresh_bytes(ev._args, result)
        del ev._args
        _link_node(ev, result)
        self.close(ev)


def _make_collector(record_shapes, with_stack, with_flops, profile_memory, use_device):
    cls = _FlopsCollector if with_flops else _MemoryCollector if profile_memory else _Collector
    return cls(record_shapes, with_stack, with_flops, profile_memory, use_device)


class profile:
    """The legacy profiler (``torch.autograd.profiler.profile``): a context manager recording every op,
    backward node and ``record_function`` range run inside it.

    ``record_shapes`` keeps each op's input shapes, ``with_stack`` the calling Python frames, ``with_flops`` the
    FLOPs of matmuls and convolutions (``torch.utils.flop_counter``'s formulas), ``profile_memory`` the bytes each op's
    outputs allocate. ``use_cuda`` / ``use_device`` name a device to time: tinytorch measures CPU time only, and
    when the device is unavailable it warns and drops it, as PyTorch does. Results: ``function_events``,
    ``key_averages()``, ``table()``, ``export_chrome_trace(path)``, ``total_average()``, ``self_cpu_time_total``.
    RuntimeError when entered twice.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        if not enabled:
            return
        self.use_cuda = use_cuda
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device is not None:
            if use_device not in ("cuda", "xpu", "mtia", "hpu"):
                warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
                use_device = None
            elif use_device == "cuda":
                from ..accelerator import current_accelerator
                if getattr(current_accelerator(), "type", None) != "cuda":
                    warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
                    self.use_cuda = False
                    use_device = None
            else:
                mod = __import__("tinytorch", fromlist=[use_device])
                sub = getattr(mod, use_device, None)
                if sub is None or not sub.is_available():
                    warnings.warn(f"{use_device.upper()} is not available, disabling {use_device.upper()} "
                                  "profiling", stacklevel=2)
                    use_device = None
        if not use_cpu and not use_kineto:
            raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
        self.use_device = use_device
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self._collector = None
        self._function_events = None
        self._old_events = []
        self.profiling_start_time_ns = self.profiling_end_time_ns = 0

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._collector = _make_collector(self.record_shapes, self.with_stack, self.with_flops,
                                          self.profile_memory, self.use_device)
        self.profiling_start_time_ns = time.perf_counter_ns()
        self._collector.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        if self.use_device is not None:
            getattr(__import__("tinytorch", fromlist=[self.use_device]), self.use_device).synchronize()
        self._collector.stop()
        self.profiling_end_time_ns = time.perf_counter_ns()
        if self.acc_events and self._function_events:
            self._old_events = list(self._function_events)
        self._function_events = EventList(self._old_events + self._collector.events, use_device=self.use_device,
                                          profile_memory=self.profile_memory, with_flops=self.with_flops)
        return False

    def _events(self):
        if self._function_events is None:
            raise AssertionError("Expected profiling results")
        return self._function_events

    def __repr__(self):
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self):
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events)

    @property
    def function_events(self):
        """The recorded ``FunctionEvent``s (an ``EventList``), in the order they started; None before exit."""
        return self._function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        """``function_events.table(...)``: one row per event (not grouped; see ``key_averages``)."""
        return self._events().table(sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
                                    max_name_column_width=max_name_column_width,
                                    max_shapes_column_width=max_shapes_column_width, header=header,
                                    top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path, metadata=None, use_python_export=False):
        """Write the events to ``path`` as a Chrome trace JSON file."""
        return self._events().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write the collapsed stacks of the events (needs ``with_stack=True``, else AssertionError)."""
        events = self._events()
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        return events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events grouped by name (and input shapes / stack frames): an ``EventList`` of ``FunctionEventAvg``."""
        return self._events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        """One ``FunctionEventAvg`` summing all events."""
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        """The sum of all events' self CPU times (us)."""
        return self._events().self_cpu_time_total


class record_function:
    """A named range in the profile (``torch.autograd.profiler.record_function``): a context manager or a
    decorator whose body shows as one event enclosing the ops it runs. Costs a list check when no profiler runs.

    ``args`` is an optional string kept with the range (PyTorch passes it to its RecordFunction).
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._events = ()

    def __enter__(self):
        self._events = tuple((c, c.open(self.name, None, 0, -1, True)) for c in _listeners
                             if isinstance(c, _Collector))
        return self

    def __exit__(self, exc_type, exc_value, tb):
        for c, ev in reversed(self._events):
            c.close(ev)
        self._events = ()
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapped


class _NVTX:
    """Pushes an NVTX range per op and backward node (through ``libnvToolsExt``): what ``emit_nvtx`` registers."""

    def __init__(self, lib, record_shapes):
        self.lib = lib
        self.record_shapes = record_shapes
        self._seq = 0

    def _push(self, text):
        self.lib.nvtxRangePushA(text.encode())

    def op_enter(self, op, args, kw):
        text = f"{aten_name(op.name)}, seq = {self._seq}"
        self._seq += 1
        if self.record_shapes:
            text += ", sizes = " + str(_shapes(args))
        self._push(text)

    def op_exit(self, token, result):
        self.lib.nvtxRangePop()

    def node_enter(self, node, args):
        self._push(node.name())

    def node_exit(self, token):
        self.lib.nvtxRangePop()


def _load_nvtx():
    import ctypes
    import ctypes.util
    names = ["libnvToolsExt.so.1", "libnvToolsExt.so", ctypes.util.find_library("nvToolsExt")]
    for n in names:
        if n:
            try:
                return ctypes.CDLL(n)
            except OSError:
                continue
    raise RuntimeError("emit_nvtx: the NVTX library (libnvToolsExt) was not found; install the NVIDIA NVTX "
                       "package (nvidia-nvtx) to annotate a CUDA profile")


def _cuda_synchronize():
    """``torch.cuda.synchronize()``: the cuda backend's current device finishes its queue (AssertionError "Torch not
    compiled with CUDA enabled" from the backend where there is no CUDA)."""
    from ..device import current_index, get_backend
    get_backend("cuda").dev_for(current_index.get("cuda", 0)).finish()


class emit_nvtx:
    """Make every op and backward node emit an NVTX range, for nvprof / Nsight Systems
    (``torch.autograd.profiler.emit_nvtx``). It synchronizes the CUDA device on entry and exit, so without CUDA it
    raises tinytorch's "Torch not compiled with CUDA enabled" AssertionError, as PyTorch's does; RuntimeError when
    entered twice or when the NVTX library is missing. ``enabled=False`` makes it do nothing.
    """

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self._listener = None

    def __enter__(self):
        if not self.enabled:
            return
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        _cuda_synchronize()
        self._listener = _NVTX(_load_nvtx(), self.record_shapes)
        self.entered = True
        _add_listener(self._listener)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.enabled:
            return
        _cuda_synchronize()
        _remove_listener(self._listener)
        self.entered = False
        return False


def kineto_available():
    """False: tinytorch's profiler is its own CPU recorder, not Kineto."""
    return False
