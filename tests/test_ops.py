"""Differential tests: every op in the op database against PyTorch (values, dtypes, gradients), plus gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import DT, TOL, assert_close, np_data, pair, torch
from op_db import OPS

# opencl joins when a platform exists (CI installs PoCL); tests/test_opencl.py reports when it does not; webgpu
# when a WebGPU adapter exists (CI installs Mesa's lavapipe), tests/test_webgpu.py likewise
DEVICES = ["cpu", "mydev"] + (["opencl"] if tt.opencl.is_available() else []) + \
    (["webgpu"] if tt.webgpu.is_available() else [])
# the dtypes a device has, where it lacks some: WebGPU has no 64-bit floats nor 8-bit storage (its int64 is
# narrowed to int32, so int64 ops run on it)
DEVICE_DTYPES = {"webgpu": frozenset({"float32", "int32", "int64", "bool", "float16"})}


# ops that need float64 on the device itself, so a device without it refuses them with its dtype TypeError (as
# PyTorch's MPS device does): float_power and a sum to float64 ask for it, cat_promote joins a float64 operand, unique's
# sample casts to double, and slogdet/matrix_exp widen float32 to float64 internally for accuracy. Checked to raise.
DEVICE_FLOAT64_OPS = {"webgpu": frozenset({"float_power", "sum_dtype", "cat_promote", "unique", "linalg_slogdet",
                                           "linalg_matrix_exp"})}


def device_dtypes(op, device):
    """The dtypes of ``op`` the op database runs on ``device``."""
    have = DEVICE_DTYPES.get(device)
    return [d for d in op.dtypes if have is None or d in have]
# the op database's device list: webgpu's cases are a sweep (CI runs one in three: lavapipe's launches are slow on a
# shared CPU, and the other devices already run every case)
OPDB_DEVICES = [pytest.param(d, marks=pytest.mark.sweep) if d == "webgpu" else d for d in DEVICES]
# cuda: collected everywhere, marked, and skipped with the reason where there is no NVIDIA GPU (tests/conftest.py)
CUDA = pytest.param("cuda", marks=pytest.mark.cuda)


def make_inputs(op, shapes, dtype, noncontig, requires_grad, seed=0):
    xs, ys = [], []
    for i, shp in enumerate(shapes):
        if i in op.int_inputs:
            a = np.random.default_rng(seed + i).integers(0, op.int_inputs[i], shp).astype(np.int64)
            xs.append(tt.tensor(a))
            ys.append(torch.tensor(a))
            continue
        a = np_data(tuple(reversed(shp)) if noncontig and len(shp) >= 2 else shp, dtype, op.low, op.high, seed + i)
        x = tt.tensor(a).to(DT[dtype][0])
        y = torch.tensor(a).to(DT[dtype][1])
        if noncontig and len(shp) >= 2:
            perm = tuple(range(len(shp) - 1, -1, -1))
            x, y = x.permute(perm), y.permute(perm)
        if requires_grad:
            x.requires_grad_(True)
            y.requires_grad_(True)
        xs.append(x)
        ys.append(y)
    return xs, ys


def run_both(op, xs, ys):
    try:
        expected = op.fn(torch, *ys)
    except Exception as e:  # torch rejects the input: tinytorch must reject it with the same exception type
        with pytest.raises(type(e)):
            op.fn(tt, *xs)
        return None, None
    return op.fn(tt, *xs), expected


UNIT_ROUNDOFF = {"float32": 2.0 ** -24, "float64": 2.0 ** -53}


def summation_bounds(op, ys, w=None):
    """For a multilinear op: per element of the output (``w`` None) or of each input's gradient (``w`` the upstream
    weights), Higham's bound on the rounding error of a K-term sum of products in any order, K * u * sum|a_i b_i|
    (torch's and ours each within it, so the two within twice it). sum|a_i b_i| is the op on |inputs| (and |w|),
    K the op on ones, both in float64. Returns a list of numpy arrays, or None entries for inputs without grad."""
    def run(make):
        xs = [make(y.detach()).to(torch.float64).requires_grad_(w is not None and y.requires_grad) for y in ys]
        out = op.fn(torch, *xs)
        if w is None:
            return [out.detach().numpy()]
        (out * make(torch.tensor(w)).to(torch.float64)).sum().backward()
        return [None if x.grad is None else x.grad.numpy() for x in xs]
    dtype = str(ys[0].dtype).replace("torch.", "")
    u = UNIT_ROUNDOFF.get(dtype, 0.0)
    return [None if s is None else 2 * k * u * s
            for s, k in zip(run(torch.abs), run(torch.ones_like))]


def assert_within(got, expected, dtype, op, bound, msg):
    """assert_close with the op's tolerance widened, element by element, by a rounding-error bound."""
    assert tuple(got.shape) == tuple(expected.shape) and str(got.dtype) == str(expected.dtype), msg
    r, a = TOL[dtype]
    r, a = op.rtol if op.rtol is not None else r, op.atol if op.atol is not None else a
    g, e = got.detach().numpy().astype(np.float64), expected.detach().numpy().astype(np.float64)
    bad = ~(np.abs(g - e) <= a + r * np.abs(e) + bound)
    assert not bad.any(), f"{msg}: {int(bad.sum())} elements outside the bound, e.g. ours {g[bad][:3]} torch {e[bad][:3]}"


@pytest.mark.parametrize("device", OPDB_DEVICES + [CUDA])
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_forward(op, device):
    if op.name in DEVICE_FLOAT64_OPS.get(device, ()):
        xs, _ = make_inputs(op, op.shapes[0], "float32", False, False)
        with pytest.raises(TypeError, match="doesn't support float64"):
            op.fn(tt, *[x.to(device) for x in xs])
        return
    for dtype in device_dtypes(op, device):
        for shapes in op.shapes:
            for noncontig in (False, True):
                xs, ys = make_inputs(op, shapes, dtype, noncontig, False)
                xs = [x.to(device) for x in xs]
                got, expected = run_both(op, xs, ys)
                if expected is None:
                    continue
                msg = f"{op.name} {dtype} {shapes} noncontig={noncontig}"
                if op.multilinear and dtype in UNIT_ROUNDOFF:
                    assert_within(got.cpu(), expected, dtype, op, summation_bounds(op, ys)[0], msg)
                else:
                    assert_close(got.cpu(), expected, dtype, op.rtol, op.atol, msg=msg)


@pytest.mark.parametrize("device", OPDB_DEVICES + [CUDA])
@pytest.mark.parametrize("op", [o for o in OPS if o.grad], ids=lambda o: o.name)
def test_backward(op, device):
    if op.name in DEVICE_FLOAT64_OPS.get(device, ()):
        return  # test_forward checks that the device refuses it
    for dtype in [d for d in device_dtypes(op, device) if d in ("float32", "float64")]:
        for shapes in op.shapes:
            xs, ys = make_inputs(op, shapes, dtype, noncontig=True, requires_grad=False)
            xs = [x.to(device).requires_grad_(x.is_floating_point() and i not in op.int_inputs)
                  for i, x in enumerate(xs)]
            ys = [y.requires_grad_(y.is_floating_point() and i not in op.int_inputs) for i, y in enumerate(ys)]
            try:
                expected = op.fn(torch, *ys)
            except RuntimeError:  # torch has no derivative for some argument (e.g. a loss weight): nothing to compare
                continue
            got = op.fn(tt, *xs)
            if not expected.requires_grad:
                continue
            w = np.random.default_rng(7).standard_normal(tuple(expected.shape))
            (got * tt.tensor(w).to(got.dtype).to(device)).sum().backward()
            (expected * torch.tensor(w).to(expected.dtype)).sum().backward()
            bounds = summation_bounds(op, ys, w) if op.multilinear else [None] * len(ys)
            for i, (x, y) in enumerate(zip(xs, ys)):
                if y.grad is None:
                    assert x.grad is None or i in op.int_inputs, f"{op.name}: unexpected grad for input {i}"
                    continue
                assert x.grad is not None, f"{op.name}: missing grad for input {i}"
                assert x.grad.device == x.device
                msg = f"{op.name} grad {i} {dtype} {shapes}"
                if bounds[i] is not None:
                    assert_within(x.grad.cpu(), y.grad, dtype, op, bounds[i], msg)
                else:
                    assert_close(x.grad.cpu(), y.grad, dtype, op.rtol, op.atol, msg=msg)


@pytest.mark.parametrize("op", [o for o in OPS if o.grad and o.gradcheck and "float64" in o.dtypes],
                         ids=lambda o: o.name)
def test_gradcheck(op):
    shapes = next(s for s in op.shapes if all(0 not in shp for shp in s))
    xs, _ = make_inputs(op, shapes, "float64", False, True, seed=3)
    xs = [x.detach().contiguous().requires_grad_(x.requires_grad) for x in xs]
    assert tt.autograd.gradcheck(lambda *a: op.fn(tt, *a), xs, eps=1e-6, atol=1e-5, rtol=1e-4)


DOUBLE = ["exp", "log", "sqrt", "tanh", "sigmoid", "mul", "div", "pow", "matmul", "softmax", "log_softmax", "sum_dim",
          "gelu", "conv2d", "max_pool2d", "layer_norm", "cross_entropy", "nll_loss_weight", "linear",
          "softmax_weighted", "log_softmax_weighted", "nll_loss_weighted",
          "gelu_tanh", "gelu_weighted", "gelu_tanh_weighted", "getitem_int_tensor", "narrow", "cat",
          "linalg_inv", "linalg_det", "linalg_solve", "linalg_cholesky", "linalg_eigh", "linalg_svd", "linalg_qr"]


@pytest.mark.parametrize("op", [o for o in OPS if o.name in DOUBLE], ids=lambda o: o.name)
def test_double_backward(op):
    """Backward formulas are tinytorch ops, so the gradient of a gradient matches torch."""
    shapes = op.shapes[0]
    xs, ys = make_inputs(op, shapes, "float64", False, True, seed=5)
    got, expected = op.fn(tt, *xs), op.fn(torch, *ys)
    fx = [x for i, x in enumerate(xs) if i not in op.int_inputs]
    fy = [y for i, y in enumerate(ys) if i not in op.int_inputs]
    gx = tt.autograd.grad(got.sum() if got.ndim else got, fx, create_graph=True)
    gy = torch.autograd.grad(expected.sum() if expected.ndim else expected, fy, create_graph=True)
    sx = sum((g * g).sum() for g in gx)
    sy = sum((g * g).sum() for g in gy)
    if not sx.requires_grad:  # the gradient does not depend on the inputs (piecewise-linear ops)
        ggy = torch.autograd.grad(sy, fy, allow_unused=True) if sy.requires_grad else [None] * len(fy)
        assert all(g is None or not g.any() for g in ggy), f"{op.name}: torch has a nonzero second derivative"
        return
    ggx = tt.autograd.grad(sx, fx, allow_unused=True)
    ggy = torch.autograd.grad(sy, fy, allow_unused=True)
    for a, b in zip(ggx, ggy):
        if b is None:
            continue
        assert_close(a, b, "float64", 1e-8, 1e-10, msg=f"{op.name} double backward")


@pytest.mark.parametrize("device,dtype", [(d, t) for d in DEVICES for t in ("float32", "float64", "bfloat16")
                                          if not (d == "opencl" and t == "bfloat16") and  # opencl has no bfloat16
                                          t in DEVICE_DTYPES.get(d, (t,))] +
                         [pytest.param("cuda", t, marks=pytest.mark.cuda) for t in ("float32", "float64", "bfloat16")])
def test_relu_gradient_at_nan_and_zero_matches_torch(device, dtype):
    """relu's gradient is threshold_backward: 0 where the output is <= 0 (also for a NaN gradient there), the
    gradient where the input is NaN; and it has a derivative of its own (double backward)."""
    x = np.array([-1.0, -0.0, 0.0, 1.0, np.nan, 2.0, -3.0, 0.5], np.float32)
    g = np.array([1.0, np.nan, 2.0, 3.0, 4.0, np.nan, np.nan, -1.0], np.float32)
    t_dt, th_dt = DT[dtype]
    a = tt.tensor(x, device=device).to(t_dt).requires_grad_()
    b = torch.tensor(x).to(th_dt).requires_grad_()
    tt.relu(a).backward(tt.tensor(g, device=device).to(t_dt))
    torch.relu(b).backward(torch.tensor(g).to(th_dt))
    assert_close(a.grad.cpu(), b.grad, dtype)
    if dtype == "float64":
        c = tt.tensor([-1.5, 0.5, 2.0], dtype=tt.float64, device=device, requires_grad=True)
        assert tt.autograd.gradgradcheck(lambda t: tt.relu(t) * t, (c,))


@pytest.mark.parametrize("device", ["cpu", "mydev"])  # the fused kernel (cpu) and the decomposition (mydev)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layer_norm_half_precision(device, dtype):
    """Half-precision layer_norm accumulates its statistics in float32, as PyTorch does: values and gradients."""
    xs, ys = [], []
    for shape, seed in (((3, 8), 0), ((8,), 1), ((8,), 2)):
        x, y = pair(shape, dtype, seed=seed)
        xs.append(x.to(device).requires_grad_())
        ys.append(y.requires_grad_())
    got = tt.nn.functional.layer_norm(xs[0], (8,), xs[1], xs[2])
    expected = torch.nn.functional.layer_norm(ys[0], (8,), ys[1], ys[2])
    assert_close(got.cpu(), expected, dtype)
    w = np.random.default_rng(3).standard_normal((3, 8))
    (got * tt.tensor(w, device=device).to(got.dtype)).sum().backward()
    (expected * torch.tensor(w).to(expected.dtype)).sum().backward()
    for a, b in zip(xs, ys):
        assert_close(a.grad.cpu(), b.grad, dtype, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("device,dtype", [(d, t) for d in DEVICES for t in ("float32", "float64")
                                          if t in DEVICE_DTYPES.get(d, (t,))] +
                         [pytest.param("cuda", t, marks=pytest.mark.cuda) for t in ("float32", "float64")])
def test_softmax_special_rows_match_torch(device, dtype):
    """Rows of -inf, NaN, +inf and huge values among ordinary ones, in an input large enough (>= 4096 elements)
    for the cpu backend's unshifted-exp path: each such row must come out as torch's, the others unharmed."""
    a = np.random.default_rng(0).standard_normal((96, 64)).astype(dtype)
    a[1] = -np.inf
    a[2, 5] = np.nan
    a[3, 7] = np.inf
    a[4, :2] = np.inf
    a[5] += 1e4
    a[6] -= 1e4
    a[7, 1:] = -np.inf
    for fn in ("softmax", "log_softmax"):
        got = getattr(tt, fn)(tt.tensor(a, device=device), -1)
        assert_close(got.cpu(), getattr(torch, fn)(torch.tensor(a), -1), dtype, msg=fn)


def test_gamma_family_matches_mpmath():
    """lgamma, digamma, polygamma, the Hurwitz zeta and the Bessel functions i0 / i1 against mpmath's arbitrary-precision values in float64
    (torch's trigamma itself is only good to ~1e-10), including negative non-integer arguments."""
    mpmath = pytest.importorskip("mpmath")
    xs = [0.05, 0.5, 1.0, 1.54375, 2.5, 7.3, 15.0, 150.0, -0.5, -1.7, -2.25]
    x = tt.tensor(xs, dtype=tt.float64)
    checks = [(tt.lgamma(x), [float(mpmath.log(abs(mpmath.gamma(v)))) for v in xs]),
              (tt.digamma(x), [float(mpmath.digamma(v)) for v in xs])]
    for n in (1, 2, 3):
        checks.append((tt.polygamma(n, x), [float(mpmath.polygamma(n, v)) for v in xs]))
    checks.append((tt.special.zeta(tt.tensor([1.5, 2.0, 4.0], dtype=tt.float64), tt.tensor([0.3, 2.2, -1.5], dtype=tt.float64)),
                   [float(mpmath.zeta(1.5, 0.3)), float(mpmath.zeta(2.0, 2.2)), float(mpmath.zeta(4.0, -1.5))]))
    bx = [0.5, -1.7, 12.0, -19.9, 29.9, 30.0, 31.0, 80.0, 300.0]
    b = tt.tensor(bx, dtype=tt.float64)
    checks.append((tt.special.i0(b), [float(mpmath.besseli(0, v)) for v in bx]))
    checks.append((tt.special.i1(b), [float(mpmath.besseli(1, v)) for v in bx]))
    checks.append((tt.special.i1e(b * 10), [float(mpmath.besseli(1, 10 * v) * mpmath.exp(-abs(10 * v))) for v in bx]))
    for got, want in checks:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-14)


def test_histogram_and_tensor_method_spellings_match_torch():
    x = np.random.default_rng(0).standard_normal(50)
    w = np.random.default_rng(1).random(50)
    cases = [((x,), dict(bins=5)), ((x,), dict(bins=4, range=(-1.0, 1.0))), ((x,), dict(bins=6, density=True)),
             ((np.array([1.0, 1.0]),), dict(bins=2)), ((np.zeros(0),), dict(bins=2))]
    for (a,), kw in cases:
        got, want = tt.histogram(tt.tensor(a), **kw), torch.histogram(torch.tensor(a), **kw)
        assert_close(got.hist, want.hist, "float64", msg=str(kw))
        assert_close(got.bin_edges, want.bin_edges, "float64", msg=str(kw))
    edges = [-2.0, 0.0, 0.5, 3.0]
    got = tt.tensor(x).histogram(tt.tensor(edges, dtype=tt.float64), weight=tt.tensor(w))
    want = torch.tensor(x).histogram(torch.tensor(edges, dtype=torch.float64), weight=torch.tensor(w))
    assert_close(got.hist, want.hist, "float64")
    v = [-1.0, 0.2, 2.0]
    assert_close(tt.tensor(v).hardshrink(0.5), torch.tensor(v).hardshrink(0.5))
    assert_close(tt.tensor(v).prelu(tt.tensor([0.25])), torch.tensor(v).prelu(torch.tensor([0.25])))
    assert tt.ones(2).cfloat().dtype == tt.complex64 and tt.ones(2).cdouble().dtype == tt.complex128
    e = tt.ones(2, dtype=tt.float64).new_empty_strided((2, 3, 4), (1, 2, 6))
    assert e.stride() == (1, 2, 6) and e.dtype == tt.float64
    assert e.untyped_storage().nbytes() == torch.empty_strided((2, 3, 4), (1, 2, 6), dtype=torch.float64) \
        .untyped_storage().nbytes()


def test_index_helpers_and_nanquantile_match_torch():
    for args in ((4, 3), (3, 5, 1), (4, 4, -1)):
        assert tt.tril_indices(*args).tolist() == torch.tril_indices(*args).tolist()
        assert tt.triu_indices(*args).tolist() == torch.triu_indices(*args).tolist()
    a = np.array([1.0, np.nan, 3.0, 2.0, np.nan, 7.0])
    for q in (0.0, 0.4, 1.0):
        assert tt.nanquantile(tt.tensor(a), q).item() == pytest.approx(torch.nanquantile(torch.tensor(a), q).item())
    with pytest.raises(RuntimeError, match=r"quantile\(\) q must be in the range \[0, 1\] but got 1.5"):
        tt.quantile(tt.tensor(a), 1.5)  # PyTorch's message for a scalar q
    with pytest.raises(RuntimeError, match="q values must be in the range"):
        tt.quantile(tt.tensor(a), tt.tensor([0.5, 1.5], dtype=tt.float64))
    with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
        tt.kthvalue(tt.ones(3), 4)
    with pytest.raises(RuntimeError, match="must have length 3"):
        tt.cross(tt.ones(2, 4), tt.ones(2, 4), dim=1)


def test_scatter_reduce_ties_errors_and_unsupported_gradient():
    # ties share the amax gradient evenly, as in torch
    res = []
    for m in (tt, torch):
        x = m.tensor([[1.0, 5.0]], requires_grad=True)
        s = m.tensor([[5.0, 5.0], [2.0, 5.0]], requires_grad=True)
        out = x.scatter_reduce(0, m.tensor([[0, 0], [0, 0]]), s, "amax")
        out.sum().backward()
        res.append((out, x.grad, s.grad))
    for got, want in zip(res[0], res[1]):
        assert_close(got, want)
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin, got max"):
        tt.zeros(3).scatter_reduce(0, tt.tensor([0]), tt.ones(1), "max")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        tt.zeros(3).scatter_reduce(0, tt.tensor([0]), tt.ones(1, dtype=tt.float64), "sum")
    x = tt.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="reduce='prod' with zero elements"):
        x.scatter_reduce(0, tt.tensor([0, 1]), tt.tensor([0.0, 2.0]), "prod").sum().backward()


