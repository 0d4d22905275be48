"""Distributed training on MPI: the multi-rank checks run as ``mpiexec`` jobs of the scripts in
tests/distributed/ (each rank checks itself against NumPy or a one-process reference and the job fails on any
mismatch); this file starts them, with timeouts, and asserts on their exit status and output. Checks that need
no second rank (the launcher's command line, argument errors, a one-rank process group) run here directly or in
a subprocess, so that this pytest process never initializes MPI itself. Also here: DDP communication hooks against
torchrun/gloo, the launcher's --max-restarts with examples/mnist.py resuming from its checkpoint, and two hosts
simulated by two network namespaces. The same API without MPI: tests/test_distributed_threaded.py."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "tests", "distributed")
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
           PYTHONWARNINGS="ignore")


def _mpiexec():
    from tinytorch.distributed.run import find_mpiexec
    return find_mpiexec()


def _opencl():
    from tinytorch.backends import opencl
    return opencl.unavailable_reason() is None


def _devices():
    return ["cpu", "opencl"] if _opencl() else ["cpu"]


def _run(cmd, timeout, env=ENV):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    return r.returncode, r.stdout + r.stderr


def _mpi(n, script, *args, timeout=240):
    return _run([_mpiexec(), "-n", str(n), sys.executable, os.path.join(SCRIPTS, script), *args], timeout)


def _launch(*args, timeout=120):
    return _run([sys.executable, "-m", "tinytorch.distributed.run", *args], timeout)


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_match_numpy(n):
    """all_reduce (every ReduceOp, sync and async), reduce, broadcast, all_gather, all_gather_into_tensor,
    reduce_scatter_tensor, gather, scatter, send/recv, isend/irecv, object collectives and sub-groups, in eight
    dtypes on cpu (and opencl when present); mismatched sizes and dtypes raise on every rank."""
    code, out = _mpi(n, "collectives.py", *_devices())
    assert code == 0, out[-4000:]
    assert len(re.findall(r"OK rank \d/%d (\d+) checks" % n, out)) == n, out[-2000:]
    assert min(int(c) for c in re.findall(r"OK rank \d/\d (\d+) checks", out)) > 200


def test_ddp_equals_one_process_on_the_concatenated_batches():
    """float64 and float32, three bucket layouts (gradient_as_bucket_view among them), no_sync accumulation,
    find_unused_parameters: after training, every rank's parameters equal one process's (1e-6)."""
    code, out = _mpi(2, "ddp.py", *_devices())
    assert code == 0, out[-4000:]
    cases = re.findall(r"OK rank \d/2 ddp (\d+) cases", out)
    assert len(cases) == 2 and int(cases[0]) == 24 * len(_devices()), out[-2000:]


def _env_lines(out):
    return [json.loads(line[5:]) for line in out.splitlines() if line.startswith("ENVS ")][0]


def test_launcher_sets_torchruns_environment():
    code, out = _launch("--nproc-per-node", "2", "--master-port", "29611", os.path.join(SCRIPTS, "env_check.py"),
                        "--flag", "x", timeout=60)
    assert code == 0, out
    ranks = _env_lines(out)
    assert [d["rank"] for d in ranks] == [0, 1] and all(d["world"] == 2 for d in ranks), out
    cores = os.cpu_count() or 1
    for d in ranks:
        e = d["before_import"]  # set before the script imports anything, as torchrun does
        assert e["RANK"] == e["LOCAL_RANK"] == str(d["rank"]), e
        assert e["WORLD_SIZE"] == e["LOCAL_WORLD_SIZE"] == "2" and e["GROUP_RANK"] == "0", e
        assert e["MASTER_ADDR"] == "127.0.0.1" and e["MASTER_PORT"] == "29611", e
        assert d["argv"] == ["--flag", "x"] and d["torchelastic"] is True
    env = dict(ENV)
    env.pop("OMP_NUM_THREADS")  # unset: the launcher divides the cores among the ranks of a node
    code, out = _run([sys.executable, "-m", "tinytorch.distributed.run", "--nproc-per-node", "2",
                      os.path.join(SCRIPTS, "env_check.py")], 60, env)
    assert code == 0, out
    for d in _env_lines(out):
        assert d["env"]["OMP_NUM_THREADS"] == str(max(1, cores // 2)) and d["threads"] == max(1, cores // 2), d


def test_plain_mpiexec_derives_the_environment():
    code, out = _mpi(2, "env_check.py", timeout=60)
    assert code == 0, out
    ranks = _env_lines(out)
    assert [d["rank"] for d in ranks] == [0, 1], out
    for d in ranks:
        assert d["before_import"]["RANK"] is None  # nothing set by mpiexec under torchrun's names ...
        e = d["env"]  # ... until tinytorch.distributed is imported
        assert (e["RANK"], e["WORLD_SIZE"], e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"]) == (str(d["rank"]), "2",
                                                                                         str(d["rank"]), "2"), e


@pytest.mark.parametrize("mode", ["kill", "raise", "stall"])
def test_a_failing_rank_ends_the_job_non_zero(mode):
    """A rank SIGKILLed or raising mid-training takes the job down; one that stops taking part makes the others
    hit the process group's 3 s timeout. Never a hang: the subprocess timeout is short."""
    code, out = _launch("--nproc-per-node", "2", os.path.join(SCRIPTS, "faults.py"), mode, timeout=45)
    assert code != 0, out
    assert "STEP 1" in out and "FINISHED" not in out, out[-2000:]  # it ran, then stopped
    if mode == "raise":
        assert "rank failure injected by the test" in out
    if mode == "stall":
        assert "timed out after 3000 ms" in out, out[-2000:]


