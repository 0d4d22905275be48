"""``tinytorch.cuda``: the ``cuda`` device's runtime API, as ``torch.cuda``.

The device (``backends/cuda``) runs on NVIDIA's driver through ``cuda-bindings`` (the ``cuda`` extra). Where it is
unavailable (no bindings, no driver, no GPU) the answers are a CPU-only PyTorch build's: ``is_available()`` is
False, ``device_count()`` 0, the memory counters 0, and what needs a device (``synchronize``, ``current_device``,
``get_device_name`` ...) raises the AssertionError ``Torch not compiled with CUDA enabled``, whose message says what
is missing. So ``device = "cuda" if torch.cuda.is_available() else "cpu"`` picks the cpu there.

Random numbers: tinytorch draws them with the host generator (``torch.manual_seed``'s, the CPU stream) and copies
them to the device, so a seed gives the same values on every device, and the cpu's values of torch; PyTorch's
CUDA generator is Philox and gives other values for the same seed.

Streams: every kernel of a device runs on its one stream, in order; ``Stream`` objects name that stream, so code
that creates streams and waits on events runs, ordered, with no concurrency between streams.
"""

from . import _ops
from .backends.cuda.graphs import CUDAGraph, graph  # noqa: F401  (torch.cuda.CUDAGraph, torch.cuda.graph)
from .device import current_index as _current  # the index a bare "cuda" means (set_device)
from .device import get_backend as _get_backend


def _rt():
    from .backends.cuda import runtime
    return runtime


def _dev(device=None):
    return _get_backend("cuda").dev_for(_index(device))


def _index(device):
    if device is None:
        return _current.get("cuda", 0)
    if isinstance(device, int):
        return device
    from .device import as_device
    d = as_device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index or 0


def is_available():
    """True when cuda-bindings, the NVIDIA driver and at least one GPU are present."""
    return _rt().unavailable_reason() is None


def device_count():
    """Number of CUDA devices (0 where the device is unavailable)."""
    return len(_rt()._devices()) if is_available() else 0


def is_initialized():
    """Whether a device's context has been created (on first use, or by ``init``)."""
    return is_available() and any(d.dev is not None for d in _rt()._devices())


def init():
    """Create the context of the current device now (it is otherwise made on first use)."""
    _dev()


def current_device():
    """The index ``cuda`` means without one (``set_device`` changes it)."""
    _get_backend("cuda")
    return _current.get("cuda", 0)


def set_device(device):
    """Make ``device`` the current one; IndexError-like RuntimeError when it does not exist."""
    i = _index(device)
    _get_backend(f"cuda:{i}")
    _current["cuda"] = i


