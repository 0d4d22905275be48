"""dtypes and PyTorch's type-promotion rules.

A :class:`dtype` names an element type and maps it onto a NumPy dtype (bfloat16 comes from
``ml_dtypes``). Promotion follows ``torch.result_type``: categories bool < integer < floating < complex;
dimensioned tensors outrank 0-dim tensors, which outrank Python scalars, and a lower-priority
operand only changes the result when it belongs to a higher category.
"""
import builtins

import ml_dtypes
import numpy as np

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """An element type (``tinytorch.float32`` ...). Compare with ``is`` or ``==``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "category", "is_complex")

    def __init__(self, name, np_dtype, category, signed):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_signed = signed
        self.is_complex = category == _COMPLEX

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The real dtype of a complex one's parts (complex64 -> float32); other dtypes are their own."""
        return _REAL.get(self.name, self)

    def to_complex(self):
        """The complex dtype with this float dtype's parts (float32 -> complex64)."""
        if self.is_complex:
            return self
        if self.name not in ("float32", "float64", "float16"):
            raise RuntimeError(f"to_complex is not supported for {self}")
        return complex128 if self.name == "float64" else complex64

    @property
    def is_int(self):
        return self.category == _INT


bool = dtype("bool", np.bool_, _BOOL, False)
uint8 = dtype("uint8", np.uint8, _INT, False)
int8 = dtype("int8", np.int8, _INT, True)
int16 = dtype("int16", np.int16, _INT, True)
int32 = dtype("int32", np.int32, _INT, True)
int64 = dtype("int64", np.int64, _INT, True)
float16 = dtype("float16", np.float16, _FLOAT, True)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, True)
float32 = dtype("float32", np.float32, _FLOAT, True)
float64 = dtype("float64", np.float64, _FLOAT, True)
complex64 = dtype("complex64", np.complex64, _COMPLEX, True)
complex128 = dtype("complex128", np.complex128, _COMPLEX, True)
_REAL = {"complex64": float32, "complex128": float64}
# The "barebones" dtypes PyTorch 2.13 has for storage and conversion (its kernels refuse most arithmetic on them and
# it refuses to promote them with other dtypes): unsigned 16/32/64-bit integers and the float8 formats of
# "FP8 Formats for Deep Learning" (Micikevicius et al., 2022), whose NumPy types come from ml_dtypes.
uint16 = dtype("uint16", np.uint16, _INT, False)
uint32 = dtype("uint32", np.uint32, _INT, False)
uint64 = dtype("uint64", np.uint64, _INT, False)
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, True)
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, _FLOAT, True)
_BAREBONES = (uint16, uint32, uint64, float8_e4m3fn, float8_e5m2)
_UNSIGNED_WIDE = (uint16, uint32, uint64)
_FLOAT8 = (float8_e4m3fn, float8_e5m2)

# PyTorch's aliases
short, int, long, half, float, double, uint8_ = int16, int32, int64, float16, float32, float64, uint8
cfloat, cdouble = complex64, complex128

all_dtypes = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in all_dtypes + _BAREBONES}
_BY_NP = {d.np: d for d in all_dtypes + _BAREBONES}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(npd):
    """The tinytorch dtype for a NumPy dtype; TypeError for types PyTorch lacks."""
    d = _BY_NP.get(np.dtype(npd))
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(npd).name}. The only supported types are: "
            "complex128, complex64, float64, float32, float16, bfloat16, int64, int32, int16, int8, uint64, uint32, "
            "uint16, uint8, and bool.")
    return d


_PY_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool, builtins.complex: complex128}


def as_dtype(d, fn):
    """``d`` as a dtype, for a function's ``dtype`` argument: PyTorch's argument parser also takes Python's
    ``float``, ``int``, ``bool`` and ``complex`` (float64, int64, bool, complex128); None stays None.
    TypeError naming ``fn`` for anything else (a string, a NumPy type), with PyTorch's wording."""
    if d is None or d.__class__ is dtype:
        return d
    t = _PY_TYPES.get(d) if isinstance(d, type) else None
    if t is None:
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")
    return t


_default_float = [float32]


