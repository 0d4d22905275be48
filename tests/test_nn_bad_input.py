"""Bad and edge-case arguments to ``nn.functional``: the same call through tinytorch and PyTorch must raise the
same exception type (ours may be a subclass), raised by a deliberate check rather than from inside NumPy, or
return the same shape, dtype and values. Each case is a function of the library module, so both libraries
get the same data."""
import os
import traceback
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import TOL, torch

NAN, INF = float("nan"), float("inf")
CASES = []


def case(name, fn, seed=None, tol=None):
    CASES.append(pytest.param(fn, seed, tol, id=name))


def F(m):
    return m.nn.functional


def x4(m, *shape, dtype=None):
    """A deterministic (values known to both libraries) float tensor of ``shape``, default (2, 3, 5, 6)."""
    shape = shape or (2, 3, 5, 6)
    n = int(np.prod(shape))
    t = (m.arange(n, dtype=m.float32) % 7 / 3 - 1).reshape(shape)
    return t.to(dtype) if dtype is not None else t


def probs(m, *shape, dtype=None):
    n = int(np.prod(shape))
    t = ((m.arange(n, dtype=m.float32) % 9 + 0.5) / 10).reshape(shape)
    return t.to(dtype) if dtype is not None else t


# ---- adaptive pooling: 0 is an empty output (not None), huge sizes refused at once, bad output_size -----------
for name, fn in (("adaptive_avg_pool", lambda m: F(m).adaptive_avg_pool2d),
                 ("adaptive_max_pool", lambda m: F(m).adaptive_max_pool2d)):
    for osz in ((0, 0), (0, 2), (2, 0), (None, 2), (3, None), (2, 4), (7, 9), (-1, 2), (2.0, 2), (2, 2, 2)):
        case(f"{name}2d-{osz}", lambda m, fn=fn, osz=osz: fn(m)(x4(m), osz))
    case(f"{name}2d-huge", lambda m, fn=fn: fn(m)(x4(m), (2 ** 40, 2 ** 40)))
    case(f"{name}2d-2d-input", lambda m, fn=fn: fn(m)(x4(m, 5, 6), 2))
    case(f"{name}2d-empty-batch", lambda m, fn=fn: fn(m)(x4(m, 0, 3, 4, 4), 2))
    case(f"{name}2d-empty-spatial", lambda m, fn=fn: fn(m)(x4(m, 1, 3, 0, 4), 2))
    case(f"{name}2d-int64", lambda m, fn=fn: fn(m)(x4(m).long(), 2))
    case(f"{name}2d-unbatched", lambda m, fn=fn: fn(m)(x4(m, 3, 5, 6), (2, 3)))
for osz in (0, 3, 2 ** 40, -1):
    case(f"adaptive_avg_pool1d-{osz}", lambda m, osz=osz: F(m).adaptive_avg_pool1d(x4(m, 2, 3, 5), osz))
    case(f"adaptive_max_pool1d-{osz}", lambda m, osz=osz: F(m).adaptive_max_pool1d(x4(m, 2, 3, 5), osz))
    case(f"adaptive_max_pool1d-idx-{osz}",
         lambda m, osz=osz: F(m).adaptive_max_pool1d(x4(m, 2, 3, 5), osz, return_indices=True))
    case(f"adaptive_avg_pool3d-{osz}", lambda m, osz=osz: F(m).adaptive_avg_pool3d(x4(m, 2, 3, 4, 5, 5), osz))
    case(f"adaptive_max_pool3d-{osz}", lambda m, osz=osz: F(m).adaptive_max_pool3d(x4(m, 2, 3, 4, 5, 5), osz))
    case(f"adaptive_max_pool3d-idx-{osz}",
         lambda m, osz=osz: F(m).adaptive_max_pool3d(x4(m, 2, 3, 4, 5, 5), osz, return_indices=True))
case("adaptive_max_pool2d-idx-0", lambda m: F(m).adaptive_max_pool2d(x4(m), (0, 3), return_indices=True))
case("adaptive_avg_pool1d-tuple", lambda m: F(m).adaptive_avg_pool1d(x4(m, 1, 3, 4), (2,)))
case("adaptive_avg_pool3d-2d", lambda m: F(m).adaptive_avg_pool3d(x4(m, 4, 5), 2))

# ---- dropout: NaN and out-of-range p, ranks, integer input -----------------------------------------------------
for fn in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
    for p in (NAN, -0.1, 1.5, INF):
        case(f"{fn}-p={p}", lambda m, fn=fn, p=p: getattr(F(m), fn)(x4(m, 2, 3, 4), p, True))
    case(f"{fn}-eval-p=2", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 2, 3, 4), 2.0, False))
    case(f"{fn}-eval-p=nan", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 2, 3, 4), NAN, False))
    case(f"{fn}-p=1", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 2, 3, 4), 1.0, True))
    case(f"{fn}-empty", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 0, 3, 4), 0.5, True), seed=0)
    case(f"{fn}-1d", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 6), 0.5, True), seed=0)
    for shape in ((2, 3), (2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 2, 2)):
        case(f"{fn}-{shape}-same-draws", lambda m, fn=fn, shape=shape: getattr(F(m), fn)(x4(m, *shape), 0.5, True),
             seed=0)
case("dropout-int64", lambda m: F(m).dropout(x4(m, 3).long(), 0.5, True))
case("dropout-int64-eval", lambda m: F(m).dropout(x4(m, 3).long(), 0.5, False))
case("dropout-int64-p=1", lambda m: F(m).dropout(x4(m, 3).long(), 1.0, True))

