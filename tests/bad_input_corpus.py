"""Valid base calls for the differential bad-input test (``tests/test_bad_input.py``).

Each entry is written once as a function of the module ``m`` (``torch`` or ``tinytorch``) and its arguments.
Tensor arguments are ``T`` placeholders (shape, dtype name, value kind) that the harness turns into the same
NumPy data for both libraries; ``D`` placeholders are dtypes, looked up on ``m``. The harness mutates these
arguments (shapes, dtypes, Python types, values, keywords) and compares what both libraries do.
"""


class T:
    """A tensor argument: ``shape``, ``dtype`` name, value ``kind`` ('n' normal, 'p' positive, 'u' in [0, 1),
    'i<k>' integers in [0, k), 'b' bool, 'spd' symmetric positive definite), ``rg`` requires_grad,
    ``special`` ('nan' / 'inf': the first element replaced)."""

    __slots__ = ("shape", "dtype", "kind", "rg", "special")

    def __init__(self, shape, dtype="float32", kind="n", rg=False, special=None):
        self.shape, self.dtype, self.kind, self.rg, self.special = tuple(shape), dtype, kind, rg, special

    def but(self, **kw):
        t = T(self.shape, self.dtype, self.kind, self.rg, self.special)
        for k, v in kw.items():
            setattr(t, k, v)
        return t

    def __repr__(self):
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in ("rg", "special") if getattr(self, k))
        return f"T{list(self.shape)}:{self.dtype}{'' if self.kind == 'n' else '/' + self.kind}{extra}"


