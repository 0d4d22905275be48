"""tinytorch vs PyTorch (CPU, same thread count), each library in its own process.

    python benchmarks/bench.py [--quick] [--threads N] [--rounds R] [--numpy] [--busy]

Runs every workload in a fresh process per library, alternating tinytorch, torch, tinytorch, torch, ... for
``--rounds`` rounds, and prints the median rate of each side and the median of the per-round ratios
tinytorch / torch (> 1 means tinytorch is faster; for the per-op time, < 1 means tinytorch is faster) with their
range (lowest-highest round: rounds run minutes apart, and the machine drifts between them). One process
holding both libraries would let one's idle BLAS/OpenMP threads spin on the cores the other is timed on.

``--numpy`` adds tinytorch with its NumPy kernels only (``TINYTORCH_NATIVE=0``) as a third process per round,
``--baseline DIR`` tinytorch imported from another checkout (a before/after comparison; ratios are against torch);
``--busy`` keeps one core busy with a spinning process while measuring (to show how the threads degrade when the
machine is shared). The load average is printed with the table: measure on a quiet machine (load < 0.5).

``--compile`` adds compiled tinytorch (``tinytorch.compile`` of the whole training step, the default mode and
``mode="reduce-overhead"``) against *eager* PyTorch, a small MLP's inference at batch 1, and each workload's
compile time: cold (round 1, an empty kernel cache) and warm (later rounds, a new process reusing the disk cache).
``--inductor`` adds real ``torch.compile`` (Inductor) on the same steps, when it runs here.
"""
import argparse
import json
import os
import statistics
import subprocess
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


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def lenet(nn):
    from mnist import build
    return build(nn, "lenet")


def cnn(nn):
    """examples/mnist.py's default model: 5x5 convolutions 1->16 (28x28) and 16->32 (14x14), then 1568-128-10."""
    from mnist import build
    return build(nn, "cnn")


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
            # count the queued kernels' time, not just their launch (lib.opencl / lib.cuda .synchronize)
            getattr(lib, str(device).split(":")[0]).synchronize()
    return step


def gpt_step(lib, device=None):
    """One training step of examples/gpt.py's default model (4 layers, 4 heads, 128-dim, context 64), batch 32;
    on ``device`` (synchronized at the end of the step) when given."""
    from gpt import build
    lib.manual_seed(0)
    model = build(lib)(65, 64, 4, 4, 128, 0.0)
    if device is not None:
        model.to(device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.integers(0, 65, (32, 64)), device=device)
    y = lib.tensor(rng.integers(0, 65, (32, 64)), device=device)

    def step():
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if device is not None:
            getattr(lib, str(device).split(":")[0]).synchronize()
    return step


WORKLOADS = ["MLP 784-256-128-10 SGD, batch 128", "MLP 784-256-128-10 Adam, batch 128", "LeNet-5 CNN Adam, batch 64",
             "GPT 4x128, ctx 64, batch 32 AdamW", "matmul 1024^3 float32", "small op a + b (4 floats)",
             "MNIST CNN 16/32 Adam, batch 64"]
UNITS = ["steps/s"] * 4 + ["GFLOP/s", "us/op", "steps/s"]


def infer_step(lib, batch=1, seed=0):
    """A small MLP's inference at ``batch`` rows (overhead-bound: microseconds of arithmetic per call)."""
    lib.manual_seed(seed)
    model = lib.nn.Sequential(lib.nn.Linear(64, 128), lib.nn.ReLU(), lib.nn.Linear(128, 10)).eval()
    x = lib.tensor(np.random.default_rng(seed).standard_normal((batch, 64)).astype(np.float32))

    def step(inp=x):
        with lib.no_grad():
            return model(inp)
    return step, x