def test_linalg_ex_variants_report_singular_matrices_per_batch():
    S = np.zeros((2, 3, 3))
    S[0] = np.eye(3) * 2
    for B in (np.ones((2, 3)), np.ones((3,)), np.ones((2, 3, 2)), np.ones((3, 2))):
        got, want = tt.linalg.solve_ex(tt.tensor(S), tt.tensor(B)), torch.linalg.solve_ex(torch.tensor(S), torch.tensor(B))
        assert got.info.tolist() == want.info.tolist() and got.info.dtype == tt.int32
        assert_close(got.result[0], want.result[0], "float64")
        assert bool(got.result[1].isnan().all())  # LAPACK leaves partial garbage there; tinytorch says NaN
    for name in ("inv_ex", "cholesky_ex"):
        got, want = getattr(tt.linalg, name)(tt.tensor(S)), getattr(torch.linalg, name)(torch.tensor(S))
        assert got.info.tolist() == want.info.tolist()
        assert_close(got[0][0], want[0][0], "float64")
    assert tt.linalg.inv_ex(tt.tensor(S[1])).info.item() == 1
    with pytest.raises(tt.linalg.LinAlgError):
        tt.linalg.inv_ex(tt.tensor(S), check_errors=True)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        tt.norm(tt.ones(2, 3, 3), p="nuc")


