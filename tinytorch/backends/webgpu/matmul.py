"""Matrix products: ``matmul`` (batched, with broadcast batch dims) as a tiled WGSL kernel.

Each workgroup of 16 x 16 invocations computes a 64 x 64 tile of C, each invocation a 4 x 4 block held in
registers; the 64 x 16 slice of A and the 16 x 64 slice of B it needs at each step of K are staged in workgroup
memory (each element of A and B is read from device memory once per tile instead of once per product). Operands
are read through their strides (a transposed view needs no copy); the batch index is the dispatch's z."""
import math

from ..._strides import contiguous_strides
from ..opencl.codegen import _bshape, _collapse
from . import wgsl
from .runtime import KERNELS, STORAGE

BM = BN = 64
BK = 16
_MB = 4  # batch dims of the index code


def _source(dt, mb):
    st = STORAGE[dt.name]
    acc = "f32" if dt.is_floating_point else "i32"
    return (wgsl.header(dt) +
            f"alias T = {st};\nalias ACC = {acc};\n" + wgsl.bindings(dt, [dt, dt]) +
            f"var<workgroup> As: array<ACC, {BM * BK}>;\nvar<workgroup> Bs: array<ACC, {BK * BN}>;\n"
            "@compute @workgroup_size(16, 16)\nfn main(@builtin(workgroup_id) wid: vec3<u32>, "
            "@builtin(local_invocation_id) lid: vec3<u32>) {\n"
            " let tx = i32(lid.x); let ty = i32(lid.y); let t = ty * 16 + tx;\n"
            f" let row0 = i32(wid.y) * {BM}; let col0 = i32(wid.x) * {BN};\n"
            " let M = P[1]; let N = P[2]; let K = P[3]; let sam = P[4]; let sak = P[5]; let sbk = P[6]; let sbn = P[7];\n"
            " var r = i32(wid.z); var pa = P[8]; var pb = P[9]; var po = 0;\n"
            f" for (var d = 0; d < P[0]; d++) {{ let c = r % P[10 + d]; r = r / P[10 + d];\n"
            f"  po += c * P[{10 + mb} + d]; pa += c * P[{10 + 2 * mb} + d]; pb += c * P[{10 + 3 * mb} + d]; }}\n"
            " var acc: array<ACC, 16>;\n"
            " for (var i = 0; i < 16; i++) { acc[i] = ACC(0); }\n"
            f" for (var k0 = 0; k0 < K; k0 += {BK}) {{\n"
            "  for (var i = 0; i < 4; i++) {\n"
            f"   let e = t + i * 256;\n"
            f"   let am = row0 + e / {BK}; let ak = k0 + e % {BK};\n"
            "   var av = ACC(0); if (am < M && ak < K) { av = ACC(A0[pa + am * sam + ak * sak]); }\n"
            "   As[e] = av;\n"
            f"   let bk = k0 + e / {BN}; let bn = col0 + e % {BN};\n"
            "   var bv = ACC(0); if (bk < K && bn < N) { bv = ACC(A1[pb + bk * sbk + bn * sbn]); }\n"
            "   Bs[e] = bv;\n"
            "  }\n"
            "  workgroupBarrier();\n"
            f"  for (var kk = 0; kk < {BK}; kk++) {{\n"
            f"   let a0 = As[(ty * 4) * {BK} + kk]; let a1 = As[(ty * 4 + 1) * {BK} + kk];\n"
            f"   let a2 = As[(ty * 4 + 2) * {BK} + kk]; let a3 = As[(ty * 4 + 3) * {BK} + kk];\n"
            "   for (var j = 0; j < 4; j++) {\n"
            f"    let b = Bs[kk * {BN} + tx * 4 + j];\n"
            "    acc[j] += a0 * b; acc[4 + j] += a1 * b; acc[8 + j] += a2 * b; acc[12 + j] += a3 * b;\n"
            "   }\n"
            "  }\n"
            "  workgroupBarrier();\n"
            " }\n"
            " for (var i = 0; i < 4; i++) { for (var j = 0; j < 4; j++) {\n"
            "  let row = row0 + ty * 4 + i; let col = col0 + tx * 4 + j;\n"
            "  if (row < M && col < N) { out[po + row * N + col] = T(acc[i * 4 + j]); }\n"
            " } }\n}\n")


