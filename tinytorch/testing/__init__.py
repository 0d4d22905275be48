"""``torch.testing``: ``assert_close`` (and the older ``assert_allclose``) with PyTorch's default tolerances
per dtype, attribute checks and failure messages."""
import math

import numpy as np

from .._tensor import Tensor

__all__ = ["assert_close", "assert_allclose"]

# (rtol, atol) per dtype, as torch.testing: float16, bfloat16, float32, float64 (and complex of the same width)
_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
        "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _fail(msg, default, path):
    if msg is not None:
        raise AssertionError(msg(default) if callable(msg) else msg)
    if path:
        default += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    raise AssertionError(default)


def _pct(n, total):
    return f"{n} / {total} ({100.0 * n / total:.1f}%)"


def _compare_tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path):
    if a.shape != e.shape:
        _fail(msg, f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.", path)
    if check_device and a.device != e.device:
        _fail(msg, f"The values for attribute 'device' do not match: {a.device} != {e.device}.", path)
    if check_dtype and a.dtype is not e.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.", path)
    if check_stride and a.stride() != e.stride():
        _fail(msg, f"The values for attribute 'stride()' do not match: {a.stride()} != {e.stride()}.", path)
    if rtol is None or atol is None:
        dts = (a.dtype.name, e.dtype.name)
        r = max(_TOL.get(d, (0.0, 0.0))[0] for d in dts)
        t = max(_TOL.get(d, (0.0, 0.0))[1] for d in dts)
        rtol, atol = (r if rtol is None else rtol), (t if atol is None else atol)
    # differences in the common dtype (float32 for integers and half precision), as torch reports them
    common = np.result_type(*(np.float32 if t.dtype.itemsize < 4 or not (t.dtype.is_floating_point or t.dtype.is_complex)
                              else t.dtype.np for t in (a, e)))
    x = a.detach().cpu().numpy().astype(common)
    y = e.detach().cpu().numpy().astype(common)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.abs(x - y)
        ok = diff <= atol + rtol * np.abs(y)
        ok |= x == y  # equal infinities
        if equal_nan:
            ok |= np.isnan(x) & np.isnan(y)
        if ok.all():
            return
        rel = diff / np.abs(y)
    exact = rtol == 0 and atol == 0
    bad = int((~ok).sum())
    ai = np.unravel_index(int(np.nanargmax(diff)) if not np.isnan(diff).all() else 0, diff.shape) if diff.ndim else ()
    ri = np.unravel_index(int(np.nanargmax(np.where(np.isnan(rel), -np.inf, rel))), rel.shape) if rel.ndim else ()
    amax = diff[ai] if not np.isnan(diff).any() else float("nan")
    rmax = rel[ri] if not np.isnan(rel).any() else float("nan")
    ints = not (a.dtype.is_floating_point or a.dtype.is_complex)
    fmt = (lambda v: str(int(v)) if ints and np.isfinite(v) else repr(float(v)))
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {_pct(bad, x.size)}",
             f"Greatest absolute difference: {fmt(amax)} at index {tuple(int(i) for i in ai)}"
             + ("" if exact else f" (up to {atol} allowed)"),
             f"Greatest relative difference: {float(rmax)!r} at index {tuple(int(i) for i in ri)}"
             + ("" if exact else f" (up to {rtol} allowed)")]
    _fail(msg, "\n".join(lines), path)


def _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path):
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            _fail(msg, f"Comparing\n\nTensorOrArrayPair(\n    id={tuple(path)},\n    actual={actual!r},\n    "
                       f"expected={expected!r},\n...)\n\nresulted in the unexpected exception above.", path)
        return _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                                msg, path)
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match:\nMissing keys in the actual mapping: "
                       f"{sorted(set(expected) - set(actual))}\nAdditional keys in the actual mapping: "
                       f"{sorted(set(actual) - set(expected))}", path)
        for k in expected:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg,
                     path + [k])
        return
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path + [i])
        return
    if isinstance(actual, (bool, int, float, complex)) and isinstance(expected, (bool, int, float, complex)):
        if check_dtype and type(actual) is not type(expected):
            _fail(msg, f"The values for attribute 'dtype' do not match: {type(actual)} != {type(expected)}.", path)
        r, t = (rtol, atol) if rtol is not None else ((1e-7, 1e-7) if isinstance(expected, (float, complex))
                                                       else (0, 0))
        d = abs(actual - expected)
        if d <= t + r * abs(expected) or actual == expected or (equal_nan and actual != actual and expected != expected):
            return
        rel = d / abs(expected) if expected else math.inf
        _fail(msg, f"Scalars are not close!\n\nExpected {expected} but got {actual}.\nAbsolute difference: {d} "
                   f"(up to {t} allowed)\nRelative difference: {rel} (up to {r} allowed)", path)
    if actual != expected:
        _fail(msg, f"Objects are not equal: {actual!r} != {expected!r}", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` (tensors, Python numbers, or sequences / mappings of them) are
    close: |actual - expected| <= atol + rtol * |expected| elementwise, after matching shape, device and dtype
    (``torch.testing.assert_close``). Without rtol/atol, the defaults of the dtype (float32: 1.3e-6 / 1e-5;
    integers: exact). ValueError when only one of rtol/atol is given; AssertionError with PyTorch's message
    (mismatch count, greatest differences and their indices) otherwise."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, [])


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated ``torch.testing.assert_allclose``: ``assert_close`` without the dtype check."""
    from .._ops.creation import tensor
    a = actual if isinstance(actual, Tensor) else tensor(actual)
    e = expected if isinstance(expected, Tensor) else tensor(expected, dtype=a.dtype)
    assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 msg=msg or None)
