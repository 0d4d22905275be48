"""``torch.autocast("opencl", dtype=torch.float16)``: the AutocastPrivateUse1 kernels.

PyTorch 2.13 registers autocast policies for its own devices only (``aten/src/ATen/autocast_mode.cpp``: CUDA, CPU,
MPS, XPU, ...); an op reaching the AutocastPrivateUse1 key finds no kernel. The policy here is the one tinytorch
declares on its op records (``Op.autocast``: matrix products and convolutions in the lower precision, losses and
reductions prone to overflow in float32), with the float32 pointwise and normalization ops of PyTorch's CUDA list
added, since this is a GPU device: fp16 softmax or layer norm loses what CUDA autocast keeps. Every other op passes
through (a fallthrough). A device without the lower-precision dtype fails at the first lower-precision op with
tinytorch's TypeError naming the missing extension (``cl_khr_fp16``).
"""
import torch

from tinytorch._dispatch import OPS

from ._bridge import State

_KEY = "AutocastPrivateUse1"
_EXCLUDE = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)

# float32 ops of PyTorch's CUDA autocast list that tinytorch's records (a CPU policy) do not name
CUDA_FP32 = ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
             "rsqrt", "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm", "norm", "cosine_similarity",
             "dist", "pdist", "renorm", "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "sum", "prod",
             "nll_loss", "nll_loss2d")


def policies():
    """{ATen op packet name: 'lower' | 'fp32'} for this device."""
    aten = torch.ops.aten
    out = {}
    for name, op in OPS.items():
        if op.autocast in ("lower", "fp32") and hasattr(aten, name):
            out[name] = op.autocast
    for name in CUDA_FP32:
        if hasattr(aten, name):
            out.setdefault(name, "fp32")
    return out


def _cast(x, dtype):
    if isinstance(x, torch.Tensor):
        if x.is_floating_point() and x.dtype is not dtype and x.device.type == State.name:
            return x.to(dtype)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    return x


def _kernel(op, policy):
    def kernel(*args, **kwargs):
        dtype = torch.get_autocast_dtype(State.name) if policy == "lower" else torch.float32
        args = [_cast(a, dtype) for a in args]
        kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(_EXCLUDE):
            return op(*args, **kwargs)
    kernel.__name__ = f"autocast_{policy}_{op._schema.name.split('::')[-1]}"
    return kernel


def register(lib, fallback_lib):
    """Register the policy kernels in ``lib`` (namespace aten) and the fallthrough in ``fallback_lib`` (``_``)."""
    aten = torch.ops.aten
    for name, policy in policies().items():
        packet = getattr(aten, name)
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if overload == "out" or overload.endswith("_out") or any(
                    a.alias_info is not None and a.alias_info.is_write for a in op._schema.arguments):
                continue  # out= and in-place overloads keep their dtypes, as in PyTorch's lists
            lib.impl(name if overload == "default" else f"{name}.{overload}", _kernel(op, policy), _KEY)
    fallback_lib.fallback(torch.library.fallthrough_kernel, _KEY)
