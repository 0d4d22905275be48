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
from .registry import KERNELS

NATIVE_KERNELS = KernelTable("cpu")


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


def _with_fallback(name, native):
    """``native`` as the kernel of ``name``: its result, or the NumPy kernel's when it returns NotImplemented."""
    fallback = KERNELS[name]
    ni = NotImplemented

    def kernel(*args, **kw):
        r = native(*args, **kw)
        return fallback(*args, **kw) if r is ni else r
    kernel.__name__ = f"native_{name}"
    kernel.__qualname__ = kernel.__name__
    NATIVE_KERNELS.add(name, kernel)
    return kernel


# op codes: tinytorch/csrc/pointwise_ops.h
_BINARY = {"add": 0, "sub": 2, "mul": 4, "maximum": 6, "minimum": 7, "eq": 8, "ne": 9, "lt": 10, "le": 11,
           "gt": 12, "ge": 13}
_BIN_ADD_ALPHA, _BIN_SUB_ALPHA, _BIN_DIV, _BIN_THRESHOLD_BACKWARD = 1, 3, 5, 14
_BIN_GELU_BACKWARD, _BIN_GELU_TANH_BACKWARD = 17, 18
_UNARY = {"neg": 0, "abs": 1, "exp": 2, "sqrt": 3, "rsqrt": 4, "reciprocal": 5, "tanh": 6, "sigmoid": 7,
          "relu": 8}
_UN_GELU, _UN_GELU_TANH, _UN_CLAMP = 10, 11, 13


def _register():
    binary, unary, where = _C.binary, _C.unary, _C.where

    for name, code in _BINARY.items():
        if name in ("add", "sub"):
            alpha_code = code + 1

            def k(a, b, alpha=1, _c=code, _ca=alpha_code):
                return binary(_c, a, b) if alpha == 1 else binary(_ca, a, b, alpha)
        else:
            def k(a, b, _c=code):
                return binary(_c, a, b)
        _with_fallback(name, k)

    for name, code in _UNARY.items():
        _with_fallback(name, lambda a, _c=code: unary(_c, a))

    _with_fallback("div", lambda a, b, rounding_mode=None:
                   binary(_BIN_DIV, a, b) if rounding_mode is None else NotImplemented)
    _with_fallback("where", where)
    _with_fallback("clamp", lambda a, lo, hi: unary(_UN_CLAMP, a, 0.0 if lo is None else lo,
                                                    0.0 if hi is None else hi, lo is not None, hi is not None)
                   if type(lo) in (int, float, type(None)) and type(hi) in (int, float, type(None))
                   and a.dtype.kind == "f" else NotImplemented)
    _with_fallback("threshold_backward", lambda g, x, threshold: binary(_BIN_THRESHOLD_BACKWARD, g, x, threshold))
    _with_fallback("gelu", lambda x, approximate: unary(_UN_GELU_TANH if approximate == "tanh" else _UN_GELU, x))
    _with_fallback("gelu_backward", lambda g, x, approximate: binary(
        _BIN_GELU_TANH_BACKWARD if approximate == "tanh" else _BIN_GELU_BACKWARD, g, x))


if _C is not None:
    _register()


def get_num_threads():
    """Threads of the native kernels' pool (the machine's cores unless ``set_num_threads`` changed it)."""
    return _C.get_num_threads() if _C is not None else 1


def set_num_threads(n):
    if _C is not None:
        _C.set_num_threads(n)


# reduction op codes: tinytorch/csrc/reduce_ops.h
_RED_SUM, _RED_MAX, _RED_MIN = 0, 1, 2


def _register_reduce():
    reduce, arg_reduce = _C.reduce, _C.arg_reduce
    _with_fallback("sum", lambda a, dims, keepdim, dtype: reduce(_RED_SUM, a, dims, keepdim)
                   if dtype is None or dtype.np == a.dtype else NotImplemented)
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


if _C is not None:
    _register_reduce()
    _register_index()
