"""``tinytorch.utils.data``: Dataset, TensorDataset, Subset, random_split, samplers, DataLoader."""
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler
from .dataloader import DataLoader, default_collate
