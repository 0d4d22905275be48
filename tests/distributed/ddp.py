"""DistributedDataParallel against one process training on the concatenated batches, under ``mpiexec -n N``.

Every rank also trains the single-process reference itself (it is cheap), from the parameters rank 0 starts with,
on the concatenation of all ranks' batches; after the DDP run each rank's parameters must equal the reference's
(1e-6). Covers float64 and float32, several bucket sizes, ``gradient_as_bucket_view``, ``no_sync`` gradient
accumulation, ``find_unused_parameters`` (a branch only some ranks use, and one nobody uses), buffer broadcast,
the unfinished-reduction error, ``state_dict`` keys and DistributedSampler's defaults. argv: devices to run on.
Prints ``OK``.
"""
import datetime
import sys

import numpy as np

import tinytorch as torch
import tinytorch.distributed as dist
from tinytorch import nn
from tinytorch.nn.parallel import DistributedDataParallel as DDP

B, D, H, STEPS = 4, 5, 7, 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(D, H)
        self.b = nn.Linear(H, 3)
        self.extra = nn.Linear(H, 3)     # used only where forward(..., use_extra=True)
        self.never = nn.Linear(H, 3)     # used by no rank
        self.register_buffer("scale", torch.ones(3))

    def forward(self, x, use_extra=False):
        h = torch.tanh(self.a(x))
        out = self.b(h) * self.scale
        if use_extra:
            out = out + self.extra(h)
        return out


def batch(rank, step, dtype, device):
    rng = np.random.default_rng(100 * step + rank)
    x = torch.tensor(rng.standard_normal((B, D)), dtype=dtype, device=device)
    y = torch.tensor(rng.integers(0, 3, B), device=device)
    return x, y


def loss_fn(out, y):
    return nn.functional.cross_entropy(out, y)


def run_ddp(dtype, device, n, r, micro=1, unused=False, **ddp_kw):
    torch.manual_seed(r)  # different on every rank: DDP's construction broadcast must make them equal
    net = _freeze(Net().to(device=device, dtype=dtype), unused)
    with torch.no_grad():
        net.scale.fill_(1.0 + r)  # a buffer only rank 0's value of which may survive
    model = DDP(net, find_unused_parameters=unused, **ddp_kw)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    for step in range(STEPS):
        opt.zero_grad()
        for k in range(micro):
            x, y = batch(r, step * micro + k, dtype, device)
            use_extra = unused and r == n - 1
            ctx = model.no_sync() if k < micro - 1 else _null()
            with ctx:
                loss_fn(model(x, use_extra=use_extra), y).backward()
        opt.step()
    return net


def _freeze(net, unused):
    """Without find_unused_parameters every parameter must get a gradient: freeze the branches."""
    if not unused:
        net.extra.requires_grad_(False)
        net.never.requires_grad_(False)
    return net


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def run_reference(dtype, device, n, micro=1, unused=False):
    torch.manual_seed(0)
    net = _freeze(Net().to(device=device, dtype=dtype), unused)
    opt = torch.optim.SGD(net.parameters(), lr=0.5, momentum=0.9)
    for step in range(STEPS):
        opt.zero_grad()
        for k in range(micro):
            xs, ys = zip(*[batch(q, step * micro + k, dtype, device) for q in range(n)])
            h_outs = []
            for q in range(n):  # per-rank forward so that the extra branch applies to the last rank's rows only
                h_outs.append(net(xs[q], use_extra=unused and q == n - 1))
            loss_fn(torch.cat(h_outs), torch.cat(ys)).backward()
        opt.step()
    return net


