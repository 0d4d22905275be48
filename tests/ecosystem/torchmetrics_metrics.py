"""torchmetrics: classification and regression metrics updated over batches, computed, reset and collected."""
import torch
from _common import prepare_reference, report

prepare_reference()
import torchmetrics  # noqa: E402
from torchmetrics.classification import MulticlassAccuracy, MulticlassAUROC, MulticlassF1Score  # noqa: E402

torch.manual_seed(0)
metrics = torchmetrics.MetricCollection({"acc": MulticlassAccuracy(num_classes=4), "f1": MulticlassF1Score(
    num_classes=4, average="macro"), "auroc": MulticlassAUROC(num_classes=4)})
mse = torchmetrics.MeanSquaredError()
result = {"batches": []}
for _ in range(3):
    logits = torch.randn(16, 4)
    target = torch.randint(0, 4, (16,))
    batch = metrics(logits.softmax(-1), target)
    result["batches"].append({k: v.item() for k, v in sorted(batch.items())})
    mse.update(torch.randn(8), torch.randn(8))
result["epoch"] = {k: v.item() for k, v in sorted(metrics.compute().items())}
result["mse"] = mse.compute().item()
metrics.reset()
result["functional_acc"] = torchmetrics.functional.accuracy(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2]),
                                                            task="multiclass", num_classes=3).item()
report(result)
