"""Functions tinytorch writes in other ops but PyTorch computes in one native kernel with its own
``derivatives.yaml`` entry: the elu family, leaky_relu, hardsigmoid, the shrinks, softplus, log_sigmoid, sinc,
atanh; the pointwise losses (mse, huber, smooth_l1, binary cross entropy with and without logits); var, std,
linalg_vector_norm and dist; hypot, xlogy, lerp with a tensor weight, addcdiv; cummax / cummin; batch_norm in training.

Each is declared once as an op whose decomposition is the tinytorch formula (run without recording a graph)
and whose backward formula, written in tinytorch ops (so it is itself differentiable), is PyTorch's: the one
node it records saves what PyTorch's node saves (a saved tensor modified in place before backward raises
exactly when it does in PyTorch: tests/test_saved_tensors.py), and the gradient is PyTorch's formula rather
than the chain rule through the decomposition's steps. The public functions check their arguments and call
the entry points here."""
import math

from .. import _strides
from .._dispatch import defop, dispatch
from . import pointwise as _pw


def _like_meta(x, **kw):
    return [(x._shape, x.dtype)], [None]


def _unary_op(name, decomp, backward):
    """A floating elementwise op of one tensor and keyword attributes, saving its input."""
    return defop(name, _like_meta, backward, decomp=decomp, elementwise=True)


# ---- activations: each saves ``self`` (derivatives.yaml's *_backward(grad, self, ...)) -------------------
def _elu_decomp(x, alpha, scale, input_scale, celu):
    # celu divides by alpha (its historical formula, kept bit for bit); the others scale by input_scale
    inner = x / alpha if celu else (x if input_scale == 1 else x * input_scale)
    neg = _pw.expm1(inner) * (alpha * scale)
    return _pw.where(x > 0, x if scale == 1 else x * scale, neg)


def _elu_bw(c, g):
    # elu_backward(grad, alpha, scale, input_scale, is_result=false, self)
    x, kw = c.inputs[0], c.kw
    alpha, scale, s = kw["alpha"], kw["scale"], kw["input_scale"]
    return _pw.where(x <= 0, g * (s * alpha * scale) * _pw.exp(x * s), g * scale)


_elu_op = _unary_op("elu", _elu_decomp, _elu_bw)


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0, celu=False):
    """``scale * x`` for x > 0, else ``alpha * scale * (exp(input_scale * x) - 1)`` (ATen's ``elu``, which
    ``F.elu``, ``F.selu`` and ``F.celu`` call); ``celu`` computes the exponent as ``x / alpha``. One op saving
    ``x``, as PyTorch's ``EluBackward0``."""
    return dispatch(_elu_op, (x,), {"alpha": alpha, "scale": scale, "input_scale": input_scale, "celu": celu})


_leaky_relu_op = _unary_op(
    "leaky_relu", lambda x, negative_slope: _pw.where(x > 0, x, x * negative_slope),
    lambda c, g: _pw.where(c.inputs[0] > 0, g, g * c.kw["negative_slope"]))


def leaky_relu(x, negative_slope):
    """``x`` for x > 0 else ``negative_slope * x``; one op saving ``x`` (PyTorch's ``LeakyReluBackward0``)."""
    return dispatch(_leaky_relu_op, (x,), {"negative_slope": negative_slope})


def _hardsigmoid_bw(c, g):
    x = c.inputs[0]
    return _pw.where((x > -3) & (x < 3), g / 6, 0.0)


_hardsigmoid_op = _unary_op("hardsigmoid", lambda x: _pw.clamp(x / 6 + 0.5, 0.0, 1.0), _hardsigmoid_bw)


def hardsigmoid(x):
    """``clamp(x / 6 + 1/2, 0, 1)``; one op saving ``x`` (PyTorch's ``HardsigmoidBackward0``)."""
    return dispatch(_hardsigmoid_op, (x,))


def _shrink_bw(c, g):
    # hardshrink_backward and softshrink_backward alike: 0 inside [-lambd, lambd], the gradient outside
    x, lambd = c.inputs[0], c.kw["lambd"]
    return _pw.where((x >= -lambd) & (x <= lambd), 0.0, g)


