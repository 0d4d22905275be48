"""``tinytorch.linalg``: decompositions, solves and norms, as ``torch.linalg``.

The ops live in ``tinytorch/_ops/lapack.py`` (kernels: NumPy's LAPACK on ``cpu``); ``matmul`` and friends in
``tinytorch/_ops/linalg.py``.
"""
from ._ops.lapack import (LinAlgError, cholesky, det, eigh, eigvalsh, inv, matrix_norm, norm, pinv, qr, slogdet,
                          solve, svd, svdvals, vector_norm)
from ._ops.linalg import matmul
from ._ops.composites import matrix_power
from ._ops.linalg_composites import lstsq, matrix_exp, solve_triangular

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_exp", "matrix_norm", "matmul",
           "matrix_power", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals",
           "vector_norm"]
