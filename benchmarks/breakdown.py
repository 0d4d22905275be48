"""Where a tinytorch train step spends its time: inside the backend's kernels, or in the framework around them
(dispatch, autograd, modules, optimizer), next to torch's whole step on the same workload.

    python benchmarks/breakdown.py [--workloads mlp lenet gpt] [--steps N]

Every kernel of the cpu backend is wrapped with a timer for the run, so "kernels" is the wall time the NumPy
code of the kernels took and "framework" is the rest of the step. When "kernels" alone exceeds torch's step,
no framework overhead reduction can reach torch's speed on that workload: the kernels themselves must get
faster.
"""
import argparse
import collections
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))


def _instrument(backend):
    """Wrap every kernel of ``backend`` with a timer; returns (per-kernel [calls, seconds], total [seconds])."""
    per, total = collections.defaultdict(lambda: [0, 0.0]), [0.0]

    def wrap(name, fn):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                dt = time.perf_counter() - t0
                per[name][0] += 1
                per[name][1] += dt
                total[0] += dt
        return timed
    for table, suffix in ((backend.kernels, ""), (backend.inplace_kernels, "_")):
        for k in list(table):
            table[k] = wrap(k + suffix, table[k])
    return per, total


def main():
    import bench
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", nargs="+", default=["mlp", "lenet", "gpt"], choices=["mlp", "lenet", "gpt"])
    p.add_argument("--steps", type=int, default=0, help="timed steps per workload (default: 200 / 30 / 5)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=8, help="kernels to list per workload")
    args = p.parse_args()
    import torch
    import tinytorch as tt
    from tinytorch._dispatch import get_backend
    torch.set_num_threads(args.threads)
    per, total = _instrument(get_backend(tt.device("cpu")))
    make = {"mlp": lambda lib: bench.train_step(lib, bench.mlp, "sgd", (128, 784), 10),
            "lenet": lambda lib: bench.train_step(lib, bench.lenet, "adam", (64, 1, 28, 28), 10),
            "gpt": bench.gpt_step}
    default_steps = {"mlp": 200, "lenet": 30, "gpt": 5}
    print(f"{'workload':8s} {'step ms':>9s} {'kernels':>9s} {'framework':>10s} {'torch step':>11s}")
    details = []
    for w in args.workloads:
        n = args.steps or default_steps[w]
        ours, theirs = make[w](tt), make[w](torch)
        for f in (ours, theirs):
            for _ in range(3):
                f()
        best, ref = None, None
        for _ in range(3):  # the best of three windows for each library, alternating, as bench.py
            per.clear()
            total[0] = 0.0
            t0 = time.perf_counter()
            for _ in range(n):
                ours()
            step = (time.perf_counter() - t0) / n
            t0 = time.perf_counter()
            for _ in range(n):
                theirs()
            r = (time.perf_counter() - t0) / n
            ref = r if ref is None else min(ref, r)
            if best is None or step < best[0]:
                best = (step, total[0] / n, {k: (c / n, s / n) for k, (c, s) in per.items()})
        step, kern, table = best
        print(f"{w:8s} {step * 1e3:9.2f} {kern * 1e3:9.2f} {(step - kern) * 1e3:10.2f} {ref * 1e3:11.2f}")
        details.append((w, table))
    for w, table in details:
        print(f"\n{w}: the slowest kernels (calls per step, ms per step)")
        for k, (c, s) in sorted(table.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"  {k:34s} {c:6.1f} {s * 1e3:9.3f}")


if __name__ == "__main__":
    main()
