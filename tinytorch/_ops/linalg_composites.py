"""Linear-algebra functions written in the LAPACK ops of ``lapack.py`` and ordinary tinytorch ops, so their
gradients come from those: triangular and Cholesky solves, least squares, the matrix exponential and powers, and the
older ``torch.*`` spellings (``torch.svd``, ``torch.qr``, ``torch.pinverse``, ``torch.triangular_solve``).
"""
import collections
import math

from .._dispatch import autocast_op, defop, dispatch
from .. import _dtype as _dt
from ._util import SCALAR_NAMES, method
from .._tensor import Tensor
from .lapack import (_check, _defop, _mH, _mT, _solve_triangular, pinv, qr as _linalg_qr, solve,
                     svd as _linalg_svd)

torch_svd = collections.namedtuple("svd", ["U", "S", "V"])
torch_qr = collections.namedtuple("qr", ["Q", "R"])
triangular_solve_result = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
linalg_lstsq = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _triangle(A, upper, unitriangular):
    from .shape import tril, triu
    T = triu(A) if upper else tril(A)
    if unitriangular:
        from .creation import eye
        n = A._shape[-1]
        I = eye(n, dtype=A.dtype, device=A.device)
        T = T * (1 - I) + I
    return T


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solves A X = B (``left``) or X A = B for triangular A (*, n, n); B (*, n, k) or (*, k, n)
    (``torch.linalg.solve_triangular``). Only A's upper (``upper=True``) or lower triangle is read, and its
    diagonal is taken as ones with ``unitriangular``. By substitution, as LAPACK's trsm: inf/NaN reach only the
    solution entries that depend on them and a zero diagonal gives inf/NaN, not an error. Gradients reach that
    triangle of A and B."""
    _check(A, "linalg.solve_triangular")
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_solve_triangular(): argument 'B' (position 2) must be Tensor, not "
                        f"{type(B).__name__}")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type "
                           f"{A.type()[:-6].title()} and B of type {B.type()[:-6].title()} instead")
    n = A._shape[-1]
    if B.ndim < 2 or (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B._shape[-2] if B.ndim >= 2 else 1}x{B._shape[-1] if B.ndim else 1})")
    if left:
        X = _solve_triangular(A, B, upper=upper, unitriangular=unitriangular)
    else:  # X A = B  <=>  A^T X^T = B^T, and A^T is triangular the other way round
        X = _mT(_solve_triangular(_mT(A), _mT(B), upper=not upper, unitriangular=unitriangular))
    return X


def _solve_args_check(b, A, op):
    """PyTorch's checks of the legacy solves (``triangular_solve``, ``cholesky_solve``) in its order: one dtype,
    square A, b with A's number of rows, a floating or complex dtype."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{SCALAR_NAMES[b.dtype.name]} and A of type {SCALAR_NAMES[A.dtype.name]} instead.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A._shape[-2]} by {A._shape[-1]} "
                           "matrices")
    if A._shape[-1] != b._shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {A._shape[-2]} by {A._shape[-1]} "
                           f"but each b matrix is {b._shape[-2]} by {b._shape[-1]}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{SCALAR_NAMES[A.dtype.name]}'")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``torch.triangular_solve`` (deprecated in torch for ``linalg.solve_triangular``): solves A X = b, or
    A^T X = b with ``transpose``; returns (solution, cloned_coefficient), the coefficient A broadcast to the
    batch shape. As in PyTorch both outputs come from one autograd node: the coefficient requires grad when b
    or A does, and its gradient reaches A only. RuntimeError when b or A has fewer than 2 dims, as PyTorch."""
    for name, t in (("b", b), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{t.ndim} dimensions instead")
    _solve_args_check(b, A, "triangular_solve")
    X = _solve_triangular(_mT(A) if transpose else A, b, upper=upper != transpose, unitriangular=unitriangular)
    from .. import _strides
    batch = _strides.broadcast_shapes(b._shape[:-2], A._shape[:-2])
    M = A.expand(batch + A._shape[-2:]).clone()
    if b.requires_grad and not M.requires_grad:
        M = dispatch(_coefficient_op, (M, b), {"b_shape": b._shape})
    return triangular_solve_result(X, M)


def _coefficient_meta(M, b, b_shape):
    return [(M._shape, M.dtype)], [None, None]


def _coefficient_bw(c, g):
    # the identity on the coefficient; a zero gradient for b (PyTorch's triangular_solve_backward without a
    # gradient of the solution)
    from .creation import zeros
    return g, zeros(c.kw["b_shape"], dtype=g.dtype, device=g.device)


# ties triangular_solve's cloned coefficient to b, so that it requires grad when b does, as PyTorch's
_coefficient_op = defop("triangular_solve_coefficient", _coefficient_meta, _coefficient_bw,
                        decomp=lambda M, b, b_shape: M.clone(), save_inputs=False)


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solves A X = B given the Cholesky factor of A = L L^H (or U^H U with ``upper``; ^H is ^T for real
    factors) (``torch.cholesky_solve``). B (*, n, k), L (*, n, n); gradients reach B and the factor.
    RuntimeError, as PyTorch, when B or L has fewer than 2 dims."""
    for name, t in (("b", B), ("u", L)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} dimensions instead")
    _solve_args_check(B, L, "cholesky_solve")
    U = L if upper else _mH(L)
    X = solve_triangular(U, solve_triangular(_mH(U), B, upper=False), upper=True)
    return X


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of A = L L^T (or U^T U with ``upper``) from its Cholesky factor (``torch.cholesky_inverse``)."""
    from .creation import eye
    n = L._shape[-1]
    X = cholesky_solve(eye(n, dtype=L.dtype, device=L.device).expand(L._shape), L, upper)
    return X


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of A X = B for A (*, m, n), B (*, m, k) (``torch.linalg.lstsq``): the
    minimum-norm solution through the pseudo-inverse, singular values at or below ``rcond * max(S)`` (default
    eps * max(m, n)) counting as zero. Returns (solution, residuals, rank, singular_values). As torch's default
    CPU driver 'gelsy': residuals and singular_values are empty and rank is reported; with driver 'gelsd' or
    'gelss' singular_values are returned, and residuals (squared 2-norms of B - A X per column) when m > n
    and A has full rank."""
    from .creation import empty
    _check(A, "linalg.lstsq", square=False)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"parameter `driver` should be one of (gels, gelsy, gelsd, gelss), but got {driver}")
    vec = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vec else B
    m, n = A._shape[-2:]
    if rcond is None:
        rcond = _dt.finfo(A.dtype).eps * max(m, n)
    X = pinv(A, rtol=rcond) @ Bm
    S = _linalg_svd(A.detach(), full_matrices=False)[1]
    rank = (S > S.amax(-1, keepdim=True) * rcond).sum(-1)
    batch = A._shape[:-2]
    none = empty((0,), dtype=A.dtype, device=A.device)
    sv = S if driver in ("gelsd", "gelss") else none
    res = none
    if driver not in (None, "gelsy") and m > n and bool((rank == n).all()):
        r = Bm - A @ X
        res = (r * r).sum(-2)
    if vec:
        X = X.squeeze(-1)
    return linalg_lstsq(X, res, rank if batch else rank.reshape(()), sv)