# ---- losses: ranges, label smoothing, reductions, dtypes --------------------------------------------------------
case("bce-target>1", lambda m: F(m).binary_cross_entropy(probs(m, 3), m.tensor([0., 1., 2.])))
case("bce-target<0", lambda m: F(m).binary_cross_entropy(probs(m, 3), m.tensor([0., 1., -0.5])))
case("bce-target-nan", lambda m: F(m).binary_cross_entropy(probs(m, 3), m.tensor([0., 1., NAN])))
case("bce-input>1", lambda m: F(m).binary_cross_entropy(m.tensor([0., 1., 2.]), probs(m, 3)))
case("bce-input-nan", lambda m: F(m).binary_cross_entropy(m.tensor([0., 1., NAN]), probs(m, 3)))
case("bce-int64", lambda m: F(m).binary_cross_entropy(m.tensor([0, 1]), m.tensor([0, 1])))
case("bce-dtype-mismatch", lambda m: F(m).binary_cross_entropy(probs(m, 3).half(), probs(m, 3)))
case("bce-empty", lambda m: F(m).binary_cross_entropy(probs(m, 0), probs(m, 0)))
case("bce-weight-broadcast", lambda m: F(m).binary_cross_entropy(probs(m, 2, 3), probs(m, 2, 3), weight=probs(m, 3)))
case("bce-weight-bad", lambda m: F(m).binary_cross_entropy(probs(m, 2, 3), probs(m, 2, 3), weight=probs(m, 2)))
case("bce-bad-reduction", lambda m: F(m).binary_cross_entropy(probs(m, 3), probs(m, 3), reduction="avg"))
for ls in (2.0, 1.0000001, INF, 1.0, 0.3, -0.1, -INF, NAN):
    case(f"cross_entropy-label_smoothing={ls}",
         lambda m, ls=ls: F(m).cross_entropy(x4(m, 2, 3), m.tensor([0, 2]), label_smoothing=ls))
    case(f"cross_entropy-probs-label_smoothing={ls}",
         lambda m, ls=ls: F(m).cross_entropy(x4(m, 2, 3), probs(m, 2, 3), label_smoothing=ls))
case("CrossEntropyLoss-label_smoothing=2", lambda m: m.nn.CrossEntropyLoss(label_smoothing=2.0)(x4(m, 2, 3),
                                                                                                  m.tensor([0, 1])))
case("cross_entropy-bad-reduction", lambda m: F(m).cross_entropy(x4(m, 2, 3), m.tensor([0, 1]), reduction="foo"))
case("nll_loss-bad-reduction", lambda m: F(m).nll_loss(x4(m, 2, 3), m.tensor([0, 1]), reduction="foo"))
case("cross_entropy-empty", lambda m: F(m).cross_entropy(x4(m, 0, 3), m.ones(0, dtype=m.int64)))
case("cross_entropy-empty-none", lambda m: F(m).cross_entropy(x4(m, 0, 3), m.ones(0, dtype=m.int64),
                                                              reduction="none"))
case("cross_entropy-weight-dtype", lambda m: F(m).cross_entropy(x4(m, 2, 3), m.tensor([0, 1]),
                                                                weight=m.ones(3, dtype=m.float64)))
case("huber-delta0", lambda m: F(m).huber_loss(x4(m, 3), x4(m, 3) * 2, delta=0.0))
case("huber-int64", lambda m: F(m).huber_loss(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64)))
case("smooth_l1-beta<0", lambda m: F(m).smooth_l1_loss(x4(m, 3), x4(m, 3) * 2, beta=-1.0))
case("soft_margin-int64", lambda m: F(m).soft_margin_loss(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64)))
case("bce_with_logits-int64-input", lambda m: F(m).binary_cross_entropy_with_logits(m.ones(3, dtype=m.int64),
                                                                                    probs(m, 3)))
case("bce_with_logits-int64-target", lambda m: F(m).binary_cross_entropy_with_logits(x4(m, 3),
                                                                                     m.ones(3, dtype=m.int64)))
for dt in ("float16", "bfloat16"):
    for red in ("mean", "none"):
        for loss in ("huber_loss", "soft_margin_loss", "binary_cross_entropy_with_logits", "mse_loss",
                     "smooth_l1_loss", "l1_loss"):
            case(f"{loss}-{dt}-{red}", lambda m, loss=loss, dt=dt, red=red: getattr(F(m), loss)(
                x4(m, 2, 3, 4, dtype=getattr(m, dt)), probs(m, 2, 3, 4, dtype=getattr(m, dt)), reduction=red))
            # a float32 partner: the result dtype follows ATen's rule for each loss (input's, target's, promoted)
            case(f"{loss}-{dt}-f32-target-{red}", lambda m, loss=loss, dt=dt, red=red: getattr(F(m), loss)(
                x4(m, 2, 3, 4, dtype=getattr(m, dt)), probs(m, 2, 3, 4), reduction=red))
            case(f"{loss}-f32-{dt}-target-{red}", lambda m, loss=loss, dt=dt, red=red: getattr(F(m), loss)(
                x4(m, 2, 3, 4), probs(m, 2, 3, 4, dtype=getattr(m, dt)), reduction=red))
    case(f"bce_with_logits-{dt}-f32-weights", lambda m, dt=dt: F(m).binary_cross_entropy_with_logits(
        x4(m, 2, 3, 4, dtype=getattr(m, dt)), probs(m, 2, 3, 4, dtype=getattr(m, dt)), weight=probs(m, 4),
        pos_weight=probs(m, 4) * 3))
    case(f"BCEWithLogitsLoss-{dt}", lambda m, dt=dt: m.nn.BCEWithLogitsLoss(pos_weight=probs(m, 4) * 3)(
        x4(m, 2, 3, 4, dtype=getattr(m, dt)), probs(m, 2, 3, 4, dtype=getattr(m, dt))))
    case(f"HuberLoss-{dt}", lambda m, dt=dt: m.nn.HuberLoss(delta=0.5)(
        x4(m, 2, 3, 4, dtype=getattr(m, dt)), probs(m, 2, 3, 4, dtype=getattr(m, dt))))
    case(f"bce-{dt}-f32-weight", lambda m, dt=dt: F(m).binary_cross_entropy(
        probs(m, 2, 3, dtype=getattr(m, dt)), probs(m, 2, 3, dtype=getattr(m, dt)), weight=probs(m, 3)))
    case(f"nll_loss-{dt}-f32-weight", lambda m, dt=dt: F(m).nll_loss(
        x4(m, 2, 3, dtype=getattr(m, dt)), m.tensor([0, 2]), weight=probs(m, 3)))