# PyTorch's kernel zeroes only where -lambd <= x <= lambd holds: a NaN input or lambd keeps x
_hardshrink_op = _unary_op("hardshrink", lambda x, lambd: _pw.where((x >= -lambd) & (x <= lambd), 0.0, x),
                           _shrink_bw)
_softshrink_op = _unary_op(
    "softshrink",
    # the middle branch is x * 0, as ATen's, so a NaN x stays NaN
    lambda x, lambd: _pw.where(x > lambd, x - lambd, _pw.where(x < -lambd, x + lambd, x * 0)), _shrink_bw)


def hardshrink(x, lambd):
    """``x`` where ``|x| > lambd``, else 0; one op saving ``x`` (PyTorch's ``HardshrinkBackward0``)."""
    return dispatch(_hardshrink_op, (x,), {"lambd": lambd})


def softshrink(x, lambd):
    """``x -+ lambd`` outside ``[-lambd, lambd]``, else 0; one op saving ``x`` (``SoftshrinkBackward0``)."""
    return dispatch(_softshrink_op, (x,), {"lambd": lambd})


def _softplus_decomp(x, beta, threshold):
    bx = x * beta
    # ATen's test is ``bx > threshold``: a NaN threshold never takes the linear branch; the exp branch is fed 0
    # where the linear one is taken, so it never overflows there
    linear = bx > threshold
    return _pw.where(linear, x, _pw.log1p(_pw.exp(_pw.where(linear, 0.0, bx))) / beta)


def _softplus_bw(c, g):
    # softplus_backward: the gradient itself above the threshold, else g * z / (z + 1) with z = exp(beta x)
    x, beta, threshold = c.inputs[0], c.kw["beta"], c.kw["threshold"]
    bx = x * beta
    z = _pw.exp(_pw.clamp(bx, max=threshold))
    return _pw.where(bx > threshold, g, g * z / (z + 1))


_softplus_op = _unary_op("softplus", _softplus_decomp, _softplus_bw)


def softplus(x, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta x)) / beta``, ``x`` above ``threshold``; one op saving ``x`` (``SoftplusBackward0``)."""
    return dispatch(_softplus_op, (x,), {"beta": beta, "threshold": threshold})


_log_sigmoid_op = _unary_op("log_sigmoid", lambda x: -_softplus_decomp(-x, 1.0, 20.0),
                            lambda c, g: g * _pw.sigmoid(-c.inputs[0]))


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``; one op saving ``x`` (PyTorch's ``LogSigmoidBackward0`` saves
    ``self`` and a buffer of its own)."""
    return dispatch(_log_sigmoid_op, (x,))


def _sinc_decomp(x):
    px = x * math.pi
    safe = _pw.where(x == 0, 1.0, px)
    return _pw.where(x == 0, 1.0, _pw.sin(safe) / safe)


def _sinc_bw(c, g):
    # sinc_backward: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0
    x = c.inputs[0]
    zero = x == 0
    xs = _pw.where(zero, 1.0, x)
    px = xs * math.pi
    return _pw.where(zero, 0.0, (px * _pw.cos(px) - _pw.sin(px)) / (px * xs)) * g


_sinc_op = _unary_op("sinc", _sinc_decomp, _sinc_bw)


def sinc(x):
    """Normalized sinc of a real floating ``x``; one op saving ``x`` (PyTorch's ``SincBackward0``)."""
    return dispatch(_sinc_op, (x,))


_atanh_op = _unary_op("atanh", lambda x: _pw.log1p(2 * x / (1 - x)) * 0.5,
                      lambda c, g: g * _pw.reciprocal(1 - c.inputs[0] * c.inputs[0]))


def atanh(x):
    """Inverse hyperbolic tangent of a real floating ``x``; one op saving ``x`` (``AtanhBackward0``)."""
    return dispatch(_atanh_op, (x,))


