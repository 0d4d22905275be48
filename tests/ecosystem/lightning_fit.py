"""Lightning: a LightningModule trained by Trainer.fit on the cpu (two epochs), validated and tested."""
import os
import tempfile

import torch
from _common import prepare_reference, report

prepare_reference()
import lightning as L  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        self.losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.losses.append(loss.item())
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=0.01)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)}


torch.manual_seed(0)
x = torch.randn(64, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1
data = TensorDataset(x, y)
with tempfile.TemporaryDirectory() as d:
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=d, deterministic=True)
    trainer.fit(model, DataLoader(data, batch_size=16, shuffle=True), DataLoader(data, batch_size=32))
    val_loss = trainer.callback_metrics["val_loss"].item()
    tested = trainer.test(model, DataLoader(data, batch_size=32), verbose=False)
    ckpts = sorted(os.listdir(os.path.join(d, "checkpoints")))
    restored = Regressor.load_from_checkpoint(os.path.join(d, "checkpoints", ckpts[-1]))
    same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), restored.state_dict().values()))
report({"losses": model.losses, "val_loss": val_loss,
        "test": tested[0]["test_loss"], "lr": trainer.optimizers[0].param_groups[0]["lr"],
        "global_step": trainer.global_step, "checkpoints": ckpts, "restored_equal": same})
