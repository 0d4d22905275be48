"""The WebGPU runtime of the backend: device buffers and the arrays kernels receive, the device (adapter, queue,
caching allocator, pipeline cache), command batching, host copies, and the backend's kernel table.

wgpu-py is imported lazily (on the first use of the device), so ``import tinytorch`` never loads the Vulkan,
Metal or Direct3D driver; without it the device is unavailable and ``unavailable_reason`` says why.
"""
import math

import numpy as np

from ..._strides import contiguous_strides
from ..base import KernelTable

# {op name: fn(backend, *args, **kw)}: kernels need the backend, so they take it first and WebGPUBackend binds them
KERNELS = KernelTable("webgpu")

# Storage type of each dtype in WGSL. WebGPU has no 64-bit types: int64 is stored narrowed to 32 bits (values are
# checked to fit when they come from the host), and bool takes a 32-bit word (WGSL has no 8-bit storage).
STORAGE = {"float32": "f32", "float16": "f16", "int32": "i32", "int64": "i32", "bool": "u32"}
# bytes per element in device memory
ITEMSIZE = {"float32": 4, "float16": 2, "int32": 4, "int64": 4, "bool": 4}
# host (NumPy) dtype of the device's elements
HOST = {"float32": np.float32, "float16": np.float16, "int32": np.int32, "int64": np.int32, "bool": np.uint32}

_IMPORT_ERROR = None
_wgpu = None


def _import():
    global _wgpu, _IMPORT_ERROR
    if _wgpu is None and _IMPORT_ERROR is None:
        try:
            import wgpu
            _wgpu = wgpu
        except Exception as e:  # pragma: no cover - depends on the environment
            _IMPORT_ERROR = e
    return _wgpu


class WGBuffer:
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


class WGArray:
    """What kernels receive: a strided window (shape, strides and offset in elements) of a WGBuffer."""

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
        return WGArray(self.buf, self.dtype, tuple(shape), tuple(strides), self.offset if offset is None else offset)

    def permute(self, perm):
        return self.view([self.shape[p] for p in perm], [self.strides[p] for p in perm])

    def __repr__(self):
        return f"WGArray(shape={self.shape}, strides={self.strides}, offset={self.offset}, dtype={self.dtype})"


def _is_arr(x):
    return isinstance(x, WGArray)


# work-items of a workgroup in the kernels whose items are independent; a dispatch has at most 65535 workgroups
# per dimension, so larger launches spread over y
WG = 256
_MAX_GROUPS = 65535


