"""GEMM on the ``cuda`` device through cuBLAS (``cublasGemmStridedBatchedEx``), called with ctypes.

The library is found by ``cuda.pathfinder`` (the ``nvidia-cublas`` wheel, then the system's CUDA). tinytorch's
tensors are row-major, cuBLAS's matrices column-major: ``C = A @ B`` (M x N) is computed as ``C^T = B^T A^T``, so
B is cuBLAS's first operand and no operand is copied when its rows or its columns are contiguous (a transposed
weight, ``x @ W.T``, is an op flag, not a copy). A batch is one strided-batched call when every operand's batch
dims collapse to one stride (broadcast operands have stride 0), else the operand is made contiguous first.

TF32 follows ``torch.backends.cuda.matmul.allow_tf32`` (off by default, as in PyTorch: float32 GEMMs give float32
results); float16 and bfloat16 accumulate in float32 (``CUBLAS_COMPUTE_32F``), as PyTorch's default.
"""
import ctypes
import math

from ..._strides import contiguous_strides

# cudaDataType_t and cublasComputeType_t (cublas_api.h, library_types.h)
_DATA_TYPE = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 14}
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 77, 70
_OP_N, _OP_T = 0, 1
_GEMM_DEFAULT = -1
DTYPES = frozenset(_DATA_TYPE)

_LIB = []


def _lib():
    if not _LIB:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        lib = ctypes.CDLL(load_nvidia_dynamic_lib("cublas").abs_path)
        p, i, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
        lib.cublasCreate_v2.argtypes = [ctypes.POINTER(p)]
        lib.cublasSetStream_v2.argtypes = [p, p]
        lib.cublasSetMathMode.argtypes = [p, i]
        lib.cublasGemmStridedBatchedEx.argtypes = [p, i, i, i, i, i, p, p, i, i, i64, p, i, i, i64, p, p, i, i, i64,
                                                   i, i, i]
        for f in (lib.cublasCreate_v2, lib.cublasSetStream_v2, lib.cublasSetMathMode, lib.cublasGemmStridedBatchedEx):
            f.restype = i
        _LIB.append(lib)
    return _LIB[0]


def _handle(dev):
    """The device's cuBLAS handle, bound to its stream (made once per device)."""
    if dev.blas is None:
        lib = _lib()
        dev.activate()
        h = ctypes.c_void_p()
        _ok(lib.cublasCreate_v2(ctypes.byref(h)), "cublasCreate")
        _ok(lib.cublasSetStream_v2(h, ctypes.c_void_p(int(dev.stream))), "cublasSetStream")
        dev.blas = h
    return dev.blas


def _ok(status, what):
    if status != 0:
        raise RuntimeError(f"CUDA error: {what} failed with cuBLAS status {status}")


def _as_matrix(x, rows, cols):
    """(op, leading dimension) under which cuBLAS reads the row-major (rows x cols) view ``x`` as the column-major
    (cols x rows) matrix ``x^T``, or None when neither its rows nor its columns are contiguous."""
    s_r, s_c = x.strides[-2], x.strides[-1]
    if (s_c == 1 or cols == 1) and (s_r >= max(1, cols) or rows == 1):
        return _OP_N, max(s_r, cols, 1)
    if (s_r == 1 or rows == 1) and (s_c >= max(1, rows) or cols == 1):
        return _OP_T, max(s_c, rows, 1)
    return None


def _batch_stride(x, batch):
    """The one stride that walks ``x``'s batch dims (expanded to ``batch``) in row-major order, or None."""
    dims = [(n, s) for n, s in zip(batch, x.strides[:-2]) if n != 1]
    if not dims:
        return 0
    stride = dims[-1][1]
    expect = stride * dims[-1][0]
    for n, s in reversed(dims[:-1]):
        if s != expect:
            return None
        expect = s * n
    return stride


def plan(a, b, M, K, N):
    """How cuBLAS computes ``a @ b`` (``a``, ``b`` expanded to the output's batch): (arguments of
    ``cublasGemmStridedBatchedEx`` after the handle: transa, transb, m, n, k, lda, strideA, ldb, strideB, ldc,
    strideC; the operands passed as its A and B), or None for an operand that must be made contiguous first
    (``copy_a`` / ``copy_b``). In column-major terms ``C^T (N x M) = op(B^T) (N x K) @ op(A^T) (K x M)``: B is
    cuBLAS's A."""
    fa, fb = _as_matrix(a, M, K), _as_matrix(b, K, N)
    batch = a.shape[:-2]
    sa, sb = _batch_stride(a, batch), _batch_stride(b, batch)
    copy_a, copy_b = fa is None or sa is None, fb is None or sb is None
    if copy_a:
        fa, sa = (_OP_N, K), M * K
    if copy_b:
        fb, sb = (_OP_N, N), K * N
    return (fb[0], fa[0], N, M, K, fb[1], sb, fa[1], sa, N, M * N), copy_a, copy_b