def test_same_losses_as_torchrun_with_gloo():
    """An unmodified PyTorch CPU DDP script (gloo, DistributedSampler, SGD) under real torchrun and under the
    launcher with the import swap prints the same losses."""
    script = os.path.join(SCRIPTS, "torch_ddp_script.py")
    for _ in range(3):
        # real torch's gloo sometimes aborts a rank at teardown ("terminate called without an active exception")
        # after the whole run: run the reference again rather than compare against a failed run
        code, theirs = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                             "2", script], 120)
        if code == 0:
            break
    assert code == 0, theirs[-3000:]
    code, ours = _launch("--nproc-per-node", "2", "-m", "tinytorch.run", script)
    assert code == 0, ours[-3000:]
    assert re.search(r"FRAMEWORK .*tinytorch", ours) and not re.search(r"FRAMEWORK .*tinytorch", theirs)
    a = [(m[0], m[1], float(m[2])) for m in re.findall(r"LOSS (\d+) (\d+) (\S+)", theirs)]
    b = [(m[0], m[1], float(m[2])) for m in re.findall(r"LOSS (\d+) (\d+) (\S+)", ours)]
    assert len(a) == 12 and [x[:2] for x in a] == [x[:2] for x in b], (theirs[-2000:], ours[-2000:])
    for (e, s, la), (_, _, lb) in zip(a, b):
        assert abs(la - lb) <= 1e-9 * max(1.0, abs(la)), (e, s, la, lb)


def test_one_rank_without_mpiexec():
    """A script started as plain ``python`` forms a one-rank group (MPI singleton); errors as PyTorch's."""
    code = """
import datetime, tinytorch as torch, tinytorch.distributed as dist
from tinytorch.nn.parallel import DistributedDataParallel as DDP
try:
    torch.distributed.all_reduce(torch.ones(1))
except ValueError as e:
    assert "Default process group has not been initialized" in str(e)
try:
    dist.init_process_group("gloo", world_size=2)
except ValueError as e:
    assert "world_size=2" in str(e)
try:
    dist.init_process_group("gloo", timeout=5)
except TypeError as e:
    assert "timedelta" in str(e)
dist.init_process_group("gloo", init_method="env://", rank=0, world_size=1)
assert dist.get_backend() == "gloo" and dist.Backend("GLOO") == "gloo" and dist.get_world_size() == 1
t = torch.arange(4.)
w = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
assert w.wait() and w.is_completed() and t.tolist() == [0., 1., 2., 3.]
m = DDP(torch.nn.Linear(2, 1))
m(torch.ones(3, 2)).sum().backward()
assert m.module.weight.grad.tolist() == [[3., 3.]]
try:
    DDP(torch.nn.Linear(2, 1).requires_grad_(False))
except RuntimeError as e:
    assert "doesn't have any parameter that requires a gradient" in str(e)
dist.destroy_process_group()
assert not dist.is_initialized()
print("SINGLETON OK")
"""
    rc, out = _run([sys.executable, "-c", code], 60)
    assert rc == 0 and "SINGLETON OK" in out, out


