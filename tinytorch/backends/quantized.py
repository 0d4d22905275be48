"""``torch.backends.quantized``: the quantized engine. tinytorch has no quantized kernels, so no engine is
supported: ``supported_engines`` is empty and ``engine`` stays ``"none"``; selecting a real engine raises
PyTorch's RuntimeError for an engine the build lacks (what programs such as torchvision's ``quantize_model``
check before quantizing). Source: torch/backends/quantized/__init__.py (PyTorch 2.13).
"""
import sys
import types

_ENGINES = {"none": 0, "": 0, None: 0, "fbgemm": 1, "qnnpack": 2, "onednn": 3, "x86": 4}
_C_NAMES = {1: "FBGEMM", 2: "QNNPACK", 3: "ONEDNN", 4: "X86"}


class _QuantizedModule(types.ModuleType):
    @property
    def engine(self):
        """The quantized engine in use: always "none" (no quantized kernels)."""
        return "none"

    @engine.setter
    def engine(self, value):
        if value not in _ENGINES:
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        engine_id = _ENGINES[value]
        if engine_id:
            raise RuntimeError(f"quantized engine {_C_NAMES[engine_id]} is not supported")

    @property
    def supported_engines(self):
        """The engines this build has: none."""
        return []

    @supported_engines.setter
    def supported_engines(self, value):
        raise RuntimeError("Assignment not supported")


sys.modules[__name__].__class__ = _QuantizedModule