def matrix_exp(A):
    """The matrix exponential sum_k A^k / k! of square matrices A (*, n, n) (``torch.linalg.matrix_exp``).

    Scaling and squaring: A is scaled by 2^-s so that its largest 1-norm is at most 1/2, the Taylor series is
    summed to 18 terms (truncation error < 1e-22 relative), and the result squared s times (Higham, "The
    scaling and squaring method for the matrix exponential revisited", 2005, uses Pade approximants instead;
    Taylor trades a few more matmuls for simplicity). Gradients come from the matmuls."""
    _check(A, "linalg.matrix_exp")
    if A.numel() == 0:
        return A.clone()
    wide = {_dt.float32: _dt.float64, _dt.complex64: _dt.complex128}.get(A.dtype)
    if wide is not None:
        # the s squarings multiply the series' float32 rounding by up to 2^s: in double the result is as close
        # as PyTorch's (whose Pade-like degree-18 polynomial needs fewer products)
        return matrix_exp(A.to(wide)).to(A.dtype)
    import numpy as np
    from .creation import eye, tensor
    from .pointwise import where
    # each matrix gets its own scaling (a large one must not coarsen the others' series); its 1-norm
    norms = np.asarray(A.detach().abs().sum(-2).amax(-1).cpu().numpy(), dtype=np.float64)
    finite = np.isfinite(norms)
    with np.errstate(divide="ignore"):
        s = np.where(finite & (norms > 0.5), np.ceil(np.log2(np.where(finite, norms, 1.0))) + 1, 0).astype(np.int64)
    # multiplying by 2^-s, not dividing by 2^s: 2^s may overflow float32 (2^128) where 2^-s is still a number.
    # A matrix with inf or NaN becomes all-NaN (PyTorch's scaling by 2^-inf = 0 turns inf into NaN, which the
    # series spreads), and never raises
    scale = np.where(finite, np.ldexp(1.0, -s), np.nan).reshape(A._shape[:-2] + (1, 1))
    X = A * tensor(scale, dtype=A.dtype.to_real() if A.dtype.is_complex else A.dtype, device=A.device)
    n = A._shape[-1]
    term = eye(n, dtype=A.dtype, device=A.device).expand(A._shape)
    out = term
    for k in range(1, 19):
        term = term @ X / k
        out = out + term
    if s.size and s.max() > 0:
        steps = tensor(s.reshape(A._shape[:-2] + (1, 1)), device=A.device)
        for i in range(int(s.max())):
            out = where(steps > i, out @ out, out)
    return out


