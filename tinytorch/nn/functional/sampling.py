"""Resampling: ``interpolate`` / ``upsample*``, ``affine_grid`` / ``grid_sample``, pixel and channel shuffles."""
import math

from ... import _dtype as _dt
from ..._ops import pointwise as _pw
from ._utils import _pair, _scalar_name
from .pooling_adaptive import adaptive_avg_pool1d, adaptive_avg_pool2d


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}


def _aa_filter(mode):
    import numpy as np
    if mode == "bilinear":
        return lambda x: np.maximum(0.0, 1.0 - np.abs(x))
    if mode == "bicubic":  # Keys' cubic with a = -0.5, as PIL's antialiased bicubic (torch's non-aa one uses -0.75)
        def cubic(x, a=-0.5):
            x = np.abs(x)
            return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                            np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
        return cubic
    # Lanczos-3: sinc(x) sinc(x / 3) on |x| < 3 (np.sinc is the normalized sinc)
    return lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)


def _aa_weights(n_in, n_out, scale, mode):
    """(n_out, n_in) resampling matrix of antialiased interpolation (PIL's convolution resize, as torch's
    ``_upsample_*_aa`` kernels): when downscaling by ``scale`` the filter is stretched by it, so every input
    pixel contributes; each row is normalized to sum 1."""
    import numpy as np
    filt = _aa_filter(mode)
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * (scale if scale >= 1.0 else 1.0)
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        taps = filt((np.arange(lo, hi) - center + 0.5) * inv)
        total = taps.sum()
        w[i, lo:hi] = taps / total if total != 0 else taps
    return w


