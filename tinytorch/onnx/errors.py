"""``torch.onnx.errors``: the exporter's exception and warning classes, with PyTorch's hierarchy (every
exporter error is a RuntimeError), so ``except torch.onnx.errors.OnnxExporterError`` clauses work."""

__all__ = ["OnnxExporterWarning", "SymbolicValueError", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings from the ONNX exporter."""


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter; the base class of every exporter error."""


class UnsupportedOperatorError(OnnxExporterError):
    """An operator the exporter does not support (PyTorch's message for ``name``, ``version`` and
    ``supported_version``)."""

    def __init__(self, name, version, supported_version):
        if supported_version is not None:
            msg = (f"Exporting the operator '{name}' to ONNX opset version {version} is not supported. Support "
                   f"for this operator was added in version {supported_version}, try exporting with this version")
        elif name.startswith(("aten::", "prim::", "quantized::")):
            msg = f"Exporting the operator '{name}' to ONNX opset version {version} is not supported"
        else:
            msg = (f"ONNX export failed on an operator with unrecognized namespace {name}. If you are trying to "
                   "export a custom operator, make sure you registered it with the right domain and version.")
        super().__init__(msg)


class SymbolicValueError(OnnxExporterError):
    """Errors around TorchScript values and nodes (tinytorch has no TorchScript graph: ``value`` is shown as
    given)."""

    def __init__(self, msg, value):
        super().__init__(f"{msg}  [Caused by the value '{value}']")
