"""What runs inside a DataLoader worker process, and what the main process and the workers share: the dataset
fetchers (one batch from a map-style or iterable-style dataset), ``WorkerInfo`` / ``get_worker_info``, the
per-worker seeding, the wrapper that carries a worker's exception and traceback to the main process, and the
worker loop itself. Behaviour follows PyTorch's ``torch/utils/data/_utils/{worker,fetch}.py`` and
``torch._utils.ExceptionWrapper``."""
import dataclasses
import os
import queue
import random
import sys
import traceback

# How long (seconds) a blocking queue read waits before the reader checks that its peer is still alive
# (PyTorch's MP_STATUS_CHECK_INTERVAL).
MP_STATUS_CHECK_INTERVAL = 5.0


class _DatasetKind:
    """Map-style (indexed) or iterable-style dataset; picks the fetcher (``torch.utils.data._DatasetKind``)."""
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        """A fetcher turning one index (or list of indices) from the sampler into one collated item."""
        cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """``dataset[i]`` per index; for a batch, one ``dataset.__getitems__(indices)`` call when the dataset has
    one (a single fancy-index instead of one call per sample), else a list of samples; then ``collate_fn``."""

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            return self.collate_fn(getitems(possibly_batched_index))
        return self.collate_fn([self.dataset[i] for i in possibly_batched_index])


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Draws from one iterator over the dataset: ``len(batch_index)`` samples per batch (fewer at the end,
    none when ``drop_last`` and the end leaves a short batch), or one sample without batching. StopIteration
    once the dataset's iterator is exhausted."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id`` (0 to ``num_workers - 1``), ``num_workers``,
    ``seed`` (this worker's seed: the loader's base seed plus ``id``), ``dataset`` (this process's copy of the
    dataset), ``rng`` (None: process workers seed the global generators) and ``worker_method``
    (``"multiprocessing"``). Immutable, as PyTorch's."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The ``WorkerInfo`` of the DataLoader worker process running the caller (its id, the number of workers,
    its seed and its copy of the dataset), or None in the main process (``torch.utils.data.get_worker_info``).
    An IterableDataset's ``__iter__`` uses it to hand each worker its own share of the data."""
    return _worker_info


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's signal that its copy of an IterableDataset is exhausted."""
    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch: rebuild the fetcher, then acknowledge."""
    seed: object = None


class _KeyErrorMessage(str):
    """KeyError's str() is the repr() of its argument; this keeps a multi-line message readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, as its type and formatted traceback (both pickle, unlike a traceback
    object), to be raised again in the main process (``torch._utils.ExceptionWrapper``). ``where`` names the
    place, e.g. ``"in DataLoader worker process 0"``."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise an exception of the original type whose message is ``"Caught <Type> <where>.\\nOriginal
        Traceback ..."``; a RuntimeError with that message when the type cannot be built from one string."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


_MASK32 = 0xFFFFFFFF


def _numpy_seed_state(base_seed, worker_id):
    """Four 32-bit words seeding NumPy's global generator in worker ``worker_id``: NumPy's SeedSequence hashing
    of ``(worker_id, base_seed)``, so NumPy's stream differs from Python's ``random`` (seeded with the plain
    ``base_seed + worker_id``) and equals the one a PyTorch worker gets."""
    def hasher():
        const = 0x43B0D7E5

        def h(value):
            nonlocal const
            value = (value ^ const) & _MASK32
            const = (const * 0x931E8875) & _MASK32
            value = (value * const) & _MASK32
            return value ^ (value >> 16)
        return h

    def mix(x, y):
        r = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _MASK32
        return r ^ (r >> 16)

    h = hasher()
    pool = [h(v) for v in (worker_id, base_seed & _MASK32, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], h(pool[src]))
    out, const = [], 0x8B51F9DD
    for word in pool:
        word = (word ^ const) & _MASK32
        const = (const * 0x58F38DED) & _MASK32
        word = (word * const) & _MASK32
        out.append(word ^ (word >> 16))
    return out


def _seed_worker(base_seed, worker_id):
    """Seed this process's generators as a PyTorch worker's: tinytorch's and Python's with ``base_seed +
    worker_id``, NumPy's with ``_numpy_seed_state``. Returns the seed."""
    import numpy as np
    from ...random import manual_seed  # every device's generator, as torch.manual_seed
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_numpy_seed_state(base_seed, worker_id))
    return seed


def _parent_alive(parent_pid):
    # once the main process dies, an orphaned worker is re-parented, so its parent pid changes
    return os.getppid() == parent_pid


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers):
    """Body of worker process ``worker_id``: seed, publish ``WorkerInfo``, run ``init_fn(worker_id)``, then
    answer each ``(task_idx, index)`` read from ``index_queue`` with ``(task_idx, batch)`` on ``data_queue``
    (an ``ExceptionWrapper`` when fetching raised; ``_IterableDatasetStopIteration`` once an IterableDataset is
    exhausted). A ``_ResumeIteration`` starts a new epoch (persistent workers); None ends the loop. An
    exception from ``init_fn`` or from building the fetcher is reported as the answer to the first task."""
    global _worker_info
    try:
        from ...backends.cpu import set_num_threads
        parent = os.getppid()
        set_num_threads(1)  # the workers already run in parallel; more threads each would oversubscribe the CPU
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        pending_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            pending_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        # Set once this worker's IterableDataset copy is exhausted: further tasks are skipped (the main process
        # stops sending them and ends this worker with None), so only one end signal is sent.
        exhausted = False
        while _parent_alive(parent):
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                exhausted = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or exhausted:
                continue  # shutting down: drain the queue until the final None
            task_idx, index = task
            if pending_error is not None:
                data, pending_error = pending_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != _DatasetKind.Iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        exhausted = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((task_idx, data))
            del data, task, index  # don't hold the batch while waiting for the next task
    except KeyboardInterrupt:
        pass  # the main process gets the interrupt too and shuts the workers down
    if done_event.is_set():
        # the main process no longer reads: don't block exit flushing results nobody will take
        data_queue.cancel_join_thread()
        data_queue.close()
