"""Per-layer convolution times, tinytorch vs PyTorch, each library in its own process, alternating.

    python benchmarks/conv_layers.py [--threads 1 2] [--rounds 3] [--min-time 0.3]

The layers are the benchmark models' convolutions (examples/mnist.py's LeNet-5 and CNN) and the issue's 3x3
32->64 layer, batch 64, float32. Each process times, per layer, the forward alone (under no_grad) and the forward
plus the backward of the input and weight gradients (and the bias's), the minimum of several repeats; the table
gives the minimum over rounds of each side and tinytorch / torch (< 1: tinytorch is faster). The machine's load
average is printed with it: on a shared machine the figures are rough.
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

# name, (C_in, C_out, k, padding, H)
LAYERS = [("LeNet conv1 1->6 5x5 p2 28", (1, 6, 5, 2, 28)), ("LeNet conv2 6->16 5x5 14", (6, 16, 5, 0, 14)),
          ("CNN conv1 1->16 5x5 p2 28", (1, 16, 5, 2, 28)), ("CNN conv2 16->32 5x5 p2 14", (16, 32, 5, 2, 14)),
          ("3x3 32->64 p1 28", (32, 64, 3, 1, 28)), ("3x3 32->64 p1 14", (32, 64, 3, 1, 14))]


def best(fn, min_time):
    """The fastest of the calls of ``fn`` made in ``min_time`` seconds (at least 3, after one warm-up), in ms."""
    fn()
    times, t_end = [], time.perf_counter() + min_time
    while time.perf_counter() < t_end or len(times) < 3:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3


def worker(lib_name, threads, min_time, batch):
    """Time every layer with one library (this process imports no other); prints {layer: [fwd ms, f+b ms]} as JSON."""
    if lib_name == "torch":
        import torch as lib
    else:
        import tinytorch as lib
    lib.set_num_threads(threads)
    rng = np.random.default_rng(0)
    out = {}
    for name, (ci, co, k, p, h) in LAYERS:
        x = lib.tensor(rng.standard_normal((batch, ci, h, h)).astype(np.float32), requires_grad=True)
        w = lib.tensor((rng.standard_normal((co, ci, k, k)) * 0.1).astype(np.float32), requires_grad=True)
        b = lib.tensor(rng.standard_normal(co).astype(np.float32), requires_grad=True)
        F = lib.nn.functional
        with lib.no_grad():
            g = lib.ones_like(F.conv2d(x, w, b, padding=p))

        def fwd():
            with lib.no_grad():
                F.conv2d(x, w, b, padding=p)

        def both():
            x.grad = w.grad = b.grad = None
            F.conv2d(x, w, b, padding=p).backward(g)
        out[name] = (best(fwd, min_time), best(both, min_time))
    print("RESULT " + json.dumps(out))


def main():
    """Alternate tinytorch and torch processes for ``--rounds`` rounds per thread count and print the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    alternate.add_arguments(ap, threads=[1, 2], min_time=0.3)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.threads[0], a.min_time, a.batch)
        return
    sides = alternate.sides(a.baseline)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"{'layer':28s} {'thr':>3s} {'tt fwd':>7s} {'th fwd':>7s} {'ratio':>6s} {'tt f+b':>7s} {'th f+b':>7s} "
          f"{'ratio':>6s}" + (f" {'base f+b':>8s}" if a.baseline else ""))
    for t in a.threads:
        res = alternate.rounds(__file__, sides, a.rounds, ["--threads", str(t), "--min-time", str(a.min_time),
                                                            "--batch", str(a.batch)])
        for name, _ in LAYERS:
            m = {k: [min(r[name][i] for r in v) for i in (0, 1)] for k, v in res.items()}
            line = (f"{name:28s} {t:3d} {m['tinytorch'][0]:7.2f} {m['torch'][0]:7.2f} "
                    f"{m['tinytorch'][0] / m['torch'][0]:6.2f} {m['tinytorch'][1]:7.2f} {m['torch'][1]:7.2f} "
                    f"{m['tinytorch'][1] / m['torch'][1]:6.2f}")
            if a.baseline:
                line += f" {m['baseline'][1]:8.2f}"
            print(line, flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
