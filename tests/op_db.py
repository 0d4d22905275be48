"""The op database: one entry per op, with sample shapes, domain and dtypes (PyTorch's OpInfo, small).

``fn(lib, *tensors)`` is written once and called with ``lib`` = tinytorch and ``lib`` = torch.
"""
from dataclasses import dataclass, field

FLOATS = ("float32", "float64")
ALL_NUM = ("float32", "float64", "int64", "int32", "uint8")


@dataclass
class OpInfo:
    name: str
    fn: object
    shapes: list = field(default_factory=lambda: [[(3, 4)], [(0, 4)]])
    dtypes: tuple = FLOATS
    low: float = -2.0
    high: float = 2.0
    grad: bool = True
    int_inputs: dict = field(default_factory=dict)  # arg index -> (high,) for index tensors
    rtol: float = None
    atol: float = None
    gradcheck: bool = True
    # linear in each input (matmul, conv, linear, ...): values and gradients are compared within Higham's bound for
    # a sum of K products in any order, K * u * sum|a_i b_i|, not within a tolerance tuned on one BLAS build
    multilinear: bool = False


def _u(name, low=-2.0, high=2.0, dtypes=FLOATS, grad=True, **kw):
    return OpInfo(name, lambda m, x: getattr(m, name)(x), [[(3, 4)], [(2, 3, 4)], [(0, 3)]], dtypes, low, high, grad,
                  **kw)


BCAST = [[(3, 4), (3, 4)], [(2, 3, 4), (4,)], [(3, 1), (1, 4)], [(0, 4), (4,)], [(), (3, 4)]]


def _b(name, dtypes=FLOATS, low=-2.0, high=2.0, grad=True, **kw):
    return OpInfo(name, lambda m, x, y: getattr(m, name)(x, y), BCAST, dtypes, low, high, grad, **kw)


SQ = [[(3, 3)], [(2, 3, 3)]]

