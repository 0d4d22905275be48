"""timm: resnet18 and a small ViT (random init) forward and backward, and resnet18's fx feature extractor."""
import torch
from _common import prepare_reference, report, summary

prepare_reference()
import timm  # noqa: E402

result = {}
torch.manual_seed(0)
x = torch.randn(2, 3, 64, 64)
for name, kw in (("resnet18", {}), ("vit_tiny_patch16_224", {"img_size": 64, "patch_size": 16})):
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10, **kw)
    out = model(x)
    out.square().mean().backward()
    first = next(p for p in model.parameters() if p.grad is not None)
    result[name] = {"out": summary(out), "grad": summary(first.grad),
                    "params": sum(p.numel() for p in model.parameters())}
torch.manual_seed(0)
features = timm.create_model("resnet18", pretrained=False, features_only=True, feature_cls="fx", out_indices=(1, 3))
result["features"] = [summary(f) for f in features(x)]
report(result)
