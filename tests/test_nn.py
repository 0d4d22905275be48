"""nn modules against torch modules with the same weights: outputs, gradients, state_dict keys and a short
training trajectory; Module bookkeeping."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from conftest import assert_close, torch


def copy_weights(src_torch, dst_tt):
    sd = {k: tt.tensor(v.detach().numpy()) for k, v in src_torch.state_dict().items()}
    dst_tt.load_state_dict(sd)


def same_module(make):
    torch.manual_seed(0)  # deterministic initial weights (they are copied into the tinytorch module)
    m_th = make(torch.nn)
    m_tt = make(nn)
    assert list(m_th.state_dict().keys()) == list(m_tt.state_dict().keys())
    for (k, a), (_, b) in zip(m_th.state_dict().items(), m_tt.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    copy_weights(m_th, m_tt)
    return m_th, m_tt


MODULES = [
    ("linear", lambda n: n.Linear(5, 3), (4, 5)),
    ("mlp", lambda n: n.Sequential(n.Linear(6, 8), n.ReLU(), n.Dropout(0.0), n.Linear(8, 2)), (5, 6)),
    ("conv", lambda n: n.Sequential(n.Conv2d(3, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(), n.MaxPool2d(2),
                                    n.Conv2d(4, 2, 2, stride=2, bias=False), n.AdaptiveAvgPool2d(1), n.Flatten()),
     (2, 3, 8, 8)),
    ("conv1d", lambda n: n.Sequential(n.Conv1d(2, 3, 3, padding="same"), n.BatchNorm1d(3), n.GELU(), n.Identity()),
     (2, 2, 7)),
    ("layernorm", lambda n: n.Sequential(n.Linear(4, 6), n.LayerNorm(6), n.Tanh()), (3, 4)),
    ("activations", lambda n: n.Sequential(n.ELU(), n.LeakyReLU(0.2), n.SiLU(), n.Softplus(), n.Hardswish(),
                                           n.Mish(), n.SELU(), n.ReLU6(), n.Hardtanh(), n.Sigmoid(),
                                           n.LogSoftmax(dim=1)), (3, 5)),
    ("inplace_activations", lambda n: n.Sequential(n.Linear(5, 6), n.ELU(inplace=True), n.Linear(6, 6),
                                                   n.LeakyReLU(0.1, inplace=True), n.Linear(6, 6), n.ReLU6(inplace=True),
                                                   n.Linear(6, 6), n.SiLU(inplace=True), n.Linear(6, 4),
                                                   n.Hardswish(inplace=True), n.Hardtanh(inplace=True)), (3, 5)),
    ("more_pooling", lambda n: n.Sequential(n.Conv2d(2, 6, 3), n.ChannelShuffle(3), n.LocalResponseNorm(3),
                                            n.LPPool2d(2, 2), n.AdaptiveMaxPool2d((2, 1))), (2, 2, 9, 8)),
    ("bn1d", lambda n: n.BatchNorm1d(4, momentum=0.3), (6, 4)),
    ("groups", lambda n: n.Conv2d(4, 6, 3, groups=2, dilation=2), (1, 4, 7, 7)),
    ("conv3d", lambda n: n.Sequential(n.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=1), n.MaxPool3d(2),
                                      n.InstanceNorm3d(4, affine=True, track_running_stats=True)), (2, 2, 5, 6, 6)),
    ("autoencoder", lambda n: n.Sequential(n.Conv2d(2, 4, 3, stride=2, padding=1), n.ReLU(),
                                           n.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
                                           n.ReLU(), n.InstanceNorm2d(3), n.Upsample(scale_factor=1.5, mode="bilinear")),
     (2, 2, 6, 6)),
    ("conv_transpose1d", lambda n: n.Sequential(n.ConvTranspose1d(4, 6, 3, stride=2, groups=2, dilation=2),
                                                n.InstanceNorm1d(6, momentum=0.3, track_running_stats=True),
                                                n.Upsample(size=20)), (2, 4, 7)),
    ("padding_modes", lambda n: n.Sequential(n.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
                                             n.Conv2d(3, 3, (3, 2), padding="same", padding_mode="circular"),
                                             n.Conv2d(3, 2, 3, padding=(2, 1), padding_mode="replicate"),
                                             n.UpsamplingNearest2d(scale_factor=2), n.UpsamplingBilinear2d((5, 5))),
     (2, 2, 5, 6)),
]


@pytest.mark.parametrize("name,make,shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, make, shape):
    m_th, m_tt = same_module(make)
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x_tt, x_th = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out_tt, out_th = m_tt(x_tt), m_th(x_th)
    assert_close(out_tt, out_th, rtol=1e-4, atol=1e-5)
    w = np.random.default_rng(1).standard_normal(tuple(out_th.shape)).astype(np.float32)
    (out_tt * tt.tensor(w)).sum().backward()
    (out_th * torch.tensor(w)).sum().backward()
    assert_close(x_tt.grad, x_th.grad, rtol=1e-4, atol=1e-5)
    for (k, p_th), (_, p_tt) in zip(m_th.named_parameters(), m_tt.named_parameters()):
        # atol 5e-5: a bias followed by a normalization has an exactly-zero gradient, computed as a sum of
        # O(1) terms that cancel, so both sides hold only float32 rounding noise of that size
        assert_close(p_tt.grad, p_th.grad, rtol=1e-4, atol=5e-5, msg=k)
    for (k, b_th), (_, b_tt) in zip(m_th.named_buffers(), m_tt.named_buffers()):
        assert_close(b_tt, b_th, rtol=1e-5, atol=1e-6, msg=k)  # running stats updated the same way
    m_th.eval()
    m_tt.eval()
    assert_close(m_tt(x_tt), m_th(x_th), rtol=1e-4, atol=1e-5)


def test_embedding_and_losses_match_torch():
    m_th, m_tt = same_module(lambda n: n.Embedding(10, 4, padding_idx=0))
    idx = np.array([[0, 3, 9], [1, 0, 2]])
    out_tt, out_th = m_tt(tt.tensor(idx)), m_th(torch.tensor(idx))
    assert_close(out_tt, out_th)
    out_tt.sum().backward()
    out_th.sum().backward()
    assert_close(m_tt.weight.grad, m_th.weight.grad)
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 4, 2, 2, 1, 3])
    for make in (lambda n: n.CrossEntropyLoss(label_smoothing=0.1), lambda n: n.CrossEntropyLoss(ignore_index=2),
                 lambda n: n.NLLLoss(reduction="sum")):
        l_tt = make(nn)(tt.tensor(x).log_softmax(1), tt.tensor(t))
        l_th = make(torch.nn)(torch.tensor(x).log_softmax(1), torch.tensor(t))
        assert_close(l_tt, l_th)
    p = 1 / (1 + np.exp(-x))
    for a, b in ((nn.MSELoss(), torch.nn.MSELoss()), (nn.L1Loss(), torch.nn.L1Loss()),
                 (nn.BCELoss(), torch.nn.BCELoss()), (nn.BCEWithLogitsLoss(), torch.nn.BCEWithLogitsLoss())):
        assert_close(a(tt.tensor(p), tt.tensor(p[::-1].copy())), b(torch.tensor(p), torch.tensor(p[::-1].copy())))


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_trajectory_matches_torch(opt):
    make = lambda n: n.Sequential(n.Conv2d(1, 3, 3), n.ReLU(), n.Flatten(), n.Linear(3 * 4 * 4, 3))
    m_th, m_tt = same_module(make)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 1, 6, 6)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    if opt == "sgd":
        o_th = torch.optim.SGD(m_th.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
        o_tt = tt.optim.SGD(m_tt.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)
    else:
        o_th = torch.optim.Adam(m_th.parameters(), lr=0.01, amsgrad=True)
        o_tt = tt.optim.Adam(m_tt.parameters(), lr=0.01, amsgrad=True)
    for _ in range(5):
        for m, o, lib in ((m_th, o_th, torch), (m_tt, o_tt, tt)):
            loss = lib.nn.functional.cross_entropy(m(lib.tensor(x)), lib.tensor(y))
            o.zero_grad()
            loss.backward()
            o.step()
        assert_close(tt.tensor(loss.item()), torch.tensor(loss.item()))
    for (k, a), (_, b) in zip(m_th.state_dict().items(), m_tt.state_dict().items()):
        assert_close(b, a, rtol=1e-4, atol=1e-5, msg=k)


def test_module_bookkeeping():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 3)
            self.blocks = nn.ModuleList([nn.Linear(3, 3), nn.ReLU()])
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 1)})
            self.scale = nn.Parameter(tt.ones(1))
            self.register_buffer("steps", tt.zeros(1))
            self.register_buffer("cache", tt.zeros(1), persistent=False)

        def forward(self, x):
            return self.heads["a"](self.blocks[1](self.blocks[0](self.fc(x)))) * self.scale

    net = Net()
    assert list(net.state_dict()) == ["scale", "steps", "fc.weight", "fc.bias", "blocks.0.weight", "blocks.0.bias",
                                      "heads.a.weight", "heads.a.bias"]
    assert len(list(net.parameters())) == 7 and len(list(net.buffers())) == 2
    assert [n for n, _ in net.named_children()] == ["fc", "blocks", "heads"]
    assert len(list(net.modules())) == 7
    calls = []
    h = net.fc.register_forward_hook(lambda m, i, o: calls.append(o.shape))
    net.fc.register_forward_pre_hook(lambda m, i: calls.append("pre"))
    net(tt.ones(4, 2)).sum().backward()
    assert calls == ["pre", tt.Size([4, 3])]
    h.remove()
    net.zero_grad()
    assert net.fc.weight.grad is None
    net.eval()
    assert not net.blocks[0].training
    with pytest.raises(RuntimeError, match="Missing key"):
        net.load_state_dict({"scale": tt.ones(1)})
    res = net.load_state_dict({"scale": tt.ones(1) * 2}, strict=False)
    assert "fc.weight" in res.missing_keys and net.scale.item() == 2
    with pytest.raises(RuntimeError, match="size mismatch"):
        net.load_state_dict({**net.state_dict(), "fc.weight": tt.ones(5, 5)})
    with pytest.raises(TypeError):
        net.fc = "not a module"
    net.double()
    assert net.fc.weight.dtype is tt.float64 and net.steps.dtype is tt.float64
    assert repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU())) == repr(torch.nn.Sequential(torch.nn.Linear(2, 3),
                                                                                       torch.nn.ReLU()))
    assert repr(nn.Conv2d(1, 2, 3, padding=1)) == repr(torch.nn.Conv2d(1, 2, 3, padding=1))


def test_init_statistics_and_clip_grad_norm():
    w = tt.empty(400, 300)
    nn.init.kaiming_uniform_(w, a=5 ** 0.5)
    bound = 1 / 300 ** 0.5
    assert w.abs().max().item() <= bound and w.abs().max().item() > 0.95 * bound
    nn.init.xavier_normal_(w)
    assert abs(w.std().item() - (2 / 700) ** 0.5) < 0.002
    ps = [nn.Parameter(tt.ones(3)), nn.Parameter(tt.ones(4))]
    for p in ps:
        p.grad = tt.full((p.numel(),), 2.0)
    n = nn.utils.clip_grad_norm_(ps, 1.0)
    assert n.item() == pytest.approx(2 * 7 ** 0.5, rel=1e-5)
    total = sum((p.grad ** 2).sum().item() for p in ps) ** 0.5
    assert total == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize("device", ["cpu", "mydev"] + (["opencl"] if tt.opencl.is_available() else []))
def test_max_pool_nan_and_ties_match_torch(device):
    """NaN takes its window and ties pick PyTorch's element, on the fused kernels (cpu, opencl) and on the
    decomposition (mydev)."""
    import mydevice  # noqa: F401  (registers mydev: no max_pool kernel, so the decomposition runs)
    x = np.array([[[[1, 1, 2, 0], [1, 1, 2, 2], [np.nan, 0, 5, 5], [3, np.nan, 5, np.nan]]]], np.float32)
    xt = torch.tensor(x, requires_grad=True)
    ours = tt.tensor(x, device=device, requires_grad=True)
    v_th, i_th = torch.nn.functional.max_pool2d(xt, 2, return_indices=True)
    v, i = tt.nn.functional.max_pool2d(ours, 2, return_indices=True)
    assert_close(v.cpu(), v_th, "float32")
    assert i.cpu().tolist() == i_th.tolist()
    v.sum().backward()
    v_th.sum().backward()
    assert_close(ours.grad.cpu(), xt.grad, "float32")


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module_matches_torch(mode):
    m_th, m_tt = same_module(lambda n: n.EmbeddingBag(10, 4, mode=mode, padding_idx=3))
    idx = np.random.default_rng(0).integers(0, 10, 12)
    offsets = [0, 5, 5, 9]
    out_tt = m_tt(tt.tensor(idx), tt.tensor(offsets))
    out_th = m_th(torch.tensor(idx), torch.tensor(offsets))
    assert_close(out_tt, out_th, rtol=1e-5, atol=1e-6)
    out_tt.pow(2).sum().backward()
    out_th.pow(2).sum().backward()
    assert_close(m_tt.weight.grad, m_th.weight.grad, rtol=1e-5, atol=1e-6)
    bag = nn.EmbeddingBag.from_pretrained(tt.ones(3, 2), mode="sum")
    assert not bag.weight.requires_grad
    assert bag(tt.tensor([[0, 2], [1, 1]])).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_conv_transpose_output_size_matches_torch():
    m_th, m_tt = same_module(lambda n: n.ConvTranspose2d(3, 2, 3, stride=3, padding=1))
    a = np.random.default_rng(0).standard_normal((1, 3, 4, 4)).astype(np.float32)
    for size in [(10, 10), (11, 12), [1, 2, 12, 10]]:
        assert_close(m_tt(tt.tensor(a), output_size=size), m_th(torch.tensor(a), output_size=size), rtol=1e-5,
                     atol=1e-6)
    with pytest.raises(ValueError, match="valid sizes range from 10 to 12"):
        m_tt(tt.tensor(a), output_size=(13, 10))
    with pytest.raises(ValueError):
        torch.nn.ConvTranspose2d(3, 2, 3, stride=3, padding=1)(torch.tensor(a), output_size=(13, 10))


SMALL = [
    ("prelu", lambda n: n.Sequential(n.Conv2d(2, 3, 1), n.PReLU(3), n.PReLU()), (2, 2, 3, 3)),
    ("rmsnorm", lambda n: n.Sequential(n.Linear(4, 6), n.RMSNorm(6), n.RMSNorm([3, 6], elementwise_affine=False)),
     (2, 3, 4)),
    ("pads", lambda n: n.Sequential(n.ZeroPad2d((1, 0, 2, 1)), n.ReflectionPad2d(1), n.ReplicationPad2d((0, 1, 1, 0)),
                                    n.CircularPad2d(1), n.ConstantPad2d(1, 0.5), n.Softmax2d()), (2, 3, 4, 4)),
    ("pads1d3d", lambda n: n.Sequential(n.ReflectionPad1d(2), n.ZeroPad1d(1), n.ConstantPad1d((1, 2), -1.0)),
     (2, 3, 5)),
    ("bn3d", lambda n: n.Sequential(n.BatchNorm3d(2), n.ReplicationPad3d(1), n.Dropout3d(0.0)), (2, 2, 3, 3, 3)),
    ("shrink_unshuffle", lambda n: n.Sequential(n.Hardshrink(0.3), n.Softshrink(0.2), n.PixelUnshuffle(2)),
     (2, 1, 4, 4)),
    ("pool3d", lambda n: n.Sequential(n.Conv3d(2, 3, 1), n.AvgPool3d(2, 1, 1, count_include_pad=False),
                                      n.LPPool3d(2, 2), n.AdaptiveAvgPool3d((1, 2, None))), (2, 2, 5, 6, 6)),
    ("convtranspose3d", lambda n: n.Sequential(n.ConvTranspose3d(2, 4, 3, stride=2, padding=1, output_padding=1),
                                               n.AdaptiveMaxPool3d((2, 3, None))), (2, 2, 3, 2, 3)),
]


@pytest.mark.parametrize("name,make,shape", SMALL, ids=[m[0] for m in SMALL])
def test_small_modules_match_torch(name, make, shape):
    test_module_matches_torch(name, make, shape)
    assert repr(make(nn)) == repr(make(torch.nn))


def test_small_losses_match_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 5)).astype(np.float32), np.sign(rng.standard_normal((4, 5))).astype(np.float32)
    for make, yy in ((lambda n: n.HingeEmbeddingLoss(margin=0.3), y), (lambda n: n.SoftMarginLoss(), y),
                     (lambda n: n.MultiLabelSoftMarginLoss(reduction="none"), (y > 0).astype(np.float32))):
        a = tt.tensor(x, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        la, lb = make(nn)(a, tt.tensor(yy)), make(torch.nn)(b, torch.tensor(yy))
        assert_close(la, lb, rtol=1e-5, atol=1e-6)
        la.sum().backward()
        lb.sum().backward()
        assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-6)


def test_random_activations_and_new_module_reprs():
    tt.manual_seed(0)
    logits = tt.randn(64, 5, requires_grad=True)
    y = nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(1).detach().numpy(), np.ones(64), rtol=1e-5)
    h = nn.functional.gumbel_softmax(logits, hard=True)
    assert sorted(set(h.detach().numpy().reshape(-1).tolist())) == [0.0, 1.0] and (h.sum(1) == 1).all().item()
    (h * tt.arange(5.0)).sum().backward()  # straight-through: the soft sample's gradient reaches the logits
    assert logits.grad is not None and logits.grad.abs().sum().item() > 0
    x = -tt.rand(10000) - 0.1
    r = nn.RReLU(0.1, 0.3)(x) / x
    assert 0.1 <= r.min().item() and r.max().item() <= 0.3 and abs(r.mean().item() - 0.2) < 0.01
    assert tt.allclose(nn.RReLU(0.1, 0.3).eval()(x), x * 0.2)
    for make in (lambda n: n.AdaptiveMaxPool1d(3), lambda n: n.LPPool2d(2, 3), lambda n: n.ChannelShuffle(2),
                 lambda n: n.LocalResponseNorm(3), lambda n: n.RReLU(), lambda n: n.MultiMarginLoss(p=2),
                 lambda n: n.TripletMarginWithDistanceLoss(), lambda n: n.AdaptiveMaxPool2d(2, True)):
        assert repr(make(nn)) == repr(make(torch.nn))


@pytest.mark.filterwarnings("ignore:Default grid_sample")
@pytest.mark.parametrize("mode,nd", [("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("bilinear", 3),
                                     ("nearest", 3)])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(mode, nd, padding_mode, align_corners):
    rng = np.random.default_rng(0)
    if nd == 2:
        inp, grid = rng.standard_normal((2, 3, 5, 7)), rng.uniform(-1.3, 1.3, (2, 4, 6, 2))  # some points outside
    else:  # volumetric: (N, C, D, H, W) sampled at (x, y, z) points
        inp, grid = rng.standard_normal((2, 3, 4, 5, 6)), rng.uniform(-1.3, 1.3, (2, 3, 4, 2, 3))
    res = []
    for m in (tt, torch):
        x, g = m.tensor(inp, requires_grad=True), m.tensor(grid, requires_grad=True)
        out = m.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners)
        (out * m.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        res.append((out, x.grad, g.grad))
    assert_close(res[0][0], res[1][0], "float64")
    assert_close(res[0][1], res[1][1], "float64")
    if mode != "nearest":
        assert_close(res[0][2], res[1][2], "float64")


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_spatial_transformer_on_devices(align_corners):
    rng = np.random.default_rng(1)
    th2, th3 = rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 4))
    for th, size in ((th2, (2, 3, 5, 7)), (th3, (2, 1, 3, 4, 5))):
        a, b = tt.tensor(th, requires_grad=True), torch.tensor(th, requires_grad=True)
        ga = tt.nn.functional.affine_grid(a, size, align_corners)
        gb = torch.nn.functional.affine_grid(b, size, align_corners)
        assert_close(ga, gb, "float64")
        (ga ** 2).sum().backward()
        (gb ** 2).sum().backward()
        assert_close(a.grad, b.grad, "float64")
    # the spatial transformer pattern (affine_grid -> grid_sample) in float32 on a non-cpu device
    img = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
    theta = th2.astype(np.float32) * 0.5
    out_th = torch.nn.functional.grid_sample(torch.tensor(img), torch.nn.functional.affine_grid(
        torch.tensor(theta), (2, 3, 4, 6), align_corners), align_corners=align_corners)
    th_tt = tt.tensor(theta, device="mydev", requires_grad=True)
    out_tt = tt.nn.functional.grid_sample(tt.tensor(img, device="mydev"), tt.nn.functional.affine_grid(
        th_tt, (2, 3, 4, 6), align_corners), align_corners=align_corners)
    assert_close(out_tt.cpu(), out_th, atol=1e-5)
    out_tt.sum().backward()
    assert th_tt.grad.shape == (2, 2, 3)


def test_grid_sample_gradcheck_and_errors():
    rng = np.random.default_rng(2)
    x = tt.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    g = tt.tensor(rng.uniform(-0.9, 0.9, (1, 2, 2, 2)), requires_grad=True)
    assert tt.autograd.gradcheck(lambda a, b: tt.nn.functional.grid_sample(a, b, align_corners=False), (x, g))
    F = tt.nn.functional
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'cubic'"):
        F.grid_sample(x, g, mode="cubic")
    with pytest.raises(ValueError, match="expected padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(RuntimeError, match="same batch size"):
        F.grid_sample(x, tt.zeros(2, 2, 2, 2, dtype=tt.float64), align_corners=True)
    assert tt.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, mode="bicubic", align_corners=True), (x, g))
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(x.unsqueeze(2), tt.zeros(1, 1, 2, 2, 3, dtype=tt.float64), mode="bicubic", align_corners=True)
    with pytest.raises(ValueError, match="Expected a batch of 2D affine matrices of shape Nx2x3"):
        F.affine_grid(tt.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)
    with pytest.raises(ValueError, match="floating point type"):
        F.affine_grid(tt.zeros(1, 2, 3, dtype=tt.int64), (1, 1, 2, 2), align_corners=False)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_inverts_max_pool_like_torch(n):
    rng = np.random.default_rng(3)
    shape = (2, 3) + (6,) * n
    a = rng.standard_normal(shape)
    res = []
    for m in (tt, torch):
        x = m.tensor(a, requires_grad=True)
        pool = getattr(m.nn, f"MaxPool{n}d")(2, stride=2, return_indices=True)
        unpool = getattr(m.nn, f"MaxUnpool{n}d")(2, stride=2)
        out, idx = pool(x)
        up = unpool(out, idx)
        up_sized = unpool(out, idx, output_size=(7,) * n)
        (up * m.tensor(np.linspace(-1, 1, up.numel()).reshape(tuple(up.shape)))).sum().backward()
        res.append((up, up_sized, x.grad))
    for got, want in zip(res[0], res[1]):
        assert_close(got, want, "float64")
    F = tt.nn.functional
    x = tt.ones(1, 1, 2, 2)
    with pytest.raises(ValueError, match="invalid output_size"):
        F.max_unpool2d(x, tt.zeros(1, 1, 2, 2, dtype=tt.int64), 2, output_size=(9, 9))
    with pytest.raises(RuntimeError, match="found an invalid max index 16"):
        F.max_unpool2d(x, tt.full((1, 1, 2, 2), 16, dtype=tt.int64), 2)


def test_alpha_dropout_keeps_selu_statistics_and_matches_torch_in_eval():
    tt.manual_seed(0)
    x = tt.randn(200, 50, 4)
    for mod in (nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(0.2)):
        y = mod(x)
        assert abs(y.mean().item()) < 0.05 and abs(y.std().item() - 1) < 0.05  # self-normalizing
        mod.eval()
        assert mod(x) is x
    feat = nn.FeatureAlphaDropout(0.5)(x)
    changed = (feat != x).float().mean(2)  # whole channels are dropped or kept
    assert set(changed.unique().tolist()) <= {0.0, 1.0}
    assert tt.nn.functional.alpha_dropout(x, 1.0, True).abs().sum().item() == 0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        tt.nn.functional.alpha_dropout(x, 1.5, True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_torch(reduction):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 5))
    t = np.array([[3, 0, -1, 1, 2], [1, 1, 4, -1, -1], [0, 1, 2, 3, 4]])
    res = []
    for m in (tt, torch):
        x = m.tensor(a, requires_grad=True)
        loss = m.nn.MultiLabelMarginLoss(reduction=reduction)(x, m.tensor(t))
        loss.sum().backward()
        res.append((loss, x.grad, m.nn.functional.multilabel_margin_loss(m.tensor(a[0]), m.tensor(t[0]))))
    for got, want in zip(res[0], res[1]):
        assert_close(got, want, "float64")
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        tt.nn.functional.multilabel_margin_loss(tt.zeros(2, 3), tt.zeros(2, 2, dtype=tt.int64))


@pytest.mark.parametrize("name, args, shape", [
    ("LazyLinear", (3,), (4, 5)), ("LazyLinear", (3, False), (2, 4, 5)),
    ("LazyConv1d", (4, 3), (2, 3, 9)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)), ("LazyConv2d", (4, 3, 2, 1), (3, 6, 6)),
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)), ("LazyConvTranspose1d", (2, 3, 2), (2, 3, 5)),
    ("LazyConvTranspose2d", (2, 3), (2, 3, 4, 4)), ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 2, 2)), ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (1e-3, 0.2, False), (2, 3, 2, 2, 2)), ("LazyInstanceNorm1d", (), (2, 3, 6)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)), ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2))])
def test_lazy_modules_become_their_module_like_torch(name, args, shape):
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    m_th, m_tt = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    params = list(m_tt.parameters())
    opt = tt.optim.SGD(params, lr=0.1) if params else None  # built before the first call: trains the new objects
    assert m_tt.has_uninitialized_params()
    m_th(torch.tensor(x))
    m_tt(tt.tensor(x))
    assert type(m_tt).__name__ == type(m_th).__name__ == getattr(torch.nn, name).cls_to_become.__name__
    assert list(m_tt.state_dict()) == list(m_th.state_dict())
    for (k, a), (_, b) in zip(m_th.state_dict().items(), m_tt.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), k
    assert [p is q for p, q in zip(params, m_tt.parameters())] == [True] * len(params)
    copy_weights(m_th, m_tt)
    out_th, out_tt = m_th(torch.tensor(x)), m_tt(tt.tensor(x))
    assert_close(out_tt, out_th, atol=1e-5)
    if params:
        (out_tt ** 2).sum().backward()
        before = params[0].detach().clone()
        opt.step()
        assert not tt.equal(before, params[0].detach())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("flat_targets", [False, True])
def test_ctc_loss_matches_torch(reduction, flat_targets):
    rng = np.random.default_rng(6)
    logits = rng.standard_normal((12, 3, 5))
    padded = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 3, 1]])
    tl, il = [4, 2, 4], [12, 9, 4]  # the third sample cannot be aligned (3, 3, 3, 1 needs 6 frames)
    targets = np.concatenate([padded[0, :4], padded[1, :2], padded[2, :4]]) if flat_targets else padded
    for zero_infinity in (False, True):
        res = []
        for m in (tt, torch):
            x = m.tensor(logits, requires_grad=True)
            loss = m.nn.functional.ctc_loss(x.log_softmax(2), m.tensor(targets), m.tensor(il), m.tensor(tl),
                                            reduction=reduction, zero_infinity=zero_infinity)
            if zero_infinity:
                loss.sum().backward()
            res.append((loss, x.grad))
        assert_close(res[0][0], res[1][0], "float64")
        if zero_infinity:
            assert_close(res[0][1], res[1][1], "float64")


def test_ctc_loss_module_unbatched_and_blank():
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((10, 6))
    res = []
    for m in (tt, torch):
        x = m.tensor(logits, requires_grad=True)
        loss = m.nn.CTCLoss(blank=5)(x.log_softmax(1), m.tensor([1, 2, 2, 0]), m.tensor([10]), m.tensor([4]))
        loss.backward()
        res.append((loss, x.grad))
    for got, want in zip(res[0], res[1]):
        assert_close(got, want, "float64")
    with pytest.raises(RuntimeError, match="Expected input_lengths to have value at most 10"):
        tt.nn.functional.ctc_loss(tt.zeros(10, 1, 3), tt.tensor([[1]]), [11], [1])


def test_nested_module_repr_matches_torch():
    """Children of children are indented once per level, as torch's _addindent does."""
    for make in (lambda n: n.Sequential(n.Linear(1, 1), n.Sequential(n.Linear(1, 2), n.Sequential(n.ReLU())),
                                        n.ModuleDict({"a": n.LSTM(2, 3)})),
                 lambda n: n.TransformerEncoderLayer(8, 2), lambda n: n.MultiheadAttention(8, 2),
                 lambda n: n.LayerNorm(4, bias=False), lambda n: n.LayerNorm(4, elementwise_affine=False)):
        assert repr(make(nn)) == repr(make(torch.nn))


