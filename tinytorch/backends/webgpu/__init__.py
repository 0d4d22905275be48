"""The ``webgpu`` backend: tinytorch on any GPU with a WebGPU implementation, through wgpu-py (wgpu-native over
Vulkan on Linux, Metal on macOS, Direct3D 12 on Windows; Mesa's lavapipe runs it on a CPU).

Memory is storage buffers from a caching allocator (freed blocks are kept per rounded size and reused). Kernels
are WGSL compiled once per source into compute pipelines: elementwise kernels render the shared formulas of
``kernels/formulas.py`` with ``kernels/render.WGSLRenderer``, reductions fold in workgroup memory, matmul is a
tiled kernel staging A and B in workgroup memory. Kernels are recorded into one command encoder and submitted
together; the host waits only where it reads a result (``runtime._Device``).

Layout: ``runtime`` (buffers, the device, allocator, pipelines, batching, host copies, the kernel table), ``wgsl``
(types, loads and stores, helpers, the strided index code), ``backend`` (``WebGPUBackend``: allocator interface
and the elementwise engine), and one module per kind of kernel (``elementwise``, ``reduce``, ``matmul``, ``index``, ``nn``).
"""
# imported for their registrations: each fills runtime.KERNELS, which WebGPUBackend binds
from . import elementwise, index, matmul, nn, reduce  # noqa: F401
from .backend import WebGPUBackend
from .runtime import unavailable_reason

__all__ = ["WebGPUBackend", "unavailable_reason"]
