"""The profiler's results: ``FunctionEvent`` (one recorded call), ``FunctionEventAvg`` (calls grouped by key) and
``EventList`` (a list of either, with ``table``, ``key_averages``, ``export_chrome_trace``), as
``torch.autograd.profiler_util``.

Times are in microseconds (floats), measured on the CPU with ``time.perf_counter_ns``; tinytorch records no device
time, so the device columns of PyTorch's table never appear.
"""
import enum
import json
import math
import os
from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "DeviceType"]


class DeviceType(enum.IntEnum):
    """Where an event ran (``torch._C._autograd.DeviceType``'s values): tinytorch's events are all CPU events."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


def _format_time(time_us):
    """``time_us`` microseconds as PyTorch's table writes it: ``1.234s``, ``1.234ms`` or ``1.234us``."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    """``time_us`` as a percentage of ``total_time_us`` (``NaN`` when the total is 0)."""
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    """A byte count in B / KB / MB / GB, as PyTorch's table."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class Interval:
    """A start and end time in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """``end - start``."""
        return self.end - self.start


class _TimesStr:
    """The ``*_str`` spellings of the time attributes, used by the table."""

    @property
    def cpu_time(self):
        """Average CPU time per call (us)."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        """Average device time per call: always 0, tinytorch measures no device time."""
        return 0.0

    cuda_time = device_time

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    device_time_str = property(lambda self: _format_time(self.device_time))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))


class FunctionEvent(_TimesStr):
    """One recorded call: an op (``aten::mm``), a backward node or a ``record_function`` range.

    ``time_range`` is its ``Interval``; ``cpu_children`` the events that ran directly inside it and ``cpu_parent`` the
    one it ran in; ``input_shapes`` the shapes of its arguments (``[]`` for a non-tensor; only with
    ``record_shapes``); ``stack`` the Python frames that called it (only with ``with_stack``); ``scope`` 0 for
    forward, 1 for a backward function; ``sequence_nr`` the autograd node's number (-1 for none).
    """

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, scope=0,
                 sequence_nr=-1, is_user_annotation=False, flops=0, cpu_memory_usage=0, use_device=None,
                 trace_name=None):
        self.id = id
        self.node_id = -1
        self.name = name
        self.overload_name = ""
        self.trace_name = name if trace_name is None else trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = []
        self.kwinputs = {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = 0
        self.is_async = False
        self.is_remote = False
        self.sequence_nr = sequence_nr
        self.device_type = DeviceType.CPU
        self.device_index = 0
        self.device_resource_id = thread
        self.is_legacy = False
        self.flops = flops
        self.is_user_annotation = is_user_annotation

    def append_cpu_child(self, child):
        """Add ``child`` as an event that ran directly inside this one."""
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """Set the event this one ran directly inside."""
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        """Wall time from start to end (us), children included."""
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        """``cpu_time_total`` less the children's."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        """Bytes this call allocated less what its children allocated."""
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self):
        return 0

    device_time_total = property(lambda self: 0.0)
    self_device_time_total = property(lambda self: 0.0)

    @property
    def key(self):
        """What ``key_averages`` groups by: the name."""
        return self.name

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} name={self.name} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} seq_nr={self.sequence_nr} "
                f"is_legacy={self.is_legacy}>")


