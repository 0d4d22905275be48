"""accelerate: prepare a model, optimizer, scheduler and dataloader, train with accelerator.backward and gradient
accumulation, save_state / load_state, unwrap and gather."""
import tempfile

import torch
from _common import prepare_reference, report, summary

prepare_reference()
from accelerate import Accelerator  # noqa: E402
from accelerate.utils import set_seed  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

set_seed(0)
x = torch.randn(48, 6)
y = (x.sum(1) > 0).long()
accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.9 ** step)
loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
model, opt, sched, loader = accelerator.prepare(model, opt, sched, loader)
losses = []
for xb, yb in loader:
    with accelerator.accumulate(model):
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        accelerator.backward(loss)
        opt.step()
        sched.step()
        opt.zero_grad()
    losses.append(loss.item())
with tempfile.TemporaryDirectory() as d:
    accelerator.save_state(d)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    accelerator.load_state(d)
    restored = all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
gathered = accelerator.gather(torch.tensor([float(accelerator.process_index)]))
unwrapped = accelerator.unwrap_model(model)
report({"losses": losses, "restored": restored, "weight": summary(unwrapped[0].weight),
        "lr": opt.param_groups[0]["lr"], "gathered": gathered.tolist(), "device": str(accelerator.device)})