# ---- normalization: half precision, parameter sizes and dtypes, running statistics ------------------------------
for dt in ("float16", "bfloat16"):
    def xin(m, dt=dt):
        return x4(m, 2, 6, 5, dtype=getattr(m, dt))
    case(f"group_norm-{dt}", lambda m, xin=xin: F(m).group_norm(xin(m), 3))
    case(f"group_norm-{dt}-f32-affine", lambda m, xin=xin: F(m).group_norm(xin(m), 2, probs(m, 6), probs(m, 6)))
    case(f"GroupNorm-{dt}", lambda m, xin=xin: m.nn.GroupNorm(3, 6)(xin(m)))
    case(f"instance_norm-{dt}", lambda m, xin=xin: F(m).instance_norm(xin(m)))
    case(f"instance_norm-{dt}-f32-affine", lambda m, xin=xin: F(m).instance_norm(xin(m), weight=probs(m, 6),
                                                                                  bias=probs(m, 6)))
    case(f"instance_norm-{dt}-f32-stats", lambda m, xin=xin: F(m).instance_norm(xin(m), m.zeros(6), m.ones(6)))
    case(f"InstanceNorm1d-{dt}", lambda m, xin=xin: m.nn.InstanceNorm1d(6, affine=True)(xin(m)))
    case(f"batch_norm-{dt}-train", lambda m, xin=xin: F(m).batch_norm(xin(m), None, None, training=True))
    case(f"batch_norm-{dt}-f32-stats-train", lambda m, xin=xin: F(m).batch_norm(xin(m), m.zeros(6), m.ones(6),
                                                                                 training=True))
    case(f"batch_norm-{dt}-f32-eval", lambda m, xin=xin: F(m).batch_norm(xin(m), probs(m, 6), probs(m, 6) + 1,
                                                                         probs(m, 6), probs(m, 6)))
    case(f"rms_norm-{dt}", lambda m, xin=xin: F(m).rms_norm(xin(m), (5,)))
    case(f"rms_norm-{dt}-f32-weight", lambda m, xin=xin: F(m).rms_norm(xin(m), (5,), probs(m, 5)))
    case(f"RMSNorm-{dt}", lambda m, xin=xin: m.nn.RMSNorm(5)(xin(m)))
    case(f"layer_norm-{dt}-f32-affine", lambda m, xin=xin: F(m).layer_norm(xin(m), (5,), probs(m, 5), probs(m, 5)))
    case(f"group_norm-{dt}-f64-weight", lambda m, xin=xin: F(m).group_norm(xin(m), 3, m.ones(6, dtype=m.float64)))
case("group_norm-groups=-1", lambda m: F(m).group_norm(x4(m, 2, 3, 4), -1))
case("group_norm-groups=0", lambda m: F(m).group_norm(x4(m, 2, 3, 4), 0))
case("group_norm-1d", lambda m: F(m).group_norm(x4(m, 3), 1))
case("group_norm-weight-size", lambda m: F(m).group_norm(x4(m, 2, 3, 4), 3, m.ones(4)))
case("group_norm-weight-2d", lambda m: F(m).group_norm(x4(m, 2, 3, 4), 3, m.ones(3, 1)))
case("group_norm-empty-batch", lambda m: F(m).group_norm(x4(m, 0, 3, 4), 3))
case("group_norm-empty-spatial", lambda m: F(m).group_norm(x4(m, 2, 3, 0), 3))
case("group_norm-int64", lambda m: F(m).group_norm(x4(m, 2, 3, 4).long(), 3))
case("group_norm-f64-weight", lambda m: F(m).group_norm(x4(m, 2, 3, 4), 3, m.ones(3, dtype=m.float64)))
for train in (False, True):
    case(f"batch_norm-running_mean-size-train={train}",
         lambda m, train=train: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(4), m.ones(4), training=train))
    case(f"batch_norm-running_var-size-train={train}",
         lambda m, train=train: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(3), m.ones(1), training=train))
    case(f"batch_norm-weight-size-train={train}",
         lambda m, train=train: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(3), m.ones(3), m.ones(1), training=train))
    case(f"batch_norm-bias-size-train={train}", lambda m, train=train: F(m).batch_norm(
        x4(m, 2, 3, 4), m.zeros(3), m.ones(3), None, m.ones(4), training=train))
    case(f"batch_norm-empty-batch-train={train}",
         lambda m, train=train: F(m).batch_norm(x4(m, 0, 3, 4), m.zeros(3), m.ones(3), training=train))
    case(f"batch_norm-f64-stats-train={train}", lambda m, train=train: F(m).batch_norm(
        x4(m, 2, 3, 4), m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64), training=train))
    case(f"instance_norm-running_mean-size-stats={train}", lambda m, train=train: F(m).instance_norm(
        x4(m, 2, 3, 4), m.zeros(4), m.ones(4), use_input_stats=train))
case("batch_norm-weight-2d", lambda m: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(3), m.ones(3), m.ones(3, 1)))
case("batch_norm-no-stats-eval", lambda m: F(m).batch_norm(x4(m, 2, 3, 4), None, None))
case("batch_norm-one-stat", lambda m: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(3), None, training=True))
case("batch_norm-one-value-train", lambda m: F(m).batch_norm(x4(m, 1, 3), m.zeros(3), m.ones(3), training=True))
case("batch_norm-int64", lambda m: F(m).batch_norm(x4(m, 2, 3).long(), m.zeros(3), m.ones(3)))
case("instance_norm-no-stats", lambda m: F(m).instance_norm(x4(m, 2, 3, 4), use_input_stats=False))
case("instance_norm-weight-size", lambda m: F(m).instance_norm(x4(m, 2, 3, 4), weight=m.ones(4)))
case("instance_norm-empty-batch", lambda m: F(m).instance_norm(x4(m, 0, 3, 4)))
case("instance_norm-int64", lambda m: F(m).instance_norm(x4(m, 2, 3, 4).long()))
case("layer_norm-int64", lambda m: F(m).layer_norm(x4(m, 2, 4).long(), (4,)))
case("rms_norm-int64", lambda m: F(m).rms_norm(x4(m, 2, 4).long(), (4,)))
case("rms_norm-weight-size", lambda m: F(m).rms_norm(x4(m, 2, 4), (4,), m.ones(3)))
case("local_response_norm-empty", lambda m: F(m).local_response_norm(x4(m, 0, 3, 4), 2))
case("local_response_norm-size=0", lambda m: F(m).local_response_norm(x4(m, 2, 3, 4), 0))

