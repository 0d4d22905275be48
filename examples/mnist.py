"""Train a LeNet-style CNN (or an MLP) on the full MNIST data set with tinytorch.

    python examples/mnist.py                 # CNN, 3 epochs, Adam
    python examples/mnist.py --model mlp     # 784-256-128-10 MLP
    python -m tinytorch.distributed.run --nproc-per-node 2 examples/mnist.py   # data-parallel (DDP) on 2 ranks

Under a distributed launcher (``RANK`` and ``WORLD_SIZE`` set, as ``torchrun`` or ``tinytorch.distributed.run``
do) each rank trains on its shard of the data (DistributedSampler) with the model wrapped in
DistributedDataParallel; ``--batch-size`` is per rank. Rank 0 prints, saves and plots.

The script is plain PyTorch code: ``--torch`` runs the very same code under real PyTorch.

Restarts: with ``--checkpoint-every N`` rank 0 saves a resumable checkpoint (model, optimizer, scheduler, RNG,
position in the epoch, running sums) every N steps and at each epoch's end; a job restarted by the launcher's
``--max-restarts`` (``TORCHELASTIC_RESTART_COUNT`` > 0), or started with ``--resume``, continues from it and ends
as an uninterrupted run would:

    python -m tinytorch.distributed.run --nproc-per-node 2 --max-restarts 3 examples/mnist.py --checkpoint-every 50
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build(nn, kind):
    if kind == "lenet":
        return nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    return nn.Sequential(
        nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),     # 16 x 14 x 14
        nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),    # 32 x 7 x 7
        nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["cnn", "lenet", "mlp"], default="cnn")
    p.add_argument("--epochs", type=int, default=None, help="default: 3 (cnn, lenet) / 5 (mlp)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=os.path.join(HERE, "..", "data", "mnist"))
    p.add_argument("--device", default="cpu")
    p.add_argument("--out-dir", default=os.path.join(HERE, "..", "runs"))
    p.add_argument("--limit", type=int, default=0, help="use only the first N training images (quick runs)")
    p.add_argument("--torch", action="store_true", help="run the same code with real PyTorch")
    p.add_argument("--compile", action="store_true", help="compile the training step with torch.compile")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="save a resumable checkpoint every N steps and at each epoch's end (0: never)")
    p.add_argument("--resume", action="store_true", help="continue from the resumable checkpoint in --out-dir "
                   "(implied when the launcher restarted the job)")
    p.add_argument("--fail-once-at", type=int, default=None,
                   help="fault injection for the restart test: the last rank kills itself before this global "
                        "step of the job's first attempt")
    args = p.parse_args(argv)
    epochs = args.epochs or (5 if args.model == "mlp" else 3)

    if args.torch:
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        import tinytorch
        tt_train = tinytorch.datasets.MNIST(args.data_dir, train=True)
        tt_test = tinytorch.datasets.MNIST(args.data_dir, train=False)
        train = TensorDataset(torch.from_numpy(tt_train._images), torch.from_numpy(tt_train.targets.numpy()))
        test = TensorDataset(torch.from_numpy(tt_test._images), torch.from_numpy(tt_test.targets.numpy()))
    else:
        import tinytorch as torch
        from tinytorch.utils.data import DataLoader
        train = torch.datasets.MNIST(args.data_dir, train=True)
        test = torch.datasets.MNIST(args.data_dir, train=False)
    nn, F = torch.nn, torch.nn.functional
    from tqdm import tqdm

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    rank, world = 0, 1
    if distributed:
        if args.torch:
            import torch.distributed as dist
        else:
            import tinytorch.distributed as dist
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    log = print if rank == 0 else (lambda *a, **k: None)

    if args.limit:
        train = torch.utils.data.Subset(train, list(range(args.limit)))
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    if distributed:
        DistributedSampler = torch.utils.data.DistributedSampler
        sampler = DistributedSampler(train, shuffle=True, seed=args.seed)
        train_loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
        test_loader = DataLoader(test, batch_size=1000, sampler=DistributedSampler(test, shuffle=False))
    else:
        sampler = None
        train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, generator=g)
        test_loader = DataLoader(test, batch_size=1000)
    model = build(nn, args.model).to(args.device)
    net = model
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(net)  # broadcasts rank 0's initial weights
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(train_loader))
    log(net)
    log(f"{sum(p.numel() for p in net.parameters())} parameters, {len(train)} training images, "
        f"device {args.device}" + (f", {world} ranks x batch {args.batch_size}" if distributed else ""))

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    if args.compile:
        train_step = torch.compile(train_step)

    history = []
    resume_path = os.path.join(args.out_dir, f"mnist_{args.model}_resume.pt")
    restarted = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) > 0
    start_epoch, start_step, sums = 1, 0, None
    if (args.resume or restarted) and os.path.exists(resume_path):
        state = torch.load(resume_path, weights_only=False)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        torch.set_rng_state(state["rng"])
        start_epoch, start_step, history = state["epoch"], state["step"], state["history"]
        sums = state["sums"][rank]
        log(f"resumed from {os.path.normpath(resume_path)}: epoch {start_epoch}, step {start_step}", flush=True)

    def save_resumable(epoch, step, total, n):
        """Every rank's running sums go to rank 0, which writes the checkpoint atomically (a kill mid-write
        leaves the previous one); the ranks go on once it is written."""
        every = [None] * world
        if distributed:
            dist.all_gather_object(every, (total, n))
        else:
            every = [(total, n)]
        if rank == 0:
            os.makedirs(args.out_dir, exist_ok=True)
            tmp = resume_path + ".tmp"
            torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                        "rng": torch.get_rng_state(), "epoch": epoch, "step": step, "history": history,
                        "sums": every}, tmp)
            os.replace(tmp, resume_path)
        if distributed:
            dist.barrier()  # the checkpoint is on disk before any rank goes on (and may die)

    global_step = 0
    for epoch in range(1, epochs + 1):
        if epoch < start_epoch:
            global_step += len(train_loader)
            continue
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        total, n = 0.0, 0
        first = 0
        if epoch == start_epoch and sums is not None:
            (total, n), first = sums, start_step
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{epochs}", leave=False, mininterval=2.0,
                   disable=rank != 0)
        for step, (x, y) in enumerate(bar):
            global_step += 1
            if step < first:
                continue  # done before the restart: the data order is the sampler's, so skipping replays it
            if args.fail_once_at == global_step and rank == world - 1 and not restarted:
                os.kill(os.getpid(), 9)
            x, y = x.to(args.device), y.to(args.device)
            loss = train_step(x, y)
            sched.step()
            total += loss.item() * len(y)
            n += len(y)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{total / n:.4f}", refresh=False)
            if args.checkpoint_every and (step + 1) % args.checkpoint_every == 0 and step + 1 < len(train_loader):
                save_resumable(epoch, step + 1, total, n)
        train_time = time.time() - t0
        model.eval()
        correct, seen = 0, 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += int((net(x.to(args.device)).argmax(1) == y.to(args.device)).sum().item())
                seen += len(y)
        if distributed:  # every rank scored its shard of the test set: sum the counts (and the train loss)
            sums = torch.tensor([float(correct), float(seen), total, float(n)], dtype=torch.float64)
            dist.all_reduce(sums)
            correct, seen, total, n = sums.tolist()
        acc = correct / seen
        history.append((total / n, acc))
        log(f"epoch {epoch}: train loss {total / n:.4f}  test accuracy {acc * 100:.2f}%  "
            f"time {train_time:.1f}s", flush=True)
        if args.checkpoint_every:
            save_resumable(epoch + 1, 0, 0.0, 0)

    if distributed:
        dist.destroy_process_group()
        if rank != 0:
            return history
    os.makedirs(args.out_dir, exist_ok=True)
    ckpt = os.path.join(args.out_dir, f"mnist_{args.model}.pt")
    torch.save(net.state_dict(), ckpt)
    print(f"saved state_dict to {os.path.normpath(ckpt)}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 2, figsize=(8, 3))
        ax[0].plot(range(1, epochs + 1), [h[0] for h in history], marker="o")
        ax[0].set_title("train loss")
        ax[1].plot(range(1, epochs + 1), [h[1] * 100 for h in history], marker="o")
        ax[1].set_title("test accuracy (%)")
        for a in ax:
            a.set_xlabel("epoch")
        fig.tight_layout()
        png = os.path.join(args.out_dir, f"mnist_{args.model}.png")
        fig.savefig(png, dpi=100)
        print(f"saved plot to {os.path.normpath(png)}")
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
    return history


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
