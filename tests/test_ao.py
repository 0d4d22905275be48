"""torch.ao.quantization / torch.ao.nn on float models against PyTorch: stubs, fuse_modules (eval: BN folded,
values as torch's; QAT: intrinsic containers), FloatFunctional, QConfig, and the quantizing passes refusing
with NotImplementedError (tinytorch has no quantized kernels)."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch


def _net(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = (tt if nn is tt.nn else torch).ao.quantization.QuantStub()
            self.conv1 = nn.Conv2d(3, 4, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(4, 4, 3)
            self.bn2 = nn.BatchNorm2d(4)
            self.block = nn.Sequential(nn.Conv2d(4, 5, 1), nn.ReLU())
            self.fc = nn.Linear(5, 6)
            self.bn3 = nn.BatchNorm1d(6)
            self.fc2 = nn.Linear(6, 2)
            self.relu2 = nn.ReLU()
            self.dequant = (tt if nn is tt.nn else torch).ao.quantization.DeQuantStub()

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(self.quant(x))))
            x = self.block(self.bn2(self.conv2(x)))
            x = self.bn3(self.fc(x.mean((2, 3))))
            return self.dequant(self.relu2(self.fc2(x)))
    return Net()


def _twins():
    r = _net(torch.nn)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, b in r.named_buffers():
            if name.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)
            elif name.endswith("running_mean"):
                b.copy_(torch.randn(b.shape, generator=g) * 0.1)
        for p in r.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    t = _net(tt.nn)
    t.load_state_dict({k: tt.tensor(v.numpy()) for k, v in r.state_dict().items()})
    return t, r


GROUPS = [["conv1", "bn1", "relu"], ["conv2", "bn2"], ["block.0", "block.1"], ["fc", "bn3"], ["fc2", "relu2"]]


def _structure(m):
    return [(n, type(c).__name__) for n, c in m.named_modules()]


def test_fuse_modules_eval_matches_torch():
    t, r = _twins()
    t.eval()
    r.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype(np.float32)
    before = t(tt.tensor(x)).detach().numpy()
    tf = tt.ao.quantization.fuse_modules(t, GROUPS)
    rf = torch.ao.quantization.fuse_modules(r, GROUPS)
    assert _structure(tf) == _structure(rf)
    assert _structure(t) != _structure(tf)  # not in place: the original is intact
    ts, rs = tf.state_dict(), rf.state_dict()
    assert list(ts) == list(rs)
    for k in rs:
        np.testing.assert_allclose(ts[k].numpy(), rs[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(tf(tt.tensor(x)).detach().numpy(), rf(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tf(tt.tensor(x)).detach().numpy(), before, rtol=1e-4, atol=1e-5)
    same = tt.ao.quantization.fuse_modules(t, ["conv2", "bn2"], inplace=True)
    assert same is t and type(t.bn2).__name__ == "Identity"


def test_fuse_modules_qat_matches_torch():
    t, r = _twins()
    tf = tt.ao.quantization.fuse_modules_qat(t, GROUPS)
    rf = torch.ao.quantization.fuse_modules_qat(r, GROUPS)
    assert _structure(tf) == _structure(rf)
    assert isinstance(tf.conv1, tt.ao.nn.intrinsic.ConvBnReLU2d) and isinstance(tf.conv1, tt.nn.Sequential)
    assert tf.bn1.training
    assert list(tf.state_dict()) == list(rf.state_dict())
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 9)).astype(np.float32)
    np.testing.assert_allclose(tf(tt.tensor(x)).detach().numpy(), rf(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("qat", [False, True])
def test_fuse_moves_hooks_as_torch(qat):
    def run(mod):
        nn = mod.nn
        m = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2), nn.ReLU())
        m.train(qat)
        seen = []
        m[0].register_forward_pre_hook(lambda mod_, i: seen.append("pre"))
        m[2].register_forward_hook(lambda mod_, i, o: seen.append("post"))
        fuse = mod.ao.quantization.fuse_modules_qat if qat else mod.ao.quantization.fuse_modules
        fuse(m, ["0", "1", "2"], inplace=True)
        m(mod.ones(1, 1, 2, 2))
        # (eval: the conv's deep copy keeps its pre-hook and gets it again, as in torch)
        return seen, len(m[0]._forward_pre_hooks), len(m[0]._forward_hooks), len(m[2]._forward_hooks)
    assert run(tt) == run(torch)


@pytest.mark.parametrize("case", ["no_fuser", "train_eval_fuse", "mixed_modes", "qat_convtranspose", "bad_types"])
def test_fuse_errors_match(case):
    def run(mod, nn):
        q = mod.ao.quantization
        m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.ReLU(), nn.Linear(3, 3),
                          nn.ConvTranspose2d(3, 3, 1), nn.BatchNorm2d(3))
        if case == "no_fuser":
            return q.fuse_modules(m.eval(), ["2", "3"])
        if case == "train_eval_fuse":
            return q.fuse_modules(m, ["0", "1"])
        if case == "mixed_modes":
            m[1].eval()
            return q.fuse_modules(m, ["0", "1", "2"])
        if case == "qat_convtranspose":
            return q.fuse_modules_qat(m, ["4", "5"])
        return mod.ao.nn.intrinsic.ConvReLU2d(nn.Linear(1, 1), nn.ReLU())
    with pytest.raises(Exception) as re_:
        run(torch, torch.nn)
    with pytest.raises(type(re_.value)) as te:
        run(tt, tt.nn)
    assert str(te.value).replace("tinytorch.", "torch.") == str(re_.value)


def test_stubs_and_wrapper():
    q = tt.ao.quantization
    x = tt.randn(2, 3)
    assert q.QuantStub()(x) is x and q.DeQuantStub()(x) is x
    cfg = q.QConfig(activation=None, weight=None)
    assert q.QuantStub(cfg).qconfig is cfg and not hasattr(q.QuantStub(), "qconfig")
    lin = tt.nn.Linear(3, 2)
    lin.qconfig = cfg
    w = q.QuantWrapper(lin.eval())
    assert [n for n, _ in w.named_children()] == ["quant", "dequant", "module"] and not w.training
    assert w.quant.qconfig is cfg
    np.testing.assert_array_equal(w(x).detach().numpy(), lin(x).detach().numpy())
    assert repr(q.QuantStub()) == repr(torch.ao.quantization.QuantStub())
    assert tt.quantization.QuantStub is q.QuantStub and tt.quantization.fuse_modules is q.fuse_modules


def test_qconfig_matches():
    q, rq = tt.ao.quantization, torch.ao.quantization
    assert q.QConfig._fields == rq.QConfig._fields
    assert repr(q.QConfig(1, 2)) == repr(rq.QConfig(1, 2))
    with pytest.raises(ValueError) as re_:
        rq.QConfig(activation=torch.nn.Identity(), weight=None)
    with pytest.raises(ValueError) as te:
        q.QConfig(activation=tt.nn.Identity(), weight=None)
    assert str(te.value) == str(re_.value)


@pytest.mark.parametrize("op", ["add", "mul", "cat", "add_relu", "add_scalar", "mul_scalar", "matmul"])
@pytest.mark.parametrize("cls", ["FloatFunctional", "FXFloatFunctional"])
def test_float_functional_matches(op, cls):
    a = np.random.default_rng(2).standard_normal((3, 3)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal((3, 3)).astype(np.float32)

    def run(mod, A, B):
        f = getattr(mod.nn.quantized, cls)()
        if op == "cat":
            return f.cat([A, B], dim=1)
        if op.endswith("_scalar"):
            return getattr(f, op)(A, 2.5)
        return getattr(f, op)(A, B)
    np.testing.assert_allclose(run(tt, tt.tensor(a), tt.tensor(b)).numpy(),
                               run(torch, torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-6, atol=1e-6)


def test_float_functional_observes_and_refuses_forward():
    f = tt.ao.nn.quantized.FloatFunctional()
    assert repr(f) == repr(torch.ao.nn.quantized.FloatFunctional())
    seen = []
    f.activation_post_process.register_forward_hook(lambda m, i, o: seen.append(o))
    f.add(tt.ones(2), tt.ones(2))
    f.add_scalar(tt.ones(2), 1.0)
    assert len(seen) == 1
    with pytest.raises(RuntimeError) as re_:
        torch.ao.nn.quantized.FloatFunctional()(torch.ones(1))
    with pytest.raises(RuntimeError) as te:
        f(tt.ones(1))
    assert str(te.value) == str(re_.value)


def test_quantizing_passes_refuse_naming_ops():
    t, _ = _twins()
    t.eval()
    tt.ao.quantization.fuse_modules(t, GROUPS, inplace=True)
    snapshot = _structure(t)
    for name in ("prepare", "convert", "prepare_qat", "quantize_dynamic"):
        with pytest.raises(NotImplementedError, match=r"quantized::conv2d_relu.*quantized::conv2d, "
                                                      r"quantized::linear, quantized::linear_relu"):
            getattr(tt.ao.quantization, name)(t)
    assert _structure(t) == snapshot


def test_quantized_engine_matches():
    qb, rb = tt.backends.quantized, torch.backends.quantized
    assert qb.engine == "none" and qb.supported_engines == []
    for bad in ("foo", "fbgemm", "x86"):
        if bad in rb.supported_engines:
            with pytest.raises(RuntimeError, match=f"quantized engine {bad.upper()} is not supported"):
                qb.engine = bad
            continue
        with pytest.raises(RuntimeError) as re_:
            rb.engine = bad
        with pytest.raises(RuntimeError) as te:
            qb.engine = bad
        assert str(te.value) == str(re_.value)
    with pytest.raises(RuntimeError, match="Assignment not supported"):
        qb.supported_engines = ["x86"]
    assert qb.engine == "none"


# the modules this work added, against torch's: every public name tinytorch defines has torch's signature
_NEW_MODULES = ["nn.utils.prune", "nn.utils.fusion", "nn.modules.utils", "nn.attention", "nn.attention.bias",
                "nn.attention.flex_attention", "ao.quantization", "ao.nn.intrinsic", "ao.nn.quantized"]
# quantize_dynamic: torch's default dtype is torch.qint8, a quantized dtype tinytorch does not have
_KNOWN_DIFFERENT = {("ao.quantization", "quantize_dynamic")}


def _params(obj):
    import inspect
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    # defaults compared by kind of value: functions differ in identity, numbers / None / tuples must agree
    return [(p.name, p.kind, repr(p.default) if not callable(p.default) else "callable")
            for p in sig.parameters.values()]


@pytest.mark.parametrize("mod", _NEW_MODULES)
def test_signatures_match_torch(mod):
    import importlib
    t = importlib.import_module("tinytorch." + mod)
    r = importlib.import_module("torch." + mod)
    names = [n for n in getattr(t, "__all__", []) if hasattr(r, n)]
    assert names
    for name in names:
        if (mod, name) in _KNOWN_DIFFERENT:
            continue
        to, ro = getattr(t, name), getattr(r, name)
        if _params(ro) is None:  # a C++ class (SDPBackend): nothing to compare
            continue
        assert _params(to) == _params(ro), f"{mod}.{name}"
        if isinstance(ro, type):
            for meth in [m for m in vars(ro) if not m.startswith("_") and callable(getattr(ro, m))] + ["__init__"]:
                if hasattr(to, meth):
                    assert _params(getattr(to, meth)) == _params(getattr(ro, meth)), f"{mod}.{name}.{meth}"