# ---- glu, softmax ------------------------------------------------------------------------------------------------
case("glu-odd", lambda m: F(m).glu(x4(m, 2, 3)))
case("glu-odd-dim0", lambda m: F(m).glu(x4(m, 3, 4), 0))
case("glu-0d", lambda m: F(m).glu(m.tensor(1.0)))
case("glu-empty", lambda m: F(m).glu(x4(m, 0, 4)))
case("glu-empty-halved", lambda m: F(m).glu(x4(m, 3, 0)))
case("glu-int64", lambda m: F(m).glu(x4(m, 2, 4).long()))
case("glu-dim-out-of-range", lambda m: F(m).glu(x4(m, 2, 4), 2))
for fn in ("softmax", "log_softmax", "softmin"):
    case(f"{fn}-T[0]", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 0), 0))
    case(f"{fn}-T[3,0]", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 3, 0), 1))
    case(f"{fn}-T[0,3]", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 0, 3), 1))
    for d in (1, -2, 0, -1):
        case(f"{fn}-0d-dim={d}", lambda m, fn=fn, d=d: getattr(F(m), fn)(m.tensor(1.5), d))
    case(f"{fn}-int64", lambda m, fn=fn: getattr(F(m), fn)(x4(m, 3).long(), 0))
case("torch.softmax-0d-dim=1", lambda m: m.softmax(m.tensor(1.5), 1))
case("Tensor.log_softmax-0d-dim=1", lambda m: m.tensor(1.5).log_softmax(1))

# ---- convolution, unfold / fold, pooling: kernel size 0, stride 0, dilation 0, negative padding, ranks ------------
_CONV = {1: ((1, 2, 5), (3, 2, 3)), 2: ((1, 2, 5, 5), (3, 2, 3, 3)), 3: ((1, 2, 5, 5, 5), (3, 2, 3, 3, 3))}
for nd, (xs, ws) in _CONV.items():
    conv = lambda m, nd=nd: getattr(F(m), f"conv{nd}d")  # noqa: E731
    convt = lambda m, nd=nd: getattr(F(m), f"conv_transpose{nd}d")  # noqa: E731
    wt = (2, 3) + ws[2:]  # (C_in, C_out / groups, k...)
    for name, kw in (("stride=0", dict(stride=0)), ("stride=-1", dict(stride=-1)), ("dilation=0", dict(dilation=0)),
                     ("dilation=-1", dict(dilation=-1)), ("padding=-1", dict(padding=-1)), ("groups=0", dict(groups=0)),
                     ("groups=-1", dict(groups=-1)), ("stride-len", dict(stride=(1,) * (nd + 1))),
                     ("padding-len", dict(padding=(0,) * (nd + 1))), ("stride-float", dict(stride=1.5)),
                     ("ok-strided", dict(stride=2, padding=1, dilation=1))):
        case(f"conv{nd}d-{name}", lambda m, conv=conv, xs=xs, ws=ws, kw=kw: conv(m)(x4(m, *xs), x4(m, *ws), **kw))
        case(f"conv_transpose{nd}d-{name}",
             lambda m, convt=convt, xs=xs, wt=wt, kw=kw: convt(m)(x4(m, *xs), x4(m, *wt), **kw))
    case(f"conv{nd}d-kernel0", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws[:2], *([0] * nd))))
    case(f"conv{nd}d-kernel0-first",
         lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws[:2], 0, *ws[3:])))
    case(f"conv_transpose{nd}d-kernel0",
         lambda m, convt=convt, xs=xs: convt(m)(x4(m, *xs), x4(m, 2, 3, *([0] * nd))))
    case(f"conv_transpose{nd}d-output_padding=-1",
         lambda m, convt=convt, xs=xs, wt=wt: convt(m)(x4(m, *xs), x4(m, *wt), output_padding=-1))
    case(f"conv_transpose{nd}d-output_padding-big",
         lambda m, convt=convt, xs=xs, wt=wt: convt(m)(x4(m, *xs), x4(m, *wt), output_padding=1))
    case(f"conv_transpose{nd}d-ok", lambda m, convt=convt, xs=xs, wt=wt: convt(m)(
        x4(m, *xs), x4(m, *wt), x4(m, 3), stride=2, padding=1, output_padding=1))
    case(f"conv{nd}d-empty-batch", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, 0, *xs[1:]), x4(m, *ws)))
    case(f"conv_transpose{nd}d-empty-batch",
         lambda m, convt=convt, xs=xs, wt=wt: convt(m)(x4(m, 0, *xs[1:]), x4(m, *wt)))
    case(f"conv{nd}d-bias-size", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws), x4(m, 4)))
    case(f"conv_transpose{nd}d-bias-size",
         lambda m, convt=convt, xs=xs, wt=wt: convt(m)(x4(m, *xs), x4(m, *wt), x4(m, 2)))
    case(f"conv{nd}d-too-small", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, 1, 2, *([2] * nd)), x4(m, *ws)))
    case(f"conv{nd}d-no-out-channels", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, 0, *ws[1:])))
    case(f"conv{nd}d-weight-rank", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws, 1)))
    case(f"conv{nd}d-input-rank", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs, 1), x4(m, *ws)))
    case(f"conv{nd}d-same-strided",
         lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws), stride=2, padding="same"))
    case(f"conv{nd}d-same", lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws), padding="same"))
    case(f"conv{nd}d-bad-padding-string",
         lambda m, conv=conv, xs=xs, ws=ws: conv(m)(x4(m, *xs), x4(m, *ws), padding="full"))
    case(f"conv_transpose{nd}d-padding-string",
         lambda m, convt=convt, xs=xs, wt=wt: convt(m)(x4(m, *xs), x4(m, *wt), padding="same"))
