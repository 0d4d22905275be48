"""The OpenCL runtime of the backend: device buffers and the arrays kernels receive, the per-device context,
queue, caching allocator and program cache, lazy device discovery, kernel launches, and the backend's kernel
tables (the topic modules register their kernels into ``KERNELS`` and ``INPLACE_KERNELS``)."""
import math
import re

import numpy as np

from ..._strides import contiguous_strides
from ..base import KernelTable

try:
    import pyopencl as cl
    _IMPORT_ERROR = None
except Exception as e:  # pragma: no cover - depends on the environment
    cl = None
    _IMPORT_ERROR = e

# {op name: fn(backend, *args, **kw)}: kernels need the backend (allocation, the elementwise engine), so they take
# it first and OpenCLBackend binds them to its instance
KERNELS = KernelTable("opencl")
INPLACE_KERNELS = KernelTable("opencl")
# {kernel key: source with the kernel named ``k``} of every kernel built while it is a dict (None: not kept). The
# GPU check fills it on PoCL to compile each kernel for CUDA with NVRTC (``benchmarks/gpu_check.py``).
RECORD = None


class CLBuffer:
    """A block of device memory from the caching allocator; returned to the pool when garbage collected."""

    __slots__ = ("mem", "nbytes", "size", "dev", "__weakref__")

    def __init__(self, mem, nbytes, size, dev):
        self.mem, self.nbytes, self.size, self.dev = mem, nbytes, size, dev

    def __len__(self):
        return self.size

    def __del__(self):
        dev = self.dev
        if dev is not None and self.mem is not None:
            dev.release(self.mem, self.nbytes)


class CLArray:
    """What kernels receive: a strided window (shape, strides and offset in elements) of a CLBuffer."""

    __slots__ = ("buf", "dtype", "shape", "strides", "offset")

    def __init__(self, buf, dtype, shape, strides, offset=0):
        self.buf, self.dtype, self.shape, self.strides, self.offset = buf, dtype, shape, strides, offset

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def is_contiguous(self):
        return self.strides == contiguous_strides(self.shape) or self.size <= 1

    def view(self, shape, strides, offset=None):
        return CLArray(self.buf, self.dtype, tuple(shape), tuple(strides), self.offset if offset is None else offset)

    def permute(self, perm):
        return self.view([self.shape[p] for p in perm], [self.strides[p] for p in perm])

    def __repr__(self):
        return f"CLArray(shape={self.shape}, strides={self.strides}, offset={self.offset}, dtype={self.dtype})"


