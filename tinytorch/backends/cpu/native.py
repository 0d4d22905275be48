"""The ``cpu`` backend's native kernels: ``tinytorch._C``, C++ built by ``pip install`` (``tinytorch/csrc``).

Each entry here wraps one ``_C`` function as the kernel of an op, with the same signature as the NumPy kernel of
that op in ``registry.KERNELS``. A native function returns ``NotImplemented`` for inputs it has no loop for
(integer or complex dtypes, float16/bfloat16 where it does not convert, mixed dtypes); the wrapper then runs the
NumPy kernel, so the NumPy kernels stay the fallback and the reference.

When the extension is missing (no compiler at install time) or ``TINYTORCH_NATIVE=0`` is set, ``NATIVE_KERNELS``
is empty and ``DISABLED_REASON`` says why; the backend runs on NumPy alone and import prints one warning.
"""
import os
import warnings

from ..base import KernelTable
from .registry import INPLACE_KERNELS, KERNELS

NATIVE_KERNELS = KernelTable("cpu")
NATIVE_INPLACE_KERNELS = KernelTable("cpu")


def _load():
    if os.environ.get("TINYTORCH_NATIVE", "1").strip() in ("0", "false", "off", "no"):
        return None, "TINYTORCH_NATIVE=0 is set"
    try:
        from ... import _C
    except ImportError as e:
        return None, f"tinytorch._C could not be imported ({e}); reinstall with `pip install -e .` and a C++17 " \
                     f"compiler to build it"
    return _C, None


_C, DISABLED_REASON = _load()
if _C is None:
    warnings.warn(f"tinytorch: native CPU kernels disabled: {DISABLED_REASON}. Running the NumPy kernels.",
                  RuntimeWarning, stacklevel=2)


def get_num_threads():
    """Threads of the native kernels' pool (the machine's cores unless ``set_num_threads`` changed it)."""
    return _C.get_num_threads() if _C is not None else 1


def set_num_threads(n):
    """Resize the native kernels' pool to ``n`` threads (``n`` a positive int, checked by the caller,
    ``tinytorch.set_num_threads``); nothing without the extension."""
    if _C is not None:
        _C.set_num_threads(n)


_GEMM_POOL = [False]


def blas_threads(n):
    """The BLAS thread count for ``n`` threads: 1 when the native GEMMs split large products over the pool."""
    return 1 if _GEMM_POOL[0] else n


def blas_threads_per_call():
    """True when the native GEMMs set the BLAS's thread count around each call themselves (OpenBLAS's thread
    functions were found): ``set_num_threads`` then leaves the process-wide BLAS setting, NumPy's, alone."""
    return BLAS is not None and bool(BLAS[3]) and bool(BLAS[4])


def _with_fallback(name, native):
    """Register ``native`` (a Python function) as the kernel of op ``name``: its result, or the NumPy kernel's when
    it returns NotImplemented. For kernels that need Python to map attributes to a native call."""
    fallback = KERNELS[name]
    ni = NotImplemented

    def kernel(*args, **kw):
        r = native(*args, **kw)
        return fallback(*args, **kw) if r is ni else r
    kernel.__name__ = f"native_{name}"
    kernel.__qualname__ = kernel.__name__
    NATIVE_KERNELS.add(name, kernel)
    return kernel


def _native(name, entry, *prefix):
    """Register ``entry(*prefix, *args)`` (a ``_C`` function) as the kernel of op ``name`` with the NumPy kernel as
    its fallback, as one C callable (``_C.NativeKernel``): no Python frame between the dispatcher and the loop.
    A call with keyword attributes goes to the NumPy kernel."""
    return NATIVE_KERNELS.add(name, _C.NativeKernel(entry, prefix, KERNELS[name], f"native_{name}"))


