"""Prints (rank 0, one JSON line: a list by rank) torchrun's environment variables as each rank sees them, before and
after ``init_process_group``, with the process group's rank and size and the native thread count."""
import json
import os
import sys

NAMES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
         "OMP_NUM_THREADS", "TORCHELASTIC_RUN_ID")
before = {k: os.environ.get(k) for k in NAMES}
import tinytorch as torch  # noqa: E402
import tinytorch.distributed as dist  # noqa: E402

seen = {k: os.environ.get(k) for k in NAMES}
dist.init_process_group("gloo")
mine = {"before_import": before, "env": seen, "rank": dist.get_rank(), "world": dist.get_world_size(),
        "threads": torch.get_num_threads(), "argv": sys.argv[1:], "torchelastic": dist.is_torchelastic_launched()}
every = [None] * dist.get_world_size()
dist.all_gather_object(every, mine)
if dist.get_rank() == 0:  # one line from one rank: the ranks' outputs may interleave
    print("ENVS " + json.dumps(every), flush=True)
dist.destroy_process_group()
