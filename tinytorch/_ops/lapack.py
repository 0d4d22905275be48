"""Matrix decompositions and solves (``torch.linalg``): inv, det, slogdet, solve, cholesky, eigh, svd, qr.

Each is one op whose kernel calls LAPACK (NumPy's ``np.linalg`` on ``cpu``). A backend without the kernel
runs it through the ``cpu`` backend and copies the result back (the op's decomposition), so every device
gets them; the backward formulas are tinytorch ops and run on the tensor's own device.

Ops with several differentiable outputs (eigh, svd, qr) return one packed tensor, flat in its last dim;
the public function splits it into views, so the gradients of all the parts reach one backward formula.
Backward formulas follow PyTorch's ``FunctionsManual.cpp`` (real case) and, for QR, Walter & Lehmann,
"Algorithmic differentiation of linear algebra functions" (2018).
"""
import collections
import math

from .. import _dtype as _dt
from .._dispatch import dispatch
from .._tensor import Tensor
from ._util import defop_on_cpu, method


linalg_eigh = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_svd = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_qr = collections.namedtuple("linalg_qr", ["Q", "R"])
linalg_slogdet = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])


class LinAlgError(RuntimeError):
    """A matrix that the requested decomposition cannot handle (``torch.linalg.LinAlgError``)."""


def _check(A, op, square=True, ndim=2):
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument 'A' (position 1) must be Tensor, not {type(A).__name__}")
    if A.ndim < ndim:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (_dt.float16, _dt.bfloat16):
        name = {_dt.float16: "Half", _dt.bfloat16: "BFloat16"}.get(A.dtype, A.type()[:-6].title())
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {name}")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A._shape[-2]} by "
                           f"{A._shape[-1]} matrices")


OPS = {}


def _defop(name, meta, backward, save_output=True, **flags):
    return defop_on_cpu(name, meta, backward, OPS, save_output=save_output, **flags)


def _run(op, args, kw=None, what=""):
    import numpy as np
    try:
        return dispatch(op, args, kw)
    except np.linalg.LinAlgError as e:
        # a kernel that words its own failure (naming the op) says more than the generic message
        raise LinAlgError(str(e) if str(e).startswith("linalg.") else what) from None


def _mT(x):
    return x.transpose(-2, -1)


def _mH(x):
    """The conjugate transpose (the plain transpose of a real matrix)."""
    if x.dtype.is_complex:
        from .complex import conj
        return conj(x.transpose(-2, -1))
    return x.transpose(-2, -1)


def _real_part(x, A):
    """Eigen- and singular values come out of the packed kernels in A's dtype; they are real (PyTorch gives
    the real counterpart dtype for complex A)."""
    if A.dtype.is_complex:
        from .complex import real
        return real(x)
    return x


# ---- inv, det, slogdet -------------------------------------------------------------------------------------
def _inv_meta(A):
    return [(A._shape, A.dtype)], [None]


def _inv_bw(c, g):
    Ai = c.out
    return -(_mT(Ai) @ g @ _mT(Ai))


_inv_op = _defop("linalg_inv", _inv_meta, _inv_bw, save_inputs=False)  # the inverse only


def inv(A, *, out=None):
    """Inverse of square matrices A (*, n, n) -> (*, n, n) (``torch.linalg.inv``).

    RuntimeError for non-square or integer input; LinAlgError for a singular matrix.
    """
    _check(A, "linalg.inv")
    r = _run(_inv_op, (A,), None, "linalg.inv: The diagonal element is zero, the inversion could not be completed "
                                  "because the input matrix is singular.")
    return r


def _det_meta(A):
    return [(A._shape[:-2], A.dtype)], [None]


def _det_bw(c, g):
    (A,) = c.inputs
    d = c.out
    return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(A))


_det_op = _defop("linalg_det", _det_meta, _det_bw)


def det(A, *, out=None):
    """Determinant of square matrices (*, n, n) -> (*) (``torch.linalg.det``). The gradient needs A invertible."""
    _check(A, "linalg.det")
    r = dispatch(_det_op, (A,))
    return r