@method("matrix_power")
def matrix_power(input, n):
    """``input`` (*, m, m) to the integer power ``n`` by repeated squaring; n = 0 gives identity matrices and
    negative n powers of the inverse (``torch.linalg.matrix_power``). RuntimeError for non-square input."""
    from .creation import eye
    if input.ndim < 2 or input._shape[-1] != input._shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{input._shape[-2] if input.ndim >= 2 else 1} by {input._shape[-1] if input.ndim else 1} "
                           "matrices")
    if not isinstance(n, int):
        raise TypeError(f"matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:
        return eye(input._shape[-1], dtype=input.dtype, device=input.device).expand(input._shape).clone()
    if n < 0:
        from .lapack import inverse
        input, n = inverse(input), -n
    result, base = None, input
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return result


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with singular values below ``rcond * max(S)`` taken as zero.
    TypeError for a non-float ``rcond``, as PyTorch's parser."""
    if isinstance(rcond, bool) or not isinstance(rcond, (int, float)):
        raise TypeError(f"pinverse(): argument 'rcond' must be float, not {type(rcond).__name__}")
    return pinv(input, rtol=rcond)


def svd(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: (U, S, V) with input = U diag(S) V^T (V, not V^T as ``linalg.svd`` returns); ``some``
    gives the reduced factors. Without ``compute_uv``, U and V are zero matrices of the full shapes."""
    if not compute_uv:
        from .creation import zeros
        m, n = input._shape[-2:]
        S = _linalg_svd(input, full_matrices=False)[1]
        batch = input._shape[:-2]
        return torch_svd(zeros(batch + (m, m), dtype=input.dtype, device=input.device), S,
                         zeros(batch + (n, n), dtype=input.dtype, device=input.device))
    U, S, Vh = _linalg_svd(input, full_matrices=not some)
    return torch_svd(U, S, _mT(Vh))


def qr(input, some=True, *, out=None):
    """``torch.qr``: (Q, R) of ``linalg.qr`` in mode 'reduced' (``some``) or 'complete'."""
    return torch_qr(*_linalg_qr(input, "reduced" if some else "complete"))


@autocast_op("lower")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b] (``torch.addbmm``): batch1 (b, n, m), batch2
    (b, m, p), input broadcastable to (n, p)."""
    from .linalg import _batch2_size2
    _batch2_size2(batch1, batch2)
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, batch2 must be a 3D tensor (got {batch1.ndim}-D and "
                           f"{batch2.ndim}-D)")
    prod = (batch1 @ batch2).sum(0)
    from .linalg import _expands_to
    _expands_to(input, prod)
    r = (input * beta if beta != 1 else input) + (prod * alpha if alpha != 1 else prod) if beta != 0 else \
        prod * alpha
    return r


def _frexp_parts(input):
    """Splits input into mantissa (same dtype, |m| in [0.5, 1)) and int32 exponent with input = m * 2^e
    (``torch.frexp``); 0, inf and NaN give (input, 0)."""
    from .pointwise import abs, floor, log2, where
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    a = abs(input)
    finite = (a > 0) & (a < float("inf"))
    safe = where(finite, a, 1.0)
    e = floor(log2(safe)) + 1
    m = safe / (2.0 ** e)
    # log2 rounds near powers of two: bring the mantissa into [0.5, 1)
    low, high = m < 0.5, m >= 1
    e = where(low, e - 1, where(high, e + 1, e))
    m = where(low, m * 2, where(high, m * 0.5, m))
    mant = where(finite, m * input.sign(), input)
    expo = where(finite, e, 0.0).to(_dt.int32)
    return mant, expo


frexp_result = collections.namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input, *, out=None):
    """``torch.frexp``: (mantissa, exponent) with input = mantissa * 2^exponent, |mantissa| in [0.5, 1), the
    exponent int32; 0, inf and NaN give (input, 0). RuntimeError for non-floating input."""
    return frexp_result(*_frexp_parts(input))


method("addbmm")(addbmm)
method("addbmm_")(lambda self, batch1, batch2, *, beta=1, alpha=1: self.copy_(addbmm(self, batch1, batch2, beta=beta,
                                                                                      alpha=alpha)))
method("frexp")(frexp)
method("pinverse")(pinverse)
method("matrix_exp")(matrix_exp)
method("svd")(svd)
method("qr")(qr)
method("triangular_solve")(lambda self, A, upper=True, transpose=False, unitriangular=False:
                           triangular_solve(self, A, upper, transpose, unitriangular))
method("cholesky_solve")(lambda self, input2, upper=False: cholesky_solve(self, input2, upper))
method("cholesky_inverse")(lambda self, upper=False: cholesky_inverse(self, upper))

__all__ = ["addbmm", "chain_matmul", "cholesky_inverse", "cholesky_solve", "frexp", "matrix_exp", "matrix_power",
           "pinverse", "qr", "svd", "triangular_solve"]


# ---- more of torch.linalg, written over the ops above -------------------------------------------------------
linalg_solve_ex = collections.namedtuple("linalg_solve_ex", ["result", "info"])
linalg_inv_ex = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])


