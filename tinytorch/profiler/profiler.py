"""``torch.profiler.profile`` and its schedule, over tinytorch's CPU recorder (``autograd/profiler.py``).

A cycle of the schedule: ``NONE`` steps record nothing, ``WARMUP`` steps prepare a fresh recorder, ``RECORD``
steps record, and the ``RECORD_AND_SAVE`` step ends the cycle: recording stops and ``on_trace_ready(prof)`` runs.
The transitions between actions are PyTorch's (``profile._ACTIONS``), including its warnings for a schedule that
skips from WARMUP or RECORD straight to NONE.
"""
import enum
import gzip
import json
import os
import socket
import time
import uuid
import warnings

from ..autograd import profiler as _prof
from ..autograd.profiler_util import _write_trace

__all__ = ["ProfilerActivity", "ProfilerAction", "schedule", "profile", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """The activity groups a profile may collect (``torch.profiler.ProfilerActivity``, same values)."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __int__(self):
        return self.value


class ProfilerAction(enum.Enum):
    """What a schedule asks for at a step: ``NONE``, ``WARMUP``, ``RECORD``, ``RECORD_AND_SAVE`` (the last step of a
    cycle); ``DEVICE_STOPPED`` is PyTorch's internal state and must not come from a schedule."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    """The activities tinytorch's profiler can collect: ``{ProfilerActivity.CPU}`` (it times ops on the CPU side;
    it traces no device kernels)."""
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A schedule function ``step -> ProfilerAction``: skip ``skip_first`` steps, then repeat cycles of ``wait``
    NONE steps, ``warmup`` WARMUP steps and ``active`` recording steps (the last one RECORD_AND_SAVE), ``repeat``
    times (0: forever). ``skip_first_wait`` drops the first cycle's wait. AssertionError on a negative count or
    ``active <= 0``; UserWarning when ``warmup == 0``. The returned function raises AssertionError for a negative
    step."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_):
    """Record at every step (the schedule of a profile given none)."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` handler writing each cycle's trace to
    ``dir_name/<worker_name>.<time_ns>.pt.trace.json[.gz]`` (``worker_name`` defaults to ``<host>_<pid>``), the
    layout TensorBoard's profiler plugin reads. RuntimeError when ``dir_name`` cannot be created."""

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name), use_python_export=use_python_export)

    return handler_fn


def _parse_activities(activities):
    out = set()
    for item in activities:
        if isinstance(item, ProfilerActivity):
            out.add(item)
        elif isinstance(item, dict):
            out.update(item)
        else:
            raise TypeError(f"activities must be ProfilerActivity or dict, got {type(item).__name__}")
    return out