def test_sync_batchnorm_and_data_parallel_without_process_group():
    x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float32)
    for mode in ("train", "eval"):
        a, b = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
        getattr(a, mode)()
        getattr(b, mode)()
        assert_close(a(tt.tensor(x)), b(torch.tensor(x)), atol=1e-6)
        assert_close(a.running_mean, b.running_mean, atol=1e-6)
    for m, lib in ((tt, nn), (torch, torch.nn)):
        with pytest.raises(ValueError, match="expected at least 2D input"):
            lib.SyncBatchNorm(3)(m.zeros(3))
    m_tt = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(4)))
    m_th = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3), torch.nn.Sequential(torch.nn.BatchNorm1d(4)))
    bn = m_tt[1]
    s_tt, s_th = nn.SyncBatchNorm.convert_sync_batchnorm(m_tt), torch.nn.SyncBatchNorm.convert_sync_batchnorm(m_th)
    assert repr(s_tt) == repr(s_th) and list(s_tt.state_dict()) == list(s_th.state_dict())
    assert s_tt[1].weight is bn.weight and s_tt[1].running_mean is bn.running_mean  # shared, not copied
    dp_tt, dp_th = nn.DataParallel(nn.Linear(2, 3)), torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert repr(dp_tt) == repr(dp_th) and list(dp_tt.state_dict()) == list(dp_th.state_dict())
    assert dp_tt.device_ids == [] and tt.equal(dp_tt(tt.ones(1, 2)), dp_tt.module(tt.ones(1, 2)))
    with pytest.raises(ValueError, match="CUDA"):
        nn.DataParallel(nn.Linear(2, 3), device_ids=[0])