def gemm(be, a, b, out, beta=0.0):
    """``out = a @ b + beta * out`` for float tensors on one device: ``a`` (..., M, K), ``b`` (..., K, N), ``out``
    (batch..., M, N) contiguous, batch dims broadcast. Returns ``out``."""
    dt = out.dtype
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = tuple(out.shape[:-2])
    a = be._expand(a, batch + (M, K))
    b = be._expand(b, batch + (K, N))
    args, copy_a, copy_b = plan(a, b, M, K, N)
    if copy_a:
        a = be._copy(a)
    if copy_b:
        b = be._copy(b)
    ta, tb, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c = args
    dev = out.buf.dev
    lib = _lib()
    h = _handle(dev)
    if dt.name == "float64":
        compute, scal = _COMPUTE_64F, ctypes.c_double
    else:
        from ... import _legacy
        tf32 = dt.name == "float32" and _legacy.get_float32_matmul_precision() != "highest"
        compute, scal = (_COMPUTE_32F_FAST_TF32 if tf32 else _COMPUTE_32F), ctypes.c_float
    alpha, beta_ = scal(1.0), scal(beta)
    isz = dt.itemsize
    t = _DATA_TYPE[dt.name]
    dev.activate()
    _ok(lib.cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, ctypes.byref(alpha), b.buf.mem + b.offset * isz, t, lda,
                                       stride_a, a.buf.mem + a.offset * isz, t, ldb, stride_b, ctypes.byref(beta_),
                                       out.buf.mem + out.offset * isz, t, ldc, stride_c, math.prod(batch), compute,
                                       _GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx")
    return out


def matmul(be, a, b):
    """The ``matmul`` kernel of the ``cuda`` device for 2-d and batched operands (1-d ones are made 2-d by the
    op): cuBLAS for float dtypes."""
    batch = tuple(_broadcast(a.shape[:-2], b.shape[:-2]))
    shape = batch + (a.shape[-2], b.shape[-1])
    out = be._empty(shape, a.dtype, a.buf.dev)
    if out.size == 0:
        return out
    if a.shape[-1] == 0:
        return be._ew("fill", "(OT)0", [], [], a.dtype, out.shape, out=out)
    return gemm(be, a, b, out)


def linear(be, x, w, bias):
    """``x @ w.T + bias`` as one GEMM: the bias is broadcast into the output first and added by ``beta = 1``."""
    K = x.shape[-1]
    lead = x.shape[:-1]
    N = w.shape[0] if w.ndim == 2 else 1
    x2 = x.view((1, K), (0, x.strides[-1])) if x.ndim == 1 else x
    if x2.ndim > 2:
        if not x2.is_contiguous():
            x2 = be._copy(x2)
        x2 = x2.view((math.prod(lead), K), (K, 1))
    wt = w.view((w.shape[1], w.shape[0]), (w.strides[1], w.strides[0])) if w.ndim == 2 else \
        w.view((K, 1), (w.strides[0], 0))
    out = be._empty((x2.shape[0], N), x.dtype, x.buf.dev)
    if out.size:
        if bias is not None and K:
            be.copy_(out, be._expand(bias if bias.ndim else bias.view((1,), (0,)), out.shape))
            gemm(be, x2, wt, out, beta=1.0)
        elif bias is not None:
            be.copy_(out, be._expand(bias if bias.ndim else bias.view((1,), (0,)), out.shape))
        elif K:
            gemm(be, x2, wt, out)
        else:
            be._ew("fill", "(OT)0", [], [], x.dtype, out.shape, out=out)
    shape = tuple(lead) + ((N,) if w.ndim == 2 else ())
    return out.view(shape, contiguous_strides(shape))


def _broadcast(s1, s2):
    n = max(len(s1), len(s2))
    s1 = (1,) * (n - len(s1)) + tuple(s1)
    s2 = (1,) * (n - len(s2)) + tuple(s2)
    return [q if p == 1 else p for p, q in zip(s1, s2)]  # a size-1 dim takes the other's size, 0 included
