"""A plain PyTorch CPU DDP training script, as written for ``torchrun`` (gloo). tests/test_distributed.py runs it
under real ``torchrun`` and under ``tinytorch.distributed.run -m tinytorch.run`` (the import swap) and compares
the losses rank 0 prints. Weights and data come from NumPy so that both frameworks start from the same numbers."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])
    if rank == 0:
        print("FRAMEWORK", torch.__file__, flush=True)
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((96, 1, 8, 8)))
    y = torch.from_numpy(rng.integers(0, 4, 96))
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 4))
    wrng = np.random.default_rng(1 + rank)  # different per rank: DDP's broadcast from rank 0 must fix it
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(wrng.standard_normal(tuple(p.shape)) * 0.3))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    sampler = DistributedSampler(TensorDataset(x, y), shuffle=True, seed=3)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for step, (xb, yb) in enumerate(loader):
            loss = F.cross_entropy(ddp(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            avg = loss.detach().clone()
            dist.all_reduce(avg, op=dist.ReduceOp.SUM)
            if rank == 0:
                print(f"LOSS {epoch} {step} {avg.item() / world:.12e}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
