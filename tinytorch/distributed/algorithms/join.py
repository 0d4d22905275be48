"""``torch.distributed.algorithms.join``: training on inputs of different lengths per rank.

The protocol (PyTorch's; Source: its ``torch/distributed/algorithms/join.py`` and the "Distributed Training with
Uneven Inputs Using the Join Context Manager" tutorial):
  * each ``Joinable`` calls ``Join.notify_join_context(self)`` before its per-iteration collectives; the first
    joinable of the context then all-reduces a 1, so the ranks still training count themselves;
  * a rank that runs out of inputs leaves the ``with`` body; on exit it all-reduces a 0 in each round (the count of
    ranks not yet joined) and, while that count is not 0, runs every joinable's ``JoinHook.main_hook`` (which
    shadows the collectives the training ranks perform, e.g. DDP's gradient all-reduce with zeros);
  * once every rank has joined, ``post_hook(is_last_joiner)`` runs on each hook.
With ``throw_on_early_termination=True`` the first rank to run out makes every rank raise RuntimeError instead.
"""
import abc
import warnings

__all__ = ["JoinHook", "Joinable", "Join"]


class JoinHook:
    """What a joined rank runs in place of a joinable's iteration: ``main_hook()`` each round while other ranks
    still train, ``post_hook(is_last_joiner)`` once all have joined. Both do nothing by default."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(abc.ABC):
    """A class that takes part in ``Join``: it calls ``Joinable.__init__`` and implements ``join_hook``,
    ``join_device`` and ``join_process_group``."""

    @abc.abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abc.abstractmethod
    def join_hook(self, **kwargs):
        """The ``JoinHook`` of this joinable."""

    @property
    @abc.abstractmethod
    def join_device(self):
        """The device of the join context's collectives."""

    @property
    @abc.abstractmethod
    def join_process_group(self):
        """The process group of the join context's collectives."""


class _JoinConfig:
    __slots__ = ("enable", "throw_on_early_termination", "is_first_joinable")

    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Join:
    """``with Join(joinables, enable=True, throw_on_early_termination=False, **hook_kwargs):`` (see the module
    docstring). ValueError without joinables or when they use different process groups."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable, throw_on_early_termination, is_first_joinable=i == 0)
        group = None
        for j in joinables:
            if group is None:
                group = j.join_process_group
            elif group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
        from .. import get_rank
        self._process_group = group
        self._rank = get_rank(group)
        self._device = joinables[0].join_device

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._enable or exc_type is not None:
            return None
        rounds, last = 0, True
        while self._count_nonjoined():
            if rounds == 1000:
                warnings.warn(f"Detected uneven input skew of greater than 1000. This means that rank {self._rank} "
                              "has at least 1000 fewer inputs than other currently-active ranks. This level of skew "
                              "could lead to performance degradation during training.", stacklevel=2)
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            last = False
            rounds += 1
        for hook in self._join_hooks:
            hook.post_hook(last)
        return None

    def _count_nonjoined(self):
        from ..._ops.creation import zeros
        from .. import all_reduce
        n = zeros(1, device=self._device)
        all_reduce(n, group=self._process_group)
        return n.item()

    def _notify_procs_to_terminate(self):
        from ..._ops.creation import ones
        from .. import all_reduce
        all_reduce(ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Count the calling rank as still training (the first joinable's all-reduce of a 1); with
        ``throw_on_early_termination``, raise RuntimeError once some rank has run out. Returns the all-reduce's
        ``Work`` for the first joinable, else None."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        from ..._ops.creation import ones, zeros
        from .. import all_reduce
        work = all_reduce(ones(1, device=joinable.join_device), group=joinable.join_process_group, async_op=True)
        if config.throw_on_early_termination:
            flag = zeros(1, device=joinable.join_device)
            all_reduce(flag, group=joinable.join_process_group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
