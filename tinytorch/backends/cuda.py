"""``torch.backends.cuda``: tinytorch has no CUDA backend (``is_built()`` is False). ``matmul.allow_tf32``
mirrors ``torch.get/set_float32_matmul_precision`` ('high' when True), as in PyTorch; the reduced-precision
reduction switches are recorded without effect (they concern CUDA GEMMs)."""


class _Matmul:
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        from .._legacy import get_float32_matmul_precision
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        from .._legacy import set_float32_matmul_precision
        set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


def is_built():
    return False