def _ex(fn, check_errors, A, *rest):
    """(result, int32 info) of ``fn(A, *rest)`` per matrix of the batch: info 0 where the factorization
    succeeds; where A is singular (or not positive-definite) a result of NaN and info 1 (LAPACK would report
    the failing pivot's index), or LinAlgError with ``check_errors``."""
    from .creation import zeros
    from .lapack import LinAlgError
    from .shape import stack
    batch = A._shape[:-2]
    try:
        return fn(A, *rest), zeros(batch, dtype=_dt.int32, device=A.device)
    except LinAlgError:
        if check_errors or not batch:
            if check_errors:
                raise
    import math as _m
    from .creation import tensor
    n = _m.prod(batch)
    As = A.reshape((n,) + A._shape[-2:]) if batch else A.unsqueeze(0)
    Rs = [r.reshape((n,) + r._shape[len(batch):]) if batch else r.unsqueeze(0) for r in rest]
    outs, infos = [], []
    for i in range(max(n, 1)):
        try:
            outs.append(fn(As[i], *[r[i] for r in Rs]))
            infos.append(0)
        except LinAlgError:
            like = fn.__nan_like__(As[i], *[r[i] for r in Rs])
            outs.append(like)
            infos.append(1)
    out = stack(outs, 0)
    out = out.reshape(batch + out._shape[1:]) if batch else out[0]
    return out, tensor(infos, dtype=_dt.int32, device=A.device).reshape(batch)


def _solve_fn(A, B, left=True):
    return solve(A, B, left=left)


_solve_fn.__nan_like__ = lambda A, B, left=True: B * float("nan")


def _inv_fn(A):
    from .lapack import inv
    return inv(A)