# ---- pointwise losses: each saves self and target (and weight) -----------------------------------------------
def _reduced(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _loss_meta_of(dtype_of):
    def meta(input, target, *rest, reduction, **kw):
        shape = _strides.broadcast_shapes(input._shape, target._shape) if reduction == "none" else ()
        return [(shape, dtype_of(input, target))], [None] * (2 + len(rest))
    return meta


def _scale(c, g):
    """``g`` times the 1/N of a 'mean' reduction (N the elements of the unreduced loss)."""
    if c.kw["reduction"] != "mean":
        return g
    n = _strides.numel(_strides.broadcast_shapes(c.shapes[0], c.shapes[1]))
    return g / n


def _promoted(input, target):
    from .. import _dtype as _dt
    return _dt.promote_types(input.dtype, target.dtype)


def _mse_decomp(input, target, reduction):
    d = input - target
    return _reduced(d * d, reduction)


def _mse_bw(c, g):
    # mse_loss_backward: 2 (x - t) g (/ N for 'mean'); the target's gradient is its negative
    x, t = c.inputs
    gi = (x - t) * (_scale(c, g) * 2)
    return gi, -gi


_mse_op = defop("mse_loss", _loss_meta_of(_promoted), _mse_bw, decomp=_mse_decomp)


def mse_loss(input, target, reduction):
    """Mean squared error of two floating tensors (checked by the caller), reduced by ``reduction``; one op
    saving both, as PyTorch's ``MseLossBackward0``."""
    return dispatch(_mse_op, (input, target), {"reduction": reduction})


def _huber_decomp(input, target, reduction, delta):
    d = (input - target).abs()
    return _reduced(_pw.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta).to(input.dtype), reduction)


def _huber_bw(c, g):
    # huber_loss_backward: the difference clamped to [-delta, delta], times g
    x, t = c.inputs
    delta = c.kw["delta"]
    gi = _pw.clamp(x - t, -delta, delta) * _scale(c, g)
    return gi, -gi


_huber_op = defop("huber_loss", _loss_meta_of(lambda x, t: x.dtype), _huber_bw, decomp=_huber_decomp)


def huber_loss(input, target, reduction, delta):
    """Huber loss in ``input``'s dtype; one op saving both operands (``HuberLossBackward0``)."""
    return dispatch(_huber_op, (input, target), {"reduction": reduction, "delta": delta})