def test_adaptive_log_softmax_with_loss_matches_torch():
    rng = np.random.default_rng(0)
    m_th = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12, 20], div_value=2.0, head_bias=True)
    m_tt = nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 12, 20], div_value=2.0, head_bias=True)
    assert repr(m_tt) == repr(m_th) and list(m_tt.state_dict()) == list(m_th.state_dict())
    m_tt.load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in m_th.state_dict().items()})
    x = rng.standard_normal((9, 16)).astype(np.float32)
    t = np.array([0, 4, 5, 11, 12, 19, 20, 29, 3])
    x_th, x_tt = torch.tensor(x, requires_grad=True), tt.tensor(x, requires_grad=True)
    a, b = m_tt(x_tt, tt.tensor(t)), m_th(x_th, torch.tensor(t))
    assert_close(a.output, b.output, atol=1e-6)
    assert_close(a.loss, b.loss, atol=1e-6)
    a.loss.backward()
    b.loss.backward()
    assert_close(x_tt.grad, x_th.grad, atol=1e-6)
    for p, q in zip(m_tt.parameters(), m_th.parameters()):
        assert_close(p.grad, q.grad, atol=1e-6)
    assert_close(m_tt.log_prob(tt.tensor(x)), m_th.log_prob(torch.tensor(x)), atol=1e-6)
    for shift in (0.0, 3.0, 50.0):  # head argmax: shortlist only, mixed, clusters only
        with torch.no_grad():
            m_th.head.bias[5:] += shift
        m_tt.head.bias.data = tt.tensor(m_th.head.bias.detach().numpy())
        assert m_tt.predict(tt.tensor(x)).tolist() == m_th.predict(torch.tensor(x)).tolist()
    one_tt, one_th = m_tt(tt.tensor(x[0]), tt.tensor(t[0])), m_th(torch.tensor(x[0]), torch.tensor(t[0]))
    assert one_tt.output.shape == () and abs(one_tt.output.item() - one_th.output.item()) < 1e-5
    for lib, m in ((nn, tt), (torch.nn, torch)):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            lib.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 2])
        with pytest.raises(RuntimeError, match="Target values should be in"):
            lib.AdaptiveLogSoftmaxWithLoss(8, 10, [4])(m.zeros(2, 8), m.tensor([1, 10]))


