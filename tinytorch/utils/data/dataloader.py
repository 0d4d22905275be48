"""DataLoader, default_collate, default_convert, get_worker_info."""
import collections
import collections.abc
import copy

import numpy as np

from ..._tensor import Tensor
from .sampler import BatchSampler, RandomSampler, SequentialSampler


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


def get_worker_info():
    """Information about the DataLoader worker process running the caller, or None in the main process.
    tinytorch's DataLoader always loads in the main process, so this is always None (as in PyTorch with
    ``num_workers=0``)."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches (``torch.utils.data.DataLoader``), in the calling process.

    ``shuffle`` uses a RandomSampler driven by ``generator``; ``drop_last`` drops a short final batch.
    Batches are assembled with ``dataset.__getitems__`` when the dataset has one (one fancy-index per
    batch instead of one call per sample), else per sample, then ``collate_fn``. ``num_workers`` is
    accepted for compatibility; loading always happens in the main process.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers, self.generator = num_workers, generator
        # kept for scripts that read them back; batches are loaded in this process, in order
        self.pin_memory, self.pin_memory_device, self.timeout = pin_memory, pin_memory_device, timeout
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.persistent_workers, self.in_order = persistent_workers, in_order
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None or batch_sampler else default_convert)

    def __iter__(self):
        from ..._dtype import int64
        from ..._ops.creation import empty
        # PyTorch's loader iterator draws a base seed (for worker seeding) before the sampler runs; drawing it
        # here too keeps the random stream, and so shuffles, the same as PyTorch's
        self._base_seed = int(empty((), dtype=int64).random_(generator=self.generator).item())
        return self._batches()

    def _batches(self):
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        getitems = getattr(self.dataset, "__getitems__", None)
        for idx in self.batch_sampler:
            if getitems is not None:
                yield self.collate_fn(getitems(idx))
            else:
                yield self.collate_fn([self.dataset[i] for i in idx])

    def __len__(self):
        if self.batch_sampler is None:
            return len(self.sampler)
        return len(self.batch_sampler)
