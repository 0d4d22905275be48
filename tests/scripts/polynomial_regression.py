"""Fit a cubic polynomial with nn.Linear on polynomial features (in the style of pytorch/examples regression)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
POLY_DEGREE = 3
W_target = torch.tensor([[0.5], [-1.2], [0.3]])
b_target = torch.tensor([0.8])


def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    return x.mm(W_target) + b_target.item()


def get_batch(batch_size=32):
    random = torch.randn(batch_size)
    x = make_features(random)
    return x, f(x)


fc = nn.Linear(W_target.size(0), 1)
opt = torch.optim.SGD(fc.parameters(), lr=0.05)
for batch_idx in range(1, 2001):
    batch_x, batch_y = get_batch()
    fc.zero_grad()
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    output.backward()
    opt.step()
    if loss < 1e-4:
        break
print(f"Loss: {loss:.6f} after {batch_idx} batches")
print("weights", [round(w, 2) for w in fc.weight.view(-1).tolist()], "bias", round(fc.bias.item(), 2))
print(f"RESULT {loss:.6f}")
