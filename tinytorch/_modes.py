"""The calling thread's mode flags: grad mode, inference mode and autocast state (PyTorch keeps the same in its
core library, c10's ``GradMode``, ``InferenceMode`` and ``AutocastState``, below the tensor and autograd layers).

Pure data, so that the lowest layers may read them: a Storage records whether it was allocated under inference
mode, the dispatcher and the autograd engine read grad mode and autocast. The switches users call live above:
``autograd/grad_mode.py`` (``no_grad``, ``inference_mode`` ...) and ``amp/autocast_mode.py`` (``autocast``).
"""
import threading


class _GradState(threading.local):
    """Grad mode and inference mode of the calling thread, as PyTorch keeps them (thread-local: a thread in
    ``no_grad`` leaves other threads' graphs alone, and a new thread starts with grad enabled and inference
    mode off). The class-level values are what a thread sees before it sets its own, so no per-thread
    initialisation runs and the hot-path read is one attribute access.

    ``inference_seen`` (inference_mode was entered at least once, so inference tensors may exist; spares the
    autograd recorder a per-input check in programs that never use it) is process-wide, because inference
    tensors cross threads: it is only ever set on the class, never on the instance."""
    enabled = True
    inference = False
    inference_seen = False


_state = _GradState()


class _AutocastState(threading.local):
    """The calling thread's autocast state. PyTorch keeps all of it per thread (the enabled bits in the
    thread-local dispatch key set, the dtypes, the cache flag and the nesting count are ``thread_local``), so
    autocast in one thread never casts another thread's ops and a new thread starts with autocast off.

    ``entries``: device type -> [enabled, dtype] (the "cuda" entry is queried by scripts on any machine, and
    enabled only where the cuda device is available). ``active``: the number of device types with autocast on, the fast check in every wrapped
    function (a class-level 0 until the thread enables autocast)."""
    active = 0
    cache_enabled = True
    nesting = 0

    def __init__(self):
        self.entries = {}


_ac = _AutocastState()


def _recount():
    _ac.active = sum(1 for e in _ac.entries.values() if e[0])


class _suspended:
    """No autocast inside (the autograd engine runs backward passes in it)."""

    def __enter__(self):
        entries = _ac.entries
        self._prev = {k: e[0] for k, e in entries.items()}
        for e in entries.values():
            e[0] = False
        _ac.active = 0
        return self

    def __exit__(self, *exc):
        for k, on in self._prev.items():
            _ac.entries[k][0] = on
        _recount()
        return False


class _LazyState(threading.local):
    """Whether the calling thread is inside a compiled function (``tinytorch.compile``): then ``dispatch`` appends
    each kernel call to ``recording`` (a ``compiler.lazy.Recording``) instead of running it, and the write step and
    the in-place and mutating kernels do the same. ``active`` is the one check on the eager path."""
    active = False
    recording = None
    # bumped (process-wide, on the class) by every change of a module's structure or mode (Module.__setattr__,
    # train(), register_*, Tensor.data =): a compiled replay's guard on the modules is one comparison
    module_version = 0


_lazy = _LazyState()


def bump_module_version():
    _LazyState.module_version += 1