def _smooth_l1_decomp(input, target, reduction, beta):
    d = (input - target).abs()
    return _reduced(_pw.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def _smooth_l1_bw(c, g):
    # smooth_l1_loss_backward: sign(d) outside [-beta, beta], d / beta inside, times g
    x, t = c.inputs
    gi = _pw.clamp((x - t) / c.kw["beta"], -1.0, 1.0) * _scale(c, g)
    return gi, -gi


_smooth_l1_op = defop("smooth_l1_loss", _loss_meta_of(_promoted), _smooth_l1_bw, decomp=_smooth_l1_decomp)


def smooth_l1_loss(input, target, reduction, beta):
    """Smooth L1 loss for ``beta > 0``; one op saving both operands (``SmoothL1LossBackward0``)."""
    return dispatch(_smooth_l1_op, (input, target), {"reduction": reduction, "beta": beta})


def _bce_decomp(input, target, weight, reduction):
    lp = _pw.clamp(_pw.log(input), min=-100)
    l1p = _pw.clamp(_pw.log(1 - input), min=-100)
    loss = -(target * lp + (1 - target) * l1p)
    if weight is not None:
        loss = (loss * weight).to(input.dtype)
    return _reduced(loss, reduction)


def _bce_bw(c, g):
    # binary_cross_entropy_backward: g (x - t) / max(x (1 - x), 1e-12); the target's formula:
    # g (log(1 - x) - log(x)), each log clamped at -100 as in the forward
    x, t, w = c.inputs
    g = _scale(c, g)
    if w is not None:
        g = g * w
    gx = gt = None
    if c.next_edges[0] is not None:
        gx = g * (x - t) / _pw.clamp((1 - x) * x, min=1e-12)
    if c.next_edges[1] is not None:
        gt = g * (_pw.clamp(_pw.log(1 - x), min=-100) - _pw.clamp(_pw.log(x), min=-100))
    return gx, gt, None


_bce_op = defop("binary_cross_entropy", _loss_meta_of(lambda x, t: x.dtype), _bce_bw, decomp=_bce_decomp)


def binary_cross_entropy(input, target, weight, reduction):
    """Binary cross entropy of probabilities (checked by the caller); one op saving input, target and weight
    (``BinaryCrossEntropyBackward0``). ``weight`` must not require grad (PyTorch has no formula for it)."""
    return dispatch(_bce_op, (input, target, weight), {"reduction": reduction})


def _bce_logits_decomp(input, target, weight, pos_weight, reduction, reduced_float):
    # ATen's steps and roundings: log_sigmoid(x) in one kernel (float32 inside for half input), times
    # 1 + (pw - 1) t in x's dtype, then (1 - t) * x - that, and * weight, each written into t's dtype
    x = input.float() if reduced_float else input
    lsi = (-_softplus_decomp(-x, 1.0, 20.0)).to(input.dtype)
    if pos_weight is not None:
        lsi = (lsi * ((pos_weight - 1) * target + 1)).to(input.dtype)
    loss = ((1 - target) * input).to(target.dtype)
    loss = (loss - lsi).to(target.dtype)
    if weight is not None:
        loss = (loss * weight).to(target.dtype)
    return _reduced(loss, reduction)


def _bce_logits_bw(c, g):
    # binary_cross_entropy_with_logits_backward / _target_backward (FunctionsManual.cpp)
    x, t, w, pw = c.inputs
    g = _scale(c, g)
    if w is not None:
        g = g * w
    gx = gt = None
    if c.next_edges[0] is not None:
        if pw is None:
            gx = (_pw.sigmoid(x) - t) * g
        else:
            pt = pw * t
            gx = ((pt + 1 - t) * _pw.sigmoid(x) - pt) * g
    if c.next_edges[1] is not None:
        if pw is None:
            gt = -x * g
        else:
            # log_sigmoid(-x) - pw * log_sigmoid(x)
            gt = (-_softplus_decomp(x, 1.0, 20.0) + pw * _softplus_decomp(-x, 1.0, 20.0)) * g
    return gx, gt, None, None


_bce_logits_op = defop("binary_cross_entropy_with_logits", _loss_meta_of(lambda x, t: t.dtype), _bce_logits_bw,
                       decomp=_bce_logits_decomp)


def binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction, reduced_float):
    """BCE on logits (checked by the caller); one op saving input, target, weight and pos_weight
    (``BinaryCrossEntropyWithLogitsBackward0``). Neither weight may require grad (PyTorch has no formula)."""
    return dispatch(_bce_logits_op, (input, target, weight, pos_weight),
                    {"reduction": reduction, "reduced_float": reduced_float})


# ---- reductions: var saves self; std, linalg_vector_norm and dist also their result ---------------------------
def _reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _reduce_meta(x, dims, keepdim, **kw):
    return [(_reduced_shape(x._shape, dims, keepdim), x.dtype)], [None]


def _kept(t, c):
    """``t`` (shaped like the op's result) with the reduced dims back as size 1, so it broadcasts against the
    input (PyTorch's unsqueeze_multiple of a gradient when ``keepdim`` is False)."""
    if c.kw["keepdim"]:
        return t
    return t.reshape(_reduced_shape(c.shapes[0], c.kw["dims"], True))


def _var_grad(x, g, dims, correction):
    # var_backward: 2 / (N - correction) * grad * (self - mean(self, dim, keepdim=True))
    from .reduce import mean
    n = _strides.numel(x._shape[d] for d in dims)
    k = n - correction
    scale = 2.0 / k if k != 0 else math.inf
    return (g * scale) * (x - mean(x, dims, keepdim=True))


def _var_decomp(x, dims, correction, keepdim):
    from .reduce import _scaled_var
    sc, v = _scaled_var(x, dims, None, keepdim, correction, "var")
    return v if sc is None else v * (sc * sc)


