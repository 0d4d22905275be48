"""Matrix products at the shapes of the benchmark models' train steps, tinytorch vs PyTorch, each library in its own
process, alternating.

    python benchmarks/gemm_shapes.py [--threads 1 2] [--rounds 3] [--baseline DIR]

The shapes are the MLP's (784-256-128-10, batch 128: the forward x @ W^T, the weight gradient dy^T @ x and the
input gradient dy @ W), the GPT's (tokens 2048, width 128: qkv, the first MLP layer and their weight gradients)
and two squares. Each process times every product with ``matmul`` on float32 views laid out as the train step
has them (a transposed factor is a transposed view, not a copy), the minimum over repeats; the table gives the
minimum over rounds of each side in microseconds, GFLOP/s and tinytorch / torch (< 1: tinytorch is faster), with
the machine's load average (on a shared machine the figures are rough). ``--baseline DIR`` adds tinytorch
imported from another checkout.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

if "PYTHONPATH" not in os.environ:  # this checkout's tinytorch (--baseline's processes set their own)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alternate  # noqa: E402

# name, (m, k, n), left factor transposed, right factor transposed
SHAPES = [("MLP x @ W1^T", (128, 784, 256), False, True), ("MLP dW1 = dy^T @ x", (256, 128, 784), True, False),
          ("MLP h1 @ W2^T", (128, 256, 128), False, True), ("MLP dW2 = dy^T @ h1", (128, 128, 256), True, False),
          ("MLP dh1 = dy @ W2", (128, 128, 256), False, False),
          ("GPT qkv x @ W^T", (2048, 128, 384), False, True), ("GPT fc1 x @ W^T", (2048, 128, 512), False, True),
          ("GPT dW fc1 = dy^T @ x", (512, 2048, 128), True, False), ("GPT head x @ W^T", (2048, 128, 65), False, True),
          ("square 512", (512, 512, 512), False, False), ("square 1024", (1024, 1024, 1024), False, False)]


def worker(lib_name, threads, min_time):
    """Time every product with one library (this process imports no other); prints {name: us} as JSON."""
    if lib_name == "torch":
        import torch as lib
    else:
        import tinytorch as lib
    lib.set_num_threads(threads)
    rng = np.random.default_rng(0)
    out = {}
    for name, (m, k, n), ta, tb in SHAPES:
        a = lib.tensor(rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32))
        b = lib.tensor(rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32))
        a, b = (a.t() if ta else a), (b.t() if tb else b)
        lib.matmul(a, b)
        times, t_end = [], time.perf_counter() + min_time
        while time.perf_counter() < t_end or len(times) < 5:
            t0 = time.perf_counter()
            lib.matmul(a, b)
            times.append(time.perf_counter() - t0)
        out[name] = min(times) * 1e6
    print("RESULT " + json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    alternate.add_arguments(ap, threads=[2], min_time=0.2)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.threads[0], a.min_time)
        return
    which = alternate.sides(a.baseline)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    head = "".join(f" {k + ' us':>13s} {'GFLOP/s':>7s}" for k, _, _ in which)
    print(f"{'product (m x k x n)':40s} {'thr':>3s}{head} {'tt/torch':>8s}")
    for t in a.threads:
        res = alternate.rounds(__file__, which, a.rounds, ["--threads", str(t), "--min-time", str(a.min_time)])
        for name, (m, k, n), _, _ in SHAPES:
            us = {key: min(r[name] for r in v) for key, v in res.items()}
            cells = "".join(f" {us[key]:13.1f} {2 * m * k * n / us[key] / 1e3:7.1f}" for key, _, _ in which)
            label = f"{name} ({m}x{k}x{n})"
            print(f"{label:40s} {t:3d}{cells} {us['tinytorch'] / us['torch']:8.2f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
