"""Train a LeNet-style CNN (or an MLP) on the full MNIST data set with tinytorch.

    python examples/mnist.py                 # CNN, 3 epochs, Adam
    python examples/mnist.py --model mlp     # 784-256-128-10 MLP

The script is plain PyTorch code: ``--torch`` runs the very same code under real PyTorch.
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

    if args.limit:
        train = torch.utils.data.Subset(train, list(range(args.limit)))
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, generator=g)
    test_loader = DataLoader(test, batch_size=1000)
    model = build(nn, args.model).to(args.device)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(train_loader))
    print(model)
    print(f"{sum(p.numel() for p in model.parameters())} parameters, {len(train)} training images, "
          f"device {args.device}")

    def train_step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    if args.compile:
        train_step = torch.compile(train_step)

    history = []
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.time()
        total, n = 0.0, 0
        bar = tqdm(train_loader, desc=f"epoch {epoch}/{epochs}", leave=False, mininterval=2.0)
        for step, (x, y) in enumerate(bar):
            x, y = x.to(args.device), y.to(args.device)
            loss = train_step(x, y)
            sched.step()
            total += loss.item() * len(y)
            n += len(y)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{total / n:.4f}", refresh=False)
        train_time = time.time() - t0
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += int((model(x.to(args.device)).argmax(1) == y.to(args.device)).sum().item())
        acc = correct / len(test)
        history.append((total / n, acc))
        print(f"epoch {epoch}: train loss {total / n:.4f}  test accuracy {acc * 100:.2f}%  "
              f"time {train_time:.1f}s", flush=True)

    os.makedirs(args.out_dir, exist_ok=True)
    ckpt = os.path.join(args.out_dir, f"mnist_{args.model}.pt")
    torch.save(model.state_dict(), ckpt)
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
