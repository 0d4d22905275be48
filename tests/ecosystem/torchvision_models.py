"""torchvision's pure-Python parts: resnet18 forward/backward, transforms.v2 on uint8 images and bounding boxes
(tv_tensors), create_feature_extractor; and the compiled ops failing with torchvision's own message."""
import torch
from _common import UNDER_TINYTORCH, prepare_reference, report, summary

prepare_reference()
import torchvision  # noqa: E402
from torchvision import tv_tensors  # noqa: E402
from torchvision.models.feature_extraction import create_feature_extractor  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

result = {}
torch.manual_seed(0)
# float64: conv1's gradient passes batch norms over 4 values a channel (batch 2, 2x2 at layer4), whose float32
# rounding moves it by percents (torch's own float32 run is 1% off its float64 one)
model = torchvision.models.resnet18(num_classes=10).double()
x = torch.randn(2, 3, 64, 64, dtype=torch.float64)
out = model(x)
out.sum().backward()
result["resnet18"] = {"out": summary(out), "grad": summary(model.conv1.weight.grad)}
model.eval()
extractor = create_feature_extractor(model, return_nodes={"layer1": "l1", "avgpool": "pool"})
with torch.no_grad():
    feats = extractor(x)
result["features"] = {k: summary(v) for k, v in sorted(feats.items())}

torch.manual_seed(0)
image = torch.randint(0, 256, (3, 48, 64), dtype=torch.uint8)
boxes = tv_tensors.BoundingBoxes([[4, 6, 30, 40], [10, 10, 50, 45]], format="XYXY", canvas_size=(48, 64))
resized_img, resized_boxes = v2.Resize((24, 32), antialias=True)(tv_tensors.Image(image), boxes)
result["resize"] = {"image": summary(resized_img.float()), "dtype": str(resized_img.dtype),
                    "boxes": resized_boxes.tolist(), "box_type": type(resized_boxes).__name__,
                    "canvas": list(resized_boxes.canvas_size)}
pipeline = v2.Compose([v2.RandomHorizontalFlip(p=1.0), v2.CenterCrop(32), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25])])
result["pipeline"] = summary(pipeline(tv_tensors.Image(image)))
if UNDER_TINYTORCH:  # the compiled ops: torchvision's own error (the reference has no kernels for them either)
    try:
        torchvision.ops.nms(torch.rand(3, 4), torch.rand(3), 0.5)
        result["nms"] = "ran"
    except RuntimeError as e:
        result["nms_error"] = str(e).split(".")[0]
report(result)
