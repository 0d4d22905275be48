"""Linear algebra: GEMM (a local-memory tiled kernel, a register-blocked kernel for row-major B, an NT kernel for
``x @ W.T``), linear with the bias fused into the store, and einsum."""
import math

import numpy as np

from ..._strides import contiguous_strides
from .codegen import _bshape, _collapse, _ct, _isf, _struct
from .elementwise import _binary
from .reduce import _red
from .runtime import KERNELS

_VN = 16  # vector width of the register-blocked GEMM


@KERNELS.register("matmul")
def _matmul(be, a, b):
    dt = a.dtype
    batch = _bshape([a.shape[:-2], b.shape[:-2]])
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    dev = a.buf.dev
    out = be._empty(tuple(batch) + (M, N), dt, dev)
    if out.size == 0:
        return out
    if K == 0:
        return be._ew("fill", "(OT)0", [], [], dt, out.shape, out=out)
    nt = _isf(dt) and a.strides[-1] == 1 and b.strides[-2] == 1 and b.strides[-1] >= K and K >= 16 \
        and (N % _VN or b.strides[-1] != 1)
    if not nt and _isf(dt) and N % _VN and M * K * N >= 4096:
        # pad N to the vector width: two small copies, then the register-blocked kernel (the local-memory
        # fallback below is slow on CPU drivers, which emulate local memory)
        Np = -(-N // _VN) * _VN
        bp = be._empty(b.shape[:-1] + (Np,), dt, dev)
        be._ew("fill", "(OT)0", [], [], dt, bp.shape, out=bp)
        be.copy_(bp.view(b.shape, bp.strides), b)
        outp = _matmul(be, a, bp)
        return be._copy(outp.view(out.shape, outp.strides))
    fast = _isf(dt) and N % _VN == 0 and not nt
    if fast and (b.strides[-1] != 1 or b.strides[-2] != N):
        b = be._copy(b)  # O(K*N) to give the O(M*K*N) kernel rows of B it can load as vectors
    ab = be._expand(a.view(a.shape[:-2], a.strides[:-2]), batch)
    bb = be._expand(b.view(b.shape[:-2], b.strides[:-2]), batch)
    nb = math.prod(batch)
    bshape, bst = _collapse(list(batch), [list(contiguous_strides(tuple(batch))), list(ab.strides), list(bb.strides)]) \
        if batch else ([], [[], [], []])
    mb = max(3, len(bshape))
    meta = np.zeros(8 + 4 * mb, np.int64)
    meta[0:8] = [len(bshape), M, N, K, a.strides[-2], a.strides[-1], b.strides[-2], b.strides[-1]]
    meta[8:8 + len(bshape)] = bshape
    for j, st in enumerate(bst):
        meta[8 + (j + 1) * mb: 8 + (j + 1) * mb + len(st)] = st
    bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                   f"pa += c * P.v[{8 + 2 * mb + d}]; pb += c * P.v[{8 + 3 * mb + d}]; "
                   f"po += c * P.v[{8 + mb + d}]; }}\n" for d in range(mb))
    if fast:
        return _matmul_vec(out, a, b, ab, bb, meta, mb, bidx, nb, M, N)
    if nt:
        return _matmul_nt(out, a, b, ab, bb, meta, mb, bidx, nb, M, N)
    TS, WPT = 32, 4  # 32x32 output tile per work-group, 4 outputs per work-item (along rows)
    key = ("matmul", dt.name, mb)

    def source():
        bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                       f"pa += c * P.v[{8 + 2 * mb + d}]; pb += c * P.v[{8 + 3 * mb + d}]; "
                       f"po += c * P.v[{8 + mb + d}]; }}\n" for d in range(mb))
        return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\n"
                f"__kernel __attribute__((reqd_work_group_size({TS}, {TS // WPT}, 1)))\n"
                f"void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob) {{\n"
                f" const int tc = get_local_id(0), tr = get_local_id(1);\n"
                f" const long col = get_group_id(0) * {TS} + tc, row0 = get_group_id(1) * {TS};\n"
                f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sak = P.v[5], sbk = P.v[6], sbn = P.v[7];\n"
                f" __local T As[{TS}][{TS + 1}], Bs[{TS}][{TS + 1}];\n"
                f" T acc[{WPT}];\n for (int w = 0; w < {WPT}; ++w) acc[w] = 0;\n"
                f" for (long t = 0; t < K; t += {TS}) {{\n"
                f"  for (int w = 0; w < {WPT}; ++w) {{ int lr = tr + w * {TS // WPT};\n"
                f"   long ar = row0 + lr, ak = t + tc, bk = t + lr;\n"
                f"   As[lr][tc] = (ar < M && ak < K) ? A[pa + ar * sam + ak * sak] : (T)0;\n"
                f"   Bs[lr][tc] = (bk < K && col < N) ? B[pb + bk * sbk + col * sbn] : (T)0; }}\n"
                f"  barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"  for (int kk = 0; kk < {TS}; ++kk) {{ T bv = Bs[kk][tc];\n"
                f"   for (int w = 0; w < {WPT}; ++w) acc[w] += As[tr + w * {TS // WPT}][kk] * bv; }}\n"
                f"  barrier(CLK_LOCAL_MEM_FENCE);\n }}\n"
                f" for (int w = 0; w < {WPT}; ++w) {{ long row = row0 + tr + w * {TS // WPT};\n"
                f"  if (row < M && col < N) out[po * M * N + row * N + col] = acc[w]; }}\n}}\n")
    k = dev.kernel(key, source)
    args = [out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset)]
    gx = (N + TS - 1) // TS * TS
    gy = (M + TS - 1) // TS * (TS // WPT)
    dev.launch(k, (gx, gy, nb), (TS, TS // WPT, 1), args)
    return out


def _matmul_vec(out, a, b, ab, bb, meta, mb, bidx, nb, M, N):
    """GEMM for N % 16 == 0 with row-major B: each work-item computes a 4 x 16 block of C with 16-wide vector
    accumulators over B's rows (register blocking; no local memory, which CPU drivers emulate slowly)."""
    dt = a.dtype
    dev = a.buf.dev
    RM, VN, LX, LY = 4, _VN, 4, 8
    key = ("matmul_vec", dt.name, mb)

    def source():
        accs = " ".join(f"V acc{r} = 0;" for r in range(RM))
        # rows past M are clamped for loads and skipped for stores, so M needs no padding
        rows = " ".join(f"long ra{r} = pa + min(row0 + {r}, M - 1) * sam;" for r in range(RM))
        upd = " ".join(f"acc{r} += A[ra{r} + k * sak] * bv;" for r in range(RM))
        st = " ".join(f"if (row0 + {r} < M) vstore{VN}(acc{r}, 0, out + po * M * N + (row0 + {r}) * N + col0);"
                      for r in range(RM))
        return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\ntypedef {_ct(dt)}{VN} V;\n"
                f"__kernel void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob) {{\n"
                f" const long col0 = get_global_id(0) * {VN}, row0 = get_global_id(1) * {RM};\n"
                f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sak = P.v[5];\n"
                f" if (col0 >= N || row0 >= M) return;\n"
                f" {accs} {rows}\n"
                f" for (long k = 0; k < K; ++k) {{ V bv = vload{VN}(0, B + pb + k * N + col0); {upd} }}\n"
                f" {st}\n}}\n")
    k = dev.kernel(key, source)
    args = [out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset)]
    gx = -(-(N // VN) // LX) * LX
    gy = -(-(-(-M // RM)) // LY) * LY
    dev.launch(k, (gx, gy, nb), (LX, LY, 1), args)
    return out


@KERNELS.register("linear")
def _linear(be, x, w, b):
    """``x @ w.T + b`` as one NT GEMM with the bias added in the store (rows of x and w contiguous along K)."""
    if x.ndim == 1:  # (K,) -> (N,)
        out = _linear(be, x.view((1,) + x.shape, (0,) + x.strides), w, b)
        return out.view(out.shape[1:], out.strides[1:])
    if w.ndim == 1:  # a weight vector (K,): (..., K) -> (...)
        out = _linear(be, x, w.view((1,) + w.shape, (0,) + w.strides), b)
        return out.view(out.shape[:-1], out.strides[:-1])
    K = x.shape[-1]
    if not _isf(x.dtype) or x.strides[-1] != 1 or w.strides[-1] != 1 or K < 16 or \
            (b is not None and b.dtype is not x.dtype):
        out = _matmul(be, x, w.view((w.shape[1], w.shape[0]), (w.strides[1], w.strides[0])))
        return _binary("add")(be, out, b, _out=out) if b is not None else out
    if x.ndim == 2:
        x2 = x
    else:
        xc = x if x.is_contiguous() else be._copy(x)
        x2 = xc.view((math.prod(x.shape[:-1]), K), (K, 1))
    M, N = x2.shape[0], w.shape[0]
    out = be._empty((M, N), x.dtype, x.buf.dev)
    if out.size:
        bias = None
        if b is not None:
            bias = b if b.is_contiguous() else be._copy(b)
        meta = np.zeros(8 + 12, np.int64)
        meta[0:8] = [0, M, N, K, x2.strides[0], 1, 1, w.strides[0]]
        bidx = "".join(f"if (P.v[0] > {d}) {{ long c = r % P.v[{8 + d}]; r /= P.v[{8 + d}]; "
                       f"pa += c * P.v[{8 + 6 + d}]; pb += c * P.v[{8 + 9 + d}]; "
                       f"po += c * P.v[{8 + 3 + d}]; }}\n" for d in range(3))
        _matmul_nt(out, x2, w, x2, w, meta, 3, bidx, 1, M, N, bias=bias)
    return out.view(x.shape[:-1] + (N,), contiguous_strides(x.shape[:-1] + (N,)))


def _matmul_nt(out, a, b, ab, bb, meta, mb, bidx, nb, M, N, bias=None):
    """GEMM for A with rows contiguous along K and B stored transposed (B^T row-major, as in ``x @ W.T``):
    each work-item computes a 4 x 4 block of C as dot products of 8-wide vectors along K, so the
    transposed operand needs no copy."""
    dt = a.dtype
    dev = a.buf.dev
    RM, RN, VK, LX, LY = 4, 4, 8, 8, 4
    key = ("matmul_nt", dt.name, mb, bias is not None)

    def source():
        ii, jj = range(RM), range(RN)
        rows = " ".join(f"long ra{i} = pa + min(m0 + {i}, M - 1) * sam;" for i in ii)
        cols = " ".join(f"long rb{j} = pb + min(n0 + {j}, N - 1) * sbn;" for j in jj)
        accs = " ".join(f"V c{i}{j} = 0;" for i in ii for j in jj)
        vl = " ".join(f"V a{i} = vload{VK}(0, A + ra{i} + k);" for i in ii) + " " + \
            " ".join(f"V b{j} = vload{VK}(0, B + rb{j} + k);" for j in jj)
        upd = " ".join(f"c{i}{j} += a{i} * b{j};" for i in ii for j in jj)
        hs = " ".join(f"T s{i}{j} = " + " + ".join(f"c{i}{j}.s{q}" for q in range(VK)) + ";" for i in ii for j in jj)
        tail = " ".join(f"T x{i} = A[ra{i} + k];" for i in ii) + " " + \
            " ".join(f"T y{j} = B[rb{j} + k];" for j in jj) + " " + \
            " ".join(f"s{i}{j} += x{i} * y{j};" for i in ii for j in jj)
        bv = " + bias[bo + min(n0 + {j}, N - 1)]" if bias is not None else ""
        st = " ".join(f"if (m0 + {i} < M && n0 + {j} < N) out[po * M * N + (m0 + {i}) * N + n0 + {j}] = s{i}{j}"
                      + bv.format(j=j) + ";" for i in ii for j in jj)
        return (_struct(len(meta)) + f"typedef {_ct(dt)} T;\ntypedef {_ct(dt)}{VK} V;\n"
                f"__kernel void k(__global T* out, __global const T* A, __global const T* B, Params P, long oa, long ob"
                + (", __global const T* bias, long bo" if bias is not None else "") + ") {\n"
                f" const long n0 = get_global_id(0) * {RN}, m0 = get_global_id(1) * {RM};\n"
                f" long r = get_global_id(2), pa = oa, pb = ob, po = 0;\n{bidx}"
                f" const long M = P.v[1], N = P.v[2], K = P.v[3], sam = P.v[4], sbn = P.v[7];\n"
                f" if (n0 >= N || m0 >= M) return;\n {rows} {cols}\n {accs}\n long k = 0;\n"
                f" for (; k + {VK} <= K; k += {VK}) {{ {vl} {upd} }}\n {hs}\n"
                f" for (; k < K; ++k) {{ {tail} }}\n {st}\n}}\n")
    k = dev.kernel(key, source)
    args = [out.buf.mem, a.buf.mem, b.buf.mem, meta, np.int64(ab.offset), np.int64(bb.offset),
            *((bias.buf.mem, np.int64(bias.offset)) if bias is not None else ())]
    gx = -(-(-(-N // RN)) // LX) * LX
    gy = -(-(-(-M // RM)) // LY) * LY
    dev.launch(k, (gx, gy, nb), (LX, LY, 1), args)
    return out


@KERNELS.register("einsum")
def _einsum(be, *ops, equation):
    """einsum as one broadcast product over all letters, then a sum over the contracted ones."""
    from ..._geometry import parse_einsum  # the op's own parser: '...' and implicit output
    terms, rhs = parse_einsum(equation, ops)
    letters = list(dict.fromkeys("".join(terms)))
    sizes = {}
    views = []
    for t, a in zip(terms, ops):
        st = {}
        for c, n, s in zip(t, a.shape, a.strides):
            sizes[c] = max(sizes.get(c, 1), n)
            st[c] = st.get(c, 0) + s  # a repeated letter is a diagonal: strides add up
        views.append((a, t, st))
    full = [c for c in rhs] + [c for c in letters if c not in rhs]
    shape = tuple(sizes[c] for c in full)
    expanded = []
    for a, t, st in views:
        dims = {c: n for c, n in zip(t, a.shape)}
        expanded.append(a.view(shape, [st.get(c, 0) if dims.get(c, 1) != 1 else 0 for c in full]))
    prod = expanded[0] if len(expanded) == 1 else None
    if prod is None:
        expr = " * ".join(f"x{i}" for i in range(len(expanded)))
        prod = be._ew("einsum_prod", expr, expanded, [], ops[0].dtype, shape)
    nred = len(full) - len(rhs)
    if nred == 0:
        return be._copy(prod)
    return _red("sum")(be, prod, tuple(range(len(rhs), len(full))), False, ops[0].dtype)
