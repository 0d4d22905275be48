"""Tensor creation: tensor / as_tensor / from_numpy, zeros, ones, empty, full (and their ``*_like`` and
``Tensor.new_*`` spellings), empty_strided, arange, linspace, logspace, eye, scalar_tensor,
tril_indices / triu_indices, the window functions; conversion (``to``, dtype and device casts, clone,
copy_, fill_). Random sampling is in ``random.py``, the Generator and seeding in ``generator.py``."""
import builtins
import math
import numbers

import operator

import numpy as np

from .. import _strides
from .. import _dtype as _dt
from .._dispatch import defop, dispatch
from .._storage import BorrowedStorage, Storage, check_alloc
from .._tensor import Tensor, _new
from ..device import _default_device, as_device, device as _device, get_backend
from ._util import check_scalar_fits, method

_CPU = _device("cpu")


def _meta_tensor(shape, dtype, dev, backend, requires_grad=False):
    nat, buf = backend.empty(shape, dtype)
    t = _new(Storage(buf, dtype, dev, buf.size, backend), shape, nat.strides, 0, dtype, nat)
    return t.requires_grad_(True) if requires_grad else t


def _shape_only_device(device):
    dev = as_device(device) or _default_device.value
    if dev is None or dev.type == "cpu":
        return None
    b = get_backend(dev)
    return (dev, b) if b.shape_only else None


def _from_host(arr, dtype, device=None, requires_grad=False):
    """A tensor on ``device`` holding a copy (or, on cpu, the memory) of C-contiguous host ``arr``."""
    dev = as_device(device) or _default_device.value or _CPU
    backend = get_backend(dev)
    if backend.shape_only:
        return _meta_tensor(tuple(arr.shape), dtype, dev, backend, requires_grad)
    if arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    shape = tuple(arr.shape)
    buf = backend.from_numpy(arr.reshape(-1), dev)
    t = _new(Storage(buf, dtype, dev, arr.size, backend), shape, _strides.contiguous_strides(shape), 0, dtype,
             arr if dev.type == "cpu" else None)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(size, op="size"):
    """The shape given as ``*size`` (ints, or one sequence of them): TypeError for anything but ints (0-d
    integer tensors count) or for a value outside int64, RuntimeError for a negative size, as PyTorch."""
    if len(size) == 1 and not isinstance(size[0], (int, np.integer, Tensor)):
        if not isinstance(size[0], (tuple, list)):
            raise TypeError(f"{op}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size[0]).__name__}")
        size = size[0]
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.ndim == 0 and not s.dtype.is_floating_point and not s.dtype.is_complex:
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(s).__name__}\"")
        if not -(1 << 63) <= s < (1 << 63):
            raise TypeError(f"{op}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            "\"Overflow when unpacking long long\"")
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _number(v, op, arg, pos, kind="Number"):
    """``v`` when it is a Python/NumPy number (or a 0-d tensor's value); TypeError naming the argument else."""
    if isinstance(v, Tensor) and v.ndim == 0:
        return v.item()
    ok = isinstance(v, (numbers.Number, np.number, np.bool_)) if kind == "Number" else \
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) if kind == "int" else \
        isinstance(v, (numbers.Real, np.number)) and not isinstance(v, complex)
    if not ok:
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be {kind}, not {type(v).__name__}")
    return v


def _tensor_arg(x, op, arg="input", pos=1):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' (position {pos}) must be Tensor, not {type(x).__name__}")
    return x


_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "bool": "bool", "uint8": "unsigned char", "int32": "int", "int16": "short int",
              "int8": "signed char", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


_NO_SIZE = object()  # a factory called without the ``size=`` keyword


def _factory_size(name, sizes, size):
    """The shape a factory gets from its ``*sizes`` positionals or its ``size=`` keyword: PyTorch accepts both
    spellings (``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros(size=(2, 3))``), the keyword only as a sequence of
    ints (an int or a Tensor is refused there). TypeError with PyTorch's wording when neither or both are
    given, or when the keyword is not a sequence of ints."""
    if size is _NO_SIZE:
        if not sizes:
            raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
        return _size(sizes, name)
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)) or builtins.any(
            isinstance(s, bool) or not isinstance(s, (int, np.integer, Tensor)) for s in size):
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return _size((size,))


def _infer_dtype(data):
    """PyTorch's dtype inference for (nested sequences of) scalars: the promotion of every element's type, where
    a Python bool is bool, int int64, float the default dtype, complex the default complex dtype, and NumPy
    scalars and tensors keep their own dtype (``torch.tensor([np.float64(1), 2.0])`` is float64)."""
    default = _dt.get_default_dtype()
    py = {bool: _dt.bool, int: _dt.int64, float: default, complex: default.to_complex()}
    d = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, Tensor):
            xd = x.dtype
        elif isinstance(x, (np.bool_, np.number)):
            xd = _dt.from_numpy_dtype(x.dtype)
        else:
            xd = next((v for k, v in py.items() if isinstance(x, k)), None)  # bool before int: bool is an int
            if xd is None:
                if isinstance(x, str) and x is _first_leaf(data) and x is not data:
                    # PyTorch reads the sizes along the first elements, where a str is one more sequence
                    raise ValueError(f"too many dimensions '{type(x).__name__}'")
                if isinstance(x, str):
                    raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
                raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        d = xd if d is None else _dt.promote_types(d, xd)
    return default if d is None else d


