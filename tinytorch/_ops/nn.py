"""Ops that exist for neural networks: softmax / log_softmax (fused kernels with decompositions) and
im2col / col2im, the primitives that convolution and pooling are built on."""
import math

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from .._geometry import first_valid_tap, pool_geometry, pool_out_size  # noqa: F401 (re-exported)
from ._util import SCALAR_NAMES, check_arg, method


def _softmax_meta_of(name):
    def meta(x, dim):
        if not x.dtype.is_floating_point:
            # PyTorch has one kernel for the last dim and one for the others, named in its message
            last = x.ndim <= 1 or dim in (-1, x.ndim - 1)
            raise NotImplementedError(f"\"{name}{'_lastdim' if last else ''}_kernel_impl\" not implemented for "
                                      f"'{SCALAR_NAMES.get(x.dtype.name, x.dtype.name)}'")
        return [(x._shape, x.dtype)], [None]
    return meta


def _log_softmax_decomp(x, dim):
    if x.dtype.itemsize < 4:  # float16 / bfloat16: computed in float32 and rounded once, as ATen's kernel
        return _log_softmax_decomp(x.float(), dim).to(x.dtype)
    # shifted by the row max except in rows of -inf (not by logsumexp: a row holding +inf is NaN, as in torch)
    m = x.amax(dim, keepdim=True).detach()
    s = x - m.masked_fill(m == float("-inf"), 0)
    return s - s.exp().sum(dim, keepdim=True).log()


def _softmax_decomp(x, dim):
    if x.dtype.itemsize < 4:
        return _softmax_decomp(x.float(), dim).to(x.dtype)
    m = x.amax(dim, keepdim=True).detach()
    e = (x - m).exp()
    return e / e.sum(dim, keepdim=True)


def _log_softmax_bw(c, g):
    return dispatch(_log_softmax_backward_op, (g, c.out), c.kw)


def _softmax_bw(c, g):
    return dispatch(_softmax_backward_op, (g, c.out), c.kw)


def _log_softmax_bw_bw(c, gg):
    g, out = c.inputs
    d = c.kw["dim"]
    p = out.exp()
    return gg - (gg * p).sum(d, keepdim=True), -gg * p * g.sum(d, keepdim=True)


def _softmax_bw_bw(c, gg):
    g, out = c.inputs
    d = c.kw["dim"]
    # the Jacobian of softmax is symmetric, so the gradient w.r.t. g is softmax_backward(gg)
    return dispatch(_softmax_backward_op, (gg, out), c.kw), \
        gg * (g - (g * out).sum(d, keepdim=True)) - g * (gg * out).sum(d, keepdim=True)


def _grad_meta(g, out, dim):
    return [(out._shape, out.dtype)], [out.dtype, None]


_log_softmax_op = defop("log_softmax", _softmax_meta_of("log_softmax"), _log_softmax_bw, decomp=_log_softmax_decomp,
                        save_inputs=False, save_output=True)
_softmax_op = defop("softmax", _softmax_meta_of("softmax"), _softmax_bw, decomp=_softmax_decomp, save_inputs=False,
                    save_output=True)
# the gradients are ops too (one fused kernel where a backend has one), with their own backward for double grad
_log_softmax_backward_op = defop("log_softmax_backward", _grad_meta, _log_softmax_bw_bw,
                                 decomp=lambda g, out, dim: g - out.exp() * g.sum(dim, keepdim=True))
_softmax_backward_op = defop("softmax_backward", _grad_meta, _softmax_bw_bw,
                             decomp=lambda g, out, dim: out * (g - (g * out).sum(dim, keepdim=True)))


def _prep(input, dim, dtype):
    d = _strides.wrap_dim(dim, input.ndim)  # a 0-d tensor takes dim 0 or -1 only (IndexError otherwise)
    if dtype is not None:
        input = input.to(dtype)
    if input.ndim == 0:
        return input.reshape(1), 0, True
    return input, d, False


@method("softmax")
def softmax(input, dim=None, dtype=None):
    """``exp(x) / sum(exp(x), dim)`` computed stably along ``dim`` (``torch.softmax``). TypeError without an
    int ``dim``, as PyTorch (only ``nn.functional``'s spelling picks a dim implicitly)."""
    check_arg("softmax", "dim", 2, dim, "int")
    x, d, sq = _prep(input, dim, dtype)
    r = dispatch(_softmax_op, (x,), {"dim": d})
    return r.reshape(()) if sq else r


@method("log_softmax")
def log_softmax(input, dim=None, dtype=None):
    """``x - logsumexp(x, dim)`` along ``dim`` (``torch.log_softmax``). TypeError without an
    int ``dim``, as PyTorch (only ``nn.functional``'s spelling picks a dim implicitly)."""
    check_arg("log_softmax", "dim", 2, dim, "int")
    x, d, sq = _prep(input, dim, dtype)
    r = dispatch(_log_softmax_op, (x,), {"dim": d})
    return r.reshape(()) if sq else r