class FunctionEventAvg(_TimesStr):
    """The sums over the events of one key (``EventList.key_averages``): times, memory, FLOPs and ``count``."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        """Add the numbers of ``other`` (an event or average of the same key). AssertionError on another key."""
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:
            for attr in ("key", "node_id", "is_async", "is_remote", "cpu_parent", "cpu_children", "overload_name",
                         "input_shapes", "stack", "scope", "device_type", "is_legacy", "use_device",
                         "is_user_annotation"):
                setattr(self, attr, getattr(other, attr))
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        for attr in ("cpu_time_total", "device_time_total", "self_cpu_time_total", "self_device_time_total",
                     "cpu_memory_usage", "device_memory_usage", "self_cpu_memory_usage",
                     "self_device_memory_usage", "count", "flops"):
            setattr(self, attr, getattr(self, attr) + getattr(other, attr))
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of ``FunctionEvent`` (or ``FunctionEventAvg``) with PyTorch's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = True  # the recorder links parents and children as the calls nest

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        """The sum of the events' self CPU times (us)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One ``FunctionEventAvg`` per event name (and per input shapes / first ``group_by_stack_n`` stack
        frames when asked), in order of first appearance."""
        stats = defaultdict(FunctionEventAvg)
        for e in self:
            key = [str(e.key), str(e.node_id), str(e.device_type), str(e.is_legacy), str(e.is_user_annotation)]
            if group_by_overload_name:
                key.append(e.overload_name)
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            stats[tuple(key)].add(e)
        out = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for e in out:
            e.stack = (e.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                e.input_shapes = ""
            if not group_by_overload_name:
                e.overload_name = ""
        return out

    def total_average(self):
        """One ``FunctionEventAvg`` with key ``"Total"`` summing every event."""
        total = FunctionEventAvg()
        for e in self:
            total.key = e.key  # add() checks keys; the total mixes them
            total.add(e)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events as PyTorch's text table (columns Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time
        avg, [CPU Mem, Self CPU Mem], # of Calls, [Input Shapes], [Total FLOPs], [Source Location]), sorted
        descending by the attribute ``sort_by`` (``cpu_time_total``, ``self_cpu_time_total``, ``count``, ...),
        at most ``row_limit`` rows. AttributeError for an unknown ``sort_by``."""
        return _build_table(self, sort_by, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, header, top_level_events_only, time_unit,
                            self._profile_memory, self._with_flops)

    def export_chrome_trace(self, path):
        """Write the events to ``path`` as a Chrome trace (a JSON list of complete ``"ph": "X"`` events, ``ts``
        and ``dur`` in us), which ``chrome://tracing`` and Perfetto open."""
        _write_trace(path, self)

    def supported_export_stacks_metrics(self):
        """The metrics ``export_stacks`` accepts."""
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total", "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Write one line per event with a recorded stack: ``frame;frame;...;name <metric as int us>``, the
        collapsed-stack format flame-graph tools read (innermost frame last). ValueError for another metric."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " + str(self.supported_export_stacks_metrics()))
        with open(path, "w") as f:
            for e in self:
                if e.stack:
                    value = getattr(e, metric.replace("cuda", "device").replace("xpu", "device")
                                    .replace("privateuse1", "device"))
                    if int(value) > 0:
                        f.write(";".join(reversed(e.stack)) + f";{e.name.replace(' ', '_')} {int(value)}\n")


def _write_trace(path, events, extra=None):
    """The Chrome trace of ``events``; ``extra`` is a dict of top-level keys (then the file is an object with
    ``traceEvents``, as the Kineto profiler writes it)."""
    pid = os.getpid()
    items = []
    for e in events:
        if e.trace_name is None:
            continue
        args = {}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.flops:
            args["flops"] = e.flops
        items.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                      "name": e.trace_name, "pid": pid, "tid": e.thread, "ts": e.time_range.start,
                      "dur": e.time_range.elapsed_us(), "args": args})
    with open(path, "w") as f:
        if extra is None:
            json.dump(items, f)
        else:
            json.dump(dict(extra, traceEvents=items), f)


def _build_table(events, sort_by, row_limit, max_src_column_width, max_name_column_width, max_shapes_column_width,
                 header, top_level_events_only, time_unit, profile_memory, with_flops):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if e.stack]

    def width(values, cap):
        w = max(len(v) for v in values) + 4
        return w if cap is None else min(w, cap)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    widths = [width([e.key for e in events], max_name_column_width)] + [12] * 5
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        widths += [12, 12]
    headers.append("# of Calls")
    widths.append(12)
    aligns = [">"] * len(headers)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(width([str(e.input_shapes) for e in events], max_shapes_column_width))
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(width([s for st in stacks for s in st], max_src_column_width))
        aligns.append("<")
    flops_scale = None
    if with_flops:
        positive = [e.flops for e in events if e.flops > 0]
        if positive:
            units = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
            level = int(max(0, min(math.log10(min(positive)) / 3, len(units) - 1)))
            flops_scale = 10.0 ** (-3 * level)
            headers.append(f"Total {units[level]}")
            widths.append(12)
            aligns.append(">")
    row_format = "".join("{: " + a + str(w) + "}  " for a, w in zip(aligns, widths))
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(widths) + 2 * (len(widths) - 1)

    def tm(us, default):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return default

    def trim_path(p, w):
        if len(p) > w:
            p = p[len(p) - w:]
            if len(p) > 3:
                p = "..." + p[3:]
        return p

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               tm(e.self_cpu_time_total, e.self_cpu_time_total_str),
               _format_time_share(e.cpu_time_total, total), tm(e.cpu_time_total, e.cpu_time_total_str),
               tm(e.cpu_time, e.cpu_time_str)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:widths[headers.index("Input Shapes")]])
        if stacks:
            src_w = widths[headers.index("Source Location")]
            row.append(trim_path(e.stack[0], src_w) if e.stack else "")
        if flops_scale is not None:
            row.append("--" if e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:]:
                lines.append(row_format.format(*(blank[:headers.index("Source Location")]
                                                 + [trim_path(entry, src_w)] + blank[headers.index("Source Location"):])))
            lines.append(row_format.format(*([""] * len(headers))))
    lines += [sep, f"Self CPU time total: {tm(total, _format_time(total))}"]
    return "".join(line + "\n" for line in lines)
