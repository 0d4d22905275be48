"""Short-time Fourier transform and its inverse (``torch.stft`` / ``torch.istft``), written in tinytorch ops:
framing is ``unfold``, the transform is ``fft.rfft`` / ``fft.fft``, and the inverse's overlap-add is ``F.fold``,
so both are differentiable on every device. Definitions and argument rules follow PyTorch's
``aten/src/ATen/native/SpectralOps.cpp``."""
import warnings

from ._ops._util import method


def _window(window, win_length, n_fft, like, what):
    from ._ops.creation import ones
    from ._ops.shape import pad
    if window is None:
        warnings.warn(f"A window was not provided. A rectangular window will be applied.{what}To suppress this "
                      "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
                      "device=<device>)`.")
        window = ones(win_length, dtype=like.dtype if like.dtype.is_floating_point else None, device=like.device)
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"expected a 1D window tensor of size equal to win_length={win_length}, but got window with "
                           f"size {list(window.shape)}")
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


@method("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Short-time Fourier transform of ``input`` (L,) or (B, L) (``torch.stft``): frames of ``n_fft`` samples
    every ``hop_length`` (default n_fft // 4), times ``window`` (win_length samples, zero-padded to n_fft in
    the middle; default rectangular, with PyTorch's warning), FFT of each. ``center`` pads n_fft // 2 on both
    sides with ``pad_mode`` first. Returns complex (B?, n_fft // 2 + 1 (``onesided``, the default for real
    input) or n_fft, n_frames), or its real view (..., 2) with return_complex=False. RuntimeError when
    return_complex is not given for real input, or for out-of-range n_fft, hop_length or win_length."""
    from . import fft
    from ._ops.complex import view_as_real
    from ._ops.shape import pad
    if return_complex is None and not input.dtype.is_complex and not (window is not None and window.dtype.is_complex):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.ndim}D tensor")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input.unsqueeze(0) if input.ndim == 1 else input
    if center:
        p = n_fft // 2
        x = pad(x.unsqueeze(1), (p, p), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    w = _window(window, win, n_fft, x, ",which is known to cause spectral leakage. Other windows such as "
                "torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage.")
    frames = x.unfold(-1, n_fft, hop) * w  # (B, n_frames, n_fft)
    one = (not (input.dtype.is_complex or w.dtype.is_complex)) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = (fft.rfft(frames, dim=-1, norm=norm) if one else fft.fft(frames, dim=-1, norm=norm)).transpose(-1, -2)
    if input.ndim == 1:
        spec = spec.squeeze(0)
    return spec if return_complex or return_complex is None else view_as_real(spec)


@method("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Inverse of ``stft`` by windowed overlap-add (``torch.istft``): input complex (B?, n_fft // 2 + 1 or n_fft,
    n_frames); returns (B?, length) (default: what ``stft`` with ``center`` consumed). RuntimeError when the
    window's overlap-add envelope has a zero (the NOLA condition fails), as PyTorch."""
    from . import fft
    from .nn.functional import fold
    from ._ops.shape import pad
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex, but got {input.ndim}D")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = input.unsqueeze(0) if input.ndim == 2 else input
    one = (x.shape[-2] != n_fft) if onesided is None else onesided
    if one and x.shape[-2] != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {x.shape[-2]}")
    w = _window(window, win, n_fft, x.real if x.dtype.is_complex else x,
                "Please provide the same window used by stft to make the inversion lossless.")
    norm = "ortho" if normalized else "backward"
    spec = x.transpose(-1, -2)  # (B, n_frames, freq)
    frames = fft.irfft(spec, n=n_fft, dim=-1, norm=norm) if one else fft.ifft(spec, dim=-1, norm=norm)
    if frames.dtype.is_complex and not return_complex:
        frames = frames.real
    frames = frames * w  # (B, n_frames, n_fft)
    n_frames = frames.shape[1]
    expected = n_fft + hop * (n_frames - 1)

    def overlap_add(f):  # (B, n_frames, n_fft) -> (B, expected)
        return fold(f.transpose(1, 2), (1, expected), (1, n_fft), stride=(1, hop)).reshape(f.shape[0], expected)
    y = overlap_add(frames)
    env = overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft))
    start = n_fft // 2 if center else 0
    end = expected - n_fft // 2 if center else expected
    if length is not None:
        end = start + length
    stop = min(end, expected)
    y, env = y[:, start:stop], env[:, start:stop]
    if env.numel() and env.abs().min().item() < 1e-11:
        raise RuntimeError(f"istft(...): window overlap add min: {env.abs().min().item():g}")
    y = y / env
    if end > expected:
        y = pad(y, (0, end - expected))
    return y.squeeze(0) if input.ndim == 2 else y


__all__ = ["stft", "istft"]
