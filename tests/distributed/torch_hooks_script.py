"""A PyTorch CPU DDP script with communication hooks, as written for ``torchrun`` (gloo): for each hook named on
the command line (none, allreduce, fp16, powersgd) a fresh model trains a few steps and rank 0 prints the averaged
losses. tests/test_distributed.py runs it under real ``torchrun`` and under ``tinytorch.distributed.run -m
tinytorch.run`` and compares. float64 model and NumPy-made weights and data: both frameworks start from the same
numbers."""
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.nn.parallel import DistributedDataParallel as DDP


def train(name, rank, world):
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(32, 24), nn.Tanh(), nn.Linear(24, 4))
    wrng = np.random.default_rng(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(wrng.standard_normal(tuple(p.shape)) * 0.3))
    ddp = DDP(model)
    if name == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif name == "allreduce":
        ddp.register_comm_hook(None, default_hooks.allreduce_hook)
    elif name == "powersgd":
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=2, start_powerSGD_iter=2,
                                            min_compression_rate=1, random_seed=5)
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    x = torch.from_numpy(rng.standard_normal((world * 6 * 16, 32)))
    y = torch.from_numpy(rng.integers(0, 4, world * 6 * 16))
    for step in range(6):
        lo = (step * world + rank) * 16
        loss = F.cross_entropy(ddp(x[lo:lo + 16]), y[lo:lo + 16])
        opt.zero_grad()
        loss.backward()
        opt.step()
        avg = loss.detach().clone()
        dist.all_reduce(avg)
        if rank == 0:
            print(f"LOSS {name} {step} {avg.item() / world:.15e}", flush=True)


def main():
    dist.init_process_group(backend="gloo")
    torch.set_default_dtype(torch.float64)
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        print("FRAMEWORK", torch.__file__, flush=True)
    for name in sys.argv[1:]:
        train(name, rank, world)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