def _empty_array_strides(arr):
    """The element strides PyTorch gives a tensor made from the empty ndarray ``arr``: NumPy's own (all 0 for
    a new empty array), which PyTorch keeps where tinytorch's constructor would use contiguous ones."""
    return tuple(st // arr.itemsize for st in arr.strides)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists/tuples of numbers, an ndarray, a scalar, a Tensor).

    dtype is inferred as PyTorch does (bool, int64, or the default float dtype) unless given.
    TypeError for data that is not numeric. Mirrors ``torch.tensor``.
    """
    dtype = _dt.as_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        t = data.detach().to(dtype=dtype, device=device, copy=True)
        return t.requires_grad_(requires_grad) if requires_grad else t
    if isinstance(data, np.ndarray):
        d = dtype or _dt.from_numpy_dtype(data.dtype)
        t = _from_host(np.array(data, dtype=d.np, copy=True), d, device, requires_grad)
        if data.size == 0:
            t._stride = _empty_array_strides(data)
        return t
    d = dtype or _infer_dtype(data)
    if dtype is not None and isinstance(data, (list, tuple)):
        bad = _non_number(data)
        if bad is not None:  # NumPy would make None a NaN
            raise TypeError(f"must be real number, not {type(bad[0]).__name__}")
    try:
        with np.errstate(over="ignore"):  # 70000.0 as float16 is inf, silently, as in PyTorch
            arr = np.array(_plain(data), dtype=d.np)
    except (ValueError, TypeError) as e:
        bad = _non_number(data)
        if bad is not None:  # PyTorch's parser: every element must be a number of the dtype
            raise TypeError(f"must be real number, not {type(bad[0]).__name__}") from None
        raise ValueError(f"tensor(): could not build a tensor from the data: {e}") from None
    return _from_host(arr, d, device, requires_grad)


def _first_leaf(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _non_number(data):
    """The first leaf of nested sequences ``data`` that is neither a number nor a tensor, as a 1-tuple, else
    None."""
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(reversed(x))
        elif not isinstance(x, (numbers.Number, np.number, np.bool_, Tensor)):
            return (x,)
    return None


def _plain(data):
    if isinstance(data, Tensor):
        return data.detach().numpy(force=True) if data.device.type != "cpu" else data.detach().numpy()
    if isinstance(data, (list, tuple)):
        return [_plain(x) for x in data]
    return data


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory when ``data`` already is a tensor/ndarray of that dtype on cpu."""
    dtype = _dt.as_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == dtype.np) and \
            (as_device(device) or _default_device.value or _CPU).type == "cpu":
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def _has_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D cpu tensor over the bytes of a Python buffer (``torch.frombuffer``): ``count`` elements of ``dtype``
    (all that fit when -1) starting ``offset`` bytes in. A writable buffer (bytearray, memoryview, array.array) is
    shared: writes show through both ways. A read-only one (bytes) is copied, since a tensor over it could not
    be written (PyTorch shares it and warns that writes are undefined). ValueError, with PyTorch's messages, for an
    empty buffer, a zero count, an offset outside the buffer, or a length that is not whole elements.
    """
    dtype = _dt.as_dtype(dtype, "frombuffer")
    view = memoryview(buffer)
    nbytes, count, offset = view.nbytes, operator.index(count), operator.index(offset)
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({nbytes} "
                         "bytes) minus 1")
    isz = dtype.itemsize
    if count < 0:
        if (nbytes - offset) % isz:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({isz})")
        count = (nbytes - offset) // isz
    elif offset + count * isz > nbytes:
        raise ValueError(f"requested buffer length ({count} * {isz} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({nbytes} bytes)")
    raw = np.frombuffer(view.cast("B") if view.format != "B" else view, dtype=np.uint8, count=count * isz,
                        offset=offset)
    arr = raw.view(dtype.np) if raw.flags.writeable else raw.copy().view(dtype.np)
    t = from_numpy(arr)
    return t.requires_grad_() if requires_grad else t


def from_numpy(ndarray):
    """A cpu tensor sharing memory with ``ndarray`` (writes show through both ways).

    TypeError for dtypes tinytorch lacks; negative strides raise ValueError as in PyTorch.
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = _dt.from_numpy_dtype(ndarray.dtype)
    isz = ndarray.itemsize
    if builtins.any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array  with array.copy().) ")
    if builtins.any(s % isz for s in ndarray.strides):
        ndarray = np.ascontiguousarray(ndarray)
    if ndarray.flags.c_contiguous:
        t = _from_host(ndarray, d, _CPU)  # always cpu, whatever the default device
        t._storage.__class__ = BorrowedStorage  # the array's memory: fixed size, as PyTorch's
        if ndarray.size == 0:
            t._stride = _empty_array_strides(ndarray)
        return t
    # strided: the storage is the smallest flat window covering the array
    base = ndarray
    span = 1 + builtins.sum((n - 1) * s // isz for n, s in zip(ndarray.shape, ndarray.strides)) if ndarray.size else 0
    flat = np.lib.stride_tricks.as_strided(base, (span,), (isz,))
    backend = get_backend(_CPU)
    return _new(BorrowedStorage(flat, d, _CPU, span, backend), tuple(ndarray.shape),
                tuple(s // isz for s in ndarray.strides),
                0, d, ndarray)


def _empty_huge(shape, d, device, requires_grad):
    """A tensor with no elements whose other dims NumPy cannot represent (``zeros(3, 0, 2**62)``: PyTorch
    makes it): an empty storage and contiguous strides, no NumPy array of that shape."""
    dev = as_device(device) or _default_device.value or _CPU
    backend = get_backend(dev)
    buf = backend.from_numpy(np.zeros(0, d.np), dev)
    t = _new(Storage(buf, d, dev, 0, backend), tuple(shape), _strides.contiguous_strides(tuple(shape)), 0, d, None)
    return t.requires_grad_(True) if requires_grad else t


def _factory(fill, name):
    def make(*sizes, size=_NO_SIZE, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False, memory_format=None):
        shape = _factory_size(name, sizes, size)
        d = _dt.as_dtype(dtype, name) or _dt.get_default_dtype()
        so = _shape_only_device(device)
        if so:  # no host data for a device without data (nn.Linear(10**5, 10**5, device="meta"))
            return _meta_tensor(shape, d, so[0], so[1], requires_grad)
        if not check_alloc(shape, d) and builtins.max(shape, default=0) >= 1 << 31:
            t = _empty_huge(shape, d, device, requires_grad)
        else:
            t = _from_host(fill(shape, d), d, device, requires_grad)
        return t
    make.__name__ = make.__qualname__ = name
    return make


zeros = _factory(lambda s, d: np.zeros(s, d.np), "zeros")
ones = _factory(lambda s, d: np.ones(s, d.np), "ones")
empty = _factory(lambda s, d: np.zeros(s, d.np), "empty")  # zero-filled: never expose stale memory
zeros.__doc__ = "A tensor of ``size`` filled with 0 (default float dtype unless ``dtype``). Mirrors ``torch.zeros``."
ones.__doc__ = "A tensor of ``size`` filled with 1 (default float dtype unless ``dtype``). Mirrors ``torch.ones``."
empty.__doc__ = "An uninitialised tensor of ``size`` (tinytorch zero-fills it). Mirrors ``torch.empty``."


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """A tensor of ``size`` filled with ``fill_value``; dtype inferred from the value (bool/int64/float)."""
    fill_value = _number(fill_value, "full", "fill_value", 2)
    d = _dt.as_dtype(dtype, "full") or _dt.scalar_dtype(fill_value)
    if not isinstance(size, (tuple, list)):  # PyTorch takes no bare int here, unlike zeros(3)
        raise TypeError(f"full(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    shape = _size((size,), "full")
    check_alloc(shape, d)
    from ._util import check_scalar_converts
    check_scalar_converts(fill_value, d, _strides.numel(shape))  # before NumPy's own OverflowError (or its silent wrap of a float)
    if isinstance(fill_value, int) and not isinstance(fill_value, bool):
        # what PyTorch stores for an int NumPy would refuse: a negative one wraps into an unsigned dtype, any
        # int is True or False in bool, and one past int64 is a float in a float dtype
        if d is _dt.bool:
            fill_value = bool(fill_value)
        elif d.is_floating_point or d.is_complex:
            fill_value = float(fill_value) if abs(fill_value) >= 1 << 63 else fill_value
        elif fill_value < 0 and np.iinfo(d.np).min == 0:
            fill_value %= 1 << (8 * d.itemsize)
    t = _from_host(np.full(shape, fill_value, d.np), d, device, requires_grad)
    return t


def _like(fn, name):
    def make(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None,
             pin_memory=None):
        _tensor_arg(input, name)
        return fn(input._shape, dtype=dtype or input.dtype, device=device or input.device,
                  requires_grad=requires_grad, pin_memory=pin_memory)
    make.__name__ = make.__qualname__ = name
    return make


zeros_like = _like(zeros, "zeros_like")
ones_like = _like(ones, "ones_like")
empty_like = _like(empty, "empty_like")


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    """A tensor of ``input``'s shape filled with ``fill_value`` (``input``'s dtype and device unless given)."""
    _tensor_arg(input, "full_like")
    _number(fill_value, "full_like", "fill_value", 2)
    return full(input._shape, fill_value, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor of ``size`` and ``stride`` over a storage just large enough for it
    (``torch.empty_strided``)."""
    size = _size((size,), "empty_strided")
    if not isinstance(stride, (tuple, list)) or builtins.any(
            not isinstance(st, (int, np.integer)) or isinstance(st, bool) for st in stride):
        raise TypeError(f"empty_strided(): argument 'stride' (position 2) must be tuple of ints, not "
                        f"{type(stride).__name__}")
    stride = tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    if builtins.any(not isinstance(st, (int, np.integer)) or st < 0 for st in stride) or \
            builtins.sum((n - 1) * st for n, st in zip(size, stride)) >= 1 << 62:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    t = empty(1 + builtins.sum((s - 1) * st for s, st in zip(size, stride)) if _strides.numel(size) else 0,
              dtype=dtype, device=device)
    return t.as_strided(tuple(size), tuple(stride), 0).requires_grad_(requires_grad)


def _check_range_dtype(kernel, d):
    """NotImplementedError as ATen's arange / range kernels, which have no bool or complex instance."""
    if d is _dt.bool or d.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt._SCALAR_TYPE[d.name]}'")


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None, layout=None,
           pin_memory=False):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are ints, else default float.
    NotImplementedError for a bool or complex ``dtype``, as PyTorch's CPU kernel."""
    if end is None:
        start, end = 0, start
    vals = [_number(v, "arange", a, i + 1) for i, (v, a) in enumerate(((start, "start"), (end, "end"),
                                                                       (step, "step")))]
    all_int = builtins.all(isinstance(v, (int, np.integer)) for v in vals)  # bools count as ints, as in torch
    _check_range_dtype("arange_cpu", _dt.as_dtype(dtype, "arange") or (_dt.int64 if all_int else
                                                                        _dt.get_default_dtype()))
    if vals[2] == 0 or vals[2] != vals[2]:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(vals[0]) and math.isfinite(vals[1])):
        raise RuntimeError(f"unsupported range: {vals[0]} -> {vals[1]}")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    all_int = builtins.all(isinstance(v, (int, np.integer)) for v in vals)  # bools count as ints, as in torch
    d = _dt.as_dtype(dtype, "arange") or (_dt.int64 if all_int else _dt.get_default_dtype())
    n = builtins.max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    check_alloc((n,), _dt.float64)  # the values are built in float64 or int64 first
    arr = (vals[0] + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * vals[2])
    return _from_host(arr.astype(d.np), d, device, requires_grad)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """``torch.range``: ``start``, ``start + step``, ... up to ``end`` inclusive (floor((end - start) / step) + 1
    values, the default float dtype unless ``dtype``), computed in the dtype's accumulation type (int64 or
    double) as ATen's range kernel. RuntimeError for a zero step, non-finite bounds or a step of the wrong
    sign; NotImplementedError for a bool or complex dtype."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    vals = [_number(v, "range", a, i + 1) for i, (v, a) in enumerate(((start, "start"), (end, "end"),
                                                                      (step, "step")))]
    d = _dt.as_dtype(dtype, "range") or _dt.get_default_dtype()
    _check_range_dtype("range_cpu", d)
    acc = float if d.is_floating_point else int
    if acc is int and not builtins.all(math.isfinite(v) for v in vals):
        raise RuntimeError(f"unsupported range: {vals[0]} -> {vals[1]}")
    a, b, st = (acc(v) for v in vals)
    if not (st > 0 or st < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise RuntimeError(f"unsupported range: {_fmt_g(a)} -> {_fmt_g(b)}")
    if not ((st > 0 and b >= a) or (st < 0 and b <= a)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int((b - a) / st + 1) if acc is float else int(float(b - a) / float(st) + 1)
    check_alloc((n,), _dt.float64)
    arr = a + np.arange(n, dtype=np.float64 if acc is float else np.int64) * st
    t = _from_host(arr.astype(d.np), d, device, requires_grad)
    return t if out is None else out._write(t)


def _fmt_g(v):
    # C++ streams print doubles with 6 significant digits (inf as inf)
    return f"{v:g}" if isinstance(v, float) else str(v)


_SPACE_KW = ("*, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
             "bool pin_memory = False, bool requires_grad = False)")


def _space_type_error(op, args, kw):
    """PyTorch's overload-resolution TypeError for linspace / logspace: the argument types it got, then the four
    (Tensor | Number start, Tensor | Number end) signatures."""
    def name(v):
        return "Tensor" if isinstance(v, Tensor) else "torch.dtype" if isinstance(v, _dt.dtype) else \
            "torch.device" if isinstance(v, _device) else type(v).__name__
    got = ", ".join([name(a) for a in args] + [f"{k}={name(v)}" for k, v in kw.items()])
    base = "float base = 10.0, " if op == "logspace" else ""
    sigs = "".join(f" * ({a} start, {b} end, int steps, {base}{_SPACE_KW}\n"
                   for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"), ("Number", "Number")))
    return TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected one of:\n{sigs}")


def _space_args(op, start, end, steps, base, args, kw):
    """Check linspace / logspace arguments as PyTorch's parser and kernel do; returns (start, end, steps, base)
    as Python numbers. TypeError (the overload message) for a non-number start/end/base, a steps that is not an
    int (a bool, a float, a non-0-d or non-integer tensor), RuntimeError for start/end tensors with dims and for
    negative steps."""
    def number(v):
        return isinstance(v, Tensor) or (isinstance(v, (numbers.Number, np.number, np.bool_)))
    steps_ok = (isinstance(steps, (int, np.integer)) and not isinstance(steps, (bool, np.bool_))) or \
        (isinstance(steps, Tensor) and steps.ndim == 0 and steps.dtype.is_int)
    base_ok = base is None or (isinstance(base, (numbers.Real, np.number, Tensor)) and not isinstance(base, complex))
    flags_ok = all(isinstance(kw.get(k, False), bool) for k in ("requires_grad", "pin_memory"))
    if not (number(start) and number(end) and steps_ok and base_ok and flags_ok):
        raise _space_type_error(op, args, kw)
    if isinstance(steps, int) and not -2 ** 63 <= steps < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    ts, te = isinstance(start, Tensor), isinstance(end, Tensor)
    if (ts and start.ndim) or (te and end.ndim):
        if ts and te:
            got = f"start with {start.ndim} dimension(s) and end with {end.ndim} dimension(s)."
        else:
            got = f"start with {start.ndim} dimension(s)." if ts else f"end with {end.ndim} dimension(s)."
        raise RuntimeError(f"{op} only supports 0-dimensional start and end tensors, but got {got}")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    steps = int(steps.item()) if isinstance(steps, Tensor) else int(steps)
    if isinstance(base, Tensor):
        base = base.item()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return start, end, steps, base


def _space_dtype(op, dtype, out, cplx, requires_grad):
    """The result dtype: ``dtype``, else ``out``'s, else the default float one (complex for complex ends)."""
    d = _dt.as_dtype(dtype, op) or (out.dtype if out is not None else
                                    _dt.complex128 if cplx and _dt.get_default_dtype() is _dt.float64 else
                                    _dt.complex64 if cplx else _dt.get_default_dtype())
    if d is _dt.bool:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for 'Bool'")
    if requires_grad and not (d.is_floating_point or d.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return d


def _space_result(vals, d, device, requires_grad):
    """The values as a ``d`` tensor (integer dtypes truncate)."""
    if not d.is_complex:
        vals = vals.real
    if not (d.is_floating_point or d.is_complex):
        with np.errstate(all="ignore"):
            vals = np.trunc(vals)
    return _from_host(vals.astype(d.np), d, device, requires_grad)


def _ends_for(d, start, end):
    """PyTorch converts the ends to an integer dtype first (truncating) before spacing them."""
    if d.is_floating_point or d.is_complex:
        return start, end
    return (math.trunc(v.real if isinstance(v, complex) else v) if math.isfinite(abs(v)) else v for v in (start, end))


def linspace(start, end, steps=_NO_SIZE, *, dtype=None, device=None, requires_grad=False, out=None, layout=None,
             pin_memory=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (``torch.linspace``).

    start / end: numbers or 0-d tensors (complex ends give a complex result); steps: an int >= 0. The result has
    ``dtype`` (else ``out``'s, else the default float dtype, or the default complex one for complex ends);
    integer dtypes truncate. PyTorch's errors: TypeError for wrong argument types (its overload message),
    RuntimeError for negative steps or start/end tensors with dims, NotImplementedError for bool.
    """
    args, kw = _given(start, end, steps), _given_kw(dtype=dtype, device=device, requires_grad=requires_grad,
                                                   out=out, layout=layout, pin_memory=pin_memory)
    if steps is _NO_SIZE:
        raise _space_type_error("linspace", args, kw)
    start, end, steps, _ = _space_args("linspace", start, end, steps, None, args, kw)
    d = _space_dtype("linspace", dtype, out, isinstance(start, complex) or isinstance(end, complex), requires_grad)
    start, end = _ends_for(d, start, end)
    return _space_result(_linspace(start, end, steps, d), d, device, requires_grad)


def _given(*args):
    return tuple(a for a in args if a is not _NO_SIZE)


def _given_kw(**kw):
    """The keyword arguments that differ from their defaults (the ones PyTorch's message lists)."""
    defaults = {"requires_grad": False, "pin_memory": False}
    return {k: v for k, v in kw.items() if v is not None and not (k in defaults and v is defaults[k])}


def _linspace(start, end, steps, d=_dt.float64):
    """PyTorch's linspace values: ``start + step * i`` for the first half, ``end - step * (steps - i - 1)`` for
    the rest (both ends exact; infinite and NaN ends propagate). Floating dtypes compute in their own precision,
    as PyTorch's kernel does (so float16 values match it to the bit); integer ones in float64, complex ends in
    complex128. Checked for size before anything is allocated."""
    check_alloc((steps,), _dt.float64)
    if isinstance(start, complex) or isinstance(end, complex) or d.is_complex:
        kind = np.complex128
    elif d.is_floating_point:
        kind = np.dtype(d.np).type
    else:
        kind = np.float64
    if steps == 1:
        return np.array([start], dtype=kind)
    with np.errstate(all="ignore"):
        start, end = kind(start), kind(end)
        step = kind((end - start) / kind(steps - 1)) if steps > 1 else kind(0)
        i = np.arange(steps, dtype=np.float64).astype(kind)
        return np.where(np.arange(steps) < steps // 2, start + step * i,
                        end - step * (kind(steps - 1) - i)).astype(kind)


linspace._parses_arguments = True  # its overloads' TypeError names every argument


def logspace(start, end, steps=_NO_SIZE, base=10.0, *, dtype=None, device=None, requires_grad=False, out=None,
             layout=None, pin_memory=False):
    """``steps`` values ``base ** linspace(start, end, steps)`` (``torch.logspace``); arguments, dtypes and errors
    as ``linspace`` (``base`` a real number or 0-d tensor)."""
    args = _given(start, end, steps) + ((base,) if base != 10.0 or type(base) is not float else ())
    kw = _given_kw(dtype=dtype, device=device, requires_grad=requires_grad, out=out, layout=layout,
                   pin_memory=pin_memory)
    if steps is _NO_SIZE:
        raise _space_type_error("logspace", args, kw)
    start, end, steps, base = _space_args("logspace", start, end, steps, base, args, kw)
    d = _space_dtype("logspace", dtype, out, isinstance(start, complex) or isinstance(end, complex), requires_grad)
    start, end = _ends_for(d, start, end)
    exps = _linspace(start, end, steps)
    with np.errstate(all="ignore"):
        vals = np.power(complex(base) if np.iscomplexobj(exps) else float(base), exps)
    return _space_result(vals, d, device, requires_grad)


logspace._parses_arguments = True


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """An ``n x m`` identity matrix (``torch.eye``)."""
    d = _dt.as_dtype(dtype, "eye") or _dt.get_default_dtype()
    n = _number(n, "eye", "n", 1, "int")
    m = n if m is None else _number(m, "eye", "m", 2, "int")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if n * m >= 1 << 63:
        raise RuntimeError("numel: integer multiplication overflow")
    check_alloc((n, m), d)
    return _from_host(np.eye(n, m, dtype=d.np), d, device, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-dim tensor holding ``s`` in the default float dtype unless given (``torch.scalar_tensor``)."""
    from .creation import tensor
    return tensor(float(s) if dtype is None else s, dtype=dtype or _dt.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def _tril_size(row, col, offset):
    """Elements of the lower triangle (diagonal ``offset``) of a row x col matrix (ATen's get_tril_size)."""
    if row == 0 or col == 0:
        return 0
    m_first = builtins.min(col, 1 + offset) if offset > 0 else int(row + offset > 0)
    m_last = builtins.max(0, builtins.min(col, row + offset))
    n_all = builtins.max(0, builtins.min(row, row + offset))
    n_trap = m_last - m_first + 1
    size = (m_first + m_last) * n_trap >> 1
    if n_all - n_trap > 0:
        size += (n_all - n_trap) * col
    return size


def _tri_indices(row, col, offset, lower, dtype, device):
    """The 2 x N indices of the lower (upper) triangle, computed row by row over only the rows that have
    some (so the work and memory are O(N), never O(row * col)); PyTorch's argument checks and its refusal of a
    result too large to allocate come first."""
    from .creation import _from_host
    from .._storage import check_alloc
    import numpy as np
    op = "tril_indices" if lower else "triu_indices"
    for v, name, pos in ((row, "row", 1), (col, "col", 2), (offset, "offset", 3)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not {type(v).__name__}")
    if dtype is not None and dtype is not _dt.int64 and dtype is not _dt.int32:  # PyTorch's kernels: these only
        from ._util import SCALAR_NAMES
        raise NotImplementedError(f"\"{op}\" not implemented for '{SCALAR_NAMES.get(dtype.name, dtype.name)}'")
    row, col, offset = int(row), int(col), int(offset)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    offset = builtins.max(-row - 1, builtins.min(offset, col + 1))  # beyond these, all or nothing
    n = _tril_size(row, col, offset) if lower else row * col - _tril_size(row, col, offset - 1)
    check_alloc((2, n), dtype or _dt.int64)
    if lower:
        i0 = builtins.max(0, -offset)  # rows above have no element; each row from here has at least one
        rows = np.arange(i0, builtins.min(row, i0 + n), dtype=np.int64)
        first = np.zeros_like(rows)
        counts = np.clip(rows + offset + 1, 0, col)
    else:
        rows = np.arange(0, builtins.max(0, builtins.min(row, col - offset, n)), dtype=np.int64)
        first = np.maximum(rows + offset, 0)
        counts = np.clip(col - first, 0, col)
    r = np.repeat(rows, counts)
    starts = np.cumsum(counts) - counts
    c = np.arange(r.size, dtype=np.int64) - np.repeat(starts - first, counts)
    return _from_host(np.stack([r, c]).astype(np.int64), dtype or _dt.int64, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the lower triangle of a row x col matrix (``torch.tril_indices``)."""
    return _tri_indices(row, col, offset, True, _dt.as_dtype(dtype, "tril_indices"), device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """2 x N coordinates of the upper triangle of a row x col matrix (``torch.triu_indices``)."""
    return _tri_indices(row, col, offset, False, _dt.as_dtype(dtype, "triu_indices"), device)


# ---- windows (torch.*_window) ------------------------------------------------------------------------------
def _window(name, n, periodic, dtype, device, fn):
    """The window ``fn(k, N)`` for k = 0..n-1 as a ``dtype`` tensor. TypeError for a non-int ``n``;
    RuntimeError for a negative one or a non-floating ``dtype``; NotImplementedError for a complex ``dtype``
    (PyTorch's arange has no complex kernel), as PyTorch."""
    from .creation import arange
    from ._util import SCALAR_NAMES, check_arg
    check_arg(name, "window_length", 1, n, "int")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dt = dtype or _dt.get_default_dtype()
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{SCALAR_NAMES[dt.name]}'")
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_NAMES[dt.name]}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if n == 1:
        from .creation import ones
        return ones(1, dtype=dt, device=device)
    m = n + 1 if periodic else n
    k = arange(n, dtype=_dt.float64)
    w = fn(k, m)
    return w.to(dt).to(device) if device is not None else w.to(dt)


def hann_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` with N = window_length (+1 when periodic) (``torch.hann_window``)."""
    w = _window("hann_window", window_length, periodic, dtype, device,
                lambda k, m: 0.5 - 0.5 * (2 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None, requires_grad=False):
    """``i0(beta * sqrt(1 - (2k / (N - 1) - 1)^2)) / i0(beta)`` with N = window_length (+1 when periodic)
    (``torch.kaiser_window``; Kaiser & Schafer 1980)."""
    from .special import i0

    def fn(k, m):
        r = (k - (m - 1) / 2) / ((m - 1) / 2)
        return i0(beta * (1 - r * r).clamp(min=0).sqrt()) / i0(k.new_tensor(beta))
    w = _window("kaiser_window", window_length, periodic, dtype, device, fn)
    return w.requires_grad_(requires_grad) if requires_grad else w


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, device=None,
                   requires_grad=False):
    """``alpha - beta cos(2 pi k / (N - 1))`` (``torch.hamming_window``)."""
    w = _window("hamming_window", window_length, periodic, dtype, device,
                lambda k, m: alpha - beta * (2 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def blackman_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))`` (``torch.blackman_window``)."""
    w = _window("blackman_window", window_length, periodic, dtype, device,
                lambda k, m: 0.42 - 0.5 * (2 * math.pi * k / (m - 1)).cos() + 0.08 * (4 * math.pi * k / (m - 1)).cos())
    return w.requires_grad_(requires_grad) if requires_grad else w


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False):
    """``1 - |2 k / (N - 1) - 1|`` (``torch.bartlett_window``)."""
    w = _window("bartlett_window", window_length, periodic, dtype, device,
                lambda k, m: 1 - (2 * k / (m - 1) - 1).abs())
    return w.requires_grad_(requires_grad) if requires_grad else w


# ---- conversion ---------------------------------------------------------------------------------------
def _to_dtype_meta(a, dtype):
    return [(a._shape, dtype)], [None]


_to_dtype_op = defop("to_dtype", _to_dtype_meta, lambda c, g: g, save_inputs=False, complex_grad=True)


def _to_device(x, dev):
    """A copy of ``x`` on device ``dev`` (the op ``to_copy``: its gradient is copied back to ``x``'s device)."""
    return dispatch(_to_device_op, (x,), {"device": x.device, "to": dev})


def _to_copy_meta(x, device, to):
    if x._storage.backend.shape_only and not get_backend(to).shape_only:
        raise NotImplementedError(f"Cannot copy out of meta tensor; no data! (to {to})")
    return [(x._shape, x.dtype)], [None]


def _to_copy_decomp(x, device, to):
    # no backend has a kernel for a copy between two devices: it goes through host memory
    if get_backend(to).shape_only:
        return _meta_tensor(x._shape, x.dtype, to, get_backend(to))
    src_backend = x._storage.backend
    # keep a dense tensor's memory order across the copy (PyTorch's preserve_format)
    order = sorted(range(x.ndim), key=lambda d: -x._stride[d])
    dense = x.ndim > 1 and order != list(range(x.ndim)) and \
        _strides.is_contiguous(tuple(x._shape[d] for d in order), tuple(x._stride[d] for d in order))
    src = x.permute(order) if dense else x
    host = np.asarray(src_backend.to_numpy(src._native()), order="C")
    t = _from_host(host, x.dtype, to)
    if dense:
        inv = [0] * len(order)
        for i, d in enumerate(order):
            inv[d] = i
        t = t.permute(inv)
    return t


_to_device_op = defop("to_copy", _to_copy_meta, lambda c, g: g.to(c.kw["device"]), decomp=_to_copy_decomp,
                      save_inputs=False, complex_grad=True)


def _parse_to(args, kwargs):
    """(dtype, device) of ``Tensor.to``'s arguments; a Python type is a dtype there, as in PyTorch
    (``x.to(float)`` is float64)."""
    dtype = _dt.as_dtype(kwargs.get("dtype"), "to")
    dev = kwargs.get("device")
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, type) and a in _dt._PY_TYPES:
            dtype = _dt.as_dtype(a, "to")
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            dev = a
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {type(a).__name__}")
    return dtype, as_device(dev)


@method("to")
def to(self, *args, **kwargs):
    """Convert dtype and/or device: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``.

    Returns ``self`` when nothing changes (unless ``copy=True``). Differentiable.
    """
    dtype, dev = _parse_to(args, kwargs)
    copy = kwargs.get("copy", False)
    t = self
    if dev is not None and dev != t.device:
        if dev.type == t.device.type and dev.index in (None, 0) and t.device.index in (None, 0):
            pass
        else:
            get_backend(dev)
            t = _to_device(t, dev)
            copy = False
    if dtype is not None and dtype is not t.dtype:
        t = dispatch(_to_dtype_op, (t,), {"dtype": dtype})
        copy = False
    if copy:
        t = t.clone()
    return t


def _cast_method(d):
    return lambda self, memory_format=None: to(self, d)


for _n, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16), ("bfloat16", _dt.bfloat16),
               ("long", _dt.int64), ("int", _dt.int32), ("short", _dt.int16), ("char", _dt.int8),
               ("byte", _dt.uint8), ("bool", _dt.bool)):
    method(_n)(_cast_method(_d))


@method("cfloat")
def _cfloat(self, memory_format=None):
    """``self.to(torch.complex64)``."""
    return self.to(_dt.complex64)


@method("cdouble")
def _cdouble(self, memory_format=None):
    """``self.to(torch.complex128)``."""
    return self.to(_dt.complex128)
method("type_as")(lambda self, other: to(self, other.dtype))
method("cpu")(lambda self, memory_format=None: to(self, "cpu"))


@method("cuda")
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """This tensor on ``cuda:device`` (``cuda:0`` when None), as ``Tensor.cuda``; the ``no_cuda`` AssertionError
    where the cuda device is unavailable."""
    return to(self, "cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)


@method("clone")
def clone(input, *, memory_format=None):
    """A contiguous copy of ``input`` that stays in the graph (gradient passes through)."""
    from .pointwise import _identity
    return _identity(input)


@method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcastable, any dtype/device) into ``self`` in place; differentiable w.r.t. ``src``.
    A complex number into a real tensor keeps its real part, with PyTorch's warning."""
    self._check_inplace()
    if isinstance(src, complex) and not self.dtype.is_complex:
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        src = src.real
    if not isinstance(src, Tensor):
        src = tensor(src, dtype=self.dtype, device=self.device)
    return self._write(src)


@method("fill_")
def fill_(self, value):
    """Fill ``self`` with the scalar (or 0-dim tensor) ``value`` in place. RuntimeError for a complex value
    (non-zero imaginary part) into a real tensor, TypeError for a value that is neither a number nor a tensor, as
    PyTorch."""
    import numbers
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"fill_() received an invalid combination of arguments - got ({type(value).__name__}), but "
                        "expected one of:\n * (Tensor value)\n * (Number value)\n")
    self._check_inplace()
    check_scalar_fits(value, self.dtype)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        return self._write(value.to(self.dtype))
    return self._write(_scalar(value, self))


@method("zero_")
def zero_(self):
    """Fill ``self`` with zeros in place."""
    return fill_(self, 0)


def _python_map(self, op, fn, *others):
    """Writes fn(self[i], other[i], ...) into self elementwise, in Python (``apply_`` / ``map_`` / ``map2_``)."""
    import numpy as np
    from .creation import tensor
    if self.device.type != "cpu":
        raise RuntimeError(f"{op} is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {op}() on Variable that requires grad. Use var.detach().{op}() instead.")
    args = [self.detach().numpy()] + [np.broadcast_to(o.detach().numpy(), self._shape) for o in others]
    out = np.vectorize(fn, otypes=[self.dtype.np])(*args) if self.numel() else args[0]
    self.copy_(tensor(out, dtype=self.dtype))
    return self


method("apply_")(lambda self, callable: _python_map(self, "apply_", callable))
method("map_")(lambda self, tensor, callable: _python_map(self, "map_", callable, tensor))
method("map2_")(lambda self, x, y, callable: _python_map(self, "map2_", callable, x, y))


def _scalar(value, like):
    return _from_host(np.array(value, dtype=like.dtype.np), like.dtype, like.device)


# new_* methods
method("new_zeros")(lambda self, *sizes, size=_NO_SIZE, dtype=None, device=None, requires_grad=False: zeros(
    *sizes, size=size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad))
method("new_ones")(lambda self, *sizes, size=_NO_SIZE, dtype=None, device=None, requires_grad=False: ones(
    *sizes, size=size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad))
method("new_empty")(lambda self, *sizes, size=_NO_SIZE, dtype=None, device=None, requires_grad=False: empty(
    *sizes, size=size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad))
method("new_full")(lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: full(
    size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad))
method("new_tensor")(lambda self, data, dtype=None, device=None, requires_grad=False: tensor(
    data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad))


@method("new_empty_strided")
def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False):
    """An uninitialized tensor of ``size`` and ``stride`` with self's dtype and device unless given."""
    from .creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)
