"""``torch.nn.modules.utils``: the argument-normalising helpers layers (and torchvision / timm) import.

Source: torch/nn/modules/utils.py (PyTorch 2.13): same names and behaviour. ``nn.functional``'s internal
``_pair(x, n)`` is a different helper (it repeats anything but a tuple or list, so a 0-d tensor stays one
value); these follow torch in treating every iterable as already expanded.
"""
import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser turning ``x`` into an ``n``-tuple: an iterable becomes ``tuple(x)`` (any length, as torch),
    anything else is repeated ``n`` times. The parser's ``__name__`` is ``name``."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed with each element repeated ``n`` times: a conv / pool ``padding`` (per dim, first dim
    first) as ``F.pad``'s argument (last dim first, both sides), e.g. ((1, 2), 2) -> (2, 2, 1, 1)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling ``output_size`` with its None entries filled from the trailing entries of
    ``defaults`` (the input's sizes); an int is returned as it is. ValueError when ``defaults`` has no more
    entries than ``out_size`` ("Input dimension should be at least ...")."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` that start with it, in place (a DataParallel /
    DDP checkpoint's ``"module."``), and from the keys of its ``_metadata`` if it has one (there the bare
    ``prefix`` without dots names the wrapped module itself; the root key ``""`` is left alone)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    meta = getattr(state_dict, "_metadata", None)
    if meta is not None:
        for key in list(meta.keys()):
            if not key:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                meta[key[len(prefix):]] = meta.pop(key)
