"""Complex tensors and torch.fft against PyTorch: values and gradients (of a real loss through complex
intermediates), normalizations, signal-size trimming/padding, dtypes, devices, printing and errors."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

DEVICES = ["cpu", "mydev"]


def _c(L, x, shape):
    """A complex tensor built differentiably from the real leaf ``x`` (last dim pairs = (real, imag))."""
    return L.view_as_complex(x.reshape(shape + (2,)))


CASES = [
    ("fft", lambda L, x, nm: L.fft.fft(x, norm=nm)),
    ("fft_n_pad", lambda L, x, nm: L.fft.fft(x, n=11, norm=nm)),
    ("fft_complex", lambda L, x, nm: L.fft.fft(_c(L, x, (3, 4)), norm=nm)),
    ("fft_dim0", lambda L, x, nm: L.fft.fft(_c(L, x, (3, 4)), n=2, dim=0, norm=nm)),
    ("ifft", lambda L, x, nm: L.fft.ifft(_c(L, x, (3, 4)), n=6, norm=nm)),
    ("rfft", lambda L, x, nm: L.fft.rfft(x, norm=nm)),
    ("rfft_n_trim", lambda L, x, nm: L.fft.rfft(x, n=5, norm=nm)),
    ("rfft_n_pad_odd", lambda L, x, nm: L.fft.rfft(x, n=11, norm=nm)),
    ("irfft", lambda L, x, nm: L.fft.irfft(_c(L, x, (3, 4)), norm=nm)),
    ("irfft_n_odd", lambda L, x, nm: L.fft.irfft(_c(L, x, (3, 4)), n=7, norm=nm)),
    ("irfft_n_small", lambda L, x, nm: L.fft.irfft(_c(L, x, (3, 4)), n=3, norm=nm)),
    ("fft2_s", lambda L, x, nm: L.fft.fft2(x, s=(4, 5), norm=nm)),
    ("ifft2", lambda L, x, nm: L.fft.ifft2(_c(L, x, (3, 4)), norm=nm)),
    ("fftn", lambda L, x, nm: L.fft.fftn(_c(L, x, (3, 2, 2)), norm=nm)),
    ("ifftn_dim", lambda L, x, nm: L.fft.ifftn(_c(L, x, (3, 2, 2)), dim=(0, 2), norm=nm)),
    ("rfft2", lambda L, x, nm: L.fft.rfft2(x, norm=nm)),
    ("rfftn_s", lambda L, x, nm: L.fft.rfftn(x, s=(2, 6), norm=nm)),
    ("irfft2", lambda L, x, nm: L.fft.irfft2(_c(L, x, (3, 4)), norm=nm)),
    ("irfftn_s", lambda L, x, nm: L.fft.irfftn(_c(L, x, (3, 4)), s=(2, 5), norm=nm)),
    ("hfft", lambda L, x, nm: L.fft.hfft(_c(L, x, (3, 4)), norm=nm)),
    ("ihfft", lambda L, x, nm: L.fft.ihfft(x, norm=nm)),
]


def _run(L, x, fn):
    y = fn(L, x)
    if y.is_complex():
        y = L.view_as_real(y.resolve_conj())
    w = np.random.default_rng(42).standard_normal(tuple(y.shape))
    (y * L.tensor(w, dtype=y.dtype, device=y.device)).sum().backward()
    return y.detach().cpu().numpy(), x.grad.cpu().numpy()


def _compare(fn, device="cpu", dtype="float64", shape=(3, 8)):
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    y1, g1 = _run(torch, torch.tensor(a, requires_grad=True), fn)
    y2, g2 = _run(tt, tt.tensor(a, device=device, requires_grad=True), fn)
    tol = 1e-10 if dtype == "float64" else 2e-5
    assert y2.dtype == y1.dtype
    np.testing.assert_allclose(y2, y1, rtol=tol, atol=tol)
    np.testing.assert_allclose(g2, g1, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_fft_matches_torch(name, fn, norm):
    _compare(lambda L, x: fn(L, x, norm))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_fft_float32_and_devices(name, fn, device):
    _compare(lambda L, x: fn(L, x, None), device=device, dtype="float32")


COMPLEX_OPS = [
    ("abs", lambda L, x: _c(L, x, (3, 4)).abs()),
    ("abs_of_rfft", lambda L, x: L.fft.rfft(x).abs()),
    ("angle", lambda L, x: _c(L, x, (3, 4)).angle()),
    ("real_imag", lambda L, x: L.fft.fft(x).real * 2 + L.fft.fft(x).imag),
    ("mul", lambda L, x: _c(L, x, (3, 4)) * L.fft.fft(x[:, :4])),
    ("mul_scalar_conj", lambda L, x: (_c(L, x, (3, 4)) * (1 - 2j)).conj()),
    ("div", lambda L, x: _c(L, x, (3, 4)) / (1 + L.fft.fft(x[:, :4]))),
    ("add_sub_real", lambda L, x: _c(L, x, (3, 4)) + x[:, :4] - 2),
    ("exp", lambda L, x: L.exp(_c(L, x, (3, 4)) * 0.5)),
    ("sum_mean", lambda L, x: _c(L, x, (3, 4)).sum(0) + _c(L, x, (3, 4)).mean(1, keepdim=True)),
    ("views_cat", lambda L, x: L.cat([_c(L, x, (3, 4)).t()[:3], _c(L, x, (3, 4))[1:, :3].flip(0).t().conj()], 1)),
    ("polar", lambda L, x: L.polar(x[:, :4].abs() + 0.1, x[:, 4:])),
    ("complex", lambda L, x: L.complex(x[:, :4], x[:, 4:]) * (1 + 2j)),
    ("sgn", lambda L, x: L.fft.fft(x).sgn()),
    ("fftshift", lambda L, x: L.fft.fftshift(L.fft.fft(x), dim=-1)),
    ("ifftshift", lambda L, x: L.fft.ifftshift(x)),
    ("H_mH_adjoint", lambda L, x: L.cat([_c(L, x, (3, 4))[:, :3].H, _c(L, x, (3, 4))[:, :3].mH,
                                         _c(L, x, (3, 4))[:, :3].adjoint(), _c(L, x, (3, 4))[:, :3].mT], 0)),
    ("to_complex_and_back", lambda L, x: (x.to(L.complex128) * 1j).real + x.to(L.complex128).abs()),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", COMPLEX_OPS, ids=[c[0] for c in COMPLEX_OPS])
def test_complex_ops_match_torch(name, fn, device):
    _compare(fn, device=device)


def test_gradcheck_through_complex():
    # fixed values: |fft| has a kink where a frequency component is 0, so random inputs could land near one
    x = tt.tensor(np.random.default_rng(5).standard_normal(6), requires_grad=True)
    assert tt.autograd.gradcheck(lambda v: tt.fft.irfft(tt.fft.rfft(v, norm="ortho") * (1 + 0.5j), n=6), (x,))
    assert tt.autograd.gradcheck(lambda v: tt.fft.fft(v, n=8).abs(), (x,))


def test_frequencies_and_dtypes():
    for n, d in ((5, 1.0), (6, 0.5)):
        np.testing.assert_allclose(tt.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_allclose(tt.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    assert tt.fft.rfft(tt.ones(4)).dtype is tt.complex64
    assert tt.fft.fft(tt.arange(4)).dtype is tt.complex64  # integers go through the default float dtype
    assert tt.fft.irfft(tt.ones(3, dtype=tt.complex128)).dtype is tt.float64
    for a, b in [(tt.complex64, tt.float64), (tt.complex64, tt.int64), (tt.complex128, tt.float32),
                 (tt.complex64, tt.complex128), (tt.float16, tt.complex64)]:
        assert str(tt.promote_types(a, b)) == str(torch.promote_types(getattr(torch, a.name), getattr(torch, b.name)))
    x = tt.tensor([1.0, 2.0])
    assert (x * 1j).dtype is tt.complex64 and (x.double() + 1j).dtype is tt.complex128
    assert tt.tensor([1, 2 + 1j]).dtype is tt.complex64


def test_printing_matches_torch():
    for v in ([1 + 2j, 3 - 1j], [0.1 + 2j, 3.25 - 1j], [[0.1 + 2000j, 3.25 - 1j]], [[10.5 + 2j, 3.25 - 1j],
                                                                                    [1 + 1j, -100 - 1j]]):
        assert repr(tt.tensor(v)) == repr(torch.tensor(v))
    assert repr(tt.tensor([1 + 2j], dtype=tt.complex128)) == repr(torch.tensor([1 + 2j], dtype=torch.complex128))
    assert repr(tt.tensor(1 + 2j)) == repr(torch.tensor(1 + 2j))
    assert tt.tensor([1 + 2j]).item() == 1 + 2j and tt.tensor([[1j]]).tolist() == [[1j]]


def test_errors():
    x = tt.randn(4)
    with pytest.raises(RuntimeError, match="Invalid number of data points \\(0\\)"):
        tt.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        tt.fft.fft(x, norm="bad")
    with pytest.raises(IndexError):
        tt.fft.fft(x, dim=1)
    with pytest.raises(RuntimeError, match="expects a real input"):
        tt.fft.rfft(x.to(tt.complex64))
    with pytest.raises(RuntimeError, match="non-complex"):
        tt.imag(x)
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        tt.view_as_complex(tt.randn(3, 3))
    with pytest.raises(RuntimeError, match="only supported for complex"):
        tt.view_as_real(x)
    z = tt.fft.fft(tt.randn(4, requires_grad=True))
    with pytest.raises(NotImplementedError, match="sin: the derivative for complex tensors"):
        tt.sin(z)
    with tt.no_grad():
        np.testing.assert_allclose(tt.sin(z.detach()).numpy(), np.sin(z.detach().numpy()), rtol=1e-6)


@pytest.mark.skipif(not tt.opencl.is_available(), reason="needs an OpenCL platform")
def test_opencl_rejects_complex():
    with pytest.raises(TypeError, match="complex64 is not supported by the OpenCL backend"):
        tt.fft.rfft(tt.randn(8, device="opencl"))


def test_complex_random_and_roundtrips(tmp_path):
    tt.manual_seed(0)
    z = tt.randn(20000, dtype=tt.complex64)
    assert z.dtype is tt.complex64
    # each part N(0, 1/2), as torch.randn for complex dtypes: E|z|^2 = 1
    assert abs(z.real.var().item() - 0.5) < 0.03 and abs(z.imag.var().item() - 0.5) < 0.03
    u = tt.rand(1000, dtype=tt.complex128)
    assert u.dtype is tt.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1
    tt.save({"z": z[:5]}, tmp_path / "z.pt")
    assert tt.equal(tt.load(tmp_path / "z.pt")["z"], z[:5])
    assert tt.equal(z[:5].to("mydev").cpu(), z[:5])
    assert tt.empty(3, dtype=tt.complex64, device="meta").shape == (3,)


STFT_CASES = [
    ("stft", lambda L, x: L.stft(x, 8, window=L.hann_window(8, dtype=x.dtype, device=x.device), return_complex=True)),
    ("stft_hop_win_real", lambda L, x: L.stft(x, 8, hop_length=3, win_length=6, return_complex=False,
                                             window=L.hamming_window(6, dtype=x.dtype, device=x.device))),
    ("stft_no_center_twosided_normalized", lambda L, x: L.stft(x[0], 8, center=False, onesided=False, normalized=True,
                                                              window=L.ones(8, dtype=x.dtype, device=x.device),
                                                              return_complex=True)),
    ("stft_constant_pad", lambda L, x: L.stft(x, 8, pad_mode="constant", window=L.ones(8, dtype=x.dtype,
                                                                                          device=x.device),
                                              return_complex=True)),
    ("istft_roundtrip", lambda L, x: L.istft(L.stft(x, 8, window=L.hann_window(8, dtype=x.dtype, device=x.device),
                                                    return_complex=True), 8,
                                             window=L.hann_window(8, dtype=x.dtype, device=x.device), length=40)),
    ("istft_of_complex", lambda L, x: L.istft(_c(L, x, (2, 5, 4)), 8, hop_length=2,
                                              window=L.hann_window(8, dtype=x.dtype, device=x.device))),
    ("istft_length_longer", lambda L, x: L.istft(_c(L, x, (2, 5, 4)), 8, hop_length=2, length=12, normalized=True,
                                                 window=L.hann_window(8, dtype=x.dtype, device=x.device))),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", STFT_CASES, ids=[c[0] for c in STFT_CASES])
def test_stft_istft_match_torch(name, fn, device):
    _compare(fn, device=device, shape=(2, 40))


def test_stft_errors_and_warnings_match_torch():
    for L in (torch, tt):
        x = L.ones(2, 50)
        with pytest.raises(RuntimeError, match="stft requires the return_complex parameter be given for real inputs"):
            L.stft(x, 16)
        if L is tt:  # torch warns once per process (TORCH_WARN_ONCE), so an earlier test may have used it up
            with pytest.warns(UserWarning, match="A window was not provided"):
                L.stft(x, 16, return_complex=True)
        with pytest.raises(RuntimeError, match="win_length <= n_fft"):
            L.stft(x, 16, win_length=20, window=L.ones(20), return_complex=True)
        with pytest.raises(RuntimeError, match="window overlap add min"):
            L.istft(L.stft(x, 8, hop_length=8, window=L.hann_window(8), return_complex=True), 8, hop_length=8,
                    window=L.hann_window(8), center=False)


def test_real_imag_and_view_as_real_are_views_like_torch():
    """Writes through ``.real``, ``.imag`` and ``view_as_real`` change the complex tensor (they are views of
    its memory, with doubled strides), and gradients flow back through them as in torch."""
    res = []
    for L in (tt, torch):
        x = L.tensor([1 + 2j, 3 - 1j, 5 + 5j, -2 + 0.5j])
        x.real[0] = 10
        x.imag.mul_(2)
        L.view_as_real(x)[2, 0] = -7
        x[1:].real.add_(1)
        y = x.reshape(2, 2).t()  # a non-contiguous complex view
        y.imag.zero_()
        geo = (x.real.stride(), x.imag.storage_offset(), L.view_as_real(y).stride(), x[1:].imag.storage_offset())
        a = L.tensor([1 + 2j, 3 - 1j], dtype=L.complex128, requires_grad=True)
        ((a.real * 3 + a.imag ** 2).sum() + (L.view_as_real(a) * L.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                                          dtype=L.float64)).sum()).backward()
        res.append((x.numpy(), geo, a.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    assert res[0][1] == res[1][1]
    np.testing.assert_allclose(res[0][2], res[1][2])
    # in-place writes through real views of a complex non-leaf splice the graph as torch's CopySlices
    grads = []
    for L in (tt, torch):
        a = L.tensor([1 + 2j, 3 - 1j, -0.5 + 1j], dtype=L.complex128, requires_grad=True)
        b = a * (1 - 2j)
        b.real.mul_(2)
        L.view_as_real(b)[1:, 1].add_(L.view_as_real(b)[:2, 0] * 3)
        (b.abs() * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