_inv_fn.__nan_like__ = lambda A: A * float("nan")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``torch.linalg.solve_ex``: (result, info) of ``linalg.solve``, per matrix of the batch; see ``_ex``."""
    fn = (lambda a, b: _solve_fn(a, b, left))
    fn.__nan_like__ = _solve_fn.__nan_like__
    batch = A._shape[:-2]
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])
    if batch:  # B with A's batch dims in front, as the per-matrix fallback indexes both by them
        B = B.expand(batch + (B._shape[-1:] if vec else B._shape[-2:]))
    return linalg_solve_ex(*_ex(fn, check_errors, A, B))


def inv_ex(A, *, check_errors=False, out=None):
    """``torch.linalg.inv_ex``: (inverse, info) per matrix of the batch; see ``_ex``."""
    return linalg_inv_ex(*_ex(_inv_fn, check_errors, A))


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``torch.linalg.cholesky_ex``: (L, info) per matrix of the batch; info 0 where A is positive-definite;
    see ``_ex``."""
    from .lapack import cholesky

    def fn(a):
        return cholesky(a, upper=upper)
    fn.__nan_like__ = lambda a: a * float("nan")
    return linalg_cholesky_ex(*_ex(fn, check_errors, A))


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """Number of singular values of A (*, m, n) above max(atol, rtol * largest) (``torch.linalg.matrix_rank``);
    by default rtol = eps * max(m, n) and atol = 0 (``tol``, the older spelling, is atol). int64 (*)."""
    from .lapack import svdvals
    from .pointwise import maximum
    S = svdvals(A.detach())
    if tol is not None:
        atol = tol
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else _dt.finfo(A.dtype).eps * max(A._shape[-2:])
    thresh = maximum(S.amax(-1, keepdim=True) * rtol, S.new_tensor(atol or 0.0)) if S.numel() else S
    return (S > thresh).sum(-1)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (``torch.linalg.multi_dot``): the first may be 1-D (a row vector)
    and the last 1-D (a column vector); the others 2-D. Multiplied in the cheapest order (dynamic programming
    over the chain, as Cormen et al., 15.2)."""
    from .linalg import matmul
    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    if first_vec:
        ts[0] = ts[0].unsqueeze(0)
    if last_vec:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    dims = [ts[0]._shape[0]] + [t._shape[1] for t in ts]
    n = len(ts)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def build(i, j):
        return ts[i] if i == j else matmul(build(i, split[i][j]), build(split[i][j] + 1, j))
    r = build(0, n - 1)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return r


def chain_matmul(*matrices, out=None):
    """``torch.chain_matmul`` (deprecated in torch for ``linalg.multi_dot``): the product of 2-D matrices."""
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def cond(A, p=None, *, out=None):
    """Condition number of A (*, n, n) in the norm ``p`` (``torch.linalg.cond``): the ratio of extreme singular
    values for p None / 2 / -2, else ||A||_p * ||A^-1||_p with p in 'fro', 'nuc', inf, -inf, 1, -1."""
    from .lapack import inv, matrix_norm, svdvals
    if p is None or p in (2, -2):
        S = svdvals(A)
        r = S[..., 0] / S[..., -1]
        return r if p != -2 else 1 / r
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@autocast_op("lower")
def vecdot(x, y, *, dim=-1, out=None):
    """Sum of x * y (conjugating x for complex inputs) along ``dim`` with broadcasting (``torch.linalg.vecdot``)."""
    if x.dtype.is_complex:
        x = x.conj()
    return (x * y).sum(dim)


def linalg_cross(input, other, *, dim=-1, out=None):
    """``torch.linalg.cross``: the cross product along ``dim`` (size 3), default the last dim."""
    from .linalg import cross
    return cross(input, other, dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.linalg.diagonal``: ``torch.diagonal`` with the last two dims as defaults."""
    return A.diagonal(offset, dim1, dim2)


def linalg_vander(x, *, N=None):
    """``torch.linalg.vander``: x (*, n) -> (*, n, N) with columns x^0, x^1, ..., x^(N-1) (N defaults to n)."""
    from .shape import stack
    n = x._shape[-1] if N is None else N
    if n <= 0:
        raise RuntimeError("N must be greater than 1.")
    cols = [x * 0 + 1]
    for _ in range(1, n):
        cols.append(cols[-1] * x)
    return stack(cols, -1)