class _Device:
    """One OpenCL device: context, in-order queue, allocator pool and program cache."""

    def __init__(self, cldev, index):
        self.cldev = cldev
        self.index = index
        self.ctx = cl.Context([cldev])
        self.queue = cl.CommandQueue(self.ctx)
        ext = cldev.extensions
        self.fp64 = "cl_khr_fp64" in ext
        self.fp16 = "cl_khr_fp16" in ext
        self.name = cldev.name.strip()
        self.pool = {}
        self.allocated = self.max_allocated = self.reserved = 0
        self.kernels = {}
        self.programs = {}
        self.max_wg = cldev.max_work_group_size

    # -- caching allocator --
    def alloc(self, nbytes):
        nbytes = max(512, (nbytes + 511) // 512 * 512)  # PyTorch's 512-byte rounding: freed blocks fit more requests
        free = self.pool.get(nbytes)
        if free:
            mem = free.pop()
        else:
            try:
                mem = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)
            except cl.Error:
                self.empty_cache()
                try:
                    mem = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)
                except cl.Error as e:
                    raise RuntimeError(f"opencl:{self.index} ({self.name}) out of memory: tried to allocate "
                                       f"{nbytes} bytes; {self.allocated} bytes allocated") from e
            self.reserved += nbytes
        self.allocated += nbytes
        if self.allocated > self.max_allocated:
            self.max_allocated = self.allocated
        return mem, nbytes

    def release(self, mem, nbytes):
        self.allocated -= nbytes
        self.pool.setdefault(nbytes, []).append(mem)

    def empty_cache(self):
        for blocks in self.pool.values():
            for m in blocks:
                self.reserved -= m.size
                m.release()
        self.pool.clear()

    # -- launches and host copies: every kernel module goes through these, so another runtime (the ``cuda``
    # device) runs the same kernels by providing the same five methods --
    def launch(self, k, global_size, local_size, args):
        """Enqueue ``k(*args)`` over ``global_size`` work-items in work-groups of ``local_size`` (tuples, one
        entry per dimension; the global size is a multiple of the local size)."""
        _set_args(k, *args)
        cl.enqueue_nd_range_kernel(self.queue, k, global_size, local_size)

    def launch_1d(self, k, n, args):
        """Enqueue ``k(*args)`` over ``n`` independent work-items (kernels check ``j < n`` themselves)."""
        _set_args(k, *args)
        loc = min(_EW_LOCAL, self.max_wg)
        cl.enqueue_nd_range_kernel(self.queue, k, ((n + loc - 1) // loc * loc,), (loc,))

    def write(self, mem, arr):
        """Copy the C-contiguous host array ``arr`` to the start of ``mem``; returns when ``arr`` may be reused."""
        cl.enqueue_copy(self.queue, mem, arr, is_blocking=True)

    def read(self, out, mem, byte_offset):
        """Copy ``out.nbytes`` bytes from ``mem`` at ``byte_offset`` into the host array ``out`` (waits)."""
        cl.enqueue_copy(self.queue, out, mem, src_offset=byte_offset, is_blocking=True)

    def finish(self):
        self.queue.finish()

    # -- program cache --
    def _build(self, src, what):
        header = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if self.fp64 else ""
        if self.fp16:
            header += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        try:
            return cl.Program(self.ctx, header + src).build()
        except cl.RuntimeError as e:
            raise RuntimeError(f"opencl: building kernel '{what}' failed on {self.name}:\n{e}\n"
                               f"--- source ---\n{src}") from None

    def kernel(self, key, source_fn, name="k", family=None):
        """The compiled kernel for ``key`` (built from ``source_fn()`` on first use).

        ``family()`` lists (key, source) of sibling kernels; they are compiled in the same program, because
        building a program costs far more than adding kernels to it (each kernel's own code generation then
        happens on its first launch, and only for kernels that run)."""
        k = self.kernels.get(key)
        if k is not None:
            if RECORD is not None and key not in RECORD:  # built before the recording began: recorded all the same
                RECORD[key] = source_fn().replace("KNAME", "k").replace(f"void {name}(", "void k(")
            return k
        if family is not None:
            specs = [(key, source_fn())] + [(kk, ss) for kk, ss in family() if kk != key and kk not in self.kernels]
            srcs = []
            if RECORD is not None:
                RECORD.update((kk, ss.replace("KNAME", "k")) for kk, ss in specs if kk not in RECORD)
            for i, (kk, ss) in enumerate(specs):
                # helpers (names ending in '_') and the kernel get per-kernel names inside the shared program
                ss = re.sub(r"\b([a-z]+_)\(", lambda mt: f"{mt.group(1)}{i}(", ss)
                srcs.append(ss.replace("KNAME", f"k{i}"))
            try:
                prg = self._build("".join(srcs), key[0])
            except RuntimeError:
                prg = None  # a sibling that does not compile must not cost the kernel asked for
            if prg is not None:
                for i, (kk, _) in enumerate(specs):
                    self.kernels[kk] = cl.Kernel(prg, f"k{i}")
                return self.kernels[key]
        src = source_fn()
        if RECORD is not None and key not in RECORD:
            RECORD[key] = src.replace("KNAME", "k").replace(f"void {name}(", "void k(")
        prg = self.programs.get(src)
        if prg is None:
            prg = self.programs[src] = self._build(src.replace("KNAME", name), key[0])
        k = self.kernels[key] = cl.Kernel(prg, name)
        return k


_DEVICES = None


def _devices():
    global _DEVICES
    if _DEVICES is None:
        _DEVICES = []
        if cl is not None:
            try:
                platforms = cl.get_platforms()
            except Exception:  # no ICD loader / no platform
                platforms = []
            devs = []
            for p in platforms:
                try:
                    devs.extend(p.get_devices())
                except Exception:
                    pass
            # GPUs first, so "opencl" means the GPU when a machine has both
            devs.sort(key=lambda d: 0 if d.type & cl.device_type.GPU else 1)
            _DEVICES = [None] * len(devs)
            _DEVICES = [_LazyDev(d, i) for i, d in enumerate(devs)]
    return _DEVICES


class _LazyDev:
    """Creates the context on first use, so importing tinytorch never touches the GPU driver."""

    def __init__(self, cldev, index):
        self.cldev, self.index, self.dev = cldev, index, None

    def get(self):
        if self.dev is None:
            self.dev = _Device(self.cldev, self.index)
        return self.dev


def unavailable_reason():
    if cl is None:
        return f"pyopencl is not installed ({_IMPORT_ERROR}); `pip install pyopencl` and an OpenCL driver (ICD)"
    if not _devices():
        return "no OpenCL platform with a device was found (install an OpenCL driver, e.g. Debian's pocl-opencl-icd)"
    return None


def _is_arr(x):
    return isinstance(x, CLArray)


# One fixed work-group size per kernel: drivers that compile per work-group size (PoCL does) then build each
# kernel once instead of once per tensor shape.
_LOCAL = 64


def _set_args(k, *args):
    """``k.set_args(*args)``, after declaring the kernel's by-value argument types on its first call.

    pyopencl's untyped path converts each by-value argument by trial (15-20 us per numpy scalar or
    parameter struct on PoCL, more than the launch itself); with the types declared it packs them
    directly (under 1 us). A kernel's signature is fixed, so the first call's argument types hold for all."""
    if k not in _TYPED:
        types = []
        for a in args:
            if isinstance(a, np.ndarray):
                types.append(np.dtype((np.void, a.nbytes)))  # a struct passed by value
            elif isinstance(a, np.generic) and a.dtype.kind in "biuf" and a.dtype.char in "?bBhHiIlLqQfd":
                types.append(a.dtype)
            else:
                types.append(None)  # memory objects, local memory: pyopencl's generic path
        k.set_scalar_arg_dtypes(types)
        _TYPED.add(k)
    k.set_args(*args)


_TYPED = set()


# Work-group size of the kernels whose work-items are independent (elementwise, gathers, updates). PoCL runs a
# work-group as one vectorized loop with a fixed cost per group: 256 items per group run an SGD update over 200k
# floats in 127 us against 232 us with 64 (and GPUs take 256 as readily as 64).
_EW_LOCAL = 256


def _group_size(n, dev):
    """Work-items cooperating on one reduction row: one for short rows, else a fixed power of two."""
    return 1 if n <= 32 else min(_LOCAL, dev.max_wg)
