"""The CUDA runtime of the ``cuda`` device: NVIDIA's driver API through ``cuda-bindings`` (context, stream,
events, module load, launches), NVRTC compiling the kernels, and a caching allocator.

The device runs the kernels of the ``opencl`` backend (``backends/opencl/*.py``): they are written in OpenCL C,
and ``kernels/render.CUDARenderer`` makes CUDA C of them (a prelude mapping ``__kernel``, ``get_global_id``,
``__local``, ``barrier``, ``half`` ... onto CUDA's spellings). A ``_Device``
here offers the same methods as ``backends/opencl/runtime._Device`` (``alloc``/``release``, ``kernel``,
``launch``/``launch_1d``, ``write``/``read``, ``finish``), so every kernel module runs on it unchanged.

Programs are compiled by NVRTC to a cubin for the device's architecture (``sm_XY``) with FMA contraction off
(``--fmad=false``: a kernel rounds each operation as the other targets do, so fused and unfused kernels agree bit
for bit), cached in memory and on disk (``$TINYTORCH_CACHE_DIR/cuda/<sha256>.cubin``, keyed by the source, the
NVRTC version, the options and the architecture), as the CPU kernel cache is.

Memory: blocks from ``cuMemAlloc`` are kept when freed and reused by size class, as PyTorch's caching allocator
does (requests under 1 MiB rounded up to 512 bytes, larger ones to 2 MiB), so a training step allocates from the
driver only in its first iteration. Everything runs on one stream per device, in order; a freed block is reused by
later work on that stream only, so no event is needed before reuse. Host copies synchronize the stream.
"""
import hashlib
import os
import struct
import tempfile
import threading

import numpy as np

from ...kernels.render import CUDARenderer

cu = nvrtc = None  # cuda.bindings' driver and nvrtc modules, imported on first use (importing tinytorch stays fast)
_IMPORT_ERROR = []


def _bindings():
    """Import cuda-bindings; False (the error kept for ``unavailable_reason``) when it is missing or broken."""
    global cu, nvrtc
    if cu is None and not _IMPORT_ERROR:
        try:
            from cuda.bindings import driver
            from cuda.bindings import nvrtc as nvrtc_
            cu, nvrtc = driver, nvrtc_
        except Exception as e:  # noqa: BLE001 - any import failure means: no CUDA here
            _IMPORT_ERROR.append(e)
    return cu is not None


_RENDERER = CUDARenderer()


def render(src):
    """The CUDA C program NVRTC compiles for OpenCL C kernel source ``src`` (``kernels/render.CUDARenderer``)."""
    return _RENDERER.program(src)


def _include_dirs():
    """``-I`` options for the CUDA headers the low-precision part includes (the nvidia-cuda-runtime wheel or the
    system's toolkit, found by cuda.pathfinder); none when they are not found (then such kernels fail to compile
    with NVRTC's message)."""
    if not _INCLUDES:
        try:
            from cuda.pathfinder import find_nvidia_header_directory
            d = find_nvidia_header_directory("cudart")
        except Exception:  # noqa: BLE001 - pathfinder missing or nothing found
            d = None
        _INCLUDES.append([f"--include-path={d}".encode()] if d else [])
    return _INCLUDES[0]


_INCLUDES = []

class CaptureError(RuntimeError):
    """A host copy or a synchronization while the device's stream is being captured into a CUDA graph."""


# PyTorch's CUDACachingAllocator rounding: small requests to 512 bytes, large ones to 2 MiB
_SMALL, _SMALL_ROUND, _LARGE_ROUND = 1 << 20, 512, 2 << 20
_EW_LOCAL = 256


def _check(result, what):
    """The values of a cuda-bindings call (``(err, *values)``); RuntimeError naming ``what`` on an error."""
    err = result[0]
    if int(err) != 0:
        name = err.name if hasattr(err, "name") else str(err)
        if cu is not None and isinstance(err, cu.CUresult):
            _, msg = cu.cuGetErrorString(err)
            name = f"{name}: {msg.decode() if isinstance(msg, bytes) else msg}"
        raise RuntimeError(f"cuda: {what} failed ({name})")
    return result[1] if len(result) == 2 else result[1:]


