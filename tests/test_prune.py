"""torch.nn.utils.prune and torch.nn.utils.fusion against PyTorch: masks, state_dict keys and values, hooks,
remove, errors; fused conv/linear + BatchNorm values."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.utils.prune as tprune
from conftest import torch
import torch.nn.utils.prune as rprune  # noqa: E402


def _twin(make_t, make_r, seed=0):
    """The same module in both frameworks: tinytorch's with torch's parameters and buffers copied in."""
    r = make_r()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in r.parameters():
            # distinct magnitudes so L1 / Ln rankings have no ties
            p.copy_(torch.randperm(p.numel(), generator=g).reshape(p.shape).to(p.dtype) * 0.1 - p.numel() * 0.05
                    + 0.013)
    t = make_t()
    t.load_state_dict({k: tt.tensor(v.numpy()) for k, v in r.state_dict().items()})
    return t, r


def _conv():
    return _twin(lambda: tt.nn.Conv2d(3, 4, 3), lambda: torch.nn.Conv2d(3, 4, 3))


def _lin():
    return _twin(lambda: tt.nn.Linear(6, 5), lambda: torch.nn.Linear(6, 5))


def _same_state(t, r):
    ts, rs = t.state_dict(), r.state_dict()
    assert list(ts.keys()) == list(rs.keys())
    for k in rs:
        assert str(ts[k].dtype).split(".")[-1] == str(rs[k].dtype).split(".")[-1], k
        np.testing.assert_array_equal(ts[k].numpy(), rs[k].detach().numpy(), err_msg=k)
    assert sorted(n for n, _ in t.named_parameters()) == sorted(n for n, _ in r.named_parameters())
    assert sorted(n for n, _ in t.named_buffers()) == sorted(n for n, _ in r.named_buffers())


@pytest.mark.parametrize("amount", [0, 3, 0.3, 0.5, 1.0])
def test_l1_unstructured_matches(amount):
    t, r = _lin()
    tprune.l1_unstructured(t, "weight", amount)
    rprune.l1_unstructured(r, "weight", amount)
    _same_state(t, r)
    np.testing.assert_array_equal(t.weight.detach().numpy(), r.weight.detach().numpy())
    assert not isinstance(t.weight, tt.nn.Parameter) and isinstance(t.weight_orig, tt.nn.Parameter)
    assert tprune.is_pruned(t) and rprune.is_pruned(r)


@pytest.mark.parametrize("n,dim,amount", [(1, 0, 2), (2, 1, 0.5), (float("inf"), -1, 1), (3, 0, 0.25),
                                          (-float("inf"), 0, 1), (2, 0, 0)])
def test_ln_structured_matches(n, dim, amount):
    t, r = _conv()
    tprune.ln_structured(t, "weight", amount, n, dim)
    rprune.ln_structured(r, "weight", amount, n, dim)
    _same_state(t, r)


def test_importance_scores_and_chained_methods():
    t, r = _conv()
    scores = np.random.default_rng(1).permutation(4 * 3 * 9).reshape(4, 3, 3, 3).astype(np.float32)
    tprune.l1_unstructured(t, "weight", 20, importance_scores=tt.tensor(scores))
    rprune.l1_unstructured(r, "weight", 20, importance_scores=torch.tensor(scores))
    _same_state(t, r)
    # a second and third method on the same parameter: a PruningContainer on the remaining entries / channels
    tprune.ln_structured(t, "weight", 1, 2, 0)
    rprune.ln_structured(r, "weight", 1, 2, 0)
    tprune.l1_unstructured(t, "weight", 0.2)
    rprune.l1_unstructured(r, "weight", 0.2)
    tprune.l1_unstructured(t, "bias", 1)
    rprune.l1_unstructured(r, "bias", 1)
    _same_state(t, r)
    th = [h for h in t._forward_pre_hooks.values() if isinstance(h, tprune.BasePruningMethod)]
    rh = [h for h in r._forward_pre_hooks.values() if isinstance(h, rprune.BasePruningMethod)]
    assert [type(h).__name__ for h in th] == [type(h).__name__ for h in rh] == ["PruningContainer", "L1Unstructured"]
    assert [type(m).__name__ for m in th[0]] == ["L1Unstructured", "LnStructured", "L1Unstructured"]


def test_forward_hook_refreshes_and_remove_makes_permanent():
    t, r = _lin()
    tprune.l1_unstructured(t, "weight", 0.4)
    rprune.l1_unstructured(r, "weight", 0.4)
    # training changes weight_orig; the hook re-applies the mask before the next forward
    with tt.no_grad():
        t.weight_orig.add_(1.0)
    with torch.no_grad():
        r.weight_orig.add_(1.0)
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(t(tt.tensor(x)).detach().numpy(), r(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_array_equal(t.weight.detach().numpy(), r.weight.detach().numpy())
    tprune.remove(t, "weight")
    rprune.remove(r, "weight")
    _same_state(t, r)
    assert isinstance(t.weight, tt.nn.Parameter) and not tprune.is_pruned(t)
    assert not hasattr(t, "weight_orig") and not hasattr(t, "weight_mask")
    assert len(t._forward_pre_hooks) == 0


def test_gradient_flows_to_orig_only_where_kept():
    t, r = _lin()
    tprune.l1_unstructured(t, "weight", 10)
    rprune.l1_unstructured(r, "weight", 10)
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    t(tt.tensor(x)).sum().backward()
    r(torch.tensor(x)).sum().backward()
    np.testing.assert_allclose(t.weight_orig.grad.numpy(), r.weight_orig.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_custom_from_mask_and_identity():
    t, r = _conv()
    m = (np.arange(4) % 2).astype(np.float32)
    tprune.custom_from_mask(t, "bias", tt.tensor(m))
    rprune.custom_from_mask(r, "bias", torch.tensor(m))
    tprune.identity(t, "weight")
    rprune.identity(r, "weight")
    _same_state(t, r)
    with pytest.raises(AssertionError):
        tprune.custom_from_mask(t, "bias", tt.ones(3))
    # a failed prune leaves the module as it was
    assert "bias_orig" in dict(t.named_parameters()) and "bias_mask" in dict(t.named_buffers())


def test_global_unstructured_matches():
    (t1, r1), (t2, r2) = _conv(), _lin()
    tprune.l1_unstructured(t2, "weight", 4)
    rprune.l1_unstructured(r2, "weight", 4)
    tp = [(t1, "weight"), (t1, "bias"), (t2, "weight")]
    rp = [(r1, "weight"), (r1, "bias"), (r2, "weight")]
    tprune.global_unstructured(tp, tprune.L1Unstructured, amount=40)
    rprune.global_unstructured(rp, rprune.L1Unstructured, amount=40)
    _same_state(t1, r1)
    _same_state(t2, r2)
    with pytest.raises(TypeError, match="Only \"unstructured\" PRUNING_TYPE"):
        tprune.global_unstructured(tp, tprune.LnStructured, amount=1, n=2, dim=0)
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        tprune.global_unstructured(3, tprune.L1Unstructured, amount=1)


def test_random_methods_counts():
    tt.manual_seed(0)
    t = tt.nn.Linear(10, 8)
    tprune.random_unstructured(t, "weight", 0.35)
    assert int((t.weight_mask == 0).sum()) == round(0.35 * 80)
    assert t.weight_mask.dtype == tt.float32
    tprune.random_structured(t, "weight", 3, dim=0)
    rows_dead = (t.weight_mask.sum(1) == 0).sum()
    assert int(rows_dead) >= 3
    kept_rows = t.weight_mask.sum(1) != 0
    # the unstructured zeros inside kept rows are untouched by the structured step
    assert int((t.weight_mask[kept_rows] == 0).sum()) <= 28
    c = tt.nn.Conv2d(2, 6, 3)
    tprune.random_structured(c, "weight", 0.5, dim=0)
    assert int((c.weight_mask.sum((1, 2, 3)) == 0).sum()) == 3
    np.testing.assert_array_equal(c.weight.detach().numpy(), (c.weight_orig * c.weight_mask).detach().numpy())


@pytest.mark.parametrize("call", [
    lambda p, m: p.l1_unstructured(m, "weight", -1),
    lambda p, m: p.l1_unstructured(m, "weight", 1.5),
    lambda p, m: p.l1_unstructured(m, "weight", "a"),
    lambda p, m: p.l1_unstructured(m, "weight", 100),
    lambda p, m: p.ln_structured(m, "bias", 1, 2, 0),
    lambda p, m: p.ln_structured(m, "weight", 1, 2, 2),
    lambda p, m: p.remove(m, "weight"),
])
def test_errors_match(call):
    t, r = _lin()
    with pytest.raises(Exception) as re_:
        call(rprune, r)
    with pytest.raises(type(re_.value)) as te:
        call(tprune, t)
    assert str(te.value).replace("tinytorch.", "torch.").split(" of module")[0] == \
        str(re_.value).split(" of module")[0]
    # the module is left as it was
    assert sorted(dict(t.named_parameters())) == ["bias", "weight"] and not tprune.is_pruned(t)


def test_prune_method_and_container_errors():
    m = tprune.L1Unstructured(2)
    x = np.array([[0.5, -3.0], [0.1, 2.0]], np.float32)
    np.testing.assert_array_equal(m.prune(tt.tensor(x)).numpy(), rprune.L1Unstructured(2).prune(torch.tensor(x)).numpy())
    a = tprune.Identity()
    a._tensor_name = "w"
    b = tprune.Identity()
    b._tensor_name = "v"
    c = tprune.PruningContainer(a)
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'w'"):
        c.add_pruning_method(b)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)
    assert len(c) == 1 and c[0] is a


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_matches(transpose):
    if transpose:
        mk_t, mk_r = (lambda: tt.nn.ConvTranspose2d(3, 4, 3)), (lambda: torch.nn.ConvTranspose2d(3, 4, 3))
    else:
        mk_t, mk_r = (lambda: tt.nn.Conv2d(3, 4, 3, bias=False)), (lambda: torch.nn.Conv2d(3, 4, 3, bias=False))
    tc, rc = _twin(mk_t, mk_r)
    tb, rb = _twin(lambda: tt.nn.BatchNorm2d(4), lambda: torch.nn.BatchNorm2d(4), seed=1)
    rv = np.linspace(0.5, 2.0, 4).astype(np.float32)
    tb.running_var.copy_(tt.tensor(rv))
    rb.running_var.copy_(torch.tensor(rv))
    tb.running_mean.fill_(0.3)
    rb.running_mean.fill_(0.3)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        tt.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    tc.eval(); tb.eval(); rc.eval(); rb.eval()
    tf = tt.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    rf = torch.nn.utils.fuse_conv_bn_eval(rc, rb, transpose)
    assert type(tf) is type(tc) and tf is not tc
    np.testing.assert_allclose(tf.weight.detach().numpy(), rf.weight.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tf.bias.detach().numpy(), rf.bias.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert isinstance(tf.weight, tt.nn.Parameter) and tf.weight.requires_grad
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(tf(tt.tensor(x)).detach().numpy(), tb(tc(tt.tensor(x))).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_fuse_linear_bn_matches():
    tl, rl = _lin()
    tb, rb = _twin(lambda: tt.nn.BatchNorm1d(5), lambda: torch.nn.BatchNorm1d(5), seed=2)
    for m in (tl, rl, tb, rb):
        m.eval()
    tf = tt.nn.utils.fuse_linear_bn_eval(tl, tb)
    rf = torch.nn.utils.fuse_linear_bn_eval(rl, rb)
    np.testing.assert_allclose(tf.weight.detach().numpy(), rf.weight.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tf.bias.detach().numpy(), rf.bias.detach().numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(AssertionError, match="linear.out_features=5 and bn.num_features=3"):
        tt.nn.utils.fuse_linear_bn_eval(tl, tt.nn.BatchNorm1d(3).eval())
    w = np.ones((5, 6), np.float32)
    tw, tb_ = tt.nn.utils.fuse_linear_bn_weights(tt.tensor(w), None, tt.zeros(5), tt.ones(5), 1e-5, tt.ones(5) * 2,
                                                 tt.ones(5))
    rw, rb_ = torch.nn.utils.fuse_linear_bn_weights(torch.tensor(w), None, torch.zeros(5), torch.ones(5), 1e-5,
                                                    torch.ones(5) * 2, torch.ones(5))
    np.testing.assert_allclose(tw.detach().numpy(), rw.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(tb_.detach().numpy(), rb_.detach().numpy(), rtol=1e-6)
    assert tb_.requires_grad == rb_.requires_grad


def test_modules_utils_match():
    from tinytorch.nn.modules import utils as tu
    ru = torch.nn.modules.utils
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4], range(2)):
            assert getattr(tu, name)(v) == getattr(ru, name)(v)
        assert getattr(tu, name).__name__ == name
    assert tu._ntuple(5, "x")(7) == ru._ntuple(5, "x")(7)
    assert tu._reverse_repeat_tuple((1, 2, 3), 2) == ru._reverse_repeat_tuple((1, 2, 3), 2)
    assert tu._list_with_default([None, 3], [1, 2, 5, 6]) == ru._list_with_default([None, 3], [1, 2, 5, 6])
    assert tu._list_with_default(4, [1]) == 4
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        tu._list_with_default([None, 3], [1, 2])
    from collections import OrderedDict
    sd_t, sd_r = OrderedDict(), OrderedDict()
    for sd in (sd_t, sd_r):
        sd["module.a"] = 1
        sd["b"] = 2
        sd["module.c.d"] = 3
        sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.c", {"v": 2})])
    tu.consume_prefix_in_state_dict_if_present(sd_t, "module.")
    ru.consume_prefix_in_state_dict_if_present(sd_r, "module.")
    assert list(sd_t.items()) == list(sd_r.items()) and list(sd_t._metadata.items()) == list(sd_r._metadata.items())


def test_random_methods_same_masks_as_torch_under_the_same_seed():
    # tinytorch's generator is torch's Mersenne Twister: the same seed draws the same numbers
    t, r = _conv()
    tt.manual_seed(11)
    torch.manual_seed(11)
    tprune.random_unstructured(t, "weight", 0.3)
    rprune.random_unstructured(r, "weight", 0.3)
    tprune.random_structured(t, "weight", 2, dim=1)
    rprune.random_structured(r, "weight", 2, dim=1)
    _same_state(t, r)


def test_global_unstructured_importance_scores():
    (t1, r1), (t2, r2) = _conv(), _lin()
    s1 = np.random.default_rng(9).permutation(108).reshape(4, 3, 3, 3).astype(np.float32)
    s2 = np.random.default_rng(8).permutation(30).reshape(5, 6).astype(np.float32) + 200
    tprune.global_unstructured([(t1, "weight"), (t2, "weight")], tprune.L1Unstructured,
                               importance_scores={(t1, "weight"): tt.tensor(s1), (t2, "weight"): tt.tensor(s2)},
                               amount=0.5)
    rprune.global_unstructured([(r1, "weight"), (r2, "weight")], rprune.L1Unstructured,
                               importance_scores={(r1, "weight"): torch.tensor(s1), (r2, "weight"): torch.tensor(s2)},
                               amount=0.5)
    _same_state(t1, r1)
    _same_state(t2, r2)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        tprune.global_unstructured([(t1, "bias")], tprune.L1Unstructured, importance_scores=[1], amount=1)
