"""The device's ATen kernels: each ATen op registered for PrivateUse1 runs the tinytorch op of the same meaning.

A kernel receives what PyTorch's dispatcher passes (device tensors, CPU tensors, Python scalars, dtypes and
devices), sees the device tensors as tinytorch Tensors over the same memory (``_bridge.to_tinytorch``), calls
tinytorch, and returns the results as device tensors. Autograd, views, type promotion of the Python API and
argument parsing stay PyTorch's: a kernel is reached below the Autograd key, so tinytorch records no graph here.

``KERNELS`` maps each ATen overload (``"add.Tensor"``) to the tinytorch function that computes it; the ``_foreach_``
family runs the single-tensor op per element (one rule, not one entry per op). Backward ops whose tinytorch op is
internal (convolution, pooling, normalization) are the vector-Jacobian product of tinytorch's forward, computed by
tinytorch's autograd: the derivative is written once, in tinytorch.
"""
import collections

import numpy as np
import torch

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch._dispatch import dispatch
from tinytorch._ops.nn import _gelu_backward_op, _log_softmax_backward_op, _nll_backward_op, _softmax_backward_op
from tinytorch._ops.optim import fused_adam, fused_sgd
from tinytorch._ops.pointwise import _threshold_backward

from . import _bridge
from ._bridge import TT_DTYPE, State, from_unpacked, check_index, to_tinytorch, to_torch, tt_device

# ---- arguments and results ----------------------------------------------------------------------------------

def cpu_to_tinytorch(t):
    """A tinytorch cpu Tensor holding a copy of the torch cpu tensor ``t``."""
    if t.dtype is torch.bfloat16:
        import ml_dtypes
        a = t.detach().contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    else:
        a = t.detach().resolve_conj().resolve_neg().numpy()
    return tt.from_numpy(np.array(a, copy=True))


def tinytorch_to_cpu(x):
    """A torch cpu tensor holding a copy of the tinytorch Tensor ``x`` (any device)."""
    a = x.detach().cpu().numpy()
    a = np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array 1-d
    if x.dtype is tt.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    # a torch-owned copy: a tensor over NumPy's memory could not be resized (out= arguments of CPU ops)
    return torch.from_numpy(a).clone()


def _in(a, seen):
    """One argument as tinytorch sees it; each device tensor's (tinytorch buffer, torch tensor) goes to ``seen``."""
    u = _bridge.unpack(a)
    if u is not None:
        # the tinytorch Tensor made for this torch tensor before (a kernel's result, or an earlier argument) is
        # reused while its geometry is still the torch tensor's: it keeps its backend view (_nat) ready
        x = getattr(a, "_tinytorch_tensor", None)
        if x is None or x._shape != u[1] or x._stride != u[2] or x._offset != u[3] or \
                x.dtype is not TT_DTYPE[u[4]] or x._storage.buf is not getattr(u[0], "buf", None):
            x = from_unpacked(*u)
            a._tinytorch_tensor = x
        seen.append((x._storage.buf, a))
        return x
    if isinstance(a, torch.Tensor):
        if a.device.type == "cpu":
            return cpu_to_tinytorch(a)
        raise RuntimeError(f"{State.name}: cannot use a tensor on device {a.device} in a {State.name} kernel")
    if isinstance(a, (list, tuple)):
        return type(a)(_in(x, seen) for x in a)
    if isinstance(a, torch.dtype):
        return TT_DTYPE[a]
    if isinstance(a, torch.device):
        return tt.device(a.type if a.type != State.name else State.tt_type, a.index)
    return a


def _out(r, seen):
    """A tinytorch result as torch device tensors. A result over an input's memory (a kernel that returns its
    input, or a view of it) becomes a tensor over that input's torch storage, so PyTorch sees the aliasing."""
    if isinstance(r, tt.Tensor):
        if r._storage.device.type != State.tt_type:
            return tinytorch_to_cpu(r)
        buf = r._storage.buf
        for b, a in seen:
            if b is buf:
                return to_torch(r, a.untyped_storage())
        t = to_torch(r)
        t._tinytorch_tensor = r
        return t
    if isinstance(r, (list, tuple)):
        return type(r)(_out(x, seen) for x in r)
    return r


def make_kernel(fn, name):
    """The torch kernel of ATen overload ``name``: arguments in, ``fn`` (tinytorch), results out."""
    def kernel(*args, **kwargs):
        seen = []
        targs = [_in(a, seen) for a in args]
        r = fn(*targs, **{k: _in(v, seen) for k, v in kwargs.items()}) if kwargs else fn(*targs)
        return _out(r, seen)
    kernel.__name__ = name.replace(".", "_")
    kernel.__qualname__ = "kernel_" + kernel.__name__
    return kernel