def _std_decomp(x, dims, correction, keepdim):
    from .reduce import _scaled_var
    sc, v = _scaled_var(x, dims, None, keepdim, correction, "std")
    return _pw.sqrt(v) if sc is None else _pw.sqrt(v) * sc


def _var_bw(c, g):
    return _var_grad(c.inputs[0], _kept(g, c), c.kw["dims"], c.kw["correction"])


def _std_bw(c, g):
    # std_backward: var_backward of grad / (2 result), 0 where the result is 0
    x, out = c.inputs[0], _kept(c.out, c)
    gv = _pw.where(out == 0, 0.0, _kept(g, c) / (out * 2))
    return _var_grad(x, gv, c.kw["dims"], c.kw["correction"])


_var_op = defop("var", _reduce_meta, _var_bw, decomp=_var_decomp, reduction=True)
_std_op = defop("std", _reduce_meta, _std_bw, decomp=_std_decomp, save_output=True, reduction=True)


def var_std(x, dims, correction, keepdim, std):
    """Variance (or with ``std`` its square root) of a real floating ``x`` over the wrapped ``dims``; one op
    saving ``x`` (and for std its result), as PyTorch's ``VarBackward0`` / ``StdBackward0``."""
    return dispatch(_std_op if std else _var_op, (x,), {"dims": dims, "correction": correction, "keepdim": keepdim})


def _norm_grad(x, g, p, out, dims):
    """linalg_vector_norm_backward (FunctionsManual's norm_backward) for real ``x``; ``g`` and ``out`` already
    broadcast against ``x``."""
    if p == 0:
        return x * 0 * g
    if p == 1:
        return _pw.sign(x) * g
    if p == 2:
        return x * _pw.where(out == 0, 0.0, g / out)
    if math.isinf(p):
        # amax / amin of |x| respecting NaN: the gradient split over the elements that attain it
        a = x.abs()
        mask = (a == out) | a.isnan()
        return _pw.sign(x) * ((g / mask.sum(dims, keepdim=True)) * mask)
    a = x.abs()
    if p < 1:
        return _pw.sign(x) * _pw.where(x == 0, 0.0, a.pow(p - 1)) * g * out.pow(1 - p)
    scale = _pw.where(out == 0, 0.0, g / out.pow(p - 1))
    if p < 2:
        return _pw.sign(x) * a.pow(p - 1) * scale
    return x * a.pow(p - 2) * scale


def _vector_norm_decomp(x, ord, dims, keepdim):
    from .reduce import _norm_by_order
    return _norm_by_order(x, ord, dims, keepdim)


def _vector_norm_bw(c, g):
    x, out = c.inputs[0], c.out
    return _norm_grad(x, _kept(g, c), c.kw["ord"], _kept(out, c), c.kw["dims"])


_vector_norm_op = defop("linalg_vector_norm", _reduce_meta, _vector_norm_bw, decomp=_vector_norm_decomp,
                        save_output=True, reduction=True)


def vector_norm(x, ord, dims, keepdim):
    """The ``ord``-norm of a real floating ``x`` over the wrapped ``dims``; one op saving ``x`` and its result,
    as PyTorch's ``LinalgVectorNormBackward0``."""
    return dispatch(_vector_norm_op, (x,), {"ord": ord, "dims": dims, "keepdim": keepdim})


def _dist_meta(x, y, p):
    return [((), _promoted(x, y))], [None, None]


def _dist_bw(c, g):
    # norm_backward(grad, self - other, p, result) for self, its negative for other
    x, y = c.inputs
    out = c.out
    d = x - y
    gi = _norm_grad(d, g, c.kw["p"], out, tuple(range(d.ndim)))
    return gi, -gi


_dist_op = defop("dist", _dist_meta, _dist_bw, decomp=lambda x, y, p: (x - y).norm(p), save_output=True)


def dist(x, y, p):
    """The ``p``-norm of ``x - y`` (real floating operands); one op saving both and the result, as PyTorch's
    ``DistBackward0``."""
    return dispatch(_dist_op, (x, y), {"p": p})


