"""Which scaled-dot-product-attention kernels a program allows: the switches behind
``torch.backends.cuda.enable_*_sdp`` and ``torch.nn.attention.sdpa_kernel``, and the kernel choice that
``F.scaled_dot_product_attention`` makes from them.

PyTorch on the CPU has two kernels: math, and a flash kernel computing the same function for 4-D inputs without
dropout; it takes flash first when allowed and the inputs fit, else math. We follow that choice so that a program
gets PyTorch's error exactly when PyTorch would find no kernel. Which of tinytorch's two implementations runs does
not depend on these switches: the fused op (``_scaled_dot_product_flash_attention_for_cpu``, a FlashAttention
kernel on the cpu backend) takes float32/float64 calls without dropout, the math path (softmax(q k^T * scale +
mask) v, which draws dropout as PyTorch's math kernel does) the rest; the two differ only by float rounding. On other devices every allowed fused
kernel counts as able to run. Source: aten/src/ATen/native/transformers/sdp_utils_cpp.cpp (PyTorch 2.13).
"""
import warnings

# PyTorch's default: all on; priority order as torch._C._get_sdp_priority_order() (backend numbers)
_enabled = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
_priority = [1, 2, 0, 3, 4]


def enabled(name):
    """Whether backend ``name`` ('flash', 'mem_efficient', 'math', 'cudnn', 'overrideable') is allowed."""
    return _enabled[name]


def set_enabled(name, value):
    """Allow or forbid backend ``name``."""
    _enabled[name] = bool(value)


def priority():
    """The backend numbers (SDPBackend values) in the order the kernel choice tries them."""
    return list(_priority)


def set_priority(order):
    """Replace the priority order (a list of SDPBackend numbers)."""
    _priority[:] = [int(b) for b in order]


def _cpu_flash_unfit(query, key, value, dropout_p):
    """Why PyTorch's CPU flash kernel cannot take these inputs (its debug message), or None when it can."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
                f"{query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    if query.dtype.name not in ("float32", "float64", "float16", "bfloat16"):
        return (f"Expected query, key and value to all be of dtype: {{Float, Double, BFloat16, Half}}. Got Query "
                f"dtype: {query.dtype}, Key dtype: {key.dtype}, and Value dtype: {value.dtype} instead.")
    return None


def check_kernel_available(query, key, value, dropout_p):
    """Raise PyTorch's RuntimeError when the allowed backends leave no kernel for these inputs:
    "No viable backend ..." when math and flash are both off, "No available kernel.  Aborting execution."
    (after PyTorch's UserWarnings naming the reason) when only flash is on and it cannot take the inputs."""
    flash, math = _enabled["flash"], _enabled["math"]
    if query.device.type != "cpu":
        if math or flash or _enabled["mem_efficient"] or _enabled["cudnn"]:
            return
        flash = math = False
    if not flash and not math:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    if math:
        return
    reason = _cpu_flash_unfit(query, key, value, dropout_p)
    if reason is not None:
        warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
        warnings.warn(reason, UserWarning, stacklevel=3)
        raise RuntimeError("No available kernel.  Aborting execution.")
