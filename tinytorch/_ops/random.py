"""Random sampling: rand, randn, randint, randperm, normal, bernoulli, poisson, binomial, multinomial (and their
``*_like`` forms), and the in-place samplers of Tensor (uniform_, normal_, bernoulli_, exponential_, random_,
log_normal_, cauchy_, geometric_) with PyTorch's argument checks. They draw from ``generator.py``'s Generator
with ATen's transformations where PyTorch's numbers can be matched (see ``Generator``)."""
import builtins
import math

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._storage import check_alloc
from .._tensor import Tensor
from ..autograd.grad_mode import _state
from .._modes import _lazy
from ._util import SCALAR_NAMES as _SCALAR_NAMES, check_dtype, method
from .creation import (_CPP_NAMES, _NO_SIZE, _factory_size, _from_host, _meta_tensor, _number, _shape_only_device, _size,
                       _tensor_arg)
from .generator import _gen, _rng


def _np_float(d):
    """The NumPy type of a real float dtype (ml_dtypes' bfloat16 included)."""
    return d.np.type if hasattr(d.np, "type") else d.np


def _float_dtype(dtype, op, complex_ok=False):
    """``dtype`` (default: the default float dtype) when the sampler ``op`` supports it, else PyTorch's
    NotImplementedError (``"check_uniform_bounds" not implemented for 'Long'``)."""
    return check_dtype(op, dtype or _dt.get_default_dtype(), floating=True, complex_ok=complex_ok)


def _fmt(v):
    """A number as PyTorch's messages print it (``-3`` for -3.0, ``1.09951e+12``)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def _check_int64(op, *vals):
    """ValueError as PyTorch's argument parser for Python ints outside int64."""
    for v in vals:
        if isinstance(v, int) and not -(1 << 63) <= v < (1 << 63):
            raise ValueError("Overflow when unpacking long long")


def _int_args(op, *vals):
    """TypeError as PyTorch's overload resolution when a bound that must be an int is not one."""
    if builtins.any(not isinstance(v, (int, np.integer)) or isinstance(v, bool) for v in vals):
        got = ", ".join(type(v).__name__ for v in vals)
        raise TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected "
                        "int bounds")


def _walk_order(t):
    """``(order, dense)`` for a tensor ``t`` that a sampler fills: ``order`` lists its dims outermost first as
    ATen's TensorIterator walks them (by decreasing stride, ties kept in dim order), so that the n-th draw lands
    on the n-th element in memory; ``dense`` says whether ``t`` is a permutation of a contiguous tensor (then
    ``empty_like`` keeps its strides, as PyTorch's preserve_format)."""
    shape, st = t._shape, t.stride()
    order = sorted(range(len(shape)), key=lambda d: -st[d])
    expect, dense = 1, True
    for d in reversed(order):
        if shape[d] != 1 and st[d] != expect:
            dense = False
        expect *= shape[d]
    return order, dense


def _draw_in_order(order, shape, draw):
    """``draw(walk_shape)`` (an array of ``shape`` permuted by ``order``, filled in C order) laid back out in
    ``shape``'s dims: the draws in the order TensorIterator writes them."""
    arr = np.asarray(draw(tuple(shape[d] for d in order)))
    return arr.transpose(np.argsort(order)) if list(order) != sorted(order) else arr


def _like(input, make):
    """``make(shape)`` (a new contiguous tensor) laid out as ``empty_like(input)`` is in PyTorch: a dense
    permuted ``input`` (a transpose) gives a result with its strides, filled in memory order."""
    order, dense = _walk_order(input)
    if not dense or order == sorted(order):
        return make(input._shape)
    return make(tuple(input._shape[d] for d in order)).permute(*np.argsort(order).tolist())


def rrelu_noise(input, lower, upper, generator=None):
    """The slopes of training-mode rrelu, as ATen's rrelu_with_noise CPU kernel draws them: one double
    U(lower, upper) for each element ``<= 0`` of the input (walked in logical order of its contiguous copy;
    lower/upper first rounded to the opmath type), 1 for the others (NaN included). A float32 tensor (float64
    for a float64 input) of the input's shape, unrounded to the input's dtype."""
    work = np.float64 if input.dtype is _dt.float64 else np.float32
    x = input.detach().numpy(force=True)
    with np.errstate(invalid="ignore"):
        neg = x <= 0
    lo, hi = float(work(lower)), float(work(upper))
    noise = np.ones(x.shape, work)
    k = int(np.count_nonzero(neg))
    if k:
        # x * (to - from) + from in two roundings here (this loop is not compiled to a fused multiply-add)
        u = _gen(generator)._uniform(k, np.float64)
        noise[neg] = (u * (hi - lo) + lo).astype(work)
    return _from_host(noise, _dt.float64 if work is np.float64 else _dt.float32, input.device)