def make_inplace_kernel(fn, name):
    """The kernel of an in-place ATen overload (``add_.Tensor``): ``fn`` writes into the tinytorch view of the
    first argument; PyTorch's ``self`` is returned."""
    def kernel(self, *args, **kwargs):
        seen = []
        fn(to_tinytorch(self), *[_in(a, seen) for a in args], **{k: _in(v, seen) for k, v in kwargs.items()})
        return self
    kernel.__name__ = name.replace(".", "_")
    return kernel


def make_out_kernel(fn, name):
    """The kernel of an ``out=`` ATen overload: the result of ``fn`` is written into ``out`` (resized first, as
    PyTorch's ``out=`` rule)."""
    def kernel(*args, out, **kwargs):
        seen = []
        r = fn(*[_in(a, seen) for a in args], **{k: _in(v, seen) for k, v in kwargs.items()})
        if tuple(out.shape) != tuple(r.shape):
            out.resize_(r.shape)
        to_tinytorch(out).copy_(r)
        return out
    kernel.__name__ = name.replace(".", "_")
    return kernel


# ---- factories, copies, storage -----------------------------------------------------------------------------

def _dtype(dtype):
    return dtype if dtype is not None else TT_DTYPE[torch.get_default_dtype()]


def _index(device):
    return check_index(device.index if device is not None else None)


def _empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if layout not in (None, torch.strided):
        raise RuntimeError(f"{State.name}: only strided tensors are supported, not {layout}")
    if pin_memory:
        raise RuntimeError(f"{State.name}: pin_memory applies to CPU tensors only")
    x = tt.empty(tuple(size), dtype=_dtype(dtype), device=tt_device(_index(device)))
    if memory_format is torch.channels_last and len(size) == 4:
        x = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    return x


def _empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=None):
    if pin_memory:
        raise RuntimeError(f"{State.name}: pin_memory applies to CPU tensors only")
    return tt.empty_strided(tuple(size), tuple(stride), dtype=_dtype(dtype), device=tt_device(_index(device)))


def copy_(self, src, non_blocking=False):
    """``self.copy_(src)`` with either or both on the device (broadcast, dtype converted)."""
    if self.device.type == State.name:
        to_tinytorch(self).copy_(to_tinytorch(src) if src.device.type == State.name else cpu_to_tinytorch(src))
        return self
    # self is a cpu tensor: the device's values come to the host, then torch's own copy
    with torch._C._AutoDispatchBelowADInplaceOrView():
        self.copy_(tinytorch_to_cpu(to_tinytorch(src)))
    return self


def _local_scalar_dense(self):
    return self.item()


def resize_(self, size, memory_format=None):
    """PyTorch's ``resize_``: the same storage while it is large enough, else a new one holding the old bytes."""
    size = tuple(size)
    n = 1
    for s in size:
        n *= s
    st = self.untyped_storage()
    need = (self.storage_offset() + n) * self.element_size()
    strides = tuple(int(np.prod(size[i + 1:])) for i in range(len(size)))
    if need <= st.nbytes():
        self.set_(st, self.storage_offset(), size, strides)
        return self
    x = tt.empty((self.storage_offset() + n,), dtype=TT_DTYPE[self.dtype], device=tt_device(self.device.index or 0))
    old = st.nbytes() // self.element_size()
    if old:
        flat = to_tinytorch(self).as_strided((old,), (1,), 0)
        x[:old].copy_(flat)
    t = to_torch(x)
    self.set_(t.untyped_storage(), self.storage_offset(), size, strides)
    return self


# ---- random numbers: drawn by tinytorch's generator (PyTorch's CPU numbers after the same seed) ---------------

# A torch.Generator of the device holds a seed and an offset (as CUDA's Philox generator); the numbers it draws are a
# function of those two, so the tinytorch Generator state reached at each (seed, offset) is kept (the most recent
# ones) and a generator at that point, whichever Python object wraps it, draws on from there.
_STATES = collections.OrderedDict()
_KEEP = 256
_scratch = []


def _gen(generator):
    """(tinytorch Generator, key) drawing for ``generator`` (None: tinytorch's default one, which
    ``torch.opencl.manual_seed`` seeds). RuntimeError for a generator of another device, or one set to a state no
    draw of this process reached."""
    if generator is None:
        return None
    if generator.device.type != State.name:
        raise RuntimeError(f"Expected a '{State.name}' device type for generator but found "
                           f"'{generator.device.type}'")
    if not _scratch:
        _scratch.append(tt.Generator())
    g = _scratch[0]
    key = (generator.initial_seed(), generator.get_offset())
    if key[1] == 0:
        g.manual_seed(key[0])
    else:
        state = _STATES.get(key)
        if state is None:
            raise RuntimeError(f"{State.name}: this generator's state (seed {key[0]}, offset {key[1]}) was not "
                               "reached by a draw in this process")
        g.set_state(state)
    return g


