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


def is_built():
    """Whether the cuda device can be used given a driver: cuda-bindings is installed (the ``cuda`` extra)."""
    from . import runtime
    return runtime._bindings()