@KERNELS.register("matmul")
def _matmul(be, a, b):
    """``a @ b`` for a (..., M, K) and b (..., K, N) with broadcast batch dims."""
    dt = a.dtype
    batch = _bshape([a.shape[:-2], b.shape[:-2]])
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    dev = a.buf.dev
    out = be._empty(tuple(batch) + (M, N), dt, dev)
    if out.size == 0:
        return out
    if K == 0:
        return be._ew("fill", "0", [], [], dt, out.shape, out=out)
    ab = be._expand(a.view(a.shape[:-2], a.strides[:-2]), batch)
    bb = be._expand(b.view(b.shape[:-2], b.strides[:-2]), batch)
    nb = math.prod(batch)
    if nb > 65535:
        raise RuntimeError(f"webgpu: matmul over {nb} batch entries exceeds the 65535 workgroups of a dispatch")
    bshape, bst = _collapse(list(batch), [list(contiguous_strides(tuple(batch))), list(ab.strides),
                                          list(bb.strides)]) if batch else ([], [[], [], []])
    mb = max(_MB, len(bshape))
    words = [0] * (10 + 4 * mb)
    words[0:10] = [len(bshape), M, N, K, a.strides[-2], a.strides[-1], b.strides[-2], b.strides[-1], a.offset,
                   b.offset]
    words[10:10 + len(bshape)] = bshape
    for j, st in enumerate(bst):  # out, a, b strides: out's are in units of M * N
        words[10 + (j + 1) * mb: 10 + (j + 1) * mb + len(st)] = [s * (M * N) for s in st] if j == 0 else st
    if any(not -2 ** 31 <= w < 2 ** 31 for w in words) or out.size >= 2 ** 31:
        raise RuntimeError("webgpu: a matmul operand does not fit the device's 32-bit indices")
    pipe = dev.pipeline(("matmul", dt.name, mb), lambda: _source(dt, mb))
    dev.launch(pipe, [out.buf.mem, a.buf.mem, b.buf.mem, dev.param_buffer(words)],
               (-(-N // BN), -(-M // BM), nb))
    return out


@KERNELS.register("einsum")
def _einsum(be, *ops, equation):
    """einsum as one broadcast product over all letters (strided views, no copies), then a sum over the
    contracted letters."""
    from ..._geometry import parse_einsum  # the op's own parser: '...' and implicit output
    from .reduce import _red
    terms, rhs = parse_einsum(equation, ops)
    letters = list(dict.fromkeys("".join(terms)))
    sizes, views = {}, []
    for t, a in zip(terms, ops):
        st = {}
        for c, n, s in zip(t, a.shape, a.strides):
            sizes[c] = max(sizes.get(c, 1), n)
            st[c] = st.get(c, 0) + s  # a repeated letter is a diagonal: strides add up
        views.append((a, t, st))
    full = list(rhs) + [c for c in letters if c not in rhs]
    shape = tuple(sizes[c] for c in full)
    expanded = []
    for a, t, st in views:
        dims = dict(zip(t, a.shape))
        expanded.append(a.view(shape, [st.get(c, 0) if dims.get(c, 1) != 1 else 0 for c in full]))
    prod = expanded[0] if len(expanded) == 1 else \
        be._ew("einsum_prod", " * ".join(f"x{i}" for i in range(len(expanded))), expanded, [], ops[0].dtype, shape)
    if len(full) == len(rhs):
        return be._copy(prod)
    return _red("sum")(be, prod, tuple(range(len(rhs), len(full))), False, ops[0].dtype)