_DIGITS = {"float32": 24, "float64": 53, "float16": 11, "bfloat16": 8}


def _to_float_and_back(d, v):
    """``static_cast<int64_t>(static_cast<scalar_t>(v))`` for a float dtype ``d``; a value past int64 (inf
    included) converts to INT64_MIN, as x86's conversion does."""
    with np.errstate(over="ignore"):
        f = float(np.float32(v)) if d is not _dt.float64 else float(v)
        if d in (_dt.float16, _dt.bfloat16):
            f = float(np.asarray(np.float32(f)).astype(_np_float(d)))
    return int(f) if math.isfinite(f) and -2.0 ** 63 <= f < 2.0 ** 63 else -(1 << 63)


def _random_range(d, lo, hi):
    """``(from, to)`` of random_(from, to) / randint on dtype ``d`` after ATen's checks (random_from_to_impl):
    from < to, then for float dtypes both moved to values the dtype holds (update_from / update_to: a bound that
    rounds past itself steps back by its ulp), then from and to - 1 within the dtype's range (RuntimeError
    ``to - 1 is out of bounds for int``), a warning past 2^digits for floats."""
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    name = _CPP_NAMES.get(d.name, d.name)
    if d.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if d.is_floating_point:
        digits = _DIGITS[d.name]
        up = _to_float_and_back(d, lo + 1)
        if up < lo:
            lo = up + (1 << ((abs(lo + 1).bit_length() - 1) - digits + 1))
        down = _to_float_and_back(d, hi - 1)
        if down >= hi:
            hi = down - (1 << ((abs(hi - 1).bit_length() - 1) - digits + 1))
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but "
                               f"got from={lo} >= to={hi}")
        fi = _dt.finfo(d)
        low_b, high_b = float(fi.min), float(fi.max)
    else:
        ii = _dt.iinfo(d) if d is not _dt.bool else None
        low_b, high_b = (0, 1) if ii is None else (int(ii.min), int(ii.max))
    for what, v in (("from", lo), ("to - 1", hi - 1)):
        if not low_b <= v <= high_b:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if d.is_floating_point:
        import warnings
        for what, v in (("from", lo), ("to - 1", hi - 1)):
            if not -(1 << digits) <= v <= (1 << digits):
                warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{name} can support discrete uniform distribution only within this range. This "
                              "warning will become an error in version 1.7 release, please fix the code in advance")
    return lo, hi


def _complex_from_parts(arr, d):
    """(..., 2) float samples -> complex ``d`` samples (real and imaginary parts independent)."""
    return (arr[..., 0] + 1j * arr[..., 1]).astype(d.np)


def rand(*sizes, size=_NO_SIZE, generator=None, dtype=None, device=None, requires_grad=False, out=None,
         layout=None):
    """Uniform samples on [0, 1) of shape ``size`` (``torch.rand``: ``rand(2, 3)``, ``rand((2, 3))`` or
    ``rand(size=(2, 3))``); complex dtypes draw both parts so."""
    size = _factory_size("rand", sizes, size)
    dtype = _dt.as_dtype(dtype, "rand")
    d = _float_dtype(dtype, "check_uniform_bounds", complex_ok=True)
    check_alloc(_size(size, "rand"), d)
    so = _shape_only_device(device)
    if so:
        return _meta_tensor(_size(size), d, so[0], so[1], requires_grad)
    if d.is_complex:
        part = np.float32 if d.itemsize == 8 else np.float64  # the real view (..., 2), as PyTorch draws it
        shape2 = _size(size, "rand") + (2,)
        arr = _complex_from_parts(_gen(generator)._uniform(math.prod(shape2), part).reshape(shape2), d)
        return _from_host(arr, d, device, requires_grad)
    shape = _size(size)
    arr = _gen(generator)._uniform(math.prod(shape), _np_float(d)).reshape(shape)
    return _from_host(arr, d, device, requires_grad)


def randn(*sizes, size=_NO_SIZE, generator=None, dtype=None, device=None, requires_grad=False, out=None,
          layout=None):
    """Standard normal samples of shape ``size`` (``torch.randn``: positional sizes or ``size=``); complex
    dtypes give E|z|^2 = 1 (each part has variance 1/2, as in PyTorch)."""
    size = _factory_size("randn", sizes, size)
    dtype = _dt.as_dtype(dtype, "randn")
    d = _float_dtype(dtype, "normal_kernel_cpu", complex_ok=True)
    check_alloc(_size(size, "randn"), d)
    so = _shape_only_device(device)
    if so:
        return _meta_tensor(_size(size), d, so[0], so[1], requires_grad)
    if d.is_complex:
        part = np.float32 if d.itemsize == 8 else np.float64
        shape2 = _size(size, "randn") + (2,)
        arr = _complex_from_parts(_gen(generator)._normal(math.prod(shape2), part, 0.0, math.sqrt(0.5))
                                  .reshape(shape2), d)
        return _from_host(arr, d, device, requires_grad)
    shape = _size(size)
    arr = _gen(generator)._normal(math.prod(shape), _np_float(d)).reshape(shape)
    return _from_host(arr, d, device, requires_grad)


