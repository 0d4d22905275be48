"""``torch.torch_version``: ``TorchVersion``, the string type of ``torch.__version__``.

A ``str`` that also compares with ``packaging.version.Version`` objects and with tuples of numbers, so both
``torch.__version__ >= "2.6"`` and ``torch.__version__ >= (2, 6)`` work as libraries write them; a string that is
not a version falls back to plain string comparison. Source: PyTorch's ``torch/torch_version.py``.
"""
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from .version import __version__ as _api_version

__all__ = ["TorchVersion"]


class TorchVersion(str):
    """A version string comparable with ``str``, ``packaging.version.Version`` and tuples such as ``(2, 6)``.

    Example: ``TorchVersion("2.13.0+tinytorch.0.1.0") >= (2, 6)`` is True.
    """

    __slots__ = ()

    @staticmethod
    def _as_version(other):
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if isinstance(other, Iterable):  # (2, 6) -> "2.6"
            return Version(".".join(str(part) for part in other))
        raise InvalidVersion(other)

    def _compare(self, other, method):
        try:
            return getattr(Version(self), method)(self._as_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__


__version__ = TorchVersion(_api_version)