for name, kw in (("kernel0", dict(kernel_size=0)), ("dilation0", dict(kernel_size=2, dilation=0)),
                 ("stride0", dict(kernel_size=2, stride=0)), ("padding-1", dict(kernel_size=2, padding=-1)),
                 ("kernel-len3", dict(kernel_size=(2, 2, 2))), ("kernel-float", dict(kernel_size=2.0)),
                 ("ok", dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1)))):
    case(f"unfold-{name}", lambda m, kw=kw: F(m).unfold(x4(m, 1, 2, 5, 6), **kw))
for name, shape in (("unbatched", (2, 5, 5)), ("2d", (5, 5)), ("5d", (1, 2, 3, 5, 5)), ("empty-batch", (0, 2, 5, 5)),
                    ("empty-channels", (1, 0, 5, 5)), ("too-small", (1, 2, 1, 1))):
    case(f"unfold-{name}", lambda m, shape=shape: F(m).unfold(x4(m, *shape), 2))
case("unfold-int64", lambda m: F(m).unfold(x4(m, 1, 2, 5, 5).long(), 2))
for name, kw in (("kernel0", dict(kernel_size=0)), ("dilation0", dict(kernel_size=2, dilation=0)),
                 ("stride0", dict(kernel_size=2, stride=0)), ("padding-1", dict(kernel_size=2, padding=-1)),
                 ("ok", dict(kernel_size=2)), ("output_size0", dict(output_size=(0, 5), kernel_size=2)),
                 ("output_size-len3", dict(output_size=(5, 5, 5), kernel_size=2))):
    case(f"fold-{name}", lambda m, kw=kw: F(m).fold(x4(m, 1, 8, 16), **{"output_size": (5, 5), **kw}))
for name, shape in (("unbatched", (8, 16)), ("4d", (1, 8, 16, 1)), ("bad-L", (1, 8, 15)), ("bad-C", (1, 7, 16)),
                    ("empty-batch", (0, 8, 16)), ("empty-L", (1, 8, 0))):
    case(f"fold-{name}", lambda m, shape=shape: F(m).fold(x4(m, *shape), (5, 5), 2))
case("fold-int64", lambda m: F(m).fold(x4(m, 1, 8, 16).long(), (5, 5), 2))
_POOL = {1: (2, 3, 6), 2: (2, 3, 6, 6), 3: (2, 3, 4, 6, 6)}
for nd, xs in _POOL.items():
    for kind in ("max", "avg", "lp"):
        def pool(m, *a, kind=kind, nd=nd, **kw):
            fn = getattr(F(m), f"{kind}_pool{nd}d")
            return fn(*a[:1], 2.0, *a[1:], **kw) if kind == "lp" else fn(*a, **kw)
        for name, args in (("kernel0", (0,)), ("kernel-1", (-1,)), ("stride0", (2, 0)), ("stride-1", (2, -1)),
                           ("ok", (3, 2))):
            case(f"{kind}_pool{nd}d-{name}", lambda m, pool=pool, xs=xs, args=args: pool(m, x4(m, *xs), *args))
        case(f"{kind}_pool{nd}d-empty-batch", lambda m, pool=pool, xs=xs: pool(m, x4(m, 0, *xs[1:]), 2))
        case(f"{kind}_pool{nd}d-1d-input", lambda m, pool=pool: pool(m, x4(m, 6), 2))
        if kind != "lp":
            case(f"{kind}_pool{nd}d-padding-1", lambda m, pool=pool, xs=xs: pool(m, x4(m, *xs), 2, 1, -1))
            case(f"{kind}_pool{nd}d-padding-big", lambda m, pool=pool, xs=xs: pool(m, x4(m, *xs), 2, 1, 2))
            case(f"{kind}_pool{nd}d-padded", lambda m, pool=pool, xs=xs: pool(m, x4(m, *xs), 3, 2, 1))
        if kind == "max":
            case(f"max_pool{nd}d-dilation0", lambda m, pool=pool, xs=xs: pool(m, x4(m, *xs), 2, 1, 0, 0))
case("max_pool1d-int64", lambda m: F(m).max_pool1d(x4(m, 2, 3, 6).long(), 2))
case("max_pool2d-int64", lambda m: F(m).max_pool2d(x4(m, 2, 3, 6, 6).long(), 2))
case("avg_pool2d-5d", lambda m: F(m).avg_pool2d(x4(m, 1, 2, 3, 4, 5), 2))
case("avg_pool2d-empty-spatial", lambda m: F(m).avg_pool2d(x4(m, 1, 2, 0, 5), 2))

# ---- interpolate, pixel (un)shuffle, pad, clamping activations --------------------------------------------------
for mode in ("nearest", "nearest-exact", "bilinear", "bicubic", "area"):
    for size in (0, -1, (0, 3), (3, 0), 3):
        case(f"interpolate-{mode}-size={size}", lambda m, mode=mode, size=size: F(m).interpolate(
            x4(m, 1, 2, 4, 4), size=size, mode=mode))
    for sf in (0, -1, 0.1, (0.5, 0), NAN, INF, 1.5):
        case(f"interpolate-{mode}-scale_factor={sf}", lambda m, mode=mode, sf=sf: F(m).interpolate(
            x4(m, 1, 2, 4, 4), scale_factor=sf, mode=mode))
    case(f"interpolate-{mode}-int64", lambda m, mode=mode: F(m).interpolate(x4(m, 1, 2, 4, 4).long(), size=3,
                                                                           mode=mode))
case("interpolate-linear-size=0", lambda m: F(m).interpolate(x4(m, 1, 2, 4), size=0, mode="linear"))
case("interpolate-trilinear-size=0", lambda m: F(m).interpolate(x4(m, 1, 2, 3, 4, 4), size=(2, 0, 2),
                                                                mode="trilinear"))
