"""A small MLP autoencoder trained with DataLoader + Adam (in the style of common autoencoder tutorials)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
# data on a 3-dimensional subspace of R^20, so a 3-unit bottleneck can reconstruct it
basis = torch.randn(3, 20)
codes = torch.randn(512, 3)
data = codes @ basis + 0.01 * torch.randn(512, 20)
loader = DataLoader(TensorDataset(data), batch_size=32, shuffle=True)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(20, 16), nn.Tanh(), nn.Linear(16, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 20))

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.MSELoss()
for epoch in range(30):
    for (x,) in loader:
        loss = loss_fn(model(x), x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}")
with torch.no_grad():
    final = loss_fn(model(data), data).item()
print(f"RESULT {final:.6f}")
