"""Per-call cost of small eager ops (the framework's overhead, not the kernels'): best of 5 loops of N calls each,
in microseconds per call, with the load average printed beside them. Compare two checkouts by running this file
under each, alternating A B A B in separate processes, on a quiet machine:

    PYTHONPATH=<checkout> python benchmarks/dispatch_overhead.py
"""
import os
import time

import tinytorch as tt


def per_call_us(f, n=20000, rounds=5):
    """Best of ``rounds`` loops of ``n`` calls of ``f``, in microseconds per call."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main():
    a, b, x = tt.ones(8), tt.ones(8), tt.ones(64, 64)
    w = tt.ones(64, 64, requires_grad=True)
    cases = {
        "a+b": lambda: a + b,
        "tt.add": lambda: tt.add(a, b),
        "x.sum(0)": lambda: x.sum(0),
        "tt.softmax": lambda: tt.softmax(x, 1),
        "F.relu": lambda: tt.nn.functional.relu(x),
        "mm+sum+backward": lambda: (x @ w).sum().backward(),
    }
    print(f"load average {os.getloadavg()[0]:.2f} (tinytorch from {os.path.dirname(tt.__file__)})")
    print(" ".join(f"{k}={per_call_us(f, 2000 if 'backward' in k else 20000):.2f}us" for k, f in cases.items()))


if __name__ == "__main__":
    main()