def tensorinv(A, ind=2, *, out=None):
    """``torch.linalg.tensorinv``: the inverse of A seen as a matrix of prod(A.shape[:ind]) rows; the result has
    shape A.shape[ind:] + A.shape[:ind]."""
    import math as _m
    from .lapack import inv
    rows, cols = A._shape[:ind], A._shape[ind:]
    if _m.prod(rows) != _m.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_m.prod(cols)} != {_m.prod(rows)}")
    return inv(A.reshape(_m.prod(rows), _m.prod(cols))).reshape(tuple(cols) + tuple(rows))


def tensorsolve(A, B, dims=None, *, out=None):
    """``torch.linalg.tensorsolve``: X with tensordot(A, X, X.ndim) = B; ``dims`` moves those dims of A last."""
    import math as _m
    if dims is not None:
        keep = [d for d in range(A.ndim) if d not in [d % A.ndim for d in dims]]
        A = A.permute(keep + [d % A.ndim for d in dims])
    xshape = A._shape[B.ndim:]
    return solve(A.reshape(B.numel(), _m.prod(xshape)), B.reshape(-1)).reshape(xshape)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """``torch.nuclear_norm``: the sum of the singular values of the matrices in ``dim`` (the last two by
    default)."""
    from .lapack import matrix_norm
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


__all__ += ["nuclear_norm", "lu_unpack"]


# ---- LU ----------------------------------------------------------------------------------------------------
linalg_lu_factor = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = collections.namedtuple("linalg_lu", ["P", "L", "U"])
lu_unpack_result = collections.namedtuple("lu_unpack", ["P", "L", "U"])
lu_with_info = collections.namedtuple("_lu_with_info", ["LU", "pivots", "info"])


def _lu_meta(A):
    k = min(A._shape[-2:])
    return [(A._shape, A.dtype), (A._shape[:-2] + (k,), _dt.int32), (A._shape[:-2], _dt.int32)], [None]


def _permutation(pivots, m, like):
    """P (*, m, m) with A = P L U, from LAPACK's 1-based row interchanges (row j swapped with pivots[j])."""
    import numpy as np
    from .creation import tensor
    piv = pivots.cpu().numpy().astype(np.int64) - 1
    batch = piv.shape[:-1]
    piv = piv.reshape(int(np.prod(batch, dtype=np.int64)), piv.shape[-1])  # (-1 is ambiguous with no pivots)
    perm = np.tile(np.arange(m), (piv.shape[0], 1))
    rows = np.arange(piv.shape[0])
    for j in range(piv.shape[1]):
        p = piv[:, j]
        tmp = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = tmp
    P = np.zeros((piv.shape[0], m, m), like.dtype.np)
    P[rows[:, None], perm, np.arange(m)] = 1  # (P^T A)[i] = A[perm[i]]
    return tensor(P.reshape(batch + (m, m)), device=like.device)


def _lu_bw(c, g):
    # square A = P L U (FunctionsManual's linalg_lu_backward): gA = P L^-T (tril_-1(L^T gL) + triu(gU U^T)) U^-T
    from .shape import tril, triu
    LU, pivots = c.out[0], c.out[1]
    m, n = LU._shape[-2:]
    if m != n:
        raise NotImplementedError("linalg.lu_factor: the derivative is implemented for square matrices only")
    L = _triangle(LU, False, True)
    U = triu(LU)
    phi = tril(_mT(L) @ tril(g, -1), -1) + triu(triu(g) @ _mT(U))
    X = solve_triangular(_mT(L), phi, upper=True, unitriangular=True)
    X = solve_triangular(_mT(U), X, upper=False, left=False)
    return _permutation(pivots, m, LU) @ X


_lu_op = _defop("linalg_lu_factor", _lu_meta, _lu_bw, save_inputs=False)  # LU and pivots