case("interpolate-empty-batch", lambda m: F(m).interpolate(x4(m, 0, 2, 4, 4), size=3))
case("interpolate-empty-spatial", lambda m: F(m).interpolate(x4(m, 1, 2, 0, 4), size=3))
for r in (0, -1, 2, 3, 2.0, True):
    case(f"pixel_shuffle-{r!r}", lambda m, r=r: F(m).pixel_shuffle(x4(m, 1, 8, 2, 2), r))
    case(f"pixel_unshuffle-{r!r}", lambda m, r=r: F(m).pixel_unshuffle(x4(m, 1, 2, 4, 4), r))
case("pixel_shuffle-2d", lambda m: F(m).pixel_shuffle(x4(m, 4, 2), 2))
case("pixel_unshuffle-2d", lambda m: F(m).pixel_unshuffle(x4(m, 4, 4), 2))
case("pixel_shuffle-empty", lambda m: F(m).pixel_shuffle(x4(m, 0, 4, 2, 2), 2))
case("pixel_shuffle-batched", lambda m: F(m).pixel_shuffle(x4(m, 2, 3, 8, 2, 2), 2))
case("pixel_unshuffle-odd-width", lambda m: F(m).pixel_unshuffle(x4(m, 1, 2, 4, 5), 2))
for mode in ("constant", "reflect", "replicate", "circular"):
    for shape, pads in (((2, 3, 4), (-1, -1)), ((2, 3, 4), (-1, 2)), ((2, 3, 4), (3, -3)), ((2, 3, 4), (-3, 3)),
                        ((2, 3, 4), (-2, -2)), ((2, 3, 4), (-2, -3)), ((2, 3, 4), (-5, 1)),
                        ((1, 2, 3, 4), (1, -2, 0, -1)), ((1, 2, 3, 4), (-1, -1, -1, -1)), ((1, 2, 3, 4), (2, 1, -1, 1)),
                        ((1, 2, 3, 4, 5), (-1, 0, 1, -1, -1, 1)), ((1, 2, 3, 4), (-1, -1)), ((4,), (-1, 1)),
                        ((2, 3, 4), (1, 1, 1, 1, 1, 1)), ((1, 2, 3, 4), (1,))):
        if mode == "circular" and pads == (3, -3):
            continue  # PyTorch returns uninitialized memory there
        case(f"pad-{mode}-{shape}-{pads}", lambda m, mode=mode, shape=shape, pads=pads: F(m).pad(
            x4(m, *shape), pads, mode=mode))
for fn, args in (("relu6", ()), ("hardtanh", ()), ("hardtanh", (-2, 2)), ("hardtanh", (-2.5, 2.5)),
                 ("hardtanh", (0.5, 2.7)), ("threshold", (1, 5)), ("threshold", (1.5, 5.5)),
                 ("threshold", (1.9, -2.7)), ("hardtanh", (2.0, 1.0))):
    for dt in ("int64", "int32", "uint8", "float16", "bool"):
        case(f"{fn}{args}-{dt}", lambda m, fn=fn, args=args, dt=dt: getattr(F(m), fn)(
            (m.arange(10) % 7).reshape(2, 5).to(getattr(m, dt)), *args))

# ---- empty batches through losses and the rest -----------------------------------------------------------------
for red in ("mean", "sum", "none"):
    for loss in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits",
                 "soft_margin_loss", "kl_div", "poisson_nll_loss", "binary_cross_entropy", "hinge_embedding_loss",
                 "multilabel_soft_margin_loss"):
        case(f"{loss}-empty-{red}", lambda m, loss=loss, red=red: getattr(F(m), loss)(
            probs(m, 0, 3), probs(m, 0, 3), reduction=red))
    case(f"nll_loss-empty-{red}", lambda m, red=red: F(m).nll_loss(x4(m, 0, 3), m.ones(0, dtype=m.int64),
                                                                   reduction=red))
    case(f"cross_entropy-probs-empty-{red}", lambda m, red=red: F(m).cross_entropy(x4(m, 0, 3), probs(m, 0, 3),
                                                                                   reduction=red))
    case(f"cross_entropy-smoothing-empty-{red}", lambda m, red=red: F(m).cross_entropy(
        x4(m, 0, 3), m.ones(0, dtype=m.int64), reduction=red, label_smoothing=0.1))
    case(f"margin_ranking_loss-empty-{red}", lambda m, red=red: F(m).margin_ranking_loss(
        x4(m, 0), x4(m, 0), x4(m, 0), reduction=red))
    case(f"triplet_margin_loss-empty-{red}", lambda m, red=red: F(m).triplet_margin_loss(
        x4(m, 0, 3), x4(m, 0, 3), x4(m, 0, 3), reduction=red))
    case(f"gaussian_nll_loss-empty-{red}", lambda m, red=red: F(m).gaussian_nll_loss(
        x4(m, 0, 3), x4(m, 0, 3), probs(m, 0, 3), reduction=red))
case("kl_div-empty-batchmean", lambda m: F(m).kl_div(probs(m, 0, 3), probs(m, 0, 3), reduction="batchmean"))
case("ctc_loss-empty", lambda m: F(m).ctc_loss(x4(m, 5, 0, 4).log_softmax(2), m.ones(0, 3, dtype=m.int64),
                                               m.ones(0, dtype=m.int64), m.ones(0, dtype=m.int64)))
case("channel_shuffle-groups=0", lambda m: F(m).channel_shuffle(x4(m, 1, 4, 2, 2), 0))
case("channel_shuffle-empty", lambda m: F(m).channel_shuffle(x4(m, 0, 4, 2, 2), 2))
case("max_pool2d-indices-empty-batch", lambda m: F(m).max_pool2d(x4(m, 0, 2, 4, 4), 2, return_indices=True))
case("embedding-empty", lambda m: F(m).embedding(m.ones(0, dtype=m.int64), x4(m, 4, 3)))
case("layer_norm-empty", lambda m: F(m).layer_norm(x4(m, 0, 3), (3,)))
case("normalize-empty", lambda m: F(m).normalize(x4(m, 0, 3)))
case("cosine_similarity-empty", lambda m: F(m).cosine_similarity(x4(m, 0, 3), x4(m, 0, 3)))