def _compiled_rows(lib, out, min_time, modes, opencl):
    """Compiled tinytorch (or Inductor, for torch) on the training workloads; the first calls' time is the compile
    time (with the reduce-overhead mode: until the replay starts)."""
    makers = [(WORKLOADS[0], lambda: train_step(lib, mlp, "sgd", (128, 784), 10)),
              (WORKLOADS[1], lambda: train_step(lib, mlp, "adam", (128, 784), 10)),
              (WORKLOADS[2], lambda: train_step(lib, lenet, "adam", (64, 1, 28, 28), 10)),
              (WORKLOADS[3], lambda: gpt_step(lib))]
    if opencl and hasattr(lib, "opencl") and lib.opencl.is_available():
        makers.append(("opencl MLP SGD", lambda: train_step(lib, mlp, "sgd", (128, 784), 10, device="opencl")))
    for mode in modes:
        for name, make in makers:
            fn = lib.compile(make(), mode=mode)
            if name.startswith("opencl"):
                # a replay skips the step's own synchronize(): wait for the queued kernels outside it
                fn = (lambda f: lambda: (f(), lib.opencl.synchronize()))(fn)
            try:
                t0 = time.perf_counter()
                for _ in range(3):
                    fn()
                out[f"compile time {mode or 'default'}: {name}"] = time.perf_counter() - t0
                out[f"{mode or 'default'}: {name}"] = timeit(fn, min_time, warmup=1)
            except Exception as e:  # noqa: BLE001 - Inductor may not run on this machine: say so in the table
                out[f"{mode or 'default'}: {name}"] = f"error: {type(e).__name__}: {str(e)[:80]}"
        step, x = infer_step(lib)
        fn = lib.compile(step, mode=mode)
        try:
            out[f"{mode or 'default'}: MLP 64-128-10 inference, batch 1"] = timeit(lambda: fn(x), min_time)
        except Exception as e:  # noqa: BLE001
            out[f"{mode or 'default'}: MLP 64-128-10 inference, batch 1"] = f"error: {type(e).__name__}"


def worker(lib_name, threads, min_time, opencl, compiled=False, inductor=False):
    """Time every workload with one library (this process imports no other) and print the rates as JSON."""
    if lib_name == "torch":
        import torch as lib
    else:
        import tinytorch as lib
    lib.set_num_threads(threads)
    out = {}
    for name, make, opt, shape in ((WORKLOADS[0], mlp, "sgd", (128, 784)), (WORKLOADS[1], mlp, "adam", (128, 784)),
                                   (WORKLOADS[2], lenet, "adam", (64, 1, 28, 28))):
        out[name] = timeit(train_step(lib, make, opt, shape, 10), min_time)
    out[WORKLOADS[3]] = timeit(gpt_step(lib), min_time, warmup=2)
    n = 1024
    a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
    x, y = lib.tensor(a), lib.tensor(a)
    out[WORKLOADS[4]] = timeit(lambda: x @ y, min_time) * 2 * n ** 3 / 1e9
    calls = 2000
    p, q = lib.ones(4), lib.ones(4)

    def many():
        for _ in range(calls):
            p + q
    out[WORKLOADS[5]] = 1e6 / (timeit(many, min_time) * calls)
    # the CNN row (examples/mnist.py's default model), after the older rows so their order is unchanged
    out[WORKLOADS[6]] = timeit(train_step(lib, cnn, "adam", (64, 1, 28, 28), 10), min_time)
    if opencl and lib_name == "tinytorch" and lib.opencl.is_available():
        # the OpenCL backend next to the cpu backend (ratio: opencl / cpu)
        for label, make, opt, shape in (("MLP SGD", mlp, "sgd", (128, 784)), ("LeNet-5 Adam", lenet, "adam", (64, 1, 28, 28))):
            out[f"opencl {label}"] = timeit(train_step(lib, make, opt, shape, 10, device="opencl"), min_time)
    if compiled:
        step, x = infer_step(lib)
        out["eager: MLP 64-128-10 inference, batch 1"] = timeit(lambda: step(x), min_time)
        if opencl and lib_name == "tinytorch" and lib.opencl.is_available():
            out["eager: opencl MLP SGD"] = timeit(train_step(lib, mlp, "sgd", (128, 784), 10, device="opencl"),
                                                  min_time)
        if lib_name == "tinytorch":
            _compiled_rows(lib, out, min_time, [None, "reduce-overhead"], opencl)
        elif inductor:
            _compiled_rows(lib, out, min_time, [None], False)
    print("RESULT " + json.dumps(out))