def _source_taps(n_in, n_out, scale, mode, align_corners):
    """Source indices (taps, n_out) int64 and weights (taps, n_out) float64 of one resampled dim,
    with PyTorch's coordinate mapping (``area_pixel_compute_source_index``)."""
    import numpy as np
    dst = np.arange(n_out, dtype=np.float64)
    if mode == "nearest":
        return np.minimum(np.floor(dst * scale), n_in - 1).astype(np.int64)[None], np.ones((1, n_out))
    if mode == "nearest-exact":
        return np.minimum(np.floor((dst + 0.5) * scale), n_in - 1).astype(np.int64)[None], np.ones((1, n_out))
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = (dst + 0.5) * scale - 0.5
        if mode != "bicubic":
            src = np.maximum(src, 0.0)
    i0 = np.floor(src)
    t = src - i0
    i0 = i0.astype(np.int64)
    if mode == "bicubic":
        a = -0.75  # Keys' cubic convolution kernel, as PyTorch

        def near(x):
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def far(x):
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        w = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)])
        idx = np.clip(np.stack([i0 - 1, i0, i0 + 1, i0 + 2]), 0, n_in - 1)
        return idx, w
    return np.stack([i0, np.minimum(i0 + 1, n_in - 1)]), np.stack([1 - t, t])


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample the spatial dims of (N, C, *spatial) to ``size`` or ``scale_factor`` times their size
    (``torch.nn.functional.interpolate``).

    mode: 'nearest', 'nearest-exact', 'linear' (3-D input), 'bilinear' / 'bicubic' (4-D), 'trilinear' (5-D),
    'area' (adaptive average pooling), 'lanczos' (4-D, antialias only). Separable: each dim is a weighted sum
    of ``index_select`` taps, so the gradient comes from index_select's. ``antialias=True`` (bilinear, bicubic,
    lanczos on 4-D input) resamples with PIL's filters widened by the downscale factor, as torch: one
    (out, in) weight matrix per dim, applied by matmul. uint8 input (bilinear, bicubic, antialiased or not)
    takes ATen's fixed-point path and gives its values exactly (``_resize_uint8``). ValueError / NotImplementedError as PyTorch for bad
    combinations.
    """
    from ..._ops.creation import _from_host
    import numpy as np
    nd = input.ndim - 2
    if nd < 1 or nd > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _INTERP_DIMS:
        if _INTERP_DIMS[mode] != nd:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERP_DIMS[mode] + 2}D "
                                      "input")
        align_corners = bool(align_corners)
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    in_sizes = input._shape[2:]
    if size is not None:
        out_sizes = _pair(size, nd)
        if len(out_sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and output size of {list(out_sizes)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        scales = [i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out_sizes)]  # o <= 0 is refused below
    else:
        factors = _pair(scale_factor, nd)
        if len(factors) != nd:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                             f"input with spatial dimensions of {list(in_sizes)} and scale_factor of shape "
                             f"{list(factors)}.")
        if mode != "area" and not all(math.isfinite(f) for f in factors):
            # ATen converts the output size to int64; area mode converts in Python (ValueError / OverflowError)
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        out_sizes = tuple(int(math.floor(i * f)) for i, f in zip(in_sizes, factors))
        scales = ([i / o if o > 0 else 0.0 for i, o in zip(in_sizes, out_sizes)] if recompute_scale_factor
                  else [1.0 / f if f else 0.0 for f in factors])
    uint8_resize = mode in ("bilinear", "bicubic") and input.dtype is _dt.uint8
    if not input.dtype.is_floating_point and not uint8_resize:
        raise NotImplementedError(f"\"upsample_{mode}{nd}d\" not implemented for '{_scalar_name(input.dtype)}'")
    if mode != "area" and (min(out_sizes) <= 0 or min(in_sizes) <= 0):
        # (area is adaptive average pooling, which takes an empty output)
        dims = ("D", "H", "W")[3 - nd:]
        ins, outs = (", ".join(f"{a}: {v}" for a, v in zip(dims, sz)) for sz in (in_sizes, out_sizes))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins})"
                           f"{' and' if nd == 1 else ''} output ({outs})")
    if mode == "area":
        from ..._ops.shape import stack  # noqa: F401
        if nd == 1:
            return adaptive_avg_pool1d(input, out_sizes[0])
        if nd == 2:
            return adaptive_avg_pool2d(input, out_sizes)
        raise NotImplementedError("interpolate(mode='area') on 5-D input is not supported by tinytorch")
    if uint8_resize:
        return _resize_uint8(input, in_sizes, out_sizes, scales, align_corners, mode, antialias)
    out = input
    if antialias:
        # separable: (OH, H) on the rows, then (OW, W) on the columns, as two matmuls (gradients from matmul's)
        for k in range(2):
            n_in, n_out = in_sizes[k], out_sizes[k]
            scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align_corners else scales[k]
            w = _from_host(_aa_weights(n_in, n_out, scale, mode).astype(input.dtype.np), input.dtype, input.device)
            out = w.matmul(out) if k == 0 else out.matmul(w.t())
        return out
    for k in range(nd):
        d = 2 + k
        idx, w = _source_taps(in_sizes[k], out_sizes[k], scales[k], mode, align_corners)
        shape = [1] * input.ndim
        shape[d] = out_sizes[k]
        acc = None
        for tap in range(idx.shape[0]):
            part = out.index_select(d, _from_host(np.ascontiguousarray(idx[tap]), _dt.int64, input.device))
            if mode not in ("nearest", "nearest-exact"):
                wt = _from_host(np.ascontiguousarray(w[tap], dtype=input.dtype.np), input.dtype, input.device)
                part = part * wt.reshape(shape)
            acc = part if acc is None else acc + part
        out = acc
    return out


def _uint8_filter(mode, antialias):
    """ATen's separable filters in its own expression order (the int16 weights round from these doubles):
    the triangle, or Keys' cubic with a = -0.5 antialiased (PIL's) and -0.75 otherwise."""
    if mode == "bilinear":
        return lambda x: 1.0 - abs(x) if abs(x) < 1.0 else 0.0
    a = -0.5 if antialias else -0.75

    def cubic(x):
        x = abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0
    return cubic


def _uint8_taps(n_in, n_out, scale, mode, antialias, align_corners, filt):
    """Per output pixel (first input index, float weights of the consecutive taps from it), as ATen's uint8
    kernel computes them before rounding to fixed point."""
    rows = []
    if mode == "bicubic" and not antialias:
        # the float kernel's four taps around the source position, indices clamped to the border; taps landing
        # on the same pixel add their weights (this is how ATen's uint8 path reproduces the float border)
        for i in range(n_out):
            src = i * scale if align_corners else (i + 0.5) * scale - 0.5
            i0 = math.floor(src)
            t = src - i0
            w = {}
            for off, v in zip((-1, 0, 1, 2), (filt(t + 1.0), filt(t), filt(1.0 - t), filt((1.0 - t) + 1.0))):
                j = min(max(i0 + off, 0), n_in - 1)
                w[j] = w.get(j, 0.0) + v
            lo = min(w)
            rows.append((lo, [w.get(j, 0.0) for j in range(lo, max(w) + 1)]))
        return rows
    half = 1.0 if mode == "bilinear" else 2.0
    delta = 0.5 if align_corners and not antialias else 0.0
    stretch = antialias and scale >= 1.0
    support = half * scale if stretch else half
    inv = 1.0 / scale if stretch else 1.0
    for i in range(n_out):
        center = scale * (i + 0.5 - delta) + delta
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = [filt((j + lo - center + 0.5) * inv) for j in range(hi - lo)]
        total = sum(w)
        rows.append((lo, [v / total for v in w] if total != 0.0 else w))
    return rows


def _resize_uint8(input, in_sizes, out_sizes, scales, align_corners, mode, antialias):
    """ATen's uint8 bilinear / bicubic resize, antialiased or not (its separable fixed-point kernel, PIL's
    algorithm): per output pixel the filter weights of the input taps in range (the filter widened by the
    downscale factor when antialiased; for bicubic without antialias the float kernel's four border-clamped
    taps), normalized to sum 1, as int16 fixed point with the most precision bits that keep the largest
    weight below 2**15 (rounded half away from zero); a pass over the width, rounded and clamped to uint8,
    then one over the height (a pass is skipped where the size is unchanged). Integer arithmetic, so the
    values equal PyTorch's exactly."""
    import numpy as np
    from ..._ops.creation import _from_host
    filt = _uint8_filter(mode, antialias)
    out = input
    for k in (1, 0):
        n_in, n_out = in_sizes[k], out_sizes[k]
        if n_in == n_out:
            continue
        scale = ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0) if align_corners else scales[k]
        rows = _uint8_taps(n_in, n_out, scale, mode, antialias, align_corners, filt)
        top = max((max(w) for _, w in rows if w), default=0.0)
        prec = 0
        while prec < 22 and int(0.5 + top * (1 << (prec + 1))) < (1 << 15):
            prec += 1
        taps = max(len(w) for _, w in rows)
        idx = np.zeros((taps, n_out), np.int64)
        wq = np.zeros((taps, n_out), np.int64)
        for i, (lo, w) in enumerate(rows):
            idx[:len(w), i] = np.arange(lo, lo + len(w))
            # C's int() truncates toward zero: this rounds half away from zero
            wq[:len(w), i] = [int(v * (1 << prec) + (0.5 if v >= 0 else -0.5)) for v in w]
        d = 2 + k
        shape = [1] * input.ndim
        shape[d] = n_out
        x = out.long()
        acc = None
        for t in range(taps):
            part = x.index_select(d, _from_host(idx[t], _dt.int64, input.device)) * \
                _from_host(wq[t], _dt.int64, input.device).reshape(shape)
            acc = part if acc is None else acc + part
        # the sum can be negative (bicubic lobes); floor division is the arithmetic shift ATen does
        out = _pw.clamp((acc + (1 << (prec - 1))) // (1 << prec), 0, 255).to(_dt.uint8)
    return out if out is not input else input.clone()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                  "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample "
                  "for details.")