def slogdet(A, *, out=None):
    """(sign, log|det A|) of square matrices (*, n, n), each (*) (``torch.linalg.slogdet``)."""
    _check(A, "linalg.slogdet")
    from .complex import sgn
    from .pointwise import abs as _abs, log
    # the determinant in double precision: a float32 matrix's det may overflow float32 where its log does not
    wide = {_dt.float32: _dt.float64, _dt.complex64: _dt.complex128}.get(A.dtype)
    d = det(A if wide is None else A.to(wide))
    if wide is not None:
        return linalg_slogdet(sgn(d).to(A.dtype), log(_abs(d)).to(_dt.float32))
    # the sign is part of the graph, as in PyTorch: its gradient is 0 for real A and z / |z|'s for complex A
    return linalg_slogdet(sgn(d), log(_abs(d)))


def logdet(A):
    """log det A; NaN where det A < 0 (``torch.logdet``)."""
    from .pointwise import log
    return log(det(A))


# ---- solve -------------------------------------------------------------------------------------------------
def _solve_meta(A, B):
    from .. import _strides
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{A.type()[:-6].title()} and B of type {B.type()[:-6].title()} instead")
    if A._shape[-1] != B._shape[-2]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A._shape[-2]}x{A._shape[-1]} and {B._shape[-2]}x{B._shape[-1]})")
    batch = _strides.broadcast_shapes(A._shape[:-2], B._shape[:-2])
    return [(batch + B._shape[-2:], A.dtype)], [None, None]


def _solve_bw(c, g):
    A, B = c.inputs
    X = c.out
    gB = _solve(_mT(A), g)
    gA = -(gB @ _mT(X)) if c.next_edges[0] is not None else None
    return gA, gB


_solve_op = _defop("linalg_solve", _solve_meta, _solve_bw, save_inputs=(0,))  # A and the result, not B


def _solve(A, B):
    return _run(_solve_op, (A, B), None, "linalg.solve: The solver failed because the input matrix is singular.")


def solve(A, B, *, left=True, out=None):
    """X with A X = B (``left``) or X A = B, for square A (*, n, n) and B (*, n, k) or (*, n)
    (``torch.linalg.solve``). Batch dims broadcast. LinAlgError for a singular A."""
    _check(A, "linalg.solve")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    if left:
        r = _solve(A, B.unsqueeze(-1)).squeeze(-1) if vector else _solve(A, B)
    else:
        r = _solve(_mT(A), B.unsqueeze(-1)).squeeze(-1) if vector else _mT(_solve(_mT(A), _mT(B)))
    return r


# ---- triangular solve ------------------------------------------------------------------------------------
def _tsolve_meta(A, B, upper, unitriangular):
    from .. import _strides
    batch = _strides.broadcast_shapes(A._shape[:-2], B._shape[:-2])
    return [(batch + B._shape[-2:], A.dtype)], [None, None]


def _tsolve_bw(c, g):
    from .shape import tril, triu
    A, B = c.inputs
    X = c.out
    upper, unit = c.kw["upper"], c.kw["unitriangular"]
    # T^H is triangular the other way round; only T's triangle (without the diagonal when it is taken as
    # ones) carries a gradient
    gB = _solve_triangular(_mH(A), g, upper=not upper, unitriangular=unit)
    gA = None
    if c.next_edges[0] is not None:
        gA = -(gB @ _mH(X))
        gA = triu(gA, 1 if unit else 0) if upper else tril(gA, -1 if unit else 0)
    return gA, gB


_tsolve_op = _defop("linalg_solve_triangular", _tsolve_meta, _tsolve_bw, save_inputs=(0,))


def _solve_triangular(A, B, *, upper, unitriangular=False):
    """X with T X = B, T the upper or lower triangle of A (its diagonal taken as ones with ``unitriangular``):
    one op by substitution (inf/NaN reach only the entries that depend on them, a zero diagonal gives inf/NaN
    and no error, as LAPACK's trsm). A (*, n, n) and B (*, n, k) of one dtype, batch dims broadcast."""
    return dispatch(_tsolve_op, (A, B), {"upper": bool(upper), "unitriangular": bool(unitriangular)})


# ---- cholesky ----------------------------------------------------------------------------------------------
def _chol_bw(c, g):
    from .shape import tril
    L = c.out
    M = tril(_mT(L) @ tril(g))
    phi = 0.5 * (M + _mT(tril(M, -1)))
    Li = inv(L)
    return _mT(Li) @ phi @ Li


_chol_op = _defop("linalg_cholesky", _inv_meta, _chol_bw, save_inputs=False)  # L only