class D:
    """A dtype argument by name (``m.<name>``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class C:
    """One base call: ``fn(m, *args, **kw)``; ``area`` says who owns failures; ``values`` False compares only
    shapes and dtypes (draws that do not follow PyTorch's random stream)."""

    __slots__ = ("name", "area", "fn", "args", "kw", "values")

    def __init__(self, name, area, fn, *args, values=True, **kw):
        self.name, self.area, self.fn, self.args, self.kw, self.values = name, area, fn, args, kw, values


def F(m):
    return m.nn.functional


A, B = T((3, 4)), T((4, 5))
X4 = T((2, 3, 8, 8))
X3 = T((2, 3, 10))

CORPUS = [
    # ---- creation ----------------------------------------------------------------------------------------
    C("zeros", "creation", lambda m, *s, **k: m.zeros(*s, **k), 2, 3),
    C("zeros_dtype", "creation", lambda m, s, **k: m.zeros(s, **k), (2, 3), dtype=D("int64")),
    C("zeros_size_kw", "creation", lambda m, **k: m.zeros(**k), size=(2, 3)),
    C("ones", "creation", lambda m, *s, **k: m.ones(*s, **k), 4),
    C("empty_shape", "creation", lambda m, s, **k: m.empty(s, **k).shape, (3, 0, 2)),
    C("full", "creation", lambda m, s, v, **k: m.full(s, v, **k), (2, 2), 1.5),
    C("full_int", "creation", lambda m, s, v, **k: m.full(s, v, **k), (3,), 7),
    C("zeros_like", "creation", lambda m, x, **k: m.zeros_like(x, **k), A),
    C("full_like", "creation", lambda m, x, v: m.full_like(x, v), A, 2.5),
    C("arange", "creation", lambda m, *a, **k: m.arange(*a, **k), 0, 10, 2),
    C("arange_f", "creation", lambda m, *a, **k: m.arange(*a, **k), 0.5, 3.0, 0.5),
    C("linspace", "creation", lambda m, *a, **k: m.linspace(*a, **k), 0.0, 1.0, 5),
    C("logspace", "creation", lambda m, *a, **k: m.logspace(*a, **k), 0.0, 2.0, 3),
    C("eye", "creation", lambda m, *a, **k: m.eye(*a, **k), 3, 4),
    C("tril_indices", "creation", lambda m, *a, **k: m.tril_indices(*a, **k), 4, 3),
    C("triu_indices", "creation", lambda m, *a, **k: m.triu_indices(*a, **k), 3, 3, 1),
    C("combinations", "creation", lambda m, x, **k: m.combinations(x, **k), T((5,)), r=2),
    C("cartesian_prod", "creation", lambda m, a, b: m.cartesian_prod(a, b), T((3,)), T((2,))),
    C("tensor", "creation", lambda m, d, **k: m.tensor(d, **k), [[1.0, 2.0], [3.0, 4.0]]),
    C("tensor_dtype", "creation", lambda m, d, **k: m.tensor(d, **k), [1, 2, 3], dtype=D("float64")),
    C("empty_strided", "creation", lambda m, s, st: m.empty_strided(s, st).shape, (2, 3), (3, 1)),
    # ---- random ------------------------------------------------------------------------------------------
    C("rand", "random", lambda m, *s, **k: m.rand(*s, **k), 3, 4),
    C("rand_size_kw", "random", lambda m, **k: m.rand(**k), size=(3,)),
    C("randn", "random", lambda m, *s, **k: m.randn(*s, **k), 2, 5),
    C("randint", "random", lambda m, *a, **k: m.randint(*a, **k), 0, 10, (4,)),
    C("randint_kw", "random", lambda m, lo, hi, **k: m.randint(lo, hi, **k), 3, 9, size=(2, 2)),
    C("randperm", "random", lambda m, n, **k: m.randperm(n, **k), 7),
    C("normal_scalar", "random", lambda m, a, b, s: m.normal(a, b, s), 0.0, 2.0, (5,)),
    C("normal_tensor", "random", lambda m, a, b: m.normal(a, b), T((4,)), T((4,), kind="p")),
    C("bernoulli", "random", lambda m, p: m.bernoulli(p), T((6,), kind="u")),
    C("multinomial", "random", lambda m, p, n, **k: m.multinomial(p, n, **k).shape, T((5,), kind="p"), 3),
    C("poisson", "random", lambda m, r: m.poisson(r).shape, T((4,), kind="p"), values=False),
    C("rand_like", "random", lambda m, x: m.rand_like(x), A),
    C("uniform_", "random", lambda m, x, *a: x.uniform_(*a), A, -1.0, 1.0),
    C("normal_", "random", lambda m, x, *a: x.normal_(*a), A, 0.0, 2.0),
    C("bernoulli_", "random", lambda m, x, p: x.bernoulli_(p), A, 0.3),
    C("exponential_", "random", lambda m, x, l: x.exponential_(l), A, 2.0, values=False),
    C("random_", "random", lambda m, x, *a: x.random_(*a), T((5,), "int64"), 0, 10),
    C("cauchy_", "random", lambda m, x, *a: x.cauchy_(*a), A, 0.0, 1.0, values=False),
    C("log_normal_", "random", lambda m, x, *a: x.log_normal_(*a), A, 1.0, 2.0, values=False),
    C("geometric_", "random", lambda m, x, p: x.geometric_(p), A, 0.5, values=False),
    C("fill_", "creation", lambda m, x, v: x.fill_(v), A, 3.0),
    C("zero_", "creation", lambda m, x: x.zero_(), A),
    # ---- pointwise ---------------------------------------------------------------------------------------
    C("add", "pointwise", lambda m, a, b, **k: m.add(a, b, **k), A, A, alpha=2),
    C("add_scalar", "pointwise", lambda m, a, b: m.add(a, b), A, 1.5),
    C("sub", "pointwise", lambda m, a, b: m.sub(a, b), A, T((4,))),
    C("mul", "pointwise", lambda m, a, b: m.mul(a, b), A, T((3, 1))),
    C("div", "pointwise", lambda m, a, b, **k: m.div(a, b, **k), A, T((3, 4), kind="p")),
    C("div_floor", "pointwise", lambda m, a, b, **k: m.div(a, b, **k), A, T((3, 4), kind="p"),
      rounding_mode="floor"),
    C("pow", "pointwise", lambda m, a, b: m.pow(a, b), T((3, 4), kind="p"), 2.5),
    C("pow_t", "pointwise", lambda m, a, b: m.pow(a, b), T((3, 4), kind="p"), T((3, 4))),
    C("clamp", "pointwise", lambda m, a, **k: m.clamp(a, **k), A, min=-0.5, max=0.5),
    C("where", "pointwise", lambda m, c, a, b: m.where(c, a, b), T((3, 4), "bool", "b"), A, A),
    C("exp", "pointwise", lambda m, a: m.exp(a), A),
    C("log", "pointwise", lambda m, a: m.log(a), T((3, 4), kind="p")),
    C("sqrt", "pointwise", lambda m, a: m.sqrt(a), T((3, 4), kind="p")),
    C("sigmoid", "pointwise", lambda m, a: m.sigmoid(a), A),
    C("tanh", "pointwise", lambda m, a: m.tanh(a), A),
    C("abs", "pointwise", lambda m, a: m.abs(a), A),
    C("neg", "pointwise", lambda m, a: m.neg(a), A),
    C("floor", "pointwise", lambda m, a: m.floor(a), A),
    C("round", "pointwise", lambda m, a, **k: m.round(a, **k), A, decimals=1),
    C("remainder", "pointwise", lambda m, a, b: m.remainder(a, b), A, 0.7),
    C("fmod", "pointwise", lambda m, a, b: m.fmod(a, b), A, 0.7),
    C("atan2", "pointwise", lambda m, a, b: m.atan2(a, b), A, A),
    C("lerp", "pointwise", lambda m, a, b, w: m.lerp(a, b, w), A, A, 0.3),
    C("addcmul", "pointwise", lambda m, a, b, c, **k: m.addcmul(a, b, c, **k), A, A, A, value=0.5),
    C("maximum", "pointwise", lambda m, a, b: m.maximum(a, b), A, A),
    C("eq", "pointwise", lambda m, a, b: m.eq(a, b), A, A),
    C("logical_and", "pointwise", lambda m, a, b: m.logical_and(a, b), A, A),
    C("bitwise_and", "pointwise", lambda m, a, b: m.bitwise_and(a, b), T((4,), "int64", "i9"), T((4,), "int64", "i9")),
    C("isnan", "pointwise", lambda m, a: m.isnan(a), A),
    C("nan_to_num", "pointwise", lambda m, a, **k: m.nan_to_num(a, **k), T((4,), special="nan"), nan=0.0),
    C("erf", "pointwise", lambda m, a: m.erf(a), A),
    C("sign", "pointwise", lambda m, a: m.sign(a), A),
    C("add_", "pointwise", lambda m, a, b: a.add_(b), A, A),
    C("mul_", "pointwise", lambda m, a, b: a.mul_(b), A, 2.0),
    C("clamp_", "pointwise", lambda m, a, lo, hi: a.clamp_(lo, hi), A, -1.0, 1.0),
    # ---- reductions --------------------------------------------------------------------------------------
    C("sum", "reduce", lambda m, a, **k: m.sum(a, **k), A, dim=1),
    C("sum_all", "reduce", lambda m, a: m.sum(a), A),
    C("sum_dims", "reduce", lambda m, a, **k: m.sum(a, **k), T((2, 3, 4)), dim=(0, 2), keepdim=True),
    C("mean", "reduce", lambda m, a, **k: m.mean(a, **k), A, dim=0),
    C("prod", "reduce", lambda m, a, d: m.prod(a, d), A, 1),
    C("std", "reduce", lambda m, a, **k: m.std(a, **k), A, dim=1),
    C("var", "reduce", lambda m, a, **k: m.var(a, **k), A, dim=0, correction=0),
    C("max_dim", "reduce", lambda m, a, d: tuple(m.max(a, d)), A, 1),
    C("max_all", "reduce", lambda m, a: m.max(a), A),
    C("min_dim", "reduce", lambda m, a, **k: tuple(m.min(a, **k)), A, dim=0),
    C("amax", "reduce", lambda m, a, **k: m.amax(a, **k), A, dim=(0, 1)),
    C("argmax", "reduce", lambda m, a, **k: m.argmax(a, **k), A, dim=1),
    C("argmin", "reduce", lambda m, a: m.argmin(a), A),
    C("logsumexp", "reduce", lambda m, a, d: m.logsumexp(a, d), A, 1),
    C("norm", "reduce", lambda m, a, **k: m.norm(a, **k), A, p=2, dim=1),
    C("norm_fro", "reduce", lambda m, a, **k: m.norm(a, **k), A, p="fro"),
    C("median", "reduce", lambda m, a, d: tuple(m.median(a, d)), A, 1),
    C("median_all", "reduce", lambda m, a: m.median(a), A),
    C("kthvalue", "reduce", lambda m, a, k, d: tuple(m.kthvalue(a, k, d)), A, 2, 1),
    C("cumsum", "reduce", lambda m, a, d: m.cumsum(a, d), A, 1),
    C("cumprod", "reduce", lambda m, a, **k: m.cumprod(a, **k), A, dim=0),
    C("cummax", "reduce", lambda m, a, d: tuple(m.cummax(a, d)), A, 1),
    C("sort", "reduce", lambda m, a, **k: tuple(m.sort(a, **k)), A, dim=1, descending=True),
    C("argsort", "reduce", lambda m, a, **k: m.argsort(a, **k), A, dim=0),
    C("topk", "reduce", lambda m, a, k, **kw: tuple(m.topk(a, k, **kw)), A, 2, dim=1),
    C("any", "reduce", lambda m, a, **k: m.any(a, **k), T((3, 4), "bool", "b"), dim=1),
    C("all", "reduce", lambda m, a: m.all(a), T((3, 4), "bool", "b")),
    C("count_nonzero", "reduce", lambda m, a, **k: m.count_nonzero(a, **k), A, dim=0),
    C("std_mean", "reduce", lambda m, a, **k: tuple(m.std_mean(a, **k)), A, dim=1),
    C("unique", "reduce", lambda m, a, **k: m.unique(a, **k), T((6,), "int64", "i4"), sorted=True),
    C("bincount", "reduce", lambda m, a, **k: m.bincount(a, **k), T((6,), "int64", "i4"), minlength=5),
    C("diff", "reduce", lambda m, a, **k: m.diff(a, **k), A, dim=1),
    # ---- shape / movement --------------------------------------------------------------------------------
    C("view", "shape", lambda m, a, *s: a.view(*s), A, 2, 6),
    C("reshape", "shape", lambda m, a, s: m.reshape(a, s), A, (4, -1)),
    C("expand", "shape", lambda m, a, *s: a.expand(*s), T((1, 3)), 4, 3),
    C("permute", "shape", lambda m, a, d: m.permute(a, d), T((2, 3, 4)), (2, 0, 1)),
    C("squeeze", "shape", lambda m, a, d: m.squeeze(a, d), T((3, 1, 4)), 1),
    C("unsqueeze", "shape", lambda m, a, d: m.unsqueeze(a, d), A, 1),
    C("flatten", "shape", lambda m, a, **k: m.flatten(a, **k), T((2, 3, 4)), start_dim=1),
    C("cat", "shape", lambda m, ts, **k: m.cat(ts, **k), [A, A], dim=0),
    C("stack", "shape", lambda m, ts, **k: m.stack(ts, **k), [A, A], dim=1),
    C("split", "shape", lambda m, a, s, **k: tuple(m.split(a, s, **k)), A, 2, dim=1),
    C("chunk", "shape", lambda m, a, c, **k: tuple(m.chunk(a, c, **k)), A, 3, dim=0),
    C("roll", "shape", lambda m, a, s, d: m.roll(a, s, d), A, 1, 1),
    C("flip", "shape", lambda m, a, d: m.flip(a, d), A, (0,)),
    C("transpose", "shape", lambda m, a, d0, d1: m.transpose(a, d0, d1), A, 0, 1),
    C("narrow", "shape", lambda m, a, d, s, n: m.narrow(a, d, s, n), A, 1, 1, 2),
    C("select", "shape", lambda m, a, d, i: m.select(a, d, i), A, 1, 2),
    C("index_int", "index", lambda m, a, i: a[i], A, 2),
    C("index_slice", "index", lambda m, a, s, e: a[s:e], A, 1, 3),
    C("index_tensor", "index", lambda m, a, i: a[i], A, T((2,), "int64", "i3")),
    C("index_mask", "index", lambda m, a, i: a[i], A, T((3, 4), "bool", "b")),
    C("index_mixed", "index", lambda m, a, i, j: a[i, j], A, [0, 2], [1, 3]),
    C("gather", "index", lambda m, a, d, i: m.gather(a, d, i), A, 1, T((3, 2), "int64", "i4")),
    C("scatter", "index", lambda m, a, d, i, s: m.scatter(a, d, i, s), A, 1, T((3, 2), "int64", "i4"), T((3, 2))),
    C("scatter_add", "index", lambda m, a, d, i, s: m.scatter_add(a, d, i, s), A, 0, T((2, 4), "int64", "i3"),
      T((2, 4))),
    C("index_select", "index", lambda m, a, d, i: m.index_select(a, d, i), A, 0, T((2,), "int64", "i3")),
    C("masked_fill", "index", lambda m, a, mk, v: m.masked_fill(a, mk, v), A, T((3, 4), "bool", "b"), 0.0),
    C("index_put", "index", lambda m, a, i, v: a.index_put_((i,), v), A, T((2,), "int64", "i3"), T((4,))),
    C("take", "index", lambda m, a, i: m.take(a, i), A, T((3,), "int64", "i9")),
    C("tril", "shape", lambda m, a, **k: m.tril(a, **k), A, diagonal=0),
    C("repeat", "shape", lambda m, a, *r: a.repeat(*r), A, 2, 1),
    C("tile", "shape", lambda m, a, r: m.tile(a, r), A, (1, 2)),
    C("movedim", "shape", lambda m, a, s, d: m.movedim(a, s, d), T((2, 3, 4)), 0, 2),
    C("unbind", "shape", lambda m, a, **k: tuple(m.unbind(a, **k)), A, dim=1),
    C("diagonal", "shape", lambda m, a, **k: m.diagonal(a, **k), A, offset=1),
    C("unfold_t", "shape", lambda m, a, d, s, st: a.unfold(d, s, st), A, 1, 2, 1),
    # ---- matmul / linalg ---------------------------------------------------------------------------------
    C("mm", "linalg", lambda m, a, b: m.mm(a, b), A, B),
    C("mv", "linalg", lambda m, a, b: m.mv(a, b), A, T((4,))),
    C("bmm", "linalg", lambda m, a, b: m.bmm(a, b), T((2, 3, 4)), T((2, 4, 5))),
    C("matmul", "linalg", lambda m, a, b: m.matmul(a, b), T((2, 3, 4)), B),
    C("outer", "linalg", lambda m, a, b: m.outer(a, b), T((3,)), T((4,))),
    C("dot", "linalg", lambda m, a, b: m.dot(a, b), T((4,)), T((4,))),
    C("addmm", "linalg", lambda m, c, a, b, **k: m.addmm(c, a, b, **k), T((3, 5)), A, B, beta=0.5),
    C("einsum", "linalg", lambda m, eq, a, b: m.einsum(eq, a, b), "ij,jk->ik", A, B),
    C("einsum_tr", "linalg", lambda m, eq, a: m.einsum(eq, a), "ii->", T((3, 3))),
    C("inv", "linalg", lambda m, a: m.linalg.inv(a), T((3, 3), kind="spd")),
    C("det", "linalg", lambda m, a: m.linalg.det(a), T((3, 3), kind="spd")),
    C("cholesky", "linalg", lambda m, a: m.linalg.cholesky(a), T((3, 3), kind="spd")),
    C("linalg_norm", "linalg", lambda m, a, **k: m.linalg.norm(a, **k), A, ord=2, dim=1),
    C("solve", "linalg", lambda m, a, b: m.linalg.solve(a, b), T((3, 3), kind="spd"), T((3, 2))),
    C("cross", "linalg", lambda m, a, b, **k: m.linalg.cross(a, b, **k), T((2, 3)), T((2, 3)), dim=1),
    C("trace", "linalg", lambda m, a: m.trace(a), T((3, 3))),
    # ---- nn.functional -----------------------------------------------------------------------------------
    C("conv1d", "nn", lambda m, x, w, **k: F(m).conv1d(x, w, **k), X3, T((4, 3, 3)), stride=1, padding=1),
    C("conv2d", "nn", lambda m, x, w, b, **k: F(m).conv2d(x, w, b, **k), X4, T((4, 3, 3, 3)), T((4,)),
      stride=2, padding=1, dilation=1),
    C("conv_t2d", "nn", lambda m, x, w, **k: F(m).conv_transpose2d(x, w, **k), X4, T((3, 2, 3, 3)), stride=2),
    C("linear", "nn", lambda m, x, w, b: F(m).linear(x, w, b), A, T((5, 4)), T((5,))),
    C("max_pool2d", "nn", lambda m, x, k, **kw: F(m).max_pool2d(x, k, **kw), X4, 2, stride=2),
    C("max_pool1d", "nn", lambda m, x, k, **kw: F(m).max_pool1d(x, k, **kw), X3, 3, padding=1),
    C("avg_pool2d", "nn", lambda m, x, k, **kw: F(m).avg_pool2d(x, k, **kw), X4, 3, stride=1, padding=1),
    C("adaptive_avg", "nn", lambda m, x, s: F(m).adaptive_avg_pool2d(x, s), X4, (3, 2)),
    C("adaptive_max", "nn", lambda m, x, s: F(m).adaptive_max_pool1d(x, s), X3, 4),
    C("interp_nearest", "nn", lambda m, x, **k: F(m).interpolate(x, **k), X4, size=(4, 12)),
    C("interp_bilinear", "nn", lambda m, x, **k: F(m).interpolate(x, **k), X4, scale_factor=1.5, mode="bilinear",
      align_corners=False),
    C("pad", "nn", lambda m, x, p, **k: F(m).pad(x, p, **k), X4, (1, 2, 0, 1)),
    C("pad_reflect", "nn", lambda m, x, p, **k: F(m).pad(x, p, **k), X3, (1, 1), mode="reflect"),
    C("pad_const", "nn", lambda m, x, p, **k: F(m).pad(x, p, **k), A, (1, 1), value=2.0),
    C("softmax", "nn", lambda m, x, **k: F(m).softmax(x, **k), A, dim=1),
    C("log_softmax", "nn", lambda m, x, **k: F(m).log_softmax(x, **k), A, dim=-1),
    C("dropout", "nn", lambda m, x, **k: F(m).dropout(x, **k), A, p=0.3, training=True),
    C("dropout2d", "nn", lambda m, x, **k: F(m).dropout2d(x, **k), X4, p=0.5),
    C("relu", "nn", lambda m, x: F(m).relu(x), A),
    C("relu6", "nn", lambda m, x: F(m).relu6(x), A),
    C("hardtanh", "nn", lambda m, x, **k: F(m).hardtanh(x, **k), A, min_val=-0.5, max_val=0.5),
    C("leaky_relu", "nn", lambda m, x, s: F(m).leaky_relu(x, s), A, 0.1),
    C("elu", "nn", lambda m, x, **k: F(m).elu(x, **k), A, alpha=1.0),
    C("gelu", "nn", lambda m, x, **k: F(m).gelu(x, **k), A, approximate="tanh"),
    C("glu", "nn", lambda m, x, **k: F(m).glu(x, **k), A, dim=1),
    C("softplus", "nn", lambda m, x, **k: F(m).softplus(x, **k), A, beta=2.0, threshold=10.0),
    C("threshold", "nn", lambda m, x, t, v: F(m).threshold(x, t, v), A, 0.1, 20.0),
    C("batch_norm", "nn", lambda m, x, rm, rv, **k: F(m).batch_norm(x, rm, rv, **k), X4, T((3,)), T((3,), kind="p"),
      training=True, momentum=0.1, eps=1e-5),
    C("layer_norm", "nn", lambda m, x, s, w, b, **k: F(m).layer_norm(x, s, w, b, **k), A, (4,), T((4,)), T((4,)),
      eps=1e-5),
    C("group_norm", "nn", lambda m, x, g, **k: F(m).group_norm(x, g, **k), T((2, 4, 5)), 2, eps=1e-5),
    C("instance_norm", "nn", lambda m, x: F(m).instance_norm(x), X3),
    C("normalize", "nn", lambda m, x, **k: F(m).normalize(x, **k), A, p=2.0, dim=1),
    C("cross_entropy", "nn", lambda m, x, t, **k: F(m).cross_entropy(x, t, **k), T((3, 5)), T((3,), "int64", "i5"),
      reduction="mean"),
    C("cross_entropy_ls", "nn", lambda m, x, t, **k: F(m).cross_entropy(x, t, **k), T((3, 5)),
      T((3,), "int64", "i5"), label_smoothing=0.1),
    C("nll_loss", "nn", lambda m, x, t, **k: F(m).nll_loss(x, t, **k), T((3, 5)), T((3,), "int64", "i5"),
      ignore_index=-100),
    C("mse_loss", "nn", lambda m, x, t, **k: F(m).mse_loss(x, t, **k), A, A, reduction="sum"),
    C("l1_loss", "nn", lambda m, x, t: F(m).l1_loss(x, t), A, A),
    C("bce", "nn", lambda m, x, t: F(m).binary_cross_entropy(x, t), T((3, 4), kind="u"), T((3, 4), kind="u")),
    C("bce_logits", "nn", lambda m, x, t, **k: F(m).binary_cross_entropy_with_logits(x, t, **k), A,
      T((3, 4), kind="u"), pos_weight=T((4,), kind="p")),
    C("huber", "nn", lambda m, x, t, **k: F(m).huber_loss(x, t, **k), A, A, delta=0.5),
    C("smooth_l1", "nn", lambda m, x, t, **k: F(m).smooth_l1_loss(x, t, **k), A, A, beta=0.5),
    C("kl_div", "nn", lambda m, x, t, **k: F(m).kl_div(x, t, **k), A, T((3, 4), kind="u"), reduction="batchmean"),
    C("cosine_sim", "nn", lambda m, a, b, **k: F(m).cosine_similarity(a, b, **k), A, A, dim=1),
    C("embedding", "nn", lambda m, i, w, **k: F(m).embedding(i, w, **k), T((2, 3), "int64", "i5"), T((5, 4)),
      padding_idx=0),
    C("one_hot", "nn", lambda m, i, n: F(m).one_hot(i, n), T((4,), "int64", "i5"), 5),
    C("pixel_shuffle", "nn", lambda m, x, r: F(m).pixel_shuffle(x, r), T((1, 8, 3, 3)), 2),
    C("unfold", "nn", lambda m, x, k, **kw: F(m).unfold(x, k, **kw), X4, 3, stride=2, padding=1),
    C("fold", "nn", lambda m, x, o, k: F(m).fold(x, o, k), T((1, 12, 9)), (4, 4), 2),
    C("scaled_dot", "nn", lambda m, q, k, v, **kw: F(m).scaled_dot_product_attention(q, k, v, **kw),
      T((2, 3, 4)), T((2, 3, 4)), T((2, 3, 4)), is_causal=True),
    # ---- nn module constructors (compared by parameter shapes) -------------------------------------------
    C("Conv2d", "module", lambda m, *a, **k: m.nn.Conv2d(*a, **k), 2, 3, 3, stride=1, padding=1, dilation=1),
    C("Conv1d", "module", lambda m, *a, **k: m.nn.Conv1d(*a, **k), 2, 4, 3, groups=2),
    C("Linear", "module", lambda m, *a, **k: m.nn.Linear(*a, **k), 4, 3, bias=True),
    C("BatchNorm2d", "module", lambda m, *a, **k: m.nn.BatchNorm2d(*a, **k), 3, eps=1e-5, momentum=0.1),
    C("LayerNorm", "module", lambda m, *a, **k: m.nn.LayerNorm(*a, **k), (4,), eps=1e-5),
    C("GroupNorm", "module", lambda m, *a, **k: m.nn.GroupNorm(*a, **k), 2, 4),
    C("Dropout", "module", lambda m, *a, **k: m.nn.Dropout(*a, **k), 0.5, inplace=False),
    C("Hardtanh", "module", lambda m, *a, **k: m.nn.Hardtanh(*a, **k), -1.0, 1.0),
    C("ReLU", "module", lambda m, **k: m.nn.ReLU(**k), inplace=False),
    C("LeakyReLU", "module", lambda m, *a, **k: m.nn.LeakyReLU(*a, **k), 0.2),
    C("Embedding", "module", lambda m, *a, **k: m.nn.Embedding(*a, **k), 10, 3, padding_idx=1),
    C("MaxPool2d", "module", lambda m, *a, **k: m.nn.MaxPool2d(*a, **k), 2, stride=2),
    C("LSTM", "module", lambda m, *a, **k: m.nn.LSTM(*a, **k), 3, 4, num_layers=1, batch_first=True),
    C("CrossEntropyLoss", "module", lambda m, **k: m.nn.CrossEntropyLoss(**k), label_smoothing=0.1),
    C("Softplus", "module", lambda m, **k: m.nn.Softplus(**k), beta=2.0),
    C("PReLU_fwd", "module", lambda m, x: m.nn.PReLU()(x), A),
    C("GroupNorm_fwd", "module", lambda m, x: m.nn.GroupNorm(2, 4)(x), T((2, 4, 3))),
    C("Threshold_fwd", "module", lambda m, x: m.nn.Threshold(0.1, 2.0)(x), A),
]
