"""Differential cases for the nn / nn.functional differences the generated fuzzer (tests/fuzz.py) found (issue 32):
int arguments past int64 / int32 in pooling and convolutions, argument checks of pooling, attention, losses and
normalizations, and activations / pools on inf and NaN. Each case is a call written once against the library
module ``m``, run in tinytorch and PyTorch: the same exception type and message (the first line; PyTorch appends
a C++ trace to some parser messages), or the same shape, dtype and values."""
import math
import traceback

import numpy as np
import pytest

import tinytorch as tt
from conftest import TOL, torch

CASES = []


def case(name, src):
    CASES.append(pytest.param(src, id=name))


def x4(m, *shape, dtype=None):
    """Deterministic float values of ``shape`` (default (1, 2, 6, 6)), the same in both libraries."""
    shape = shape or (1, 2, 6, 6)
    n = int(np.prod(shape))
    t = (m.arange(n, dtype=m.float32) % 7 / 3 - 1).reshape(shape)
    return t.to(dtype) if dtype is not None else t


BIG, HUGE = 2 ** 40, 2 ** 63  # past int32 (ATen's 2-D / 3-D pooling kernels) / past int64 (the argument parser)

# ---- int arguments out of range: bare ints (ValueError), list elements (TypeError), int32 narrowing -----------
for fn, inp in (("max_pool2d", "x4(m)"), ("avg_pool2d", "x4(m)"), ("max_pool3d", "x4(m, 1, 2, 4, 6, 6)"),
                ("avg_pool3d", "x4(m, 1, 2, 4, 6, 6)"), ("avg_pool1d", "x4(m, 2, 6)"), ("max_pool1d", "x4(m, 2, 6)"),
                ("lp_pool1d", "x4(m, 2, 6)")):
    pre = "2, " if fn.startswith("lp") else ""
    for st in (BIG, HUGE, [1, HUGE] if fn[-2] != "1" else [HUGE], 2 ** 31, 2 ** 31 - 1):
        case(f"{fn}-stride-{st}", f"m.nn.functional.{fn}({inp}, {pre}2, stride={st!r})")
    if fn[-2] != "1" and not fn.startswith("lp"):
        case(f"{fn}-padding-{BIG}", f"m.nn.functional.{fn}({inp}, 2, padding={BIG})")
        case(f"{fn}-kernel-empty", f"m.nn.functional.{fn}({inp}, ())")
        case(f"{fn}-kernel-long", f"m.nn.functional.{fn}({inp}, (2, 2, 2, 2))")
        case(f"{fn}-kernel-short", f"m.nn.functional.{fn}({inp}, (2,))")
for mod, inp in (("AvgPool1d(2, stride={})", "x4(m, 2, 6)"), ("MaxPool1d(2, stride={})", "x4(m, 2, 6)"),
                 ("AvgPool2d(2, stride={})", "x4(m)"), ("LPPool2d(2, 2, stride={})", "x4(m)"),
                 ("Conv1d(2, 2, 2, stride={})", "x4(m, 2, 6)"), ("Conv2d(2, 2, 2, stride={})", "x4(m)"),
                 ("Unfold(2, stride={})", "x4(m)")):
    for st in (BIG, HUGE):
        case(f"{mod.split('(')[0]}-stride-{st}", f"m.nn.{mod.format(st)}({inp})")
case("conv1d-stride-huge", f"m.nn.functional.conv1d(x4(m, 2, 6), m.ones(2, 2, 2), stride={HUGE})")
case("unfold-stride-huge", f"m.nn.functional.unfold(x4(m), 2, stride={HUGE})")
case("unfold-zero-kernel-2d-input", "m.nn.functional.unfold(x4(m, 6, 6), 0)")
for d in (HUGE, -HUGE - 1, 1.5, True, 0, -2, 3):
    case(f"avg_pool2d-divisor-{d}", f"m.nn.functional.avg_pool2d(x4(m), 2, divisor_override={d!r})")
    case(f"avg_pool3d-divisor-{d}", f"m.nn.functional.avg_pool3d(x4(m, 1, 2, 4, 6, 6), 2, divisor_override={d!r})")
