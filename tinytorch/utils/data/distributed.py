"""``DistributedSampler``: each of ``num_replicas`` processes reads its own 1/num_replicas of a dataset."""
import math

from .sampler import Sampler


class DistributedSampler(Sampler):
    """Restricts loading to the subset of indices that belongs to process ``rank`` of ``num_replicas``
    (``torch.utils.data.distributed.DistributedSampler``): the (optionally shuffled, with ``seed + epoch``)
    index list is padded by wrapping around to a multiple of num_replicas, or cut down with ``drop_last``, and
    rank r takes indices r, r + num_replicas, ... Call ``set_epoch`` each epoch for a new shuffle.

    ``num_replicas`` and ``rank`` default to the default process group's world size and rank (ValueError, as
    PyTorch's, when no process group is initialized; RuntimeError when the distributed package is unavailable);
    ValueError when rank is outside [0, num_replicas - 1]."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from ... import distributed as dist
        if num_replicas is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size()
        if rank is None:
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ..._ops.generator import Generator
            from ..._ops.random import randperm
            g = Generator()
            g.manual_seed(self.seed + self.epoch)  # the same permutation on every rank
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which seeds the shuffle (seed + epoch)."""
        self.epoch = epoch
