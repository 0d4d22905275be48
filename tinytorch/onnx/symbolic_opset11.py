"""``torch.onnx.symbolic_opset11``: in PyTorch, the ONNX opset-11 translations of ATen ops that its TorchScript
exporter calls and that packages' own symbolic functions call in turn (torchvision's ``nms`` calls
``symbolic_opset11.select``). tinytorch has no exporter, so it has none of these translations: a symbolic function
reaching for one gets AttributeError, which only an export (that never happens) would trigger; packages import
the module when they register their symbolic functions."""
__all__ = []