# ---- pointwise ops of several tensors: xlogy, lerp with a tensor weight, addcdiv ------------------------------
def _nary_meta(*args, **kw):
    from .pointwise import _same
    return _same(*args)


def _xlogy_decomp(x, y):
    # NaN where y is NaN, even where x is 0 (as PyTorch): 0 * log(NaN) is not taken to be 0
    return _pw.where((x == 0) & (y == y), 0.0, x * _pw.log(y))


def _xlogy_bw(c, g):
    # self: xlogy(grad, other), 0 where self == 0 and other <= 0; other: grad * self / other
    x, y = c.inputs
    gx = _pw.where((x == 0) & (y <= 0), 0.0, xlogy(g, y)) if c.next_edges[0] is not None else None
    gy = g * x / y if c.next_edges[1] is not None else None
    return gx, gy


_xlogy_op = defop("xlogy", _nary_meta, _xlogy_bw, decomp=_xlogy_decomp, elementwise=True)


def xlogy(x, y):
    """``x * log(y)``, 0 where x == 0, of two real floating tensors of one dtype; one op saving both, as
    PyTorch's ``XlogyBackward0``."""
    return dispatch(_xlogy_op, (x, y))


def _hypot_decomp(a, b):
    # half types in float32 and rounded once, as PyTorch's kernel; scaled by the larger magnitude so that squares
    # of huge values do not overflow (C's hypot)
    dt = a.dtype
    from .. import _dtype as _dt
    work = _dt.float32 if dt in (_dt.float16, _dt.bfloat16) else dt
    a, b = a.to(work).abs(), b.to(work).abs()
    m = _pw.maximum(a, b)
    safe = _pw.where(m == 0, 1.0, m)
    r = m * _pw.sqrt((a / safe) ** 2 + (b / safe) ** 2)
    r = _pw.where((a == math.inf) | (b == math.inf), math.inf, r)  # inf even beside a NaN, as C's hypot
    return r.to(dt)


def _hypot_bw(c, g):
    # self: grad * self / result; other: grad * other / result
    (x, y), r = c.inputs, c.out
    return (g * x / r if c.next_edges[0] is not None else None,
            g * y / r if c.next_edges[1] is not None else None)


# each input is named by its own gradient's formula only: saved when it needs its gradient; the result always
_hypot_op = defop("hypot", _nary_meta, _hypot_bw, decomp=_hypot_decomp, save_inputs=((0, (0,)), (1, (1,))),
                  save_output=True, elementwise=True)


def hypot(x, y):
    """``sqrt(x^2 + y^2)`` of two floating tensors of one dtype without overflow; one op saving what PyTorch's
    ``HypotBackward0`` saves."""
    return dispatch(_hypot_op, (x, y))


def _lerp_bw(c, g):
    # self: grad * (1 - weight); end: grad * weight; weight: grad * (end - self)
    x, e, w = c.inputs
    gw = g * (e - x) if c.next_edges[2] is not None else None
    return g * (1 - w), g * w, gw


# self and end are named only by the weight's formula: saved when the weight needs its gradient
def _lerp_decomp(x, e, w):
    # PyTorch's two-sided formula: exact at both ends, and an infinite input gives +-inf, not inf - inf = NaN
    d = e - x
    return _pw.where(w.abs() < 0.5, x + w * d, e - d * (1 - w))


_lerp_op = defop("lerp", _nary_meta, _lerp_bw, decomp=_lerp_decomp,
                 save_inputs=((0, (2,)), (1, (2,)), 2), elementwise=True)


def lerp(x, end, weight):
    """``x + weight * (end - x)`` with a real tensor ``weight``; one op saving what ``LerpBackward1`` saves."""
    return dispatch(_lerp_op, (x, end, weight))


def _addcdiv_bw(c, g):
    # tensor1: grad * value / tensor2; tensor2: -grad * value * tensor1 / tensor2^2
    _, t1, t2 = c.inputs
    v = c.kw["value"]
    g2 = -g * (v * t1 / (t2 * t2)) if c.next_edges[2] is not None else None
    return g, g * (v / t2), g2


