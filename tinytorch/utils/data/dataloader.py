"""DataLoader, its iterators (``_SingleProcessDataLoaderIter`` for ``num_workers=0``,
``_MultiProcessingDataLoaderIter`` for worker processes, both ``_BaseDataLoaderIter``), default_collate,
default_convert, get_worker_info. Behaviour follows PyTorch's ``torch/utils/data/dataloader.py``."""
import atexit
import collections
import collections.abc
import copy
import itertools
import math
import multiprocessing as _python_mp
import os
import pickle
import queue
import warnings
import weakref

import numpy as np

from ..._tensor import Tensor
from . import _worker
from ._worker import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, _DatasetKind, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


def default_collate(batch):
    """Collate a list of samples into a batch, as ``torch.utils.data.default_collate``: tensors are stacked,
    NumPy arrays and scalars become tensors, Python floats float64 and ints int64 tensors, strings stay as they
    are; mappings, named tuples and sequences are collated field by field (a tuple sample gives a list, as in
    torch). TypeError for other element types; RuntimeError for samples of unequal length."""
    from ..._ops.creation import as_tensor, tensor
    from ..._ops.shape import stack
    from ... import _dtype as _dt
    if hasattr(batch, "stacked"):  # a dataset's __getitems__ already built the batch
        return batch.stacked
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.char in "SaUO":
            raise TypeError(_COLLATE_ERR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype=_dt.float64)
    if isinstance(elem, int):  # bool included: a bool tensor, as torch.tensor makes
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: default_collate([d[k] for d in batch]) for k in elem})
                return clone
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]  # torch's backward-compatible list
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERR.format(type(elem)))