def _register_pointwise():
    import ml_dtypes
    import numpy as np
    from ...kernels import formulas
    _C.set_bfloat16_type(np.dtype(ml_dtypes.bfloat16).num)
    binary, unary = _C.binary, _C.unary
    # op codes: generated with the loops from tinytorch/kernels/formulas.py ({formula name: code})
    bin_code, un_code = _C.BINARY_OPS, _C.UNARY_OPS
    # every formula with a native loop that computes an op with a NumPy kernel from its operands alone is that op's
    # kernel; a call with keyword attributes (add's alpha, div's rounding_mode) goes to the NumPy kernel
    for f in formulas.for_target("cpp"):
        if f.op == f.name and not f.attrs and not f.when and f.op in KERNELS:
            _native(f.op, binary if f.arity == 2 else unary, (bin_code if f.arity == 2 else un_code)[f.name])
    _native("where", _C.where)
    # clone of a C-contiguous array: one memcpy split over the pool (NumPy's copy runs on one thread)
    _native("clone", _C.copy)
    # in place (Tensor.add_ ...): the NumPy in-place kernel when the native one declines
    binary_ = _C.binary_
    for name, alpha_name in (("add", "add_alpha"), ("sub", "sub_alpha"), ("mul", None), ("div", None)):
        fallback = INPLACE_KERNELS[name]

        def k(dst, other, alpha=1, rounding_mode=None, _c=bin_code[name], _ca=bin_code.get(alpha_name),
              _fb=fallback):
            if rounding_mode is None and (alpha == 1 or _ca is not None):
                r = binary_(_c, dst, other) if alpha == 1 else binary_(_ca, dst, other, alpha)
                if r is None:
                    return
            _fb(dst, other, alpha=alpha, rounding_mode=rounding_mode)
        k.__name__ = f"native_{name}_"
        NATIVE_INPLACE_KERNELS.add(name, k)
    clamp = un_code["clamp"]
    _with_fallback("clamp", lambda a, lo, hi: unary(clamp, a, 0.0 if lo is None else lo,
                                                    0.0 if hi is None else hi, lo is not None, hi is not None)
                   if type(lo) in (int, float, type(None)) and type(hi) in (int, float, type(None))
                   and a.dtype.kind == "f" else NotImplemented)
    threshold_bw = bin_code["threshold_backward"]
    _with_fallback("threshold_backward", lambda g, x, threshold: binary(threshold_bw, g, x, threshold))
    gelu, gelu_tanh = un_code["gelu"], un_code["gelu_tanh"]
    _with_fallback("gelu", lambda x, approximate: unary(gelu_tanh if approximate == "tanh" else gelu, x))
    gelu_bw, gelu_tanh_bw = bin_code["gelu_backward"], bin_code["gelu_tanh_backward"]
    _with_fallback("gelu_backward", lambda g, x, approximate: binary(
        gelu_tanh_bw if approximate == "tanh" else gelu_bw, g, x))
    # the NumPy kernel reuses the saved output to skip an erf pass; the native loop's erf is cheaper than the
    # extra memory traffic, so it recomputes Phi(x) as PyTorch's GeluBackward does
    _with_fallback("gelu_backward_from_output", lambda g, x, out: binary(gelu_bw, g, x))


def _register_optim():
    # the multi-tensor optimizer updates (tinytorch/csrc/optim.cpp): one native call per param group
    fa, fs, fr, fg = _C.fused_adam, _C.fused_sgd, _C.fused_rmsprop, _C.fused_adagrad
    _with_fallback("fused_adam", lambda params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr,
                   beta1, beta2, eps, weight_decay, decoupled, maximize: fa(
                       params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, eps,
                       weight_decay, decoupled, maximize))
    _with_fallback("fused_sgd", lambda params, grads, momentum_buffers, lr, momentum, dampening, nesterov,
                   weight_decay, maximize, is_first_step: fs(
                       params, grads, momentum_buffers, lr, momentum, dampening, nesterov, weight_decay, maximize,
                       is_first_step))
    _with_fallback("fused_rmsprop", lambda params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr,
                   alpha, eps, weight_decay, momentum, centered, maximize: fr(
                       params, grads, square_avgs, grad_avgs, momentum_buffers, state_steps, lr, alpha, eps,
                       weight_decay, momentum, centered, maximize))
    _with_fallback("fused_adagrad", lambda params, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps,
                   maximize: fg(params, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps, maximize))


def _register_rows():
    # softmax family, layer norm, NLL loss (tinytorch/csrc/rows.cpp): the _C entries take the NumPy kernels'
    # arguments, by position or by keyword, and return NotImplemented for what they leave to NumPy (float16 /
    # bfloat16, an out-of-range target, whose IndexError the NumPy kernel raises)
    for name in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "native_layer_norm",
                 "native_layer_norm_backward", "nll_loss", "nll_loss_backward"):
        _with_fallback(name, getattr(_C, name))


def _register_reduce():
    reduce, arg_reduce = _C.reduce, _C.arg_reduce
    # op codes: exported by the native family itself (tinytorch/csrc/reduce_ops.h, {name: code})
    red = _C.REDUCE_OPS
    _RED_SUM, _RED_MAX, _RED_MIN = red["sum"], red["max"], red["min"]
    # fewer than 64 elements: NumPy's np.sum, as the NumPy kernel; its summation order is closer to torch's than
    # the native loop's double accumulation, which sensitive optimizers (L-BFGS) amplify over many steps
    _with_fallback("sum", lambda a, dims, keepdim, dtype: reduce(_RED_SUM, a, dims, keepdim)
                   if (dtype is None or dtype.np == a.dtype) and a.size >= 64 else NotImplemented)
    _with_fallback("amax", lambda a, dims, keepdim: reduce(_RED_MAX, a, dims, keepdim))
    _with_fallback("amin", lambda a, dims, keepdim: reduce(_RED_MIN, a, dims, keepdim))
    _with_fallback("argmax", lambda a, dim, keepdim: arg_reduce(_RED_MAX, False, a, dim, keepdim))
    _with_fallback("argmin", lambda a, dim, keepdim: arg_reduce(_RED_MIN, False, a, dim, keepdim))
    _with_fallback("max_dim", lambda a, dim, keepdim: arg_reduce(_RED_MAX, True, a, dim, keepdim))
    _with_fallback("min_dim", lambda a, dim, keepdim: arg_reduce(_RED_MIN, True, a, dim, keepdim))


