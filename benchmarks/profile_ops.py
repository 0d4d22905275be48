"""Where a train step spends its time: per-kernel totals of one of the benchmark workloads.

    python benchmarks/profile_ops.py gpt              # mlp | mlp-adam | lenet | gpt
    python benchmarks/profile_ops.py mlp --device opencl --steps 50

Every kernel the device's backend registered is wrapped with a timer; on devices that run kernels
asynchronously (opencl) each call is followed by a synchronize, so the figures are launch + device time.
Prints the step time, the time inside kernels, the number of kernel calls per step, and the top kernels.
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench  # noqa: E402
import tinytorch as tt  # noqa: E402
from tinytorch.device import get_backend  # noqa: E402


def instrument(device, totals, counts):
    backend = get_backend(tt.device(device))
    sync = (lambda: tt.opencl.synchronize()) if tt.device(device).type == "opencl" else (lambda: None)
    for table, prefix in ((backend.kernels, ""), (backend.inplace_kernels, "inplace ")):
        for name, kern in list(table.items()):
            def timed(*a, _k=kern, _n=prefix + name, **kw):
                t = time.perf_counter()
                r = _k(*a, **kw)
                sync()
                totals[_n] += time.perf_counter() - t
                counts[_n] += 1
                return r
            table[name] = timed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("workload", choices=["mlp", "mlp-adam", "lenet", "gpt"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args()
    if args.workload == "gpt":
        step = bench.gpt_step(tt) if args.device == "cpu" else None
        if step is None:
            raise SystemExit("the gpt workload runs on cpu only")
    else:
        make, opt, shape = {"mlp": (bench.mlp, "sgd", (128, 784)), "mlp-adam": (bench.mlp, "adam", (128, 784)),
                            "lenet": (bench.lenet, "adam", (64, 1, 28, 28))}[args.workload]
        step = bench.train_step(tt, make, opt, shape, 10, device=args.device)
    totals, counts = collections.Counter(), collections.Counter()
    for _ in range(2):
        step()
    instrument(args.device, totals, counts)
    step()  # warm the wrappers
    totals.clear()
    counts.clear()
    n = args.steps or (5 if args.workload in ("gpt", "lenet") else 50)
    t = time.perf_counter()
    for _ in range(n):
        step()
    if args.device.startswith("opencl"):
        tt.opencl.synchronize()
    total = (time.perf_counter() - t) / n * 1e3
    print(f"{args.workload} on {args.device}: step {total:.2f} ms, in kernels {sum(totals.values()) / n * 1e3:.2f} ms, "
          f"{sum(counts.values()) / n:.0f} kernel calls per step")
    for name, v in totals.most_common(args.top):
        print(f"  {name:36s} {v / n * 1e3:8.3f} ms  x{counts[name] / n:.0f}")


if __name__ == "__main__":
    main()
