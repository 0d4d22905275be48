"""``torch.multiprocessing``: Python's ``multiprocessing`` plus PyTorch's process launcher (``spawn``,
``start_processes``) and sharing-strategy settings.

Everything of the standard library's ``multiprocessing`` is here under the same names (``Process``, ``Queue``,
``get_context``, ``set_start_method`` ...). A tensor sent to another process through a queue or as an argument is
pickled, so the receiver gets a copy of its values (PyTorch instead moves CPU storages into shared memory; a program
that relies on writes in one process being seen by another, as Hogwild training does, is not served by this).

``spawn(fn, args, nprocs)`` runs ``fn(i, *args)`` in ``nprocs`` new processes and, as PyTorch's, turns the first
failure into ``ProcessRaisedException`` (carrying the child's traceback) or ``ProcessExitedException`` (a signal
or a non-zero exit code), after terminating the other processes. Source: PyTorch's ``torch/multiprocessing``.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                    SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn", "start_processes",
           "ProcessContext", "SpawnContext", "ProcessException", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

_STRATEGIES = {"file_descriptor", "file_system"}
_strategy = ["file_descriptor"]


def set_sharing_strategy(new_strategy):
    """Set how CPU tensors would be shared between processes: one of ``get_all_sharing_strategies()``
    (AssertionError otherwise, as PyTorch's). tinytorch pickles tensors between processes whichever is set."""
    assert new_strategy in _STRATEGIES
    _strategy[0] = new_strategy


def get_sharing_strategy():
    """The strategy ``set_sharing_strategy`` set (default ``"file_descriptor"`` on Linux, as PyTorch's)."""
    return _strategy[0]


def get_all_sharing_strategies():
    """The strategies this platform supports: ``{"file_descriptor", "file_system"}``."""
    return set(_STRATEGIES)