def run_worker(lib_name, args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib_name, "--threads", str(args.threads),
           "--min-time", str(args.min_time)] + (["--opencl"] if args.opencl else []) + \
        (["--compile"] if args.compile else []) + (["--inductor"] if args.inductor else [])
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="shorter timing windows, 3 rounds")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 5, --quick 3)")
    p.add_argument("--min-time", type=float, default=None, help="seconds per workload and process")
    p.add_argument("--numpy", action="store_true", help="add tinytorch with TINYTORCH_NATIVE=0")
    p.add_argument("--busy", action="store_true", help="keep one core busy with a spinning process")
    p.add_argument("--baseline", metavar="DIR", help="add tinytorch imported from another checkout (before/after)")
    p.add_argument("--opencl", action="store_true", help="add the OpenCL backend's rows (vs the cpu backend)")
    p.add_argument("--compile", action="store_true", help="add compiled tinytorch vs eager torch, compile times")
    p.add_argument("--inductor", action="store_true", help="with --compile: add torch.compile (Inductor)")
    p.add_argument("--worker", choices=["tinytorch", "torch"], help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.min_time is None:
        args.min_time = 0.5 if args.quick else 1.5
    if args.worker:
        worker(args.worker, args.threads, args.min_time, args.opencl, args.compile, args.inductor)
        return
    if args.compile and "TINYTORCH_CACHE_DIR" not in os.environ:
        import tempfile
        # an empty kernel cache: round 1 compiles cold, later rounds (new processes) reuse the disk cache
        os.environ["TINYTORCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="tinytorch-bench-cache-")
    rounds = args.rounds or (3 if args.quick else 5)
    sides = [("tinytorch", None), ("torch", None)] + ([("numpy", {"TINYTORCH_NATIVE": "0"})] if args.numpy else []) + \
        ([("baseline", {"PYTHONPATH": os.path.abspath(args.baseline)})] if args.baseline else [])
    load_before = os.getloadavg()[0]
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        results = {k: [] for k, _ in sides}
        for _ in range(rounds):
            for key, env in sides:
                results[key].append(run_worker("torch" if key == "torch" else "tinytorch", args, env))
    finally:
        if busy is not None:
            busy.kill()
    load_after = os.getloadavg()[0]
    import tinytorch as tt
    print(f"tinytorch {tt.__version__} (native kernels: {'on' if tt.backends.cpu.native._C is not None else 'off'}), "
          f"{args.threads} threads, {rounds} rounds alternating in separate processes, NumPy {np.__version__}"
          f"{', one core kept busy' if args.busy else ''}")
    print(f"load average before {load_before:.2f}, after {load_after:.2f}")
    hdr = f"{'workload':44s} {'unit':8s} {'tinytorch':>10s} {'torch':>10s} {'ratio':>7s} {'range':>11s}"
    if args.numpy:
        hdr += f" {'numpy-only':>10s} {'ratio':>7s}"
    if args.baseline:
        hdr += f" {'baseline':>10s} {'ratio':>7s}"
    print(hdr)
    for name, unit in zip(WORKLOADS, UNITS):
        med = {k: statistics.median(r[name] for r in v) for k, v in results.items()}
        # the median of per-round ratios: each round's two processes ran back to back under the same conditions
        per_round = [a[name] / b[name] for a, b in zip(results["tinytorch"], results["torch"])]
        ratio = statistics.median(per_round)
        # the spread of the per-round ratios: the machine drifts between rounds by more than many differences
        spread = f"{min(per_round):.2f}-{max(per_round):.2f}"
        line = f"{name:44s} {unit:8s} {med['tinytorch']:10.1f} {med['torch']:10.1f} {ratio:7.2f} {spread:>11s}"
        if args.numpy:
            rn = statistics.median(a[name] / b[name] for a, b in zip(results["numpy"], results["torch"]))
            line += f" {med['numpy']:10.1f} {rn:7.2f}"
        if args.baseline:
            rb = statistics.median(a[name] / b[name] for a, b in zip(results["baseline"], results["torch"]))
            line += f" {med['baseline']:10.1f} {rb:7.2f}"
        print(line)
    if args.compile:
        _print_compiled(results)
    extra = sorted(k for k in results["tinytorch"][0] if k.startswith("opencl "))
    for name in extra:
        cl = statistics.median(r[name] for r in results["tinytorch"])
        base = {"opencl MLP SGD": WORKLOADS[0], "opencl LeNet-5 Adam": WORKLOADS[2]}[name]
        cpu = statistics.median(r[base] for r in results["tinytorch"])
        print(f"{name + ' (vs cpu backend)':44s} {'steps/s':8s} {cl:10.1f} {cpu:10.1f} {cl / cpu:7.2f}")


def _print_compiled(results):
    """Compiled tinytorch against eager torch (and Inductor when measured), per-round ratios' medians."""
    tt_runs, th_runs = results["tinytorch"], results["torch"]
    print()
    print(f"{'compiled tinytorch vs eager torch':44s} {'unit':8s} {'tinytorch':>10s} {'torch':>10s} {'ratio':>7s}")
    infer = "MLP 64-128-10 inference, batch 1"
    for mode in ("default", "reduce-overhead"):
        for name in WORKLOADS[:4] + [infer]:
            key = f"{mode}: {name}"
            if key not in tt_runs[0] or isinstance(tt_runs[0][key], str):
                continue
            base = name if name != infer else f"eager: {infer}"
            ratio = statistics.median(a[key] / b[base] for a, b in zip(tt_runs, th_runs))
            print(f"{key[:44]:44s} {'calls/s':8s} {statistics.median(r[key] for r in tt_runs):10.1f} "
                  f"{statistics.median(r[base] for r in th_runs):10.1f} {ratio:7.2f}")
        key = f"{mode}: opencl MLP SGD"
        if key in tt_runs[0] and not isinstance(tt_runs[0][key], str):
            ratio = statistics.median(a[key] / a["eager: opencl MLP SGD"] for a in tt_runs)
            print(f"{(key + ' (vs eager opencl)')[:44]:44s} {'steps/s':8s} "
                  f"{statistics.median(r[key] for r in tt_runs):10.1f} "
                  f"{statistics.median(r['eager: opencl MLP SGD'] for r in tt_runs):10.1f} {ratio:7.2f}")
    ind = [k for k in th_runs[0] if k.startswith("default: ")]
    if ind:
        print()
        print(f"{'torch.compile (Inductor) vs eager torch':44s} {'unit':8s} {'inductor':>10s} {'eager':>10s} {'ratio':>7s}")
        for key in ind:
            name = key[len("default: "):]
            v = th_runs[0][key]
            if isinstance(v, str):
                print(f"{name[:44]:44s} {v}")
                continue
            base = name if name != infer else f"eager: {infer}"
            ratio = statistics.median(b[key] / b[base] for b in th_runs)
            print(f"{name[:44]:44s} {'calls/s':8s} {statistics.median(r[key] for r in th_runs):10.1f} "
                  f"{statistics.median(r[base] for r in th_runs):10.1f} {ratio:7.2f}")
    print()
    print("compile time (s): first 3 calls of the compiled step; cold = round 1 (empty kernel cache), warm = the "
          "median of later rounds")
    for mode in ("default", "reduce-overhead"):
        for name in WORKLOADS[:4] + ["opencl MLP SGD"]:
            key = f"compile time {mode}: {name}"
            if key in tt_runs[0]:
                warm = statistics.median(r[key] for r in tt_runs[1:]) if len(tt_runs) > 1 else float("nan")
                print(f"  {mode:16s} {name:40s} cold {tt_runs[0][key]:6.2f}  warm {warm:6.2f}")


if __name__ == "__main__":
    main()
