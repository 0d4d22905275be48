"""Every collective against NumPy, run under ``mpiexec -n N`` (tests/test_distributed.py starts it).

Each rank builds its inputs from (rank, seed) alone, so every rank can compute with NumPy what each collective must
return. Prints ``OK <checks>`` on success; any mismatch raises (the job then exits non-zero). argv: the devices
to check (``cpu`` and, when an OpenCL platform exists, ``opencl``).
"""
import datetime
import os
import sys

import numpy as np

import tinytorch as torch
import tinytorch.distributed as dist

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "int32": torch.int32,
          "float16": torch.float16, "bfloat16": torch.bfloat16, "bool": torch.bool, "uint8": torch.uint8}
checks = [0]


def data(rank, shape, dt, seed=0):
    rng = np.random.default_rng(1000 * seed + rank)
    if dt == "bool":
        return rng.random(shape) < 0.5
    if dt in ("int64", "int32", "uint8"):
        return rng.integers(1, 5, size=shape).astype(dt)
    a = rng.integers(-8, 8, size=shape).astype(np.float64) / 4  # exact in every float dtype
    return a


def tensor(a, dt, device):
    return torch.tensor(a, dtype=DTYPES[dt], device=device)


def check(got, want, what):
    tol = {torch.float16: 1e-3, torch.bfloat16: 1e-2}.get(got.dtype, 1e-6)  # AVG over 3 ranks is inexact
    got = got.cpu().to(torch.float64).numpy() if got.dtype != torch.bool else got.cpu().numpy()
    want = np.asarray(want, dtype=got.dtype)
    if got.shape != want.shape or not np.allclose(got, want, rtol=tol, atol=tol):
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got {got!r}, want {want!r}")
    checks[0] += 1


def reduce_np(arrs, op, dt):
    a = np.stack(arrs)
    if dt == "bool":
        return {"SUM": a.any(0), "MAX": a.any(0), "MIN": a.all(0), "PRODUCT": a.all(0)}[op]
    return {"SUM": a.sum(0), "AVG": a.mean(0), "MIN": a.min(0), "MAX": a.max(0), "PRODUCT": a.prod(0)}[op]


