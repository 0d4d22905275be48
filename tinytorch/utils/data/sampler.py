"""Samplers: sequential, random (with a Generator), subset-random, weighted-random, batch."""
from typing import Generic, TypeVar

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """The base of samplers: ``__iter__`` yields dataset indices (or batches of them). Generic in what it yields,
    as PyTorch's (``Sampler[int]``, ``Sampler[list[int]]``)."""
    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices of ``data_source`` in random order (``torch.utils.data.RandomSampler``): a fresh permutation per
    pass (``num_samples`` may exceed the length: whole permutations, then the head of one more), or, with
    ``replacement=True``, ``num_samples`` independent uniform draws.

    Iteration is lazy and draws exactly what PyTorch draws, in PyTorch's order: without a ``generator``, a
    fresh one seeded from the default generator when iteration starts (the first ``next``); with replacement,
    ``randint(high=n, size=(32,))`` 32 at a time, then one ``randint`` of the remainder (drawn even when
    empty); without, one ``randperm(n)`` per pass. So the indices equal PyTorch's after the same seed, and a
    sampler of ``num_samples=10**10`` costs memory for 32 indices, not for all of them.

    TypeError when ``replacement`` is not a bool, ValueError when ``num_samples`` is not a positive int, as
    PyTorch."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # the dataset's size may change between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ..._dtype import int64
        from ..._ops.creation import empty
        from ..._ops.generator import Generator
        from ..._ops.random import randint, randperm
        n = len(self.data_source)
        gen = self.generator
        if gen is None:  # as PyTorch: a fresh generator seeded from the default one, per epoch
            gen = Generator().manual_seed(int(empty((), dtype=int64).random_().item()))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=gen).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64, generator=gen).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=gen).tolist()
            yield from randperm(n, generator=gen).tolist()[:self.num_samples % n]  # drawn even when empty

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        from ..._ops.random import randperm
        # a generator, as PyTorch's: the permutation is drawn at the first next(), not at iter()
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn from ``[0, len(weights))`` with probabilities proportional to ``weights``
    (``torch.utils.data.WeightedRandomSampler``), with or without replacement, through ``multinomial``.

    weights: a 1-D sequence or tensor of non-negative numbers. ValueError for a non-positive ``num_samples``,
    a non-bool ``replacement`` or weights that are not 1-D, as PyTorch.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        from ..._ops.creation import as_tensor
        from ... import _dtype
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = as_tensor(weights, dtype=_dtype.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = w, num_samples, replacement, generator

    def __iter__(self):
        from ..._ops.random import multinomial
        # drawn at the first next(), not at iter(), as PyTorch's (the DataLoader draws its base seed in between)
        yield from multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups indices from ``sampler`` into lists of ``batch_size`` (last one dropped with ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