def test_fractional_max_pool_matches_torch():
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        for shape, k, kw in (((2, 3, 9, 11), 3, dict(output_size=(4, 5))),
                             ((2, 3, 10, 10), (2, 3), dict(output_ratio=(0.5, 0.5))),
                             ((3, 7, 7), 2, dict(output_size=6)), ((2, 2, 5, 5), 2, dict(output_size=1))):
            x = rng.standard_normal(shape).astype(dt)
            u = rng.random((1 if len(shape) == 3 else shape[0], shape[-3], 2)).astype(dt)
            a, ai = tt.nn.functional.fractional_max_pool2d(tt.tensor(x), k, return_indices=True,
                                                           _random_samples=tt.tensor(u), **kw)
            b, bi = torch.nn.functional.fractional_max_pool2d(torch.tensor(x), k, return_indices=True,
                                                              _random_samples=torch.tensor(u), **kw)
            assert np.array_equal(a.numpy(), b.numpy()) and np.array_equal(ai.numpy(), bi.numpy()), (dt, shape)
    m_tt, m_th = nn.FractionalMaxPool2d(3, output_ratio=0.5), torch.nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert repr(m_tt) == repr(m_th)
    assert m_tt(tt.randn(1, 2, 10, 10)).shape == tuple(m_th(torch.randn(1, 2, 10, 10)).shape)
    for lib, m in ((nn, tt), (torch.nn, torch)):
        with pytest.raises(ValueError, match="requires specifying either an output"):
            lib.FractionalMaxPool2d(3)
        with pytest.raises(RuntimeError, match="too large relative to input"):
            lib.functional.fractional_max_pool2d(m.randn(1, 1, 7, 7), 3, output_size=6)


