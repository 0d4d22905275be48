"""``WebGPUBackend``: the device, the allocator interface (buffers, host copies, casts, copies) and the elementwise
engine every elementwise kernel runs through. The kernels live in the topic modules, registered in
``runtime.KERNELS``; the backend binds them to itself."""
import functools
import math

import numpy as np

from ... import _dtype as _dt
from ..._strides import contiguous_strides
from ..base import Backend
from ..opencl.codegen import _collapse
from . import wgsl
from .runtime import HOST, ITEMSIZE, KERNELS, STORAGE, WGArray, WGBuffer, _is_arr, device, unavailable_reason

_EW_CACHE = {}


class WebGPUBackend(Backend):
    """The ``webgpu`` device: one WebGPU adapter through wgpu-py (Vulkan, Metal or Direct3D 12).

    dtypes: float32, int32 and bool; float16 where the adapter has ``shader-f16``. WebGPU has no 64-bit types:
    float64 (and complex) tensors are refused with a TypeError, as PyTorch's MPS device refuses float64. int64
    tensors (the framework's indices: targets, argmax results, index tensors) are stored *narrowed to int32*: a
    copy from the host checks that every value fits 32 bits (RuntimeError otherwise) and a copy back widens them
    again, so they behave as int64 for every value in the int32 range; arithmetic on them wraps at 32 bits."""

    kernel_language = "wgsl"
    # the compiler's fused elementwise runs become WGSL kernels
    codegen = "tinytorch.compiler.codegen_wgsl"
    dtypes = frozenset(STORAGE)

    def __init__(self):
        self.kernels = {n: functools.partial(k, self) for n, k in KERNELS.items()}
        self.inplace_kernels = {}

    # ---- device ----
    def is_available(self):
        return device() is not None

    def unavailable_reason(self):
        return unavailable_reason()

    def device_count(self):
        return 1 if device() is not None else 0

    def _dev(self, index=None):
        d = device()
        if d is None:
            raise RuntimeError(f"webgpu device is not available: {unavailable_reason()}")
        return d

    def dev_for(self, index=None):
        return self._dev(index)

    def synchronize(self, index=None):
        self._dev(index).finish()

    def memory_allocated(self, index=None):
        return self._dev(index).allocated

    def max_tensor_bytes(self, index=None):
        return self._dev(index).max_binding

    # ---- allocator ----
    def _check_dtype(self, dtype, dev):
        if dtype.name == "float16" and not dev.fp16:
            raise TypeError(f"Cannot convert a WebGPU Tensor to float16 dtype as the adapter ({dev.name}) lacks "
                            "the shader-f16 feature")
        if dtype.name not in self.dtypes:
            raise TypeError(f"Cannot convert a WebGPU Tensor to {dtype.name} dtype as the WebGPU framework doesn't "
                            f"support {dtype.name}")

    def _alloc(self, numel, dtype, dev):
        self._check_dtype(dtype, dev)
        mem, nbytes = dev.alloc(max(1, numel) * ITEMSIZE[dtype.name])
        return WGBuffer(mem, nbytes, numel, dev)

    def alloc(self, numel, dtype, index=None):
        return self._alloc(numel, dtype, self._dev(index))

    def _empty(self, shape, dtype, dev):
        buf = self._alloc(math.prod(shape), dtype, dev)
        return WGArray(buf, dtype, tuple(shape), contiguous_strides(tuple(shape)), 0)

    def from_numpy(self, arr, device=None):
        dev = self._dev()
        dtype = _dt.from_numpy_dtype(arr.dtype)
        buf = self._alloc(arr.size, dtype, dev)
        if arr.size:
            if dtype.name == "int64":
                lo, hi = (int(arr.min()), int(arr.max()))
                if lo < -2 ** 31 or hi >= 2 ** 31:
                    raise RuntimeError("webgpu stores int64 tensors as 32-bit integers, and this one holds "
                                       f"{lo if lo < -2 ** 31 else hi}, outside the int32 range")
            dev.write(buf.mem, np.ascontiguousarray(arr).astype(HOST[dtype.name], copy=False).ravel())
        return buf

    def to_numpy(self, native):
        a = native
        if not a.size:
            return np.empty(a.shape, a.dtype.np)
        if not a.is_contiguous():
            a = self._copy(a)
        host = HOST[a.dtype.name]
        n = a.size * ITEMSIZE[a.dtype.name]
        raw = a.buf.dev.read(n, a.buf.mem, a.offset * ITEMSIZE[a.dtype.name])
        return np.frombuffer(raw, host).astype(a.dtype.np).reshape(a.shape)

    def view(self, buf, dtype, shape, strides, offset):
        return WGArray(buf, dtype, shape, strides, offset)

    def wrap(self, native, dtype):
        a = native
        if a.dtype is not dtype:
            a = self.cast(a, dtype)
        return a, a.buf, a.strides, a.offset

    def cast(self, native, dtype):
        if native.dtype is dtype:
            return self._copy(native)
        return self._ew("cast", "x0", [native], [], dtype, native.shape, ct=wgsl.value_type(native.dtype))

    def copy_(self, dst, src):
        if _is_arr(src) and src.buf is dst.buf:
            src = self._copy(src)  # overlapping source and destination: read everything before writing
        if not _is_arr(src):
            self._ew("fill", "s0", [], [(src, dst.dtype)], dst.dtype, dst.shape, out=dst)
            return
        self._ew("copy", "x0", [self._expand(src, dst.shape)], [], dst.dtype, dst.shape, out=dst,
                 ct=wgsl.value_type(src.dtype))

    # ---- the elementwise engine ----
    def _expand(self, a, shape):
        """A broadcast view of ``a`` with ``shape`` (stride 0 in broadcast dims)."""
        if a.shape == tuple(shape):
            return a
        lead = len(shape) - a.ndim
        st = [0] * lead + [s if n != 1 or m == 1 else 0 for s, n, m in zip(a.strides, a.shape, shape[lead:])]
        return a.view(shape, st)

    def _ew(self, name, expr, inputs, scalars, out_dtype, shape, out=None, ct=None, ptr=(), coords=False):
        """Run ``out[i] = expr`` over ``shape``: inputs are ``x{k}`` (loaded at their strided offsets, as their
        ``wgsl.value_type``) or, for k in ``ptr``, the raw array ``A{k}`` with offset ``p{k + 1}``; scalars are
        ``s{j}`` of the given dtypes; ``ct`` is the WGSL compute type the helpers are written in (default: the
        first input's value type, else the output's). With ``coords`` the dims are not merged and the expression
        may read the coordinates ``c0`` (innermost dim), ``c1``."""
        shape = tuple(shape)
        n = math.prod(shape)
        dev = out.buf.dev if out is not None else (inputs[0].buf.dev if inputs else self._dev())
        if out is None:
            out = self._empty(shape, out_dtype, dev)
        if n == 0:
            return out
        ops = [out] + list(inputs)
        ct = ct or wgsl.value_type(inputs[0].dtype if inputs else out_dtype)
        sig = (name, expr, out_dtype, shape, ct, tuple(ptr), coords,
               tuple((o.dtype, o.shape, o.strides, o.offset) for o in ops), tuple(dt for _, dt in scalars))
        hit = _EW_CACHE.get(sig)
        if hit is None:
            strides = [list(o.strides) if o.shape == shape else list(self._expand(o, shape).strides) for o in ops]
            if coords:
                cshape, cst = list(reversed(shape)) or [1], [list(reversed(s)) or [0] for s in strides]
            else:
                cshape, cst = _collapse(list(shape), strides)
            if not cshape:
                cshape, cst = [1], [[0] for _ in ops]
            m = max(wgsl.MAXD, len(cshape))
            in_dts = tuple(a.dtype for a in inputs)
            sc_dts = tuple(dt for _, dt in scalars)
            words = wgsl.meta(cshape, cst, [o.offset for o in ops], m)
            key = ("ew", name, expr, out_dtype.name, tuple(d.name for d in in_dts), tuple(d.name for d in sc_dts),
                   m, ct, tuple(ptr), coords, len(cshape))
            hit = (key, _ew_source(expr, out_dtype, in_dts, sc_dts, m, ct, len(words), ptr, coords, len(cshape)),
                   words)
            if len(_EW_CACHE) >= 8192:
                _EW_CACHE.clear()
            _EW_CACHE[sig] = hit
        key, src, words = hit
        pipe = dev.pipeline(key, lambda: src)
        params = list(words) + [wgsl.scalar_word(v, dt) for v, dt in scalars]
        dev.launch(pipe, [out.buf.mem] + [a.buf.mem for a in inputs] + [dev.param_buffer(params)],
                   dev.groups_1d(n))
        return out

    def _copy(self, a):
        return self._ew("copy", "x0", [a], [], a.dtype, a.shape)


def _ew_source(expr, out_dtype, in_dts, sc_dts, m, ct, nwords, ptr=(), coords=False, nd=None):
    body = [f" let x{k} = {wgsl.load(d, f'A{k}[p{k + 1}]')};" for k, d in enumerate(in_dts) if k not in ptr]
    body += [f" let s{j} = {wgsl.scalar(d, nwords + j)};" for j, d in enumerate(sc_dts)]
    return (wgsl.header(out_dtype, *in_dts, *sc_dts) + ("enable f16;\n" if ct == "f16" and not
                                                        wgsl.header(out_dtype, *in_dts, *sc_dts) else "")
            + wgsl.bindings(out_dtype, in_dts) + wgsl.helpers(ct) + wgsl.GID + " if (gid >= P[1]) { return; }\n"
            + wgsl.index_code(1 + len(in_dts), m, coords, nd) + "\n" + "\n".join(body)
            + f"\n out[p0] = {wgsl.store(out_dtype, expr)};\n}}\n")