def test_kaiser_window_matches_torch():
    for args in [(8,), (9, False), (10, True, 5.0), (1,), (0,)]:
        assert_close(tt.kaiser_window(*args), torch.kaiser_window(*args), atol=1e-7, msg=str(args))
    assert_close(tt.kaiser_window(12, dtype=tt.float64), torch.kaiser_window(12, dtype=torch.float64), "float64")


@pytest.mark.parametrize("device", [d for d in DEVICES if "float64" in DEVICE_DTYPES.get(d, ("float64",))])
def test_nextafter_matches_torch(device):
    res = []
    for m, dev in ((tt, device), (torch, "cpu")):
        a = m.tensor([1.0, 0.0, -1.0, 3.0], device=dev, requires_grad=True)
        b = m.tensor([2.0, -1.0, -1.0, 0.0], dtype=m.float64, device=dev, requires_grad=True)
        y = m.nextafter(a, b)
        y.sum().backward()
        res.append([v.detach().cpu().numpy() for v in (y, a.grad, b.grad)] + [y.dtype == m.float64])
    for x, y in zip(*res):
        np.testing.assert_array_equal(x, y)
    for m in (tt, torch):
        with pytest.raises(RuntimeError, match="\"nextafter_cpu\" not implemented for 'Long'"):
            m.nextafter(m.tensor([1]), m.tensor([2]))