@pytest.mark.parametrize("device", ["cpu", "mydev"])
def test_gelu_extremes_and_output_modified_in_place_match_torch(device):
    """GELU at 0, tiny, very negative, infinite and NaN inputs (values and first-order gradients, which come
    from the saved output), and the gradient when the output was modified in place after the forward (it is
    then recomputed from the input, as torch's formula always is)."""
    import mydevice  # noqa: F401
    xs = np.array([0.0, -0.0, 1e-40, -1e-40, -14.0, -5.0, -3.9, 3.9, 0.7, np.inf, -np.inf, np.nan], np.float32)
    x_th = torch.tensor(xs, requires_grad=True)
    x_tt = tt.tensor(xs, device=device, requires_grad=True)
    y_th, y_tt = torch.nn.functional.gelu(x_th), tt.nn.functional.gelu(x_tt)
    assert_close(y_tt.cpu()[:-3], y_th[:-3].detach(), "float32")
    y_th.sum().backward()
    y_tt.sum().backward()
    np.testing.assert_allclose(x_tt.grad.cpu().numpy(), x_th.grad.numpy(), rtol=1.3e-6, atol=1e-5, equal_nan=True)
    a = np.random.default_rng(0).standard_normal(20).astype(np.float32)
    outs = []
    for m, dev in ((torch, "cpu"), (tt, device)):
        x = m.tensor(a, device=dev, requires_grad=True)
        y = m.nn.functional.gelu(x)
        y.mul_(3)
        y.sum().backward()
        outs.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-6)


