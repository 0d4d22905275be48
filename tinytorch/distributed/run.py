"""``python -m tinytorch.distributed.run`` (also ``tinytorch-run``): a torchrun-style launcher on MPI.

    python -m tinytorch.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m tinytorch.distributed.run --nproc-per-node 2 -m tinytorch.run torch_script.py   # import swap
    python -m tinytorch.distributed.run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py

The ranks are started by MPI's launcher (``mpiexec``: the one next to this Python, else the first on PATH, or
``TINYTORCH_MPIEXEC``), and each rank sees torchrun's environment: ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``GROUP_WORLD_SIZE``, ``ROLE_RANK``, ``ROLE_WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``, ``TORCHELASTIC_RUN_ID`` and ``OMP_NUM_THREADS`` (when unset and more than one rank per node: the
cores divided by the ranks per node, at least 1; the native kernels' thread pool follows it).

Across machines, one ``mpiexec`` starts every rank, so the launcher runs once, on the first node (``--node-rank
0``) with an MPI hostfile (``--hostfile``, one host per line, ``host:slots`` allowed); on other node ranks it
prints why it does nothing and exits 0. Rendezvous options (``--rdzv-*``, ``--standalone``, ...) are accepted
and unused: MPI connects the ranks.

Restarts: with ``--max-restarts N`` a job that fails (any rank dies or raises, which ends the whole MPI job) is
started again, all ranks, up to N times, with ``TORCHELASTIC_RESTART_COUNT`` counting the attempts (as torchrun's
elastic agent does; the world size does not change). A script resumes from its own checkpoint (see
``examples/mnist.py``).

The exit status is the last attempt's: non-zero when any rank fails (a rank that raises aborts the whole job, so
the others do not wait forever in a collective).
"""
import argparse
import os
import shutil
import subprocess
import sys


def _parser():
    p = argparse.ArgumentParser(prog="tinytorch-run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nnodes", default="1", help="number of nodes, or MIN:MAX (MIN must equal MAX)")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="ranks per node: an integer, or auto/cpu for the number of cores")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--hostfile", default=None, help="MPI hostfile listing the nodes (needed when --nnodes > 1)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    for name in ("--rdzv-backend", "--rdzv-endpoint", "--rdzv-id", "--rdzv-conf", "--monitor-interval",
                 "--start-method", "--role", "--log-dir", "--local-addr", "--redirects", "--tee",
                 "--local-ranks-filter"):
        p.add_argument(name, name.replace("-", "_").replace("__", "--"), default=None, help=argparse.SUPPRESS)
    p.add_argument("--standalone", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-m", "--module", action="store_true",
                   help="run the training script as a Python module (python -m training_script)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the training script as an executable, not through Python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def find_mpiexec():
    """The ``mpiexec`` to use: ``TINYTORCH_MPIEXEC``, the one installed next to this Python (the ``mpich`` wheel
    puts it there), else the first on PATH. RuntimeError when there is none."""
    env = os.environ.get("TINYTORCH_MPIEXEC")
    if env:
        return env
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    found = shutil.which("mpiexec")
    if found:
        return found
    raise RuntimeError("no mpiexec found: install an MPI (pip install mpich) or set TINYTORCH_MPIEXEC")


def _nproc(value):
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise ValueError("--nproc-per-node gpu: tinytorch has no CUDA devices")
    n = int(value)
    if n < 1:
        raise ValueError(f"--nproc-per-node must be positive, got {n}")
    return n


def _nnodes(value):
    lo, _, hi = str(value).partition(":")
    lo, hi = int(lo), int(hi or lo)
    if lo != hi:
        raise ValueError(f"--nnodes {value}: elastic node counts are not supported; give one number")
    return lo


def command(args, mpiexec=None):
    """The ``mpiexec`` command line that starts the job described by parsed ``args``."""
    nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    cmd = [mpiexec or find_mpiexec(), "-n", str(nproc * nnodes)]
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(nproc)]
    if args.no_python:
        return cmd + [args.training_script] + list(args.training_script_args)
    cmd += [sys.executable, "-m", "tinytorch.distributed._worker"]
    if args.module:
        cmd.append("-m")
    return cmd + [args.training_script] + list(args.training_script_args)


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    except ValueError as e:
        print(f"tinytorch-run: {e}", file=sys.stderr)
        return 2
    if args.max_restarts < 0:
        print(f"tinytorch-run: --max-restarts must be >= 0, got {args.max_restarts}", file=sys.stderr)
        return 2
    if nnodes > 1 and args.node_rank != 0:
        print(f"tinytorch-run: node rank {args.node_rank}: nothing to do here; with MPI the launcher on node rank "
              "0 starts the ranks of every node (through --hostfile)", file=sys.stderr)
        return 0
    if nnodes > 1 and not args.hostfile:
        print("tinytorch-run: --nnodes > 1 needs --hostfile (an MPI hostfile naming the nodes)", file=sys.stderr)
        return 2
    if not args.module and not args.no_python and not os.path.exists(args.training_script):
        print(f"tinytorch-run: can't open file '{args.training_script}': No such file", file=sys.stderr)
        return 2
    env = os.environ
    env["MASTER_ADDR"] = args.master_addr
    env["MASTER_PORT"] = str(args.master_port)
    env["GROUP_WORLD_SIZE"] = str(nnodes)
    env.setdefault("TORCHELASTIC_RUN_ID", f"tinytorch-mpi-{os.getpid()}")
    if "OMP_NUM_THREADS" not in env and nproc > 1:
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // nproc))
    try:
        cmd = command(args)
    except RuntimeError as e:
        print(f"tinytorch-run: {e}", file=sys.stderr)
        return 2
    env["TORCHELASTIC_MAX_RESTARTS"] = str(args.max_restarts)
    attempt = 0
    while True:
        env["TORCHELASTIC_RESTART_COUNT"] = str(attempt)
        code = _run_once(cmd, env)
        if code == 0 or attempt >= args.max_restarts or code == 130:
            return code
        attempt += 1
        print(f"tinytorch-run: the job failed (exit status {code}); restarting it, attempt {attempt} of "
              f"{args.max_restarts}", file=sys.stderr, flush=True)


def _run_once(cmd, env):
    """Run the job once; its exit status (130 after Ctrl-C, which is not restarted)."""
    proc = subprocess.Popen(cmd, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return 130


if __name__ == "__main__":
    sys.exit(main())