@pytest.mark.parametrize("device", ["cpu", "mydev"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linalg_eig_matches_torch(device, dtype):
    """Complex eigenvalues and unit eigenvectors of general matrices (LAPACK geev, as torch), batched; the
    backward says it is not implemented rather than returning something."""
    rng = np.random.default_rng(0)
    for a in (rng.standard_normal((2, 4, 4)), rng.standard_normal((3, 3))):
        a = a.astype(dtype)
        w, v = tt.linalg.eig(tt.tensor(a, device=device))
        wt, vt = torch.linalg.eig(torch.tensor(a))
        assert w.dtype == tt.complex64 if dtype == "float32" else tt.complex128
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(w.cpu().numpy(), wt.numpy(), rtol=tol, atol=tol)
        # eigenvectors are defined up to a phase per column (LAPACK builds may differ in sign): compare
        # magnitudes, and check A v = v diag(w)
        vn = v.cpu().numpy()
        np.testing.assert_allclose(np.abs(vn), np.abs(vt.numpy()), rtol=tol, atol=tol)
        np.testing.assert_allclose(a.astype(vn.dtype) @ vn, vn * w.cpu().numpy()[..., None, :], rtol=tol * 10,
                                   atol=tol * 10)
        np.testing.assert_allclose(tt.linalg.eigvals(tt.tensor(a, device=device)).cpu().numpy(), wt.numpy(),
                                   rtol=tol, atol=tol)
    x = tt.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative of the eigendecomposition"):
        tt.linalg.eig(x)[0].real.sum().backward()
