"""``tinytorch.linalg``: decompositions, solves and norms, as ``torch.linalg``.

The ops live in ``tinytorch/_ops/lapack.py`` (kernels: NumPy's LAPACK on ``cpu``); ``matmul`` and friends in
``tinytorch/_ops/linalg.py``.
"""
from ._ops.lapack import (LinAlgError, cholesky, det, eig, eigh, eigvals, eigvalsh, inv, matrix_norm, norm, pinv, qr, slogdet,
                          solve, svd, svdvals, vector_norm)
from ._ops.linalg import matmul
from ._ops.linalg_composites import matrix_power
from ._ops.linalg_composites import (cholesky_ex, cond, inv_ex, linalg_cross as cross, linalg_diagonal as diagonal,
                                     linalg_vander as vander, lstsq, matrix_exp, matrix_rank, multi_dot, solve_ex,
                                     solve_triangular, tensorinv, tensorsolve, vecdot)
from ._ops.linalg_composites import lu, lu_factor, lu_factor_ex, lu_solve

__all__ = ["LinAlgError", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "cholesky", "cholesky_ex", "cond", "cross", "diagonal", "inv_ex", "matrix_rank",
           "multi_dot", "solve_ex", "tensorinv", "tensorsolve", "vander", "vecdot", "det", "eig", "eigvals", "eigh", "eigvalsh", "inv", "lstsq", "matrix_exp", "matrix_norm", "matmul",
           "matrix_power", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
           "vector_norm"]
