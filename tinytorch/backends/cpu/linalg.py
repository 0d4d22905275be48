"""Linear algebra of the ``cpu`` backend: matmul (and linear), einsum, the LAPACK ops and the FFTs."""
import numpy as np

from .registry import KERNELS, _quiet


_SPLIT_K = 4096


@KERNELS.register("matmul")
def _matmul(a, b):
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] >= 2 * _SPLIT_K and a.shape[1] >= 16 * max(a.shape[0], b.shape[1]):
        # long thin products (convolution weight gradients: K = N*H*W): OpenBLAS runs them on one core at a
        # few GFLOP/s; summing GEMMs over K blocks is ~3x faster
        k = a.shape[1]
        out = np.matmul(a[:, :_SPLIT_K], b[:_SPLIT_K])
        for i in range(_SPLIT_K, k, _SPLIT_K):
            out += np.matmul(a[:, i:i + _SPLIT_K], b[i:i + _SPLIT_K])
        return out
    if a.ndim == 2 and b.ndim == 2 and 32 <= a.shape[0] * a.shape[1] <= 160 and b.shape[1] >= 16384:
        # a tiny left factor times very wide columns (the first convolution of a CNN: (6, 25) @ (25, N*H*W)):
        # OpenBLAS takes 2-6x longer on it than on the same GEMM split into column blocks that stay in cache
        out = np.empty((a.shape[0], b.shape[1]), np.result_type(a, b))
        for i in range(0, b.shape[1], 4096):
            np.matmul(a, b[:, i:i + 4096], out=out[:, i:i + 4096])
        return out
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1:
        # K = 1 (weight gradients at batch size 1): NumPy's matmul is ~5x slower than the broadcast product
        return np.multiply(a, b)
    if b.ndim > 2 and b.strides[-1] != b.itemsize and b.size >= 4096:
        # a batched right factor with transposed matrices (attention's q @ k^T): NumPy's stacked matmul runs
        # 2-3x slower on it than on a contiguous copy, copy included
        b = np.ascontiguousarray(b)
    if a.ndim > 2 and b.ndim == 2 and a.size:
        # one (N*M, K) @ (K, P) GEMM instead of NumPy's loop of N small ones (2x faster for GPT-sized inputs)
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    return np.matmul(a, b)


@KERNELS.register("linear")
def _linear(x, w, b):
    out = _matmul(x, w.T)
    if b is not None:
        out += b
    return out


@KERNELS.register("einsum")
def _einsum(*ops, equation):
    dt = ops[0].dtype if ops else None
    if dt is not None and (dt.kind == "V" or dt == np.float16):
        # np.einsum has no bfloat16 loop and a slow float16 one: accumulate in float32, as torch does
        return np.einsum(equation, *(o.astype(np.float32) for o in ops), optimize=len(ops) > 2).astype(dt)
    return np.einsum(equation, *ops, optimize=len(ops) > 2)


def _pack(batch, *parts):
    # multi-output LAPACK ops hand back one flat-packed array (see tinytorch/_ops/lapack.py)
    return np.concatenate([p.reshape(batch + (-1,)) for p in parts], axis=-1)


@KERNELS.register("linalg_eigh")
def _eigh(a, UPLO):
    w, v = np.linalg.eigh(a, UPLO)
    return _pack(a.shape[:-2], w, v)


@KERNELS.register("linalg_eig")
def _eig(a):
    w, v = np.linalg.eig(a)  # NumPy returns a real dtype when every eigenvalue is real; torch is always complex
    ct = np.result_type(a.dtype, np.complex64)
    return _pack(a.shape[:-2], w.astype(ct, copy=False), v.astype(ct, copy=False))


@KERNELS.register("linalg_svd")
def _svd(a, full_matrices):
    finite = np.isfinite(a).all(axis=(-2, -1))
    if finite.all():
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        return _pack(a.shape[:-2], u, s, vh)
    # LAPACK's gesdd can loop forever on a non-finite matrix (NumPy's does), so those never reach it. PyTorch
    # raises on NaN and, on inf, hands back what gesdd's scaling leaves: NaN singular values and exchange matrices
    nan = np.isnan(a).any(axis=(-2, -1))
    if nan.any():
        where = f"(Batch element {int(np.flatnonzero(nan.reshape(-1))[0])}): " if a.ndim > 2 else ""
        raise np.linalg.LinAlgError(f"linalg.svd: {where}The algorithm failed to converge because the input "
                                    "matrix contained non-finite values.")
    u, s, vh = np.linalg.svd(np.where(finite[..., None, None], a, 0), full_matrices=full_matrices)
    m, n, k = a.shape[-2], a.shape[-1], min(a.shape[-2:])

    def exchange(rows, cols):
        # MKL's gesdd with inf in the leading entry (where the fuzzer and most overflows put it) returns the
        # identity with its first and k-th columns swapped; an inf elsewhere gives other, position-dependent
        # NaN patterns (or LinAlgError) that follow no rule worth reproducing
        e = np.eye(rows, cols, dtype=u.dtype)
        e[[0, k - 1]] = e[[k - 1, 0]]
        return e
    bad = ~finite
    u[bad], vh[bad] = exchange(m, u.shape[-1]), exchange(vh.shape[-2], n)
    s[bad] = np.nan
    return _pack(a.shape[:-2], u, s, vh)


