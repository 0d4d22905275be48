"""Samplers: sequential, random (with a Generator), subset-random, weighted-random, batch."""


class Sampler:
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
    """A random permutation per epoch (or ``num_samples`` draws with replacement)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ..._dtype import int64
        from ..._ops.creation import Generator, empty, randint, randperm
        n = len(self.data_source)
        gen = self.generator
        if gen is None:  # as PyTorch: a fresh generator seeded from the default one, per epoch
            gen = Generator().manual_seed(int(empty((), dtype=int64).random_().item()))
        if self.replacement:
            return iter(randint(0, n, (self.num_samples,), generator=gen).tolist())
        idx = []
        for _ in range(self.num_samples // n):
            idx += randperm(n, generator=gen).tolist()
        idx += randperm(n, generator=gen).tolist()[:self.num_samples % n]  # drawn even when empty, as PyTorch
        return iter(idx)

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        from ..._ops.creation import randperm
        return (self.indices[i] for i in randperm(len(self.indices), generator=self.generator).tolist())

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
        from ..._ops.creation import multinomial
        return iter(multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator).tolist())

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
