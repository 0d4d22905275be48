"""Where a tinytorch train step spends its time: inside the backend's kernels, or in the framework around them
(dispatch, autograd, modules, optimizer), next to torch's whole step on the same workload.

    python benchmarks/breakdown.py [--workloads mlp lenet cnn gpt] [--steps N]

Every kernel of the cpu backend is wrapped with a timer for the run, so "kernels" is the wall time the kernels
(native or NumPy) took and "framework" is the rest of the step. When "kernels" alone exceeds torch's step,
no framework overhead reduction can reach torch's speed on that workload: the kernels themselves must get
faster. torch's step is timed in a separate process (one process holding both libraries lets one's idle threads
take the other's cores).
"""
import argparse
import collections
import os
import subprocess
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


def _make(lib, w):
    import bench
    return {"mlp": lambda: bench.train_step(lib, bench.mlp, "sgd", (128, 784), 10),
            "lenet": lambda: bench.train_step(lib, bench.lenet, "adam", (64, 1, 28, 28), 10),
            "cnn": lambda: bench.train_step(lib, bench.cnn, "adam", (64, 1, 28, 28), 10),
            "gpt": lambda: bench.gpt_step(lib)}[w]()


def _best_step(f, n, rounds=3):
    for _ in range(3):
        f()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def _torch_step(w, n, threads):
    """torch's step time for workload ``w``, measured in a child process that imports torch only."""
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-step", w, "--steps", str(n),
                          "--threads", str(threads)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", nargs="+", default=["mlp", "lenet", "gpt"], choices=["mlp", "lenet", "cnn", "gpt"])
    p.add_argument("--steps", type=int, default=0, help="timed steps per workload (default: 200 / 30 / 5)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=8, help="kernels to list per workload")
    p.add_argument("--torch-step", help=argparse.SUPPRESS)
    args = p.parse_args()
    default_steps = {"mlp": 200, "lenet": 30, "cnn": 10, "gpt": 5}
    if args.torch_step:
        import torch
        torch.set_num_threads(args.threads)
        print(_best_step(_make(torch, args.torch_step), args.steps or default_steps[args.torch_step]))
        return
    import tinytorch as tt
    from tinytorch._dispatch import get_backend
    tt.set_num_threads(args.threads)
    per, total = _instrument(get_backend(tt.device("cpu")))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.threads} threads; native kernels "
          f"{'on' if tt.backends.cpu.native._C is not None else 'off'}")
    print(f"{'workload':8s} {'step ms':>9s} {'kernels':>9s} {'framework':>10s} {'torch step':>11s}")
    details = []
    for w in args.workloads:
        n = args.steps or default_steps[w]
        ours = _make(tt, w)
        for _ in range(3):
            ours()
        best = None
        for _ in range(3):
            per.clear()
            total[0] = 0.0
            t0 = time.perf_counter()
            for _ in range(n):
                ours()
            step = (time.perf_counter() - t0) / n
            if best is None or step < best[0]:
                best = (step, total[0] / n, {k: (c / n, s / n) for k, (c, s) in per.items()})
        ref = _torch_step(w, n, args.threads)
        step, kern, table = best
        print(f"{w:8s} {step * 1e3:9.2f} {kern * 1e3:9.2f} {(step - kern) * 1e3:10.2f} {ref * 1e3:11.2f}")
        details.append((w, table))
    for w, table in details:
        print(f"\n{w}: the slowest kernels (calls per step, ms per step)")
        for k, (c, s) in sorted(table.items(), key=lambda kv: -kv[1][1])[:args.top]:
            print(f"  {k:34s} {c:6.1f} {s * 1e3:9.3f}")


if __name__ == "__main__":
    main()
