"""The backend interface.

A backend is an *allocator* (memory for storages, copies host<->device) plus a table of *kernels*
keyed by op name. Kernels receive backend-native arrays (whatever ``view`` returns: for NumPy an
``ndarray`` view with the tensor's shape, strides and offset) and keyword attributes, and return new
native arrays. They never see ``Tensor`` or autograd. ``docs/backends.md`` lists the primitive ops.
"""
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

import numpy as np


class KernelTable(dict):
    """``{op name: kernel}`` of one backend. Kernels are registered where they are written, with the
    ``register`` decorator (or ``add`` for one-line kernels built from a library function); a name registered
    twice is an error at import. ``Backend.check_kernels`` compares the names with the op registry when the
    backend is registered, so a misspelt name fails then, not when the op is first called."""

    def __init__(self, backend_name: str):
        super().__init__()
        self.backend_name = backend_name

    def add(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn`` as the kernel of op ``name``; returns ``fn``. Raises RuntimeError on a second one."""
        if name in self:
            raise RuntimeError(f"backend '{self.backend_name}': a kernel for op '{name}' is registered twice")
        self[name] = fn
        return fn

    def register(self, *names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: ``@KERNELS.register("gelu")`` registers the function under each op name given."""
        def deco(fn):
            for n in names:
                self.add(n, fn)
            return fn
        return deco


class Backend:
    """Base class of device backends. Subclasses fill ``kernels`` and implement the allocator.

    Type of the values: ``Buffer`` is whatever the allocator hands out (an ``ndarray`` for cpu, a ``CLBuffer`` for
    opencl), ``Native`` what kernels receive and return (an ``ndarray`` view, a ``CLArray``); dtypes are
    ``tinytorch.dtype`` objects."""

    name: Optional[str] = None
    kernels: Optional[Dict[str, Callable[..., Any]]] = None
    shape_only: bool = False  # True for the meta device: outputs come from the meta functions, no kernels run
    # the language of the backend's generated kernels ('c++', 'opencl'); None: the compiler fuses nothing on it
    kernel_language: Optional[str] = None
    # the module of the compiler's code generator for this backend's fused kernels (its ``LANGUAGE`` is
    # ``kernel_language``), imported by ``compiler.fusion.codegen_for``; a name, not an import: the backends sit
    # below the compiler (tests/test_layers.py)
    codegen: Optional[str] = None
    # optional: {op name: fn(dst, *args)} writing op(dst, *args) into dst, used by in-place ops outside autograd
    inplace_kernels: Dict[str, Callable[..., None]] = {}

    def max_tensor_bytes(self, index=None) -> Optional[int]:
        """The largest tensor, in bytes, one kernel of this device can bind (WebGPU's
        ``maxStorageBufferBindingSize``); None: no limit but memory. Decompositions that build a large
        intermediate (convolution's im2col columns) split their batch to stay under it."""
        return None

    def device_count(self) -> int:
        return 1

    def check_kernels(self, op_names: Iterable[str]) -> None:
        """Raise RuntimeError naming every kernel (or in-place kernel) registered under a name that is not an
        op of ``op_names`` (the dispatcher's op registry): such a kernel could never run."""
        unknown = sorted(set(self.kernels or ()) - set(op_names)) + \
            sorted(f"{n} (in-place)" for n in set(self.inplace_kernels or ()) - set(op_names))
        if unknown:
            raise RuntimeError(f"backend '{self.name}' registers kernels for ops that do not exist: "
                               f"{', '.join(unknown)}")

    # -- allocator --
    def alloc(self, numel: int, dtype) -> Any:
        """A new, uninitialised flat buffer of ``numel`` elements."""
        raise NotImplementedError

    def is_available(self) -> bool:
        """False when the device cannot be used here (no driver, no platform); ``unavailable_reason`` says why."""
        return True

    def unavailable_reason(self) -> Optional[str]:
        return None

    def from_numpy(self, arr: np.ndarray, device=None) -> Any:
        """A buffer on ``device`` (a ``tinytorch.device``) holding a copy of the flat, C-contiguous host array."""
        raise NotImplementedError

    def to_numpy(self, native: Any) -> np.ndarray:
        """A host ``ndarray`` copy of the native array."""
        raise NotImplementedError

    # -- tensors <-> native arrays --
    def view(self, buf: Any, dtype, shape: Tuple[int, ...], strides: Tuple[int, ...], offset: int) -> Any:
        """The native array seen by kernels for a strided region of ``buf``."""
        raise NotImplementedError

    def wrap(self, native: Any, dtype) -> Tuple[Any, Any, Tuple[int, ...], int]:
        """``(native, buffer, strides, offset)`` for a kernel result of dtype ``dtype``."""
        raise NotImplementedError

    def reinterpret(self, buf: Any, old_dtype, new_dtype) -> Any:
        """Optional: a buffer sharing ``buf``'s memory whose elements are ``new_dtype`` (for
        ``Tensor.view(dtype)``). Backends whose buffers are untyped bytes return ``buf`` itself."""
        raise NotImplementedError(f"Tensor.view(dtype) is not supported on the '{self.name}' device: its backend "
                                  "does not implement Backend.reinterpret")

    def cast(self, native: Any, dtype) -> Any:
        """A new native array with ``native``'s values converted to ``dtype``."""
        raise NotImplementedError

    def copy_(self, dst: Any, src: Any) -> None:
        """Write ``src`` (broadcast to ``dst``'s shape, converted to its dtype) into ``dst`` in place."""
        raise NotImplementedError

    def synchronize(self) -> None:
        pass

    def memory_allocated(self) -> int:
        return 0
