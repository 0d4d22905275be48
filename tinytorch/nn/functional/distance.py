"""Distances and similarities: ``pairwise_distance``, ``cosine_similarity``, ``pdist``."""
from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ..._ops._util import check_arg
from ._utils import _scalar_name


def _g(v):
    # a double as C++ streams print it (-1, 1e-09, nan, inf)
    return "nan" if v != v else ("inf" if v == float("inf") else ("-inf" if v == float("-inf") else f"{v:g}"))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last dimension (``torch.nn.functional.pairwise_distance``).
    TypeError for arguments of the wrong type, as PyTorch's argument parser."""
    check_arg("pairwise_distance", "x1", 1, x1, "Tensor")
    check_arg("pairwise_distance", "x2", 2, x2, "Tensor")
    check_arg("pairwise_distance", "p", None, p, "float")
    check_arg("pairwise_distance", "eps", None, eps, "float")
    check_arg("pairwise_distance", "keepdim", None, keepdim, "bool")
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))`` along ``dim`` of the broadcast inputs
    (``torch.nn.functional.cosine_similarity``), computed as ATen does: each input divided by its own norm in its
    own dtype (so float16 / bfloat16 round as PyTorch's), the norm clamped to ``eps`` without a gradient through
    the clamp. Integer and bool inputs are cast to the common dtype, which must be floating point (RuntimeError
    otherwise, as PyTorch); RuntimeError for a negative or NaN ``eps``, TypeError for a non-int ``dim``."""
    from ..._ops.lapack import vector_norm
    check_arg("cosine_similarity", "dim", None, dim, "int")
    check_arg("cosine_similarity", "eps", None, eps, "float")
    if not eps >= 0:
        raise RuntimeError(f"eps must be non-negative, got: {_g(float(eps))}")
    from ..._ops.movement import broadcast_tensors
    common = _dt.result_type_of([x1, x2])
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_scalar_name(common)}")
    x1, x2 = (x.to(common) if not (x.dtype.is_floating_point or x.dtype.is_complex) else x for x in (x1, x2))
    x1, x2 = broadcast_tensors(x1, x2)

    def unit(x):
        n = vector_norm(x, 2, dim, True)
        # ATen clamps the norm in place under no_grad: the value is clamped, the gradient is the norm's
        # (only where the clamp acts, so an overflowed inf norm stays inf rather than inf - inf)
        n = _pw.where(n < eps, n + (eps - n).detach(), n)
        return x / n
    return (unit(x1) * unit(x2)).sum(dim)


def pdist(input, p=2):
    """Distances between all pairs of rows i < j of (N, M) -> (N (N - 1) / 2,), row-major (``torch.pdist``).
    RuntimeError for a non-2-D or non-floating input or a negative / NaN ``p``; NotImplementedError for a
    float16 / bfloat16 input with pairs to compute (no such kernel), as PyTorch."""
    import numpy as np
    from ..._ops.creation import _from_host
    from ..._ops._util import check_arg
    check_arg("pdist", "p", None, p, "float")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    check_arg("pdist", "p", None, p, "float")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if not p >= 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if input.dtype in (_dt.float16, _dt.bfloat16) and input._shape[0] > 1:
        raise NotImplementedError(f"\"pdist\" not implemented for '{_scalar_name(input.dtype)}'")
    n = input._shape[0]
    i, j = np.triu_indices(n, 1)
    idx = lambda a: _from_host(a.astype(np.int64), _dt.int64, input.device)  # noqa: E731
    if n <= 1:  # no pairs: an empty result still in the graph of input
        return (input.reshape(-1)[:0] * 0).abs()
    return (input.index_select(0, idx(i)) - input.index_select(0, idx(j))).norm(p, -1)