for dt in ("long", "int", "half", "bfloat16", "double"):
    case(f"avg_pool3d-{dt}", f"m.nn.functional.avg_pool3d((x4(m, 1, 2, 4, 6, 6) * 9).{dt}(), 2)")
    case(f"lp_pool3d-{dt}", f"m.nn.functional.lp_pool3d(x4(m, 1, 2, 4, 6, 6).{dt}(), 2, 2)")

# ---- empty inputs to max pools ---------------------------------------------------------------------------------
for shape in ((0, 4, 4), (2, 0, 4, 4), (0, 2, 4, 4), (2, 3, 0, 4)):
    case(f"max_pool2d-empty-{shape}", f"m.nn.functional.max_pool2d(m.zeros{shape}, 2)")
for shape in ((0, 4), (3, 0, 4), (0, 3, 4)):
    case(f"max_pool1d-empty-{shape}", f"m.nn.functional.max_pool1d(m.zeros{shape}, 2)")
for shape in ((0, 3, 4, 4), (2, 0, 3, 4, 4), (0, 2, 3, 4, 4), (2, 2, 3, 0, 4)):
    case(f"max_pool3d-empty-{shape}", f"m.nn.functional.max_pool3d(m.zeros{shape}, 2)")

# ---- fractional max pooling and max unpooling: list lengths, empty windows and outputs ----------------------------
U = "_random_samples=m.full((1, 2, 2), 0.5)"
for k, o in (("(0, 2)", "2"), ("(2, 0)", "2"), ("2", "(0, 2)"), ("2", "(2, 0)"), ("()", "2"), ("(2,)", "2"),
             ("(2, 2, 2)", "2"), ("2", "()"), ("2", "[2]"), ("2", "[2, 2, 2]")):
    for ret in (False, True):
        case(f"fractional_max_pool2d-{k}-{o}-{ret}",
             f"m.nn.functional.fractional_max_pool2d(x4(m), {k}, output_size={o}, {U}, return_indices={ret})")
case("fractional_max_pool3d-kernel-short",
     "m.nn.functional.fractional_max_pool3d(x4(m, 1, 2, 6, 6, 6), [2, 2], output_size=2)")
case("fractional_max_pool3d-output-short",
     "m.nn.functional.fractional_max_pool3d(x4(m, 1, 2, 6, 6, 6), 2, output_size=[2, 2])")
for n, inp in ((1, "x4(m, 2, 6)"), (2, "x4(m)"), (3, "x4(m, 1, 2, 2, 6, 6)")):
    for k in ("()", "(2,)", "(2, 2)", "(2, 2, 2)", "(2, 2, 2, 2)"):
        case(f"max_unpool{n}d-kernel-{k}",
             f"m.nn.functional.max_unpool{n}d({inp}, m.zeros_like({inp}).long(), {k})")

# ---- attention, losses, normalizations: argument checks ------------------------------------------------------------
Q = "m.ones(2, 4)"
for dt in ("long", "int", "short", "char", "byte", "bool", "double", "half"):
    case(f"sdpa-query-{dt}", f"m.nn.functional.scaled_dot_product_attention({Q}.{dt}(), {Q}, {Q})")
    case(f"sdpa-mask-{dt}", f"m.nn.functional.scaled_dot_product_attention({Q}, {Q}, {Q}, m.ones(2, 2).{dt}())")
    case(f"sdpa-double-mask-{dt}", "m.nn.functional.scaled_dot_product_attention("
         f"{Q}.double(), {Q}.double(), {Q}.double(), m.ones(2, 2).{dt}())")
for q, k, v in (("m.ones(4)", Q, Q), (Q, "m.ones(4)", Q), (Q, Q, "m.ones(4)"), ("m.ones(())", Q, Q)):
    case(f"sdpa-rank-{q}-{k}-{v}", f"m.nn.functional.scaled_dot_product_attention({q}, {k}, {v})")