class _KinetoProfile:
    """The recording part of ``profile`` (``torch.profiler._KinetoProfile``): ``start``/``stop`` one recording,
    then ``events``, ``key_averages``, ``export_chrome_trace``, ``export_stacks``, ``add_metadata``."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = _parse_activities(activities) if activities is not None else supported_activities()
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler = None
        self.use_device = None
        for act, dev in ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
                         (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu")):
            if act in self.activities:
                self.use_device = dev
                break
        self.preset_metadata = {}
        self._metadata = {}
        self._old_events = []

    def start(self):
        """Begin recording."""
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        """End recording."""
        self.stop_trace()

    def prepare_trace(self):
        """Make a fresh recorder (not recording yet); with ``acc_events`` the previous cycles' events are kept."""
        if self.profiler is not None:
            if self.acc_events:
                self._old_events = list(self.profiler.function_events or [])
            else:
                _warn_once("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                           "cycle will be reported. To keep events across cycles, set acc_events=True.")
        self.profiler = _prof.profile(use_device=self.use_device, record_shapes=self.record_shapes,
                                      with_flops=self.with_flops, profile_memory=self.profile_memory,
                                      with_stack=self.with_stack, with_modules=self.with_modules,
                                      use_kineto=True, use_cpu=ProfilerActivity.CPU in self.activities,
                                      acc_events=self.acc_events)
        if self.profiler.use_device is None and ProfilerActivity.CPU not in self.activities:
            raise AssertionError("No activities specified for the profiler")
        if self.profiler.use_device is not None:
            _warn_once(f"tinytorch's profiler times ops on the CPU only: no {self.profiler.use_device.upper()} "
                       "kernel activity is traced")
        self.profiler._old_events = self._old_events

    def start_trace(self):
        """Start recording with the prepared recorder."""
        if ProfilerActivity.CPU in self.activities:
            self.profiler.__enter__()
        else:  # a device-only profile: the recorder stays empty
            self.profiler.entered = True
            self.profiler._collector = _prof._make_collector(False, False, False, False, self.use_device)

    def stop_trace(self):
        """Stop recording; the events become available."""
        if self.profiler is None or not self.profiler.entered:
            return
        if ProfilerActivity.CPU in self.activities:
            self.profiler.__exit__(None, None, None)
        else:
            from ..autograd.profiler_util import EventList
            self.profiler._function_events = EventList([], use_device=self.use_device)
        self.profiler.entered = False

    def events(self):
        """The unaggregated ``FunctionEvent``s of the last recording (an ``EventList``). AssertionError before
        any recording was prepared."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events grouped by name (and input shape / stack frames when asked)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before calling key_averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last recording as a Chrome trace: a JSON object with ``traceEvents`` (``ph: X`` events,
        ``cat`` ``cpu_op`` or ``user_annotation``) and the metadata added with ``add_metadata``; gzip-compressed
        when ``path`` ends in ``.gz``."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting chrome trace")
        extra = {"schemaVersion": 1, "deviceProperties": [], "trace_id": uuid.uuid4().hex.upper(),
                 "host_name": socket.gethostname(), "displayTimeUnit": "ms",
                 "baseTimeNanoseconds": time.time_ns() - time.perf_counter_ns()}
        extra.update(self.preset_metadata)
        extra.update(self._metadata)
        extra["traceName"] = path
        if path.endswith(".gz"):
            tmp = path[:-3] + f".{os.getpid()}.tmp"
            _write_trace(tmp, self.events(), extra)
            with open(tmp, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
        else:
            _write_trace(path, self.events(), extra)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write the collapsed stacks of the events (``with_stack=True`` needed)."""
        if self.profiler is None:
            raise AssertionError("Expected profiler to be initialized before exporting stacks")
        return self.profiler.export_stacks(path, metric)

    def add_metadata(self, key, value):
        """Add ``key: value`` (a string) to the exported trace's top level."""
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        """Add ``key`` with ``value`` (a JSON string) to the exported trace's top level."""
        self._metadata[key] = json.loads(value)

    def preset_metadata_json(self, key, value):
        """Like ``add_metadata_json``, set before the recording starts."""
        self.preset_metadata[key] = json.loads(value)


_warned = set()


def _warn_once(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, stacklevel=3)


class profile(_KinetoProfile):
    """The profiler context manager (``torch.profiler.profile``).

    Records tinytorch's ops (``aten::<op>`` events with self and total CPU time), backward nodes and
    ``record_function`` ranges run inside it. ``schedule(step) -> ProfilerAction`` chooses what each step does
    (default: record every step); ``step()`` marks a step's end, and with a schedule each step shows as a
    ``ProfilerStep#<n>`` range. ``on_trace_ready(prof)`` runs at the end of each cycle (and at exit while
    recording). ``record_shapes``, ``with_stack``, ``with_flops``, ``profile_memory``: see
    ``tinytorch.autograd.profiler.profile``. ``use_cuda`` is deprecated (FutureWarning) and adds or removes the
    CUDA activity. ValueError when the schedule returns ``DEVICE_STOPPED``.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        acts = _parse_activities(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead", FutureWarning, stacklevel=2)
            if use_cuda:
                acts.add(ProfilerActivity.CUDA)
            else:
                acts.discard(ProfilerActivity.CUDA)
        if not acts:
            raise AssertionError("No valid profiler activities found")
        super().__init__(activities=acts, record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
                         acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
                         post_processing_timeout_s=post_processing_timeout_s)
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        action = self.schedule(self.step_num)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        self.current_action = action

    # (previous action, next action) -> what to do, PyTorch's table; None as next is the exit
    _ACTIONS = {
        ("NONE", "WARMUP"): ("prepare_trace",),
        ("NONE", "RECORD"): ("prepare_trace", "start_trace"),
        ("NONE", "RECORD_AND_SAVE"): ("prepare_trace", "start_trace"),
        ("WARMUP", "NONE"): ("!Incorrect schedule: WARMUP followed by NONE", "start_trace", "stop_trace"),
        ("WARMUP", "RECORD"): ("start_trace",),
        ("WARMUP", "RECORD_AND_SAVE"): ("start_trace",),
        ("RECORD", "NONE"): ("!Incorrect schedule: RECORD followed by NONE", "stop_trace"),
        ("RECORD", "WARMUP"): ("!Incorrect schedule: RECORD followed by WARMUP", "stop_trace"),
        ("RECORD_AND_SAVE", "NONE"): ("stop_trace", "_trace_ready"),
        ("RECORD_AND_SAVE", "WARMUP"): ("stop_trace", "_trace_ready", "prepare_trace"),
        ("RECORD_AND_SAVE", "RECORD"): ("stop_trace", "_trace_ready", "prepare_trace", "start_trace"),
        ("RECORD_AND_SAVE", "RECORD_AND_SAVE"): ("stop_trace", "_trace_ready", "prepare_trace", "start_trace"),
        ("WARMUP", None): ("start_trace", "stop_trace"),
        ("RECORD", None): ("stop_trace", "_trace_ready"),
        ("RECORD_AND_SAVE", None): ("stop_trace", "_trace_ready"),
    }

    def _transit_action(self, prev, cur):
        for what in self._ACTIONS.get((prev.name, cur.name if cur is not None else None), ()):
            if what.startswith("!"):
                warnings.warn(what[1:], stacklevel=3)
            else:
                getattr(self, what)()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        return False

    def start(self):
        """Enter the schedule's action for the current step."""
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self):
        """Leave the current action (a recording cycle in progress ends and ``on_trace_ready`` runs)."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Mark the end of a step: move to the schedule's action for the next one. ValueError (state unchanged) when
        the schedule returns ``DEVICE_STOPPED``."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        nxt = self.schedule(self.step_num + 1)
        if nxt == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler and must not be "
                             "returned by a user-provided schedule")
        self.step_num += 1
        self.current_action = nxt
        self._transit_action(prev, nxt)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def set_custom_trace_id_callback(self, callback):
        """Set the function giving each cycle's trace id."""
        self.custom_trace_id_callback = callback