def _register_index():
    index_select, index_put0, scatter = _C.index_select, _C.index_put0, _C.scatter
    full = slice(None)

    def dim0_index(indices, spec):
        """The one index array when ``spec`` indexes dim 0 by it and takes the other dims whole."""
        if len(indices) == 1 and spec and spec[0] == ("t", 0) and all(s == full for s in spec[1:]) \
                and indices[0].dtype.kind in "iu":
            return indices[0]
        return None

    def index(a, *indices, spec):
        i = dim0_index(indices, spec)
        if i is None or a.ndim == 0 or len(spec) > a.ndim:
            return NotImplemented
        r = index_select(a, i.reshape(-1), 0)
        return r if r is NotImplemented else r.reshape(i.shape + a.shape[1:])

    def index_put(a, values, *indices, spec, accumulate=False):
        i = dim0_index(indices, spec)
        if i is None or a.ndim == 0 or len(spec) > a.ndim:
            return NotImplemented
        return index_put0(a, values, i, accumulate)

    index_add, gather = _C.index_add, _C.gather
    _with_fallback("index_select", lambda a, index, dim: index_select(a, index, dim))
    _with_fallback("index_add", lambda a, index, src, dim, alpha=1: index_add(a, index, src, dim, alpha))
    _with_fallback("gather", lambda a, index, dim: gather(a, index, dim))
    _with_fallback("scatter", lambda a, index, src, dim, reduce=None: scatter(a, index, src, dim, reduce == "add", False)
                   if reduce is None or reduce == "add" else NotImplemented)
    _with_fallback("scatter_reduce", lambda a, index, src, dim, reduce, include_self:
                   scatter(a, index, src, dim, True, not include_self) if reduce == "sum" else NotImplemented)
    _with_fallback("index", index)
    _with_fallback("index_put", index_put)
    _with_fallback("cat", lambda *ts, dim: _C.cat(ts, dim))


def _find_blas():
    """(sgemm address, dgemm address, ILP64?, set-threads address, get-threads address) of the CBLAS GEMMs and
    OpenBLAS's ``openblas_set_num_threads`` / ``openblas_get_num_threads`` in the BLAS NumPy loaded, or None
    without the GEMMs (the thread functions are 0 in a BLAS that is not OpenBLAS).

    NumPy's wheels bundle OpenBLAS with 64-bit integers and prefixed, suffixed names (``scipy_cblas_sgemm64_``);
    other builds export ``cblas_sgemm`` with or without a ``64_`` suffix. The library is the one in NumPy's
    bundled-libraries folder or, for a NumPy linked to a system BLAS, the one threadpoolctl reports."""
    import ctypes
    import glob
    import numpy as np
    root = os.path.dirname(os.path.dirname(np.__file__))
    paths = [p for d in (os.path.join(root, "numpy.libs"), os.path.join(os.path.dirname(np.__file__), ".dylibs"))
             for p in sorted(glob.glob(os.path.join(d, "*blas*")))]
    if not paths:
        try:
            import threadpoolctl
            paths = [i["filepath"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        except Exception:  # noqa: BLE001 - no BLAS found: NumPy's matmul stays in charge
            paths = []
    names = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_", True), ("cblas_sgemm64_", "cblas_dgemm64_", True),
             ("scipy_cblas_sgemm", "scipy_cblas_dgemm", None), ("cblas_sgemm", "cblas_dgemm", None))
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
        except OSError:
            continue
        for s, d, ilp64 in names:
            if hasattr(lib, s) and hasattr(lib, d):
                if ilp64 is None:
                    # unsuffixed names: OpenBLAS says in its configuration string whether it has 64-bit integers;
                    # a BLAS that does not say is taken as LP64
                    conf = next((getattr(lib, c) for c in ("openblas_get_config", "scipy_openblas_get_config")
                                 if hasattr(lib, c)), None)
                    if conf is not None:
                        conf.restype = ctypes.c_char_p
                    ilp64 = conf is not None and b"USE64BITINT" in (conf() or b"")
                addr = lambda f: ctypes.cast(getattr(lib, f), ctypes.c_void_p).value  # noqa: E731
                # the thread count's pair under the same naming scheme as the GEMMs (NumPy's wheels:
                # scipy_openblas_set_num_threads64_); set and get are taken together or not at all
                threads = next(((addr(st), addr(gt)) for st, gt in _BLAS_THREAD_NAMES
                                if hasattr(lib, st) and hasattr(lib, gt)), (0, 0))
                return (addr(s), addr(d), ilp64) + threads
    return None


_BLAS_THREAD_NAMES = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                      ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
                      ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                      ("openblas_set_num_threads", "openblas_get_num_threads"))