def cholesky(A, *, upper=False, out=None):
    """Lower-triangular L with A = L L^T for symmetric positive-definite A (*, n, n) (``torch.linalg.cholesky``).

    Only the lower triangle of A is read. ``upper=True`` returns L^H (L^T for real A). LinAlgError if A is not
    positive-definite. Complex (Hermitian) A is accepted, as in PyTorch; float16/bfloat16 are not
    (NotImplementedError, as PyTorch's CPU kernel).
    """
    if isinstance(A, Tensor) and A.dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for "
                                  f"'{'Half' if A.dtype is _dt.float16 else 'BFloat16'}'")
    _check(A, "linalg.cholesky")
    L = _run(_chol_op, (A,), None, "linalg.cholesky: The factorization could not be completed because the input "
                                   "is not positive-definite.")
    bad = L.diagonal(0, -2, -1).isnan()
    if bool(bad.any()):
        # LAPACK's potrf lets NaN through (its positivity test is a comparison); PyTorch reports the minor
        k = int(bad.reshape(-1, bad._shape[-1]).long().argmax(-1).max()) + 1
        raise LinAlgError(f"linalg.cholesky: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {k} is not positive-definite).")
    r = _mH(L) if upper else L
    return r


# ---- eigh --------------------------------------------------------------------------------------------------
def _eigh_meta(A, UPLO):
    n = A._shape[-1]
    return [(A._shape[:-2] + (n + n * n,), A.dtype)], [None]


def _eigh_bw(c, g):
    from .creation import eye
    P = c.out
    n = c.shapes[0][-1]
    L, Q = _eigh_split(P, n)
    gL, gQ = _eigh_split(g, n)
    I = eye(n, dtype=P.dtype, device=P.device)
    QtgQ = _mT(Q) @ gQ
    QtgQ = 0.5 * (QtgQ - _mT(QtgQ))
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + I  # E_ij = L_j - L_i, 1 on the diagonal
    inner = QtgQ / E * (1 - I) + gL.unsqueeze(-2) * I
    return Q @ inner @ _mT(Q)


_eigh_op = _defop("linalg_eigh", _eigh_meta, _eigh_bw, save_inputs=False)  # eigenvalues and vectors


def _eigh_split(P, n):
    return P[..., :n], P[..., n:].unflatten(-1, (n, n))


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending, (*, n)) and orthonormal eigenvectors (columns of (*, n, n)) of symmetric A
    (``torch.linalg.eigh``). Only the ``UPLO`` triangle of A is read. The gradient needs distinct eigenvalues."""
    _check(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    P = _run(_eigh_op, (A,), {"UPLO": UPLO}, "linalg.eigh: The algorithm failed to converge.")
    L, Q = _eigh_split(P, A._shape[-1])
    return linalg_eigh(_real_part(L, A), Q)


def eigvalsh(A, UPLO="L"):
    """Eigenvalues of symmetric A, ascending (``torch.linalg.eigvalsh``)."""
    return eigh(A, UPLO)[0]


# ---- eig (general square matrices: complex eigenvalues and eigenvectors) -----------------------------------
linalg_eig = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig_meta(A):
    n = A._shape[-1]
    ct = A.dtype if A.dtype.is_complex else A.dtype.to_complex()
    return [(A._shape[:-2] + (n + n * n,), ct)], [None]


def _eig_bw(c, g):
    raise NotImplementedError("linalg.eig: the derivative of the eigendecomposition of a general matrix is not "
                              "implemented in tinytorch (linalg.eigh has one for symmetric matrices)")


# complex_grad: record the graph; its backward says what is missing, only if it is reached
_eig_op = _defop("linalg_eig", _eig_meta, _eig_bw, complex_grad=True)


def eig(A, *, out=None):
    """Eigenvalues (*, n) and eigenvectors (columns of (*, n, n), unit norm) of square A, complex
    (complex64 for float32 input, complex128 for float64), by LAPACK's geev as ``torch.linalg.eig``.
    Eigenvalues come unsorted, in LAPACK's order. The backward raises NotImplementedError."""
    _check(A, "linalg.eig")
    P = _run(_eig_op, (A,), None, "linalg.eig: The algorithm failed to converge.")
    return linalg_eig(*_eigh_split(P, A._shape[-1]))


def eigvals(A, *, out=None):
    """Eigenvalues of square A, complex and unsorted (``torch.linalg.eigvals``)."""
    return eig(A)[0]


# ---- svd ---------------------------------------------------------------------------------------------------
def _svd_dims(shape, full_matrices):
    m, n = shape[-2:]
    k = min(m, n)
    return m, n, k, (m if full_matrices else k), (n if full_matrices else k)