# ---- argument types (PyTorch's parser), kernel dtype families, complex operands of real losses --------------------
for v in ("yes", None, 1, 1.0):
    case(f"dropout-train-{v!r}", lambda m, v=v: F(m).dropout(x4(m, 3, 4), 0.3, v))
    case(f"batch_norm-training-{v!r}", lambda m, v=v: F(m).batch_norm(x4(m, 2, 3, 4), m.zeros(3), m.ones(3),
                                                                       training=v))
for v in (1.5, "a", True, 2.0):
    case(f"embedding-padding_idx-{v!r}", lambda m, v=v: F(m).embedding(m.tensor([1, 2]), x4(m, 5, 4),
                                                                       padding_idx=v))
    case(f"nll_loss-ignore_index-{v!r}", lambda m, v=v: F(m).nll_loss(x4(m, 3, 5), m.tensor([1, 2, 0]),
                                                                       ignore_index=v))
    case(f"cross_entropy-ignore_index-{v!r}", lambda m, v=v: F(m).cross_entropy(x4(m, 3, 5), m.tensor([1, 2, 0]),
                                                                                 ignore_index=v))
for v in (NAN, 3.0, True):
    case(f"one_hot-num_classes-{v!r}", lambda m, v=v: F(m).one_hot(m.tensor([1, 2]), v))
for shape in ((NAN,), (4.0,), (2.0, 4)):
    case(f"layer_norm-shape-{shape}", lambda m, shape=shape: F(m).layer_norm(x4(m, 2, 3, 4), shape))
for eps in (0.0, -1.0, 1e-5):
    for training in (True, False):
        case(f"batch_norm-eps-{eps}-{training}", lambda m, eps=eps, training=training: F(m).batch_norm(
            x4(m, 2, 3, 4), m.zeros(3), m.ones(3), training=training, eps=eps))
for dt in ("bool", "int64", "uint8", "complex64", "float64"):
    for fname in ("elu", "leaky_relu", "softplus", "celu", "selu", "silu", "mish"):
        case(f"{fname}-{dt}", lambda m, fname=fname, dt=dt: getattr(F(m), fname)(x4(m, 3, 4).to(getattr(m, dt))))
    for mode in ("reflect", "replicate", "circular"):
        case(f"pad-{mode}-{dt}", lambda m, mode=mode, dt=dt: F(m).pad(x4(m, 2, 3, 5).to(getattr(m, dt)), (1, 1),
                                                                     mode=mode))
        case(f"pad2d-{mode}-{dt}", lambda m, mode=mode, dt=dt: F(m).pad(x4(m, 2, 3, 5).to(getattr(m, dt)),
                                                                       (1, 1, 1, 1), mode=mode))
    for p in (0.0, 0.3, 1.0):
        case(f"dropout-{dt}-{p}", lambda m, dt=dt, p=p: F(m).dropout(x4(m, 3, 4).to(getattr(m, dt)), p) * 0, seed=0)
        case(f"dropout2d-{dt}-{p}", lambda m, dt=dt, p=p: F(m).dropout2d(x4(m).to(getattr(m, dt)), p) * 0, seed=0)
for dt in ("complex64", "float64", "float16", "int64"):
    case(f"huber-target-{dt}", lambda m, dt=dt: F(m).huber_loss(x4(m, 3, 4), x4(m, 3, 4).to(getattr(m, dt))))
    case(f"huber-input-{dt}", lambda m, dt=dt: F(m).huber_loss(x4(m, 3, 4).to(getattr(m, dt)), x4(m, 3, 4)))
    for kw in ("weight", "pos_weight"):
        case(f"bce_logits-{kw}-{dt}", lambda m, dt=dt, kw=kw: F(m).binary_cross_entropy_with_logits(
            x4(m, 3, 4), probs(m, 3, 4), **{kw: m.ones(4, dtype=getattr(m, dt))}))

for xd in ("float32", "float64", "float16", "bfloat16"):
    for wd in ("float32", "float64", "float16", None):
        for bd in ("float32", "bfloat16", None):
            case(f"layer_norm-dtypes-{xd}-{wd}-{bd}", lambda m, xd=xd, wd=wd, bd=bd: F(m).layer_norm(
                x4(m, 2, 4).to(getattr(m, xd)), (4,), None if wd is None else m.ones(4, dtype=getattr(m, wd)),
                None if bd is None else m.ones(4, dtype=getattr(m, bd))))
for dt in ("float16", "bool", "uint8", "float64", "int64"):
    case(f"PReLU-{dt}", lambda m, dt=dt: m.nn.PReLU()(x4(m, 3, 4).to(getattr(m, dt))))
    case(f"prelu-same-{dt}", lambda m, dt=dt: F(m).prelu(x4(m, 3, 4).to(getattr(m, dt)),
                                                         m.ones(1, dtype=getattr(m, dt))))
case("PReLU-float", lambda m: m.nn.PReLU()(1.5))
case("prelu-float-weight", lambda m: F(m).prelu(x4(m, 3, 4), 0.25))
for r in (2 ** 31, 2 ** 32, 2 ** 40, 2 ** 62):
    case(f"pixel_shuffle-huge-{r}", lambda m, r=r: F(m).pixel_shuffle(x4(m, 1, 8, 3, 3), r))

for tgt in ([1, 7, 0], [1, -3, 0], [-100, 9, -2], [5, 5, 5]):
    case(f"nll_loss-target-{tgt}", lambda m, tgt=tgt: F(m).nll_loss(x4(m, 3, 5), m.tensor(tgt)))
    case(f"nll_loss-target-ignored-{tgt}", lambda m, tgt=tgt: F(m).nll_loss(x4(m, 3, 5), m.tensor(tgt),
                                                                           ignore_index=tgt[1]))
    case(f"cross_entropy-0-classes-{tgt}", lambda m, tgt=tgt: F(m).cross_entropy(x4(m, 3, 0), m.tensor(tgt),
                                                                                label_smoothing=0.1))
