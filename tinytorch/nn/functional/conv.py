"""Convolutions (1-D to 3-D, and transposed): 2-D as the op ``convolution`` (im2col + matmul where no backend
kernel runs it), 1-D and 3-D through it, transposed ones as matmul + col2im; ``unfold`` / ``fold``."""
from ...amp.autocast_mode import autocast_op
from ... import _dtype as _dt
from ..._ops import nn as _nnops
from ..._ops.nn import fold2d, unfold2d
from ..._ops.shape import pad as _pad
from ._utils import _pair, _scalar_name


def _conv_padding(padding, kernel, dilation, stride, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * nd, None
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            lo = [t // 2 for t in total]
            extra = [t - 2 * l for t, l in zip(total, lo)]
            return tuple(lo), (tuple(extra) if any(extra) else None)
        raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    return _pair(padding, nd), None


def _batch_dim(input, ndim, op):
    """(input with a batch dim, whether one was added): accepts ndim-1 (unbatched) or ndim dims, as PyTorch's
    convolutions do; RuntimeError naming the op and the size otherwise."""
    unbatched = input.ndim == ndim - 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != ndim:
        raise RuntimeError(f"Expected {ndim - 1}D (unbatched) or {ndim}D (batched) input to {op}, but got input of "
                           f"size: {list(input._shape)}")
    return input, unbatched


def _int_tuple(name, arg, value, nd):
    """``value`` (an int or a sequence of 1 or ``nd`` ints) as an ``nd``-tuple, as PyTorch's argument parser and
    expand_param_if_needed take it: TypeError for a non-int element, RuntimeError for another length,
    ValueError / TypeError for an int outside int64 (a bare int / a list element, as PyTorch's parser)."""
    import operator
    seq = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for i, v in enumerate(seq):
        if isinstance(v, (bool, float)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {i}")
    seq = tuple(operator.index(v) for v in seq)
    for i, v in enumerate(seq):
        if not -2 ** 63 <= v < 2 ** 63:
            # PyTorch's parser unpacks each element as a C long long: a bare int fails as ValueError, a list's
            # element is reported as TypeError naming its position
            if not isinstance(value, (tuple, list)):
                raise ValueError("Overflow when unpacking long long")
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                            "\"Overflow when unpacking long long\"")
    if len(seq) == 1:
        return seq * nd
    if len(seq) != nd:
        raise RuntimeError(f"expected {arg} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {arg}={list(seq)}")
    return seq


def _conv_check(name, input, weight, bias, stride, padding, dilation, groups, nd, output_padding=None):
    """PyTorch's checks of an ``nd``-dim (transposed when ``output_padding`` is given) convolution, made before
    anything is computed. Returns (stride, padding, dilation, output_padding) as ``nd``-tuples (padding may
    stay 'same' / 'valid'). RuntimeError, with PyTorch's messages, for: the input's rank; a weight of the
    wrong rank or with 0 output channels / kernel size 0 / channels not divisible by ``groups``; stride <= 0,
    padding < 0, output_padding < 0, groups <= 0, dilation <= 0; a bias that is not a vector of C_out
    elements; a dilated kernel larger than the padded input; padding='same' with a stride; an unknown padding
    string. TypeError for non-int elements (and a padding string to a transposed convolution)."""
    transposed = output_padding is not None
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input._shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {max(weight.ndim - 2, 0)} "
                           f"values to match the convolution dimensions, but got stride="
                           f"{list(_int_tuple(name, 'stride', stride, nd))}")
    stride = _int_tuple(name, "stride", stride, nd)
    dilation = _int_tuple(name, "dilation", dilation, nd)
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(st != 1 for st in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
    else:
        padding = _int_tuple(name, "padding", padding, nd)
    if transposed:
        output_padding = _int_tuple(name, "output_padding", output_padding, nd)
    if any(st <= 0 for st in stride):
        raise RuntimeError("non-positive stride is not supported")
    if not isinstance(padding, str) and any(q < 0 for q in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(q < 0 for q in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    w = list(weight._shape)
    if w[0] == 0:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at dimension 0, but got weight of "
                           f"size {w} instead")
    if not transposed and w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{w}] instead")
    k = w[2:]
    if any(kk <= 0 for kk in k):
        if nd == 3:
            raise RuntimeError(f"kernel size should be greater than zero, but got: {k[0]} x {k[1]} x {k[2]} (TxHxW)")
        kh, kw = ([1] + k)[-2:]
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kh} kernel_width: {kw}")
    cout = w[1] * groups if transposed else w[0]
    if bias is not None and (bias.ndim != 1 or bias._shape[0] != cout):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size {w}, expected bias to be "
                           f"1-dimensional with {cout} elements, but got bias of size {list(bias._shape)} instead")
    if not transposed:
        pads = (0,) * nd if isinstance(padding, str) else padding
        spatial = input._shape[-nd:]
        padded = [sz + 2 * q for sz, q in zip(spatial, pads)]
        dk = [d * (kk - 1) + 1 for d, kk in zip(dilation, k)]
        if padding != "same" and any(a < b for a, b in zip(padded, dk)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, dk))}). Kernel size can't be greater than actual input "
                               "size")
    return stride, padding, dilation, output_padding


