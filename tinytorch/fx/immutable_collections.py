"""``torch.fx.immutable_collections``: the list and dict types a Node's ``args``/``kwargs`` are stored in.

A Node's arguments are shared with its users' bookkeeping (``Node.users``), so editing them in place would leave
that bookkeeping stale; these types refuse in-place edits (NotImplementedError, as PyTorch's) and point to
``Node.args = ...`` / ``Node.update_arg``, which keep it right.
"""

__all__ = ["immutable_list", "immutable_dict"]


def _refuse(self, *args, **kwargs):
    raise NotImplementedError(f"'{type(self).__name__}' object does not support mutation. "
                              "If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
                              "instead create a new copy of it and assign the copy to the node:\n"
                              "    new_args = ... # copy and mutate args\n"
                              "    node.args = new_args\n")


class immutable_list(list):
    """A list that refuses in-place changes (``append``, item assignment, ...); hashable by its items."""

    for _name in ("__delitem__", "__iadd__", "__imul__", "__setitem__", "append", "clear", "extend", "insert",
                  "pop", "remove", "reverse", "sort"):
        locals()[_name] = _refuse
    del _name

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    """A dict that refuses in-place changes (item assignment, ``update``, ``pop`` ...); hashable by its items."""

    for _name in ("__delitem__", "__ior__", "__setitem__", "clear", "pop", "popitem", "setdefault", "update"):
        locals()[_name] = _refuse
    del _name

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (list(self.items()),))