_NO_HIGH = object()  # randint called without ``high`` (None given explicitly is an error, as in PyTorch)


def randint(low=0, high=_NO_HIGH, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers uniform on [low, high) of shape ``size`` (int64 by default): ``randint(high, size)``,
    ``randint(low, high, size)``, with any of them by keyword (``randint(5, size=(2,))`` is high=5, as
    PyTorch's overloads). TypeError when high or size is missing or None."""
    dtype = _dt.as_dtype(dtype, "randint")
    if size is None:
        low, high, size = 0, low, (None if high is _NO_HIGH else high)
    elif high is _NO_HIGH:  # randint(5, size=(2,)): the one positional bound is high
        low, high = 0, low
    if high is None or size is None:
        raise TypeError("randint() missing required arguments 'high' and 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    low, high = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v for v in (low, high))
    _int_args("randint", low, high)
    _check_int64("randint", low, high)
    d = dtype or _dt.int64
    low, high = _random_range(d, int(low), int(high))
    shape = _size((size,), "randint")
    check_alloc(shape, _dt.int64)
    arr = _gen(generator)._randint(math.prod(shape), int(low), int(high)).reshape(shape)
    return _from_host(arr.astype(d.np), d, device, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None):
    """``randint`` with ``input``'s shape (and dtype and device unless given): ``randint_like(x, high)`` or
    ``randint_like(x, low, high)``, drawing from ``generator`` (default: the default generator)."""
    if high is None:
        low, high = 0, low
    return _like(input, lambda shape: randint(low, high, shape, generator=generator, dtype=dtype or input.dtype,
                                              device=device or input.device))


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``rand`` with ``input``'s shape (and dtype and device unless given), from ``generator`` if given."""
    return _like(input, lambda shape: rand(shape, generator=generator, dtype=dtype or input.dtype,
                                           device=device or input.device, requires_grad=requires_grad))


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False):
    """``randn`` with ``input``'s shape (and dtype and device unless given), from ``generator`` if given."""
    d = dtype or input.dtype
    order, dense = _walk_order(input)
    if dense and not input.is_contiguous() and not d.is_complex and d.is_floating_point:
        # empty_like keeps a transpose's strides, and ATen's normal_ fills a non-contiguous tensor one
        # normal_distribution<double> draw at a time (in memory order), not in blocks of 16
        def make(shape):
            out = _from_host(_normal_fill_serial(_gen(generator), shape, _np_float(d)), d, device or input.device)
            return out.requires_grad_() if requires_grad else out
        return _like(input, make)
    return randn(input._shape, generator=generator, dtype=d, device=device or input.device,
                 requires_grad=requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of 0..n-1 (int64)."""
    d = _dt.as_dtype(dtype, "randperm") or _dt.int64
    n = _number(n, "randperm", "n", 1, "int")
    _check_int64("randperm", n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    check_dtype("randperm", d, floating=True, integral=True)
    check_alloc((n,), _dt.int64)
    return _from_host(_gen(generator)._randperm(int(n)).astype(d.np), d, device, requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``mean``/``std`` scalars (with ``size``) or tensors (broadcast), as ``torch.normal``.
    Tensor arguments get a zero gradient (PyTorch's derivative); two scalars need ``size`` (TypeError as
    PyTorch's overloads otherwise)."""
    if size is None and not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if isinstance(mean, (int, float)) and std == 1.0 and not isinstance(std, bool):
            raise TypeError(f"normal(): argument 'mean' (position 1) must be Tensor, not {type(mean).__name__}")
        raise TypeError(f"normal() received an invalid combination of arguments - got ({type(mean).__name__}, "
                        f"{type(std).__name__}), but expected one of: (Tensor mean, Tensor std), (Tensor mean, "
                        "float std), (float mean, Tensor std), (float mean, float std, tuple of ints size)")
    if not isinstance(std, Tensor):
        std = _number(std, "normal", "std", 2, "float")
        if not std >= 0:  # NaN included
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(float(std))}")
    if not isinstance(mean, Tensor):
        mean = _number(mean, "normal", "mean", 1, "float")
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if isinstance(std, Tensor) and std.dtype.is_complex:
            raise RuntimeError("normal expects standard deviation to be non-complex")
        ref = mean if isinstance(mean, Tensor) else std  # the result has mean's dtype (std's without one)
        check_dtype("normal_kernel_cpu", ref.dtype, floating=True, complex_ok=True)
        if isinstance(std, Tensor) and std.numel() and not bool((std.detach() >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = _strides.broadcast_shapes(*(t._shape for t in (mean, std) if isinstance(t, Tensor)))
        # as ATen's normal_out_impl: normal_(0, std) then + mean for a scalar std, else normal_(0, 1) then
        # * std + mean (two roundings)
        d = ref.dtype
        if isinstance(std, Tensor):
            z = _normal_tensor(generator, shape, d, 0.0, 1.0, ref.device)
            out = (z * std.detach() + (mean.detach() if isinstance(mean, Tensor) else mean)).to(d)
        else:
            out = (_normal_tensor(generator, shape, d, 0.0, std, ref.device) + mean.detach()).to(d)
        return _zero_grad_from(out, mean, std)
    if size is None:
        size = ()
    shape = _size((size,) if isinstance(size, int) else tuple(size))
    d = _float_dtype(_dt.as_dtype(dtype, "normal"), "normal_kernel_cpu", complex_ok=True)
    if d.is_complex:
        return randn(shape, generator=generator, dtype=d, device=device) * std + mean
    out = _normal_tensor(generator, shape, d, float(mean), float(std), device)
    return out.requires_grad_() if requires_grad else out


def _normal_tensor(generator, shape, d, mean, std, device):
    """A tensor of ``shape`` filled as ``normal_(mean, std)`` fills it (PyTorch's kernel, mean and std inside;
    a complex dtype through its real view)."""
    from .creation import empty
    return empty(shape, dtype=d, device=device).normal_(mean, std, generator=generator)


def _zero_grad_from(out, *srcs):
    """``out`` made differentiable in the tensors among ``srcs`` that require grad, with a zero gradient (the
    derivative PyTorch gives a sample with respect to its parameters); the values stay exact."""
    from .pointwise import where
    if not _state.enabled:
        return out
    for src in srcs:
        if isinstance(src, Tensor) and src.requires_grad:
            s = src.detach()
            out = out + where(s.isfinite(), (src - s) * 0, s.new_zeros(()))
    return out


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples with probabilities ``input`` (or the scalar ``p``), same shape and dtype as ``input``."""
    _tensor_arg(input, "bernoulli")
    if p is None:
        check_dtype("bernoulli_tensor_cpu_p_", input.dtype, floating=True)
    if p is not None and _lazy.active and not isinstance(p, Tensor):
        if not (0 <= p <= 1):  # NaN included
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        # inside a compiled function the draw is a node of the graph: it happens when the graph runs (in the
        # order eager would draw), and again on every replay
        return _lazy.recording.record_draw("bernoulli_scalar", _bernoulli_scalar_draw, _gen_of(generator),
                                           float(p), input._shape, input.dtype, input.device)
    probs = input.detach().numpy(force=True) if p is None else np.full(input._shape, p)
    if not np.all((probs >= 0) & (probs <= 1)):  # NaN included
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    # one uniform per element: in the probabilities' float type for a tensor of them, in double for a scalar
    # p, as PyTorch's CPU kernels (bernoulli_tensor / bernoulli_scalar)
    work = np.float64 if p is not None or input.dtype is _dt.float64 else np.float32
    u = _gen(generator)._uniform(math.prod(input._shape), work).reshape(input._shape)
    out = _from_host((u < probs).astype(input.dtype.np), input.dtype, input.device)
    if p is None and input.requires_grad and _state.enabled:
        # differentiable with a zero gradient, as PyTorch's derivative of bernoulli (the samples stay exact:
        # the added term is 0)
        out = out + (input - input.detach()) * 0
    return out


def _bernoulli_scalar_draw(gen, p, shape, dtype, backend):
    """bernoulli(p) for a scalar p on the host, as ``bernoulli`` draws it (one double uniform per element), as a
    native array of ``backend``: the kernel of a recorded draw."""
    u = gen._uniform(math.prod(shape), np.float64).reshape(shape)
    return backend.from_numpy((u < np.full(shape, p)).astype(dtype.np))


def _gen_of(generator):
    from .generator import default_generator
    return generator or default_generator


def poisson(input, generator=None):
    """Samples of Poisson(rate) for each element of the non-negative float tensor ``input`` of rates
    (``torch.poisson``): same shape and dtype; RuntimeError for negative rates. No gradient."""
    _tensor_arg(input, "poisson")
    check_dtype("poisson_cpu", input.dtype, floating=True)
    rates = input.detach().numpy(force=True).astype(np.float64)
    if not np.all(rates >= 0):  # NaN included
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = _gen(generator)
    out = np.array([_poisson_one(g, lam) for lam in rates.ravel().tolist()], np.float64).reshape(rates.shape)
    return _from_host(out.astype(input.dtype.np), input.dtype, input.device)


def _lgamma():
    """The C library's lgamma (ATen calls std::lgamma; Python's math.lgamma is its own implementation)."""
    import ctypes
    import ctypes.util
    try:
        f = ctypes.CDLL(ctypes.util.find_library("m")).lgamma
        f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
        return f
    except (OSError, AttributeError, TypeError):  # no C library to load: Python's, equal but for the last bit
        return math.lgamma


def _poisson_one(g, lam):
    """One Poisson(lam) sample as ATen's sample_poisson: Hoermann's transformed rejection (PTRS, 1993) for
    lam >= 10, else multiplying uniforms until the product falls to exp(-lam); double uniforms throughout."""
    if lam == 0:
        return 0.0
    if lam >= 10:
        lgamma = _poisson_one.lgamma
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = float(g._uniform(1, np.float64)[0]) - 0.5
            v = float(g._uniform(1, np.float64)[0])
            us = 0.5 - abs(u)
            kf = ((2 * a / us if us else math.inf) + b) * u + lam + 0.43  # IEEE: inf - inf is NaN, as in C
            # ATen casts the floor to int64: past its range (an enormous or infinite rate) x86 gives INT64_MIN,
            # which the acceptance test below returns as the sample
            k = math.floor(kf) if math.isfinite(kf) and -2.0 ** 63 <= kf < 2.0 ** 63 else -(1 << 63)
            if us >= 0.07 and v <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            log_v = math.log(v) if v > 0 else -math.inf  # C's log(0)
            if (log_v + math.log(invalpha) - math.log((a / (us * us) if us else math.inf) + b)) <= \
                    (-lam + k * loglam - lgamma(k + 1.0)):
                return float(k)
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= float(g._uniform(1, np.float64)[0])
        if prod > enlam:
            x += 1
        else:
            return float(x)


_poisson_one.lgamma = _lgamma()


def binomial(count, prob, generator=None):
    """Samples of Binomial(count, prob), elementwise with broadcasting (``torch.binomial``); float tensors in,
    float samples of count's dtype out."""
    shape = _strides.broadcast_shapes(count._shape, prob._shape)  # PyTorch's RuntimeError when they do not
    n = count.detach().numpy(force=True)
    p = prob.detach().numpy(force=True)
    out = _rng(generator).binomial(np.broadcast_to(n, shape).astype(np.int64), p)
    return _from_host(np.asarray(out).astype(count.dtype.np), count.dtype, count.device)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices sampled from the rows of ``input`` (non-negative weights), int64 of shape (..., num_samples)."""
    _tensor_arg(input, "multinomial")
    num_samples = _number(num_samples, "multinomial", "num_samples", 2, "int")
    if not (input.dtype.is_floating_point):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_SCALAR_NAMES.get(input.dtype.name, input.dtype.name)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    w = input.detach().numpy(force=True).astype(np.float64)
    if w.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = w.reshape(-1, w.shape[-1])
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    for r in rows:
        if r.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and np.count_nonzero(r) < num_samples:
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                               "category to sample)")
    g = _gen(generator)
    work = np.float64 if input.dtype is _dt.float64 else np.float32
    p = input.detach().numpy(force=True).astype(work).reshape(rows.shape)
    if not replacement or num_samples == 1:
        # ATen's Gumbel-max form: q ~ Exp(1) drawn as exponential_ fills a tensor like input (one double uniform
        # each, row after row), then the top num_samples of p / q (in input's dtype) per row
        u = g._uniform(p.size, np.float64)
        q = (-_libm(math.log1p, -u)).astype(work).reshape(p.shape)
        key = np.divide(p, q, dtype=work)
        out = np.argsort(-key, axis=1, kind="stable")[:, :num_samples]
    else:
        # ATen's multinomial_with_replacement kernel: the running sum in the input's type, divided by the total,
        # its last entry set to 1, then a binary search (first entry >= u) of one double uniform per sample
        cum = np.cumsum(p, axis=1, dtype=work)
        cum = np.divide(cum, cum[:, -1:], dtype=work)
        cum[:, -1] = 1
        out = np.empty((p.shape[0], num_samples), np.int64)
        for i in range(p.shape[0]):
            u = g._uniform(num_samples, np.float64)
            out[i] = np.searchsorted(cum[i].astype(np.float64), u, side="left")
    arr = out.astype(np.int64).reshape(w.shape[:-1] + (num_samples,))
    return _from_host(arr, _dt.int64, input.device)


method("multinomial")(multinomial)
method("bernoulli")(lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator))


def _rand_fill(name, sample, torch_stream=False, check=None):
    """Tensor method ``name`` filling the tensor in place with ``sample(rng, shape, *args)``: ``rng`` is the
    Generator itself when ``torch_stream`` (PyTorch's transformations), else its NumPy Generator. ``check(dtype,
    *args, **kw)`` validates the arguments first (PyTorch's exceptions), after the in-place check on a leaf
    that requires grad."""
    def f(self, *args, generator=None, **kw):
        self._check_inplace()
        if name in ("uniform_", "random_") and ("from" in kw or "to" in kw):
            # PyTorch's keywords ``from`` / ``to`` (``from`` cannot name a Python parameter)
            args = list(args)
            if "from" in kw:
                args.insert(0, kw.pop("from"))
            if "to" in kw:
                if not args and name == "uniform_":
                    args.append(0.0)
                args.append(kw.pop("to"))
            args = tuple(args)
        if check is not None:
            check(self.dtype, *args, **kw)
        if self._storage.backend.shape_only:
            return self
        with_nograd = _state.enabled
        grad_from = None
        if torch_stream and self.dtype.is_complex and name in ("uniform_", "normal_"):
            # PyTorch samples the real view (..., 2): both parts from [from, to), or each part normal with
            # std / sqrt(2) so that E|z - mean|^2 = std^2
            part = np.float32 if self.dtype.itemsize == 8 else np.float64
            if name == "normal_":
                a = list(args) + [kw.pop("mean", 0.0), kw.pop("std", 1.0)][len(args):]
                args = (a[0], a[1] / math.sqrt(2))
            arr = sample(_gen(generator), self._shape + (2,), part, *args, **kw)
            arr = (arr[..., 0] + 1j * arr[..., 1]).astype(self.dtype.np)
        elif torch_stream:
            if name in ("random_",):
                kw["dtype"] = self.dtype
            order = _walk_order(self)[0]
            fill, grad_from = sample, None
            if name == "normal_" and not self.is_contiguous():
                fill = _normal_fill_serial  # ATen's kernel fills only a contiguous tensor in blocks of 16
            if name == "bernoulli_" and (args or "p" in kw) and isinstance((args or (kw["p"],))[0], Tensor):
                # the probabilities are walked along with the tensor they fill
                p_in = (args or (kw.get("p"),))[0]
                p = p_in.detach().expand(*self._shape).permute(*order)
                check_dtype("bernoulli_tensor_cpu_p_", p.dtype, floating=True)
                args, kw = (p,) + tuple(args[1:]), {k: v for k, v in kw.items() if k != "p"}
                if p_in.requires_grad and with_nograd:
                    grad_from = p_in  # PyTorch's bernoulli_(p) is differentiable in p (a zero gradient)
            g, dt = _gen(generator), _np_float(self.dtype) if self.dtype.is_floating_point else None
            arr = _draw_in_order(order, self._shape, lambda shape: fill(g, shape, dt, *args, **kw))
            if self.dtype in (_dt.float16, _dt.bfloat16) and np.asarray(arr).dtype == np.float64:
                arr = np.asarray(arr).astype(np.float32)  # c10::Half / BFloat16 take a double through float
        else:
            arr = sample(_rng(generator), self._shape, *args, **kw)
        _state.enabled = False
        try:
            self._write(_from_host(np.asarray(arr), self.dtype, self.device))
        finally:
            _state.enabled = with_nograd
        if torch_stream and not self.dtype.is_complex and grad_from is not None:
            self.add_((grad_from - grad_from.detach()) * 0)  # p is finite (checked): the values stay exact
        return self
    f.__name__ = name
    method(name)(f)


def _uniform_fill(g, shape, dt, a=0.0, b=1.0):
    if dt is None:
        raise RuntimeError("\"check_uniform_bounds\" not implemented for an integer tensor")
    return g._uniform(math.prod(shape), dt, a, b).reshape(shape)


def _normal_fill(g, shape, dt, mean=0.0, std=1.0):
    if dt is None:
        raise RuntimeError("\"normal_kernel_cpu\" not implemented for an integer tensor")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return g._normal(math.prod(shape), dt, mean, std).reshape(shape)


def _normal_fill_serial(g, shape, dt, mean=0.0, std=1.0):
    """normal_ of a non-contiguous tensor: ATen draws every element from normal_distribution<double> in turn."""
    return g._normal_serial(math.prod(shape), mean, std).astype(dt).reshape(shape)


def _random_fill(g, shape, dt, *args, dtype=None):
    a, b = (tuple(args) + (None, None))[:2]
    if len(args) == 2 and b is None and a is not None:
        lo, rng = _random_open_range(dtype, int(a))
        n = math.prod(shape)
        if rng is None:  # every int64: one 64-bit draw each, as a signed value
            return g._u64(n).astype(np.uint64).view(np.int64).reshape(shape)
        raw = g._u64(n) if rng >= 1 << 28 else g._u32(n)
        return np.array([int(v) % rng + lo for v in raw.tolist()], dtype=np.int64).reshape(shape)
    if a is None:
        # ATen's uniform_int: one draw (64-bit for int64 and double, else 32-bit) modulo 2^digits + 1 for floats
        # (digits: 24, 53, 11 for half, 8 for bfloat16), max + 1 for integers, the low bit for bool
        n = math.prod(shape)
        if dtype is _dt.bool:
            return (g._u32(n) & np.uint64(1)).astype(bool).reshape(shape)
        wide = dtype in (_dt.int64, _dt.float64)
        raw = g._u64(n) if wide else g._u32(n)
        mod = {_dt.float32: (1 << 24) + 1, _dt.float64: (1 << 53) + 1, _dt.float16: (1 << 11) + 1,
               _dt.bfloat16: (1 << 8) + 1}.get(dtype)
        if mod is None:
            mod = int(_dt.iinfo(dtype).max) + 1
        return (raw % np.uint64(mod)).astype(np.int64).reshape(shape)
    lo, hi = (0, a) if b is None else (a, b)
    import warnings
    with warnings.catch_warnings():  # the check has warned already
        warnings.simplefilter("ignore")
        lo, hi = _random_range(dtype, int(lo), int(hi))
    return g._randint(math.prod(shape), lo, hi).reshape(shape)


def _real(op, arg, pos, v):
    """A float argument of an in-place sampler: TypeError as PyTorch's parser for anything else."""
    if isinstance(v, Tensor) and v.ndim == 0:
        v = v.item()
    if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be float, not {type(v).__name__}")
    return float(v)


def _check_uniform(d, a=0.0, b=1.0):
    check_dtype("check_uniform_bounds", d, floating=True, complex_ok=True)
    a, b = _real("uniform_", "from", 1, a), _real("uniform_", "to", 2, b)
    if d.is_floating_point:
        hi = float(_dt.finfo(d).max)
        t = _CPP_NAMES.get(d.name, d.name)
        if not -hi <= a <= hi:
            raise RuntimeError(f"from is out of bounds for {t}")
        if not -hi <= b <= hi:
            raise RuntimeError(f"to is out of bounds for {t}")
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(a)} > "
                               f"to={_fmt(b)}")
        if b - a > hi:
            raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{t}>::max(), but found "
                               f"to={_fmt(b)} and from={_fmt(a)} which result in to-from to exceed the limit")


def _check_normal(d, mean=0.0, std=1.0):
    check_dtype("normal_kernel_cpu", d, floating=True, complex_ok=True)
    _real("normal_", "mean", 1, mean)
    std = _real("normal_", "std", 2, std)
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _check_bernoulli(d, p=0.5):
    if d.is_complex:
        check_dtype("bernoulli_scalar_cpu_" if not isinstance(p, Tensor) else "bernoulli_tensor_cpu_self_", d)
    if isinstance(p, Tensor):
        if p.numel() and not bool(((p.detach() >= 0) & (p.detach() <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        return
    p = _real("bernoulli_", "p", 1, p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


def _continuous(dist, d):
    """PyTorch's RuntimeError for a continuous sampler on a non-float tensor (its two kernels name the type
    differently: 'Long' for exponential_, 'long int' for cauchy_)."""
    if not d.is_floating_point:
        names = _SCALAR_NAMES if dist == "Exponential" else _CPP_NAMES
        raise RuntimeError(f"{dist} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {names.get(d.name, d.name)}")


def _check_exponential(d, lambd=1.0):
    _continuous("Exponential", d)
    lambd = _real("exponential_", "lambd", 1, lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")


def _check_cauchy(d, median=0.0, sigma=1.0):
    _continuous("Cauchy", d)
    _real("cauchy_", "median", 1, median)
    sigma = _real("cauchy_", "sigma", 2, sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")


def _check_log_normal(d, mean=1.0, std=2.0):
    check_dtype("log_normal_cpu", d, floating=True)
    _real("log_normal_", "mean", 1, mean)
    std = _real("log_normal_", "std", 2, std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")


def _check_geometric(d, p):
    check_dtype("geometric_cpu", d, floating=True, integral=True)
    p = _real("geometric_", "p", 1, p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")


def _check_random(d, *args):
    """random_() / random_(to) / random_(from, to) / random_(from, None) (up to the dtype's largest exact
    integer, PyTorch's open upper bound)."""
    if args and args[0] is None:
        raise TypeError("random_() received an invalid combination of arguments - got (NoneType), but expected one "
                        "of: (*, torch.Generator generator = None), (int from, int to, *, torch.Generator generator "
                        "= None), (int to, *, torch.Generator generator = None)")
    if not args:
        if d.is_complex:
            check_dtype("random_kernel_cpu", d)
        return
    if len(args) == 2 and args[1] is None:
        _int_args("random_", args[0])
        _check_int64("random_", args[0])
        _random_open_range(d, int(args[0]))
        return
    vals = args[:2]
    _int_args("random_", *vals)
    _check_int64("random_", *vals)
    lo, hi = (0, vals[0]) if len(vals) == 1 else vals
    _random_range(d, int(lo), int(hi))


def _random_open_range(d, lo):
    """``(from, range)`` of random_(from, None), as ATen: up to 2^digits for floats (from first moved to a
    value the dtype holds), the dtype's max for integers; None for from = INT64_MIN (every int64, drawn whole)."""
    if lo == -(1 << 63):
        if d.is_complex or d in (_dt.float16, _dt.bool):
            check_dtype("random_full_64_bits_range_kernel_cpu", d, integral=True)
        if d not in (_dt.int64, _dt.float64, _dt.float32, _dt.bfloat16):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        return lo, None
    if d.is_complex:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
    if d.is_floating_point:
        digits = _DIGITS[d.name]
        to_inc = min(1 << digits, (1 << 63) - 1)
        up = _to_float_and_back(d, lo + 1)
        if up < lo:
            lo = up + (1 << ((abs(lo + 1).bit_length() - 1) - digits + 1))
        if not lo < to_inc:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                               f"to dtype, but got from={lo} > to_inc={to_inc}")
        fi = _dt.finfo(d)
        low_b, high_b = float(fi.min), float(fi.max)
    else:
        to_inc = 1 if d is _dt.bool else int(_dt.iinfo(d).max)
        low_b, high_b = (0, 1) if d is _dt.bool else (int(_dt.iinfo(d).min), int(_dt.iinfo(d).max))
    name = _CPP_NAMES.get(d.name, d.name)
    for what, v in (("from", lo), ("to - 1", to_inc)):
        if not low_b <= v <= high_b:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    return lo, to_inc - lo + 1


_rand_fill("uniform_", _uniform_fill, torch_stream=True, check=_check_uniform)
_rand_fill("normal_", _normal_fill, torch_stream=True, check=_check_normal)
def _bernoulli_fill(g, shape, dt, p=0.5):
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p.numpy(force=True), shape)
        work = np.float64 if p.dtype is _dt.float64 else np.float32
    else:
        probs, work = p, np.float64
    return g._uniform(math.prod(shape), work).reshape(shape) < probs


_rand_fill("bernoulli_", _bernoulli_fill, torch_stream=True, check=_check_bernoulli)
def _libm(f, x):
    """``f`` (a ``math`` function: the C library's double one, as ATen's std:: calls) on each element of ``x``,
    with C's results where Python raises instead: inf on overflow, -inf for log(0), NaN outside the domain."""
    def c(v):
        try:
            return f(v)
        except OverflowError:
            return math.inf
        except ValueError:
            return -math.inf if (f is math.log and v == 0) or (f is math.log1p and v == -1) else math.nan
    return np.array([c(v) for v in np.asarray(x, np.float64).ravel().tolist()], np.float64).reshape(np.shape(x))


# ATen's CPU kernels for these draw one double uniform (a 64-bit draw) per element, transform it in double and
# round to the tensor's dtype (DistributionsHelper.h / TransformationHelper.h)
def _exponential_fill(g, shape, dt, lambd=1.0):
    u = g._uniform(math.prod(shape), np.float64)
    return (-1.0 / float(lambd) * _libm(math.log1p, -u)).reshape(shape)


def _geometric_fill(g, shape, dt, p):
    u = g._uniform(math.prod(shape), np.float64)
    return np.ceil(_libm(math.log, u) / math.log1p(-float(p))).reshape(shape)


def _cauchy_fill(g, shape, dt, median=0.0, sigma=1.0):
    u = g._uniform(math.prod(shape), np.float64)
    from .generator import _fma64
    return _fma64(float(sigma), _libm(math.tan, math.pi * (u - 0.5)), float(median)).reshape(shape)


def _log_normal_fill(g, shape, dt, mean=1.0, std=2.0):
    z = g._normal_serial(math.prod(shape), float(mean), float(std))
    return _libm(math.exp, z).reshape(shape)


_rand_fill("exponential_", _exponential_fill, torch_stream=True, check=_check_exponential)
_rand_fill("random_", _random_fill, torch_stream=True, check=_check_random)
_rand_fill("log_normal_", _log_normal_fill, torch_stream=True, check=_check_log_normal)
_rand_fill("cauchy_", _cauchy_fill, torch_stream=True, check=_check_cauchy)
_rand_fill("geometric_", _geometric_fill, torch_stream=True, check=_check_geometric)


__all__ = ["rand", "randn", "randint", "randint_like", "rand_like", "randn_like", "randperm", "normal", "bernoulli",
           "poisson", "binomial", "multinomial"]