_COLLATE_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """Convert NumPy arrays (and NumPy scalars) inside ``data`` to tensors without batching them, keeping
    lists, tuples, named tuples and dicts (``torch.utils.data.default_convert``, the collate function of a
    DataLoader with ``batch_size=None``). Arrays of strings or objects are left as they are."""
    from ..._ops.creation import as_tensor
    if isinstance(data, (np.ndarray, np.generic)):
        return data if data.dtype.kind in "USO" else as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(converted)
        except TypeError:  # a mapping type that cannot be built from a dict
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # as PyTorch: tuples come back as lists
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever, so the dataset's own iterator decides where an epoch
    ends (``torch.utils.data.dataloader._InfiniteConstantSampler``)."""

    def __iter__(self):
        while True:
            yield None


def _stop_workers(workers, index_queues, done_event):
    """Tell every worker to exit (the done event, then None on its index queue), give each
    ``MP_STATUS_CHECK_INTERVAL`` seconds, then terminate those still running.

    Run by a ``weakref.finalize`` of the iterator, which holds the queues: so it runs when the iterator is
    collected (also out of a reference cycle, where a ``__del__`` would find the queues' feeder threads already
    finalized and its messages never sent) and at interpreter exit, before multiprocessing's own exit hook
    terminates the daemonic workers."""
    try:
        done_event.set()
        for q in index_queues:
            q.put(None)  # harmless for a worker that already exited: its queue is never flushed
        for w in workers:
            w.join(timeout=MP_STATUS_CHECK_INTERVAL)
        for q in index_queues:
            q.cancel_join_thread()
            q.close()
    finally:
        for w in workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)


# finalizers of iterators whose workers may still run. weakref.finalize runs live ones at exit too, but its exit
# hook is registered when the program's first finalize is made, possibly before multiprocessing's: this one is
# registered after it (this module imports multiprocessing first), so it runs before multiprocessing terminates
# the daemonic workers, and they exit cleanly.
_live_finalizers = set()


def _stop_live_workers_at_exit():
    for f in list(_live_finalizers):
        f()


atexit.register(_stop_live_workers_at_exit)


def _cpu_count():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


class DataLoader:
    """Iterate over ``dataset`` in batches (``torch.utils.data.DataLoader``).

    Map-style datasets are indexed through ``sampler`` (default: SequentialSampler, or a RandomSampler driven by
    ``generator`` with ``shuffle=True``) grouped by a BatchSampler of ``batch_size`` (``drop_last`` drops a short
    final batch); a batch is assembled with ``dataset.__getitems__`` when the dataset has one, else per sample,
    then ``collate_fn`` (default_collate; default_convert when ``batch_size=None`` disables batching). An
    IterableDataset is iterated, ``batch_size`` samples per batch; it takes no sampler, batch_sampler or shuffle.

    ``num_workers=0`` loads in the calling process; ``num_workers > 0`` starts that many worker processes
    (``multiprocessing_context``: a start method name or a context; default, the platform's) per iterator, or
    once for the loader's life with ``persistent_workers=True``; each keeps ``prefetch_factor`` batches in
    flight, is seeded as PyTorch seeds it (see ``get_worker_info``) and runs ``worker_init_fn(worker_id)`` first.
    Batches come back in sampler order, or as they are ready with ``in_order=False``; ``timeout > 0`` bounds the
    wait for one batch (RuntimeError past it). Tensors reach the main process pickled, by value.
    ``pin_memory=True`` is accepted; tinytorch has no page-locked memory, so batches are returned as they are
    (PyTorch warns the same way when it finds no accelerator).

    ValueError for the option combinations PyTorch rejects (negative ``num_workers``, ``timeout`` or
    ``prefetch_factor``, ``prefetch_factor`` or ``persistent_workers`` without workers, ``sampler`` with
    ``shuffle``, ``batch_sampler`` with batching options, ``drop_last`` with ``batch_size=None``, sampler options
    with an IterableDataset, a ``multiprocessing_context`` without workers or naming no start method); TypeError
    for a ``multiprocessing_context`` that is neither a name nor a context.
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device, self.timeout = pin_memory, pin_memory_device, timeout
        self.worker_init_fn, self.in_order = worker_init_fn, in_order
        self.multiprocessing_context = multiprocessing_context  # validated by the property

        # iterable-style first, so a user learns that such datasets take no sampler before fixing the sampler
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        # len(loader) of an IterableDataset, once asked: iterators warn when they yield more batches than that
        self._IterableDataset_len_called = None
        self._iterator = None  # the one iterator reused across epochs with persistent workers
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The multiprocessing context worker processes start from (None: the platform's default)."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                valid = _python_mp.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = _python_mp.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, _python_mp.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                "specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        # these shape the samplers and iterators built in __init__; changing them afterwards would be ignored
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self):
        """A new iterator: in this process for ``num_workers=0``, else one that starts the worker processes."""
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        """An iterator over the batches of one epoch (a ``_BaseDataLoaderIter``). With persistent workers, the
        same iterator (``self._iterator``) each time, reset for the new epoch, so its workers are kept."""
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what iterators draw from: lists of indices when batching, single indices otherwise
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        """Batches per epoch: the index sampler's length; for an IterableDataset, ``len(dataset)`` divided by
        ``batch_size`` (rounded down with ``drop_last``, else up), remembered to warn if iteration yields more
        (TypeError when the dataset has no length)."""
        if self._dataset_kind != _DatasetKind.Iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self):
        """Warn (UserWarning, PyTorch's text) when ``num_workers`` exceeds the CPUs this process may use."""
        if not self.num_workers:
            return
        suggested = _cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            hint = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
            hint = (f"Our suggested max number of worker in current system is {suggested}{cpuset}, which is smaller "
                    "than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {hint} Please be "
                      "aware that excessive worker creation might get DataLoader running slow or even freeze, lower "
                      "the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseDataLoaderIter:
    """What iterating a DataLoader gives (``torch.utils.data.dataloader._BaseDataLoaderIter``): one epoch of
    batches. Holds the index sampler's iterator (``_sampler_iter``), the count of batches returned
    (``_num_yielded``) and the base seed of worker seeding (``_base_seed``, drawn from the loader's generator, or
    the default one, right after the sampler's iterator is made and before it draws anything: the order
    PyTorch draws in, so shuffles after the same seed match PyTorch's). Subclasses implement ``_next_data``."""

    def __init__(self, loader):
        from ... import accelerator
        from ..._dtype import int64
        from ..._ops.creation import empty
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=2)
        if loader.pin_memory and not accelerator.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=2)
        # tinytorch has no page-locked host memory: batches are never pinned
        self._pin_memory = False
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # drawn here, after iter() but before the sampler's first draw (samplers draw lazily), as PyTorch draws it:
        # moving it would shift the random stream and so every shuffle away from PyTorch's
        self._base_seed = int(empty((), dtype=int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._profile_name = f"enumerate(DataLoader)#{self.__class__.__name__}.__next__"

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        """Start a new epoch: a fresh iterator over the index sampler (the base seed is kept)."""
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the epoch

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        from ...autograd.profiler import record_function
        with record_function(self._profile_name):
            data = self._next_data()
            self._num_yielded += 1
            if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                    and self._num_yielded > self._IterableDataset_len_called):
                msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but {self._num_yielded} "
                       "samples have been fetched. ")
                if self._num_workers > 0:
                    msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                            "IterableDataset replica at each worker. Please see "
                            "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
                warnings.warn(msg, stacklevel=2)
            return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)  # PyTorch's exact arguments


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads each batch in the calling process when ``next`` asks for it (``num_workers=0``)."""

    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._dataset_fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                                            self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)  # an IterableDataset's end raises StopIteration here


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Loads batches in ``num_workers`` worker processes
    (``torch.utils.data.dataloader._MultiProcessingDataLoaderIter``).

    Each worker has its own index queue; all answer on one result queue. Task ``i`` (the ``i``-th index or
    index list of the sampler) goes to the workers in turn, at most ``prefetch_factor * num_workers`` tasks
    outstanding. Results are returned in task order (early ones are held until their turn), or as they arrive
    with ``in_order=False``. A worker's exception is raised here again, as its type, with the worker id and
    its traceback in the message. A worker whose IterableDataset copy ends gets no more tasks; the epoch ends
    when every task is answered or skipped.

    Workers stop at the end of the epoch, when the iterator is garbage collected, or at interpreter exit
    (``_shutdown_workers``, ``_stop_workers``); with persistent workers only the last two, and ``_reset`` starts
    a new epoch on the same workers. A worker found dead while waiting raises RuntimeError naming its pid.
    """

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor, self._in_order = loader.prefetch_factor, loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        if loader.multiprocessing_context is None:
            from ... import multiprocessing as context  # the module's functions use the default context
        else:
            context = loader.multiprocessing_context
        self._worker_init_fn = loader.worker_init_fn
        self._shutdown = False
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        self._workers_status = []
        # holds the lists, not the iterator: filled below, stopped when the iterator goes
        self._finalizer = weakref.finalize(self, _stop_workers, self._workers, self._index_queues,
                                           self._workers_done_event)
        _live_finalizers.difference_update([f for f in _live_finalizers if not f.alive])
        _live_finalizers.add(self._finalizer)
        try:
            for worker_id in range(self._num_workers):
                index_queue = context.Queue()
                # a worker may die with tasks unread: don't let this process's exit wait to flush them
                index_queue.cancel_join_thread()
                w = context.Process(target=_worker._worker_loop, args=(
                    self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                    self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                    self._base_seed, self._worker_init_fn, worker_id, self._num_workers))
                w.daemon = True  # never outlive the main process
                try:
                    w.start()
                except (TypeError, AttributeError, pickle.PicklingError):
                    warnings.warn(
                        "Got pickle error when attempting to start a worker Process. This might be because the "
                        "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing start "
                        "method in non-Mac POSIX platforms to 'forkserver', which requires the worker Process "
                        "arguments to be picklable. You can also try multiprocessing.set_start_method('fork').",
                        stacklevel=2)
                    raise
                self._index_queues.append(index_queue)
                self._workers.append(w)
                self._workers_status.append(True)
        except BaseException:
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next task number to hand out
        self._rcvd_idx = 0  # next task number to return (in order)
        # task number -> (worker_id,) while outstanding, (worker_id, data) once answered but not yet returned
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: each acknowledges the new epoch after answering whatever the last epoch left
            # in its queue; those late answers are dropped
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=None):
        # (True, item) or, after ``timeout`` seconds (default MP_STATUS_CHECK_INTERVAL) with nothing, (False, None);
        # RuntimeError naming the workers that died meanwhile
        try:
            return True, self._data_queue.get(timeout=MP_STATUS_CHECK_INTERVAL if timeout is None else timeout)
        except Exception as e:
            failed = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self):
        while True:
            # move past tasks already returned (in_order=False) or whose worker ended without answering them
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # answered earlier, held for its turn
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            if self._shutdown or self._tasks_outstanding <= 0:
                raise AssertionError("Invalid iterator state: shutdown or no outstanding tasks when fetching next data")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False  # kept alive for the next epoch
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                worker_id = self._task_info.pop(idx)[0]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            self._task_info[idx] += (data,)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        if self._tasks_outstanding >= max_tasks:
            raise AssertionError("Number of outstanding tasks exceeded maximum allowed tasks")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker in turn that is active (and, unordered, not full)
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id] and (
                    self._in_order or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        # no more tasks for this worker; None tells it to exit (it may be dead already: the put just buffers)
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        """Stop the worker processes (see ``_stop_workers``). Idempotent; runs by itself at the end of an epoch
        (unless workers persist), when the iterator is garbage collected and at interpreter exit."""
        if not getattr(self, "_shutdown", True):
            self._shutdown = True
            self._finalizer()