# tensor2 is named by two formulas (always saved), tensor1 only by tensor2's
_addcdiv_op = defop("addcdiv", _nary_meta, _addcdiv_bw, decomp=lambda x, t1, t2, value: x + (t1 / t2) * value,
                    save_inputs=((1, (2,)), 2), elementwise=True)


def addcdiv(x, t1, t2, value):
    """``x + value * t1 / t2`` of real tensors; one op saving what ``AddcdivBackward0`` saves."""
    return dispatch(_addcdiv_op, (x, t1, t2), {"value": value})


# ---- cummax / cummin: save self (its shape) and the indices --------------------------------------------------
def _cum_extreme_meta(x, dim):
    from .. import _dtype as _dt
    return [(x._shape, x.dtype), (x._shape, _dt.int64)], [None]


def _cum_extreme_bw(c, g):
    # cummaxmin_backward: each gradient added at the index whose value it took
    from .creation import zeros_like
    x = c.inputs[0]
    idx = c.out[1]
    return zeros_like(x).scatter_add(c.kw["dim"], idx, g)


def _scan(take_max):
    def decomp(x, dim):
        from .reduce import _scan_extreme
        return _scan_extreme(x, dim, take_max)
    return decomp


_cummax_op = defop("cummax", _cum_extreme_meta, _cum_extreme_bw, decomp=_scan(True), save_output=(1,))
_cummin_op = defop("cummin", _cum_extreme_meta, _cum_extreme_bw, decomp=_scan(False), save_output=(1,))


def cum_extreme(x, dim, take_max):
    """(values, indices) of the running max (or min) of a floating ``x`` with dims and elements along wrapped
    ``dim``; one op saving ``x`` and the indices, as PyTorch's ``CummaxBackward0`` / ``CumminBackward0``."""
    return dispatch(_cummax_op if take_max else _cummin_op, (x,), {"dim": dim})


# ---- batch normalization in training: saves input and weight (native_batch_norm) -----------------------------
def _bn_shape(x):
    return (1, -1) + (1,) * (x.ndim - 2)


def _bn_stats(x, dims, eps):
    mean = x.mean(dims, keepdim=True)
    var = x.var(dims, correction=0, keepdim=True)
    return mean, _pw.rsqrt(var + eps)


def _bn_decomp(x, weight, bias, dims, eps):
    mean, invstd = _bn_stats(x, dims, eps)
    out = (x - mean) * invstd
    if weight is not None:
        out = out * weight.reshape(_bn_shape(x))
    if bias is not None:
        out = out + bias.reshape(_bn_shape(x))
    return out


def _bn_bw(c, g):
    # native_batch_norm_backward (training): the batch statistics recomputed from the saved input
    x, w, _ = c.inputs
    dims = c.kw["dims"]
    mean, invstd = _bn_stats(x, dims, c.kw["eps"])
    xhat = (x - mean) * invstd
    e = c.next_edges
    gb = g.sum(dims) if e[2] is not None else None
    gw = (g * xhat).sum(dims) if e[1] is not None else None
    gx = None
    if e[0] is not None:
        gg = g if w is None else g * w.reshape(_bn_shape(x))
        gx = (gg - gg.mean(dims, keepdim=True) - xhat * (gg * xhat).mean(dims, keepdim=True)) * invstd
    return gx, gw, gb


_bn_op = defop("native_batch_norm", lambda x, w, b, dims, eps: ([(x._shape, x.dtype)], [None, None, None]),
               _bn_bw, decomp=_bn_decomp, save_inputs=(0, 1))


def batch_norm_training(x, weight, bias, dims, eps):
    """Batch normalization of ``x`` (N, C, *) with its batch statistics over ``dims`` and the optional
    per-channel affine ``weight`` / ``bias`` (checked by the caller, all of x's dtype); one op saving input and
    weight, as PyTorch's ``NativeBatchNormBackward0``."""
    return dispatch(_bn_op, (x, weight, bias), {"dims": dims, "eps": eps})