def compare(got, want, what, tol):
    for (name, p), (_, q) in zip(got.named_parameters(), want.named_parameters()):
        a, b = p.detach().cpu().to(torch.float64).numpy(), q.detach().cpu().to(torch.float64).numpy()
        if not np.allclose(a, b, rtol=tol, atol=tol):
            raise AssertionError(f"rank {dist.get_rank()} {what}: parameter {name} differs by "
                                 f"{np.abs(a - b).max():.3g}")
        if (p.grad is None) != (q.grad is None):
            raise AssertionError(f"{what}: {name}.grad is {p.grad is None and 'None' or 'set'} under DDP, "
                                 f"{q.grad is None and 'None' or 'set'} in one process")
    for (name, p), (_, q) in zip(got.named_buffers(), want.named_buffers()):
        if not np.allclose(p.cpu().numpy(), q.cpu().numpy()):
            raise AssertionError(f"{what}: buffer {name} was not broadcast from rank 0")


def main():
    devices = sys.argv[1:] or ["cpu"]
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    n, r = dist.get_world_size(), dist.get_rank()
    cases = 0
    for device in devices:
        for dtype in (torch.float64, torch.float32):
            if device != "cpu" and dtype == torch.float64:
                try:
                    torch.zeros(1, dtype=dtype, device=device)
                except TypeError:
                    continue
            for kw in ({}, {"bucket_cap_mb": 1e-4}, {"gradient_as_bucket_view": True, "bucket_cap_mb": 2e-4}):
                for micro, unused in ((1, False), (3, False), (1, True), (2, True)):
                    got = run_ddp(dtype, device, n, r, micro=micro, unused=unused, **kw)
                    want = run_reference(dtype, device, n, micro=micro, unused=unused)
                    compare(got, want, f"{device} {dtype} {kw} micro={micro} unused={unused}", 1e-6)
                    cases += 1
    # state_dict keys and .module
    m = DDP(_freeze(Net(), False))
    assert all(k.startswith("module.") for k in m.state_dict()), list(m.state_dict())
    assert isinstance(m.module, Net)
    # bucket layout: reverse parameter order, one bucket per parameter at a tiny cap
    m = DDP(_freeze(Net(), False), bucket_cap_mb=1e-6)
    assert [b.params[0] is p for b, p in zip(m._buckets, reversed(m._params))] == [True] * len(m._params)
    # overlap: every bucket but the last one's all-reduce started before the last gradient was produced
    x, y = batch(r, 0, torch.float32, "cpu")
    loss_fn(m(x), y).backward()
    assert m._get_ddp_logging_data()["buckets_started_during_backward"] == len(m._buckets) - 1 == 3
    # a parameter without gradient and no find_unused_parameters: the next forward raises, as PyTorch's
    m = DDP(Net())
    x, y = batch(r, 0, torch.float32, "cpu")
    loss_fn(m(x), y).backward()
    try:
        m(x)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e)
    else:
        raise AssertionError("unfinished reduction did not raise")
    # buffers of every dtype (BatchNorm's float statistics, its 0-d int64 counter) come from rank 0, at
    # construction and again at each forward (broadcast_buffers)
    torch.manual_seed(r)
    bn = nn.Sequential(nn.Linear(D, 4), nn.BatchNorm1d(4))
    bn[1].num_batches_tracked.fill_(10 * r)
    bn[1].running_var.fill_(1.0 + r)
    m = DDP(bn)
    every = [None] * n
    dist.all_gather_object(every, [b.tolist() for b in bn.buffers()])
    assert all(e == every[0] for e in every) and every[0][2] == 0, every
    m(batch(r, 0, torch.float32, "cpu")[0] + r)  # the ranks' statistics diverge ...
    m(batch(r, 0, torch.float32, "cpu")[0])      # ... and the next forward starts from rank 0's again
    dist.all_gather_object(every, bn[1].num_batches_tracked.item())
    assert every == [2] * n, every
    # DistributedSampler takes rank and world size from the process group
    sampler = torch.utils.data.DistributedSampler(list(range(11)), shuffle=False)
    padded = (list(range(11)) * 2)[:11 + (-11) % n]  # wrapped around to a multiple of n, as PyTorch's
    assert sampler.num_replicas == n and sampler.rank == r and list(sampler) == padded[r::n]
    dist.destroy_process_group()
    print(f"OK rank {r}/{n} ddp {cases} cases", flush=True)


if __name__ == "__main__":
    main()
