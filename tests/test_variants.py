"""Aliases, in-place variants and the torch.* spellings of nn.functional ops, each against PyTorch."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch
from tinytorch import _variants as variants


def _data(shape, low, high, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


# name -> (extra args as a function of the library, input range)
_ARGS = {
    "acosh": ((), (1.1, 3)), "arccosh": ((), (1.1, 3)), "atanh": ((), (-0.9, 0.9)), "arctanh": ((), (-0.9, 0.9)),
    "arccos": ((), (-0.9, 0.9)), "arcsin": ((), (-0.9, 0.9)), "logit": ((), (0.1, 0.9)),
    "copysign": (lambda m: (m.tensor([-1.0, 2.0, -3.0, 4.0]),), (-2, 2)),
    "cumprod": ((1,), (-2, 2)), "divide": ((2.5,), (-2, 2)), "true_divide": ((2.5,), (-2, 2)),
    "floor_divide": ((0.7,), (-2, 2)), "hypot": (lambda m: (m.ones(4) * 0.5,), (-2, 2)),
    "greater": ((0.1,), (-2, 2)), "greater_equal": ((0.1,), (-2, 2)), "less": ((0.1,), (-2, 2)),
    "less_equal": ((0.1,), (-2, 2)), "not_equal": ((0.0,), (-2, 2)), "multiply": ((3.0,), (-2, 2)),
    "subtract": ((1.5,), (-2, 2)), "xlogy": ((2.0,), (0.1, 2)), "arctan2": (lambda m: (m.ones(4),), (-2, 2)),
    "igamma": (lambda m: (m.ones(4) * 1.5,), (0.2, 3)), "igammac": (lambda m: (m.ones(4) * 1.5,), (0.2, 3)),


    "addmm": (lambda m: (m.ones(3, 2), m.ones(2, 4) * 0.5), (-2, 2)),
    "addmv": (lambda m: (m.ones(3, 4) * 0.5, m.arange(4.0)), (-2, 2)),
    "addr": (lambda m: (m.arange(3.0), m.arange(4.0)), (-2, 2)),
    "baddbmm": (lambda m: (m.ones(3, 4, 2), m.ones(3, 2, 3) * 0.5), (-2, 2)),
}


def _shape(name):
    if name == "addmv":
        return (3,)
    if name == "baddbmm":
        return (3, 4, 3)
    return (3, 4)


@pytest.mark.parametrize("name", [n for n in variants._INPLACE if n != "bitwise_not"])
def test_inplace_variant_matches_torch(name):
    extra, (low, high) = _ARGS.get(name, ((), (-2, 2)))
    a = _data(_shape(name), low, high)
    x, y = tt.tensor(a), torch.tensor(a)
    ax = extra(tt) if callable(extra) else extra
    ay = extra(torch) if callable(extra) else extra
    vx = x[:2] if x.ndim == 2 else x  # through a view: the write lands in the base tensor
    vy = y[:2] if y.ndim == 2 else y
    if name in ("addmm", "addmv", "addr", "baddbmm"):
        vx, vy = x, y
    rx = getattr(vx, name + "_")(*ax)
    ry = getattr(vy, name + "_")(*ay)
    assert rx is vx
    assert_close(x, y, msg=name)
    assert_close(rx, ry, msg=name)


def test_bitwise_not_inplace():
    a = np.array([0, 5, -3], np.int64)
    x, y = tt.tensor(a), torch.tensor(a)
    assert x.bitwise_not_().tolist() == y.bitwise_not_().tolist()


@pytest.mark.parametrize("name", variants._TORCH_INPLACE)
def test_torch_level_inplace_function(name):
    base = name[:-1]
    low, high = {"acosh": (1.1, 3), "arccosh": (1.1, 3), "logit": (0.1, 0.9), "xlogy": (0.1, 2)}.get(
        base, (-0.9, 0.9))
    args = {"xlogy": (2.0,), "clamp": (-0.5, 0.5), "clip": (-0.5, 0.5), "clamp_min": (0.1,), "clamp_max": (0.1,),
            "round": (), "nan_to_num": ()}.get(base, ())
    if base == "addmv":
        a = _data((2,), -1, 1, seed=1)
        x, y = tt.tensor(a), torch.tensor(a)
        assert tt.addmv_(x, tt.ones(2, 3), tt.arange(3.0)) is x
        torch.addmv_(y, torch.ones(2, 3), torch.arange(3.0))
        assert_close(x, y)
        return
    a = _data((2, 5), low, high, seed=1)
    x, y = tt.tensor(a), torch.tensor(a)
    rx = getattr(tt, name)(x, *args)
    getattr(torch, name)(y, *args)
    assert rx is x
    assert_close(x, y, msg=name)


@pytest.mark.parametrize("name", variants._TENSOR_FROM_TORCH)
def test_tensor_alias_matches_torch(name):
    a = _data((3, 3), -0.9, 0.9, seed=2)
    b = _data((3, 3), -0.9, 0.9, seed=3)
    x, y = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    if name in ("arctan2", "fmax", "fmin"):
        args = (tt.tensor(b),), (torch.tensor(b),)
    elif name in ("ger", "vdot"):
        x, y = tt.tensor(a[0], requires_grad=True), torch.tensor(a[0], requires_grad=True)
        args = (tt.tensor(b[1]),), (torch.tensor(b[1]),)
    elif name == "as_strided_scatter":
        # torch 2.13's gradient of as_strided_scatter fails torch's own gradcheck, so values are compared with
        # torch and gradients with finite differences
        xd = tt.tensor(a.astype(np.float64), requires_grad=True)
        src = tt.tensor(b[:2, :2].astype(np.float64), requires_grad=True)
        for offset in (0, 1):
            assert tt.autograd.gradcheck(lambda t, s: t.as_strided_scatter(s, (2, 2), (3, 1), offset), (xd, src))
            assert_close(x.as_strided_scatter(tt.tensor(b[:2, :2]), (2, 2), (3, 1), offset),
                         y.as_strided_scatter(torch.tensor(b[:2, :2]), (2, 2), (3, 1), offset))
        return
    else:
        args = (), ()
    rx, ry = getattr(x, name)(*args[0]), getattr(y, name)(*args[1])
    assert_close(rx, ry, msg=name)
    rx.sum().backward()
    ry.sum().backward()
    assert_close(x.grad, y.grad, msg=f"{name} grad")


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
def test_torch_functions_from_tensor_methods():
    a = _data((3, 3), -1, 1, seed=4)
    spd = a @ a.T + 3 * np.eye(3, dtype=np.float32)
    assert_close(tt.clamp_min(tt.tensor(a), 0.2), torch.clamp_min(torch.tensor(a), 0.2))
    assert_close(tt.clamp_max(tt.tensor(a), 0.2), torch.clamp_max(torch.tensor(a), 0.2))
    assert_close(tt.cholesky(tt.tensor(spd)), torch.cholesky(torch.tensor(spd)), atol=1e-5)
    assert tt.is_signed(tt.tensor(a)) and not tt.is_signed(tt.tensor([1], dtype=tt.uint8))
    x = tt.tensor(a, requires_grad=True) * 2
    assert not tt.detach(x).requires_grad
    tt.detach_(x)
    assert not x.requires_grad and x.grad_fn is None


@pytest.mark.parametrize("op, args", [("t_", ()), ("transpose_", (0, 2)), ("swapaxes_", (1, 2)),
                                      ("swapdims_", (0, 1)), ("squeeze_", ()), ("squeeze_", (1,)),
                                      ("unsqueeze_", (-1,)), ("as_strided_", ((2, 2), (1, 2), 1))])
def test_inplace_view_ops_change_metadata_and_keep_history(op, args):
    shape = (2, 3) if op == "t_" else (2, 1, 3)
    a = _data(shape, -1, 1, seed=5)
    w = _data((6,), -1, 1, seed=6)
    x0, y0 = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    x, y = x0 * 2, y0 * 2
    ptr = x.data_ptr()
    assert getattr(x, op)(*args) is x
    getattr(y, op)(*args)
    assert tuple(x.shape) == tuple(y.shape) and x.stride() == y.stride()
    assert x.data_ptr() == ptr + (4 if op == "as_strided_" else 0)  # same storage (as_strided_ moves the offset)
    assert_close(x, y)
    (x.reshape(-1) * tt.tensor(w[:x.numel()])).sum().backward()
    (y.reshape(-1) * torch.tensor(w[:y.numel()])).sum().backward()
    assert_close(x0.grad, y0.grad)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(tt.ones(2, 3, requires_grad=True), op)(*args) if op == "t_" else \
            getattr(tt.ones(2, 1, 3, requires_grad=True), op)(*args)


def _nn_case(m, name):
    g = np.random.default_rng(7)
    T = lambda *s: m.tensor(g.standard_normal(s).astype(np.float32))  # noqa: E731
    x4 = T(2, 4, 6, 6)
    cases = {
        "conv1d": lambda: m.conv1d(T(2, 3, 9), T(4, 3, 3), T(4), 2, 1),
        "conv2d": lambda: m.conv2d(x4, T(5, 4, 3, 3), None, 1, 1, 1, 1),
        "conv3d": lambda: m.conv3d(T(1, 2, 4, 4, 4), T(3, 2, 2, 2, 2)),
        "conv_transpose1d": lambda: m.conv_transpose1d(T(2, 3, 5), T(3, 2, 3), None, 2, 1, 1),
        "conv_transpose2d": lambda: m.conv_transpose2d(x4, T(4, 3, 3, 3), T(3), 2, 1, 1),
        "conv_transpose3d": lambda: m.conv_transpose3d(T(1, 4, 2, 3, 3), T(4, 3, 2, 3, 3), T(3), 2, 1, 1),
        "avg_pool1d": lambda: m.avg_pool1d(T(2, 3, 8), 3, 2, 1),
        "max_pool1d": lambda: m.max_pool1d(T(2, 3, 8), 2),
        "max_pool1d_with_indices": lambda: m.max_pool1d_with_indices(T(2, 3, 8), 2)[1].float(),
        "max_pool2d": lambda: m.max_pool2d(x4, 2, 2),
        "max_pool3d": lambda: m.max_pool3d(T(1, 2, 4, 4, 4), 2),
        "adaptive_avg_pool1d": lambda: m.adaptive_avg_pool1d(T(2, 3, 7), 3),
        "adaptive_max_pool1d": lambda: m.adaptive_max_pool1d(T(2, 3, 7), 3)[0],
        "dropout_eval": lambda: m.dropout(x4, 0.5, False),
        "alpha_dropout_eval": lambda: m.alpha_dropout(x4, 0.5, False),
        "batch_norm": lambda: m.batch_norm(x4, T(4), T(4), m.zeros(4), m.ones(4), True, 0.1, 1e-5, False),
        "instance_norm": lambda: m.instance_norm(x4, T(4), T(4), None, None, True, 0.1, 1e-5, False),
        "group_norm": lambda: m.group_norm(x4, 2, T(4), T(4)),
        "layer_norm": lambda: m.layer_norm(x4, (6, 6)),
        "rms_norm": lambda: m.rms_norm(x4, (6,), T(6), 1e-6),
        "embedding": lambda: m.embedding(T(10, 3), m.tensor([[1, 2], [0, 9]])),
        "embedding_pad": lambda: m.embedding(T(10, 3), m.tensor([[1, 2], [0, 9]]), 0),
        "bilinear": lambda: m.bilinear(T(4, 3), T(4, 2), T(5, 3, 2), T(5)),
        "pixel_shuffle": lambda: m.pixel_shuffle(x4, 2),
        "pixel_unshuffle": lambda: m.pixel_unshuffle(x4, 2),
        "channel_shuffle": lambda: m.channel_shuffle(x4, 2),
        "cosine_similarity": lambda: m.cosine_similarity(T(4, 5), T(4, 5)),
        "pairwise_distance": lambda: m.pairwise_distance(T(4, 5), T(4, 5), 1.5),
        "pdist": lambda: m.pdist(T(5, 3)),
        "prelu": lambda: m.prelu(x4, T(4)),
        "selu": lambda: m.selu(x4),
        "celu": lambda: m.celu(x4, 0.7),
        "threshold": lambda: m.threshold(x4, 0.1, -3.0),
        "rrelu_eval": lambda: m.rrelu(x4),
        "hardshrink": lambda: m.hardshrink(x4, 0.3),
        "kl_div": lambda: m.kl_div(T(3, 4).log_softmax(1), T(3, 4).softmax(1), 2),
        "kl_div_log_target": lambda: m.kl_div(T(3, 4), T(3, 4), 0, log_target=True),
        "bce_logits": lambda: m.binary_cross_entropy_with_logits(T(3, 4), T(3, 4).sigmoid(), None, T(4).abs(), 1),
        "poisson_nll_loss": lambda: m.poisson_nll_loss(T(3, 4), T(3, 4).abs(), True, True, 1e-8, 2),
        "cosine_embedding_loss": lambda: m.cosine_embedding_loss(T(3, 4), T(3, 4), m.tensor([1.0, -1.0, 1.0]), 0.1, 0),
        "hinge_embedding_loss": lambda: m.hinge_embedding_loss(T(3, 4), m.tensor([1.0, -1.0, 1.0, -1.0]), 1.0, 1),
        "margin_ranking_loss": lambda: m.margin_ranking_loss(T(5), T(5), m.tensor([1.0, -1, 1, -1, 1]), 0.2, 2),
        "triplet_margin_loss": lambda: m.triplet_margin_loss(T(3, 4), T(3, 4), T(3, 4), 1.0, 2.0, 1e-6, True, 1),
    }
    return cases[name]()


_NN = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "avg_pool1d", "max_pool1d",
       "max_pool1d_with_indices", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
       "dropout_eval", "alpha_dropout_eval", "batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm",
       "embedding", "embedding_pad", "bilinear", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
       "cosine_similarity", "pairwise_distance", "pdist", "prelu", "selu", "celu", "threshold", "rrelu_eval",
       "hardshrink", "kl_div", "kl_div_log_target", "bce_logits", "poisson_nll_loss", "cosine_embedding_loss",
       "hinge_embedding_loss", "margin_ranking_loss", "triplet_margin_loss"]


@pytest.mark.parametrize("name", _NN)
def test_torch_spelling_of_functional_op(name):
    assert_close(_nn_case(tt, name), _nn_case(torch, name), atol=1e-5, msg=name)


def test_integer_reduction_codes_are_checked():
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        tt.kl_div(tt.zeros(2), tt.zeros(2), 3)


def test_inplace_functional_spellings_write_into_input():
    for name, args in (("relu_", ()), ("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.0, -1.0)),
                       ("dropout_", (0.5, False)), ("alpha_dropout_", (0.5, False)),
                       ("feature_dropout_", (0.5, False)), ("feature_alpha_dropout_", (0.5, False))):
        a = _data((3, 4), -1, 1, seed=8)
        x, y = tt.tensor(a), torch.tensor(a)
        getattr(tt, name)(x, *args)
        getattr(torch, name)(y, *args)
        assert_close(x, y, msg=name)


def test_feature_dropout_drops_whole_channels():
    tt.manual_seed(0)
    y = tt.feature_dropout(tt.ones(16, 8, 5), 0.5, True)
    assert set(y.unique().tolist()) == {0.0, 2.0} and bool((y == y[..., :1]).all())
