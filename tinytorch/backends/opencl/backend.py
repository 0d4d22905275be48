"""``OpenCLBackend``: devices, the allocator interface (buffers, host copies, casts, copies) and the elementwise
engine every kernel runs through. The kernels themselves live in the topic modules, registered in
``runtime.KERNELS`` / ``runtime.INPLACE_KERNELS``; the backend binds them to itself."""
import functools
import math

import numpy as np

from ... import _dtype as _dt
from ..._strides import contiguous_strides
from ..base import Backend
from .codegen import _CTYPE, MAXD, _bshape, _collapse, _ew_spec, _isf, _meta
from .runtime import INPLACE_KERNELS, KERNELS, CLArray, CLBuffer, _devices, _is_arr, unavailable_reason


# (signature of an elementwise launch) -> (device, kernel, parameter block): see OpenCLBackend._ew
_EW_CACHE = {}


class OpenCLBackend(Backend):
    """OpenCL devices through pyopencl: ``opencl:0`` .. ``opencl:N-1`` (GPUs first).

    The device runtime is a seam: ``_devices`` lists the devices and each one offers ``alloc``/``release``,
    ``kernel``, ``launch``/``launch_1d``, ``write``/``read`` and ``finish`` (``runtime._Device``), so the ``cuda``
    device (``backends/cuda``) runs these same kernels by subclassing with its own runtime."""

    _devices = staticmethod(_devices)
    _unavailable = staticmethod(unavailable_reason)
    # the cuda device's too: kernels/render.CUDARenderer compiles the same source
    kernel_language = "opencl"
    codegen = "tinytorch.compiler.codegen_opencl"
    # dtypes OpenCL C has (bfloat16 has no OpenCL C type)
    dtypes = frozenset(_CTYPE) - {"bfloat16"}

    def __init__(self):
        self.kernels = {n: functools.partial(k, self) for n, k in KERNELS.items()}
        self.inplace_kernels = {n: functools.partial(k, self) for n, k in INPLACE_KERNELS.items()}

    # ---- devices ----
    def is_available(self):
        return bool(self._devices())

    def unavailable_reason(self):
        return self._unavailable()

    def device_count(self):
        return len(self._devices())

    def _dev(self, index=None):
        devs = self._devices()
        if not devs:
            raise RuntimeError(f"{self.name} device is not available: {self._unavailable()}")
        return devs[index or 0].get()

    def dev_for(self, index):
        return self._dev(index)

    def synchronize(self, index=None):
        self._dev(index).finish()

    def memory_allocated(self, index=None):
        return self._dev(index).allocated

    # ---- allocator ----
    def _check_dtype(self, dtype, dev):
        if dtype.name == "float64" and not dev.fp64:
            raise TypeError(f"opencl:{dev.index} ({dev.name}) does not support float64: the device lacks cl_khr_fp64")
        if dtype.name == "float16" and not dev.fp16:
            raise TypeError(f"opencl:{dev.index} ({dev.name}) does not support float16: the device lacks cl_khr_fp16")
        if dtype.name not in self.dtypes:
            raise TypeError(f"opencl: dtype {dtype} is not supported by the OpenCL backend")

    def _alloc(self, numel, dtype, dev):
        self._check_dtype(dtype, dev)
        mem, nbytes = dev.alloc(max(1, numel) * dtype.itemsize)
        return CLBuffer(mem, nbytes, numel, dev)

    def alloc(self, numel, dtype, index=None):
        return self._alloc(numel, dtype, self._dev(index))

    def _empty(self, shape, dtype, dev):
        buf = self._alloc(math.prod(shape), dtype, dev)
        return CLArray(buf, dtype, tuple(shape), contiguous_strides(tuple(shape)), 0)

    def from_numpy(self, arr, device=None):
        dev = self._dev(device.index if device is not None else None)
        dtype = _dt.from_numpy_dtype(arr.dtype)
        buf = self._alloc(arr.size, dtype, dev)
        if arr.size:
            dev.write(buf.mem, np.ascontiguousarray(arr))
        return buf

    def to_numpy(self, native):
        a = native
        if not a.size:
            return np.empty(a.shape, a.dtype.np)
        if not a.is_contiguous():
            a = self._copy(a)
        out = np.empty(a.shape, a.dtype.np)
        a.buf.dev.read(out, a.buf.mem, a.offset * a.dtype.itemsize)
        return out

    def reinterpret(self, buf, old_dtype, new_dtype):
        return buf  # cl buffers are bytes; CLArray carries the dtype

    def view(self, buf, dtype, shape, strides, offset):
        return CLArray(buf, dtype, shape, strides, offset)

    def wrap(self, native, dtype):
        a = native
        if a.dtype is not dtype:
            a = self.cast(a, dtype)
        return a, a.buf, a.strides, a.offset

    def cast(self, native, dtype):
        if native.dtype is dtype:
            return self._copy(native)
        f = _isf(native.dtype)
        expr = "(OT)(x0 != 0)" if dtype.name == "bool" else "(OT)x0"
        if dtype.name == "bool" and f:
            expr = "(OT)(x0 != 0 || isnan(x0))"
        return self._ew("cast", expr, [native], [], dtype, native.shape)

    def copy_(self, dst, src):
        if _is_arr(src) and src.buf is dst.buf:
            src = self._copy(src)  # overlapping source and destination: read everything before writing
        if not _is_arr(src):
            self._ew("fill", "(OT)s0", [], [(src, dst.dtype)], dst.dtype, dst.shape, out=dst)
            return
        expr = "(OT)x0" if dst.dtype.name != "bool" else "(OT)(x0 != 0)"
        self._ew("copy", expr, [self._expand(src, dst.shape)], [], dst.dtype, dst.shape, out=dst)

    # ---- the elementwise engine ----
    def _expand(self, a, shape):
        """A broadcast view of ``a`` with ``shape`` (stride 0 in broadcast dims)."""
        if a.shape == tuple(shape):
            return a
        lead = len(shape) - a.ndim
        st = [0] * lead + [s if n != 1 or m == 1 else 0 for s, n, m in zip(a.strides, a.shape, shape[lead:])]
        return a.view(shape, st)

    def _ew(self, name, expr, inputs, scalars, out_dtype, shape, out=None, ptr=(), collapse=True, coords=(),
            helpers="", ct=None, family=None):
        """Run ``out[i] = expr`` over ``shape``: inputs are ``x{k}`` (loaded at their strided offset) or, for
        k in ``ptr``, raw pointers ``A{k}`` with offset ``p{k + 1}``; scalars are ``s{j}`` of the given dtypes.
        ``family()`` may list sibling kernels (same operand signature) to compile in the same program."""
        shape = tuple(shape)
        n = math.prod(shape)
        dev = (out.buf.dev if out is not None else inputs[0].buf.dev) if (out is not None or inputs) else self._dev()
        if out is None:
            out = self._empty(shape, out_dtype, dev)
        if n == 0:
            return out
        ops = [out] + list(inputs)
        # a training step launches the same few kernels over the same geometries: the kernel and its parameter
        # block are looked up by everything they depend on before anything is computed
        sig = (name, expr, out_dtype, shape, collapse, tuple(ptr), coords, ct, helpers,
               tuple((o.dtype, o.shape, o.strides, o.offset) for o in ops), tuple(dt for _, dt in scalars))
        hit = _EW_CACHE.get(sig)
        if hit is None or hit[0] is not dev:
            strides = [list(o.strides) if o.shape == shape else list(self._expand(o, shape).strides) for o in ops]
            if collapse:
                cshape, cst = _collapse(list(shape), strides)
                if not cshape:
                    cshape, cst = [1], [[0] for _ in ops]
            else:
                cshape, cst = list(reversed(shape)) or [1], [list(reversed(s)) or [0] for s in strides]
            m = max(MAXD, len(cshape))
            in_types = tuple(a.dtype.name for a in inputs)
            sc_types = tuple(dt.name for _, dt in scalars)
            key, src = _ew_spec(name, expr, out_dtype.name, in_types, sc_types, tuple(ptr), m, coords, ct, helpers)
            fam = None
            if family is not None:
                def fam():
                    return [_ew_spec(*(f[:6] + (m,) + f[7:])) for f in family()]
            hit = (dev, dev.kernel(key, lambda: src, family=fam), _meta(cshape, cst, [o.offset for o in ops], m))
            if len(_EW_CACHE) >= 8192:
                _EW_CACHE.clear()
            _EW_CACHE[sig] = hit
        args = [out.buf.mem] + [a.buf.mem for a in inputs] + [hit[2]]
        for v, dt in scalars:
            args.append(dt.np.type(v) if dt.name != "bool" else np.uint8(bool(v)))
        dev.launch_1d(hit[1], n, args)
        return out

    def _copy(self, a):
        return self._ew("copy", "x0", [a], [], a.dtype, a.shape)

    def _prep(self, args, out_dtype=None):
        """Split kernel arguments into arrays and scalars (Python numbers become ``s{j}``)."""
        arrs = [a for a in args if _is_arr(a)]
        dt = arrs[0].dtype
        shape = _bshape([a.shape for a in arrs])
        return arrs, dt, shape
