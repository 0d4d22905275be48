"""``torch.ao.quantization.quantize``: eager-mode post-training and quantization-aware quantization.

Quantizing a model means observing quantization parameters and swapping layers for quantized ones that run
quantized kernels (``quantized::conv2d``, ``quantized::linear`` ...) on quantized tensors. tinytorch has
neither quantized tensors nor those kernels, so each entry point raises NotImplementedError naming the
quantized ops the given model would need; nothing is changed. Source: PyTorch 2.13's file of this name.
"""
from ... import nn
from ..nn import intrinsic as nni
from ..nn.quantized import FloatFunctional
from .stubs import DeQuantStub, QuantStub

__all__ = ["prepare", "prepare_qat", "convert", "quantize", "quantize_dynamic", "quantize_qat"]

# float module type -> the quantized op its quantized replacement runs (torch's default static mappings)
_QUANTIZED_OPS = [
    (QuantStub, "quantize_per_tensor"), (DeQuantStub, "dequantize"),
    (nni.ConvReLU1d, "quantized::conv1d_relu"), (nni.ConvReLU2d, "quantized::conv2d_relu"),
    (nni.ConvReLU3d, "quantized::conv3d_relu"), (nni.LinearReLU, "quantized::linear_relu"),
    (nni.BNReLU2d, "quantized::batch_norm2d_relu"), (nni.BNReLU3d, "quantized::batch_norm3d_relu"),
    (nn.Conv1d, "quantized::conv1d"), (nn.Conv2d, "quantized::conv2d"), (nn.Conv3d, "quantized::conv3d"),
    (nn.ConvTranspose1d, "quantized::conv_transpose1d"), (nn.ConvTranspose2d, "quantized::conv_transpose2d"),
    (nn.ConvTranspose3d, "quantized::conv_transpose3d"), (nn.Linear, "quantized::linear"),
    (nn.BatchNorm2d, "quantized::batch_norm2d"), (nn.BatchNorm3d, "quantized::batch_norm3d"),
    (nn.Embedding, "quantized::embedding_byte"), (nn.Hardswish, "quantized::hardswish"),
    (nn.LayerNorm, "quantized::layer_norm"), (nn.GroupNorm, "quantized::group_norm"),
    (nn.LSTM, "quantized::quantized_lstm"), (FloatFunctional, "quantized::add"),
]


def _needed_ops(model):
    ops = []
    for m in model.modules():
        for cls, op in _QUANTIZED_OPS:
            if isinstance(m, cls):
                if op not in ops:
                    ops.append(op)
                break
    return ops


def _refuse(what, model):
    ops = _needed_ops(model) if isinstance(model, nn.Module) else []
    needs = f" this model would run {', '.join(ops)};" if ops else ""
    raise NotImplementedError(f"torch.ao.quantization.{what}: tinytorch has no quantized tensors or quantized "
                              f"kernels;{needs} run the float model instead")


def prepare(model, inplace=False, allow_list=None, observer_non_leaf_module_list=None,
            prepare_custom_config_dict=None):
    """Would insert observers for quantization; raises NotImplementedError naming the quantized ops."""
    _refuse("prepare", model)


def prepare_qat(model, mapping=None, inplace=False):
    """Would swap in fake-quantized training modules; raises NotImplementedError naming the quantized ops."""
    _refuse("prepare_qat", model)


def convert(module, mapping=None, inplace=False, remove_qconfig=True, is_reference=False,
            convert_custom_config_dict=None, use_precomputed_fake_quant=False):
    """Would swap in quantized modules; raises NotImplementedError naming the quantized ops they run."""
    _refuse("convert", module)


def quantize(model, run_fn, run_args, mapping=None, inplace=False):
    """prepare, calibrate, convert; raises NotImplementedError naming the quantized ops."""
    _refuse("quantize", model)


def quantize_dynamic(model, qconfig_spec=None, dtype=None, mapping=None, inplace=False):
    """Would swap in dynamically quantized modules; raises NotImplementedError naming the quantized ops."""
    _refuse("quantize_dynamic", model)


def quantize_qat(model, run_fn, run_args, inplace=False):
    """prepare_qat, train, convert; raises NotImplementedError naming the quantized ops."""
    _refuse("quantize_qat", model)
