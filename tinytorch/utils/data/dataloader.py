"""DataLoader, default_collate, default_convert, get_worker_info."""
import collections.abc
import numbers

import numpy as np

from ..._tensor import Tensor
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def default_collate(batch):
    """Stack a list of samples: tensors -> stacked tensor, numbers -> tensor, tuples/dicts recursively."""
    from ..._ops.creation import tensor
    from ..._ops.shape import stack
    if hasattr(batch, "stacked"):  # a dataset's __getitems__ already built the batch
        return batch.stacked
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray):
        return tensor(np.stack(batch))
    if isinstance(elem, (bool, np.bool_)):
        return tensor(batch)
    if isinstance(elem, numbers.Number):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        out = [default_collate(list(s)) for s in zip(*batch)]
        return tuple(out) if isinstance(elem, tuple) else out
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
                    f"{type(elem)}")


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
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                             "drop_last")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.num_workers, self.generator = num_workers, generator
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        self.sampler = sampler
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None or batch_sampler else default_convert)

    def __iter__(self):
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
