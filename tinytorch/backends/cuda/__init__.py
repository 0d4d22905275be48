"""The ``cuda`` device and ``torch.backends.cuda``.

The device: ``runtime.py`` (NVIDIA's driver API through cuda-bindings: context, stream, NVRTC, the caching
allocator), ``blas.py`` (cuBLAS GEMMs), ``backend.py`` (``CUDABackend``: the ``opencl`` backend's kernels on that
runtime). Nothing here imports cuda-bindings until the device is first used.

This module itself is ``torch.backends.cuda``: ``is_built()``; ``matmul.allow_tf32`` mirrors
``torch.get/set_float32_matmul_precision`` ('high' when True), as in PyTorch, and is what the cuBLAS GEMMs read
(TF32 off by default); the reduced-precision reduction switches are recorded without effect (float16 and
bfloat16 GEMMs always accumulate in float32).
"""


class _Matmul:
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        from ..._legacy import get_float32_matmul_precision
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        from ..._legacy import set_float32_matmul_precision
        set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


def _sdp_switch(name, what):
    from .. import _sdp

    def query():
        return _sdp.enabled(name)

    def enable(enabled):
        _sdp.set_enabled(name, enabled)

    query.__name__, enable.__name__ = f"{name}_sdp_enabled", f"enable_{name}_sdp"
    query.__doc__ = f"Whether {what} may be used by scaled_dot_product_attention (``torch.backends.cuda``)."
    enable.__doc__ = f"Allow or forbid {what} in scaled_dot_product_attention (``torch.backends.cuda``)."
    return query, enable


# the switches of torch.nn.attention.sdpa_kernel; see tinytorch/backends/_sdp.py for what they select
flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash", "the flash attention kernel")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient", "the memory-efficient kernel")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math", "the math kernel")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn", "the cuDNN attention kernel")


def is_built():
    """Whether the cuda device can be used given a driver: cuda-bindings is installed (the ``cuda`` extra)."""
    from . import runtime
    return runtime._bindings()

