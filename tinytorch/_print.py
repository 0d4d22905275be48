"""``repr(tensor)`` in PyTorch's format (fixed or scientific notation, aligned columns, summarised)."""
import numpy as np

from . import _dtype as _dt


def _float_formatter(vals):
    finite = vals[np.isfinite(vals)]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.4f}"
    absf = np.abs(finite)
    nz = absf[absf > 0]
    int_mode = bool(np.all(finite == np.round(finite)))
    sci = nz.size and (nz.max() / nz.min() > 1000.0 or nz.max() > 1e8 or (not int_mode and nz.min() < 1e-4))
    if int_mode and not sci:
        return lambda v: _special(v) or f"{v:.0f}."
    if sci:
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def tensor_repr(t):
    if t._storage.backend.shape_only:
        extra = f", dtype={t.dtype}" if t.dtype not in (_dt.get_default_dtype(), _dt.int64, _dt.bool) else ""
        return f"tensor(..., device='{t.device}', size={tuple(t._shape)}{extra})"
    a = t.detach().numpy(force=True)
    if t.dtype is _dt.bfloat16 or t.dtype is _dt.float16:
        a = a.astype(np.float32)
    suffix = []
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.numel() == 0 and t.ndim != 1:
        suffix.insert(0, f"size={tuple(t._shape)}")
    if t.dtype not in (_dt.get_default_dtype(), _dt.get_default_dtype().to_complex(), _dt.int64, _dt.bool):
        suffix.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    summarize = a.size > 1000
    if a.dtype.kind == "f":
        sample = a if not summarize else _edge_values(a)
        f = _float_formatter(sample.astype(np.float64).reshape(-1))
    elif a.dtype.kind == "c":
        sample = (a if not summarize else _edge_values(a)).reshape(-1)
        fre = _float_formatter(sample.real.astype(np.float64))
        fim = _float_formatter(np.abs(sample.imag).astype(np.float64))
        wre = max(len(fre(v)) for v in sample.real) if sample.size else 1
        f = lambda v: (fre(v.real).rjust(wre) + ("-" if np.signbit(v.imag) and not np.isnan(v.imag) else "+")
                       + fim(abs(v.imag)) + "j")
    elif a.dtype.kind == "b":
        f = lambda v: "True" if v else "False"
    else:
        f = lambda v: str(int(v))
    vals = (_edge_values(a) if summarize else a).reshape(-1)
    finite = [v for v in vals if not (a.dtype.kind == "f" and not np.isfinite(v))]
    width = max((len(f(v)) for v in finite), default=1)
    body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3,
                           formatter={"all": lambda v: f(v).rjust(width)}, max_line_width=80)
    if a.ndim == 0:
        body = f(a.item())
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"


def _edge_values(a):
    if a.ndim == 0:
        return a
    idx = tuple(np.r_[0:min(3, n), max(n - 3, 3):n] if n > 6 else slice(None) for n in a.shape)
    return a[np.ix_(*[np.arange(n)[i] for n, i in zip(a.shape, idx)])] if a.ndim else a
