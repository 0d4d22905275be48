"""The alternation the per-kernel benchmarks share (conv_layers.py, gemm_shapes.py): each library's worker in a
process of its own, tinytorch, torch, [baseline], tinytorch, torch, ... for a number of rounds, so a drift of the
machine reaches every side alike, and one process's idle threads never take the cores the other is timed on.

A worker is the same script run with ``--worker tinytorch|torch`` and the given arguments; its last stdout line
starting with ``RESULT `` holds its figures as JSON.
"""
import json
import os
import subprocess
import sys


def sides(baseline=None):
    """[(key, library, environment)]: tinytorch, torch, and tinytorch from the checkout ``baseline`` when given."""
    # torch would load tinytorch as its device-backend extension (an entry point) at import: kept out of its process
    out = [("tinytorch", "tinytorch", {}), ("torch", "torch", {"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})]
    if baseline:
        out.append(("baseline", "tinytorch", {"PYTHONPATH": os.path.abspath(baseline)}))
    return out


def rounds(script, which, n, args):
    """{key: [each round's RESULT, parsed]} for the sides ``which`` over ``n`` alternating rounds of ``script``'s
    worker, called with the extra command-line ``args``."""
    res = {k: [] for k, _, _ in which}
    for _ in range(n):
        for key, lib, env in which:
            cmd = [sys.executable, os.path.abspath(script), "--worker", lib, *args]
            r = subprocess.run(cmd, env=dict(os.environ, **env), capture_output=True, text=True, check=True)
            res[key].append(json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:]))
    return res


def add_arguments(ap, threads, min_time):
    """The options every such script takes: --threads (default ``threads``), --rounds, --min-time (seconds a figure
    is timed for, default ``min_time``), --baseline, and the hidden --worker."""
    import argparse
    ap.add_argument("--threads", type=int, nargs="+", default=threads)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=min_time)
    ap.add_argument("--worker", choices=["tinytorch", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--baseline", metavar="DIR", help="add tinytorch imported from another checkout")