def _lu_check_info(info, op):
    import numpy as np
    bad = np.nonzero(info.cpu().numpy().reshape(-1))[0]
    if bad.size:
        b = int(bad[0])
        where = f"(Batch element {b}): " if info.ndim else ""
        j = int(info.reshape(-1)[b].item())
        raise RuntimeError(f"{op}: {where}U[{j},{j}] is zero and using it on lu_solve would result in a division by "
                           "zero. If you still want to perform the factorization, consider calling linalg.lu(A, pivot) "
                           "or linalg.lu_factor_ex(A, pivot)")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU factorization with partial pivoting of A (*, m, n) (``torch.linalg.lu_factor_ex``): LU (*, m, n)
    holding unit-lower L below the diagonal and U on and above it, pivots (*, min(m, n)) int32 (1-based row
    interchanges, as LAPACK's getrf), info (*) int32 (1-based index of the first zero pivot, 0 if none).
    Differentiable for square A. RuntimeError without pivoting (not on the CPU, as torch), and with
    ``check_errors`` for a zero pivot."""
    from .._dispatch import dispatch
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {list(A._shape)} "
                           "instead")
    _check(A, "linalg.lu_factor_ex", square=False)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, pivots, info = dispatch(_lu_op, (A,))
    if check_errors:
        _lu_check_info(info, "torch.linalg.lu_factor_ex")
    return linalg_lu_factor_ex(LU, pivots, info)


def lu_factor(A, *, pivot=True, out=None):
    """``torch.linalg.lu_factor``: (LU, pivots) of ``lu_factor_ex``; RuntimeError naming the batch element and
    the zero pivot when A is singular."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    _lu_check_info(info, "torch.linalg.lu_factor")
    return linalg_lu_factor(LU, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """P (*, m, m), L (*, m, k), U (*, k, n) from a packed LU factorization (``torch.lu_unpack``); the parts
    not asked for are empty tensors. Gradients reach LU_data through L and U."""
    from .creation import empty, eye
    from .shape import tril, triu
    if LU_pivots.dtype is not _dt.int32 or not LU_pivots.is_contiguous():
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by "
                           "torch.linalg.lu_factor")
    m, n = LU_data._shape[-2:]
    k = min(m, n)
    nothing = empty(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = tril(LU_data[..., :, :k], -1) + eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = triu(LU_data[..., :k, :])
    else:
        L = U = nothing
    P = _permutation(LU_pivots, m, LU_data) if unpack_pivots else nothing
    return lu_unpack_result(P, L, U)


def lu(A, *, pivot=True, out=None):
    """A = P L U (``torch.linalg.lu``): P (*, m, m), L (*, m, k) unit lower, U (*, k, n), k = min(m, n).
    Singular A is fine (no error). Differentiable for square A."""
    LU, pivots, _ = lu_factor_ex(A, pivot=pivot)
    return linalg_lu(*lu_unpack(LU, pivots))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Solves A X = B (``left``) or X A = B, with A^T for A when ``adjoint``, from A's LU factorization
    (``torch.linalg.lu_solve``). LU (*, n, n), B (*, n, k) (or (*, k, n) with left=False). RuntimeError for
    incompatible shapes. Gradients reach LU and B."""
    n = LU._shape[-1]
    if pivots.dtype is not _dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if LU._shape[-2] != n:
        raise RuntimeError(f"linalg.lu_solve: A must be batches of square matrices, but they are {LU._shape[-2]} by "
                           f"{n} matrices")
    if (B._shape[-2] if left else B._shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B._shape[-2]}x{B._shape[-1]})")
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:  # U^-1 L^-1 P^T B
        X = solve_triangular(U, solve_triangular(L, _mT(P) @ B, upper=False, unitriangular=True), upper=True)
    elif left:  # A^T X = B: P L^-T U^-T B
        X = P @ solve_triangular(_mT(L), solve_triangular(_mT(U), B, upper=False), upper=True, unitriangular=True)
    elif not adjoint:  # X A = B: B U^-1 L^-1 P^T
        Y = solve_triangular(U, B, upper=True, left=False)
        X = solve_triangular(L, Y, upper=False, left=False, unitriangular=True) @ _mT(P)
    else:  # X A^T = B: B P L^-T U^-T
        Y = solve_triangular(_mT(L), B @ P, upper=True, left=False, unitriangular=True)
        X = solve_triangular(_mT(U), Y, upper=False, left=False)
    return X


@method("lu")
def torch_lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated in torch for ``linalg.lu_factor``): (LU, pivots), and info with ``get_infos``
    (without it, a singular A raises)."""
    LU, pivots, info = lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return lu_with_info(LU, pivots, info)
    _lu_check_info(info, "torch.linalg.lu_factor")
    return LU, pivots


@method("lu_solve")
def torch_lu_solve(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return lu_solve(LU_data, LU_pivots, b, out=out)