case("nll_loss-2d-target-out", lambda m: F(m).nll_loss(x4(m, 3, 5, 2), m.tensor([[1, 7], [0, 0], [1, 1]])))
case("nll_loss-0d-input", lambda m: F(m).nll_loss(m.tensor(0.5), m.tensor([1, 2, 0])))
for tgt in ([1, 2, 0], [1], 1):
    case(f"nll_loss-1d-input-{tgt}", lambda m, tgt=tgt: F(m).nll_loss(x4(m, 4), m.tensor(tgt)))
for dt in ("bool", "int64", "complex64", "float64"):
    case(f"nll_loss-{dt}", lambda m, dt=dt: F(m).nll_loss(x4(m, 3, 5).to(getattr(m, dt)), m.tensor([1, 2, 0])))

for d1, d2 in (("int64", "float32"), ("float32", "uint8"), ("bool", "float32"), ("int64", "int64"),
               ("bfloat16", "bfloat16"), ("float16", "float16"), ("float16", "float32"), ("complex64", "complex64")):
    case(f"cosine_similarity-{d1}-{d2}", lambda m, d1=d1, d2=d2: F(m).cosine_similarity(
        (m.arange(24, dtype=m.float32).reshape(4, 6) % 5 - 2).to(getattr(m, d1)),
        (m.arange(24, dtype=m.float32).reshape(4, 6) % 7 - 3).to(getattr(m, d2)), dim=1))
case("cosine_similarity-bfloat16-long", lambda m: F(m).cosine_similarity(x4(m, 3, 40, dtype=m.bfloat16),
                                                                         probs(m, 3, 40, dtype=m.bfloat16), dim=1))
case("cosine_similarity-extra-dim", lambda m: F(m).cosine_similarity(x4(m, 2, 3, 4), x4(m, 3, 4), dim=1))
case("cosine_similarity-0d", lambda m: F(m).cosine_similarity(x4(m, 3, 4), m.tensor(0.5), dim=1))
case("cosine_similarity-both-0d", lambda m: F(m).cosine_similarity(m.tensor(0.5), m.tensor(2.0), dim=0))
case("cosine_similarity-zero-row", lambda m: F(m).cosine_similarity(x4(m, 3, 4) * 0, x4(m, 3, 4), dim=1))

for st in (2 ** 62, 2 ** 40, (1, 2 ** 62), 6):
    case(f"conv2d-huge-stride-{st}", lambda m, st=st: F(m).conv2d(x4(m, 1, 3, 5, 5), x4(m, 4, 3, 3, 3), stride=st))
    case(f"unfold-huge-stride-{st}", lambda m, st=st: F(m).unfold(x4(m, 1, 3, 5, 5), 2, stride=st))
    case(f"fold-huge-stride-{st}", lambda m, st=st: F(m).fold(x4(m, 1, 12, 1), (5, 5), 2, stride=st))
case("conv1d-huge-stride", lambda m: F(m).conv1d(x4(m, 1, 3, 5), x4(m, 4, 3, 3), stride=2 ** 40))

for ac in (False, True):
    for kw in (dict(scale_factor=1.5), dict(scale_factor=0.6), dict(size=(7, 30)), dict(size=(17, 5)),
               dict(scale_factor=(1.0, 2.5)), dict(size=(2, 1))):
        case(f"interpolate-bilinear-uint8-{ac}-{kw}", lambda m, ac=ac, kw=kw: F(m).interpolate(
            (m.arange(2 * 3 * 17 * 13) * 37 % 256).to(m.uint8).reshape(2, 3, 17, 13), mode="bilinear",
            align_corners=ac, **kw))


def _outcome(lib, fn, seed):
    if seed is not None:
        lib.manual_seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return "raised", e


def _flat(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _check_values(ours, ref, tol):
    assert len(_flat(ours)) == len(_flat(ref)), (ours, ref)
    for a, b in zip(_flat(ours), _flat(ref)):
        if not isinstance(b, torch.Tensor):
            assert not isinstance(a, tt.Tensor) and type(a) is type(b), (a, b)
            continue
        assert isinstance(a, tt.Tensor), a
        assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
        assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
        x = np.asarray(a.detach().float().tolist() if a.dtype.is_floating_point else a.detach().tolist())
        y = np.asarray(b.detach().float().tolist() if b.is_floating_point() else b.detach().tolist())
        rtol, atol = tol or TOL.get(str(b.dtype).split(".")[-1], (0, 0))
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("fn,seed,tol", CASES)
def test_nn_bad_input_matches_torch(fn, seed, tol):
    kind_ref, ref = _outcome(torch, fn, seed)
    kind, ours = _outcome(tt, fn, seed)
    if kind_ref == "raised":
        assert kind == "raised", f"torch raises {type(ref).__name__}: {ref}; tinytorch returned {ours!r}"
        assert isinstance(ours, type(ref)), f"torch: {type(ref).__name__}: {ref}\ntinytorch: " + "".join(
            traceback.format_exception(ours))
        # a deliberate check, not an error from inside NumPy
        origin = traceback.extract_tb(ours.__traceback__)[-1].filename
        assert f"{os.sep}numpy{os.sep}" not in origin, "".join(traceback.format_exception(ours))
        return
    if kind == "raised":
        raise AssertionError(f"torch returns, tinytorch raises:\n" + "".join(traceback.format_exception(ours)))
    _check_values(ours, ref, tol)


@pytest.mark.parametrize("kw", [dict(running_mean=4), dict(running_var=4), dict(weight=4), dict(bias=1)])
def test_batch_norm_bad_sizes_leave_running_stats_untouched(kw):
    """A size error is raised before anything is written: the running statistics keep their values (as torch's)."""
    for lib in (torch, tt):
        rm, rv = lib.zeros(3), lib.ones(3)
        args = dict(running_mean=rm, running_var=rv, weight=None, bias=None)
        for k, n in kw.items():
            args[k] = lib.ones(n)
        with pytest.raises(RuntimeError, match="should contain"):
            lib.nn.functional.batch_norm(x4(lib, 2, 3, 4), training=True, **args)
        if "running_mean" not in kw and "running_var" not in kw:
            assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3
