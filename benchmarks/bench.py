"""tinytorch vs PyTorch (CPU, same thread count), side by side in one process.

    python benchmarks/bench.py [--quick]

Prints steps/s (or GFLOP/s, or microseconds) for each workload and the ratio tinytorch / torch
(> 1 means tinytorch is faster; for the per-op time, < 1 means tinytorch is faster).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))


def timeit(fn, min_time, warmup=3):
    for _ in range(warmup):
        fn()
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= min_time and n >= 3:
            return n / dt


def best_of(fns, min_time, rounds, warmup=3):
    """Rates of several workloads timed in alternation, the best of ``rounds`` windows each: a shared
    machine's slow spells then hit both sides of a ratio alike instead of one of them."""
    best = {k: 0.0 for k in fns}
    for r in range(rounds):
        for k, fn in fns.items():
            best[k] = max(best[k], timeit(fn, min_time, warmup if r == 0 else 1))
    return best


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def lenet(nn):
    from mnist import build
    return build(nn, "lenet")


def train_step(lib, make, opt_name, shape, classes, seed=0, device=None):
    model = make(lib.nn)
    if device is not None:
        model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if opt_name == "sgd" else \
        lib.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32), device=device)
    y = lib.tensor(rng.integers(0, classes, shape[0]), device=device)

    def step():
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device is not None:
            lib.opencl.synchronize()  # count the queued kernels' time, not just their launch
    return step


def gpt_step(lib):
    """One training step of examples/gpt.py's default model (4 layers, 4 heads, 128-dim, context 64), batch 32."""
    from gpt import build
    lib.manual_seed(0)
    model = build(lib)(65, 64, 4, 4, 128, 0.0)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.integers(0, 65, (32, 64)))
    y = lib.tensor(rng.integers(0, 65, (32, 64)))

    def step():
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="shorter timing windows")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-opencl", action="store_true", help="skip the OpenCL rows")
    args = p.parse_args()
    import torch
    import tinytorch as tt
    torch.set_num_threads(args.threads)
    t = 0.5 if args.quick else 2.0
    rounds = 2 if args.quick else 3
    libs = {"tinytorch": tt, "torch": torch}
    rows = []

    for name, make, opt, shape in (("MLP 784-256-128-10 SGD, batch 128", mlp, "sgd", (128, 784)),
                                   ("MLP 784-256-128-10 Adam, batch 128", mlp, "adam", (128, 784)),
                                   ("LeNet-5 CNN Adam, batch 64", lenet, "adam", (64, 1, 28, 28))):
        r = best_of({k: train_step(lib, make, opt, shape, 10) for k, lib in libs.items()}, t, rounds)
        rows.append((name, "steps/s", r["tinytorch"], r["torch"], r["tinytorch"] / r["torch"]))

    r = best_of({k: gpt_step(lib) for k, lib in libs.items()}, t, rounds, warmup=2)
    rows.append(("GPT 4x128, ctx 64, batch 32 AdamW", "steps/s", r["tinytorch"], r["torch"], r["tinytorch"] / r["torch"]))

    n = 1024
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    mats = {k: (lib.tensor(a), lib.tensor(a)) for k, lib in libs.items()}
    r = best_of({k: (lambda x=x, y=y: x @ y) for k, (x, y) in mats.items()}, t, rounds)
    r = {k: v * 2 * n ** 3 / 1e9 for k, v in r.items()}
    rows.append(("matmul 1024^3 float32", "GFLOP/s", r["tinytorch"], r["torch"], r["tinytorch"] / r["torch"]))

    calls = 2000

    def many(x, y):
        def run():
            for _ in range(calls):
                x + y
        return run
    rates = best_of({k: many(lib.ones(4), lib.ones(4)) for k, lib in libs.items()}, t, rounds)
    r = {k: 1e6 / (rate * calls) for k, rate in rates.items()}
    rows.append(("small op a + b (4 floats)", "us/op", r["tinytorch"], r["torch"], r["tinytorch"] / r["torch"]))

    if tt.opencl.is_available() and not args.no_opencl:
        # the OpenCL backend next to the NumPy backend (ratio: opencl / numpy)
        name = tt.opencl.get_device_name()
        for label, make, opt, shape in (("MLP SGD", mlp, "sgd", (128, 784)), ("LeNet-5 Adam", lenet, "adam", (64, 1, 28, 28))):
            rr = best_of({"cl": train_step(tt, make, opt, shape, 10, device="opencl"),
                          "np": train_step(tt, make, opt, shape, 10)}, t, rounds)
            r_cl, r_np = rr["cl"], rr["np"]
            rows.append((f"opencl {label} (vs numpy backend)", "steps/s", r_cl, r_np, r_cl / r_np))
        x = tt.tensor(a, device="opencl")

        def mm():
            x @ x
            tt.opencl.synchronize()
        g_cl = timeit(mm, t, warmup=1) * 2 * n ** 3 / 1e9
        x = tt.tensor(a)
        g_np = timeit(lambda: x @ x, t) * 2 * n ** 3 / 1e9
        rows.append(("opencl matmul 1024^3 (vs numpy backend)", "GFLOP/s", g_cl, g_np, g_cl / g_np))
        print(f"opencl device: {name}")

    print(f"tinytorch {tt.__version__} vs torch {torch.__version__}, {args.threads} threads, NumPy {np.__version__}")
    print(f"{'workload':44s} {'unit':8s} {'tinytorch':>10s} {'torch':>10s} {'ratio':>7s}")
    for name, unit, a_, b_, ratio in rows:
        print(f"{name:44s} {unit:8s} {a_:10.1f} {b_:10.1f} {ratio:7.2f}")


if __name__ == "__main__":
    main()