for kw in ("is_causal='yes'", "is_causal=2", "is_causal=None", "dropout_p=None", "scale='a'", "enable_gqa=1"):
    case(f"sdpa-{kw}", f"m.nn.functional.scaled_dot_product_attention({Q}, {Q}, {Q}, {kw})")
for ii in (2, 0, -1, -100, BIG, HUGE, -HUGE - 1):
    case(f"cross_entropy-probs-ignore-{ii}", f"m.nn.functional.cross_entropy(x4(m, 2, 3), x4(m, 2, 3).softmax(1), "
         f"ignore_index={ii})")
    case(f"CrossEntropyLoss-ignore-{ii}", f"m.nn.CrossEntropyLoss(ignore_index={ii})(x4(m, 2, 3), m.tensor([0, 2]))")
for kw in ("weight=1.5", "pos_weight=1.5", "weight=None, pos_weight=[1.0]"):
    case(f"bce_with_logits-{kw}", f"m.nn.functional.binary_cross_entropy_with_logits(x4(m, 2, 3), x4(m, 2, 3), {kw})")
case("soft_margin_loss-uint8-target", "m.nn.functional.soft_margin_loss(x4(m, 2, 3), (x4(m, 2, 3) * 3).to(m.uint8))")
case("soft_margin_loss-huge", "m.nn.functional.soft_margin_loss(m.tensor([1e38, 1.0]), m.tensor([-1.0, 1.0]))")
case("soft_margin_loss-huge-none",
     "m.nn.functional.soft_margin_loss(m.tensor([-1e38, 1.0]), m.tensor([1.0, 1.0]), reduction='none')")
for eps in ("'a'", "None"):
    case(f"layer_norm-eps-{eps}", f"m.nn.functional.layer_norm(x4(m, 2, 3), [3], eps={eps})")
    case(f"torch.layer_norm-eps-{eps}", f"m.layer_norm(x4(m, 2, 3), [3], eps={eps})")
    case(f"LayerNorm-eps-{eps}", f"m.nn.LayerNorm(3, eps={eps})(x4(m, 2, 3))")
    case(f"instance_norm-momentum-{eps}", f"m.nn.functional.instance_norm(x4(m, 2, 3, 4), momentum={eps})")
    case(f"InstanceNorm1d-momentum-{eps}", f"m.nn.InstanceNorm1d(3, momentum={eps})(x4(m, 2, 3, 4))")
for g in (0, -1, 2):
    case(f"torch.group_norm-{g}", f"m.group_norm(x4(m, 2, 4, 3), {g})")
    case(f"group_norm-{g}", f"m.nn.functional.group_norm(x4(m, 2, 4, 3), {g})")
for osz in ("None", "(None, 2)", "[None]"):
    for fn, inp in (("adaptive_avg_pool1d", "x4(m, 2, 6)"), ("adaptive_max_pool1d", "x4(m, 2, 6)"),
                    ("adaptive_avg_pool2d", "x4(m)"), ("adaptive_max_pool2d", "x4(m)"),
                    ("adaptive_avg_pool3d", "x4(m, 1, 2, 3, 6, 6)"), ("adaptive_max_pool3d", "x4(m, 1, 2, 3, 6, 6)")):
        case(f"{fn}-{osz}", f"m.nn.functional.{fn}({inp}, {osz})")
case("AdaptiveAvgPool2d-None", "m.nn.AdaptiveAvgPool2d(None)(x4(m))")
case("AdaptiveMaxPool1d-None", "m.nn.AdaptiveMaxPool1d(None)(x4(m, 2, 6))")
case("PReLU-init-None", "m.nn.PReLU(init=None)(x4(m, 2, 3))")
case("fill_-None", "m.zeros(2).fill_(None)")
case("fill_-str", "m.zeros(2).fill_('a')")
case("gumbel_softmax-dim-None", "m.nn.functional.gumbel_softmax(x4(m, 2, 3), dim=None)")

