"""A small DDP training loop in which one rank fails at step 3, to check the job ends instead of hanging.

argv[1]: ``kill`` (the last rank SIGKILLs itself), ``raise`` (it raises), ``stall`` (it stops taking part and
sleeps; the others must hit the process group's timeout, 3 s here). Prints ``STEP k`` on rank 0 as it goes."""
import datetime
import os
import signal
import sys
import time

import tinytorch as torch
import tinytorch.distributed as dist
from tinytorch import nn
from tinytorch.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
r, n = dist.get_rank(), dist.get_world_size()
model = DDP(nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    if step == 3 and r == n - 1:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif mode == "raise":
            raise RuntimeError("rank failure injected by the test")
        elif mode == "stall":
            time.sleep(60)
    opt.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    opt.step()
    if r == 0:
        print(f"STEP {step}", flush=True)
print("FINISHED", flush=True)
