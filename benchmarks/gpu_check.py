"""The GPU check: tinytorch's ``cuda`` (and ``opencl``) device against torch CUDA on a machine with an NVIDIA GPU.

    python benchmarks/gpu_check.py                   # on the GPU machine: tests, then the table; results.json
    python benchmarks/gpu_check.py --compile-only    # anywhere: compile every CUDA kernel with NVRTC (sm_90)

``--compile-only`` needs no GPU or driver, only cuda-bindings, nvidia-cuda-nvrtc and nvidia-cuda-runtime (the
``cuda`` extra) and an OpenCL platform (PoCL): the cuda device runs the opencl backend's kernels, so the op database
and the training steps run on ``opencl`` while every kernel source built is recorded
(``backends/opencl/runtime.RECORD``), then each one the cuda device would build is compiled by NVRTC for
``sm_90`` as the device compiles it (``backends/cuda/runtime.compile_source``), with each float32 kernel also
retyped to float16 and bfloat16 (PoCL has no float16 to record them from). It ends with the line
``compiled N kernels``, and exits 1 when any kernel fails (with NVRTC's log).

The full check (under 8 minutes on an H100/H200):
  1. builds ``tinytorch._C`` in place when it is missing or built for another Python, and with ``--sources``
     compiles the kernel sources saved here (``--compile-only --save-sources``) into the disk cache in parallel,
  2. times, against torch CUDA in this process (each figure the median of 5 timed repeats, after warm-up,
     synchronized): µs per small ``a + b`` (eager), GB/s of a 256 MiB add and a 1 GiB sum, TFLOP/s of a 4096^3
     float32 and an 8192^3 bfloat16 matmul, ms per train step of the benchmark workloads (MLP SGD, LeNet Adam, the
     GPT of ``examples/gpt.py``) eager and compiled (``tinytorch.compile``),
  3. runs ``pytest -m cuda`` (the op database and the device tests on ``cuda``), every failure listed,
  4. the same rows on ``opencl`` when pyopencl (carried as a wheel where it is not installed) finds NVIDIA's OpenCL
     driver (``libnvidia-opencl.so.1``; an ICD file naming it is written when none does),
and writes ``results.json`` (``--out``) and prints the table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "examples"))
ARCH = 90  # sm_90: the H100 / H200


# ---- compile-only ----
def record_kernels(*workloads):
    """{key: OpenCL C source} of every kernel built on ``opencl`` while each ``workload(tinytorch)`` runs.
    RuntimeError when no OpenCL platform is available."""
    import tinytorch as tt
    from tinytorch.backends.opencl import runtime
    if not tt.opencl.is_available():
        raise RuntimeError(f"--compile-only records the kernels on the opencl device: {runtime.unavailable_reason()}")
    runtime.RECORD = {}
    try:
        for w in workloads:
            w(tt)
        return runtime.RECORD
    finally:
        runtime.RECORD = None


def op_database(pytest_args=()):
    """A workload: the op database (tests/test_ops.py) on opencl, run by pytest in this process."""
    def run(tt):
        import pytest
        rc = pytest.main([os.path.join(ROOT, "tests", "test_ops.py"), "-q", "-k", "opencl", "-p", "no:cacheprovider",
                          "-p", "no:warnings", *pytest_args])
        if rc not in (0, 5):
            raise RuntimeError(f"the op database failed on opencl (pytest exit status {rc})")
    return run


def fused(tt):
    """A workload: runs of elementwise ops the compiler fuses into one generated kernel (float32 and float64,
    full and broadcast-scalar operands, a gradient through relu)."""
    for dt in (tt.float32, tt.float64):
        x = tt.randn(64, 64, dtype=dt, device="opencl", requires_grad=True)
        y = tt.randn(64, 64, dtype=dt, device="opencl")
        s = tt.ones((), dtype=dt, device="opencl")

        def f(x, y, s):
            z = ((x * y + x).relu() - y / 2) * s
            z.sum().backward()
            return z
        fn = tt.compile(f)
        for _ in range(3):
            fn(x, y, s)


def training(tt, compiled=2):
    """A workload: the train steps of the check on opencl, eager, and the first ``compiled`` of them compiled
    (the compiler's fused kernels)."""
    for _, make in workload_makers(tt, "opencl"):
        step = make()
        for _ in range(2):
            step()
    for _, make in workload_makers(tt, "opencl")[:compiled]:
        fn = tt.compile(make())
        for _ in range(3):
            fn()


def compile_all(sources, arch=ARCH, jobs=None):
    """NVRTC-compile each {key: source} the cuda device would build; returns [(key, error)] of the failures."""
    from concurrent.futures import ThreadPoolExecutor
    from tinytorch.backends.cuda import runtime
    from tinytorch.backends.cuda.backend import runs_on_cuda
    todo = [(k, s) for k, s in sources.items() if runs_on_cuda(k)]

    def one(item):
        k, s = item
        try:
            runtime.compile_source(s, arch)
            return k, None
        except RuntimeError as e:
            return k, str(e)
    with ThreadPoolExecutor(jobs or os.cpu_count() or 2) as pool:
        results = list(pool.map(one, todo))
    return len(todo), [(k, e) for k, e in results if e is not None]


def low_precision_variants(sources):
    """The float32 kernels retyped to float16 and bfloat16: PoCL has no float16 (and OpenCL no bfloat16), so these
    stand for the cuda device's 16-bit kernels, which are the same templates with another element type."""
    import re
    out = {}
    for k, src in sources.items():
        if "float32" in k:
            for t, name in (("half", "float16"), ("bfloat16", "bfloat16")):
                out[k + ("as", name)] = re.sub(r"\bfloat\b", t, src)
    return out


def compile_only(args):
    t0 = time.perf_counter()
    sources = record_kernels(op_database(["-x"] if args.quick else []), training, fused)
    sources.update(low_precision_variants(sources))
    if args.save_sources:
        with open(args.save_sources, "w") as f:
            json.dump([[repr(k), s] for k, s in sources.items()], f)
    t1 = time.perf_counter()
    n, failed = compile_all(sources)
    t2 = time.perf_counter()
    for k, e in failed[:20]:
        print(f"--- {k}\n{e[:4000]}")
    print(f"recorded {len(sources)} kernel sources on opencl in {t1 - t0:.0f} s; NVRTC (sm_{ARCH}) in {t2 - t1:.0f} s")
    if failed:
        print(f"FAILED: {len(failed)} of {n} kernels did not compile")
        return 1
    print(f"compiled {n} kernels")
    return 0


# ---- workloads ----
def workload_makers(lib, device):
    """(name, make) of the train-step workloads on ``device`` (``benchmarks/bench.py``'s); ``make()`` returns a step
    function that synchronizes the device at its end."""
    from bench import gpt_step, lenet, mlp, train_step
    return [("MLP 784-256-128-10 SGD, batch 128", lambda: train_step(lib, mlp, "sgd", (128, 784), 10, device=device)),
            ("LeNet-5 Adam, batch 64", lambda: train_step(lib, lenet, "adam", (64, 1, 28, 28), 10, device=device)),
            ("GPT 4x128 ctx 64 AdamW, batch 32", lambda: gpt_step(lib, device=device))]


def workloads(lib, device):
    return [(name, make()) for name, make in workload_makers(lib, device)]


def median_time(fn, repeats=5, warmup=2, inner=1):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        ts.append((time.perf_counter() - t0) / inner)
    return statistics.median(ts)


def device_rows(lib, device, compiled=True, scale=1, lowp=None):
    """{row: value} of one library on one device (the rows of the module docstring); ``scale`` divides the
    sizes of the bandwidth and GEMM rows (``--smoke``); ``lowp`` the second GEMM's dtype (bfloat16; OpenCL C has
    none, so float16 there). A row that raises holds its error instead of a number: one failing kernel is a row
    of the table, not the end of the check."""
    sync = getattr(lib, device.split(":")[0]).synchronize
    out = {}

    def row(name, measure):
        try:
            out[name] = measure()
        except Exception as e:  # noqa: BLE001 - see the docstring
            out[name] = f"error: {type(e).__name__}: {str(e)[:200]}"
            print(f"[{device}] {name}: {out[name]}", flush=True)

    a, b = lib.ones(8, device=device), lib.ones(8, device=device)
    calls = 2000

    def small():
        for _ in range(calls):
            a + b
        sync()
    row("a + b, 8 floats (us/op)", lambda: median_time(small) / calls * 1e6)
    n = (256 << 20) // 4 // scale

    def add():
        x, y = lib.ones(n, device=device), lib.ones(n, device=device)
        return 3 * n * 4 / median_time(lambda: (x + y, sync())) / 1e9
    row(f"add {256 // scale} MiB float32 (GB/s)", add)

    def total():
        z = lib.ones((1 << 30) // 4 // scale, device=device)
        return (1 << 30) // scale / median_time(lambda: (z.sum(), sync())) / 1e9
    row(f"sum {1024 // scale} MiB float32 (GB/s)", total)
    lowp = lowp or (lib.float16 if device.startswith("opencl") else lib.bfloat16)
    for n, dt in ((4096 // scale, lib.float32), (8192 // scale, lowp)):
        def gemm(n=n, dt=dt):
            p = lib.randn(n, n, device=device).to(dt)
            q = lib.randn(n, n, device=device).to(dt)
            return 2 * n ** 3 / median_time(lambda: (p @ q, sync())) / 1e12
        row(f"matmul {n}^3 {str(dt).split('.')[-1]} (TFLOP/s)", gemm)
    for name, make in workload_makers(lib, device):
        row(f"{name} eager (ms)", lambda: median_time(make(), repeats=5, warmup=3) * 1e3)
        if compiled:
            row(f"{name} compiled (ms)", lambda: median_time(lib.compile(make()), repeats=5, warmup=3) * 1e3)
    return out


def warm_cache(path, arch=ARCH, jobs=None):
    """Compile the kernel sources saved by ``--compile-only --save-sources`` into the cuda device's disk cache
    (``runtime.cached_binary``) in parallel processes, before the device is first used: the tests and the timed
    rows then load cubins instead of waiting on NVRTC one kernel at a time. A source the device never builds
    costs only its compile. Returns (kernels, failures, seconds)."""
    import multiprocessing
    import ast
    from tinytorch.backends.cuda.backend import runs_on_cuda
    with open(path) as f:
        saved = json.load(f)
    todo = []
    for k, s in saved:
        try:
            key = ast.literal_eval(k)
        except (ValueError, SyntaxError):
            key = ()  # a key holding a non-literal: compile it, the cache may need it
        if not key or runs_on_cuda(key):
            todo.append(s)
    t0 = time.perf_counter()
    # fork before this process touches the driver: NVRTC alone runs in the children
    with multiprocessing.get_context("fork").Pool(jobs or os.cpu_count() or 2) as pool:
        failed = sum(pool.map(_warm_one, [(s, arch) for s in todo], chunksize=4))
    return len(todo), failed, time.perf_counter() - t0


def _warm_one(item):
    from tinytorch.backends.cuda import runtime
    try:
        runtime.cached_binary(*item)
        return 0
    except RuntimeError:
        return 1


def build_native():
    """Build tinytorch._C in place unless it imports (the lent machine's Python differs from ours)."""
    try:
        import tinytorch._C  # noqa: F401
        return "present"
    except ImportError:
        r = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=ROOT, capture_output=True,
                           text=True)
        return "built" if r.returncode == 0 else f"build failed: {r.stderr[-500:]}"


def run_tests(timeout, log):
    """``pytest -m cuda`` over the files that hold cuda tests (the op database and tests/test_cuda.py), every
    failure reported (no ``-x``: a first run on a GPU should list them all), its output written to ``log``;
    stopped after ``timeout`` seconds, the output so far kept."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "cuda", "-p", "no:cacheprovider", "-rfE", "--tb=line",
           os.path.join(ROOT, "tests", "test_cuda.py"), os.path.join(ROOT, "tests", "test_ops.py")]
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = f"stopped after {timeout} s"
    lines = open(log, errors="replace").read().strip().splitlines()
    print("\n".join(lines[-60:]))
    return {"pytest -m cuda": lines[-1] if lines else "", "pytest exit status": rc}


def table(results):
    """The rows of every library side by side, and tinytorch / torch where both have a number (for a rate, > 1
    means tinytorch is faster; for a time (us, ms), < 1 does)."""
    libs = [k for k in results if isinstance(results[k], dict)]
    rows = []
    for lib in libs:
        for r in results[lib]:
            if r not in rows:
                rows.append(r)
    if not rows:
        return "(no device was timed)"
    w = max(len(r) for r in rows) + 2
    lines = ["".join([f"{'row':<{w}}"] + [f"{lib:>18}" for lib in libs] + [f"{'tt cuda / torch':>18}"])]
    for r in rows:
        cells = []
        for lib in libs:
            v = results[lib].get(r, "")
            cells.append(f"{v:>18.3f}" if isinstance(v, float) else f"{str(v)[:18]:>18}")
        a, b = results.get("tinytorch cuda", {}).get(r), results.get("torch cuda", {}).get(r)
        ratio = a / b if isinstance(a, float) and isinstance(b, float) and b else None
        cells.append(f"{ratio:>18.2f}" if ratio is not None else f"{'':>18}")
        lines.append(f"{r:<{w}}" + "".join(cells))
    return "\n".join(lines)


def nvidia_opencl_icd():
    """Point the OpenCL ICD loader at NVIDIA's OpenCL driver (``libnvidia-opencl.so.1``, shipped with the display
    driver) when no ICD file names it: a vendors directory of our own in ``OCL_ICD_VENDORS``, set before pyopencl
    loads. Returns the library's path, or None when the driver has no OpenCL library."""
    import glob
    dirs = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",
            *os.environ.get("LD_LIBRARY_PATH", "").split(":")]
    found = [os.path.join(d, "libnvidia-opencl.so.1") for d in dirs
             if d and os.path.exists(os.path.join(d, "libnvidia-opencl.so.1"))]
    if not found:
        return None
    if not any("nvidia" in open(p).read() for p in glob.glob("/etc/OpenCL/vendors/*.icd")):
        d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tinytorch-icd")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "nvidia.icd"), "w") as f:
            f.write(found[0] + "\n")
        os.environ["OCL_ICD_VENDORS"] = d
    return found[0]


def smoke(args):
    """The full check's code on this machine, small: tinytorch on opencl (PoCL) against torch on the cpu."""
    import tinytorch as tt
    import torch
    torch.cuda.synchronize = lambda *a: None  # torch's cpu needs no synchronize; the rows call it
    torch.cpu.synchronize = lambda *a: None
    results = {"torch cpu": device_rows(torch, "cpu", compiled=False, scale=64),
               "tinytorch opencl": device_rows(tt, "opencl", scale=64, lowp=tt.float32)}
    print(table(results))
    return 0


def full(args):
    results = {"native build": build_native(), "NVIDIA OpenCL library": nvidia_opencl_icd()}
    if args.sources:
        results["kernel cache (kernels, failed, s)"] = warm_cache(args.sources)
        print(results["kernel cache (kernels, failed, s)"], flush=True)
    import tinytorch as tt
    import torch
    results["devices"] = {"tinytorch cuda": tt.cuda.get_device_name() if tt.cuda.is_available() else
                          tt.backends.cuda.runtime.unavailable_reason(),
                          "torch cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else "unavailable"}
    t0 = time.perf_counter()
    def save():
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1, default=str)
    if torch.cuda.is_available():
        results["torch cuda"] = device_rows(torch, "cuda", compiled=False)
        save()
    if tt.cuda.is_available():
        results["tinytorch cuda"] = device_rows(tt, "cuda")
        save()
    if not args.skip_tests:
        results.update(run_tests(args.test_timeout, os.path.join(os.path.dirname(os.path.abspath(args.out)),
                                                                 "pytest_cuda.log")))
        save()
    if tt.opencl.is_available() and "NVIDIA" in tt.opencl.get_device_name().upper():
        results["tinytorch opencl"] = device_rows(tt, "opencl")
    else:
        results["opencl"] = "NVIDIA's OpenCL driver not found: " + str(tt.backends.opencl.unavailable_reason() or
                                                                      tt.opencl.get_device_name())
    results["timing seconds"] = time.perf_counter() - t0
    save()
    print(json.dumps({k: v for k, v in results.items() if not isinstance(v, dict)}, indent=1, default=str))
    print(table({k: v for k, v in results.items() if isinstance(v, dict) and k != "devices"}))
    return 0 if "tinytorch cuda" in results else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compile-only", action="store_true", help="compile every CUDA kernel with NVRTC; no GPU needed")
    p.add_argument("--quick", action="store_true", help="--compile-only: stop the op database at its first failure")
    p.add_argument("--skip-tests", action="store_true", help="skip pytest -m cuda")
    p.add_argument("--test-timeout", type=int, default=330, help="stop pytest -m cuda after this many seconds")
    p.add_argument("--save-sources", help="--compile-only: also write the recorded kernel sources (JSON) here")
    p.add_argument("--sources", help="compile these saved kernel sources into the disk cache first, in parallel")
    p.add_argument("--smoke", action="store_true", help="run the timing code small, on opencl and torch's cpu")
    p.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "results.json"))
    args = p.parse_args()
    return compile_only(args) if args.compile_only else smoke(args) if args.smoke else full(args)


if __name__ == "__main__":
    sys.exit(main())
