"""``torch.ao.quantization`` on float models: QuantStub / DeQuantStub / QuantWrapper (identities around a
float model), ``fuse_modules`` / ``fuse_modules_qat`` (conv / linear + bn (+ relu) fusion, BN folded with
``nn.utils.fusion``), ``QConfig``. The quantizing passes (prepare, convert, quantize ...) raise
NotImplementedError naming the quantized kernels, which tinytorch does not have. Source: PyTorch 2.13.
"""
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat
from .fuser_method_mappings import (fuse_conv_bn, fuse_conv_bn_relu, fuse_convtranspose_bn, fuse_linear_bn,
                                    get_fuser_method)
from .qconfig import QConfig
from .quantize import convert, prepare, prepare_qat, quantize, quantize_dynamic, quantize_qat
from .stubs import DeQuantStub, QuantStub, QuantWrapper

__all__ = ["DeQuantStub", "QConfig", "QuantStub", "QuantWrapper", "convert", "fuse_conv_bn", "fuse_conv_bn_relu",
           "fuse_convtranspose_bn", "fuse_known_modules", "fuse_linear_bn", "fuse_modules", "fuse_modules_qat",
           "get_fuser_method", "prepare", "prepare_qat", "quantize", "quantize_dynamic", "quantize_qat"]