def _base_coords(n, align_corners, like):
    """``n`` sample positions in [-1, 1] (PyTorch's linspace_from_neg_one): pixel corners with
    ``align_corners``, pixel centers without."""
    from ..._ops.creation import linspace, zeros
    if n <= 1:
        return zeros(1, dtype=like.dtype, device=like.device)
    r = linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid of an affine transform, for ``grid_sample`` (spatial transformer networks, Jaderberg et
    al. 2015; ``torch.nn.functional.affine_grid``).

    theta: (N, 2, 3) for a 4-D ``size`` (N, C, H, W) -> grid (N, H, W, 2); or (N, 3, 4) for a 5-D size
    (N, C, D, H, W) -> grid (N, D, H, W, 3). Each grid point is theta applied to the normalized (x, y[, z], 1)
    output coordinates. ValueError for a non-float theta or shapes that do not match, NotImplementedError
    for other sizes.
    """
    import warnings
    from ..._ops.creation import ones
    from ..._ops.shape import stack
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    axes = [_base_coords(k, align_corners, theta) for k in reversed(spatial)]  # x (width) first
    full = tuple(spatial)
    dims = len(spatial)
    coords = []
    for i, a in enumerate(axes):  # axis i varies along spatial dim (dims - 1 - i)
        shape = [1] * dims
        shape[dims - 1 - i] = a.shape[0]
        coords.append(a.reshape(shape).expand(full))
    coords.append(ones(full, dtype=theta.dtype, device=theta.device))
    base = stack(coords, -1).reshape(1, -1, dims + 1).expand(n, -1, -1)
    return base.matmul(theta.transpose(1, 2)).reshape([n] + list(full) + [dims])


def _reflect(coord, twice_low, twice_high):
    """Reflect coordinates into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return coord * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    c = (coord - lo).abs()
    extra = _pw.fmod(c, span)
    flips = _pw.floor(c / span)
    return _pw.where(_pw.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _unnormalize(coord, size, align_corners):
    """Normalized grid coordinate in [-1, 1] -> pixel coordinate (corners or centers at +-1)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _pad_coord(c, size, padding_mode, align_corners):
    """A pixel coordinate with the padding mode applied ('zeros' leaves it; out-of-range taps then read 0)."""
    if padding_mode == "border":
        c = c.clamp(0, size - 1)
    elif padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = c.clamp(0, size - 1)
    return c


def _source_index(coord, size, padding_mode, align_corners):
    """Normalized grid coordinate in [-1, 1] -> pixel coordinate, with the padding mode applied."""
    return _pad_coord(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _cubic_coeffs(t, a=-0.75):
    """The 4 weights of Keys' cubic convolution at fraction ``t`` (taps -1, 0, 1, 2), as torch's bicubic."""
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the normalized positions of ``grid`` (``torch.nn.functional.grid_sample``).

    input (N, C, H_in, W_in), grid (N, H_out, W_out, 2) holding (x, y) in [-1, 1] -> (N, C, H_out, W_out); or
    volumetric input (N, C, D_in, H_in, W_in), grid (N, D_out, H_out, W_out, 3) holding (x, y, z) ->
    (N, C, D_out, H_out, W_out). mode 'bilinear' (trilinear on 5-D), 'nearest' (round half to even, as
    PyTorch) or 'bicubic' (4-D only; Keys' cubic, a = -0.75, padding applied to each of the 16 taps);
    padding_mode 'zeros', 'border' or 'reflection'. Written in gather and pointwise ops, so it is
    differentiable with respect to ``input`` and (bilinear, bicubic) ``grid``. ValueError for an unknown mode
    or padding mode, RuntimeError for mismatched shapes or bicubic on 5-D input.
    """
    import warnings
    import itertools
    from ..._ops.indexing import gather
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    nd = input.ndim - 2
    sizes_msg = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if grid.ndim and grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if nd not in (2, 3) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but "
                           f"got {sizes_msg}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes_msg}")
    if mode == "bicubic" and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have the same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])[::-1]  # (W, H[, D]): grid's last dim holds x, y[, z]
    out_sp = tuple(grid.shape[1:-1])
    m = math.prod(out_sp)
    strides = [math.prod(sizes[:k]) for k in range(nd)]  # flat offset of a unit step in x, y, z
    flat = input.reshape(n, c, math.prod(sizes))

    def tap(pts):
        # input at integer pixel ``pts`` (x, y[, z]), with a mask that is 0 where it falls outside
        inside = None
        idx = 0
        for p, size, st in zip(pts, sizes, strides):
            ok = (p >= 0) & (p <= size - 1)
            inside = ok if inside is None else inside & ok
            idx = idx + p.clamp(0, size - 1) * st
        idx = idx.long().reshape(n, 1, m).expand(n, c, m)
        return gather(flat, 2, idx).reshape((n, c) + out_sp), inside.unsqueeze(1).to(input.dtype)

    if mode == "bicubic":
        ix, iy = (_unnormalize(grid[..., k], sizes[k], align_corners) for k in range(2))
        x0, y0 = _pw.floor(ix).detach(), _pw.floor(iy).detach()
        cx, cy = _cubic_coeffs((ix - x0).unsqueeze(1)), _cubic_coeffs((iy - y0).unsqueeze(1))
        out = 0
        for j in range(4):
            yy = _pad_coord(y0 + (j - 1), sizes[1], padding_mode, align_corners)
            row = 0
            for i in range(4):
                v, mask = tap((_pad_coord(x0 + (i - 1), sizes[0], padding_mode, align_corners), yy))
                row = row + v * (cx[i] * mask)
            out = out + row * cy[j]
        return out
    src = [_source_index(grid[..., k], sizes[k], padding_mode, align_corners) for k in range(nd)]
    if mode == "nearest":
        v, mask = tap([_pw.round(p).detach() for p in src])
        return v * mask
    lo = [_pw.floor(p).detach() for p in src]
    frac = [(p - q).unsqueeze(1) for p, q in zip(src, lo)]
    out = 0
    for corner in itertools.product((0, 1), repeat=nd):  # bilinear / trilinear: 2**nd corners
        wgt = None
        for bit, t in zip(corner, frac):
            f = t if bit else 1 - t
            wgt = f if wgt is None else wgt * f
        v, mask = tap([q + bit for q, bit in zip(lo, corner)])
        out = out + v * (wgt * mask)
    return out


