"""``torch.ao.quantization.fuser_method_mappings``: which runs of module types ``fuse_modules`` can fuse and
how. In eval mode a BatchNorm is folded into the conv / linear before it (``nn.utils.fusion``, the result
computes the same values) and a trailing ReLU is kept in an intrinsic container; for QAT (training mode) the
modules are kept as they are, grouped in the intrinsic container. Source: PyTorch 2.13's file of this name.
"""
from ... import nn
from ...nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
from ..nn import intrinsic as nni

__all__ = ["fuse_conv_bn", "fuse_conv_bn_relu", "fuse_linear_bn", "fuse_convtranspose_bn", "get_fuser_method"]


def _check_qat_bn(bn, channels, conv_name, bn_name, what):
    if bn.num_features != channels:
        raise AssertionError(what)
    if not bn.affine:
        raise AssertionError(f"Only support fusing {bn_name} with affine set to True")
    if not bn.track_running_stats:
        raise AssertionError(f"Only support fusing {bn_name} with tracking_running_stats set to True")


def fuse_conv_bn(is_qat, conv, bn):
    """Conv{1,2,3}d + BatchNorm: the BN folded into a copy of the conv (eval), or ``nni.ConvBn{N}d(conv, bn)``
    (QAT). AssertionError when the modes differ or (QAT) the BN does not match the conv or lacks affine /
    running statistics; NotImplementedError for another conv type in QAT."""
    if conv.training != bn.training:
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_conv_bn_eval(conv, bn)
    _check_qat_bn(bn, conv.out_channels, "Conv2d", "BatchNorm2d",
                  "Output channel of Conv2d must match num_features of BatchNorm2d.")
    cls = {nn.Conv1d: nni.ConvBn1d, nn.Conv2d: nni.ConvBn2d, nn.Conv3d: nni.ConvBn3d}.get(type(conv))
    if cls is None:
        raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn)}")
    return cls(conv, bn)


def fuse_conv_bn_relu(is_qat, conv, bn, relu):
    """Conv + BatchNorm + ReLU: ``nni.ConvReLU{N}d(conv with BN folded, relu)`` (eval) or
    ``nni.ConvBnReLU{N}d(conv, bn, relu)`` (QAT); errors as ``fuse_conv_bn``."""
    if not (conv.training == bn.training == relu.training):
        raise AssertionError("Conv and BN both must be in the same mode (train or eval).")
    if is_qat:
        _check_qat_bn(bn, conv.out_channels, "Conv2d", "BatchNorm2d",
                      "Output channel of Conv2d must match num_features of BatchNorm2d")
        cls = {nn.Conv1d: nni.ConvBnReLU1d, nn.Conv2d: nni.ConvBnReLU2d, nn.Conv3d: nni.ConvBnReLU3d}.get(type(conv))
        if cls is None:
            raise NotImplementedError(f"Cannot fuse train modules: {(conv, bn, relu)}")
        return cls(conv, bn, relu)
    cls = {nn.Conv1d: nni.ConvReLU1d, nn.Conv2d: nni.ConvReLU2d, nn.Conv3d: nni.ConvReLU3d}.get(type(conv))
    if cls is None:
        raise NotImplementedError(f"Cannot fuse eval modules: {(conv, bn, relu)}")
    return cls(fuse_conv_bn_eval(conv, bn), relu)


def fuse_linear_bn(is_qat, linear, bn):
    """Linear + BatchNorm1d: the BN folded into a copy of the linear (eval) or ``nni.LinearBn1d`` (QAT)."""
    if linear.training != bn.training:
        raise AssertionError("Linear and BN both must be in the same mode (train or eval).")
    if not is_qat:
        return fuse_linear_bn_eval(linear, bn)
    _check_qat_bn(bn, linear.out_features, "Linear", "BatchNorm1d",
                  "Output features of Linear must match num_features of BatchNorm1d")
    return nni.LinearBn1d(linear, bn)


def fuse_convtranspose_bn(is_qat, convt, bn):
    """ConvTranspose + BatchNorm: the BN folded into a copy of the transposed conv (eval only; QAT raises
    Exception "Fusing ConvTranspose+BatchNorm not yet supported in QAT." as PyTorch)."""
    if convt.training != bn.training:
        raise AssertionError("ConvTranspose and BN both must be in the same mode (train or eval).")
    if is_qat:
        raise Exception("Fusing ConvTranspose+BatchNorm not yet supported in QAT.")  # PyTorch's bare Exception
    return fuse_conv_bn_eval(convt, bn, transpose=True)


def _pair_container(cls):
    def fuser(is_qat, m1, m2):
        return cls(m1, m2)
    return fuser


_DEFAULT_OP_LIST_TO_FUSER_METHOD = {
    (nn.Conv1d, nn.BatchNorm1d): fuse_conv_bn,
    (nn.Conv1d, nn.BatchNorm1d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv2d, nn.BatchNorm2d): fuse_conv_bn,
    (nn.Conv2d, nn.BatchNorm2d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv3d, nn.BatchNorm3d): fuse_conv_bn,
    (nn.Conv3d, nn.BatchNorm3d, nn.ReLU): fuse_conv_bn_relu,
    (nn.Conv1d, nn.ReLU): _pair_container(nni.ConvReLU1d),
    (nn.Conv2d, nn.ReLU): _pair_container(nni.ConvReLU2d),
    (nn.Conv3d, nn.ReLU): _pair_container(nni.ConvReLU3d),
    (nn.Linear, nn.BatchNorm1d): fuse_linear_bn,
    (nn.Linear, nn.ReLU): _pair_container(nni.LinearReLU),
    (nn.BatchNorm2d, nn.ReLU): _pair_container(nni.BNReLU2d),
    (nn.BatchNorm3d, nn.ReLU): _pair_container(nni.BNReLU3d),
    (nn.ConvTranspose1d, nn.BatchNorm1d): fuse_convtranspose_bn,
    (nn.ConvTranspose2d, nn.BatchNorm2d): fuse_convtranspose_bn,
    (nn.ConvTranspose3d, nn.BatchNorm3d): fuse_convtranspose_bn,
}


def get_fuser_method(op_list, additional_fuser_method_mapping=None):
    """The fuser for the tuple of module types ``op_list`` (``additional_fuser_method_mapping`` entries
    override the defaults). AssertionError "did not find fuser method for: ..." when there is none."""
    mapping = dict(_DEFAULT_OP_LIST_TO_FUSER_METHOD)
    mapping.update(additional_fuser_method_mapping or {})
    method = mapping.get(op_list)
    if method is None:
        raise AssertionError(f"did not find fuser method for: {op_list} ")
    return method