def test_launcher_command_line_and_errors(tmp_path):
    from tinytorch.distributed import run
    p = run._parser()
    cmd = run.command(p.parse_args(["--nproc_per_node", "3", "--nnodes", "2", "--hostfile", "hosts", "t.py", "-x"]),
                      mpiexec="mpiexec")
    assert cmd[:7] == ["mpiexec", "-n", "6", "-f", "hosts", "-ppn", "3"]
    assert cmd[7:] == [sys.executable, "-m", "tinytorch.distributed._worker", "t.py", "-x"]
    cmd = run.command(p.parse_args(["--nproc-per-node", "2", "-m", "tinytorch.run", "s.py"]), mpiexec="mpiexec")
    assert cmd[-4:] == ["tinytorch.distributed._worker", "-m", "tinytorch.run", "s.py"]
    cmd = run.command(p.parse_args(["--no-python", "--nproc-per-node", "2", "./a.out", "1"]), mpiexec="mpiexec")
    assert cmd == ["mpiexec", "-n", "2", "./a.out", "1"]
    # torchrun's rendezvous options parse (and are unused)
    p.parse_args(["--standalone", "--rdzv-backend", "c10d", "--rdzv_endpoint", "h:1", "t.py"])
    assert run.main(["--nnodes", "2", "t.py"]) == 2  # no hostfile
    assert run.main(["--nnodes", "1:3", "t.py"]) == 2
    assert run.main(["--nnodes", "2", "--node-rank", "1", "t.py"]) == 0  # node 0 starts everything
    assert run.main([str(tmp_path / "missing.py")]) == 2


def test_backend_names_and_availability():
    import tinytorch.distributed as dist
    from conftest import torch
    assert dist.is_available() and dist.is_mpi_available() and dist.is_gloo_available()
    assert not dist.is_nccl_available() and not dist.is_initialized()
    for m in (dist, torch.distributed):
        assert m.Backend("MPI") == "mpi" and m.Backend("gloo") == m.Backend.GLOO
        assert m.Backend("Other") == "other"
        with pytest.raises(ValueError, match="string-ish"):
            m.Backend(3)
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("tcp")
    for m in (dist, torch.distributed):
        with pytest.raises(AssertionError, match="Process group cannot be None"):
            m.destroy_process_group()
    assert list(dist.ReduceOp.RedOpType.__members__) == list(torch.distributed.ReduceOp.RedOpType.__members__)
    assert isinstance(dist.ReduceOp.SUM, dist.ReduceOp) and dist.ReduceOp(dist.ReduceOp.MAX) is dist.ReduceOp.MAX


def test_mnist_example_trains_with_ddp(tmp_path):
    """examples/mnist.py under the launcher: each rank trains on its shard; rank 0 alone prints and saves the
    unwrapped model's state_dict."""
    code, out = _launch("--nproc-per-node", "2", os.path.join(ROOT, "examples", "mnist.py"), "--limit", "512",
                        "--epochs", "1", "--out-dir", str(tmp_path), timeout=180)
    assert code == 0, out[-3000:]
    assert out.count("epoch 1: train loss") == 1 and "2 ranks x batch 64" in out, out[-2000:]
    import tinytorch
    sd = tinytorch.load(str(tmp_path / "mnist_cnn.pt"))
    assert sd and not any(k.startswith("module.") for k in sd), list(sd)


def test_comm_hooks_same_losses_as_torchrun_with_gloo():
    """DDP communication hooks (default_hooks.allreduce_hook, fp16_compress_hook, powerSGD_hook with error
    feedback and warm start) in an unmodified PyTorch script: the same losses under real torchrun/gloo and under
    the launcher with the import swap."""
    script = os.path.join(SCRIPTS, "torch_hooks_script.py")
    hooks = ["allreduce", "fp16", "powersgd"]
    for _ in range(3):  # see test_same_losses_as_torchrun_with_gloo: gloo's occasional abort at teardown
        code, theirs = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                             "2", script, *hooks], 120)
        if code == 0:
            break
    assert code == 0, theirs[-3000:]
    code, ours = _launch("--nproc-per-node", "2", "-m", "tinytorch.run", script, *hooks)
    assert code == 0, ours[-3000:]
    a = [(m[0], m[1], float(m[2])) for m in re.findall(r"LOSS (\w+) (\d+) (\S+)", theirs)]
    b = [(m[0], m[1], float(m[2])) for m in re.findall(r"LOSS (\w+) (\d+) (\S+)", ours)]
    assert len(a) == 18 and [x[:2] for x in a] == [x[:2] for x in b], (theirs[-2000:], ours[-2000:])
    for (h, s, la), (_, _, lb) in zip(a, b):
        assert abs(la - lb) <= 1e-12 * max(1.0, abs(la)), (h, s, la, lb)
    # the hooks changed the training: fp16 and PowerSGD (from its third step) differ from plain all-reduce
    by = {(h, int(s)): v for h, s, v in b}
    assert by[("fp16", 3)] != by[("allreduce", 3)] and by[("powersgd", 3)] != by[("allreduce", 3)]