def _drawn(generator, g):
    if g is not None:
        key = (generator.initial_seed(), generator.get_offset() + 1)
        generator.set_offset(key[1])
        _STATES[key] = g.get_state()
        _STATES.move_to_end(key)
        if len(_STATES) > _KEEP:
            _STATES.popitem(last=False)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    s = _gen(generator)
    self.normal_(mean, std, generator=s)
    _drawn(generator, s)


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    s = _gen(generator)
    self.uniform_(from_, to, generator=s)
    _drawn(generator, s)


def bernoulli_float(self, p=0.5, *, generator=None):
    s = _gen(generator)
    self.bernoulli_(p, generator=s)
    _drawn(generator, s)


def random_from(self, from_, to=None, *, generator=None):
    s = _gen(generator)
    self.copy_(tt.randint(from_, to if to is not None else 2 ** 63 - 1, self.shape, device=self.device,
                          generator=s))
    _drawn(generator, s)


def random_to(self, to, *, generator=None):
    random_from(self, 0, to, generator=generator)


# ---- nn: forwards that tinytorch exposes, backwards as vector-Jacobian products --------------------------------

def vjp(forward, inputs, grad, mask=None):
    """The gradients of ``forward(*inputs)`` (output 0) for cotangent ``grad``, by tinytorch's autograd; entries
    of ``mask`` that are False give None."""
    mask = mask if mask is not None else [True] * len(inputs)
    leaves = []
    for x, m in zip(inputs, mask):
        if x is not None and m:
            x = x.detach().requires_grad_()
        leaves.append(x)
    with tt.enable_grad():
        out = forward(*leaves)
        if isinstance(out, (tuple, list)):
            out = out[0]
        wanted = [x for x, m in zip(leaves, mask) if x is not None and m]
        grads = tt.autograd.grad(out, wanted, grad, allow_unused=True) if wanted else ()
    it = iter(grads)
    res = []
    for x, m in zip(leaves, mask):
        if x is not None and m:
            g = next(it)
            res.append(g if g is not None else tt.zeros_like(x))
        else:
            res.append(None)
    return res


def _conv_forward(transposed, stride, padding, dilation, output_padding, groups):
    nd = len(stride)

    def forward(x, w, b=None):
        if transposed:
            f = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
            return f(x, w, b, stride, padding, output_padding, groups, dilation)
        f = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
        return f(x, w, b, stride, padding, dilation, groups)
    return forward


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    return _conv_forward(transposed, stride, padding, dilation, output_padding, groups)(input, weight, bias)


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    fwd = _conv_forward(transposed, stride, padding, dilation, output_padding, groups)
    gi, gw = vjp(fwd, [input, weight], grad_output, list(output_mask[:2]))
    gb = None
    if output_mask[2]:
        gb = grad_output.sum([0] + list(range(2, grad_output.dim())))
    return gi, gw, gb