_CONV_DTYPES = (_dt.float32, _dt.float64)


@autocast_op("lower")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation): the op ``convolution`` for float32/float64 (the cpu backend's native
    kernel, tinytorch/csrc/conv.cpp; im2col + matmul on other devices), im2col + matmul op by op for other dtypes.

    input (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in/groups, kh, kw); bias (C_out,).
    ``padding`` an int, pair, 'valid' or 'same'. Returns (N, C_out, H_out, W_out).
    RuntimeError on channel or group mismatch, as ``torch.nn.functional.conv2d``.
    """
    stride, padding, dilation, _ = _conv_check("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)
    input, unbatched = _batch_dim(input, 4, "conv2d")
    cout, cin_g, kh, kw = weight._shape
    pad, extra = _conv_padding(padding, (kh, kw), dilation, stride, 2)
    if extra:
        input = _pad(input, (0, extra[1], 0, extra[0]))
    cin = input._shape[1]
    if cin != cin_g * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin_g * groups} channels, but got {cin} channels instead")
    if cout % groups:
        raise RuntimeError("out_channels must be divisible by groups")
    dt = input.dtype
    if dt in _CONV_DTYPES and weight.dtype is dt and (bias is None or bias.dtype is dt):
        out = _nnops.convolution2d(input, weight, bias, stride, pad, dilation, groups)
    else:  # other dtypes, and mixed ones (whose errors are matmul's), run the op's decomposition op by op
        out = _nnops._convolution_decomp(input, weight, bias, stride, pad, dilation, groups)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution: input (N, C_in, L), weight (C_out, C_in/groups, k) -> (N, C_out, L_out).
    Arguments checked as PyTorch's (``_conv_check``)."""
    stride, padding, dilation, _ = _conv_check("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    pad = padding if isinstance(padding, str) else (0, padding[0])
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]), pad,
                 (1, dilation[0]), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution: input (N, C_in, D, H, W) or unbatched, weight (C_out, C_in/groups, kd, kh, kw)
    -> (N, C_out, D_out, H_out, W_out) (``torch.nn.functional.conv3d``).

    Written as a sum over the kd depth taps of 2-D convolutions of strided depth slices, so its gradient
    comes from conv2d's.
    """
    stride, padding, dilation, _ = _conv_check("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)
    input, unbatched = _batch_dim(input, 5, "conv3d")
    cout, cin_g, kd, kh, kw = weight._shape
    pad, extra = _conv_padding(padding, (kd, kh, kw), dilation, stride, 3)
    if extra:
        input = _pad(input, (0, extra[2], 0, extra[1], 0, extra[0]))
    if input._shape[1] != cin_g * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin_g * groups} channels, but got {input._shape[1]} "
                           "channels instead")
    if pad[0]:
        input = _pad(input, (0, 0, 0, 0, pad[0], pad[0]))
    n, cin, d = input._shape[:3]
    od = (d - dilation[0] * (kd - 1) - 1) // stride[0] + 1
    if od <= 0:
        raise RuntimeError(f"Calculated output size is too small: input depth {d} (padded), kernel {kd}")
    out = None
    for i in range(kd):
        start = i * dilation[0]
        xs = input[:, :, start:start + stride[0] * (od - 1) + 1:stride[0]]  # (N, C, od, H, W)
        xs = xs.transpose(1, 2).reshape((n * od, cin) + input._shape[3:])
        y = conv2d(xs, weight[:, :, i], None, stride[1:], pad[1:], dilation[1:], groups)
        out = y if out is None else out + y
    out = out.reshape((n, od) + out._shape[1:]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input) as matmul + col2im.

    input (N, C_in, H, W) or unbatched; weight (C_in, C_out/groups, kh, kw); returns (N, C_out, H_out, W_out)
    with H_out = (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1
    (``torch.nn.functional.conv_transpose2d``).
    """
    from ..._ops.nn import col2im
    stride, padding, dilation, output_padding = _conv_check("conv_transpose2d", input, weight, bias, stride, padding,
                                                            dilation, groups, 2, output_padding)
    input, unbatched = _batch_dim(input, 4, "conv_transpose2d")
    cin, cout_g, kh, kw = weight._shape
    n, c, h, w = input._shape
    if c != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin} channels, but got {c} channels instead")
    if cin % groups:
        raise RuntimeError("in_channels must be divisible by groups")
    # ATen's transposed kernels take an empty batch or channel dim, not an empty spatial one, and refuse a weight
    # without output channels (conv_transpose1d reaches here with its unit height added, as in PyTorch's messages)
    if n and c and not h * w:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input._shape)}")
    if not cout_g:
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {list(weight._shape)}")
    for op_, s_, d_ in zip(output_padding, stride, dilation):
        if op_ >= s_ and op_ >= d_:
            raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: "
                               f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                               f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    cout = cout_g * groups
    x = input.transpose(0, 1).reshape(groups, cin // groups, n * h * w)
    cols = weight.reshape(groups, cin // groups, cout_g * kh * kw).mT.matmul(x)  # (g, C_out/g*kh*kw, N*H*W)
    fh = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1  # the uncropped output
    fw = (w - 1) * stride[1] + dilation[1] * (kw - 1) + 1
    if fh - 2 * padding[0] + output_padding[0] <= 0 or fw - 2 * padding[1] + output_padding[1] <= 0:
        raise RuntimeError(f"conv_transpose2d: calculated output size "
                           f"({fh - 2 * padding[0] + output_padding[0]}x{fw - 2 * padding[1] + output_padding[1]}) "
                           "is too small")
    out = col2im(cols.reshape(cout * kh * kw, n, h * w), (fh, fw), (kh, kw), dilation, (0, 0), stride)
    # padding crops both sides; output_padding gives back rows/columns at the end (zeros past the full size)
    crop = (-padding[1], output_padding[1] - padding[1], -padding[0], output_padding[0] - padding[0])
    if any(crop):
        out = _pad(out, crop)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution: input (N, C_in, L), weight (C_in, C_out/groups, k) -> (N, C_out, L_out).
    Arguments checked as PyTorch's (``_conv_check``)."""
    stride, padding, dilation, output_padding = _conv_check("conv_transpose1d", input, weight, bias, stride, padding,
                                                            dilation, groups, 1, output_padding)
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    out = conv_transpose2d(input.unsqueeze(2), weight.unsqueeze(2), bias, (1, stride[0]), (0, padding[0]),
                           (0, output_padding[0]), groups, (1, dilation[0])).squeeze(2)
    return out.squeeze(0) if unbatched else out


@autocast_op("lower")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution: input (N, C_in, D, H, W) or unbatched, weight (C_in, C_out/groups, kd, kh, kw)
    -> (N, C_out, D_out, H_out, W_out), D_out = (D - 1) * stride - 2 * padding + dilation * (kd - 1) +
    output_padding + 1, likewise H_out and W_out (``torch.nn.functional.conv_transpose3d``).

    Each depth tap i is a 2-D transposed convolution of every input depth slice; its output slices land at
    depth d * stride + i * dilation of the uncropped output (zeros interleaved for stride > 1), and the taps
    are summed. The gradient comes from conv_transpose2d's.
    """
    from ..._ops.shape import stack
    from ..._ops.creation import zeros_like
    stride, padding, dilation, output_padding = _conv_check("conv_transpose3d", input, weight, bias, stride, padding,
                                                            dilation, groups, 3, output_padding)
    input, unbatched = _batch_dim(input, 5, "conv_transpose3d")
    if weight.ndim != 5:
        raise RuntimeError(f"conv_transpose3d: expected a 5-D weight (C_in, C_out/groups, kd, kh, kw), got "
                           f"{list(weight._shape)}")
    cin, cout_g, kd, kh, kw = weight._shape
    n, c, d, h, w = input._shape
    if c != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight._shape)}, expected input"
                           f"{list(input._shape)} to have {cin} channels, but got {c} channels instead")
    op_, s_, dl_ = output_padding[0], stride[0], dilation[0]
    if op_ >= s_ and op_ >= dl_:
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got "
                           f"output_padding: {list(output_padding)} stride: {list(stride)} dilation: "
                           f"{list(dilation)}")
    fd = (d - 1) * s_ + dl_ * (kd - 1) + 1  # the uncropped output depth
    if fd - 2 * padding[0] + op_ <= 0:
        raise RuntimeError(f"conv_transpose3d: calculated output depth {fd - 2 * padding[0] + op_} is too small")
    xs = input.transpose(1, 2).reshape(n * d, c, h, w)
    out = None
    for i in range(kd):
        y = conv_transpose2d(xs, weight[:, :, i], None, stride[1:], padding[1:], output_padding[1:], groups,
                             dilation[1:])
        y = y.reshape((n, d) + y._shape[1:])  # (N, D, C_out, H_out, W_out)
        if s_ > 1:  # slice k goes to depth k * stride: interleave stride - 1 zero slices, drop the trailing ones
            z = zeros_like(y)
            y = stack([y] + [z] * (s_ - 1), 2).reshape((n, d * s_) + y._shape[2:])[:, :(d - 1) * s_ + 1]
        lead = i * dl_
        y = _pad(y, (0, 0, 0, 0, 0, 0, lead, fd - lead - y._shape[1]))
        out = y if out is None else out + y
    out = out.transpose(1, 2)  # (N, C_out, fd, H_out, W_out)
    if padding[0] or op_:
        out = _pad(out, (0, 0, 0, 0, -padding[0], op_ - padding[0]))
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def _fold_pairs(op, **args):
    """The (height, width) pairs of unfold / fold arguments, as PyTorch's parser takes them: TypeError for a
    non-int element, RuntimeError for a sequence of another length than 2."""
    out = []
    for arg, v in args.items():
        t = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
        for i, e in enumerate(t):
            if isinstance(e, (bool, float)) or not hasattr(type(e), "__index__"):
                raise TypeError(f"{op}(): argument '{arg}' must be tuple of ints, but found element of type "
                                f"{type(e).__name__} at pos {i}")
            if not -2 ** 63 <= int(e) < 2 ** 63:
                # the Python wrapper always passes a pair, so the parser reports the element's position
                raise TypeError(f"{op}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                                "\"Overflow when unpacking long long\"")
        if len(t) != 2:
            raise RuntimeError(f"It is expected {arg} equals to 2, but got size {len(t)}")
        out.append(tuple(int(e) for e in t))
    return out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: sliding blocks of (N, C, H, W) or unbatched (C, H, W) as (N, C*kh*kw, L) or (C*kh*kw, L)
    (``torch.nn.functional.unfold``). Checked as PyTorch: RuntimeError for kernel_size / dilation / stride <= 0,
    padding < 0, a 5-D input or an empty non-batch dim, no complete block; IndexError below 3 dims;
    NotImplementedError for an integer input."""
    k, d, p, st = _fold_pairs("im2col", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    _nnops._check_window(k, d, p, st)  # ATen checks the window before it reads the input's sizes
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got {input.ndim})")
    if input.ndim > 4 or 0 in input._shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input._shape)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if input.ndim == 3:
        return unfold2d(input.unsqueeze(0), k, d, p, st).squeeze(0)
    return unfold2d(input, k, d, p, st)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: (N, C*kh*kw, L) or unbatched (C*kh*kw, L) -> (N, C, H, W) or (C, H, W), overlapping values
    summed (``torch.nn.functional.fold``). Checked as PyTorch: RuntimeError for kernel_size / dilation /
    stride <= 0, padding < 0, other ranks or empty non-batch dims, a channel count not divisible by
    kh*kw, an L other than the number of blocks ``output_size`` holds; NotImplementedError for integers."""
    o, k, d, p, st = _fold_pairs("col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                                 padding=padding, stride=stride)
    _nnops._check_window(k, d, p, st)
    if input.ndim not in (2, 3) or 0 in input._shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input._shape)}")
    c, L = input._shape[-2:]
    if c % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={c} and kernel_size={k}.")
    bh, bw = _nnops._out_hw(o[0], o[1], k, d, p, st)
    if bh * bw != L or bh < 1 or bw < 1:
        raise RuntimeError(f"Given output_size={o}, kernel_size={k}, dilation={d}, padding={p}, stride={st}, "
                           f"expected size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{bh} * {bw} = {bh * bw}, but got input.size(2)={L}.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"col2im_out_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    if input.ndim == 2:
        return fold2d(input.unsqueeze(0), o, k, d, p, st).squeeze(0)
    return fold2d(input, o, k, d, p, st)