def test_module_extra_state_to_empty_get_buffer_set_submodule_match_torch():
    def build(m):
        class WithState(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(2, 2)
                self.register_buffer("count", m.zeros(1))
                self.tag = "a"

            def get_extra_state(self):
                return {"tag": self.tag}

            def set_extra_state(self, state):
                self.tag = state["tag"]
        return WithState()
    for m in (torch, tt):
        a, b = build(m), build(m)
        a.tag = "b"
        sd = a.state_dict()
        assert list(sd) == ["count", "_extra_state", "lin.weight", "lin.bias"]
        b.load_state_dict(sd)
        assert b.tag == "b"
        with pytest.raises(RuntimeError, match="Missing key\\(s\\) in state_dict: \"_extra_state\""):
            b.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})
        assert b.get_buffer("count") is b.count
        with pytest.raises(AttributeError):
            b.get_buffer("nope")
        b.set_submodule("lin", m.nn.Linear(2, 3))
        assert b.lin.out_features == 3
        with m.device("meta"):
            big = m.nn.Linear(3, 4)
        assert big.weight.device.type == "meta"
        big.to_empty(device="cpu")
        assert big.weight.device.type == "cpu" and tuple(big.weight.shape) == (4, 3)
        assert isinstance(big.weight, m.nn.Parameter) and big.weight.requires_grad
        big.reset_parameters()
        assert big(m.ones(1, 3)).shape == (1, 4)


def test_full_backward_hooks_match_torch():
    """register_full_backward_hook sees (grad_input, grad_output) of each module and may replace grad_input;
    register_full_backward_pre_hook may replace grad_output; modules with two inputs, inputs that do not
    require grad (None entries, and torch's warning when none does), and removal."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((2, 4)).astype(np.float32)
    torch.manual_seed(0)
    nets = {torch: torch.nn.ModuleList([torch.nn.Linear(3, 4), torch.nn.Bilinear(4, 4, 2)])}
    nets[tt] = tt.nn.ModuleList([tt.nn.Linear(3, 4), tt.nn.Bilinear(4, 4, 2)])
    nets[tt].load_state_dict({k: tt.tensor(v.detach().numpy()) for k, v in nets[torch].state_dict().items()})
    logs = {}
    for m, net in nets.items():
        log = logs[m] = []

        def rec(name):
            def hook(mod, gi, go):
                log.append((name, [None if g is None else g.detach().numpy().round(5) for g in gi],
                            [g.detach().numpy().round(5) for g in go]))
            return hook
        h0 = net[0].register_full_backward_hook(rec("lin"))
        net[1].register_full_backward_hook(rec("bil"))
        net[1].register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        net[0].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0.5,))  # halves x's gradient
        xx = m.tensor(x, requires_grad=True)
        h = net[0](xx)
        net[1](h, m.tensor(y)).sum().backward()
        log.append(("x.grad", [xx.grad.numpy().round(5)], []))
        h0.remove()
        with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect"):
            net[1](m.tensor(y), m.tensor(y)).sum().backward()
    assert len(logs[tt]) == len(logs[torch])
    for (n1, gi1, go1), (n2, gi2, go2) in zip(logs[tt], logs[torch]):
        assert n1 == n2
        assert [g is None for g in gi1] == [g is None for g in gi2], n1
        for a, b in zip(gi1 + go1, gi2 + go2):
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=n1)


def test_state_dict_hooks_match_torch():
    """state_dict pre/post hooks (a post hook renaming keys), and a load_state_dict post hook that clears an
    expected missing key before the strict check."""
    results = []
    for m in (torch, tt):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Linear(2, 1))
        calls = []
        net[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))

        def rename(mod, sd, prefix, meta):
            calls.append(("post", prefix))
            for k in [k for k in sd if k.startswith(prefix + "bias")]:
                sd[k.replace("bias", "b")] = sd.pop(k)
        net[1].register_state_dict_post_hook(rename)
        keys = list(net.state_dict())

        def forgive(mod, incompatible):
            for k in list(incompatible.missing_keys):
                if k.endswith("1.bias"):
                    incompatible.missing_keys.remove(k)
        net.register_load_state_dict_post_hook(forgive)
        sd = {k: v for k, v in net.state_dict().items() if not k.startswith("1.b")}
        res = net.load_state_dict(sd)
        results.append((calls, keys, list(res.missing_keys), list(res.unexpected_keys)))
    assert results[0] == results[1]


@pytest.mark.parametrize("device", ["cpu", "mydev"] + (["opencl"] if tt.opencl.is_available() else []))
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_interpolate_antialias_matches_torch(device, mode):
    """Antialiased resizing (PIL's filters stretched by the downscale factor, torch's ``_upsample_*_aa``):
    values and gradients for down- and upscaling, a scale_factor, align_corners, and torch's errors."""
    import mydevice  # noqa: F401
    x = np.random.default_rng(0).standard_normal((2, 3, 17, 13)).astype(np.float32)
    cases = [dict(size=(5, 7)), dict(size=(40, 9)), dict(scale_factor=(2.5, 0.45)), dict(size=(1, 1))]
    if mode != "lanczos":
        cases.append(dict(size=(5, 7), align_corners=True))
    for kw in cases:
        a = tt.tensor(x, device=device, requires_grad=True)
        b = torch.tensor(x, requires_grad=True)
        ya = tt.nn.functional.interpolate(a, mode=mode, antialias=True, **kw)
        yb = torch.nn.functional.interpolate(b, mode=mode, antialias=True, **kw)
        np.testing.assert_allclose(ya.detach().cpu().numpy(), yb.detach().numpy(), rtol=1e-5, atol=1e-5, err_msg=str(kw))
        g = np.random.default_rng(1).standard_normal(tuple(yb.shape)).astype(np.float32)
        ya.backward(tt.tensor(g, device=device))
        yb.backward(torch.tensor(g))
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=str(kw))
    for m in (tt, torch):
        with pytest.raises(ValueError, match="Anti-alias option is restricted"):
            m.nn.functional.interpolate(m.ones(1, 2, 8), size=4, mode="linear", antialias=True)
        with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
            m.nn.functional.interpolate(m.ones(1, 1, 8, 8), size=4, mode="lanczos")