OPS = [
    # unary floating
    _u("exp"), _u("exp2"), _u("expm1"), _u("log", 0.1, 3), _u("log2", 0.1, 3), _u("log10", 0.1, 3),
    _u("log1p", -0.5, 3), _u("sqrt", 0.1, 3), _u("rsqrt", 0.1, 3), _u("sin"), _u("cos"), _u("tan", -1.2, 1.2),
    _u("asin", -0.9, 0.9), _u("acos", -0.9, 0.9), _u("atan"), _u("sinh"), _u("cosh"), _u("tanh"), _u("sigmoid"),
    _u("reciprocal", 0.5, 2), _u("erf"), _u("neg", dtypes=ALL_NUM[:4]), _u("abs", dtypes=ALL_NUM[:4]),
    _u("sign", dtypes=ALL_NUM[:4], grad=False), _u("floor", grad=False), _u("ceil", grad=False),
    _u("round", grad=False), _u("trunc", grad=False), _u("frac"), _u("relu", dtypes=FLOATS + ("int64",)),
    _u("square", dtypes=FLOATS + ("int64",)),
    _u("isnan", dtypes=ALL_NUM, grad=False), _u("isinf", grad=False), _u("isfinite", grad=False),
    _u("logical_not", dtypes=ALL_NUM + ("bool",), grad=False),
    _u("bitwise_not", dtypes=("int64", "int32", "uint8", "bool"), grad=False),
    OpInfo("logit", lambda m, x: m.logit(x), [[(3, 4)]], low=0.1, high=0.9),
    OpInfo("logit_eps", lambda m, x: m.logit(x, eps=0.2), [[(3, 4)]], low=0.05, high=0.95, gradcheck=False),
    OpInfo("nan_to_num", lambda m, x: m.nan_to_num(m.log(x)), [[(3, 4)]], low=-1, high=1, grad=False),
    # binary
    _b("add", ALL_NUM), _b("sub", ALL_NUM), _b("mul", ALL_NUM + ("bool",)), _b("div", ALL_NUM, 0.5, 2.0),
    OpInfo("add_alpha", lambda m, x, y: m.add(x, y, alpha=2.5), BCAST[:2]),
    OpInfo("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor"), BCAST[:3], ("float32", "int64"), 0.5, 5,
           grad=False),
    OpInfo("div_trunc", lambda m, x, y: m.div(x, -y, rounding_mode="trunc"), BCAST[:3], ("float32", "int64"), 0.5, 5,
           grad=False),
    OpInfo("floor_divide", lambda m, x, y: m.floor_divide(x, y), BCAST[:2], ("float32", "int64"), 0.5, 5, grad=False),
    _b("remainder", ("float32", "float64", "int64"), 0.5, 5.0), _b("fmod", ("float32", "float64", "int64"), 0.5, 5.0),
    _b("pow", FLOATS, 0.5, 2.0), _b("atan2"), _b("maximum", ALL_NUM), _b("minimum", ALL_NUM),
    _b("eq", ALL_NUM, grad=False), _b("ne", ALL_NUM, grad=False), _b("lt", ALL_NUM, grad=False),
    _b("le", ALL_NUM, grad=False), _b("gt", ALL_NUM, grad=False), _b("ge", ALL_NUM, grad=False),
    _b("logical_and", ALL_NUM + ("bool",), grad=False), _b("logical_or", ALL_NUM + ("bool",), grad=False),
    _b("logical_xor", ALL_NUM + ("bool",), grad=False),
    _b("bitwise_and", ("int64", "uint8", "bool"), grad=False), _b("bitwise_or", ("int64", "uint8", "bool"), grad=False),
    _b("bitwise_xor", ("int64", "uint8", "bool"), grad=False),
    OpInfo("pow_scalar", lambda m, x: m.pow(x, 3), [[(3, 4)]], ("float32", "float64", "int64")),
    OpInfo("rpow_scalar", lambda m, x: 2.0 ** x, [[(3, 4)]]),
    OpInfo("scalar_arith", lambda m, x: (x * 2.5 - 1) / 3 + x % 1.5, [[(3, 4)]], ("float32", "int64")),
    OpInfo("rsub", lambda m, x: 1 - x, [[(3, 4)]], ALL_NUM[:4]),
    OpInfo("int_float_promote", lambda m, x: x + 1.5, [[(3, 4)]], ("int64", "uint8", "int32"), grad=False),
    OpInfo("lerp", lambda m, x, y: m.lerp(x, y, 0.3), BCAST[:3]),
    OpInfo("lerp_tensor", lambda m, x, y, w: m.lerp(x, y, w), [[(3, 4), (3, 4), (3, 4)]], low=0, high=1),
    OpInfo("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), [[(3, 4), (3, 4), (4,)]]),
    OpInfo("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=0.5), [[(3, 4), (3, 4), (3, 4)]], low=0.5, high=2),
    OpInfo("where", lambda m, x, y: m.where(x > 0, x, y), BCAST[:4], ALL_NUM[:3]),
    OpInfo("where_scalar", lambda m, x: m.where(x > 0, x, 0.5), [[(3, 4)]]),
    OpInfo("clamp", lambda m, x: m.clamp(x, -0.5, 0.7), [[(3, 4)], [(0, 2)]], ALL_NUM[:4]),
    OpInfo("clamp_min", lambda m, x: m.clamp(x, min=0.1), [[(3, 4)]]),
    OpInfo("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi + 1), [[(3, 4), (4,), (3, 1)]]),
    OpInfo("isclose", lambda m, x, y: m.isclose(x, y + 1e-9), BCAST[:1], grad=False),
    # activations (nn.functional)
    OpInfo("relu6", lambda m, x: m.nn.functional.relu6(x * 4), [[(3, 4)]]),
    OpInfo("leaky_relu", lambda m, x: m.nn.functional.leaky_relu(x, 0.1), [[(3, 4)]]),
    OpInfo("elu", lambda m, x: m.nn.functional.elu(x, 1.3), [[(3, 4)]]),
    OpInfo("selu", lambda m, x: m.nn.functional.selu(x), [[(3, 4)]]),
    OpInfo("gelu", lambda m, x: m.nn.functional.gelu(x), [[(3, 4)]]),
    OpInfo("gelu_tanh", lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), [[(3, 4)]]),
    OpInfo("gelu_weighted", lambda m, x, v: m.nn.functional.gelu(x) * v, [[(3, 4), (3, 4)]]),
    OpInfo("gelu_tanh_weighted", lambda m, x, v: m.nn.functional.gelu(x, approximate="tanh") * v,
           [[(3, 4), (3, 4)]]),
    OpInfo("erf_wide", lambda m, x: m.erf(x), [[(4, 50)]], low=-5, high=5),
    OpInfo("silu", lambda m, x: m.nn.functional.silu(x), [[(3, 4)]]),
    OpInfo("mish", lambda m, x: m.nn.functional.mish(x), [[(3, 4)]]),
    OpInfo("softplus", lambda m, x: m.nn.functional.softplus(x, beta=2.0, threshold=3.0), [[(3, 4)]]),
    OpInfo("hardtanh", lambda m, x: m.nn.functional.hardtanh(x, -0.5, 0.5), [[(3, 4)]]),
    # PyTorch's kernels use the float constant 1.0f/6.0f even for float64, hence the looser tolerance
    OpInfo("hardsigmoid", lambda m, x: m.nn.functional.hardsigmoid(x * 3), [[(3, 4)]], rtol=1e-7, atol=1e-8),
    OpInfo("hardswish", lambda m, x: m.nn.functional.hardswish(x * 3), [[(3, 4)]], rtol=1e-7, atol=1e-8),
    OpInfo("logsigmoid", lambda m, x: m.nn.functional.logsigmoid(x), [[(3, 4)]]),
    # gamma family (decompositions into primitives with the next function of the family as derivative)
    _u("lgamma", 0.05, 12.0, atol=2e-6),
    OpInfo("lgamma_reflected", lambda m, x: m.lgamma(x - 3.5), [[(3, 4)]], low=-0.4, high=0.4, atol=2e-6),
    # torch's trigamma (digamma's derivative) is accurate to ~1e-10 only: tests/test_ops.py checks against mpmath
    _u("digamma", 0.05, 12.0, rtol=2e-5),
    OpInfo("digamma_reflected", lambda m, x: m.digamma(x - 3.5), [[(3, 4)]], low=-0.4, high=0.4, atol=2e-5),
    # incomplete gamma: a differentiable in x only (torch has no derivative in a), both series and fraction regimes
    OpInfo("igamma", lambda m, x, a: m.igamma(a.to(x.dtype) * 0.8 + 0.3, x), [[(3, 4), (3, 4)]], low=0.1,
           high=4.0, rtol=1e-5, int_inputs={1: 6}),
    OpInfo("igammac_broadcast", lambda m, x, a: m.special.gammaincc(a.to(x.dtype) * 0.6 + 0.2, x * 4),
           [[(3, 4), (4,)]], low=0.1, high=3.0, rtol=1e-5, int_inputs={1: 6}),
    OpInfo("polygamma1", lambda m, x: m.polygamma(1, x), [[(3, 4)], [(0, 2)]], low=0.2, high=12.0, rtol=2e-5),
    OpInfo("polygamma3", lambda m, x: x.polygamma(3), [[(3, 4)]], low=0.3, high=12.0, rtol=2e-5),
    OpInfo("polygamma2_negative", lambda m, x: m.polygamma(2, x - 2.5), [[(3, 4)]], low=-0.4, high=0.4, rtol=2e-5),
    OpInfo("mvlgamma", lambda m, x: m.mvlgamma(x, 3), [[(3, 4)]], low=1.2, high=6.0, atol=1e-5),
    OpInfo("special_zeta", lambda m, x, q: m.special.zeta(x, q), [[(3, 4), (3, 4)], [(3, 4), (4,)]], low=1.2,
           high=6.0, grad=False, rtol=2e-5),
    # modified Bessel functions: the series (|x| < 30) and the large-argument expansion (x * 20 reaches 40)
    OpInfo("i0", lambda m, x: m.i0(x * 20), [[(3, 4)]], rtol=2e-5),
    OpInfo("special_i0e_i1_i1e", lambda m, x: m.special.i0e(x * 20) + m.special.i1(x * 3) + m.special.i1e(x * 20),
           [[(3, 4)]], rtol=2e-5, atol=1e-5),
    OpInfo("special_entr", lambda m, x: m.special.entr(x), [[(3, 4)]], low=0.05, high=2.0),
    # negative inputs: -inf, and a NaN gradient as torch's formula gives (finite differences cannot agree)
    OpInfo("special_entr_negative", lambda m, x: m.special.entr(x), [[(3, 4)]], low=-0.5, high=2.0, gradcheck=False),
    OpInfo("special_ndtr", lambda m, x: m.special.ndtr(x), [[(3, 4)]]),
    # j0 = sin(x)/x: the sin branch (|x| >= 0.5) and the series branch; PyTorch gives it no gradient
    OpInfo("special_spherical_bessel_j0", lambda m, x: m.special.spherical_bessel_j0(x * 10),
           [[(3, 4)], [(0, 3)], [()]], grad=False),
    OpInfo("special_spherical_bessel_j0_series", lambda m, x: m.special.spherical_bessel_j0(x / 4), [[(5, 7)]],
           grad=False),
    OpInfo("special_ndtri", lambda m, x: m.special.ndtri(x), [[(3, 4)]], low=0.02, high=0.98, rtol=1e-4),
    OpInfo("special_xlog1py", lambda m, x, y: m.special.xlog1py(x, y), [[(3, 4), (3, 4)]], low=0.0, high=2.0),
    OpInfo("special_multigammaln", lambda m, x: m.special.multigammaln(x, 2), [[(3, 4)]], low=1.0, high=4.0,
           atol=1e-5),
    OpInfo("softmax", lambda m, x: m.softmax(x, 1), [[(3, 4)], [(2, 3, 5)]]),
    OpInfo("log_softmax", lambda m, x: m.log_softmax(x, -1), [[(3, 4)], [(2, 3, 5)]]),
    # >= 4096 elements: the cpu backend's unshifted-exp path, with rows shifted by +-100 that it must redo
    # with the max shift (overflow; sum below 1), and an input where most rows need it
    OpInfo("softmax_rows", lambda m, x: m.softmax(x + (x[:, :1] > 1.7) * 100 - (x[:, :1] < -1.7) * 100, -1),
           [[(64, 80)], [(4, 16, 72)]], atol=1e-5),
    OpInfo("log_softmax_rows", lambda m, x: m.log_softmax(x + (x[:, :1] > 1.7) * 100 - (x[:, :1] < -1.7) * 100, -1),
           [[(64, 80)]], atol=1e-5),
    # inputs up to 120 in magnitude: float32 rounding of x * 60 alone is ~1e-5 there, and the gradient carries the 60
    OpInfo("softmax_rows_large", lambda m, x: m.softmax(x * 60, -1), [[(64, 80)]], rtol=1e-4, atol=1e-4),
    OpInfo("log_softmax_rows_large", lambda m, x: m.log_softmax(x * 60, -1), [[(64, 80)]], rtol=1e-4, atol=1e-4),
    # a weighted output: the incoming gradient depends on v, so double backward reaches the grad-of-grad formulas
    OpInfo("softmax_weighted", lambda m, x, v: (m.softmax(x, 1) * v).sum(1), [[(3, 4), (3, 4)]]),
    OpInfo("log_softmax_weighted", lambda m, x, v: (m.log_softmax(x, 0) * v).sum(0), [[(3, 4), (3, 4)]]),
    # reductions
    OpInfo("sum", lambda m, x: m.sum(x), [[(3, 4)], [(0, 3)]], ALL_NUM + ("bool",)),
    OpInfo("sum_dim", lambda m, x: x.sum((0, 2), keepdim=True), [[(2, 3, 4)]], ALL_NUM),
    # sums over dims of size 1 only (bias gradients at batch size 1): a copy, not a GEMV
    OpInfo("sum_size1_dims", lambda m, x: x.sum(0) + x.sum((0, 2), keepdim=True).sum(), [[(1, 70, 1)]]),
    OpInfo("sum_dtype", lambda m, x: x.sum(1, dtype=m.float64), [[(3, 4)]], ("float32", "int64")),
    OpInfo("mean", lambda m, x: x.mean(), [[(3, 4)]]),
    OpInfo("mean_dim", lambda m, x: x.mean(-1), [[(2, 3, 4)], [(3, 0)]]),
    OpInfo("prod", lambda m, x: x.prod(), [[(3, 4)]], ("float32", "float64", "int64"), 0.5, 1.5),
    OpInfo("prod_dim", lambda m, x: x.prod(1, keepdim=True), [[(3, 4)]], low=-1.5, high=1.5),
    OpInfo("amax", lambda m, x: x.amax(1), [[(3, 4)], [(2, 3, 4)]], ALL_NUM),
    OpInfo("amin", lambda m, x: x.amin((0, 1)), [[(3, 4)], [(2, 3, 4)]], ALL_NUM),
    OpInfo("max_all", lambda m, x: x.max(), [[(3, 4)]], ALL_NUM),
    OpInfo("max_dim", lambda m, x: x.max(1)[0], [[(3, 4)], [(2, 3, 4)]], ALL_NUM),
    OpInfo("max_dim_idx", lambda m, x: x.max(1, keepdim=True)[1], [[(3, 4)]], ALL_NUM, grad=False),
    OpInfo("min_dim", lambda m, x: x.min(0).values, [[(3, 4)], [(5, 20)]], ALL_NUM),
    OpInfo("min_dim_idx", lambda m, x: x.min(-1).indices, [[(3, 4)], [(4, 20)]], ALL_NUM, grad=False),
    OpInfo("argmax", lambda m, x: x.argmax(), [[(3, 4)]], ALL_NUM, grad=False),
    OpInfo("argmax_dim", lambda m, x: x.argmax(1, keepdim=True), [[(3, 4)]], ALL_NUM, grad=False),
    OpInfo("argmin_dim", lambda m, x: x.argmin(0), [[(3, 4)]], ALL_NUM, grad=False),
    OpInfo("var", lambda m, x: x.var(1), [[(3, 4)]]),
    OpInfo("var_corr0", lambda m, x: x.var((0, 1), correction=0, keepdim=True), [[(3, 4)]]),
    OpInfo("std", lambda m, x: x.std(), [[(3, 4)]]),
    OpInfo("std_unbiased", lambda m, x: m.std(x, 0, unbiased=False), [[(3, 4)]]),
    OpInfo("logsumexp", lambda m, x: m.logsumexp(x * 10, 1), [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("norm", lambda m, x: x.norm(), [[(3, 4)]]),
    OpInfo("norm_p1", lambda m, x: x.norm(1, dim=1), [[(3, 4)]]),
    OpInfo("norm_p3", lambda m, x: x.norm(3, dim=0, keepdim=True), [[(3, 4)]], low=0.2, high=2),
    OpInfo("norm_inf", lambda m, x: x.norm(float("inf"), dim=1), [[(3, 4)]]),
    OpInfo("all", lambda m, x: x.all(1), [[(3, 4)]], ALL_NUM + ("bool",), grad=False),
    OpInfo("any", lambda m, x: x.any(), [[(3, 4)], [(0,)]], ALL_NUM + ("bool",), grad=False),
    OpInfo("cumsum", lambda m, x: x.cumsum(1), [[(3, 4)], [(2, 3, 4)]], ALL_NUM),
    OpInfo("cumprod", lambda m, x: x.cumprod(0), [[(3, 4)]], ("float32", "float64", "int64"), 0.5, 1.5),
    OpInfo("sort", lambda m, x: x.sort(1)[0], [[(3, 4)]], ALL_NUM),
    OpInfo("sort_desc_idx", lambda m, x: x.sort(0, descending=True)[1], [[(3, 4)]], FLOATS, grad=False),
    OpInfo("argsort", lambda m, x: x.argsort(-1), [[(3, 4)]], FLOATS, grad=False),
    OpInfo("topk", lambda m, x: x.topk(2, 1)[0], [[(3, 4)]]),
    OpInfo("topk_small", lambda m, x: x.topk(2, 0, largest=False).indices, [[(3, 4)]], grad=False),
    # linear algebra
    OpInfo("matmul", lambda m, x, y: x @ y, [[(3, 4), (4, 5)], [(2, 3, 4), (4, 2)], [(4,), (4, 3)], [(3, 4), (4,)],
                                              [(4,), (4,)], [(2, 1, 3, 4), (5, 4, 2)], [(0, 4), (4, 3)],
                                              [(2, 3, 0), (0, 4)], [(0, 3, 5), (5, 2)], [(2, 3, 5), (5, 0)],
                                              [(70, 1), (1, 80)], [(2, 5, 1), (3, 1, 4)]], multilinear=True),  # K = 1: a product
    # the cpu backend's blocked GEMM paths: split-K for long thin products, column blocks for a tiny left factor
    OpInfo("matmul_blocked", lambda m, x, y: x @ y, [[(4, 8200), (8200, 3)], [(6, 25), (25, 16400)]],
           ("float32", "float64", "int64"), -1.0, 1.0, gradcheck=False, multilinear=True),
    # a batched right factor seen transposed (attention's q @ k^T): the cpu kernel copies it first
    OpInfo("matmul_batched_transposed", lambda m, x, y: x @ y.mT, [[(2, 3, 20, 30), (2, 3, 40, 30)]],
           gradcheck=False, multilinear=True),
    OpInfo("mm", lambda m, x, y: m.mm(x, y), [[(3, 4), (4, 5)]], multilinear=True),
    OpInfo("bmm", lambda m, x, y: m.bmm(x, y), [[(2, 3, 4), (2, 4, 5)]], multilinear=True),
    OpInfo("addmm", lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2), [[(5,), (3, 4), (4, 5)]], multilinear=True),
    OpInfo("baddbmm", lambda m, b, x, y: m.baddbmm(b, x, y, alpha=0.5), [[(2, 3, 5), (2, 3, 4), (2, 4, 5)]], multilinear=True),
    OpInfo("dot", lambda m, x, y: m.dot(x, y), [[(4,), (4,)]], multilinear=True),
    OpInfo("outer", lambda m, x, y: m.outer(x, y), [[(3,), (4,)]]),
    OpInfo("einsum_mm", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [[(3, 4), (4, 5)]], multilinear=True),
    OpInfo("einsum_batch", lambda m, x, y: m.einsum("bij,bkj->bik", x, y), [[(2, 3, 4), (2, 5, 4)]], multilinear=True),
    OpInfo("einsum_reduce", lambda m, x: m.einsum("ij->j", x), [[(3, 4)]]),
    # a letter repeated in one operand: a diagonal, whose gradient goes back onto that diagonal
    OpInfo("einsum_diagonal", lambda m, x: m.einsum("bii->bi", x), [[(2, 3, 3)]]),
    OpInfo("einsum_trace_product", lambda m, x, y: m.einsum("iji,jk->k", x, y), [[(3, 2, 3), (2, 4)]]),
    OpInfo("einsum_ellipsis", lambda m, x, y: m.einsum("...ij,...j->...i", x, y), [[(2, 3, 4), (2, 4)]]),
    OpInfo("tensordot", lambda m, x, y: m.tensordot(x, y, dims=([1, 2], [0, 1])), [[(2, 3, 4), (3, 4, 5)]], multilinear=True),
    # shape and indexing
    OpInfo("cat", lambda m, x, y: m.cat([x, y, x], 1), [[(3, 4), (3, 2)]], ALL_NUM),
    OpInfo("cat_promote", lambda m, x, y: m.cat([x, y.double()], 0), [[(3, 4), (2, 4)]]),
    OpInfo("stack", lambda m, x, y: m.stack([x, y], 1), [[(3, 4), (3, 4)]], ALL_NUM),
    OpInfo("split", lambda m, x: m.split(x, 2, 1)[1] * 2, [[(3, 5)]]),
    OpInfo("split_sizes", lambda m, x: x.split([1, 3], 1)[1].exp(), [[(3, 4)]]),
    OpInfo("chunk", lambda m, x: m.chunk(x, 3, 0)[2] + 1, [[(7, 2)]]),
    OpInfo("unbind", lambda m, x: m.unbind(x, 1)[2] * 3, [[(3, 4)]]),
    OpInfo("gather", lambda m, x, i: m.gather(x, 1, i), [[(3, 4), (3, 5)]], int_inputs={1: 4}),
    OpInfo("gather_dim0", lambda m, x, i: m.gather(x, 0, i), [[(3, 4), (2, 4)]], int_inputs={1: 3}),
    OpInfo("scatter", lambda m, x, i, s: m.scatter(x, 1, i, s), [[(3, 4), (3, 1), (3, 1)]], int_inputs={1: 4}),
    OpInfo("scatter_value", lambda m, x, i: x.scatter(0, i, 2.5), [[(3, 4), (1, 4)]], int_inputs={1: 3}),
    OpInfo("scatter_add", lambda m, x, i, s: m.scatter_add(x, 1, i, s), [[(3, 4), (3, 6), (3, 6)]], int_inputs={1: 4}),
    OpInfo("index_select", lambda m, x, i: m.index_select(x, 1, i), [[(3, 4), (6,)]], ALL_NUM, int_inputs={1: 4}),
    OpInfo("index_add", lambda m, x, i, s: x.index_add(0, i, s, alpha=2), [[(3, 4), (5,), (5, 4)]],
           int_inputs={1: 3}),
    # many rows into few (an embedding gradient): the cpu kernel's sorted-runs path
    OpInfo("index_add_many", lambda m, x, i, s: x.index_add(1, i, s), [[(2, 4, 3), (20,), (2, 20, 3)]],
           ALL_NUM[:4], int_inputs={1: 4}),
    OpInfo("masked_fill", lambda m, x: x.masked_fill(x > 0.5, -1.0), [[(3, 4)]], ALL_NUM[:3]),
    OpInfo("masked_select", lambda m, x, y: m.masked_select(x, y > 0), [[(3, 4), (4,)]]),
    OpInfo("getitem_bool", lambda m, x: x[x > 0], [[(3, 4)]], ALL_NUM),
    OpInfo("getitem_int_tensor", lambda m, x, i: x[i, 1:], [[(4, 5), (3, 2)]], ALL_NUM, int_inputs={1: 4}),
    OpInfo("getitem_list", lambda m, x: x[[0, 2, 2], :, [1, 0, 1]], [[(3, 4, 2)]]),
    OpInfo("getitem_mixed", lambda m, x, i: x[:, i, None, ..., ::2], [[(3, 4, 5), (2,)]], int_inputs={1: 4}),
    OpInfo("getitem_basic", lambda m, x: x[1:, None, ..., ::2][0], [[(3, 4, 5)]], ALL_NUM),
    OpInfo("tril", lambda m, x: m.tril(x, -1), [[(4, 4)], [(2, 3, 5)]], ALL_NUM[:3]),
    OpInfo("triu", lambda m, x: m.triu(x, 1), [[(4, 4)], [(2, 3, 5)]], ALL_NUM[:3]),
    OpInfo("repeat", lambda m, x: x.repeat(2, 1, 3), [[(3, 4)]], ALL_NUM[:3]),
    OpInfo("repeat_interleave", lambda m, x: m.repeat_interleave(x, 2, 1), [[(3, 4)]]),
    OpInfo("repeat_interleave_t", lambda m, x, r: m.repeat_interleave(x, r, 0), [[(3, 4), (3,)]],
           int_inputs={1: 3}),
    OpInfo("flip", lambda m, x: m.flip(x, (0, 1)), [[(3, 4)]], ALL_NUM),
    OpInfo("roll", lambda m, x: m.roll(x, (1, -2), (0, 1)), [[(3, 4)]], ALL_NUM),
    OpInfo("roll_flat", lambda m, x: m.roll(x, 5), [[(3, 4)]]),
    OpInfo("pad_constant", lambda m, x: m.nn.functional.pad(x, (1, 2, 0, 1), value=0.5), [[(2, 3, 4)]]),
    OpInfo("pad_negative", lambda m, x: m.nn.functional.pad(x, (-1, 2)), [[(2, 3, 4)]]),
    OpInfo("pad_reflect", lambda m, x: m.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"), [[(1, 2, 4, 5)]]),
    OpInfo("pad_replicate", lambda m, x: m.nn.functional.pad(x, (2, 1, 3, 0), mode="replicate"), [[(1, 2, 4, 5)]]),
    OpInfo("pad_circular", lambda m, x: m.nn.functional.pad(x, (2, 1), mode="circular"), [[(1, 2, 5)]]),
    # views (differentiable metadata ops)
    OpInfo("view", lambda m, x: x.view(4, 3).t().reshape(-1) * 2, [[(3, 4)]], ALL_NUM),
    OpInfo("permute", lambda m, x: x.permute(2, 0, 1).contiguous() * 2, [[(2, 3, 4)]], ALL_NUM),
    OpInfo("transpose", lambda m, x: x.transpose(0, -1).mT, [[(2, 3, 4)]]),
    OpInfo("expand", lambda m, x: x.expand(2, 3, 4) * 1.5, [[(3, 1)]]),
    OpInfo("squeeze", lambda m, x: x.squeeze().unsqueeze(0).squeeze(0).unsqueeze(-1), [[(3, 1, 4)]]),
    OpInfo("flatten", lambda m, x: x.flatten(1).unflatten(1, (2, -1)), [[(2, 3, 4)]]),
    OpInfo("narrow", lambda m, x: x.narrow(1, 1, 2) * 2, [[(3, 4)]]),
    OpInfo("select", lambda m, x: x.select(1, -1) * 2, [[(3, 4)]]),
    OpInfo("unfold", lambda m, x: x.unfold(1, 3, 1) * 2, [[(2, 6)]]),
    OpInfo("unfold_step", lambda m, x: x.unfold(0, 2, 3), [[(7, 2)]]),
    OpInfo("diagonal", lambda m, x: x.diagonal(1) * 2, [[(3, 4)], [(4, 3)]]),
    OpInfo("diagonal_dims", lambda m, x: m.diagonal(x, -1, 0, 2), [[(3, 2, 4)]]),
    OpInfo("as_strided", lambda m, x: m.as_strided(x.contiguous(), (2, 2), (1, 4), 1), [[(3, 4)]]),
    # overlapping windows (their gradients add up) and a transposed input (gathered back by its own strides)
    OpInfo("as_strided_overlap", lambda m, x: m.as_strided(x.contiguous(), (3, 4), (2, 1), 1), [[(3, 4)]]),
    OpInfo("as_strided_transposed_input", lambda m, x: m.as_strided(x.contiguous().t(), (3, 2), (1, 5), 2),
           [[(3, 4)]]),
    OpInfo("movedim", lambda m, x: m.movedim(x, 0, -1), [[(2, 3, 4)]]),
    OpInfo("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)) * 2, [[(3, 4)]]),
    # nn
    OpInfo("conv2d", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1), [[(2, 3, 6, 5), (4, 3, 3, 3),
                                                                                        (4,)]], multilinear=True),
    OpInfo("conv2d_stride_dil", lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, dilation=2, padding=(2, 1)),
           [[(2, 2, 9, 8), (3, 2, 3, 2)]], multilinear=True),
    OpInfo("conv2d_groups", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, groups=2, padding="same"),
           [[(1, 4, 5, 5), (6, 2, 3, 3), (6,)]], multilinear=True),
    OpInfo("conv2d_same_even", lambda m, x, w: m.nn.functional.conv2d(x, w, padding="same"),
           [[(1, 2, 5, 6), (3, 2, 2, 4)]], multilinear=True),
    OpInfo("conv1d", lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, stride=2, padding=1), [[(2, 3, 9), (4, 3, 3),
                                                                                                (4,)]], multilinear=True),
    OpInfo("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 2), [[(2, 3, 6, 7)]]),
    OpInfo("max_pool2d_overlap", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, padding=1), [[(2, 2, 7, 6)]]),
    OpInfo("max_pool2d_ceil", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True), [[(2, 2, 8, 7)]]),
    OpInfo("max_pool2d_dilation", lambda m, x: m.nn.functional.max_pool2d(x, (2, 3), (1, 2), (1, 1), dilation=2),
           [[(1, 2, 7, 9)]]),
    OpInfo("max_pool2d_unbatched", lambda m, x: m.nn.functional.max_pool2d(x, 2, ceil_mode=True), [[(2, 5, 5)]]),
    OpInfo("max_pool2d_indices", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)[1],
           [[(2, 2, 7, 6)]], grad=False),
    OpInfo("max_pool1d_indices", lambda m, x: m.nn.functional.max_pool1d(x, 3, 2, 1, ceil_mode=True,
                                                                          return_indices=True)[1],
           [[(2, 2, 9)]], grad=False),
    OpInfo("max_pool1d", lambda m, x: m.nn.functional.max_pool1d(x, 3, 2), [[(2, 2, 9)]]),
    OpInfo("avg_pool2d", lambda m, x: m.nn.functional.avg_pool2d(x, 2), [[(2, 3, 6, 6)]]),
    OpInfo("avg_pool2d_pad", lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
           [[(1, 2, 7, 6)]]),
    OpInfo("adaptive_avg_pool2d", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (3, 2)), [[(2, 3, 7, 6)]]),
    OpInfo("adaptive_avg_pool2d_1", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1), [[(2, 3, 4, 4)]]),
    OpInfo("unfold_F", lambda m, x: m.nn.functional.unfold(x, 2, padding=1, stride=2), [[(2, 3, 5, 4)]]),
    OpInfo("fold_F", lambda m, x: m.nn.functional.fold(x, (4, 5), 2, padding=1), [[(2, 12, 30)]]),
    OpInfo("layer_norm", lambda m, x, w, b: m.nn.functional.layer_norm(x, (4,), w, b), [[(3, 4), (4,), (4,)]]),
    OpInfo("layer_norm_2d_noncontig", lambda m, x, w, b: m.nn.functional.layer_norm(x.transpose(0, 1), (3, 4), w, b),
           [[(3, 2, 4), (3, 4), (3, 4)], [(3, 0, 4), (3, 4), (3, 4)]]),
    OpInfo("layer_norm_no_affine", lambda m, x: m.nn.functional.layer_norm(x * 3 + 1, (5,), eps=1e-3),
           [[(2, 3, 5)]]),
    OpInfo("layer_norm_weight_only", lambda m, x, w: m.nn.functional.layer_norm(x, (4,), w), [[(2, 4), (4,)]]),
    OpInfo("batch_norm_train", lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
           [[(5, 3, 2, 2), (3,), (3,)]]),
    OpInfo("linear", lambda m, x, w, b: m.nn.functional.linear(x, w, b),
           [[(2, 3, 4), (5, 4), (5,)], [(3, 4), (5, 4), (5,)], [(4,), (5, 4), (5,)], [(0, 4), (5, 4), (5,)],
            [(2, 0, 20), (5, 20), (5,)], [(2, 3, 0), (5, 0), (5,)], [(2, 3, 20), (5, 20), (5,)]], multilinear=True),
    OpInfo("linear_nobias", lambda m, x, w: m.nn.functional.linear(x, w), [[(3, 4), (5, 4)], [(2, 3, 4), (5, 4)]], multilinear=True),
    OpInfo("embedding", lambda m, i, w: m.nn.functional.embedding(i, w), [[(3, 4), (6, 5)]], int_inputs={0: 6}),
    OpInfo("embedding_pad", lambda m, i, w: m.nn.functional.embedding(i, w, padding_idx=0), [[(4, 5), (6, 5)]],
           int_inputs={0: 6}, gradcheck=False),
    OpInfo("one_hot", lambda m, i: m.nn.functional.one_hot(i, 5), [[(3, 4)]], ("int64",), grad=False,
           int_inputs={0: 5}),
    OpInfo("normalize", lambda m, x: m.nn.functional.normalize(x, dim=1), [[(3, 4)]]),
    OpInfo("cosine_similarity", lambda m, x, y: m.nn.functional.cosine_similarity(x, y), [[(3, 4), (3, 4)]]),
    OpInfo("dropout_eval", lambda m, x: m.nn.functional.dropout(x, 0.5, training=False), [[(3, 4)]]),
    OpInfo("pixel_shuffle", lambda m, x: m.nn.functional.pixel_shuffle(x, 2), [[(1, 8, 2, 3)]]),
    # losses
    OpInfo("mse_loss", lambda m, x, y: m.nn.functional.mse_loss(x, y), [[(3, 4), (3, 4)]]),
    OpInfo("mse_loss_sum", lambda m, x, y: m.nn.functional.mse_loss(x, y, reduction="sum"), [[(3, 4), (3, 4)]]),
    OpInfo("l1_loss", lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction="none"), [[(3, 4), (3, 4)]]),
    OpInfo("smooth_l1_loss", lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=0.5), [[(3, 4), (3, 4)]]),
    OpInfo("huber_loss", lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=0.7), [[(3, 4), (3, 4)]]),
    OpInfo("cross_entropy", lambda m, x, t: m.nn.functional.cross_entropy(x, t), [[(5, 4), (5,)]],
           int_inputs={1: 4}),
    OpInfo("cross_entropy_smooth", lambda m, x, t: m.nn.functional.cross_entropy(x, t, label_smoothing=0.2),
           [[(5, 4), (5,)]], int_inputs={1: 4}),
    OpInfo("cross_entropy_ignore", lambda m, x, t: m.nn.functional.cross_entropy(
        x, m.where(t == 0, -100, t), ignore_index=-100), [[(6, 4), (6,)]], int_inputs={1: 4}),
    # class weights are not differentiable in PyTorch: a constant here
    OpInfo("cross_entropy_weight_smooth", lambda m, x, t: m.nn.functional.cross_entropy(
        x, t, weight=m.tensor([0.5, 1.0, 2.0, 1.5], dtype=x.dtype, device=x.device), label_smoothing=0.1),
        [[(5, 4), (5,)]], int_inputs={1: 4}),
    OpInfo("cross_entropy_nd", lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="sum"),
           [[(2, 4, 3, 2), (2, 3, 2)]], int_inputs={1: 4}),
    OpInfo("cross_entropy_probs", lambda m, x, p: m.nn.functional.cross_entropy(x, p.softmax(1)),
           [[(5, 4), (5, 4)]]),
    # reduction='none' keeps the target's shape: (N, d...) for K-dimensional losses, () unbatched
    OpInfo("cross_entropy_nd_none", lambda m, x, t: m.nn.functional.cross_entropy(x, t, reduction="none"),
           [[(2, 4, 3, 2), (2, 3, 2)]], int_inputs={1: 4}),
    OpInfo("cross_entropy_nd_smooth_none", lambda m, x, t: m.nn.functional.cross_entropy(
        x, t, reduction="none", label_smoothing=0.3), [[(2, 4, 3), (2, 3)]], int_inputs={1: 4}),
    OpInfo("cross_entropy_unbatched_none", lambda m, x, t: m.nn.functional.cross_entropy(
        x, t[0], reduction="none", label_smoothing=0.1), [[(4,), (1,)]], int_inputs={1: 4}),
    OpInfo("linear_cross_entropy", lambda m, x, w, b, t: m.nn.functional.linear_cross_entropy(
        x, w, t, linear_bias=b, reduction="none", label_smoothing=0.1), [[(3, 5), (4, 2, 5), (4, 2), (3, 2)]],
        int_inputs={3: 4}),
    OpInfo("margin_ranking_loss", lambda m, a, b, y: m.nn.functional.margin_ranking_loss(a, b, y.sign(), margin=0.3),
           [[(6,), (6,), (6,)]]),
    OpInfo("triplet_margin_loss", lambda m, a, p, n: m.nn.functional.triplet_margin_loss(a, p, n, margin=0.5),
           [[(4, 5), (4, 5), (4, 5)]]),
    OpInfo("triplet_margin_loss_swap_p1", lambda m, a, p, n: m.nn.functional.triplet_margin_loss(
        a, p, n, margin=2.0, p=1, swap=True, reduction="none"), [[(4, 5), (4, 5), (4, 5)], [(5,), (5,), (5,)]]),
    OpInfo("cosine_embedding_loss", lambda m, a, b, y: m.nn.functional.cosine_embedding_loss(
        a, b, m.where(y > 0, 1, -1), margin=0.1), [[(4, 5), (4, 5), (4,)]]),
    OpInfo("poisson_nll_loss", lambda m, x, t: m.nn.functional.poisson_nll_loss(x, t.abs() * 3, full=True),
           [[(3, 4), (3, 4)]]),
    OpInfo("poisson_nll_loss_rate", lambda m, x, t: m.nn.functional.poisson_nll_loss(
        x.abs() + 0.1, t.abs(), log_input=False, reduction="sum"), [[(3, 4), (3, 4)]]),
    OpInfo("gaussian_nll_loss", lambda m, x, t, v: m.nn.functional.gaussian_nll_loss(x, t, v.abs() + 0.1, full=True),
           [[(3, 4), (3, 4), (3, 4)], [(3, 4), (3, 4), (3, 1)], [(3, 4), (3, 4), (3,)]]),
    OpInfo("cosine_similarity_module", lambda m, a, b: m.nn.CosineSimilarity(dim=0)(a, b), [[(4, 3), (4, 3)]]),
    OpInfo("pairwise_distance_module", lambda m, a, b: m.nn.PairwiseDistance(p=3.0, keepdim=True)(a, b),
           [[(4, 3), (4, 3)]]),
    OpInfo("pixel_shuffle_module", lambda m, x: m.nn.PixelShuffle(2)(x), [[(2, 8, 3, 3)]]),
    OpInfo("fold_unfold_modules", lambda m, x: m.nn.Fold((4, 5), 2, stride=1)(m.nn.Unfold(2, padding=0)(x)),
           [[(2, 3, 4, 5)]]),
    OpInfo("nll_loss", lambda m, x, t: m.nn.functional.nll_loss(x, t, reduction="none"), [[(5, 4), (5,)]],
           int_inputs={1: 4}),
    OpInfo("nll_loss_weighted", lambda m, x, t, v: m.nn.functional.nll_loss(x, t, reduction="none") * v,
           [[(5, 4), (5,), (5,)]], int_inputs={1: 4}),
    OpInfo("nll_loss_weight", lambda m, x, t: m.nn.functional.nll_loss(
        x, t, weight=m.tensor([0.5, 1.0, 2.0, 1.5], dtype=x.dtype, device=x.device)), [[(5, 4), (5,)]],
        int_inputs={1: 4}),
    OpInfo("bce", lambda m, x, y: m.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
           [[(3, 4), (3, 4)]]),
    OpInfo("bce_logits", lambda m, x, y, pw: m.nn.functional.binary_cross_entropy_with_logits(
        x * 3, y.sigmoid(), pos_weight=pw.abs()), [[(3, 4), (3, 4), (4,)]]),
    OpInfo("kl_div", lambda m, x, y: m.nn.functional.kl_div(x.log_softmax(1), y.softmax(1), reduction="batchmean"),
           [[(3, 4), (3, 4)]]),
    # linear algebra (LAPACK ops): inputs made well-conditioned, outputs combined so that they do not depend on
    # the sign convention of eigen- and singular vectors
    OpInfo("linalg_inv", lambda m, x: m.linalg.inv(_wc(m, x)), SQ),
    OpInfo("linalg_det", lambda m, x: m.linalg.det(_wc(m, x)), SQ),
    OpInfo("linalg_slogdet", lambda m, x: m.linalg.slogdet(_wc(m, x) - 4.5 * _eye(m, x))[1], SQ),
    OpInfo("linalg_solve", lambda m, a, b: m.linalg.solve(_wc(m, a), b), [[(3, 3), (3, 2)], [(2, 3, 3), (3, 1)],
                                                                          [(2, 3, 3), (2, 3)]]),
    OpInfo("linalg_solve_right", lambda m, a, b: m.linalg.solve(_wc(m, a), b, left=False), [[(3, 3), (2, 3)]]),
    OpInfo("linalg_cholesky", lambda m, x: m.linalg.cholesky(_spd(m, x)), SQ),
    OpInfo("linalg_cholesky_upper", lambda m, x: m.linalg.cholesky(_spd(m, x), upper=True), SQ[:1]),
    OpInfo("linalg_eigh", lambda m, x: (lambda r: r[1] * r[1] * r[0].unsqueeze(-2))(m.linalg.eigh(x + x.mT)), SQ,
           rtol=1e-3, atol=1e-4),
    OpInfo("linalg_eigvalsh_upper", lambda m, x: m.linalg.eigvalsh(x + x.mT, UPLO="U"), SQ),
    OpInfo("linalg_svd", lambda m, x: (lambda r: r.U @ r.Vh * r.S.sum(-1, keepdim=True).unsqueeze(-1))(
        m.linalg.svd(x, full_matrices=False)), [[(4, 3)], [(3, 4)], [(2, 3, 3)]], rtol=1e-3, atol=1e-4),
    OpInfo("linalg_svd_full", lambda m, x: (lambda r: r.U @ r.Vh[..., :3, :] + r.S.sum())(m.linalg.svd(x)), [[(3, 4)]],
           rtol=1e-3, atol=1e-4),
    OpInfo("linalg_svdvals", lambda m, x: m.linalg.svdvals(x), [[(4, 3)], [(2, 3, 5)]]),
    OpInfo("linalg_qr", lambda m, x: (lambda r: r.Q * m.arange(1.0, 4.0, dtype=x.dtype, device=x.device) + r.R.sum())(
        m.linalg.qr(_wc(m, x) if x.shape[-1] == x.shape[-2] else x)), [[(5, 3)], [(2, 3, 3)], [(3, 5)]], rtol=1e-3,
        atol=1e-4),
    OpInfo("linalg_qr_r", lambda m, x: m.linalg.qr(x, mode="r")[1], [[(5, 3)]], grad=False),
    OpInfo("linalg_pinv", lambda m, x: m.linalg.pinv(x), [[(4, 3)], [(2, 3, 5)]], rtol=1e-3, atol=1e-4),
    # composites over the LAPACK ops (tinytorch/_ops/linalg_composites.py)
    OpInfo("linalg_solve_triangular", lambda m, a, b: m.linalg.solve_triangular(_wc(m, a), b, upper=True),
           [[(3, 3), (3, 2)], [(2, 3, 3), (2, 3, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_solve_triangular_right_unit", lambda m, a, b: m.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [[(3, 3), (2, 3)]], rtol=1e-4, atol=1e-5),
    # LU: L and U (weighted, so each entry's gradient differs) and the pivoting, packed factor and solves
    OpInfo("linalg_lu", lambda m, x: (lambda r: r.P @ r.L * 2 + r.U * m.arange(1.0, 5.0, dtype=x.dtype,
                                                                              device=x.device))(m.linalg.lu(x)),
           [[(4, 4)], [(2, 4, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_rect", lambda m, x: (lambda r: r.P @ r.L @ r.U)(m.linalg.lu(x)), [[(3, 5)], [(5, 3)]],
           grad=False),
    OpInfo("linalg_lu_factor", lambda m, x: m.linalg.lu_factor(x).LU ** 2, [[(4, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_factor_pivots", lambda m, x: m.linalg.lu_factor_ex(x).pivots, [[(2, 5, 5)], [(3, 5)]],
           grad=False),
    OpInfo("lu_unpack", lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x))[1], [[(3, 4, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_wc(m, a)), b),
           [[(3, 3), (3, 2)], [(2, 3, 3), (2, 3, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_solve_adjoint", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_wc(m, a)), b,
                                                                         adjoint=True), [[(3, 3), (3, 2)]],
           rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_solve_right", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_wc(m, a)), b, left=False),
           [[(3, 3), (2, 3)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_lu_solve_right_adjoint", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(_wc(m, a)), b,
                                                                               left=False, adjoint=True),
           [[(3, 3), (2, 3)]], rtol=1e-4, atol=1e-5),
    OpInfo("torch_lu_solve", lambda m, b, a: m.lu_solve(b, *m.lu(_wc(m, a))), [[(3, 2), (3, 3)]], rtol=1e-4,
           atol=1e-5),
    OpInfo("cholesky_solve", lambda m, b, x: m.cholesky_solve(b, m.linalg.cholesky(_spd(m, x))),
           [[(3, 2), (3, 3)], [(2, 3, 1), (2, 3, 3)]], rtol=1e-4, atol=1e-5),
    OpInfo("cholesky_inverse_upper", lambda m, x: m.cholesky_inverse(m.linalg.cholesky(_spd(m, x), upper=True),
                                                                     upper=True), SQ[:1], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_matrix_exp", lambda m, x: m.linalg.matrix_exp(x * 2), [[(3, 3)], [(2, 4, 4)]], rtol=1e-4,
           atol=1e-5),
    OpInfo("linalg_lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [[(5, 3), (5, 2)], [(2, 4, 2), (2, 4, 3)]],
           rtol=1e-3, atol=1e-4),
    OpInfo("torch_svd", lambda m, x: (lambda r: r.U.abs().sum() + r.S + r.V.abs().sum())(m.svd(x)), [[(4, 3)]],
           grad=False, rtol=1e-4, atol=1e-5),
    OpInfo("pinverse", lambda m, x: x.pinverse(), [[(4, 3)]], rtol=1e-3, atol=1e-4),
    OpInfo("addbmm", lambda m, i, a, b: m.addbmm(i, a, b, beta=0.5, alpha=2), [[(3, 2), (4, 3, 5), (4, 5, 2)],
                                                                                [(2,), (2, 3, 4), (2, 4, 2)]]),
    OpInfo("frexp", lambda m, x: (lambda r: r.mantissa + r.exponent)(m.frexp(x * 100)), [[(3, 4)]], grad=False),
    OpInfo("linalg_multi_dot", lambda m, a, b, c, d: m.linalg.multi_dot([a, b, c, d]),
           [[(3,), (3, 5), (5, 2), (2,)], [(2, 3), (3, 5), (5, 2), (2, 4)]], rtol=1e-4, atol=1e-5),
    OpInfo("linalg_cond", lambda m, x: m.linalg.cond(_wc(m, x)), SQ, rtol=1e-3, atol=1e-4),
    # torch 2.13's own backward of cond in the 'fro'/'nuc'/1/inf norms fails (an in-place write on inv's output)
    OpInfo("linalg_cond_norms", lambda m, x: m.linalg.cond(_wc(m, x), "fro") + m.linalg.cond(_wc(m, x), "nuc")
           + m.linalg.cond(_wc(m, x), 1), SQ, grad=False, rtol=1e-4, atol=1e-5),
    OpInfo("linalg_matrix_rank", lambda m, x: m.linalg.matrix_rank(x) + m.linalg.matrix_rank(x @ x.mT[..., :2]),
           [[(4, 3)], [(2, 3, 5)]], grad=False),
    OpInfo("linalg_vecdot", lambda m, x, y: m.linalg.vecdot(x, y, dim=0), [[(3, 4), (3, 1)]]),
    OpInfo("linalg_vander", lambda m, x: m.linalg.vander(x, N=4), [[(3,)], [(2, 3)]]),
    OpInfo("linalg_tensorinv", lambda m, x: m.linalg.tensorinv(_wc(m, x).reshape(6, 2, 3), ind=1), [[(6, 6)]],
           rtol=1e-4, atol=1e-5),
    OpInfo("linalg_tensorsolve", lambda m, a, b: m.linalg.tensorsolve(_wc(m, a).reshape(2, 3, 6), b),
           [[(6, 6), (2, 3)]], rtol=1e-4, atol=1e-5),
    OpInfo("nuclear_norm", lambda m, x: m.norm(x, p="nuc") + m.nuclear_norm(x * 2), [[(4, 3)]], rtol=1e-4,
           atol=1e-5),
    OpInfo("linalg_vector_norm", lambda m, x: m.linalg.vector_norm(x, 3.0, dim=-1), [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("linalg_vector_norm_zero_row", lambda m, x: m.linalg.vector_norm(x * (x[:, :1] > 0), dim=1), [[(5, 4)]],
           gradcheck=False),
    OpInfo("linalg_norm_fro", lambda m, x: m.linalg.norm(x), [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("linalg_matrix_norm_nuc", lambda m, x: m.linalg.matrix_norm(x, "nuc"), [[(3, 4)], [(2, 4, 3)]]),
    OpInfo("linalg_matrix_norm_2", lambda m, x: m.linalg.matrix_norm(x, 2, keepdim=True), [[(3, 4)]]),
    OpInfo("linalg_matrix_norm_1", lambda m, x: m.linalg.norm(x, 1, dim=(0, 1)), [[(3, 4)]]),
    OpInfo("linalg_matrix_norm_inf", lambda m, x: m.linalg.norm(x, float("-inf"), dim=(-1, -2)), [[(2, 3, 4)]]),
    OpInfo("det_method", lambda m, x: _wc(m, x).det() + _wc(m, x).inverse().sum(), SQ),
    # convolution, pooling and resampling breadth
    OpInfo("conv3d", lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1),
                                                                dilation=(2, 1, 1)),
           [[(2, 3, 5, 4, 4), (4, 3, 2, 2, 3), (4,)]], multilinear=True),
    OpInfo("conv3d_same_groups", lambda m, x, w: m.nn.functional.conv3d(x, w, padding="same", groups=2),
           [[(1, 4, 4, 3, 4), (2, 2, 2, 3, 2)]], multilinear=True),
    OpInfo("conv_transpose2d", lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                                                   output_padding=1),
           [[(2, 3, 4, 3), (3, 4, 3, 3), (4,)]], multilinear=True),
    OpInfo("conv_transpose2d_groups", lambda m, x, w: m.nn.functional.conv_transpose2d(
        x, w, stride=(2, 1), padding=(0, 1), groups=2, dilation=2, output_padding=(1, 1)),
        [[(2, 4, 3, 4), (4, 2, 2, 3)]], multilinear=True),
    OpInfo("conv_transpose3d", lambda m, x, w, b: m.nn.functional.conv_transpose3d(
        x, w, b, stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1), groups=2, dilation=(1, 2, 1)),
        [[(2, 4, 3, 3, 2), (4, 3, 3, 2, 2), (6,)], [(2, 3, 2, 2), (2, 1, 2, 2, 2), (2,)]], multilinear=True),
    OpInfo("conv_transpose1d", lambda m, x, w, b: m.nn.functional.conv_transpose1d(x, w, b, stride=3, padding=1,
                                                                                   output_padding=2),
           [[(2, 3, 5), (3, 2, 3), (2,)], [(3, 5), (3, 2, 3), (2,)]], multilinear=True),
    OpInfo("max_pool3d", lambda m, x: m.nn.functional.max_pool3d(x, 3, 2, 1), [[(2, 2, 5, 4, 5)], [(2, 4, 4, 3)]]),
    OpInfo("max_pool3d_indices", lambda m, x: m.nn.functional.max_pool3d(
        x, (2, 3, 2), (2, 1, 2), (1, 1, 0), dilation=(2, 1, 1), ceil_mode=True, return_indices=True)[1],
        [[(2, 2, 5, 4, 5)]], grad=False),
    OpInfo("max_pool2d_pad_all_inf", lambda m, x: m.nn.functional.max_pool2d(
        m.where(x > 0, x, float("-inf")), 3, 2, 1, return_indices=True)[1], [[(2, 2, 5, 6)]], grad=False),
    OpInfo("interpolate_nearest", lambda m, x: m.nn.functional.interpolate(x, size=(5, 3)), [[(2, 3, 4, 5)]]),
    OpInfo("interpolate_nearest_exact", lambda m, x: m.nn.functional.interpolate(x, scale_factor=1.5,
                                                                                 mode="nearest-exact"),
           [[(2, 3, 4, 5)], [(2, 3, 4)]]),
    OpInfo("interpolate_bilinear", lambda m, x: m.nn.functional.interpolate(x, scale_factor=(1.7, 0.6),
                                                                            mode="bilinear"), [[(2, 3, 4, 5)]]),
    OpInfo("interpolate_bilinear_ac", lambda m, x: m.nn.functional.interpolate(x, size=(6, 7), mode="bilinear",
                                                                               align_corners=True),
           [[(2, 3, 4, 5)]]),
    OpInfo("interpolate_bicubic", lambda m, x: m.nn.functional.interpolate(x, size=(7, 3), mode="bicubic"),
           [[(1, 2, 4, 5)]]),
    OpInfo("interpolate_linear", lambda m, x: m.nn.functional.interpolate(x, scale_factor=2.5, mode="linear",
                                                                          recompute_scale_factor=True),
           [[(2, 3, 4)]]),
    OpInfo("interpolate_trilinear", lambda m, x: m.nn.functional.interpolate(x, scale_factor=(2, 1.5, 0.5),
                                                                             mode="trilinear"),
           [[(1, 2, 3, 2, 4)]]),
    OpInfo("interpolate_area", lambda m, x: m.nn.functional.interpolate(x, size=(2, 3), mode="area"),
           [[(2, 3, 4, 6)]]),
    OpInfo("instance_norm", lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b),
           [[(2, 3, 4, 5), (3,), (3,)], [(2, 3, 7), (3,), (3,)]]),
    OpInfo("embedding_bag_mean", lambda m, w, i: m.nn.functional.embedding_bag(i, w), [[(6, 3), (4, 5)]],
           int_inputs={1: 6}),
    OpInfo("embedding_bag_sum_psw", lambda m, w, i, p: m.nn.functional.embedding_bag(
        i, w, mode="sum", per_sample_weights=p, padding_idx=2), [[(6, 3), (4, 5), (4, 5)]], int_inputs={1: 6}),
    OpInfo("embedding_bag_max_offsets", lambda m, w, i: m.nn.functional.embedding_bag(
        i, w, m.tensor([0, 3, 3, 7], device=i.device), mode="max", padding_idx=1), [[(6, 3), (10,)]],
        int_inputs={1: 6}),
    OpInfo("embedding_bag_mean_last_offset", lambda m, w, i: m.nn.functional.embedding_bag(
        i, w, m.tensor([0, 2, 2, 9, 10], device=i.device), include_last_offset=True, padding_idx=0),
        [[(6, 3), (10,)]], int_inputs={1: 6}),
    # matrix helpers and counting
    OpInfo("diag_1d", lambda m, x: m.diag(x, 1) + m.diag(x, -2).sum(), [[(3,)]], ("float32", "float64", "int64")),
    OpInfo("diag_2d", lambda m, x: m.diag(x, -1), [[(3, 4)]], ("float32", "float64", "int64")),
    OpInfo("diag_embed", lambda m, x: m.diag_embed(x, -1, 0, 2), [[(2, 3)], [(2, 3, 2)]]),
    OpInfo("trace", lambda m, x: m.trace(x), [[(3, 4)], [(4, 3)]], ("float32", "float64", "int64")),
    # torch's kron fails on some non-contiguous inputs (a view error), hence the contiguous() calls
    OpInfo("kron", lambda m, x, y: m.kron(x.contiguous(), y.contiguous()), [[(2, 3), (3, 2)], [(3,), (2, 2, 2)]], ("float32", "float64", "int64")),
    OpInfo("cdist", lambda m, x, y: m.cdist(x, y), [[(4, 3), (5, 3)], [(2, 4, 3), (2, 2, 3)]]),
    OpInfo("cdist_p1_self", lambda m, x: m.cdist(x, x, p=1.0), [[(4, 3)]], gradcheck=False),
    OpInfo("cdist_pinf", lambda m, x, y: m.cdist(x, y, p=float("inf")), [[(4, 3), (5, 3)]]),
    OpInfo("cdist_p3", lambda m, x, y: m.cdist(x, y, p=3), [[(4, 3), (5, 3)]]),
    OpInfo("unique", lambda m, x: m.cat([r.reshape(-1).double() for r in m.unique((x * 2).round(),
                                                                                  return_inverse=True,
                                                                                  return_counts=True)]),
           [[(3, 4)]], ("float32", "int64"), grad=False),
    OpInfo("unique_dim", lambda m, x: m.unique((x > 0).long(), dim=1), [[(2, 6)]], grad=False),
    OpInfo("bincount", lambda m, x: m.bincount(x.reshape(-1), minlength=7), [[(3, 4)]], ("int64",), 0, 5,
           grad=False),
    OpInfo("bincount_weights", lambda m, x, w: m.bincount(x, w.abs()), [[(8,), (8,)]], int_inputs={0: 4},
           grad=False),
    OpInfo("histc", lambda m, x: m.histc(x, bins=6, min=-1, max=1.5), [[(3, 4)], [(0,)]], grad=False),
    OpInfo("histc_auto_range", lambda m, x: m.histc(x, bins=5), [[(3, 4)]], grad=False),
    # small modules and functions people reach for
    OpInfo("prelu", lambda m, x, w: m.nn.functional.prelu(x, w), [[(2, 3, 4), (3,)], [(3, 4), (1,)]]),
    OpInfo("rms_norm", lambda m, x, w: m.nn.functional.rms_norm(x, (4,), w), [[(3, 4), (4,)], [(2, 3, 4), (4,)]]),
    OpInfo("rms_norm_eps", lambda m, x: m.nn.functional.rms_norm(x, (3, 4), eps=1e-3), [[(2, 3, 4)]]),
    OpInfo("hardshrink", lambda m, x: m.nn.functional.hardshrink(x, 0.7), [[(3, 4)]]),
    OpInfo("softshrink", lambda m, x: m.nn.functional.softshrink(x, 0.7), [[(3, 4)]]),
    OpInfo("pixel_unshuffle", lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), [[(2, 3, 4, 6)], [(3, 2, 4)]]),
    OpInfo("hinge_embedding_loss", lambda m, x, y: m.nn.functional.hinge_embedding_loss(
        x, m.where(y > 0, 1.0, -1.0).to(x.dtype), margin=0.5), [[(3, 4), (3, 4)]]),
    OpInfo("soft_margin_loss", lambda m, x, y: m.nn.functional.soft_margin_loss(x, m.where(y > 0, 1.0, -1.0)
                                                                                .to(x.dtype)), [[(3, 4), (3, 4)]]),
    OpInfo("multilabel_soft_margin_loss", lambda m, x, y, w: m.nn.functional.multilabel_soft_margin_loss(
        x, (y > 0).to(x.dtype), weight=w, reduction="sum"), [[(3, 4), (3, 4), (4,)]]),
    OpInfo("pdist", lambda m, x: m.nn.functional.pdist(x), [[(4, 3)]]),
    OpInfo("pdist_p1", lambda m, x: m.nn.functional.pdist(x, p=1), [[(5, 2)]]),
    # functions written in other ops (tinytorch/_ops/unary.py, binary.py, reduce.py, sorting.py, shape.py ...)
    _u("asinh"), _u("acosh", low=1.1, high=3.0), _u("atanh", low=-0.9, high=0.9), _u("erfc"),
    _u("deg2rad"), _u("rad2deg"), _u("sinc"),
    _b("hypot"), _b("logaddexp"), _b("logaddexp2"), _b("copysign"),
    OpInfo("signbit", lambda m, x: m.signbit(x * (x.abs() > 0.5)), dtypes=("float32", "int64"), grad=False),
    OpInfo("float_power", lambda m, x, y: m.float_power(x.abs() + 0.5, y), BCAST[:3], gradcheck=True),
    OpInfo("isneginf_isposinf_isreal", lambda m, x: m.isneginf(x / (x > 0)) | m.isposinf(x / (x > 0))
           | ~m.isreal(x), grad=False),
    OpInfo("cummax", lambda m, x: m.cummax(x, 1).values, [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("cummin_indices", lambda m, x: m.cummin(x.round(), 0).indices, [[(4, 3)]], ("float32", "int64"),
           grad=False),
    OpInfo("logcumsumexp", lambda m, x: m.logcumsumexp(x * 3, 1), [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("kthvalue", lambda m, x: m.kthvalue(x, 2, 1).values, [[(3, 4)], [(2, 3, 4)]]),
    OpInfo("kthvalue_keepdim_idx", lambda m, x: x.kthvalue(3, 0, keepdim=True).indices, [[(4, 3)]], grad=False),
    OpInfo("aminmax", lambda m, x: m.aminmax(x, dim=1).max - m.aminmax(x).min, [[(3, 4)]], gradcheck=False),
    OpInfo("quantile", lambda m, x: m.quantile(x, 0.3, dim=1), [[(3, 5)], [(2, 3, 4)]]),
    OpInfo("quantile_q_tensor", lambda m, x, q: m.quantile(x, q.abs() / 2, dim=0, keepdim=True), [[(5, 3), (2,)]]),
    OpInfo("quantile_all_nearest", lambda m, x: m.quantile(x, 0.6, interpolation="nearest"), [[(3, 5)]]),
    OpInfo("quantile_midpoint_lower", lambda m, x: m.quantile(x, 0.45, 1, interpolation="midpoint")
           + m.quantile(x, 0.45, 1, interpolation="lower"), [[(3, 6)]]),
    OpInfo("msort", lambda m, x: m.msort(x), [[(4, 3)]]),
    OpInfo("diff", lambda m, x: m.diff(x, n=2, dim=1), [[(3, 5)], [(2, 3, 4)]]),
    OpInfo("diff_prepend", lambda m, x, y: m.diff(x, dim=0, prepend=y, append=x[:1]), [[(3, 4), (2, 4)]]),
    OpInfo("dist", lambda m, x, y: m.dist(x, y, 3), [[(3, 4), (4,)]]),
    OpInfo("trapezoid", lambda m, x: m.trapezoid(x, dx=0.5) + m.trapezoid(x, x.cumsum(1).exp(), dim=1),
           [[(3, 4)]]),
    OpInfo("ravel_rot90", lambda m, x: m.rot90(x.transpose(0, 1), 1, (0, 1)).ravel() + x.rot90(2).ravel()
           + m.rot90(x, -1).ravel(), [[(3, 3)]]),
    OpInfo("hsplit_vsplit_dsplit", lambda m, x: m.hsplit(x, 2)[1].sum() + m.vsplit(x, [1])[1].sum()
           + m.dsplit(x, (1, 3))[1].sum(), [[(2, 4, 4)]]),
    OpInfo("atleast", lambda m, x, y: m.atleast_3d(x).sum() + m.atleast_2d(y).sum() + m.atleast_1d(x).sum(),
           [[(4,), (3, 2)]]),
    OpInfo("diagflat", lambda m, x: m.diagflat(x, 1), [[(2, 3)]]),
    OpInfo("block_diag", lambda m, x, y, z: m.block_diag(x, y, z), [[(2, 3), (4,), ()]]),
    OpInfo("cartesian_prod", lambda m, x, y: m.cartesian_prod(x, y), [[(3,), (2,)]]),
    OpInfo("cross", lambda m, x, y: m.cross(x, y, dim=1), [[(4, 3), (4, 3)], [(2, 3, 5), (2, 3, 5)]]),
    OpInfo("addr", lambda m, x, v, w: m.addr(x, v, w, beta=0.5, alpha=2), [[(3, 4), (3,), (4,)]]),
    OpInfo("searchsorted_bucketize", lambda m, s, v: m.searchsorted(s.sort(-1).values, v)
           + m.searchsorted(s.sort(-1).values, v, right=True) + m.bucketize(v, s[0].sort().values),
           [[(3, 5), (3, 4)]], grad=False),
    # more nn.functional
    OpInfo("index_reduce_amax", lambda m, x, s, i: x.index_reduce(0, i, s, "amax"), [[(5, 3), (4, 3), (4,)]],
           int_inputs={2: 5}),
    OpInfo("index_reduce_mean_exclusive", lambda m, x, s, i: x.index_reduce(1, i, s, "mean", include_self=False),
           [[(3, 5), (3, 4), (4,)]], int_inputs={2: 5}),
    OpInfo("index_reduce_prod", lambda m, x, s, i: x.index_reduce(0, i, s, "prod"), [[(5, 3), (4, 3), (4,)]],
           int_inputs={2: 5}, low=0.5, high=2.0),
    OpInfo("adaptive_max_pool3d", lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, None, 4)),
           [[(2, 3, 5, 3, 7)], [(2, 4, 4, 4)]]),
    OpInfo("adaptive_max_pool3d_indices", lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 3, True)[0]
           + m.nn.functional.adaptive_max_pool3d(x, 3, True)[1], [[(1, 2, 5, 4, 6)]]),
    # window starts from samples derived from the input itself, so both libraries pool the same windows
    OpInfo("fractional_max_pool2d", lambda m, x: (lambda r: r[0] + r[1])(m.nn.functional.fractional_max_pool2d(
        x, (2, 3), output_size=(3, 4), return_indices=True,
        _random_samples=(x.detach()[:, :, 0, :2] * 7).frac().abs())), [[(2, 3, 7, 9)]]),
    OpInfo("fractional_max_pool3d", lambda m, x: m.nn.functional.fractional_max_pool3d(
        x, 2, output_size=(2, 3, 3), _random_samples=(x.detach()[:, :, 0, 0, :3] * 7).frac().abs()),
        [[(1, 2, 4, 5, 6)]]),
    OpInfo("adaptive_max_pool2d_indices", lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (2, 3), True)[0]
           + m.nn.functional.adaptive_max_pool2d(x, (2, 3), True)[1], [[(2, 3, 5, 7)], [(3, 4, 4)]]),
    OpInfo("adaptive_max_pool1d", lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3) * 2
           + m.nn.functional.adaptive_max_pool1d(x, 3, True)[1], [[(2, 3, 7)]]),
    OpInfo("lp_pool", lambda m, x: m.nn.functional.lp_pool2d(x.abs() + 0.1, 2.0, 2).sum()
           + m.nn.functional.lp_pool1d(x.abs() + 0.1, 3.0, 3, 2).sum(), [[(2, 3, 6, 6)]][:0] + [[(2, 3, 6)]]),
    OpInfo("lp_pool2d", lambda m, x: m.nn.functional.lp_pool2d(x.abs() + 0.1, 2.0, (2, 3)),
           [[(2, 3, 5, 7)]]),
    OpInfo("channel_shuffle", lambda m, x: m.nn.functional.channel_shuffle(x, 3), [[(2, 6, 2, 3)]]),
    OpInfo("local_response_norm", lambda m, x: m.nn.functional.local_response_norm(x, 3, 0.1, 0.7, 1.5),
           [[(2, 5, 3, 4)], [(2, 4, 6)]]),
    OpInfo("rrelu_eval_inplace_acts", lambda m, x: m.nn.functional.rrelu(x, 0.1, 0.3)
           + m.nn.functional.elu_(x * 1) + m.nn.functional.leaky_relu_(x * 1, 0.2) + m.nn.functional.hardtanh_(x * 1)
           + m.nn.functional.selu_(x * 1) + m.nn.functional.celu_(x * 1, 0.5)
           + m.nn.functional.threshold_(x * 1, 0.1, -2.0), [[(3, 4)]]),
    OpInfo("multi_margin_loss", lambda m, x, t, w: m.nn.functional.multi_margin_loss(x, t, 2, 0.7, w.abs()),
           [[(4, 5), (4,), (5,)]], int_inputs={1: 5}),
    OpInfo("multi_margin_loss_1d", lambda m, x, t: m.nn.functional.multi_margin_loss(x, t, reduction="sum"),
           [[(5,), ()]], int_inputs={1: 5}),
    OpInfo("triplet_margin_with_distance", lambda m, a, p, n: m.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - m.nn.functional.cosine_similarity(u, v), margin=0.5, swap=True),
        [[(4, 3), (4, 3), (4, 3)]]),
    OpInfo("avg_pool2d_ceil", lambda m, x: m.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True)
           + m.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [[(2, 2, 8, 7)]]),
    OpInfo("avg_pool2d_ceil_nopad", lambda m, x: m.nn.functional.avg_pool2d(x, (2, 3), ceil_mode=True), [[(2, 3, 5, 7)]]),
    OpInfo("avg_pool1d_ceil", lambda m, x: m.nn.functional.avg_pool1d(x, 3, 2, ceil_mode=True), [[(2, 3, 8)]]),
    OpInfo("lp_pool2d_ceil", lambda m, x: m.nn.functional.lp_pool2d(x.abs() + 0.1, 2.0, (2, 3), ceil_mode=True),
           [[(2, 3, 5, 7)]]),
    OpInfo("nanquantile", lambda m, x: m.nanquantile(x.masked_fill(x.abs() < 0.6, float("nan")), 0.35, dim=1)
           + m.nanquantile(x.masked_fill(x.abs() < 0.6, float("nan")), 0.8, dim=1, interpolation="midpoint"),
           [[(3, 6)], [(2, 3, 5)]], gradcheck=False),
    OpInfo("nanquantile_q_keepdim", lambda m, x, q: m.nanquantile(x.masked_fill(x.abs() < 0.8, float("nan")),
           q.abs() / 2.5, dim=0, keepdim=True, interpolation="nearest"), [[(6, 3), (2,)]], grad=False),
    # integer, statistics and scatter-style composites
    OpInfo("heaviside", lambda m, x: m.heaviside(x.round(), m.ones((), dtype=x.dtype) * 0.5), [[(3, 4)]],
           low=-1.5, high=1.5, grad=False),
    OpInfo("gcd_lcm", lambda m, x, y: m.gcd(x, y) * 1000 + m.lcm(x, y % 7), [[(3, 4), (3, 4)]], ("int64",),
           -30, 30, grad=False),
    OpInfo("ldexp", lambda m, x, e: m.ldexp(x, e), [[(3, 4), (4,)]], int_inputs={1: 5}),
    OpInfo("cov", lambda m, x: m.cov(x) + m.cov(x, correction=0).sum(), [[(3, 5)]]),
    OpInfo("cov_weights", lambda m, x, w: m.cov(x, fweights=m.tensor([1, 2, 1, 3, 1], device=x.device),
                                                   aweights=w.abs() + 0.5), [[(3, 5), (5,)]]),
    OpInfo("corrcoef", lambda m, x: m.corrcoef(x), [[(3, 6)]]),
    OpInfo("mode", lambda m, x: m.mode(x.round(), 1).values * 10 + m.mode(x.round(), 0, True).indices,
           [[(4, 7)]], low=-1.4, high=1.4, gradcheck=False),
    OpInfo("nanmedian", lambda m, x: m.nanmedian(x.masked_fill(x.abs() < 0.4, float("nan")), 1).values
           + m.nanmedian(x.masked_fill(x.abs() < 0.4, float("nan"))), [[(3, 6)]], gradcheck=False),
    OpInfo("unique_consecutive", lambda m, x: m.unique_consecutive(x.round(), return_inverse=True)[1] * 3
           + m.unique_consecutive(x.round(), return_counts=True)[1].sum(), [[(8,)]], low=-1.4, high=1.4,
           grad=False),
    OpInfo("matrix_power", lambda m, x: m.linalg.matrix_power(x, 3) + m.matrix_power(x, 0)
           + x.matrix_power(1), [[(2, 3, 3)]], low=-1.0, high=1.0),
    OpInfo("matrix_power_neg", lambda m, x: m.linalg.matrix_power(x + 3 * m.eye(3, dtype=x.dtype, device=x.device),
           -2), [[(3, 3)]], ("float64",), -0.5, 0.5),
    OpInfo("scatter_views", lambda m, x, s, r, d: m.select_scatter(x, r, 0, 1) + m.slice_scatter(x, s, 1, 1, 5, 2)
           + m.diagonal_scatter(x, d, 1), [[(3, 5), (3, 2), (5,), (3,)]]),
    OpInfo("index_copy", lambda m, x, s: x.index_copy(1, m.tensor([4, 0], device=x.device), s), [[(3, 5), (3, 2)]]),
    OpInfo("masked_scatter", lambda m, x, s: x.masked_scatter(x > 0, s), [[(3, 5), (15,)]]),
    OpInfo("renorm", lambda m, x: x.renorm(2, 0, 1.5) + x.renorm(1, 1, 1.0), [[(3, 5)]]),
    OpInfo("split_with_sizes", lambda m, x: x.split_with_sizes([2, 3], 1)[1], [[(3, 5)]]),
    OpInfo("avg_pool3d", lambda m, x: m.nn.functional.avg_pool3d(x, 3, 2, 1, ceil_mode=True)
           + m.nn.functional.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
           [[(2, 2, 5, 6, 7)], [(2, 5, 6, 7)]]),
    OpInfo("avg_pool3d_plain", lambda m, x: m.nn.functional.avg_pool3d(x, (2, 3, 2), (1, 2, 3), (1, 1, 0))
           + m.nn.functional.avg_pool3d(x, 2, divisor_override=3).sum(), [[(1, 2, 4, 6, 5)]]),
    OpInfo("adaptive_avg_pool3d", lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, (2, None, 3)),
           [[(2, 2, 5, 4, 7)], [(2, 5, 4, 7)]]),
    OpInfo("lp_pool3d", lambda m, x: m.nn.functional.lp_pool3d(x.abs() + 0.1, 2.0, 2), [[(1, 2, 4, 4, 4)]]),
    OpInfo("scatter_reduce_sum_mean", lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum")
           + x.scatter_reduce(0, i, s, "mean", include_self=False) + m.scatter_reduce(x, 1, i[:4, :2], s[:4, :2], "mean"),
           [[(4, 3), (6, 3), (6, 3)]], int_inputs={1: 3}),
    OpInfo("scatter_reduce_amax_amin", lambda m, x, i, s: x.scatter_reduce(0, i, s, "amax")
           + x.scatter_reduce(0, i, s, "amin", include_self=False), [[(4, 3), (6, 3), (6, 3)]], int_inputs={1: 3}),
    OpInfo("scatter_reduce_prod", lambda m, x, i, s: x.scatter_reduce(0, i, s, "prod")
           + x.scatter_reduce(1, i[:2], s[:2], "prod", include_self=False), [[(4, 3), (6, 3), (6, 3)]],
           ("float32", "float64", "int64"), 0.5, 1.5, int_inputs={1: 3}),
]


def _eye(m, x):
    return m.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _wc(m, x):
    return x + 4 * _eye(m, x)


def _spd(m, x):
    return x @ x.mT + x.shape[-1] * _eye(m, x)