def round_size(nbytes):
    """The block size the allocator serves a request of ``nbytes`` with (its size class)."""
    nbytes = max(nbytes, 1)
    if nbytes < _SMALL:
        return -(-nbytes // _SMALL_ROUND) * _SMALL_ROUND
    return -(-nbytes // _LARGE_ROUND) * _LARGE_ROUND


def nvrtc_version():
    """NVRTC's (major, minor). RuntimeError when cuda-bindings is missing."""
    if not _bindings():
        raise RuntimeError(f"cuda: cuda-bindings is not installed ({_IMPORT_ERROR[0]}); `pip install tinytorch[cuda]`")
    return _check(nvrtc.nvrtcVersion(), "nvrtcVersion")


def _nvrtc_archs():
    return set(_check(nvrtc.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs"))


def compile_source(src, arch, name="kernel.cu"):
    """``src`` (OpenCL C kernels) compiled by NVRTC for ``sm_<arch>`` with the prelude: (cubin bytes, log).

    ``arch`` is the compute capability as an int (90 for sm_90). RuntimeError with NVRTC's log when it fails. An
    architecture newer than NVRTC knows is compiled to PTX for the newest one it knows (the driver then JITs it)."""
    nvrtc_version()  # imports the bindings or says why not
    text = render(src).encode()
    known = _nvrtc_archs()
    cubin = arch in known
    target = arch if cubin else max(a for a in known if a <= arch) if any(a <= arch for a in known) else min(known)
    opts = [f"--gpu-architecture={'sm' if cubin else 'compute'}_{target}".encode(), b"--fmad=false",
            b"-default-device", b"--std=c++17", b"-w"] + _include_dirs()
    prog = _check(nvrtc.nvrtcCreateProgram(text, name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        res = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        # NVRTC writes into the buffers it is given: bytearrays, never bytes (``b" " * 1`` is CPython's shared
        # one-byte object, and an empty log would overwrite it for the whole process)
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        log = log.decode(errors="replace").rstrip("\x00 ")
        if int(res[0]) != 0:
            raise RuntimeError(f"cuda: NVRTC could not compile '{name}':\n{log}\n--- source ---\n{src}")
        if cubin:
            size = _check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            out = bytearray(size)
            _check((nvrtc.nvrtcGetCUBIN(prog, out)[0], None), "nvrtcGetCUBIN")
        else:
            size = _check(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            out = bytearray(size)
            _check((nvrtc.nvrtcGetPTX(prog, out)[0], None), "nvrtcGetPTX")
        return bytes(out), log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def cache_dir():
    base = os.environ.get("TINYTORCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tinytorch")
    return os.path.join(base, "cuda")


def cached_binary(src, arch):
    """The compiled image of ``src`` for ``arch`` from the disk cache, compiling (and storing) it on a miss."""
    key = hashlib.sha256("\n".join([render(src), str(nvrtc_version()), str(arch), "fmad=false"]).encode())
    path = os.path.join(cache_dir(), key.hexdigest()[:32] + ".bin")
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        pass
    image, _ = compile_source(src, arch)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, part = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".part")
        with os.fdopen(fd, "wb") as f:
            f.write(image)
        os.replace(part, path)  # atomic: a process reading this name sees a whole image or none
    except OSError:
        pass  # a read-only cache is no reason to fail
    return image


class Kernel:
    """A loaded kernel and its argument block. A kernel's signature is fixed, so the first launch lays out one
    slot per argument (8-byte aligned) in a buffer owned by the kernel, with the pointer array to the slots;
    later launches only write the values (``struct.pack_into``): the driver copies the arguments when the
    launch is enqueued, so the buffer is free again when ``cuLaunchKernel`` returns."""

    __slots__ = ("fn", "name", "fmt", "buf", "ptrs")

    def __init__(self, fn, name):
        self.fn, self.name, self.fmt = fn, name, None

    def _layout(self, args):
        fmt, off, offsets = "=", 0, []
        for a in args:
            if type(a) is int:  # a device pointer
                code, size = "Q", 8
            elif isinstance(a, (np.ndarray, np.generic)):  # a parameter struct or a scalar: its bytes
                code, size = f"{a.nbytes}s", a.nbytes
            else:
                raise TypeError(f"cuda: kernel argument of type {type(a).__name__} cannot be passed to a kernel")
            pad = -off % 8
            fmt += f"{pad}x" if pad else ""
            off += pad
            offsets.append(off)
            fmt += code
            off += size
        self.buf = np.zeros(max(off, 8), np.uint8)
        base = self.buf.ctypes.data
        self.ptrs = np.array([base + o for o in offsets], np.uint64)
        self.fmt = struct.Struct(fmt)

    def pack(self, args):
        """The pointer array for ``args`` (written into the kernel's argument buffer)."""
        if self.fmt is None:
            self._layout(args)
        self.fmt.pack_into(self.buf, 0, *[a if type(a) is int else a.tobytes() for a in args])
        return self.ptrs


class _Device:
    """One CUDA device: the primary context, one stream, the caching allocator and the module cache."""

    def __init__(self, ordinal, index):
        self.index = index
        self.cudev = _check(cu.cuDeviceGet(ordinal), "cuDeviceGet")
        self.ctx = _check(cu.cuDevicePrimaryCtxRetain(self.cudev), "cuDevicePrimaryCtxRetain")
        self._local = threading.local()
        self.activate()
        name = _check(cu.cuDeviceGetName(256, self.cudev), "cuDeviceGetName")
        self.name = name.split(b"\x00")[0].decode()
        attr = cu.CUdevice_attribute
        self.capability = (
            _check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.cudev), "attr"),
            _check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.cudev), "attr"))
        self.arch = self.capability[0] * 10 + self.capability[1]
        self.total_memory = _check(cu.cuDeviceTotalMem(self.cudev), "cuDeviceTotalMem")
        self.multi_processor_count = _check(cu.cuDeviceGetAttribute(
            attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.cudev), "attr")
        self.fp64 = self.fp16 = True
        self.max_wg = 1024
        self.reduce_groups = 1024  # work-groups per output of a split reduction (backends/opencl/reduce.py)
        self.stream = _check(cu.cuStreamCreate(cu.CUstream_flags.CU_STREAM_NON_BLOCKING.value), "cuStreamCreate")
        self.pool = {}
        self.allocated = self.max_allocated = self.reserved = self.max_reserved = 0
        self.kernels = {}
        self.modules = {}
        self.blas = None  # the cuBLAS handle, made on the first GEMM (backends/cuda/blas.py)
        self.capturing = None  # the pool of the CUDA graph being captured (backends/cuda/graphs.py)
        self.graph_blocks = {}  # device pointer -> the graph pool that owns it

    def activate(self):
        """Make the context current in the calling thread (the driver keeps one current context per thread)."""
        if getattr(self._local, "on", False) is False:
            _check(cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
            self._local.on = True

    # -- caching allocator --
    def alloc(self, nbytes):
        nbytes = round_size(nbytes)
        graph = self.capturing  # while a CUDA graph is captured, blocks come from (and stay with) its pool
        free = (graph.free if graph is not None else self.pool).get(nbytes)
        if free:
            ptr = free.pop()
        else:
            self.activate()
            res = cu.cuMemAlloc(nbytes)
            if int(res[0]) != 0:
                self.empty_cache()  # blocks cached in other size classes go back to the driver, then once more
                res = cu.cuMemAlloc(nbytes)
                if int(res[0]) != 0:
                    raise RuntimeError(f"CUDA out of memory. Tried to allocate {nbytes} bytes on cuda:{self.index} "
                                       f"({self.name}); {self.allocated} bytes allocated, {self.reserved} reserved")
            ptr = int(res[1])
            self.reserved += nbytes
            self.max_reserved = max(self.max_reserved, self.reserved)
            if graph is not None:
                self.graph_blocks[ptr] = graph
        self.allocated += nbytes
        if self.allocated > self.max_allocated:
            self.max_allocated = self.allocated
        return ptr, nbytes

    def release(self, ptr, nbytes):
        self.allocated -= nbytes
        graph = self.graph_blocks.get(ptr) if self.graph_blocks else None
        if graph is not None:
            if not graph.orphan:
                graph.free.setdefault(nbytes, []).append(ptr)
                return
            del self.graph_blocks[ptr]
        self.pool.setdefault(nbytes, []).append(ptr)

    def _no_capture(self, what):
        if self.capturing is not None:
            raise CaptureError(f"cuda: {what} is not permitted while the stream is being captured into a CUDA graph "
                               "(operation not permitted when stream is capturing)")

    def empty_cache(self):
        """Give every cached free block back to the driver (waits for the stream first: a block may still be read
        by queued work). Blocks of CUDA graphs' pools stay."""
        self.finish()
        for size, blocks in self.pool.items():
            for p in blocks:
                cu.cuMemFree(p)
                self.reserved -= size
        self.pool.clear()

    # -- modules --
    def _load(self, src, what):
        self.activate()
        try:
            image = cached_binary(src, self.arch)
        except RuntimeError as e:
            raise RuntimeError(f"cuda: building kernel '{what}' failed on {self.name}:\n{e}") from None
        return _check(cu.cuModuleLoadData(image), f"cuModuleLoadData ({what})")

    def kernel(self, key, source_fn, name="k", family=None):
        """The compiled kernel for ``key`` (built from ``source_fn()`` on first use); ``family`` as the OpenCL
        device's, except that each kernel is compiled in its own module (NVRTC compiles only what a module holds,
        so there is nothing to share)."""
        k = self.kernels.get(key)
        if k is not None:
            return k
        src = source_fn().replace("KNAME", name)
        mod = self.modules.get(src)
        if mod is None:
            mod = self.modules[src] = self._load(src, key[0])
        fn = _check(cu.cuModuleGetFunction(mod, name.encode()), f"cuModuleGetFunction ({name})")
        k = self.kernels[key] = Kernel(fn, name)
        return k

    # -- launches and copies (the interface of backends/opencl/runtime._Device) --
    def launch(self, k, global_size, local_size, args):
        """Launch ``k(*args)`` over ``global_size`` threads in blocks of ``local_size`` (OpenCL's NDRange:
        the grid is global / local per dimension)."""
        g = tuple(global_size) + (1,) * (3 - len(global_size))
        b = tuple(local_size) + (1,) * (3 - len(local_size))
        ptrs = k.pack(args)
        self.activate()
        _check((cu.cuLaunchKernel(k.fn, g[0] // b[0], g[1] // b[1], g[2] // b[2], b[0], b[1], b[2], 0, self.stream,
                                  ptrs, 0)[0], None), f"cuLaunchKernel ({k.name})")

    def launch_1d(self, k, n, args):
        """Launch ``k(*args)`` over ``n`` independent threads (kernels check ``j < n`` themselves)."""
        blocks = -(-n // _EW_LOCAL)
        self.launch(k, (blocks * _EW_LOCAL,), (_EW_LOCAL,), args)

    def write(self, ptr, arr):
        """Copy the C-contiguous host array ``arr`` to ``ptr``; returns when ``arr`` may be reused."""
        self._no_capture("a host-to-device copy")
        self.activate()
        _check((cu.cuMemcpyHtoDAsync(ptr, arr.ctypes.data, arr.nbytes, self.stream)[0], None), "cuMemcpyHtoDAsync")
        self.finish()

    def read(self, out, ptr, byte_offset):
        """Copy ``out.nbytes`` bytes from ``ptr + byte_offset`` into the host array ``out`` (waits for the
        stream, so the bytes are those of every kernel queued before)."""
        self._no_capture("a device-to-host copy")
        self.activate()
        _check((cu.cuMemcpyDtoHAsync(out.ctypes.data, ptr + byte_offset, out.nbytes, self.stream)[0], None),
               "cuMemcpyDtoHAsync")
        self.finish()

    def copy(self, dst, src, nbytes):
        """Device-to-device copy of ``nbytes`` on the stream."""
        _check((cu.cuMemcpyDtoDAsync(dst, src, nbytes, self.stream)[0], None), "cuMemcpyDtoDAsync")

    def finish(self):
        self._no_capture("synchronizing the stream")
        self.activate()
        _check((cu.cuStreamSynchronize(self.stream)[0], None), "cuStreamSynchronize")


_DEVICES = None
_REASON = []


def _devices():
    """The devices the driver reports (lazy: importing tinytorch never initializes CUDA)."""
    global _DEVICES
    if _DEVICES is None:
        _DEVICES = []
        if not _bindings():
            _REASON.append(f"cuda-bindings is not installed ({_IMPORT_ERROR[0]}); `pip install tinytorch[cuda]`")
            return _DEVICES
        try:
            err = cu.cuInit(0)[0]
        except Exception as e:  # noqa: BLE001 - no libcuda.so: the driver is not installed
            _REASON.append(f"Found no NVIDIA driver on your system ({e})")
            return _DEVICES
        if int(err) != 0:
            _REASON.append(f"Found no NVIDIA driver on your system (cuInit: {err.name})")
            return _DEVICES
        count = _check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        if not count:
            _REASON.append("the NVIDIA driver reports no CUDA device")
        _DEVICES = [_LazyDev(i) for i in range(count)]
    return _DEVICES


class _LazyDev:
    """Creates the context on first use."""

    def __init__(self, ordinal):
        self.ordinal, self.dev = ordinal, None

    def get(self):
        if self.dev is None:
            self.dev = _Device(self.ordinal, self.ordinal)
        return self.dev


def unavailable_reason():
    """Why the ``cuda`` device cannot be used here (None when it can)."""
    if _devices():
        return None
    return _REASON[0] if _REASON else "no CUDA device"