def main():
    devices = sys.argv[1:] or ["cpu"]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    r, n = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "gloo"
    assert int(os.environ["RANK"]) == r and int(os.environ["WORLD_SIZE"]) == n
    shape = (3, 4)
    for device in devices:
        for dt in DTYPES:
            try:  # a device without e.g. fp16 support cannot hold the tensor at all: not a distributed matter
                torch.zeros(1, dtype=DTYPES[dt], device=device)
            except TypeError:
                continue
            ops = ["SUM", "MIN", "MAX", "PRODUCT"] + (["AVG"] if dt.startswith(("float", "bfloat")) else [])
            if dt == "bool":
                ops = ["SUM", "MAX", "MIN"]
            every = [data(k, shape, dt) for k in range(n)]
            for op in ops:
                t = tensor(every[r], dt, device)
                dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
                check(t, reduce_np(every, op, dt), f"all_reduce {op} {dt} {device}")
                t = tensor(every[r], dt, device)
                w = dist.all_reduce(t, op=getattr(dist.ReduceOp, op), async_op=True)
                w.wait()
                assert w.is_completed() and w.is_success()
                check(t, reduce_np(every, op, dt), f"all_reduce async {op} {dt} {device}")
                for dst in range(n):
                    t = tensor(every[r], dt, device)
                    dist.reduce(t, dst=dst, op=getattr(dist.ReduceOp, op))
                    check(t, reduce_np(every, op, dt) if r == dst else every[r], f"reduce {op} {dt} {device}")
            for src in range(n):
                t = tensor(every[r], dt, device)
                dist.broadcast(t, src=src)
                check(t, every[src], f"broadcast {dt} {device}")
            outs = [torch.zeros(shape, dtype=DTYPES[dt], device=device) for _ in range(n)]
            dist.all_gather(outs, tensor(every[r], dt, device))
            for k in range(n):
                check(outs[k], every[k], f"all_gather {dt} {device}")
            out = torch.zeros((n * 3, 4), dtype=DTYPES[dt], device=device)
            dist.all_gather_into_tensor(out, tensor(every[r], dt, device))
            check(out, np.concatenate(every), f"all_gather_into_tensor {dt} {device}")
            big = [data(k, (n * 2, 4), dt, seed=1) for k in range(n)]
            out = torch.zeros((2, 4), dtype=DTYPES[dt], device=device)
            dist.reduce_scatter_tensor(out, tensor(big[r], dt, device))
            check(out, reduce_np(big, "SUM", dt)[2 * r:2 * r + 2], f"reduce_scatter_tensor {dt} {device}")
            for root in range(n):
                gl = [torch.zeros(shape, dtype=DTYPES[dt], device=device) for _ in range(n)] if r == root else None
                dist.gather(tensor(every[r], dt, device), gl, dst=root)
                if r == root:
                    for k in range(n):
                        check(gl[k], every[k], f"gather {dt} {device}")
                sl = [tensor(data(k, shape, dt, seed=2 + root), dt, device) for k in range(n)] if r == root else None
                t = torch.zeros(shape, dtype=DTYPES[dt], device=device)
                dist.scatter(t, sl, src=root)
                check(t, data(r, shape, dt, seed=2 + root), f"scatter {dt} {device}")
        # point to point: a ring, blocking and non-blocking
        x = tensor(data(r, shape, "float64"), "float64", device)
        y = torch.zeros(shape, dtype=torch.float64, device=device)
        reqs = [dist.isend(x, dst=(r + 1) % n), dist.irecv(y, src=(r - 1) % n)]
        for q in reqs:
            q.wait()
        check(y, data((r - 1) % n, shape, "float64"), f"isend/irecv {device}")
        if r == 0:
            dist.send(x, dst=1)
        elif r == 1:
            assert dist.recv(y) == 0  # any source: the sender's rank comes back
            check(y, data(0, shape, "float64"), f"send/recv {device}")
        # a strided (non-contiguous) tensor is staged and written back
        t = tensor(data(r, (4, 3), "float32"), "float32", device).t()
        dist.all_reduce(t)
        check(t, reduce_np([data(k, (4, 3), "float32") for k in range(n)], "SUM", "float32").T, "strided")
    # objects
    objs = [None, None]
    if r == 0:
        objs = [{"a": 1}, "two"]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"a": 1}, "two"], objs
    got = [None] * n
    dist.all_gather_object(got, ("rank", r))
    assert got == [("rank", k) for k in range(n)], got
    # sub-groups: ranks {0, n-1}
    g = dist.new_group([0, n - 1])
    if r in (0, n - 1):
        t = torch.tensor([float(r + 1)])
        dist.all_reduce(t, group=g)
        check(t, [1.0 + n], "new_group all_reduce")
        assert dist.get_world_size(g) == 2 and dist.get_rank(g) == (0 if r == 0 else 1)
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    # 0-d tensors, direct and staged
    for dt in ("float64", "bfloat16", "int64", "bool"):
        t = torch.tensor(float(r + 1)).to(DTYPES[dt])
        dist.all_reduce(t)
        check(t, True if dt == "bool" else n * (n + 1) / 2, f"0-d all_reduce {dt}")
    # a contiguous slice (a view at an offset) is reduced in place inside its base
    base = torch.zeros(5, dtype=torch.float64)
    base[1:3] = float(r + 1)
    dist.all_reduce(base[1:3])
    check(base, [0, n * (n + 1) / 2, n * (n + 1) / 2, 0, 0], "slice view")
    # errors: mismatched sizes or shapes raise on every rank instead of corrupting memory
    for bad in (torch.ones(3 + r), torch.ones((2, 3) if r == 0 else (3, 2))):
        try:
            dist.all_reduce(bad)
        except RuntimeError as e:
            assert "different shapes" in str(e), e
        else:
            raise AssertionError("mismatched all_reduce did not raise")
    try:
        dist.broadcast(torch.ones(2 + r), src=0)
    except RuntimeError as e:
        assert "different shapes" in str(e), e
    else:
        raise AssertionError("mismatched broadcast did not raise")
    try:
        dist.all_reduce(torch.ones(3, dtype=torch.float32 if r == 0 else torch.float64))
    except RuntimeError as e:
        assert "dtypes" in str(e), e
    else:
        raise AssertionError("mismatched dtypes did not raise")
    try:
        dist.init_process_group("gloo")
    except ValueError as e:
        assert "twice" in str(e)
    else:
        raise AssertionError("init twice did not raise")
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    try:
        dist.get_rank()
    except ValueError as e:
        assert "has not been initialized" in str(e)
    else:
        raise AssertionError("get_rank after destroy did not raise")
    print(f"OK rank {r}/{n} {checks[0]} checks", flush=True)


if __name__ == "__main__":
    main()