def _householder(alpha, x):
    """LAPACK's larfg as PyTorch's LAPACK (MKL) carries inf/NaN through it: the reflector (tau, beta, v) with
    H [alpha; x] = [beta; 0], v = [1; x / (alpha - beta)]. Its hypot takes the larger and smaller magnitude
    by comparisons that favour the norm of x (a NaN alpha gives beta = |x| sqrt 2, a NaN norm gives NaN), and
    beta gets the opposite sign of alpha by a comparison (a NaN alpha counts as negative)."""
    if x.size == 0:
        return 0.0, alpha, x
    if np.isnan(x).any():
        xnorm = np.nan
    elif np.isinf(x).any():
        xnorm = np.inf
    else:
        xnorm = np.linalg.norm(x.astype(np.float64))
    if xnorm == 0:
        return 0.0, alpha, x
    xa = abs(alpha)
    w, z = (xa if xa > xnorm else xnorm), (xa if xa < xnorm else xnorm)
    r = w if z == 0 else w * np.sqrt(1 + (z / w) ** 2)
    beta = -r if alpha >= 0 else r
    return (beta - alpha) / beta, beta, x * (1 / (alpha - beta))


def _reflect(v, tau, c, trim=True):
    """c <- (I - tau v v^T) c in place. With ``trim`` as LAPACK's larf (the one PyTorch's orgqr runs): nothing
    for tau = 0, only up to v's last nonzero entry and c's last nonzero column, and (reference BLAS's ger) no
    update of a column whose v^T c is 0, so a NaN tau reaches only the entries it multiplies by something
    nonzero. Without, as MKL's geqrf updates: every entry, tau = 0 included (0 * inf is NaN there)."""
    if not trim:
        c -= tau * np.outer(v, c.T @ v)
        return
    if tau == 0:
        return
    nz = np.flatnonzero(v != 0)
    lv = nz[-1] + 1 if nz.size else 0
    cols = np.flatnonzero((c[:lv] != 0).any(axis=0))
    if not lv or not cols.size:
        return
    lc = cols[-1] + 1
    w = c[:lv, :lc].T @ v[:lv]
    live = w != 0
    c[:lv, :lc] -= np.where(live, tau * np.outer(v[:lv], w), 0)


def _qr_by_reflections(a, ncols):
    """Q (m, ncols) and the factored matrix of one real matrix by unblocked Householder QR (LAPACK's geqr2 then
    org2r), step for step, so that inf and NaN reach the entries of Q and R that PyTorch's LAPACK gives them."""
    A = np.array(a, dtype=np.float64)
    m, n = A.shape
    k = min(m, n)
    tau = np.zeros(k)
    for i in range(k):
        tau[i], A[i, i], A[i + 1:, i] = _householder(A[i, i], A[i + 1:, i].copy())
        if i < n - 1:
            piv, A[i, i] = A[i, i], 1.0
            _reflect(A[i:, i].copy(), tau[i], A[i:, i + 1:], trim=False)
            A[i, i] = piv
    Q = np.zeros((m, ncols))
    Q[:, :k] = np.tril(A[:, :k], -1)
    Q[np.arange(k, ncols), np.arange(k, ncols)] = 1
    for i in range(k - 1, -1, -1):
        if i < ncols - 1:
            Q[i, i] = 1.0
            _reflect(Q[i:, i].copy(), tau[i], Q[i:, i + 1:])
        Q[i + 1:, i] *= -tau[i]
        Q[i, i] = 1 - tau[i]
        Q[:i, i] = 0
    return Q, A


@KERNELS.register("linalg_qr")
def _qr(a, mode):
    mode = "reduced" if mode == "r" else mode
    finite = np.isfinite(a).all(axis=(-2, -1))
    if finite.all() or a.dtype.kind == "c":
        q, r = np.linalg.qr(a, mode=mode)
        return _pack(a.shape[:-2], q, r)
    # a matrix with inf/NaN goes through the reflections one by one: NumPy's blocked LAPACK spreads NaN to
    # other entries than PyTorch's does (a NaN leading entry leaves R[0, 0] = |column| there, for one)
    q, r = np.linalg.qr(np.where(finite[..., None, None], a, 0), mode=mode)
    with _quiet():
        for idx in filter(lambda i: not finite[i], np.ndindex(finite.shape)):
            Q, A = _qr_by_reflections(a[idx], q.shape[-1])
            q[idx] = Q
            r[idx] = np.triu(A[:r.shape[-2]])
    return _pack(a.shape[:-2], q, r)


