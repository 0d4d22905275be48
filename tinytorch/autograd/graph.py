"""``torch.autograd.graph``: hooks on the tensors the graph saves for backward. Inside
``saved_tensors_hooks(pack_hook, unpack_hook)`` every tensor an op saves is stored as ``pack_hook(tensor)``,
and backward reads it back as ``unpack_hook(packed)`` (e.g. ``save_on_cpu`` moves saved activations to host
memory). Saved tensors that go through hooks are not version-checked: what unpack returns is the user's
responsibility, as in PyTorch.

The active hooks are per thread, as PyTorch's (a thread's hooks never pack another thread's saved tensors, and
a new thread starts with none)."""
import threading


class _HooksState(threading.local):
    """The calling thread's hooks. Tuples, replaced rather than mutated, so the class-level empty defaults
    serve every thread that never enters a hooks context (no per-thread initialisation; the hot-path check in
    the op recorder is one attribute access)."""
    stack = ()  # active (pack_hook, unpack_hook) pairs; the innermost is used
    disabled = ()  # messages of active disable_saved_tensors_hooks contexts


_hooks = _HooksState()

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> anything`` when a tensor is saved for backward,
    ``unpack_hook(anything) -> tensor`` when backward needs it. RuntimeError inside
    ``disable_saved_tensors_hooks``."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks.disabled:
            raise RuntimeError(_hooks.disabled[-1])
        _hooks.stack = _hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _hooks.stack = _hooks.stack[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are moved to ``cpu`` during forward and back to their device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside, registering saved-tensor hooks raises RuntimeError(``error_message``)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if _hooks.stack:
            raise RuntimeError(self.error_message)
        _hooks.disabled = _hooks.disabled + (self.error_message,)
        return self

    def __exit__(self, *exc):
        _hooks.disabled = _hooks.disabled[:-1]
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*a, **k)
        return wrapper


def packer():
    """(pack, unpack) of the innermost active hooks; pack runs with the hooks suspended, so tensors that the
    hook itself saves (``t * 2`` on a tensor that requires grad) are stored as they are, not packed again."""
    p, u = _hooks.stack[-1]

    def pack(t):
        active = _hooks.stack
        _hooks.stack = ()
        try:
            return p(t)
        finally:
            _hooks.stack = active
    return pack, u