def max_pool2d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(self, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    return vjp(lambda x: F.max_pool2d(x, kernel_size, stride or None, padding, dilation, ceil_mode),
               [self], grad_output)[0]


def avg_pool2d(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    args = (kernel_size, stride or None, padding, ceil_mode, count_include_pad)
    if self.dtype.is_floating_point:
        return F.avg_pool2d(self, *args, divisor_override)
    # integers (ATen): each window's sum divided by its divisor, truncated toward zero, in the input's dtype
    x = self.to(tt.float64 if State.backend.dev_for(self.device.index or 0).fp64 else tt.float32)
    sums = F.avg_pool2d(x, *args, 1)
    if divisor_override:
        divisor = divisor_override
    else:  # the divisor F.avg_pool2d used: a window's count of input elements over its average of ones
        ones = tt.ones_like(x)
        divisor = (F.avg_pool2d(ones, *args, 1) / F.avg_pool2d(ones, *args)).round()
    return (sums / divisor).trunc().to(self.dtype)


def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return vjp(lambda x: avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                    divisor_override), [self], grad_output)[0]


def _adaptive_avg_pool2d(self, output_size):
    return F.adaptive_avg_pool2d(self, output_size)


def _adaptive_avg_pool2d_backward(grad_output, self):
    return vjp(lambda x: F.adaptive_avg_pool2d(x, grad_output.shape[-2:]), [self], grad_output)[0]


def _normalized_grad(x, dy, mean, rstd, dims):
    """d loss / d x of ``(x - mean) * rstd`` over ``dims`` where mean and rstd are x's own statistics (ATen's
    layer/group norm formula): ``rstd * (dy - mean(dy) - xhat * mean(dy * xhat))``."""
    xhat = (x - mean) * rstd
    return rstd * (dy - dy.mean(dims, keepdim=True) - xhat * (dy * xhat).mean(dims, keepdim=True))


def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    nd = len(normalized_shape)
    dims = list(range(input.dim() - nd, input.dim()))
    lead = list(range(input.dim() - nd))
    dy = grad_out * weight if weight is not None else grad_out
    gi = _normalized_grad(input, dy, mean, rstd, dims) if output_mask[0] else None

    def over_lead(t):  # sum over the leading dims; none when normalized_shape is the whole shape (sum([]): all)
        return t.sum(lead) if lead else t
    gw = over_lead(grad_out * (input - mean) * rstd) if output_mask[1] and weight is not None else None
    gb = over_lead(grad_out) if output_mask[2] and bias is not None else None
    return gi, gw, gb


def _batch_norm_stats(input, training, momentum, eps, running_mean, running_var):
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    if training:
        mean = input.mean(dims)
        var = input.var(dims, correction=0)
        n = input.numel() // input.shape[1]
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.detach(), alpha=momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(var.detach() * (n / max(n - 1, 1)), alpha=momentum)
        return mean, (var + eps).rsqrt(), shape
    return running_mean, (running_var + eps).rsqrt(), shape


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    mean, invstd, shape = _batch_norm_stats(input, training, momentum, eps, running_mean, running_var)
    y = (input - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    if not training:
        return y, tt.empty((0,), dtype=input.dtype, device=input.device), \
            tt.empty((0,), dtype=input.dtype, device=input.device)
    return y, mean, invstd


def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    return native_batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps)


def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                               eps, output_mask):
    shape = [1, -1] + [1] * (input.dim() - 2)

    def forward(x, w):
        if train:
            dims = [0] + list(range(2, x.dim()))
            mean = x.mean(dims, keepdim=True)
            y = (x - mean) * (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()
        else:
            y = (x - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
        return y * w.reshape(shape) if w is not None else y
    gi, gw = vjp(forward, [input, weight], grad_out, list(output_mask[:2]))
    gb = grad_out.sum([0] + list(range(2, grad_out.dim()))) if output_mask[2] else None
    return gi, gw, gb


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    x = input.reshape(N, group, -1)
    mean = x.mean(-1)
    rstd = (x.var(-1, correction=0) + eps).rsqrt()
    y = ((x - mean.unsqueeze(-1)) * rstd.unsqueeze(-1)).reshape(input.shape)
    shape = [1, -1] + [1] * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y, mean, rstd


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    shape = [1, -1] + [1] * (input.dim() - 2)
    dy = grad_out * weight.reshape(shape) if weight is not None else grad_out
    x = input.reshape(N, group, -1)
    m, r = mean.reshape(N, group, 1), rstd.reshape(N, group, 1)
    gi = _normalized_grad(x, dy.reshape(N, group, -1), m, r, [-1]).reshape(input.shape) if output_mask[0] else None
    xhat = ((x - m) * r).reshape(input.shape)
    dims = [0] + list(range(2, input.dim()))
    gw = (grad_out * xhat).sum(dims) if output_mask[1] and weight is not None else None
    gb = grad_out.sum(dims) if output_mask[2] else None
    return gi, gw, gb


# The gradients tinytorch declares as ops of their own (one fused kernel where the backend has one) are called as
# those ops; the others are vector-Jacobian products of the forward (vjp).

def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return dispatch(_log_softmax_backward_op, (grad_output, output), {"dim": dim}).to(input_dtype)


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    return dispatch(_softmax_backward_op, (grad_output, output), {"dim": dim}).to(input_dtype)


_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    """(loss, total weight): ATen's pair; the total is the summed weight of the targets not ignored."""
    loss = F.nll_loss(self, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction])
    valid = target != ignore_index
    if weight is None:
        return loss, valid.sum(dtype=self.dtype)
    w = weight[target.clamp(0, self.shape[-1] - 1)]
    return loss, tt.where(valid, w, tt.zeros((), dtype=self.dtype, device=self.device)).sum()


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    if self.dim() == 2:  # tinytorch's gradient op (batch, classes)
        return dispatch(_nll_backward_op, (grad_output, target, weight), {
            "num_classes": self.shape[1], "ignore_index": ignore_index, "reduction": _REDUCTION[reduction]})
    return vjp(lambda x: F.nll_loss(x, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction]),
               [self], grad_output)[0]


def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return nll_loss_forward(self.movedim(1, -1).reshape(-1, self.shape[1]), target.reshape(-1), weight,
                            reduction, ignore_index) if reduction else \
        (F.nll_loss(self, target, weight, ignore_index=ignore_index, reduction="none"),
         tt.zeros((), dtype=self.dtype, device=self.device))


def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return vjp(lambda x: F.nll_loss(x, target, weight, ignore_index=ignore_index, reduction=_REDUCTION[reduction]),
               [self], grad_output)[0]


def _unary_backward(forward):
    def backward(grad_output, self, *args, **kwargs):
        return vjp(lambda x: forward(x, *args, **kwargs), [self], grad_output)[0]
    return backward


