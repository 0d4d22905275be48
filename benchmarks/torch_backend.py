"""What PyTorch-through-tinytorch costs: ``a + b`` and an MLP train step on the bridged device (real torch,
``device="opencl"``, kernels by tinytorch), on tinytorch's own ``opencl`` device, and on torch's CPU; and what the
``torch.backends`` autoload adds to ``import torch``.

Each measurement runs in its own process; the driver alternates them (A B C A B C ...) for several rounds and
prints the median of each, with the load average. Quiet machine only (no tests, no other jobs).

    python benchmarks/torch_backend.py                 # the table
    python benchmarks/torch_backend.py --rounds 7
    python benchmarks/torch_backend.py --one bridge add   # one measurement (what the driver runs)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def _time_per_call(fn, min_time=0.5, sync=None):
    for _ in range(20):
        fn()
    if sync:
        sync()
    n, best = 1, float("inf")
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if sync:
            sync()
        dt = time.perf_counter() - t0
        if dt > min_time / 5:
            best = min(best, dt / n)
            for _ in range(4):
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                if sync:
                    sync()
                best = min(best, (time.perf_counter() - t0) / n)
            return best
        n *= 2


def _mlp_step(lib, device):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    model = model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(64, 784).to(device)
    y = lib.randint(0, 10, (64,)).to(device)

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def _mydev():
    # tests/mydevice.py: a third-party tinytorch device over NumPy, whose kernels cost microseconds; bridged, it shows
    # the bridge's own cost per op without the OpenCL launch (tens of microseconds on PoCL, and noisy)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    import mydevice
    mydevice.register()
    return "mydev"


def one(lib_name, what):
    """Seconds per call of ``what`` (add, mlp) with ``lib_name`` (bridge, tinytorch, torch, bridge-mydev,
    tinytorch-mydev)."""
    if lib_name == "bridge-mydev":
        os.environ["TINYTORCH_TORCH_DEVICE"] = _mydev()
        import torch as lib
        import tinytorch.torch_backend  # noqa: F401
        device, sync = "mydev", None
    elif lib_name == "tinytorch-mydev":
        import tinytorch as lib
        device, sync = _mydev(), None
    elif lib_name == "bridge":
        import torch as lib
        import tinytorch.torch_backend  # noqa: F401
        device, sync = "opencl", lib.opencl.synchronize
    elif lib_name == "tinytorch":
        import tinytorch as lib
        device, sync = "opencl", lib.opencl.synchronize
    else:
        import torch as lib
        device, sync = "cpu", None
    lib.set_num_threads(1) if lib_name == "torch" and what == "add" else None
    if what == "add":
        a, b = lib.randn(8).to(device), lib.randn(8).to(device)
        return _time_per_call(lambda: a + b, sync=sync)
    return _time_per_call(_mlp_step(lib, device), min_time=2.0, sync=sync)


def import_time(autoload):
    env = dict(os.environ, TINYTORCH_TORCH_AUTOLOAD="1" if autoload else "0")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch; torch.opencl" if autoload else "import torch"], env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--one", nargs=2, metavar=("LIB", "WHAT"))
    args = ap.parse_args()
    if args.one:
        print(one(*args.one))
        return
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    results = {}
    for what in ("add", "mlp"):
        for _ in range(args.rounds):
            for lib in ("bridge", "tinytorch", "torch") + (("bridge-mydev", "tinytorch-mydev") if what == "add" else ()):
                out = subprocess.run([sys.executable, __file__, "--one", lib, what], check=True, capture_output=True,
                                     text=True).stdout.split()[-1]
                results.setdefault((what, lib), []).append(float(out))
    for autoload in (False, True):
        for _ in range(args.rounds):
            results.setdefault(("import torch", "autoload" if autoload else "plain"), []).append(
                import_time(autoload))
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"median of {args.rounds} processes each, alternating")
    print(f"{'':14}{'bridge (torch, opencl)':>24}{'tinytorch opencl':>18}{'torch cpu':>12}{'bridge - own':>14}")
    for what, unit, scale in (("add", "us", 1e6), ("mlp", "ms", 1e3)):
        b, t, c = med[(what, "bridge")], med[(what, "tinytorch")], med[(what, "torch")]
        label = "a + b (8 fl.)" if what == "add" else "MLP step"
        print(f"{label:14}{b * scale:>21.1f} {unit}{t * scale:>15.1f} {unit}{c * scale:>9.1f} {unit}"
              f"{(b - t) * scale:>11.1f} {unit}")
    b, t = med[("add", "bridge-mydev")], med[("add", "tinytorch-mydev")]
    print(f"a + b on tests/mydevice.py (NumPy kernels): bridged {b * 1e6:.1f} us, tinytorch {t * 1e6:.1f} us: the bridge "
          f"adds {(b - t) * 1e6:.1f} us per op")
    p, a = med[("import torch", "plain")], med[("import torch", "autoload")]
    print(f"import torch: {p:.2f} s; with TINYTORCH_TORCH_AUTOLOAD=1 (registers the device): {a:.2f} s "
          f"(+{a - p:.2f} s)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