class _Device:
    """The WebGPU device: queue, caching allocator, pipeline cache and the command encoder being filled.

    Kernels are recorded into one command encoder and submitted together (``flush``) only when something needs
    their results or must be ordered after them: a read to the host, a host write into a buffer (a queue write
    runs before commands not yet submitted), or ``BATCH`` recorded dispatches."""

    BATCH = 256

    def __init__(self, adapter):
        wgpu = _wgpu
        self.adapter = adapter
        info = adapter.info
        self.name = f"{info.get('device', '')} ({info.get('backend_type', '')})".strip()
        feats = set(adapter.features)
        self.fp16 = "shader-f16" in feats
        lim = adapter.limits
        want = {k: lim[k] for k in ("max-storage-buffers-per-shader-stage", "max-buffer-size",
                                    "max-storage-buffer-binding-size", "max-compute-workgroup-storage-size",
                                    "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
                                    "max-compute-workgroup-size-y") if k in lim}
        self.device = adapter.request_device_sync(required_features=["shader-f16"] if self.fp16 else [],
                                                  required_limits=want)
        self.queue = self.device.queue
        self.max_binding = lim.get("max-storage-buffer-binding-size", 1 << 27)
        self.usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        self.pool = {}
        # every buffer the allocator made, in use or pooled: a tensor collected with a reference cycle (a traceback
        # holding it) has its WGBuffer finalized together with everything reachable only from it, and wgpu-py's
        # buffer releases its handle when finalized; held here, the buffer is never in that set, so the pool
        # never hands out a released one
        self.buffers = set()
        self.allocated = self.max_allocated = self.reserved = 0
        self.pipelines = {}
        self.params = {}
        self.encoder = None
        self._fence = None
        self.pending = 0
        self.submits = 0  # command buffers submitted (tests check the batching with it)
        self.index = 0

    # -- caching allocator --
    def alloc(self, nbytes):
        nbytes = max(512, (nbytes + 511) // 512 * 512)  # PyTorch's 512-byte rounding: freed blocks fit more requests
        free = self.pool.get(nbytes)
        if free:
            mem = free.pop()
        else:
            if nbytes > self.max_binding:
                raise RuntimeError(f"webgpu ({self.name}) out of memory: a tensor of {nbytes} bytes exceeds the "
                                   f"adapter's largest storage binding ({self.max_binding} bytes)")
            try:
                mem = self.device.create_buffer(size=nbytes, usage=self.usage)
            except Exception:
                self.empty_cache()
                mem = self.device.create_buffer(size=nbytes, usage=self.usage)
            self.buffers.add(mem)
            self.reserved += nbytes
        self.allocated += nbytes
        if self.allocated > self.max_allocated:
            self.max_allocated = self.allocated
        return mem, nbytes

    def release(self, mem, nbytes):
        # a freed block may still be read by recorded, unsubmitted kernels: it is reused only by later ones, which
        # run after them in the same order, and host writes flush first
        self.allocated -= nbytes
        self.pool.setdefault(nbytes, []).append(mem)

    def empty_cache(self):
        self.flush()
        for blocks in self.pool.values():
            for m in blocks:
                self.reserved -= m.size
                self.buffers.discard(m)
                m.destroy()
        self.pool.clear()

    # -- pipelines --
    def pipeline(self, key, source_fn):
        """The compute pipeline of WGSL ``source_fn()`` (entry point ``main``), compiled once per ``key``."""
        p = self.pipelines.get(key)
        if p is None:
            src = source_fn()
            try:
                module = self.device.create_shader_module(code=src)
                p = self.device.create_compute_pipeline(layout="auto", compute={"module": module,
                                                                               "entry_point": "main"})
            except Exception as e:
                raise RuntimeError(f"webgpu: building kernel '{key[0]}' failed on {self.name}:\n{e}\n"
                                   f"--- source ---\n{src}") from None
            self.pipelines[key] = p
        return p

    def param_buffer(self, words):
        """A read-only storage buffer holding the int32 array ``words`` (kernel geometry and scalars); buffers are
        immutable once made, so equal parameter blocks share one."""
        data = np.ascontiguousarray(words, dtype=np.int32).tobytes()
        b = self.params.get(data)
        if b is None:
            if len(self.params) >= 4096:
                self.params.clear()
            b = self.params[data] = self.device.create_buffer_with_data(data=data, usage=_wgpu.BufferUsage.STORAGE)
        return b

    # -- launches --
    def launch(self, pipeline, buffers, groups):
        """Record ``pipeline`` over ``groups`` = (x, y, z) workgroups with ``buffers`` bound at 0, 1, ..."""
        layout = pipeline.get_bind_group_layout(0)
        bg = self.device.create_bind_group(layout=layout, entries=[
            {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}} for i, b in enumerate(buffers)])
        if self.encoder is None:
            self.encoder = self.device.create_command_encoder()
        cp = self.encoder.begin_compute_pass()
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(*groups)
        cp.end()
        self.pending += 1
        if self.pending >= self.BATCH:
            self.flush()

    @staticmethod
    def groups_1d(n, per=WG):
        """(x, y, 1) workgroups covering ``n`` items of ``per`` per workgroup; kernels compute the flat index as
        ``(id.y * num_workgroups.x + id.x)`` workgroups in and check it against the item count."""
        g = max(1, -(-n // per))
        if g <= _MAX_GROUPS:
            return (g, 1, 1)
        y = -(-g // _MAX_GROUPS)
        return (-(-g // y), y, 1)

    def flush(self):
        """Submit the recorded kernels (one command buffer); returns without waiting for them."""
        if self.encoder is not None:
            self.queue.submit([self.encoder.finish()])
            self.encoder = None
            self.pending = 0
            self.submits += 1

    def finish(self):
        """Submit the recorded kernels and wait until the device has run them."""
        self.flush()
        # a read waits for every command submitted before it (wgpu-py's on_submitted_work_done_sync does not
        # work with every wgpu-native it ships with)
        if self._fence is None:
            self._fence = self.device.create_buffer(size=4, usage=self.usage)
        self.queue.read_buffer(self._fence, 0, 4)

    # -- host copies --
    def write(self, mem, arr):
        """Copy the C-contiguous host array ``arr`` to the start of ``mem``."""
        self.flush()  # a queue write runs before unsubmitted commands: those must not see it
        data = arr.tobytes()
        if len(data) % 4:
            data += b"\0" * (4 - len(data) % 4)
        self.queue.write_buffer(mem, 0, data)

    def read(self, nbytes, mem, byte_offset):
        """``nbytes`` bytes of ``mem`` from ``byte_offset`` (submits the recorded kernels and waits for them)."""
        self.flush()
        start = byte_offset // 4 * 4
        end = -(-(byte_offset + nbytes) // 4) * 4
        data = self.queue.read_buffer(mem, start, end - start)
        return bytes(data)[byte_offset - start: byte_offset - start + nbytes]


_DEVICE = None
_REASON = None


def device():
    """The WebGPU device (created on first use), or None when there is none; ``unavailable_reason`` says why."""
    global _DEVICE, _REASON
    if _DEVICE is None and _REASON is None:
        wgpu = _import()
        if wgpu is None:
            _REASON = (f"wgpu is not installed ({_IMPORT_ERROR}); `pip install tinytorch[webgpu]` (wgpu-py) and a "
                       "Vulkan, Metal or Direct3D 12 driver")
            return None
        try:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as e:
            adapter, err = None, e
        else:
            err = None
        if adapter is None:
            _REASON = (f"no WebGPU adapter was found ({err or 'none offered'}); install a Vulkan driver "
                       "(e.g. Debian's mesa-vulkan-drivers)")
            return None
        try:
            _DEVICE = _Device(adapter)
        except Exception as e:
            _REASON = f"the WebGPU adapter would not open a device: {e}"
    return _DEVICE


def unavailable_reason():
    """None when the device can be used, else why not."""
    return _REASON if device() is None else None
