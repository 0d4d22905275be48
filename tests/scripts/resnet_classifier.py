"""A residual CNN with BatchNorm, in-place ReLUs, Nesterov SGD, cosine annealing, label smoothing, a custom
Dataset and a checkpoint round trip (in the style of common CIFAR ResNet training scripts)."""
import os, tempfile, time
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
torch.manual_seed(0)
class Toy(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(1)
        self.x = torch.randn(n, 3, 16, 16, generator=g)
        self.y = (self.x[:, 0].mean(dim=(1, 2)) > 0).long()
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return self.x[i], self.y[i]
class Block(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x), inplace=True)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.layers = nn.Sequential(Block(8, 8), Block(8, 16, 2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1)); self.fc = nn.Linear(16, 2)
    def forward(self, x):
        x = self.layers(self.stem(x)); x = torch.flatten(self.pool(x), 1); return self.fc(x)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
train = DataLoader(Toy(512), batch_size=64, shuffle=True, num_workers=0, pin_memory=False, drop_last=True)
test = DataLoader(Toy(128), batch_size=128)
for epoch in range(5):
    model.train(); tot = 0
    for i, (x, y) in enumerate(train):
        out = model(x); loss = F.cross_entropy(out, y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); tot += loss.item()
    sched.step()
    model.eval(); correct = 0
    with torch.no_grad():
        for x, y in test:
            pred = model(x).argmax(dim=1); correct += (pred == y).sum().item()
    print(f"epoch {epoch} loss {tot / len(train):.4f} acc {100. * correct / len(test.dataset):.1f}% lr {sched.get_last_lr()[0]:.4f}")
path = os.path.join(tempfile.mkdtemp(), "ckpt.pth")
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, path)
ck = torch.load(path, map_location="cpu")
m2 = Net(); m2.load_state_dict(ck["model"]); m2.eval()
o2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9); o2.load_state_dict(ck["optimizer"])
x, _ = next(iter(test))
with torch.inference_mode():
    print("reload max diff", (m2(x) - model(x)).abs().max().item(), "params", sum(p.numel() for p in m2.parameters() if p.requires_grad))
print(model.layers[1].bn1.running_mean[:3], model.layers[1].bn1.num_batches_tracked)
print(f"RESULT {correct / len(test.dataset):.4f}")
