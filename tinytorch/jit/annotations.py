"""``torch.jit.annotations``: the annotation names TorchScript code imports (``List``, ``Optional``, ``Tuple`` ...
from ``typing``, and ``BroadcastingList1/2/3``). tinytorch runs TorchScript-annotated code as Python, where these
are ordinary annotations: ``BroadcastingList2[int]`` (an int or a list of two ints) reads as ``List[int]``."""
from typing import Any, Dict, List, Optional, Tuple, Union, get_args, get_origin

__all__ = ["Any", "List", "BroadcastingList1", "BroadcastingList2", "BroadcastingList3", "Tuple", "is_tuple",
           "is_list", "Dict", "is_dict", "is_optional", "is_union", "Optional", "Union"]


class _BroadcastingList:
    """``BroadcastingListN[T]``: a T or a list of N of them (TorchScript broadcasts a scalar); ``List[T]`` in Python."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, types):
        return List[types]

    def __repr__(self):
        return f"BroadcastingList{self.n}"


BroadcastingList1, BroadcastingList2, BroadcastingList3 = _BroadcastingList(1), _BroadcastingList(2), \
    _BroadcastingList(3)


def is_tuple(ann):
    return get_origin(ann) is tuple


def is_list(ann):
    return get_origin(ann) is list


def is_dict(ann):
    return get_origin(ann) is dict


def is_union(ann):
    return get_origin(ann) is Union


def is_optional(ann):
    return is_union(ann) and type(None) in get_args(ann)