# ---- values at inf / NaN / empty, as ATen's kernels compute them -----------------------------------------------------
SPECIAL = "m.tensor([[1e38, -1e38, 1.0, -4.0], [float('nan'), 0.2, -0.2, 3.5]])"
case("hardswish-huge", f"m.nn.functional.hardswish({SPECIAL})")
case("Hardswish-huge", f"m.nn.Hardswish()({SPECIAL})")
for th in ("float('nan')", "float('inf')", "-1.0"):
    case(f"softplus-threshold-{th}", f"m.nn.functional.softplus({SPECIAL}, threshold={th})")
for lam in ("0.5", "float('nan')", "0.0"):
    case(f"hardshrink-{lam}", f"m.nn.functional.hardshrink({SPECIAL}, {lam})")
    case(f"Hardshrink-{lam}", f"m.nn.Hardshrink({lam})({SPECIAL})")
case("softshrink-nan", f"m.nn.functional.softshrink({SPECIAL})")
case("cosine_similarity-huge", f"m.nn.functional.cosine_similarity({SPECIAL}[:, :2].nan_to_num(), m.ones(2, 2))")
case("cosine_similarity-huge-dim0", "m.nn.functional.cosine_similarity(m.tensor([[1e38, 1.0], [2.0, 3.0]]), "
     "m.ones(2, 2), dim=0)")
case("cosine_similarity-tiny", "m.nn.functional.cosine_similarity(m.zeros(2, 3), m.ones(2, 3))")
for p in ("float('inf')", "float('-inf')"):
    case(f"lp_pool1d-{p}", f"m.nn.functional.lp_pool1d(x4(m, 2, 6), {p}, 2)")
    case(f"lp_pool2d-{p}", f"m.nn.functional.lp_pool2d(x4(m), {p}, 2)")
    case(f"lp_pool3d-{p}", f"m.nn.functional.lp_pool3d(x4(m, 1, 2, 4, 6, 6), {p}, 2)")
    case(f"LPPool2d-{p}-stride", f"m.nn.LPPool2d({p}, 2, stride=1)(x4(m))")
for shape in ((0, 4, 4), (2, 4, 0), (0, 2, 4, 4), (1, 0, 4, 4)):
    case(f"pixel_unshuffle-{shape}", f"m.nn.functional.pixel_unshuffle(m.zeros{shape}, 2)")
    case(f"torch.pixel_unshuffle-{shape}", f"m.pixel_unshuffle(m.zeros{shape}, 2)")
    case(f"pixel_shuffle-{shape}", f"m.nn.functional.pixel_shuffle(m.zeros{shape}, 2)")
case("pixel_unshuffle-empty-indivisible", "m.nn.functional.pixel_unshuffle(m.zeros(0, 4, 3), 2)")

# ---- padding sizes that wrap int64; transposed convolutions of empty inputs / weights ---------------------------
for p in (2 ** 62, BIG + 1):
    case(f"ReplicationPad1d-{p}", f"m.nn.ReplicationPad1d({p if p != BIG + 1 else -BIG})(x4(m, 2, 6))")
    case(f"ReplicationPad2d-{p}", f"m.nn.ReplicationPad2d({p if p != BIG + 1 else -BIG})(x4(m))")
    case(f"ReplicationPad3d-{p}", f"m.nn.ReplicationPad3d({p if p != BIG + 1 else -BIG})(x4(m, 1, 2, 3, 6, 6))")
case("ReplicationPad2d-one-dim-negative", "m.nn.ReplicationPad2d((1, 1, -9, 0))(x4(m))")
case("conv_transpose1d-empty-length", "m.nn.functional.conv_transpose1d(m.ones(1, 3, 0), m.ones(3, 2, 2))")
case("conv_transpose2d-empty-width", "m.nn.functional.conv_transpose2d(m.ones(2, 3, 4, 0), m.ones(3, 2, 2, 2))")
case("conv_transpose2d-empty-batch", "m.nn.functional.conv_transpose2d(m.ones(0, 3, 4, 4), m.ones(3, 2, 2, 2))")
case("conv_transpose1d-no-out-channels", "m.nn.functional.conv_transpose1d(m.ones(1, 3, 4), m.ones(3, 0, 2))")
case("conv_transpose2d-no-out-channels", "m.nn.functional.conv_transpose2d(m.ones(1, 3, 4, 4), m.ones(3, 0, 2, 2))")