def test_linear_cross_entropy_loss_module_matches_torch():
    """nn.LinearCrossEntropyLoss: state_dict names and shapes, repr, values and gradients (K-dim logits too)."""
    rng = np.random.default_rng(0)
    for kw, tgt in ((dict(bias=True), rng.integers(0, 3, 5)),
                    (dict(out_features=(2,), reduction="sum", label_smoothing=0.1), rng.integers(0, 3, (5, 2)))):
        mods = [m.nn.LinearCrossEntropyLoss(4, 3, **kw).double() for m in (tt, torch)]
        sd = mods[1].state_dict()
        assert {k: tuple(v.shape) for k, v in mods[0].state_dict().items()} == {k: tuple(v.shape) for k, v in sd.items()}
        mods[0].load_state_dict({k: tt.tensor(v.numpy()) for k, v in sd.items()})
        assert repr(mods[0]) == repr(mods[1])
        x = rng.standard_normal((5, 4))
        outs = []
        for m, mod in zip((tt, torch), mods):
            xi = m.tensor(x, requires_grad=True)
            loss = mod(xi, m.tensor(tgt))
            loss.backward()
            outs.append((loss.item(), xi.grad.numpy(), mod.linear.weight.grad.numpy()))
        np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
        for a, b in zip(outs[0][1:], outs[1][1:]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    for m in (tt, torch):
        with pytest.raises(RuntimeError, match="expected weight shape to be"):
            m.nn.LinearCrossEntropyLoss(4, 3, weight=m.ones(2))
        with pytest.raises(RuntimeError, match="expected equal input and linear_weight last dimensions"):
            m.nn.functional.linear_cross_entropy(m.ones(2, 4), m.ones(3, 5), m.zeros(2, dtype=m.int64))


def test_module_api_details_match_torch():
    """Forward hooks with kwargs and always_call, Sequential's list methods, ParameterList/Dict reprs, and
    load_state_dict's handling of a batch norm checkpoint without num_batches_tracked, against torch."""
    res = []
    for m in (tt, torch):
        got = []
        lin = m.nn.Linear(1, 1)
        seen = []
        lin.register_forward_pre_hook(lambda mod, a, k: ((a[0] * 2,), k), with_kwargs=True)
        lin.register_forward_hook(lambda mod, a, k, o: (seen.append(sorted(k)), o * 0)[1], with_kwargs=True)
        got += [lin(m.ones(1, 1)).tolist(), seen]
        bad = m.nn.Linear(1, 1)
        bad.register_forward_hook(lambda mod, a, o: seen.append(o), always_call=True)
        with pytest.raises(RuntimeError):
            bad(m.ones(1, 2))
        got.append(seen[-1])
        pre = m.nn.Linear(1, 1)
        pre.register_forward_pre_hook(lambda mod, a, k: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="must return None or a tuple of"):
            pre(m.ones(1, 1))
        seq = m.nn.Sequential(m.nn.ReLU())
        seq.extend([m.nn.Tanh()]).insert(0, m.nn.Sigmoid())
        popped = seq.pop(1)
        got += [repr(seq), type(popped).__name__, repr(seq + m.nn.Sequential(m.nn.ReLU()))]
        got.append(repr(m.nn.ParameterList([m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.ones(2, 3))])))
        got.append(repr(m.nn.ParameterDict({"a": m.nn.Parameter(m.ones(2))})))
        net = m.nn.Sequential(m.nn.Linear(3, 2), m.nn.BatchNorm1d(2))
        sd = net.state_dict()
        got.append(dict(sd._metadata))
        plain = {k: v for k, v in sd.items() if not k.endswith("num_batches_tracked")}  # no metadata: old format
        got.append(repr(net.load_state_dict(plain, strict=False)))
        with pytest.raises(RuntimeError, match="num_batches_tracked"):
            sd2 = type(sd)((k, v) for k, v in sd.items() if not k.endswith("num_batches_tracked"))
            sd2._metadata = sd._metadata  # version 2 recorded: the counter is required
            net.load_state_dict(sd2)
        res.append(got)
    assert res[0] == res[1]


@pytest.mark.parametrize("device", ["cpu", "mydev"])
def test_embedding_scale_grad_by_freq_matches_torch(device):
    import mydevice  # noqa: F401
    w0 = np.random.default_rng(0).standard_normal((5, 3))
    res = []
    for m, dev in ((tt, device), (torch, "cpu")):
        w = m.tensor(w0, device=dev, requires_grad=True)
        idx = m.tensor([[0, 0, 2], [4, 0, 2]], device=dev)
        out = m.nn.functional.embedding(idx, w, padding_idx=4, scale_grad_by_freq=True)
        (out * m.arange(1.0, 4.0, dtype=m.float64, device=dev)).sum().backward()
        res.append((out.detach().cpu().numpy(), w.grad.cpu().numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])
    for m in (tt, torch):
        with pytest.raises(RuntimeError, match="All input tensors should have same dimension"):
            m.nn.functional.margin_ranking_loss(m.ones(8), m.ones(8), m.tensor(1.0))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy", "soft_margin_loss",
                                  "kl_div", "poisson_nll_loss"])
@pytest.mark.parametrize("legacy", [dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=False),
                                    dict(size_average=True)])
