"""The ``opencl`` backend: tinytorch on any OpenCL 1.2+ device (AMD, Intel, Apple, NVIDIA, PoCL on a CPU).

Memory is ``pyopencl`` buffers from a caching allocator (freed blocks are kept per rounded size and
reused, as PyTorch's CUDA caching allocator does). Kernels are OpenCL C generated from small templates
(``_ELEMENTWISE`` expressions, reductions, scans, sort, a tiled GEMM, fused softmax) and compiled once
per (source, device): the program cache. Every kernel reads its inputs through (offset, strides), so
views reach kernels without a copy to contiguous memory first.

Indexing ops whose targets depend on data (advanced indexing, scatter, index_add) compute the element
offsets on the host from the index values (the indices are read back once, as PyTorch reads back a
boolean mask) and run a gather kernel or a segmented scatter kernel; duplicates accumulate in index
order, so results are deterministic and equal the cpu backend's.

Layout: ``runtime`` (buffers, devices, program cache, launches, the kernel tables), ``codegen`` (C types and the
strided index code), ``backend`` (``OpenCLBackend``: allocator and the elementwise engine), and one module per
kind of kernel (``elementwise``, ``reduce``, ``matmul``, ``index``, ``nn``, ``fused``), each registering its
kernels next to their code.
"""
# imported for their registrations: each fills runtime.KERNELS / INPLACE_KERNELS, which OpenCLBackend binds
from . import elementwise, fused, index, matmul, nn, optim, reduce  # noqa: F401
from .backend import OpenCLBackend
from .runtime import unavailable_reason

__all__ = ["OpenCLBackend", "unavailable_reason"]