def _shuffle_factor(name, arg, input, r):
    """PyTorch's checks of a pixel (un)shuffle factor and input rank, before any reshape."""
    if isinstance(r, bool) or not hasattr(type(r), "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' (position 2) must be int, not {type(r).__name__}")
    r = int(r)
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {arg}, but got {r}")
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           f"dimension(s)")
    return r


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r) (Shi et al. 2016; ``torch.nn.functional.pixel_shuffle``).
    TypeError for a non-int factor; RuntimeError for a factor <= 0, fewer than 3 dims or C not divisible
    by r^2, as PyTorch."""
    r = _shuffle_factor("pixel_shuffle", "upscale_factor", input, upscale_factor)
    if r * r > 2 ** 63 - 1:  # ATen multiplies in int64 with an overflow check
        raise ValueError(f"upscale factor is too large, (upscale_factor)^2 overflowed: upscale_factor={r}")
    *b, c, h, w = input._shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = input.reshape(*b, c // (r * r), r, r, h, w)
    n = len(b)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*b, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Inverse of ``pixel_shuffle``: (*, C, H r, W r) -> (*, C r^2, H, W). Errors as ``pixel_shuffle``'s, and
    RuntimeError when H or W is not divisible by r. An empty input comes back with its own shape, as PyTorch."""
    r = _shuffle_factor("pixel_unshuffle", "downscale_factor", input, downscale_factor)
    *b, c, h, w = input._shape
    for side, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    if input.numel() == 0:
        return input.clone()  # ATen's pixel_unshuffle returns an empty input unchanged (a copy), whatever r
    n = len(b)
    x = input.reshape(*b, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*b, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> channels reordered as (k, g) (Zhang et al. 2018, ShuffleNet) (``F.channel_shuffle``).
    RuntimeError for an input of fewer than 3 dims, groups <= 0, or channels not divisible by groups."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input._shape)}")
    n, c = input._shape[:2]
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = input._shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