def _svd_meta(A, full_matrices):
    m, n, k, mu, nv = _svd_dims(A._shape, full_matrices)
    return [(A._shape[:-2] + (m * mu + k + nv * n,), A.dtype)], [None]


def _svd_split(P, m, n, k, mu, nv):
    U = P[..., :m * mu].unflatten(-1, (m, mu))
    S = P[..., m * mu:m * mu + k]
    Vh = P[..., m * mu + k:].unflatten(-1, (nv, n))
    return U, S, Vh


def _svd_bw(c, g):
    from .creation import eye
    m, n, k, mu, nv = _svd_dims(c.shapes[0], c.kw["full_matrices"])
    U, S, Vh = _svd_split(c.out, m, n, k, mu, nv)
    gU, gS, gVh = _svd_split(g, m, n, k, mu, nv)
    # the columns beyond k of full U / Vh are arbitrary: only the first k enter the gradient (as in PyTorch)
    U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
    V, gV = _mT(Vh), _mT(gVh)
    I = eye(k, dtype=S.dtype, device=S.device)
    UtgU = _mT(U) @ gU
    VtgV = _mT(V) @ gV
    UtgU = UtgU - _mT(UtgU)
    VtgV = VtgV - _mT(VtgV)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + I  # E_jk = S_k^2 - S_j^2, 1 on the diagonal
    gA = (UtgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VtgV) / E * (1 - I) + gS.unsqueeze(-2) * I
    if m > k:
        gUS = gU / S.unsqueeze(-2)
        gA = (U @ gA + gUS - U @ (_mT(U) @ gUS)) @ Vh
    elif n > k:
        gVS = gV / S.unsqueeze(-2)
        gA = U @ (gA @ Vh + _mT(gVS - V @ (_mT(V) @ gVS)))
    else:
        gA = U @ gA @ Vh
    return gA


_svd_op = _defop("linalg_svd", _svd_meta, _svd_bw, save_inputs=False)  # U, S, Vh


def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition A = U diag(S) Vh of A (*, m, n) (``torch.linalg.svd``).

    Returns U (*, m, m) or (*, m, k), S (*, k) descending, Vh (*, n, n) or (*, k, n), k = min(m, n).
    The gradient needs distinct nonzero singular values; singular vectors are defined up to sign.
    """
    _check(A, "linalg.svd", square=False)
    P = _run(_svd_op, (A,), {"full_matrices": bool(full_matrices)}, "linalg.svd: The algorithm failed to converge.")
    U, S, Vh = _svd_split(P, *_svd_dims(A._shape, full_matrices))
    return linalg_svd(U, _real_part(S, A), Vh)


def svdvals(A):
    """Singular values of A (*, m, n) -> (*, min(m, n)), descending (``torch.linalg.svdvals``)."""
    return svd(A, full_matrices=False)[1]


def pinv(A, *, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse through the SVD (``torch.linalg.pinv``); singular values below
    ``rtol * max(S)`` (default ``max(m, n) * eps``) count as zero."""
    from .pointwise import where
    if isinstance(A, Tensor) and A.numel() == 0 and A.ndim >= 2:
        # no singular values to take the largest of: the pseudo-inverse of an empty matrix is empty (n, m) (or
        # zeros when one of m, n is not 0), as PyTorch
        from .creation import zeros
        _check(A, "linalg.pinv", square=False)
        return zeros(A._shape[:-2] + (A._shape[-1], A._shape[-2]), dtype=A.dtype, device=A.device)
    U, S, Vh = svd(A, full_matrices=False)
    if rtol is None:
        rtol = max(A._shape[-2:]) * _dt.finfo(A.dtype).eps
    keep = S > S.amax(-1, keepdim=True) * rtol
    Sinv = where(keep, 1 / where(keep, S, 1.0), 0.0)
    return _mH(Vh) @ (Sinv.unsqueeze(-1).to(U.dtype) * _mH(U))


# ---- qr ----------------------------------------------------------------------------------------------------
def _qr_dims(shape, mode):
    m, n = shape[-2:]
    k = min(m, n)
    mq = m if mode == "complete" else k
    return m, n, mq


def _qr_meta(A, mode):
    if mode == "r":
        mode = "reduced"  # Q is computed (and dropped) so that the kernel has one output layout
    m, n, mq = _qr_dims(A._shape, mode)
    return [(A._shape[:-2] + (m * mq + mq * n,), A.dtype)], [None]