def test_legacy_size_average_and_reduce_override_reduction_like_torch(name, legacy):
    rng = np.random.default_rng(0)
    a, b = rng.random((4, 3)), rng.random((4, 3))
    res = []
    for m in (tt, torch):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            res.append(getattr(m.nn.functional, name)(m.tensor(a), m.tensor(b), **legacy).numpy())
    assert res[0].shape == res[1].shape
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)
    # positional, as old scripts pass them: nll_loss(input, target, weight, size_average)
    logp, t = tt.tensor(a).log(), tt.tensor([0, 1, 2, 0])
    with pytest.warns(UserWarning):
        s = tt.nn.functional.nll_loss(logp, t, None, False)
    np.testing.assert_allclose(s.item(), tt.nn.functional.nll_loss(logp, t, reduction="sum").item())


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_elementwise_weight_matches_torch(name, reduction):
    rng = np.random.default_rng(1)
    a, b, w = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.random((4, 3))
    res = []
    for m in (tt, torch):
        x = m.tensor(a, requires_grad=True)
        out = getattr(m.nn.functional, name)(x, m.tensor(b), reduction=reduction, weight=m.tensor(w))
        out.sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy()))
    for p, q in zip(*res):
        np.testing.assert_allclose(p, q, rtol=1e-12)
    for m in (tt, torch):
        with pytest.raises(ValueError, match="Weights and input must have the same size"):
            getattr(m.nn.functional, name)(m.tensor(a), m.tensor(b), weight=m.ones(3))


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (2, 3, 4, 5)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_without_dim_uses_torchs_implicit_dim(name, shape):
    # PyTorch's legacy rule picks dim 0 for 1-D and 3-D inputs and dim 1 otherwise, not the last dim
    x = np.random.default_rng(2).standard_normal(shape)
    res = []
    for m in (tt, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            res.append(getattr(m.nn.functional, name)(m.tensor(x)).numpy())
        with pytest.warns(UserWarning, match="Implicit dimension choice"):
            res.append(getattr(m.nn, {"softmax": "Softmax", "log_softmax": "LogSoftmax", "softmin": "Softmin"}[name])()(
                m.tensor(x)).numpy())
    np.testing.assert_allclose(res[0], res[2], rtol=1e-12)
    np.testing.assert_allclose(res[1], res[3], rtol=1e-12)


def test_functional_relu_inplace_and_signature_details_match_torch():
    for m in (tt, torch):
        x = m.tensor([-1.0, 2.0, -3.0])
        y = m.nn.functional.relu(x, inplace=True)
        assert y is x and x.tolist() == [0.0, 2.0, 0.0]
        a = m.tensor([[3.0, 4.0]])
        out = m.empty(1, 2)
        assert m.nn.functional.normalize(a, out=out) is out
        np.testing.assert_allclose(out.numpy(), [[0.6, 0.8]])
        with pytest.raises(TypeError):
            m.nn.ConstantPad2d(1)  # the fill value is required
        assert m.nn.ConstantPad1d(1, 2.5)(m.zeros(1, 1)).tolist() == [[2.5, 0.0, 2.5]]
        gn = m.nn.GroupNorm(2, 4, bias=False)
        assert gn.bias is None and [k for k, _ in gn.named_parameters()] == ["weight"]
        lazy = m.nn.LazyBatchNorm1d(bias=False)
        lazy(m.randn(3, 5))
        assert lazy.bias is None and tuple(lazy.weight.shape) == (5,)


def test_module_reprs_match_torch():
    def build(n):
        return [n.GroupNorm(2, 4), n.GroupNorm(2, 4, affine=False), n.GELU(approximate="tanh"), n.GELU(), n.Bilinear(2, 3, 4),
                n.Conv1d(2, 3, 3, padding="same", dilation=2, padding_mode="reflect"), n.AvgPool1d(3),
                n.Embedding(5, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True), n.Unfold(2), n.Fold(4, 2),
                n.ModuleList([n.Linear(2, 2), n.Linear(2, 2), n.ReLU(), n.Linear(2, 2)]), n.ModuleList(),
                n.TransformerEncoder(n.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, enable_nested_tensor=False)]
    for a, b in zip(build(torch.nn), build(nn)):
        assert repr(b) == repr(a)


@pytest.mark.parametrize("make,shape", [(lambda n: n.Linear(4, 3), (2, 4)),
                                        (lambda n: n.Conv2d(2, 3, 3), (1, 2, 5, 5)),
                                        (lambda n: n.ConvTranspose2d(2, 3, 3), (1, 2, 4, 4))])
def test_hook_based_spectral_norm_matches_torch(make, shape):
    m_th, m_tt = same_module(make)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    res = []
    for m, mod in ((torch, m_th), (tt, m_tt)):
        mod.double()
        m.nn.utils.spectral_norm(mod)
        assert list(mod.state_dict().keys())[-3:] == ["weight_orig", "weight_u", "weight_v"]
        mod.weight_u.copy_(m.tensor(np.linspace(1, 2, mod.weight_u.shape[0])))
        mod.weight_v.copy_(m.tensor(np.linspace(-1, 1, mod.weight_v.shape[0])))
        for _ in range(3):  # training mode: each call runs one power-iteration step
            out = mod(m.tensor(x))
            out.sum().backward()
        mod.eval()
        ev = mod(m.tensor(x)).detach().numpy()
        m.nn.utils.remove_spectral_norm(mod)
        res.append((out.detach().numpy(), mod.weight.detach().numpy(), mod.weight_u.numpy() if hasattr(mod, "weight_u")
                    else None, ev))
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
            m.nn.utils.remove_spectral_norm(mod)
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-10)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-10)
    np.testing.assert_allclose(res[1][3], res[0][3], rtol=1e-10)


def test_total_norm_and_clipping_helpers_match_torch():
    rng = np.random.default_rng(3)
    g = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    res = []
    for m in (torch, tt):
        ps = [m.nn.Parameter(m.zeros(*a.shape, dtype=m.float64)) for a in g]
        for p, a in zip(ps, g):
            p.grad = m.tensor(a)
        total = m.nn.utils.get_total_norm([p.grad for p in ps], 3.0)
        m.nn.utils.clip_grads_with_norm_(ps, 1.5, total)
        with pytest.warns(FutureWarning):
            t2 = m.nn.utils.clip_grad_norm(ps, 0.5)
        res.append([total.item(), t2.item()] + [p.grad.numpy() for p in ps])
        with pytest.raises(RuntimeError, match="non-finite"):
            m.nn.utils.get_total_norm([m.tensor([float("inf")])], error_if_nonfinite=True)
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_init_sparse_and_deprecated_names():
    for m in (torch, tt):
        w = m.empty(10, 4)
        m.nn.init.sparse_(w, 0.3)
        assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
            m.nn.init.sparse_(m.empty(2, 2, 2), 0.1)
        with pytest.warns(FutureWarning, match="nn.init.constant` is now deprecated"):
            m.nn.init.constant(w, 2.0)
        assert (w == 2).all()
