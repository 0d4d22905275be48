"""``torch._dynamo.utils``: ``is_compile_supported``."""

__all__ = ["is_compile_supported"]


def is_compile_supported(device_type):
    """Whether ``torch.compile`` generates code for device type ``device_type`` (a str or ``device``): tinytorch's
    compiler fuses kernels for ``cpu`` (C++), ``cuda`` and ``opencl`` (OpenCL C); other devices run their graphs
    op by op, which PyTorch's answer (False) describes."""
    from ..device import device
    return device(device_type).type in ("cpu", "cuda", "opencl")