@KERNELS.register("linalg_lu_factor")
def _lu_factor(a):
    """LU with partial pivoting of (..., m, n) ``a`` (LAPACK getrf's algorithm, unblocked): the packed factor
    (unit-lower L below the diagonal, U on and above it), the 1-based row interchanges (int32), and info (the
    1-based index of the first zero pivot, else 0). NumPy has no getrf, so the column loop is here: each step
    is a vectorized pivot search, row swap and rank-1 update over the whole batch."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    # the batch count spelled out: reshape cannot infer a -1 beside an empty m or n
    A = np.array(a, dtype=a.dtype, copy=True).reshape(int(np.prod(batch, dtype=np.int64)), m, n)
    B, k = A.shape[0], min(m, n)
    piv = np.empty((B, k), np.int32)
    info = np.zeros(B, np.int32)
    rows = np.arange(B)
    with _quiet():
        for j in range(k):
            p = j + np.argmax(np.abs(A[:, j:, j]), axis=1)  # first largest |a_ij|, as LAPACK's i?amax
            piv[:, j] = p + 1
            swap = p != j
            if swap.any():
                r, pr = rows[swap], p[swap]
                tmp = A[r, j].copy()
                A[r, j] = A[r, pr]
                A[r, pr] = tmp
            d = A[:, j, j]
            zero = d == 0
            info[(info == 0) & zero] = j + 1
            A[:, j + 1:, j] /= np.where(zero, 1, d)[:, None]
            A[:, j + 1:, j + 1:] -= A[:, j + 1:, j:j + 1] * A[:, j:j + 1, j + 1:]
    return A.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _lapack(fn):
    def k(a):
        with _quiet():
            return np.asarray(fn(a), dtype=a.dtype)
    return k


@KERNELS.register("fft_c2c")
def _fft_c2c(a, dims, norm, forward):
    return (np.fft.fftn if forward else np.fft.ifftn)(a, axes=dims, norm=norm).astype(a.dtype, copy=False)


@KERNELS.register("fft_r2c")
def _fft_r2c(a, dims, norm, onesided):
    out = (np.fft.rfftn if onesided else np.fft.fftn)(a, axes=dims, norm=norm)
    return out.astype(np.complex64 if a.dtype == np.float32 else np.complex128, copy=False)


@KERNELS.register("fft_c2r")
def _fft_c2r(a, dims, norm, last_dim_size):
    s = [a.shape[d] for d in dims[:-1]] + [last_dim_size]
    out = np.fft.irfftn(a, s=s, axes=dims, norm=norm)
    return out.astype(np.float32 if a.dtype == np.complex64 else np.float64, copy=False)


def _substitute(a, x, upper, unitriangular):
    """Solves T X = B in place of ``x`` (holding B) by substitution, T the upper or lower triangle of ``a``, as
    reference BLAS's trsm does it: a zero entry of the right-hand side is neither divided nor propagated, so
    NaN/inf/0 on T's diagonal or in its triangle reach only the solution entries that depend on them."""
    n = a.shape[-1]
    for k in (range(n - 1, -1, -1) if upper else range(n)):
        xk = x[..., k, :]
        live = xk != 0
        if not unitriangular:
            xk = np.where(live, xk / a[..., k, k, None], xk)
            x[..., k, :] = xk
        rows = slice(0, k) if upper else slice(k + 1, n)
        x[..., rows, :] -= np.where(live[..., None, :], a[..., rows, k, None] * xk[..., None, :], 0)
    return x


@KERNELS.register("linalg_solve_triangular")
def _solve_triangular(a, b, upper, unitriangular):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    with np.errstate(all="ignore"):
        if np.isfinite(a).all() and np.isfinite(x).all():
            # finite input: one LAPACK solve on the triangle is exact in the same way and far faster than the
            # Python loop; a singular triangle falls through to substitution (inf/NaN, no error, as trsm)
            t = np.triu(a) if upper else np.tril(a)
            if unitriangular:
                t = t.copy()
                idx = np.arange(a.shape[-1])
                t[..., idx, idx] = 1
            try:
                return np.linalg.solve(t, x)
            except np.linalg.LinAlgError:
                pass
        return _substitute(a, x, upper, unitriangular)


@KERNELS.register("linalg_inv")
def _inv(a):
    nan = np.isnan(a).any(axis=(-2, -1))
    if not nan.any():
        return _lapack(np.linalg.inv)(a)
    # a NaN anywhere in a matrix reaches every entry of its inverse through MKL's getrf/getri (PyTorch's), and
    # never raises; OpenBLAS's leaves some rows finite. Those matrices get an all-NaN inverse here, the others
    # (an identity standing in for the NaN ones) their LAPACK inverse or its singularity error
    eye = np.eye(a.shape[-1], dtype=a.dtype)
    out = _lapack(np.linalg.inv)(np.where(nan[..., None, None], eye, a))
    out[nan] = np.nan
    return out


for _name, _kernel in { "linalg_det": _lapack(np.linalg.det),
    "linalg_cholesky": _lapack(np.linalg.cholesky), "linalg_solve": lambda a, b: np.linalg.solve(a, b),
}.items():
    KERNELS.add(_name, _kernel)