def _qr_split(P, m, n, mq):
    return P[..., :m * mq].unflatten(-1, (m, mq)), P[..., m * mq:].unflatten(-1, (mq, n))


def _qr_grad_tall(Q, R, gQ, gR):
    # A = QR with m >= n: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q
    from .shape import tril
    M = R @ _mT(gR) - _mT(gQ) @ Q
    M = tril(M) + _mT(tril(M, -1))
    return _mT(_solve(R, _mT(gQ + Q @ M)))


def _qr_bw(c, g):
    from .shape import cat
    if c.kw["mode"] == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    m, n, mq = _qr_dims(c.shapes[0], c.kw["mode"])
    if c.kw["mode"] == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    Q, R = _qr_split(c.out, m, n, mq)
    gQ, gR = _qr_split(g, m, n, mq)
    if m >= n:
        return _qr_grad_tall(Q, R, gQ, gR)
    # wide A = [X | Y] with X = Q U square: Y = Q V adds Q gV to gX's Q-gradient
    U, gU, gV = R[..., :m], gR[..., :m], gR[..., m:]
    Y = Q @ R[..., m:]  # A's columns beyond m, from the saved factors (A itself is not saved)
    gX = _qr_grad_tall(Q, U, gQ + Y @ _mT(gV), gU)
    return cat([gX, Q @ gV], -1)


_qr_op = _defop("linalg_qr", _qr_meta, _qr_bw, save_inputs=False)  # Q and R


def qr(A, mode="reduced", *, out=None):
    """QR decomposition A = Q R of A (*, m, n) (``torch.linalg.qr``).

    mode 'reduced': Q (*, m, k), R (*, k, n), k = min(m, n); 'complete': Q (*, m, m), R (*, m, n);
    'r': an empty Q and the reduced R.
    """
    _check(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    m, n, mq = _qr_dims(A._shape, "complete" if mode == "complete" else "reduced")
    P = dispatch(_qr_op, (A,), {"mode": mode})
    Q, R = _qr_split(P, m, n, mq)
    if mode == "r":
        from .creation import empty
        Q = empty(0, dtype=A.dtype, device=A.device)
    return linalg_qr(Q, R)


# ---- norms -------------------------------------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Vector ``ord``-norm of ``x`` over ``dim`` (all elements when None) (``torch.linalg.vector_norm``).

    ord: any real number, inf or -inf. The gradient at a zero vector is 0, as in PyTorch.
    """
    from .reduce import norm
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_vector_norm(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{x.type()[:-6].title()}")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    r = norm(x, ord, dim, keepdim, dtype=dtype)
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norm of A over the two dims ``dim`` (``torch.linalg.matrix_norm``).

    ord: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2 (2 and 'nuc' through the singular values).
    """
    from .. import _strides
    from .reduce import amax, amin, sum as _sum
    from .pointwise import abs as _abs
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (_strides.wrap_dim(d, A.ndim) for d in dim)
    if A.numel() == 0 and ord in ("fro", "nuc", 1, 2, math.inf):
        # the norm of an empty matrix is 0 (PyTorch), though max/min over its empty dims have no identity
        from .creation import zeros
        shape = tuple(1 if i in (d0, d1) else n for i, n in enumerate(A._shape) if keepdim or i not in (d0, d1))
        r = zeros(shape, dtype=A.dtype.to_real() if A.dtype.is_complex else A.dtype, device=A.device)
        return r
    if ord == "fro":
        r = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    elif ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum (sum over rows d0); inf: max row sum
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = _sum(_abs(A), sum_dim, keepdim=True)
        r = (amax if ord > 0 else amin)(s, red_dim, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return r


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """``torch.linalg.norm``: a vector norm when ``dim`` is an int or A is 1-D (or ord is None and dim is None,
    over all elements), a matrix norm when ``dim`` is a pair or A is 2-D."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.ndim == 2):
        r = matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    else:
        if ord is not None and dim is None and A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
        r = vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return r


# ---- tensor methods and torch.* aliases --------------------------------------------------------------------
@method("inverse")
def inverse(input):
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input)


method("det")(det)
method("logdet")(logdet)
method("slogdet")(slogdet)


@method("cholesky")
def _tensor_cholesky(input, upper=False):
    return cholesky(input, upper=upper)


def linalg_det(A):
    return det(A)