def get_default_dtype():
    """The dtype of Python floats turned into tensors (float32 unless changed)."""
    return _default_float[0]


def set_default_dtype(d):
    """Set the default floating dtype; only floating dtypes are allowed (TypeError otherwise)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float[0] = d


def promote_types(a, b):
    """``torch.promote_types``: the smallest dtype both ``a`` and ``b`` convert to without a category loss."""
    if a is b:
        return a
    if a.__class__ is not dtype or b.__class__ is not dtype:  # Python types: promote_types(float, int)
        a, b = as_dtype(a, "promote_types"), as_dtype(b, "promote_types")
    if a in _BAREBONES or b in _BAREBONES:
        other = b if a in _UNSIGNED_WIDE else a if b in _UNSIGNED_WIDE else None
        if other is not None and other.is_floating_point and other not in _FLOAT8:
            return other  # a wide unsigned integer promotes to a float dtype, and to nothing else
        _refuse_barebones_promotion(a, b)
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.is_complex and lo is float64 and hi is complex64:
            return complex128
        return hi
    if a.category == _COMPLEX:
        return a if a.itemsize > b.itemsize else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.category == _BOOL:
        return bool
    return _BY_NP[np.promote_types(a.np, b.np)]


# ATen's ScalarType names, which PyTorch's messages use ("Float", "Long" ...)
_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "uint16": "UInt16",
                "uint32": "UInt32", "uint64": "UInt64", "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2"}


def _refuse_barebones_promotion(a, b):
    what = "Float8 Types" if a in _FLOAT8 or b in _FLOAT8 else "uint16, uint32, uint64 types"
    raise RuntimeError(f"Promotion for {what} is not supported, attempted to promote {_SCALAR_TYPE[a.name]} and "
                       f"{_SCALAR_TYPE[b.name]}")


def scalar_dtype(x):
    """dtype that a Python scalar takes when it is made into a tensor on its own."""
    if isinstance(x, builtins.bool) or isinstance(x, np.bool_):
        return bool
    if isinstance(x, (builtins.int, np.integer)):
        return int64
    if isinstance(x, (builtins.float, np.floating)):
        return get_default_dtype()
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return get_default_dtype().to_complex()
    raise TypeError(f"unsupported scalar type {type(x).__name__}")


def result_type_of(tensors, scalars=()):
    """``torch.result_type`` over tensors (objects with ``.dtype`` and ``.ndim``) and Python scalars."""
    dim_t = zero_t = None
    for t in tensors:
        if t.ndim:
            dim_t = t.dtype if dim_t is None else promote_types(dim_t, t.dtype)
        else:
            zero_t = t.dtype if zero_t is None else promote_types(zero_t, t.dtype)
    res = dim_t
    if zero_t is not None:
        if res is None:
            res = zero_t
        elif zero_t.category > res.category:
            res = promote_types(res, zero_t)
    for s in scalars:
        sd = scalar_dtype(s)
        if res is None:
            res = sd
        elif sd.category > res.category:
            if sd.category == _COMPLEX:
                res = res.to_complex() if res.category == _FLOAT else get_default_dtype().to_complex()
            else:
                res = get_default_dtype() if sd.category == _FLOAT else (int64 if sd.category == _INT else res)
    return res if res is not None else get_default_dtype()


def finfo_np(d):
    return np.finfo(d.np) if d.np.type.__module__ == "numpy" else ml_dtypes.finfo(d.np)


class finfo:
    """``torch.finfo``: eps, max, min, tiny, resolution of a floating dtype."""

    def __init__(self, type=None):
        type = as_dtype(type, "finfo") or get_default_dtype()
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        type = type.to_real()
        f = finfo_np(type)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = builtins.float(f.eps)
        self.max = builtins.float(f.max)
        self.min = builtins.float(f.min)
        self.tiny = self.smallest_normal = builtins.float(f.tiny)
        self.resolution = builtins.float(f.resolution)


class iinfo:
    """``torch.iinfo``: max, min, bits of an integer dtype."""

    def __init__(self, type):
        type = as_dtype(type, "iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        f = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.max = builtins.int(f.max)
        self.min = builtins.int(f.min)