def gelu_backward(grad_output, self, *, approximate="none"):
    return dispatch(_gelu_backward_op, (grad_output, self), {"approximate": approximate})


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    g = grad_output.reshape(-1, grad_output.shape[-1])
    idx = indices.reshape(-1)
    if padding_idx >= 0:
        g = tt.where((idx != padding_idx).unsqueeze(-1), g, tt.zeros((), dtype=g.dtype, device=g.device))
    if scale_grad_by_freq:
        counts = tt.zeros((num_weights,), dtype=g.dtype, device=g.device).index_add(
            0, idx, tt.ones(idx.shape, dtype=g.dtype, device=g.device))
        g = g / counts[idx].unsqueeze(-1)
    return tt.zeros((num_weights, g.shape[-1]), dtype=g.dtype, device=g.device).index_add(0, idx, g)


def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    return F.interpolate(self, size=tuple(output_size), mode="nearest") if scales_h is None else \
        F.interpolate(self, scale_factor=(scales_h, scales_w), mode="nearest")


def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    x = tt.zeros(tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    return vjp(lambda x: upsample_nearest2d(x, output_size, scales_h, scales_w), [x], grad_output)[0]


def native_dropout(input, p, train):
    """(output, keep mask) of dropout. The noise is drawn as ATen's CPU dropout draws it (bernoulli(1 - p) of the
    input's dtype, then divided by 1 - p), by tinytorch's generator, so after the same seed the device drops what
    torch's CPU drops."""
    if train is False or input.numel() == 0:
        return input.clone(), tt.ones(input.shape, dtype=tt.bool, device=input.device)
    if p == 1:
        return input * 0, tt.zeros(input.shape, dtype=tt.bool, device=input.device)
    noise = tt.empty(input.shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    return input * (noise / (1 - p)), noise != 0


def _fused_sdp_choice(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                      enable_gqa=False):
    return 0  # SDPBackend.MATH: scaled_dot_product_attention decomposes into matmul and softmax kernels


# ---- optimizers ---------------------------------------------------------------------------------------------

def _fused_adam(adamw):
    def kernel(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
               weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
        if found_inf is not None and found_inf.item():
            return None  # GradScaler found inf/NaN: the step is skipped (PyTorch's caller un-counts it)
        if grad_scale is not None:  # unscaled in place, as ATen's fused kernels leave the grads
            for g in grads:
                g.div_(grad_scale)
        # PyTorch's caller has already counted this step; tinytorch's fused_adam counts it itself
        for s in state_steps:
            s.sub_(1)
        fused_adam(list(self), list(grads), list(exp_avgs), list(exp_avg_sqs),
                   list(max_exp_avg_sqs) if amsgrad else None, list(state_steps),
                   lr=float(lr), beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay, decoupled=adamw,
                   maximize=maximize)
    return kernel


def _fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
                is_first_step, grad_scale=None, found_inf=None):
    """``SGD(fused=True)``'s op: tinytorch's fused SGD over the lists (momentum buffers empty without momentum)."""
    if found_inf is not None and found_inf.item():
        return None
    if grad_scale is not None:  # unscaled in place, as ATen's fused kernels leave the grads
        for g in grads:
            g.div_(grad_scale)
    fused_sgd(list(self), list(grads), list(momentum_buffer_list) if momentum else None, lr=float(lr),
              momentum=momentum, dampening=dampening, nesterov=nesterov, weight_decay=weight_decay,
              maximize=maximize, is_first_step=is_first_step)


# ---- the table ----------------------------------------------------------------------------------------------

def _indices(indices):
    """ATen's index list (None: the whole dimension) as a Python index."""
    return tuple(slice(None) if i is None else i for i in indices)


def _index_put(self, indices, values, accumulate):
    if accumulate:
        self.index_put_(_indices(indices), values, True)
    else:
        self[_indices(indices)] = values


def _sum(self, dim=None, keepdim=False, *, dtype=None):
    return self.sum(dim if dim not in (None, [], ()) else None, keepdim=keepdim, dtype=dtype)


def _mean(self, dim=None, keepdim=False, *, dtype=None):
    return self.mean(dim if dim not in (None, [], ()) else None, keepdim=keepdim, dtype=dtype)


def _var(self, dim=None, *, correction=None, keepdim=False):
    return self.var(dim if dim not in ([], ()) else None, correction=1 if correction is None else correction,
                    keepdim=keepdim)


def _std(self, dim=None, *, correction=None, keepdim=False):
    return self.std(dim if dim not in ([], ()) else None, correction=1 if correction is None else correction,
                    keepdim=keepdim)


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    if device is not None and device.type == State.tt_type:
        check_index(device.index)
    return self.to(device=device if device is not None else self.device, dtype=dtype or self.dtype, copy=True)


KERNELS = {
    # factories, memory
    "empty.memory_format": _empty,
    "empty_strided": _empty_strided,
    "_local_scalar_dense": _local_scalar_dense,
    "clone": lambda self, *, memory_format=None: self.clone(),
    "fill_.Scalar": lambda self, v: self.fill_(v),
    "fill_.Tensor": lambda self, v: self.fill_(v),
    "zero_": lambda self: self.zero_(),
    # pointwise
    "add.Tensor": lambda self, other, *, alpha=1: tt.add(self, other, alpha=alpha),
    "sub.Tensor": lambda self, other, *, alpha=1: tt.sub(self, other, alpha=alpha),
    "mul.Tensor": tt.mul,
    "div.Tensor": tt.div,
    "div.Tensor_mode": lambda self, other, *, rounding_mode=None: tt.div(self, other, rounding_mode=rounding_mode),
    "pow.Tensor_Scalar": tt.pow, "pow.Tensor_Tensor": tt.pow, "pow.Scalar": tt.pow,
    "maximum": tt.maximum, "minimum": tt.minimum,
    "eq.Tensor": tt.eq, "eq.Scalar": tt.eq, "ne.Tensor": tt.ne, "ne.Scalar": tt.ne,
    "lt.Tensor": tt.lt, "lt.Scalar": tt.lt, "le.Tensor": tt.le, "le.Scalar": tt.le,
    "gt.Tensor": tt.gt, "gt.Scalar": tt.gt, "ge.Tensor": tt.ge, "ge.Scalar": tt.ge,
    "where.self": tt.where,
    "isin.Tensor_Tensor": lambda elements, test_elements, *, assume_unique=False, invert=False: tt.isin(
        elements, test_elements, assume_unique=assume_unique, invert=invert),
    "logical_not": tt.logical_not, "logical_and": tt.logical_and, "logical_or": tt.logical_or,
    "bitwise_and.Tensor": tt.bitwise_and, "bitwise_or.Tensor": tt.bitwise_or, "bitwise_not": tt.bitwise_not,
    "neg": tt.neg, "exp": tt.exp, "log": tt.log, "sqrt": tt.sqrt, "rsqrt": tt.rsqrt, "tanh": tt.tanh,
    "sigmoid": tt.sigmoid, "relu": tt.relu, "abs": tt.abs, "sin": tt.sin, "cos": tt.cos, "erf": tt.erf,
    "reciprocal": tt.reciprocal, "sign": tt.sign, "floor": tt.floor, "ceil": tt.ceil, "trunc": tt.trunc,
    "round": tt.round, "isnan": tt.isnan, "isinf": tt.isinf, "isfinite": tt.isfinite,
    "isneginf": lambda self: self.isinf() & (self < 0), "isposinf": lambda self: self.isinf() & (self > 0), "log1p": tt.log1p, "expm1": tt.expm1, "exp2": tt.exp2,
    "log2": tt.log2, "atan2": tt.atan2, "fmod.Tensor": tt.fmod, "remainder.Tensor": tt.remainder,
    "log10": tt.log10, "lgamma": tt.lgamma, "erfc": tt.erfc, "frac": tt.frac, "tan": tt.tan, "asin": tt.asin,
    "acos": tt.acos, "atan": tt.atan, "sinh": tt.sinh, "cosh": tt.cosh,  # (the _foreach_ rule's per-tensor ops)
    "clamp": lambda self, min=None, max=None: tt.clamp(self, min, max),
    "clamp.Tensor": lambda self, min=None, max=None: tt.clamp(self, min, max),
    "clamp_min": lambda self, min: tt.clamp(self, min=min),
    "clamp_max": lambda self, max: tt.clamp(self, max=max),
    "clamp_min.Tensor": lambda self, min: tt.clamp(self, min=min),
    "clamp_max.Tensor": lambda self, max: tt.clamp(self, max=max),
    "masked_fill.Scalar": tt.masked_fill, "masked_fill.Tensor": tt.masked_fill,
    "lerp.Scalar": tt.lerp, "lerp.Tensor": tt.lerp,
    "addcmul": lambda self, t1, t2, *, value=1: tt.addcmul(self, t1, t2, value=value),
    "addcdiv": lambda self, t1, t2, *, value=1: tt.addcdiv(self, t1, t2, value=value),
    "silu": F.silu, "silu_backward": _unary_backward(F.silu),
    "gelu": lambda self, *, approximate="none": F.gelu(self, approximate=approximate),
    "gelu_backward": gelu_backward,
    "threshold_backward": _threshold_backward,
    "tanh_backward": lambda grad_output, output: grad_output * (1 - output * output),
    "sigmoid_backward": lambda grad_output, output: grad_output * output * (1 - output),
    # reductions
    "sum.dim_IntList": _sum, "sum": _sum, "mean.dim": _mean, "mean": _mean,
    "var.correction": _var, "std.correction": _std,
    "amax": lambda self, dim=(), keepdim=False: self.amax(dim if dim else None, keepdim=keepdim) if dim else
    self.amax(),
    "amin": lambda self, dim=(), keepdim=False: self.amin(dim, keepdim=keepdim) if dim else self.amin(),
    "max.dim": lambda self, dim, keepdim=False: tuple(self.max(dim, keepdim)),
    "min.dim": lambda self, dim, keepdim=False: tuple(self.min(dim, keepdim)),
    "max": lambda self: self.max(), "min": lambda self: self.min(),
    "argmax": lambda self, dim=None, keepdim=False: self.argmax(dim, keepdim),
    "argmin": lambda self, dim=None, keepdim=False: self.argmin(dim, keepdim),
    "all": lambda self: self.all(), "any": lambda self: self.any(),
    "all.dim": lambda self, dim, keepdim=False: self.all(dim, keepdim),
    "any.dim": lambda self, dim, keepdim=False: self.any(dim, keepdim),
    "cumsum": lambda self, dim, *, dtype=None: self.cumsum(dim, dtype=dtype),
    "linalg_vector_norm": lambda self, ord=2, dim=None, keepdim=False, *, dtype=None: tt.linalg.vector_norm(
        self, ord, dim, keepdim, dtype=dtype),
    # linear algebra
    "mm": tt.mm, "bmm": tt.bmm, "dot": tt.dot,
    "addmm": lambda self, m1, m2, *, beta=1, alpha=1: tt.addmm(self, m1, m2, beta=beta, alpha=alpha),
    "baddbmm": lambda self, b1, b2, *, beta=1, alpha=1: tt.baddbmm(self, b1, b2, beta=beta, alpha=alpha),
    # data movement and indexing
    "cat": lambda tensors, dim=0: tt.cat(tensors, dim),
    "stack": lambda tensors, dim=0: tt.stack(tensors, dim),
    "index_select": tt.index_select, "masked_select": tt.masked_select, "nonzero": tt.nonzero, "gather": lambda self, dim, index, *, sparse_grad=False: tt.gather(
        self, dim, index),
    "scatter.src": tt.scatter, "scatter.value": tt.scatter,
    "scatter_add": tt.scatter_add,
    "index.Tensor": lambda self, indices: self[_indices(indices)],
    "index_add": lambda self, dim, index, source, *, alpha=1: self.index_add(dim, index, source, alpha=alpha),
    "tril": tt.tril, "triu": tt.triu, "flip": tt.flip,
    "sort.stable": lambda self, *, stable=False, dim=-1, descending=False: tuple(
        tt.sort(self, dim=dim, descending=descending, stable=bool(stable))),
    "topk": lambda self, k, dim=-1, largest=True, sorted=True: tuple(tt.topk(self, k, dim, largest, sorted)),
    "_to_copy": _to_copy,
    # nn
    "_log_softmax": lambda self, dim, half_to_float: F.log_softmax(self, dim),
    "_softmax": lambda self, dim, half_to_float: F.softmax(self, dim),
    "_log_softmax_backward_data": _log_softmax_backward_data,
    "_softmax_backward_data": _softmax_backward_data,
    "nll_loss_forward": nll_loss_forward, "nll_loss_backward": nll_loss_backward,
    "nll_loss2d_forward": nll_loss2d_forward, "nll_loss2d_backward": nll_loss2d_backward,
    "native_layer_norm": lambda input, normalized_shape, weight, bias, eps: tuple(tt.native_layer_norm(
        input, weight, bias, len(normalized_shape), eps)),
    "native_layer_norm_backward": native_layer_norm_backward,
    "native_batch_norm": native_batch_norm, "native_batch_norm_backward": native_batch_norm_backward,
    "_native_batch_norm_legit": _native_batch_norm_legit,
    "_native_batch_norm_legit.no_stats": _native_batch_norm_legit_no_stats,
    "_native_batch_norm_legit_no_training": _native_batch_norm_legit_no_training,
    "native_group_norm": native_group_norm, "native_group_norm_backward": native_group_norm_backward,
    "convolution": convolution, "convolution_backward": convolution_backward,
    "max_pool2d_with_indices": max_pool2d_with_indices,
    "max_pool2d_with_indices_backward": max_pool2d_with_indices_backward,
    "avg_pool2d": avg_pool2d, "avg_pool2d_backward": avg_pool2d_backward,
    "_adaptive_avg_pool2d": _adaptive_avg_pool2d, "_adaptive_avg_pool2d_backward": _adaptive_avg_pool2d_backward,
    "embedding_dense_backward": embedding_dense_backward,
    "upsample_nearest2d": upsample_nearest2d, "upsample_nearest2d_backward": upsample_nearest2d_backward,
    "_fused_sdp_choice": _fused_sdp_choice,
    "_fused_adam_": _fused_adam(False), "_fused_adamw_": _fused_adam(True), "_fused_sgd_": _fused_sgd_,
    "native_dropout": native_dropout,
    "native_dropout_backward": lambda grad_output, mask, scale: grad_output * mask * scale,
    "mse_loss": lambda self, target, reduction=1: F.mse_loss(self, target, reduction=_REDUCTION[reduction]),
    "mse_loss_backward": lambda grad_output, self, target, reduction: vjp(
        lambda x: F.mse_loss(x, target, reduction=_REDUCTION[reduction]), [self], grad_output)[0],
}

# in-place overloads: the tinytorch in-place method of the same meaning writes into self's memory
INPLACE_KERNELS = {
    "add_.Tensor": lambda self, other, *, alpha=1: self.add_(other, alpha=alpha),
    "sub_.Tensor": lambda self, other, *, alpha=1: self.sub_(other, alpha=alpha),
    "mul_.Tensor": lambda self, other: self.mul_(other), "mul_.Scalar": lambda self, other: self.mul_(other),
    "div_.Tensor": lambda self, other: self.div_(other), "div_.Scalar": lambda self, other: self.div_(other),
    "masked_fill_.Scalar": lambda self, mask, value: self.masked_fill_(mask, value),
    "masked_fill_.Tensor": lambda self, mask, value: self.masked_fill_(mask, value),
    "addcmul_": lambda self, t1, t2, *, value=1: self.addcmul_(t1, t2, value=value),
    "addcdiv_": lambda self, t1, t2, *, value=1: self.addcdiv_(t1, t2, value=value),
    "lerp_.Scalar": lambda self, end, weight: self.lerp_(end, weight),
    "lerp_.Tensor": lambda self, end, weight: self.lerp_(end, weight),
    "clamp_": lambda self, min=None, max=None: self.clamp_(min, max),
    "clamp_min_": lambda self, min: self.clamp_(min=min),
    "index_put_": lambda self, indices, values, accumulate=False: _index_put(self, indices, values, accumulate),
    "_index_put_impl_": lambda self, indices, values, accumulate=False, unsafe=False: _index_put(
        self, indices, values, accumulate),
    "scatter_.src": lambda self, dim, index, src: self.scatter_(dim, index, src),
    "scatter_.value": lambda self, dim, index, value: self.scatter_(dim, index, value),
    "exp_": lambda self: self.exp_(), "sqrt_": lambda self: self.sqrt_(), "neg_": lambda self: self.neg_(),
    "relu_": lambda self: self.relu_(), "sigmoid_": lambda self: self.sigmoid_(),
    "normal_": normal_, "uniform_": uniform_, "bernoulli_.float": bernoulli_float,
    "random_.from": random_from, "random_.to": random_to,
    "tril_": lambda self, diagonal=0: self.copy_(self.tril(diagonal)),
    "triu_": lambda self, diagonal=0: self.copy_(self.triu(diagonal)),
}

def _has_compatible_shallow_copy_type(self, from_):
    """True for two strided tensors (cpu or this device): ``Module.to`` then moves a parameter with
    ``param.data = moved`` (same Parameter object, so tied weights stay tied) instead of a new Parameter per
    module. ATen's built-in rule lists only its own dense backends (TensorImpl::has_compatible_shallow_copy_type);
    PyTorch's OpenReg example device overrides the operator the same way."""
    return self.layout == torch.strided and from_.layout == torch.strided and not self.is_quantized and \
        not from_.is_quantized


def arange_start_out(start, end, step=1, *, out):
    """``torch.arange``: ATen's functional form allocates an empty ``out`` and calls this."""
    r = tt.arange(start, end, step, dtype=TT_DTYPE[out.dtype], device=tt_device(out.device.index or 0))
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    to_tinytorch(out).copy_(r)
    return out


_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def set_storage(self, source, storage_offset, size, stride=()):
    """``Tensor.set_(storage, offset, size, stride)``: PyTorch grows a storage too small for the geometry. ATen's CPU
    kernel would grow it with memcpy over device addresses, so the storage is grown here first (its ``resize_``,
    which copies on the device), then the CPU kernel, which only sets metadata, runs."""
    size = list(size)
    if not stride:
        stride, n = [], 1
        for s in reversed(size):
            stride.insert(0, n)
            n *= s
    if all(s > 0 for s in size):
        need = (storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1) * self.element_size()
        if need > source.nbytes() and storage_offset >= 0 and all(st >= 0 for st in stride):
            source.resize_(need)
    return torch.ops.aten.set_.source_Storage_storage_offset.redispatch(_CPU, self, source, storage_offset, size,
                                                                       stride)


OTHER_KERNELS = {  # kernels that take and return torch tensors themselves
    "set_.source_Storage_storage_offset": set_storage,
    "arange.start_out": arange_start_out,
    "_has_compatible_shallow_copy_type": _has_compatible_shallow_copy_type,
    "copy_": copy_,
    "resize_": resize_,
}

# view ops: they only make new sizes, strides and offset over the same storage, so PyTorch's CPU kernels (which
# never read memory for them) are right for the device too
VIEW_OPS = ["view", "as_strided", "_reshape_alias", "unfold", "set_.source_Storage", "set_.source_Tensor", "alias", "view_as_real", "view_as_complex",
            "_unsafe_view", "squeeze.dim", "unsqueeze"]