BLAS = None  # (sgemm, dgemm, ilp64, set_threads, get_threads) once found: matmul and linear run natively


def _register_gemm():
    global BLAS
    BLAS = _find_blas()
    if BLAS is None:
        return
    _C.set_blas(*BLAS)
    # large GEMMs run as blocks on the native pool, each a single-threaded call of the packed GEMM (CPUs with AVX2:
    # kernels/gemm.inc) or of the BLAS: the pool's threads sleep soon after a step's kernels, OpenBLAS's spin, and a
    # busy core elsewhere stalled its threaded GEMMs 2.5x more (benchmarks/bench.py --busy).
    # TINYTORCH_GEMM_THREADS=blas leaves large products to the BLAS and its own threads instead. Either way the
    # BLAS's thread count is set per native call and restored after it (blas.h's BlasThreads), so NumPy calls made
    # outside tinytorch's kernels keep NumPy's own threads.
    if os.environ.get("TINYTORCH_GEMM_THREADS", "pool") != "blas":
        _C.set_gemm_pool(True)
        _GEMM_POOL[0] = True
    _native("matmul", _C.matmul)
    _native("linear", _C.linear)


def _register_conv():
    im2col, col2im = _C.im2col, _C.col2im
    pool, pool_bw = _C.max_pool2d_with_indices, _C.max_pool2d_with_indices_backward
    _with_fallback("im2col", lambda x, kernel_size, dilation, padding, stride: im2col(
        x, kernel_size, dilation, padding, stride))
    _with_fallback("col2im", lambda cols, output_size, kernel_size, dilation, padding, stride: col2im(
        cols, output_size, kernel_size, dilation, padding, stride))
    _with_fallback("max_pool2d_with_indices", lambda x, kernel_size, stride, padding, dilation, ceil_mode: pool(
        x, kernel_size, stride, padding, dilation, ceil_mode))
    _with_fallback("max_pool2d_with_indices_backward", lambda g, idx, input_shape, disjoint: pool_bw(
        g, idx, input_shape, disjoint))
    # convolution's pair (conv.cpp): float32/float64, the only dtypes nn.functional.conv2d sends to the op, so
    # there is no NumPy kernel to fall back to (other configurations run the op's decomposition)
    fwd, bwd = _C.conv2d_forward, _C.conv2d_backward

    def convolution(x, weight, bias, stride, padding, dilation, groups):
        return fwd(x, weight, bias, stride, padding, dilation, groups)

    def convolution_backward(g, x, weight, stride, padding, dilation, groups, output_mask):
        r = bwd(g, x, weight, stride, padding, dilation, groups, *output_mask)
        return r[0] if len(r) == 1 else r
    for f in (convolution, convolution_backward):
        f.__name__ = f.__qualname__ = f"native_{f.__name__}"
        NATIVE_KERNELS.add(f.__name__[len("native_"):], f)


def _register_attention():
    # scaled_dot_product_attention's fused pair (tinytorch/csrc/attention.cpp): float32/float64 in every case the
    # op is called with, so there is no NumPy kernel to fall back to (other cpu configurations run the op's
    # decomposition); a NotImplemented from the entry (an argument of a type it does not take) is a caller's bug
    fwd, bwd = _C.sdpa_forward, _C.sdpa_backward
    name = "_scaled_dot_product_flash_attention_for_cpu"
    ni = NotImplemented

    def forward(q, k, v, mask, is_causal, scale):
        r = fwd(q, k, v, mask, is_causal, scale)
        if r is ni:
            raise TypeError(f"{name}: the native kernel takes float32/float64 arrays, got {q.dtype}")
        return r

    def backward(g, q, k, v, out, lse, mask, is_causal, scale, grad_mask):
        r = bwd(g, q, k, v, out, lse, mask, is_causal, scale, grad_mask)
        if r is ni:
            raise TypeError(f"{name}_backward: the native kernel takes float32/float64 arrays, got {q.dtype}")
        return r
    forward.__name__ = forward.__qualname__ = f"native_{name}"
    backward.__name__ = backward.__qualname__ = f"native_{name}_backward"
    NATIVE_KERNELS.add(name, forward)
    NATIVE_KERNELS.add(name + "_backward", backward)


if _C is not None:
    _register_pointwise()
    _register_optim()
    _register_rows()
    _register_reduce()
    _register_index()
    _register_gemm()
    _register_conv()
    _register_attention()
