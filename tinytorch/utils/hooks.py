"""``torch.utils.hooks``: the handle every hook registration returns, and helpers about hooks.

``RemovableHandle`` is the one handle class of tinytorch's ``nn.Module`` and optimizer hooks: a registration
makes a handle (its ``id`` is the hook's key in the table) and stores the hook under that key; ``remove()`` takes
it out again (also as a context manager).
Source: https://github.com/pytorch/pytorch/blob/main/torch/utils/hooks.py (the documented behaviour).
"""
import warnings
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """A handle that removes a hook: ``hooks_dict[handle.id]`` is the hook (``torch.utils.hooks.RemovableHandle``).

    hooks_dict: the table the hook goes into, a weakly referable mapping such as an OrderedDict (held weakly: a dropped table makes ``remove`` a no-op).
    extra_dict: a dict, or a list of dicts, whose entries under the same id are removed with it (a hook's flags).
    ``id`` is unique over the process (the class counter ``next_id``). Picklable (the tables by value)."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra = ()
        elif isinstance(extra_dict, dict):
            extra = (extra_dict,)
        else:
            extra = tuple(extra_dict)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self):
        """Take the hook (and its entries in the extra dicts) out of its table; removing twice is harmless."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        d = self.hooks_dict_ref()
        state = (d, self.id) if not self.extra_dict_ref else \
            (d, self.id, tuple(r() for r in self.extra_dict_ref))
        return state

    def __setstate__(self, state):
        # a table that was gone when pickled comes back as an empty dict the handle alone refers to
        self.hooks_dict_ref = weakref.ref(state[0]) if state[0] is not None else weakref.ref(OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


def unserializable_hook(f):
    """Mark ``f`` (a tensor hook) as one that need not survive serialization: ``warn_if_has_hooks`` says nothing
    about it. Returns ``f``."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn (UserWarning) for each backward hook of ``tensor`` that is not marked ``unserializable_hook``: hooks
    are not serialized with a tensor."""
    hooks = getattr(tensor, "_backward_hooks", None) or getattr(tensor, "_hooks", None)
    if not hooks:
        return
    for h in (hooks.values() if isinstance(hooks, dict) else hooks):
        if not getattr(h, "__torch_unserializable__", False):
            warnings.warn(f"backward hook {repr(h)} on tensor will not be serialized.  If this is expected, you "
                          "can decorate the function with @torch.utils.hooks.unserializable_hook to suppress this "
                          "warning")
