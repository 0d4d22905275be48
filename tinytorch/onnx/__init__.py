"""``torch.onnx``: importable so that programs which import it unconditionally run; exporting is not
implemented.

What works as in PyTorch: ``is_in_onnx_export()`` (always False: no export ever runs), the enums
``TrainingMode`` / ``OperatorExportTypes`` / ``TensorProtoDataType`` with PyTorch's members and values, the
exception classes (``errors``, ``OnnxExporterError``), ``ExportableModule`` (an ``nn.Module`` base with
``example_arguments`` abstract), and ``select_model_mode_for_export`` (sets and restores the training mode).
Everything that would produce an ONNX model (``export``, ``ONNXProgram``, ``ExportableModule.to_onnx``,
``register_custom_op_symbolic``, ``InputObserver``, and PyTorch's deprecated TorchScript-exporter members)
raises NotImplementedError naming itself.
"""
import abc
import contextlib
import enum

from . import errors, symbolic_helper, symbolic_opset11  # noqa: F401
from .errors import OnnxExporterError
from .. import nn as _nn

__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram", "ExportableModule",
           "InputObserver"]

producer_name = "pytorch"
producer_version = "2.13.0"  # the PyTorch release whose API this package mirrors (torch.onnx.producer_version)


def _unsupported(name):
    return NotImplementedError(f"{name} is not implemented in tinytorch: it has no ONNX exporter")


class _Enum(enum.Enum):
    """PyTorch's (pybind11) enums: ``int(member)`` is the value, but a member never equals an int."""

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value


class TrainingMode(_Enum):
    """``torch.onnx.TrainingMode``: the training mode a model is exported in."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(_Enum):
    """``torch.onnx.OperatorExportTypes``."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TensorProtoDataType(enum.IntEnum):
    """``torch.onnx.TensorProtoDataType``: ONNX's element types, with ONNX's numbers (an arithmetic enum in
    PyTorch: members equal their ints)."""
    __str__ = enum.Enum.__str__
    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E4M3FNUZ = 18
    FLOAT8E5M2 = 19
    FLOAT8E5M2FNUZ = 20


def is_in_onnx_export():
    """Whether an ONNX export is running: always False here (``torch.onnx.is_in_onnx_export``), so models
    that branch on it take their ordinary path."""
    return False


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False,
           artifacts_dir=".", export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX, do_constant_folding=True,
           custom_opsets=None, export_modules_as_functions=False, autograd_inlining=True):
    """``torch.onnx.export`` (PyTorch's signature): NotImplementedError, tinytorch has no ONNX exporter."""
    raise _unsupported("torch.onnx.export")


# (name, opset) -> symbolic function: what an exporter would consult; tinytorch has none, so registering is all
# that happens (packages such as torchvision register theirs at import)
_custom_symbolics = {}


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Register ``symbolic_fn`` as the ONNX translation of op ``symbolic_name`` (``ns::name``) from
    ``opset_version`` on (``torch.onnx.register_custom_op_symbolic``). tinytorch has no exporter that would call
    it. ``OnnxExporterError``, as PyTorch's, for a name not of the form ``domain::name`` (the name starting with a
    letter)."""
    import re
    if not re.match(r"^[a-zA-Z0-9-_]*::[a-zA-Z-_]+[a-zA-Z0-9-_]*$", symbolic_name):
        raise OnnxExporterError(f"Failed to register operator {symbolic_name}. The symbolic name must match the "
                                "format domain::name, and should start with a letter and contain only alphanumeric "
                                "characters")
    _custom_symbolics[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove a registration of ``register_custom_op_symbolic`` (nothing when there is none)."""
    _custom_symbolics.pop((symbolic_name, opset_version), None)


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Context manager: ``model.train(True)`` for TrainingMode.TRAINING, ``model.train(False)`` for EVAL,
    nothing for PRESERVE; the original mode is restored on exit (``torch.onnx.select_model_mode_for_export``).
    TypeError when ``mode`` is not a TrainingMode."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got '{type(mode)}'.")
    originally_training = False
    if hasattr(model, "training"):
        originally_training = model.training
        if mode == TrainingMode.TRAINING:
            model.train(True)
        elif mode == TrainingMode.EVAL:
            model.train(False)
    try:
        yield
    finally:
        if hasattr(model, "training") and mode != TrainingMode.PRESERVE:
            model.train(originally_training)


class ONNXProgram:
    """``torch.onnx.ONNXProgram``: what ``export`` returns in PyTorch. Constructing one raises
    NotImplementedError."""

    def __init__(self, model, exported_program):
        raise _unsupported("torch.onnx.ONNXProgram")


class InputObserver:
    """``torch.onnx.InputObserver`` (collects a model's inputs for export): NotImplementedError."""

    def __init__(self, *args, **kwargs):
        raise _unsupported("torch.onnx.InputObserver")


class ExportableModule(_nn.Module, abc.ABC):
    """``torch.onnx.ExportableModule``: an ``nn.Module`` that describes its own export (``example_arguments``
    is abstract; ``dynamic_shapes``, ``input_names``, ``output_names`` default to None). It runs as any module;
    ``to_onnx`` raises NotImplementedError."""

    @abc.abstractmethod
    def example_arguments(self):
        """``(args, kwargs)`` for ``forward``."""
        raise NotImplementedError

    def dynamic_shapes(self):
        return None

    def input_names(self):
        return None

    def output_names(self):
        return None

    def to_onnx(self, **kwargs):
        raise _unsupported("torch.onnx.ExportableModule.to_onnx")


# PyTorch's deprecated TorchScript-exporter members: importable names in PyTorch, not implemented here
_NOT_IMPLEMENTED = ("ops", "utils", "symbolic_helper", "symbolic_opset9", "symbolic_opset10", "JitScalarType",
                    "dynamo_export", "ExportOptions", "enable_fake_mode", "is_onnxrt_backend_supported")


def __getattr__(name):
    if name in _NOT_IMPLEMENTED:
        raise _unsupported(f"torch.onnx.{name}")
    raise AttributeError(f"module 'torch.onnx' has no attribute '{name}'")