def _out_hw(h, w, k, d, p, s):
    return ((h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1, (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1)


def _check_window(kernel_size, dilation, padding, stride):
    """ATen's checks of the sliding-window geometry shared by im2col and col2im (so convolution, pooling,
    unfold and fold never reach a kernel with a zero stride or a negative padding)."""
    for arg, (a, b), bad, what, word in (("kernel_size", kernel_size, lambda v: v <= 0, "greater than zero", "kernel"),
                                         ("dilation", dilation, lambda v: v <= 0, "greater than zero", "dilation"),
                                         ("padding", padding, lambda v: v < 0, "non-negative", "pad"),
                                         ("stride", stride, lambda v: v <= 0, "greater than zero", "stride")):
        if bad(a) or bad(b):
            name = "kernel size" if arg == "kernel_size" else arg
            raise RuntimeError(f"{name} should be {what}, but got {word}_height: {a} {word}_width: {b}")


def _im2col_meta(x, kernel_size, dilation, padding, stride):
    _check_window(kernel_size, dilation, padding, stride)
    if x.ndim != 4:
        raise RuntimeError(f"im2col: expected a 4-D (N, C, H, W) input, got {x.ndim}-D")
    n, c, h, w = x._shape
    oh, ow = _out_hw(h, w, kernel_size, dilation, padding, stride)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={tuple(kernel_size)}, "
                           f"dilation={tuple(dilation)}, padding={tuple(padding)}, calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    return [((c * kernel_size[0] * kernel_size[1], n, oh * ow), x.dtype)], [None]


def _im2col_decomp(x, kernel_size, dilation, padding, stride):
    from .shape import pad
    kh, kw = kernel_size
    xp = pad(x, (padding[1], padding[1], padding[0], padding[0])).contiguous()
    n, c, h, w = xp._shape
    oh, ow = _out_hw(h, w, kernel_size, dilation, (0, 0), stride)
    s = xp._stride
    win = xp.as_strided((c, kh, kw, n, oh, ow), (s[1], s[2] * dilation[0], s[3] * dilation[1], s[0],
                                                s[2] * stride[0], s[3] * stride[1]), xp._offset)
    return win.reshape(c * kh * kw, n, oh * ow)


def _col2im_meta(cols, output_size, kernel_size, dilation, padding, stride):
    _check_window(kernel_size, dilation, padding, stride)
    ckk, n, L = cols._shape
    kk = kernel_size[0] * kernel_size[1]
    oh, ow = _out_hw(output_size[0], output_size[1], kernel_size, dilation, padding, stride)
    if ckk % kk or oh * ow != L:
        raise RuntimeError(f"col2im: expected input of shape (C*{kk}, N, {oh * ow}), got {list(cols._shape)}")
    return [((n, ckk // kk) + tuple(output_size), cols.dtype)], [None]


def _col2im_decomp(cols, output_size, kernel_size, dilation, padding, stride):
    from .creation import _from_host, zeros
    ckk, n, L = cols._shape
    kh, kw = kernel_size
    c = ckk // (kh * kw)
    hp, wp = output_size[0] + 2 * padding[0], output_size[1] + 2 * padding[1]
    oh, ow = _out_hw(hp, wp, kernel_size, dilation, (0, 0), stride)
    ci, i, j, y, x = np.meshgrid(np.arange(c), np.arange(kh), np.arange(kw), np.arange(oh), np.arange(ow),
                                 indexing="ij")
    flat = ci * hp * wp + (y * stride[0] + i * dilation[0]) * wp + (x * stride[1] + j * dilation[1])
    idx = _from_host(flat.reshape(-1).astype(np.int64), _dt.int64, cols.device)
    src = cols.reshape(c, kh, kw, n, L).permute(3, 0, 1, 2, 4).reshape(n, -1)
    out = zeros((n, c * hp * wp), dtype=cols.dtype, device=cols.device).index_add(1, idx, src)
    out = out.reshape(n, c, hp, wp)
    return out[:, :, padding[0]:padding[0] + output_size[0], padding[1]:padding[1] + output_size[1]].contiguous()


def _im2col_bw(c, g):
    return col2im(g, c.shapes[0][2:], **c.kw)


def _col2im_bw(c, g):
    kw = dict(c.kw)
    kw.pop("output_size")
    return im2col(g, **kw)


_im2col_op = defop("im2col", _im2col_meta, _im2col_bw, decomp=_im2col_decomp, save_inputs=False)
_col2im_op = defop("col2im", _col2im_meta, _col2im_bw, decomp=_col2im_decomp, save_inputs=False)


def _window_stride(size, kernel_size, dilation, padding, stride):
    """``stride`` capped, along each dim that holds at most one window, to the smallest stride that still gives
    one window: the result is the same, and a huge stride (PyTorch accepts any int64) would overflow the
    kernels' strided views."""
    return tuple(max(span + 1, 1) if span < st else st
                 for span, st in ((n + 2 * p - d * (k - 1) - 1, st)
                                  for n, k, d, p, st in zip(size, kernel_size, dilation, padding, stride)))


def im2col(input, kernel_size, dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    """Sliding blocks of (N, C, H, W) as (C*kh*kw, N, L): the GEMM-ready layout convolution uses."""
    stride = _window_stride(input._shape[-2:], kernel_size, dilation, padding, stride)
    return dispatch(_im2col_op, (input,), {"kernel_size": tuple(kernel_size), "dilation": tuple(dilation),
                                           "padding": tuple(padding), "stride": tuple(stride)})


def col2im(input, output_size, kernel_size, dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    """Adjoint of ``im2col``: (C*kh*kw, N, L) -> (N, C, H, W), overlapping values summed."""
    stride = _window_stride(output_size, kernel_size, dilation, padding, stride)
    return dispatch(_col2im_op, (input,), {"output_size": tuple(output_size), "kernel_size": tuple(kernel_size),
                                           "dilation": tuple(dilation), "padding": tuple(padding),
                                           "stride": tuple(stride)})


def unfold2d(input, kernel_size, dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    """(N, C, H, W) -> (N, C*kh*kw, L), as ``torch.nn.functional.unfold`` (a view of ``im2col``)."""
    return im2col(input, kernel_size, dilation, padding, stride).transpose(0, 1)


def fold2d(input, output_size, kernel_size, dilation=(1, 1), padding=(0, 0), stride=(1, 1)):
    """(N, C*kh*kw, L) -> (N, C, H, W), as ``torch.nn.functional.fold``."""
    return col2im(input.transpose(0, 1), output_size, kernel_size, dilation, padding, stride)


# ---- 2-D convolution as one op pair: a native kernel on the cpu backend, im2col + GEMM elsewhere ----------------
# PyTorch's convolution / convolution_backward (native_functions.yaml; derivatives.yaml makes the second the
# first's backward), here for the non-transposed 2-D case that nn.functional.conv2d calls with checked arguments:
# input (N, C, H, W), weight (C_out, C/groups, kh, kw), bias (C_out,) or None, stride / padding / dilation pairs.
# The cpu backend runs tinytorch/csrc/conv.cpp (float32/float64); other backends, and the cpu backend without the
# extension, run the decompositions below: one im2col, one GEMM (per group), col2im for the input gradient.


def _convolution_meta(input, weight, bias, stride, padding, dilation, groups):
    n, _, h, w = input._shape
    cout, _, kh, kw = weight._shape
    oh, ow = _out_hw(h, w, (kh, kw), dilation, padding, stride)
    return [((n, cout, oh, ow), input.dtype)], [None, None, None]


def _images_per_chunk(input, weight, out_hw):
    """How many images of ``input`` one im2col of the decomposition may hold: all of them unless the device binds
    at most ``Backend.max_tensor_bytes`` per kernel (a WebGPU adapter: 128 MiB on Mesa's lavapipe), then as many
    as fit (at least one)."""
    limit = input._storage.backend.max_tensor_bytes(input.device.index)
    n = input._shape[0]
    if limit is None or n <= 1:
        return n
    # the (C*kh*kw, N, L) columns of one image
    per_image = input._shape[1] * weight._shape[2] * weight._shape[3] * out_hw[0] * out_hw[1] * input.dtype.itemsize
    return max(1, min(n, limit // max(1, per_image)))


def _convolution_decomp(input, weight, bias, stride, padding, dilation, groups):
    n, cin, h, w = input._shape
    cout, cin_g, kh, kw = weight._shape
    oh, ow = _out_hw(h, w, (kh, kw), dilation, padding, stride)
    chunk = _images_per_chunk(input, weight, (oh, ow))
    if chunk < n:  # the columns of every image would not fit one binding: image blocks, joined
        from .shape import cat
        return cat([_convolution_decomp(input[i:i + chunk], weight, bias, stride, padding, dilation, groups)
                    for i in range(0, n, chunk)], 0)
    cols = im2col(input, (kh, kw), dilation, padding, stride)  # (C*kh*kw, N, L)
    if groups == 1:  # one (C_out, C*kh*kw) x (C*kh*kw, N*L) GEMM
        out = weight.reshape(cout, -1).matmul(cols.reshape(cin * kh * kw, n * oh * ow))
    else:
        out = weight.reshape(groups, cout // groups, -1).matmul(cols.reshape(groups, cin_g * kh * kw, n * oh * ow))
    out = out.reshape(cout, n, oh, ow).transpose(0, 1)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out


def _convolution_bw(c, g):
    from ..autograd.grad_mode import _state
    x, weight, _ = c.inputs
    mask = tuple(e is not None for e in c.next_edges)
    kw = dict(c.kw, output_mask=mask)
    # create_graph: the gradient must itself be differentiable, which the decomposition (tinytorch ops) is and the
    # native kernel is not
    grads = iter(_as_tuple(_convolution_backward_decomp(g, x, weight, **kw) if _state.enabled else
                           dispatch(_convolution_backward_op, (g, x, weight), kw)))
    return tuple(next(grads) if m else None for m in mask)


def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def _convolution_backward_meta(g, input, weight, stride, padding, dilation, groups, output_mask):
    shapes = (input._shape, weight._shape, (weight._shape[0],))
    return [(s, input.dtype) for s, m in zip(shapes, output_mask) if m], [None, None, None]


def _convolution_backward_decomp(g, input, weight, stride, padding, dilation, groups, output_mask):
    n, cin, h, w = input._shape
    cout, cin_g, kh, kw = weight._shape
    chunk = _images_per_chunk(input, weight, g._shape[2:])
    if chunk < n:  # as the forward: image blocks; the input gradient joined, the weight and bias gradients summed
        from .shape import cat
        parts = [_as_tuple(_convolution_backward_decomp(g[i:i + chunk], input[i:i + chunk], weight, stride, padding,
                                                        dilation, groups, output_mask)) for i in range(0, n, chunk)]
        res, k = [], 0
        for m, joined in zip(output_mask, (True, False, False)):
            if m:
                blocks = [p[k] for p in parts]
                k += 1
                if joined:
                    res.append(cat(blocks, 0))
                    continue
                total = blocks[0]
                for b in blocks[1:]:
                    total = total + b
                res.append(total)
        return tuple(res) if len(res) != 1 else res[0]
    L = g._shape[2] * g._shape[3]
    gm = g.transpose(0, 1).reshape(groups, cout // groups, n * L)  # (G, C_out/G, N*L)
    res = []
    if output_mask[0]:  # W^T dY, folded back onto the input's planes
        cols = weight.reshape(groups, cout // groups, -1).transpose(1, 2).matmul(gm)  # (G, C/G*kh*kw, N*L)
        res.append(col2im(cols.reshape(cin * kh * kw, n, L), (h, w), (kh, kw), dilation, padding, stride))
    if output_mask[1]:  # dY cols^T
        cols = im2col(input, (kh, kw), dilation, padding, stride).reshape(groups, cin_g * kh * kw, n * L)
        res.append(gm.matmul(cols.transpose(1, 2)).reshape(weight._shape))
    if output_mask[2]:
        res.append(g.sum((0, 2, 3)))
    return tuple(res) if len(res) != 1 else res[0]


_convolution_backward_op = defop("convolution_backward", _convolution_backward_meta, None,
                                 decomp=_convolution_backward_decomp)
_convolution_op = defop("convolution", _convolution_meta, _convolution_bw, decomp=_convolution_decomp,
                        save_inputs=(0, 1))


def convolution2d(input, weight, bias, stride, padding, dilation, groups):
    """2-D cross-correlation of ``input`` (N, C, H, W) with ``weight`` (C_out, C/groups, kh, kw), plus ``bias``
    (C_out,) when given: (N, C_out, oh, ow), oh = (H + 2 padding[0] - dilation[0] (kh - 1) - 1) // stride[0] + 1
    (likewise ow). ``stride``, ``padding``, ``dilation``: int pairs, assumed checked (``nn.functional.conv2d``
    checks them, with PyTorch's messages); tensors of one floating dtype.

    One op, ``convolution`` (PyTorch's, not transposed), whose gradient is the op ``convolution_backward``; the cpu
    backend runs both natively (tinytorch/csrc/conv.cpp), other devices their im2col + GEMM decompositions.
    """
    stride = _window_stride(input._shape[-2:], weight._shape[-2:], dilation, padding, stride)
    return dispatch(_convolution_op, (input, weight, bias), {"stride": tuple(stride), "padding": tuple(padding),
                                                            "dilation": tuple(dilation), "groups": int(groups)})


# ---- nll_loss: a fused primitive pair (forward and its gradient), each with a decomposition --------------
def _nll_meta(input, target, weight, ignore_index, reduction):
    from ._util import check_dtype
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.name.capitalize()}")
    check_dtype("nll_loss_out_frame", input.dtype, floating=True)
    return [((input._shape[0],) if reduction == "none" else (), input.dtype)], \
        [None, None, input.dtype if weight is not None else None]


def _check_targets(target, c, ignore_index):
    """IndexError (ATen's message, the first bad target) for a class index outside [0, c) that is not
    ``ignore_index``. The values are read on the host (a copy from a device): one NumPy pass instead of six tensor
    ops and a sync, and no graph break inside a compiled function; a target such a function's graph has not
    computed yet is left to the kernel, when the graph runs."""
    if not target.numel() or getattr(target._storage, "recording", None) is not None:
        return
    t = target.numpy(force=True)
    bad = ((t < 0) | (t >= c)) & (t != ignore_index)
    if bad.any():
        raise IndexError(f"Target {t[bad].reshape(-1)[0]} is out of bounds.")


def _nll_weights(input, target, weight, ignore_index):
    """(safe target, per-sample weight): ignored samples weigh 0 and index class 0; targets are range-checked."""
    from .pointwise import where
    valid = target != ignore_index
    safe = where(valid, target, 0)
    _check_targets(target, input._shape[1], ignore_index)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe)
    return safe, w


def _nll_decomp(input, target, weight, ignore_index, reduction):
    safe, w = _nll_weights(input, target, weight, ignore_index)
    loss = -input.gather(1, safe.unsqueeze(1)).squeeze(1) * w
    if reduction == "none":
        return loss
    return loss.sum() / w.sum() if reduction == "mean" else loss.sum()


def _nll_bw_meta(grad, target, weight, num_classes, ignore_index, reduction):
    return [((target._shape[0], num_classes), grad.dtype)], [None, None, grad.dtype if weight is not None else None]


def _nll_bw_decomp(grad, target, weight, num_classes, ignore_index, reduction):
    from .creation import zeros
    probe = zeros((target._shape[0], num_classes), dtype=grad.dtype, device=grad.device)
    safe, w = _nll_weights(probe, target, weight, ignore_index)
    vals = -w * (grad / w.sum() if reduction == "mean" else grad)
    return probe.scatter(1, safe.unsqueeze(1), vals.unsqueeze(1))


def _nll_bw(c, g):
    input, target, weight = c.inputs
    return dispatch(_nll_backward_op, (g, target, weight), dict(num_classes=input._shape[1], **c.kw)), None, None


def _nll_bw_bw(c, gg):
    # nll_loss_backward is linear in grad: its vector-Jacobian product is nll_loss of the incoming gradient
    _, target, weight = c.inputs
    kw = {k: v for k, v in c.kw.items() if k != "num_classes"}
    return dispatch(_nll_op, (gg, target, weight), kw), None, None


_nll_op = defop("nll_loss", _nll_meta, _nll_bw, decomp=_nll_decomp)
_nll_backward_op = defop("nll_loss_backward", _nll_bw_meta, _nll_bw_bw, decomp=_nll_bw_decomp,
                         save_inputs=(1, 2))  # target, weight: not grad_output


def nll_loss2d(input, target, weight, ignore_index, reduction):
    """Negative log-likelihood of log-probabilities ``input`` (N, C) at class indices ``target`` (N,) int64.

    ``weight`` (C,) or None; ignored targets count 0; 'mean' divides by the summed weights of the counted
    targets. Returns (N,) for reduction 'none', else a scalar. IndexError for a target outside [0, C) (the
    first one, as ATen's message), checked here before any kernel runs.
    """
    if target.dtype is _dt.int64:
        _check_targets(target, input._shape[1], ignore_index)
    return dispatch(_nll_op, (input, target, weight), {"ignore_index": ignore_index, "reduction": reduction})


# ---- max pooling: values and flat indices in one op; the gradient is a scatter_add of those indices ---------
def _max_pool_meta(x, kernel_size, stride, padding, dilation, ceil_mode):
    if x.ndim != 4:
        raise RuntimeError(f"max_pool2d: expected a 4-D (N, C, H, W) input, got {x.ndim}-D")
    if not (x.dtype.is_floating_point or x.dtype in (_dt.int64, _dt.int32, _dt.int16, _dt.int8, _dt.uint8)):
        raise NotImplementedError(f"\"max_pool2d\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'")
    n, c, h, w = x._shape
    k, s, p, d = kernel_size, stride, padding, dilation
    if min(k) <= 0 or min(s) <= 0 or min(d) <= 0:
        raise RuntimeError(f"max_pool2d: kernel_size, stride and dilation must be positive, got kernel_size={k}, "
                           f"stride={s}, dilation={d}")
    if p[0] * 2 > k[0] or p[1] * 2 > k[1]:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[0]}, kernel_size="
                           f"{k[0]} and dilation={d[0]}")
    oh = pool_out_size(h, k[0], s[0], p[0], d[0], ceil_mode)
    ow = pool_out_size(w, k[1], s[1], p[1], d[1], ceil_mode)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{oh}x{ow}). Output size "
                           "is too small")
    return [((n, c, oh, ow), x.dtype), ((n, c, oh, ow), _dt.int64)], [None]


def _max_pool_decomp(x, kernel_size, stride, padding, dilation, ceil_mode):
    from .creation import arange
    from .shape import pad
    n, c, h, w = x._shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    # pad with the dtype's lowest value so padding never wins; extra bottom/right padding for ceil_mode
    oh, ow, eh, ew = pool_geometry(h, w, kernel_size, stride, padding, dilation, ceil_mode)
    low = float("-inf") if x.dtype.is_floating_point else _dt.iinfo(x.dtype).min
    xp = pad(x, (pw, pw + ew, ph, ph + eh), value=low) if ph or pw or eh or ew else x
    cols = im2col(xp.reshape(n * c, 1, xp._shape[2], xp._shape[3]), (kh, kw), (dh, dw), (0, 0), (sh, sw))
    win = cols.reshape(kh * kw, n, c, oh, ow)
    values, arg = win.max(0)  # ties: the first maximum, as PyTorch
    if x.dtype.is_floating_point:
        from .pointwise import where
        # PyTorch's kernel lets a later NaN take the window over an earlier one
        arg = where(values.isnan(), kh * kw - 1 - win.flip(0).max(0)[1], arg)
    row = arange(oh, device=x.device).reshape(oh, 1) * sh - ph + (arg // kw) * dh
    col = arange(ow, device=x.device) * sw - pw + (arg % kw) * dw
    idx = row * w + col
    if ph or pw or eh or ew:
        from .creation import _from_host
        from .pointwise import where
        first = _from_host(first_valid_tap(oh, ow, h, w, stride, padding, dilation), _dt.int64, x.device)
        idx = where(values == low, first, idx)
    return values, idx


def _max_pool_bw(c, g):
    kw = c.kw
    # each input element lies in at most one window when the stride is at least the dilated kernel extent
    disjoint = all(s >= d * (k - 1) + 1 for s, d, k in zip(kw["stride"], kw["dilation"], kw["kernel_size"]))
    c.inputs  # saved (as PyTorch's) though the indices suffice here: a modified input is an error
    return dispatch(_max_pool_backward_op, (g, c.out[1]), {"input_shape": tuple(c.shapes[0]), "disjoint": disjoint})


def _max_pool_backward_meta(g, idx, input_shape, disjoint):
    return [(input_shape, g.dtype)], [None, None]


def _max_pool_backward_decomp(g, idx, input_shape, disjoint):
    from .creation import zeros
    n, ch, h, w = input_shape
    gi = zeros((n, ch, h * w), dtype=g.dtype, device=g.device)
    return gi.scatter_add(2, idx.reshape(n, ch, -1), g.reshape(n, ch, -1)).reshape(n, ch, h, w)


def _max_pool_backward_bw(c, gg):
    # the op is linear in g: its adjoint reads gg at the winning positions
    n, ch = c.kw["input_shape"][:2]
    g_shape, idx = c.shapes[0], c.inputs[1]
    return gg.reshape(n, ch, -1).gather(2, idx.reshape(n, ch, -1)).reshape(g_shape), None


_max_pool_backward_op = defop("max_pool2d_with_indices_backward", _max_pool_backward_meta, _max_pool_backward_bw,
                              decomp=_max_pool_backward_decomp, save_inputs=(1,))  # indices


# self and the indices (result1), as max_pool2d_with_indices_backward(grad, self, ..., result1)
_max_pool_op = defop("max_pool2d_with_indices", _max_pool_meta, _max_pool_bw, decomp=_max_pool_decomp,
                     save_inputs=True, save_output=(1,))


def max_pool2d_with_indices(x, kernel_size, stride, padding, dilation, ceil_mode):
    """Max over windows of an (N, C, H, W) tensor -> (values, indices), both (N, C, oh, ow); indices are flat
    offsets ``h * W + w`` into each input plane, as ``torch.nn.functional.max_pool2d(return_indices=True)``.
    Arguments are int pairs. RuntimeError on a non-positive window or an empty output."""
    return dispatch(_max_pool_op, (x,), {"kernel_size": tuple(kernel_size), "stride": tuple(stride),
                                         "padding": tuple(padding), "dilation": tuple(dilation),
                                         "ceil_mode": bool(ceil_mode)})


# ---- GELU: one op and its gradient op (fused kernels where the backend has them) ---------------------------
_SQRT1_2 = 0.7071067811865476
_SQRT2_PI = 0.7978845608028654  # sqrt(2 / pi)
_INV_SQRT_2PI = 0.3989422804014327


def _gelu_meta(x, approximate):
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for '{SCALAR_NAMES[x.dtype.name]}'")
    return [(x._shape, x.dtype)], [None]


def _gelu_decomp(x, approximate):
    from .pointwise import erf, tanh
    if approximate == "tanh":
        return x * 0.5 * (1 + tanh((x + x * x * x * 0.044715) * _SQRT2_PI))
    return x * 0.5 * (1 + erf(x * _SQRT1_2))


def _gelu_backward_decomp(g, x, approximate):
    from .pointwise import erf, exp, tanh
    if approximate == "tanh":
        t = tanh((x + x * x * x * 0.044715) * _SQRT2_PI)
        return g * (0.5 * (1 + t) + x * 0.5 * (1 - t * t) * _SQRT2_PI * (1 + x * x * 0.134145))
    return g * (0.5 * (1 + erf(x * _SQRT1_2)) + x * exp(x * x * -0.5) * _INV_SQRT_2PI)


def _gelu_bw(c, g):
    from ..autograd.grad_mode import _state
    out = c._out
    if c.kw["approximate"] == "none" and not _state.enabled and c._unpack is None and \
            out._storage._version[0] == c._out_version:
        # first-order backward from the saved output: Phi(x) = out / x, so no erf is evaluated again (~3x less
        # work on cpu). Building a graph (create_graph), or an output modified in place since, takes the
        # gradient op, which recomputes from x and has its own derivative.
        return dispatch(_gelu_backward_from_output_op, (g, c.inputs[0], out))
    return dispatch(_gelu_backward_op, (g, c.inputs[0]), c.kw)


def _gelu_bw_out_meta(g, x, out):
    return [(x._shape, x.dtype)], [x.dtype, None, None]


def _gelu_bw_out_decomp(g, x, out):
    from .pointwise import exp, where
    # Phi(x) = out / x; below |x| = 1e-30 Phi rounds to 0.5 (and out / x would lose digits or be 0 / 0)
    cdf = where(x.abs() < 1e-30, 0.5, out / x)
    return g * (cdf + x * exp(x * x * -0.5) * _INV_SQRT_2PI)


def _gelu_bw_bw(c, gg):
    # d/dg is gelu'(x); d/dx is g * gelu''(x), written in ops
    from .pointwise import exp, tanh
    g, x = c.inputs
    approximate = c.kw["approximate"]
    if approximate == "tanh":
        u = (x + x * x * x * 0.044715) * _SQRT2_PI
        du = (1 + x * x * 0.134145) * _SQRT2_PI
        t = tanh(u)
        s = 1 - t * t
        second = s * du - x * t * s * du * du + x * 0.5 * s * _SQRT2_PI * x * 0.26829
    else:
        pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
        second = pdf * (2 - x * x)
    return dispatch(_gelu_backward_op, (gg, x), c.kw), gg * g * second


def _gelu_bw_meta(g, x, approximate):
    return [(x._shape, x.dtype)], [x.dtype, None]


_gelu_op = defop("gelu", _gelu_meta, _gelu_bw, decomp=_gelu_decomp, save_output=True)
_gelu_backward_op = defop("gelu_backward", _gelu_bw_meta, _gelu_bw_bw, decomp=_gelu_backward_decomp)
# used only outside graph building, so it needs no derivative
_gelu_backward_from_output_op = defop("gelu_backward_from_output", _gelu_bw_out_meta, None,
                                      decomp=_gelu_bw_out_decomp)


def gelu(input, *, approximate="none"):
    """Gaussian error linear unit (Hendrycks & Gimpel 2016, arXiv:1606.08415): ``x * Phi(x)`` exactly (erf) or
    with ``approximate='tanh'``. Any shape, floating dtype; same shape out (``torch.nn.functional.gelu``)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return dispatch(_gelu_op, (input,), {"approximate": approximate})


# ---- layer_norm: one op returning (out, mean, rstd), as ATen's native_layer_norm ------------------------
def _ln_dims(x, normalized_ndim):
    return tuple(range(x.ndim - normalized_ndim, x.ndim))


def _check_norm_params(x, *params):
    """ATen's CPU mixed-dtype rule: when the first given parameter has x's dtype every parameter must have it
    ("expected scalar type Float but found Double"); otherwise every parameter must be float32 and x float16 /
    bfloat16 (a reduced-precision input with float32 parameters)."""
    from .movement import _SCALAR_TYPE
    given = [p for p in params if p is not None]
    if not given:
        return
    if given[0].dtype is x.dtype:
        for p in given[1:]:
            if p.dtype is not x.dtype:
                raise RuntimeError(f"expected scalar type {_SCALAR_TYPE.get(x.dtype.name)} but found "
                                   f"{_SCALAR_TYPE.get(p.dtype.name)}")
        return
    if any(p.dtype.name != "float32" for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if x.dtype.name not in ("float16", "bfloat16"):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _layer_norm_meta(x, weight, bias, normalized_ndim, eps):
    if not x.dtype.is_floating_point:
        from .movement import _SCALAR_TYPE
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for '{_SCALAR_TYPE.get(x.dtype.name)}'")
    _check_norm_params(x, weight, bias)
    stat = x._shape[:x.ndim - normalized_ndim] + (1,) * normalized_ndim
    return [(x._shape, x.dtype), (stat, x.dtype), (stat, x.dtype)], [None, x.dtype, x.dtype]


def _up(*ts):
    """float16/bfloat16 tensors as float32 (statistics accumulate in float32, as in PyTorch)."""
    return tuple(t.float() if t is not None and t.dtype.itemsize < 4 else t for t in ts)


def _layer_norm_decomp(x, weight, bias, normalized_ndim, eps):
    from .pointwise import rsqrt
    if x.dtype.itemsize < 4:
        return tuple(t.to(x.dtype) for t in _layer_norm_decomp(*_up(x, weight, bias), normalized_ndim, eps))
    dims = _ln_dims(x, normalized_ndim)
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    rstd = rsqrt((xc * xc).mean(dims, keepdim=True) + eps)
    out = xc * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _layer_norm_backward_formula(g, x, mean, rstd, weight, normalized_ndim, need):
    """(grad_input, grad_weight, grad_bias) in ops; differentiable, so double backward works."""
    dims = _ln_dims(x, normalized_ndim)
    lead = tuple(range(x.ndim - normalized_ndim))
    xhat = (x - mean) * rstd
    gx = gw = gb = None
    if need[0]:
        gxhat = g * weight if weight is not None else g
        gx = rstd * (gxhat - gxhat.mean(dims, keepdim=True) - xhat * (gxhat * xhat).mean(dims, keepdim=True))
    if need[1]:
        gw = (g * xhat).sum(lead) if lead else g * xhat
    if need[2]:
        gb = g.sum(lead) if lead else g
    return gx, gw, gb


def _layer_norm_bw(c, g):
    from ..autograd.grad_mode import _state
    x, weight, bias = c.inputs
    out, mean, rstd = c.out
    need = tuple(e is not None for e in c.next_edges)
    n = c.kw["normalized_ndim"]
    if _state.enabled:  # building a graph (create_graph=True): the formula in ops, statistics recomputed from x
        _, mean, rstd = _layer_norm_decomp(x, None, None, n, c.kw["eps"])
        return _layer_norm_backward_formula(g, x, mean, rstd, weight, n, need)
    res = dispatch(_layer_norm_backward_op, (g, x, mean, rstd, weight),
                   {"normalized_ndim": n, "need": need})
    return tuple(r if k else None for r, k in zip(res, need))


def _layer_norm_backward_meta(g, x, mean, rstd, weight, normalized_ndim, need):
    wshape = x._shape[x.ndim - normalized_ndim:]
    return [(x._shape, x.dtype), (wshape, x.dtype), (wshape, x.dtype)], [x.dtype, None, None, None, None]


def _layer_norm_backward_decomp(g, x, mean, rstd, weight, normalized_ndim, need):
    from .creation import zeros
    if x.dtype.itemsize < 4:
        res = _layer_norm_backward_decomp(*_up(g, x, mean, rstd, weight), normalized_ndim, need)
        return tuple(t.to(x.dtype) for t in res)
    gx, gw, gb = _layer_norm_backward_formula(g, x, mean, rstd, weight, normalized_ndim, (True,) + need[1:])
    wshape = x._shape[x.ndim - normalized_ndim:]
    z = None
    if gw is None or gb is None:
        z = zeros(wshape, dtype=x.dtype, device=x.device)
    return gx, (gw if gw is not None else z), (gb if gb is not None else z)


# mean and rstd are outputs for the backward; like PyTorch, gradients flow only through ``out``
_layer_norm_op = defop("native_layer_norm", _layer_norm_meta, _layer_norm_bw, decomp=_layer_norm_decomp,
                       save_output=(1, 2))  # mean and rstd (result1, result2), not out
_layer_norm_backward_op = defop("native_layer_norm_backward", _layer_norm_backward_meta, None,
                                decomp=_layer_norm_backward_decomp)


def native_layer_norm(x, weight, bias, normalized_ndim, eps):
    """(out, mean, rstd) of layer normalization over the last ``normalized_ndim`` dims (``torch.native_layer_norm``).

    One op, so a backend may fuse it; its decomposition and backward are written in ops.
    """
    return dispatch(_layer_norm_op, (x, weight, bias), {"normalized_ndim": normalized_ndim, "eps": eps})


# ---- scaled-dot-product attention as one op: a native kernel on the cpu backend, the math path elsewhere -----
# PyTorch's CPU flash kernel pair: (output, logsumexp) forward, and a backward that recomputes the probabilities
# from q, k and the logsumexp (aten/src/ATen/native/transformers/attention.cpp, native_functions.yaml). Here on
# (B, H, L, E) / (B, Hk, S, E) / (B, Hk, S, Ev) with H a multiple of Hk, and the mask (bool: True = attend, or
# additive) as a (B, H, L, S) view, broadcast by strides; the cpu backend runs tinytorch/csrc/attention.cpp.
_FLASH = "_scaled_dot_product_flash_attention_for_cpu"


def _masked_scores(q, k, mask, is_causal, scale):
    """The math path's scores, (..., L, S): scale * q @ k^T with the causal mask or ``mask`` applied (a bool mask
    hides its False entries with -inf, a float mask is added)."""
    L, S = q._shape[-2], k._shape[-2]
    # as ATen's math path: q and k each scaled by sqrt(|scale|) (the sign on q) before the product, which keeps a
    # key near the float maximum from overflowing where scaling the product would not
    root = math.sqrt(abs(scale))
    scores = (q * (-root if scale < 0 else root)) @ (k.transpose(-2, -1) * root)
    if is_causal:
        from .creation import ones
        mask = ones(L, S, dtype=_dt.bool, device=q.device).tril()
    if mask is not None:
        if mask.dtype is _dt.bool:  # as PyTorch: a bool mask becomes an additive 0 / -inf bias
            from .creation import zeros
            mask = zeros(mask._shape, dtype=scores.dtype, device=scores.device).masked_fill(
                mask.logical_not(), float("-inf"))
        scores = scores + mask
    return scores


def _repeat_kv(q, k, v):
    if k._shape[-3] != q._shape[-3]:
        rep = q._shape[-3] // k._shape[-3]
        k, v = k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)
    return k, v


def _flash_meta(q, k, v, mask, is_causal, scale):
    B, H, L, _ = q._shape
    return [((B, H, L, v._shape[-1]), q.dtype), ((B, H, L), q.dtype)], [None, None, None, None]


def _flash_decomp(q, k, v, mask, is_causal, scale):
    from .pointwise import where
    k, v = _repeat_kv(q, k, v)
    scores = _masked_scores(q, k, mask, is_causal, scale)
    lse = scores.logsumexp(-1)
    # a row with every key masked (lse = -inf) attends to nothing: 0, as PyTorch's _safe_softmax
    dead = (lse == float("-inf")).unsqueeze(-1)
    p = where(dead, 0.0, (scores - where(dead, 0.0, lse.unsqueeze(-1))).exp())
    return p @ v, lse


def _flash_bw(c, g):
    from ..autograd.grad_mode import _state
    q, k, v, mask = c.inputs
    out, lse = c.out
    grad_mask = mask is not None and c.next_edges[3] is not None
    args = (g, q, k, v, out, lse, mask)
    kw = {"is_causal": c.kw["is_causal"], "scale": c.kw["scale"], "grad_mask": grad_mask}
    # create_graph: the gradient must itself be differentiable, which the decomposition (tinytorch ops) is and the
    # native kernel (no backward of its own, as PyTorch's flash backward) is not
    grads = _flash_backward_decomp(*args, **kw) if _state.enabled else dispatch(_flash_backward_op, args, kw)
    return tuple(grads) + ((None,) if not grad_mask else ())


def _flash_backward_meta(g, q, k, v, out, lse, mask, is_causal, scale, grad_mask):
    outs = [(q._shape, q.dtype), (k._shape, k.dtype), (v._shape, v.dtype)]
    if grad_mask:
        outs.append(((*q._shape[:3], k._shape[2]), q.dtype))
    return outs, [None] * 7


def _flash_backward_decomp(g, q, k, v, out, lse, mask, is_causal, scale, grad_mask):
    from .pointwise import where
    kr, vr = _repeat_kv(q, k, v)
    scores = _masked_scores(q, kr, mask, is_causal, scale)
    # the probabilities from the scores (a safe softmax), not from the saved logsumexp and output: the formula is
    # also the differentiable backward of create_graph, and only output 0 of the forward carries a gradient
    dead = (scores == float("-inf")).all(-1, keepdim=True)
    p = where(dead, 0.0, (where(dead, 0.0, scores)).softmax(-1))
    dv = p.transpose(-2, -1) @ g
    dp = g @ vr.transpose(-2, -1)
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    dq = (ds @ kr) * scale
    dk = (ds.transpose(-2, -1) @ q) * scale
    if kr is not k:  # grouped-query attention: the repeated heads' gradients summed back onto their shared head
        B, Hk, S, _ = k._shape
        dk = dk.reshape(B, Hk, -1, S, k._shape[-1]).sum(2)
        dv = dv.reshape(B, Hk, -1, S, v._shape[-1]).sum(2)
    return (dq, dk, dv, ds) if grad_mask else (dq, dk, dv)


_flash_backward_op = defop(_FLASH + "_backward", _flash_backward_meta, None, decomp=_flash_backward_decomp)
_flash_op = defop(_FLASH, _flash_meta, _flash_bw, decomp=_flash_decomp, save_inputs=True, save_output=True)