def test_max_restarts_resumes_mnist_from_its_checkpoint(tmp_path):
    """examples/mnist.py under the launcher with --max-restarts 1: the last rank is SIGKILLed in the second
    epoch (2 steps an epoch), the job restarts, resumes from the checkpoint after step 1 of that epoch and ends
    with the same losses and accuracy as an uninterrupted run."""
    common = ["--nproc-per-node", "2", os.path.join(ROOT, "examples", "mnist.py"), "--model", "mlp", "--limit",
              "256", "--epochs", "2", "--checkpoint-every", "1"]
    code, clean = _launch(*common, "--out-dir", str(tmp_path / "clean"), timeout=240)
    assert code == 0, clean[-3000:]
    code, out = _launch("--max-restarts", "1", *common, "--out-dir", str(tmp_path / "killed"), "--fail-once-at",
                        "4", timeout=300)
    assert code == 0, out[-3000:]
    assert "restarting it, attempt 1 of 1" in out and "resumed from" in out and "epoch 2, step 1" in out, out[-3000:]
    summary = re.compile(r"epoch (\d): train loss (\S+)  test accuracy (\S+)%")
    want = summary.findall(clean)
    got = summary.findall(out)
    assert len(want) == 2 and got[-1] == want[-1], (want, got)  # epoch 1 printed once, before the kill
    assert got[0] == want[0]
    code, out = _launch("--max-restarts", "-1", os.path.join(SCRIPTS, "env_check.py"), timeout=30)
    assert code == 2 and "--max-restarts must be >= 0" in out


def _netns_hosts(tmp_path):
    """Two network namespaces joined by a veth pair, 10.231.0.1 and 10.231.0.2 (each a "host"), and an ssh
    stand-in that runs hydra's remote command in the namespace of the host it names. None when namespaces
    cannot be made here (not root, no ip)."""
    setup = ["ip netns add ttA", "ip netns add ttB", "ip link add ttvA type veth peer name ttvB",
             "ip link set ttvA netns ttA", "ip link set ttvB netns ttB", "ip -n ttA addr add 10.231.0.1/24 dev ttvA",
             "ip -n ttB addr add 10.231.0.2/24 dev ttvB", "ip -n ttA link set ttvA up",
             "ip -n ttB link set ttvB up", "ip -n ttA link set lo up", "ip -n ttB link set lo up"]
    _netns_cleanup()
    for cmd in setup:
        r = subprocess.run(cmd.split(), capture_output=True, text=True)
        if r.returncode != 0:
            _netns_cleanup()
            return None
    ssh = tmp_path / "ssh"
    ssh.write_text('#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nhost=$1; shift\n'
                   'case "$host" in\n  10.231.0.2) exec ip netns exec ttB sh -c "$*" ;;\n'
                   '  *) exec ip netns exec ttA sh -c "$*" ;;\nesac\n')
    ssh.chmod(0o755)
    hosts = tmp_path / "hosts"
    hosts.write_text("10.231.0.1:1\n10.231.0.2:1\n")
    return str(ssh), str(hosts)


def _netns_cleanup():
    for ns in ("ttA", "ttB"):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_two_hosts_in_network_namespaces_same_losses_as_two_local_ranks(tmp_path):
    """The README's several-machines recipe (the launcher on the first host with an MPI hostfile) across two
    network namespaces, one rank each, talking over a veth pair: the same losses as 2 ranks on one host."""
    made = _netns_hosts(tmp_path)
    if made is None:
        pytest.skip("network namespaces not permitted here (ip netns needs root)")
    ssh, hosts = made
    try:
        script = os.path.join(SCRIPTS, "torch_ddp_script.py")
        code, local = _launch("--nproc-per-node", "2", "-m", "tinytorch.run", script)
        assert code == 0, local[-3000:]
        env = dict(ENV, HYDRA_LAUNCHER="ssh", HYDRA_LAUNCHER_EXEC=ssh)  # hydra's ssh launcher, through our stand-in
        code, two = _run(["ip", "netns", "exec", "ttA", sys.executable, "-m", "tinytorch.distributed.run",
                          "--nnodes", "2", "--nproc-per-node", "1", "--hostfile", hosts, "-m", "tinytorch.run",
                          script], 180, env)
        assert code == 0, two[-3000:]
    finally:
        _netns_cleanup()
    a = re.findall(r"LOSS (\d+) (\d+) (\S+)", local)
    b = re.findall(r"LOSS (\d+) (\d+) (\S+)", two)
    assert len(a) == 12 and a == b, (local[-2000:], two[-2000:])
