"""Data-parallel scaling of the MNIST CNN (examples/mnist.py's ``cnn``): samples/s with 1 rank x 1 thread and with
2 ranks x 1 thread, for tinytorch (DDP on MPI, launched by ``tinytorch.distributed.run``) and, as the anchor
measured in the same run, real PyTorch (DDP on gloo, launched by ``torchrun``).

    python benchmarks/ddp.py [--steps 50] [--warmup 5] [--batch-size 64] [--frameworks tinytorch torch] [--fp16]

``--fp16`` adds a 2-rank row per framework with DDP's ``fp16_compress_hook`` (gradients all-reduced in float16,
PyTorch's ``ddp_comm_hooks.default_hooks``).

Every configuration runs in its own processes. The batch size is per rank (the global batch doubles with 2
ranks, as in a DDP run), the data synthetic (timing only). Besides samples/s, each 2-rank run reports the share
of the gradient all-reduce hidden behind backward:

    hidden = 1 - (t_step - t_step_no_sync) / t_allreduce

where t_step is a DDP step, t_step_no_sync the same step inside ``no_sync()`` (no communication) and t_allreduce
a blocking all-reduce of all the gradients at once (what the step would pay if nothing overlapped). Clipped to
[0, 1]. Run it on a quiet machine: the two ranks need a core each.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _cnn(nn):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from mnist import build
    return build(nn, "cnn")


def worker(args):
    """One rank (or the only process): time ``args.steps`` train steps; rank 0 prints one ``RESULT`` JSON line."""
    import numpy as np
    if args.framework == "torch":
        import torch
    else:
        import tinytorch as torch
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dist = None
    if world > 1:
        dist = torch.distributed
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dist else 0
    torch.manual_seed(0)
    net = _cnn(torch.nn)
    model = torch.nn.parallel.DistributedDataParallel(net) if dist else net
    if dist and args.hook == "fp16":
        from importlib import import_module
        hooks = import_module(torch.__name__ + ".distributed.algorithms.ddp_comm_hooks.default_hooks")
        model.register_comm_hook(None, hooks.fp16_compress_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    x = torch.from_numpy(rng.standard_normal((args.batch_size, 1, 28, 28)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, 10, args.batch_size))
    F = torch.nn.functional

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    def timed(fn, n):
        for _ in range(args.warmup):
            fn()
        if dist:
            dist.barrier()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if dist:
            dist.barrier()
        return (time.perf_counter() - t0) / n

    t_step = timed(step, args.steps)
    result = {"framework": args.framework, "hook": args.hook, "ranks": world, "threads": 1, "batch_per_rank": args.batch_size,
              "step_s": t_step, "samples_per_s": world * args.batch_size / t_step}
    if dist:
        def step_no_sync():
            with model.no_sync():
                step()
        t_local = timed(step_no_sync, args.steps)
        flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
        t_ar = timed(lambda: dist.all_reduce(flat), args.steps)
        hidden = 1 - (t_step - t_local) / t_ar if t_ar > 0 else float("nan")
        result.update(step_no_sync_s=t_local, allreduce_s=t_ar, hidden_share=min(1.0, max(0.0, hidden)))
        dist.destroy_process_group()
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


def _launch(framework, ranks, args, hook="none"):
    me = [os.path.abspath(__file__), "--worker", "--framework", framework, "--steps", str(args.steps),
          "--warmup", str(args.warmup), "--batch-size", str(args.batch_size), "--hook", hook]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if ranks == 1:
        cmd = [sys.executable] + me
    elif framework == "torch":
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks)] + me
    else:
        cmd = [sys.executable, "-m", "tinytorch.distributed.run", "--nproc-per-node", str(ranks)] + me
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{framework} x{ranks} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--frameworks", nargs="+", default=["tinytorch", "torch"])
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--json", action="store_true", help="print the results as one JSON line too")
    p.add_argument("--fp16", action="store_true", help="add 2-rank runs with the fp16_compress_hook")
    p.add_argument("--hook", default="none", choices=["none", "fp16"], help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--framework", default="tinytorch", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    rows = []
    print(f"MNIST CNN, batch {args.batch_size} per rank, {args.steps} timed steps, 1 thread per rank")
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'framework':<10} {'hook':<5} {'ranks':>5} {'samples/s':>10} {'speedup':>8} {'all-reduce hidden':>18}")
    for fw in args.frameworks:
        one = _launch(fw, 1, args)
        rows.append(one)
        print(f"{fw:<10} {'-':<5} {1:>5} {one['samples_per_s']:>10.1f} {1.0:>7.2f}x {'':>18}")
        for hook in (["none", "fp16"] if args.fp16 else ["none"]):
            two = _launch(fw, 2, args, hook)
            rows.append(two)
            print(f"{fw:<10} {hook:<5} {2:>5} {two['samples_per_s']:>10.1f} "
                  f"{two['samples_per_s'] / one['samples_per_s']:>7.2f}x {two['hidden_share'] * 100:>17.0f}%")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