class device:
    """Context manager making ``device`` current inside the block (``torch.cuda.device``)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev = None

    def __enter__(self):
        self.prev = _current.get("cuda", 0)
        if self.idx >= 0:
            set_device(self.idx)

    def __exit__(self, *exc):
        _current["cuda"] = self.prev
        return False


def get_device_name(device=None):
    """The GPU's name as the driver reports it, e.g. 'NVIDIA H100 80GB HBM3'."""
    return _dev(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability, e.g. (9, 0) for an H100."""
    return _dev(device).capability


class _CudaDeviceProperties:
    def __init__(self, d):
        self.name = d.name
        self.major, self.minor = d.capability
        self.total_memory = d.total_memory
        self.multi_processor_count = d.multi_processor_count

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, multi_processor_count="
                f"{self.multi_processor_count})")


def get_device_properties(device=None):
    """name, major, minor, total_memory (bytes), multi_processor_count of the device."""
    return _CudaDeviceProperties(_dev(device))


def get_arch_list():
    """The architectures kernels are compiled for: the devices' own (NVRTC compiles at run time)."""
    return sorted({f"sm_{lazy.get().arch}" for lazy in _rt()._devices()}) if is_available() else []


def synchronize(device=None):
    """Wait until every kernel queued on the device has finished."""
    _dev(device).finish()


def memory_allocated(device=None):
    """Bytes held by live tensors on the device (blocks of the caching allocator in use); 0 without CUDA."""
    return _dev(device).allocated if is_available() else 0


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``; 0 without CUDA."""
    return _dev(device).max_allocated if is_available() else 0


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the driver (in use + cached free blocks); 0 without CUDA."""
    return _dev(device).reserved if is_available() else 0


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved`` since start or ``reset_peak_memory_stats``; 0 without CUDA."""
    return _dev(device).max_reserved if is_available() else 0


def reset_peak_memory_stats(device=None):
    """Start ``max_memory_allocated`` and ``max_memory_reserved`` again from the bytes held now."""
    if is_available():
        d = _dev(device)
        d.max_allocated, d.max_reserved = d.allocated, d.reserved


def empty_cache():
    """Give cached free blocks back to the driver (tensors still alive keep their memory)."""
    if is_available():
        for lazy in _rt()._devices():
            if lazy.dev is not None:
                lazy.dev.empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of device memory, from the driver."""
    d = _dev(device)
    d.activate()
    free, total = _rt()._check(_rt().cu.cuMemGetInfo(), "cuMemGetInfo")
    return int(free), int(total)


def is_bf16_supported(including_emulation=True):
    """bfloat16 GEMMs and kernels: compute capability 8.0 (Ampere) and newer; False without CUDA."""
    return is_available() and _dev().capability >= (8, 0)


def manual_seed(seed):
    """Seed the generator that draws random numbers for cuda tensors: the host's (see the module docstring)."""
    return _ops.generator.manual_seed(seed)


manual_seed_all = manual_seed
seed = seed_all = _ops.generator.seed
initial_seed = _ops.generator.initial_seed
get_rng_state = _ops.generator.get_rng_state
set_rng_state = _ops.generator.set_rng_state


def get_rng_state_all():
    """One RNG state per device: the host generator's (see the module docstring)."""
    return [get_rng_state() for _ in range(max(device_count(), 1))]


def set_rng_state_all(states):
    """Restore states from ``get_rng_state_all`` (all are the host generator's; the last one wins)."""
    for s in states:
        set_rng_state(s)


class Event:
    """A CUDA event (``torch.cuda.Event``): ``record`` on the device's stream, ``synchronize``, ``query`` and
    ``elapsed_time`` (milliseconds between two events recorded with ``enable_timing=True``)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        rt = _rt()
        self._d = _dev()
        self._d.activate()
        flags = 0 if enable_timing else rt.cu.CUevent_flags.CU_EVENT_DISABLE_TIMING.value
        if blocking:
            flags |= rt.cu.CUevent_flags.CU_EVENT_BLOCKING_SYNC.value
        self._ev = rt._check(rt.cu.cuEventCreate(flags), "cuEventCreate")
        self.enable_timing = enable_timing

    def record(self, stream=None):
        _rt()._check((_rt().cu.cuEventRecord(self._ev, self._d.stream)[0], None), "cuEventRecord")

    def wait(self, stream=None):
        """Work queued later waits for this event: already so on the one in-order stream."""

    def query(self):
        return int(_rt().cu.cuEventQuery(self._ev)[0]) == 0

    def synchronize(self):
        _rt()._check((_rt().cu.cuEventSynchronize(self._ev)[0], None), "cuEventSynchronize")

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event`` (both recorded and complete)."""
        return float(_rt()._check(_rt().cu.cuEventElapsedTime(self._ev, end_event._ev), "cuEventElapsedTime"))

    def __del__(self):
        rt = _rt()
        if getattr(self, "_ev", None) is not None and rt.cu is not None:
            rt.cu.cuEventDestroy(self._ev)


class Stream:
    """The device's stream (see the module docstring: one in-order stream per device)."""

    def __init__(self, device=None, priority=0):
        self.device_index = _index(device)
        self.priority = priority

    @property
    def cuda_stream(self):
        return int(_dev(self.device_index).stream)

    def synchronize(self):
        synchronize(self.device_index)

    def wait_event(self, event):
        """Ordered already: one stream."""

    def wait_stream(self, stream):
        """Ordered already: one stream."""

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self):
        return int(_rt().cu.cuStreamQuery(_dev(self.device_index).stream)[0]) == 0

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device_index == self.device_index

    def __hash__(self):
        return hash(("cuda-stream", self.device_index))


def current_stream(device=None):
    """The device's stream (``torch.cuda.current_stream``); ``default_stream`` is the same one."""
    return Stream(device)


default_stream = current_stream


class StreamContext:
    """``torch.cuda.StreamContext``: the context that makes ``stream`` current for its block (``stream`` None: no
    change). tinytorch's cuda device has one in-order stream per device, so the block's work goes to that stream
    whichever is named: the context only checks that it names a ``Stream``."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"expected a torch.cuda.Stream or None, got {type(stream).__name__}")
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def stream(s):
    """``with torch.cuda.stream(s):``: a ``StreamContext`` for ``s`` (the work goes to the device's one stream)."""
    return StreamContext(s)


class _AmpNamespace:
    """``torch.cuda.amp``: GradScaler and autocast for the cuda device."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        from .amp import autocast
        from . import _dtype
        return autocast("cuda", dtype or _dtype.float16, enabled, cache_enabled)

    @staticmethod
    def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        from .amp import GradScaler
        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = _AmpNamespace()
