"""``tinytorch.utils.data``: Dataset, TensorDataset, Subset, random_split, samplers (DistributedSampler included), DataLoader."""
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info
from .distributed import DistributedSampler
from . import distributed