def _outcome(lib, src):
    lib.manual_seed(0)
    try:
        return "ok", eval(f"lambda m: {src}", {"x4": x4, "math": math})(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return "raised", e


def _first_line(e):
    # PyTorch quotes the parser's inner error together with a C++ trace: compare the text before the trace
    return str(e).split("\nException raised from")[0].split("\n")[0].rstrip('"')


@pytest.mark.parametrize("src", CASES)
def test_fuzz_fix_matches_torch(src):
    kind_ref, ref = _outcome(torch, src)
    kind, ours = _outcome(tt, src)
    if kind_ref == "raised":
        assert kind == "raised", f"torch raises {type(ref).__name__}: {ref}; tinytorch returned {ours!r}"
        assert type(ours).__name__ == type(ref).__name__, (
            f"torch: {type(ref).__name__}: {ref}\ntinytorch: " + "".join(traceback.format_exception(ours)))
        assert _first_line(ours) == _first_line(ref), (_first_line(ours), _first_line(ref))
        return
    assert kind == "ok", "torch returns, tinytorch raises:\n" + "".join(traceback.format_exception(ours))
    outs, refs = (list(r) if isinstance(r, (tuple, list)) else [r] for r in (ours, ref))
    assert len(outs) == len(refs)
    for a, b in zip(outs, refs):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype), (a.shape, b.shape, a.dtype, b.dtype)
        x = np.asarray(a.detach().double().tolist())
        y = np.asarray(b.detach().double().tolist())
        rtol, atol = TOL.get(str(b.dtype).split(".")[-1], (1e-6, 1e-6))
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True)


def test_uninitialized_parameter_shape_raises():
    """A lazy module's placeholder has no shape until its first forward (PyTorch's RuntimeError), then has one."""
    for lib in (torch, tt):
        mod = lib.nn.LazyLinear(3)
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
            mod.weight.shape
        mod(lib.ones(2, 4))
        assert tuple(mod.weight.shape) == (3, 4)


def test_gumbel_softmax_bad_dim_leaves_rng_untouched():
    """gumbel_softmax checks ``dim`` before it draws its noise, so a refused call leaves the generator as it was."""
    tt.manual_seed(1)
    before = tt.rand(3).tolist()
    tt.manual_seed(1)
    with pytest.raises(TypeError):
        tt.nn.functional.gumbel_softmax(tt.ones(2, 3), dim=None)
    assert tt.rand(3).tolist() == before


# ---- float16 / bfloat16 accumulations as ATen's (float32 inside, one rounding), complex targets ---------------------
for dt in ("half", "bfloat16"):
    case(f"log_softmax-{dt}", f"m.nn.functional.log_softmax(x4(m, 3, 5).{dt}() * 3, 1)")
    case(f"cross_entropy-{dt}", f"m.nn.functional.cross_entropy(x4(m, 3, 5).{dt}() * 3, m.tensor([0, 2, 1]))")
    case(f"logsigmoid-{dt}", f"m.nn.functional.logsigmoid(x4(m, 3, 5).{dt}() * 3)")
    case(f"multilabel_soft_margin_loss-{dt}", f"m.nn.functional.multilabel_soft_margin_loss(x4(m, 3, 5).{dt}() * 3, "
         f"(x4(m, 3, 5) > 0).{dt}())")
for dt in ("cfloat", "cdouble"):
    case(f"soft_margin_loss-{dt}-target", f"m.nn.functional.soft_margin_loss(x4(m, 2, 3), x4(m, 2, 3).{dt}())")
