"""``repr(tensor)`` in PyTorch's format, and the print options that control it.

The layout follows ``torch/_tensor_str.py``: one formatter per tensor chooses fixed, integer-valued
(``1.``) or scientific notation from the nonzero finite values and pads every element to one width;
rows wrap at ``linewidth``; tensors above ``threshold`` elements show ``edgeitems`` at each end of every
dimension around ``...``; suffixes (device, dtype, grad_fn) go on the last line or wrap to a new one.
"""
import contextlib
import math

import numpy as np

from . import _dtype as _dt


class _PrintOptions:
    def __init__(self):
        self.precision, self.threshold, self.edgeitems, self.linewidth, self.sci_mode = 4, 1000, 3, 80, None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print (``torch.set_printoptions``).

    precision: digits after the point (default 4); threshold: element count above which a tensor is
    summarised with ``...`` (default 1000); edgeitems: items kept at each end of a summarised dimension
    (default 3); linewidth: characters per line (default 80); profile: the 'default', 'short' or 'full'
    presets, which the other arguments override; sci_mode: True/False forces scientific notation on or off,
    None chooses it from the values. As in PyTorch, every call sets ``sci_mode`` to its argument.
    ValueError for an unknown profile.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}; expected 'default', 'short' or 'full'")
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict that ``set_printoptions(**d)`` accepts."""
    return dict(vars(PRINT_OPTS))


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager: ``set_printoptions(**kwargs)`` inside the block, the previous options after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Formats the elements of one tensor (or of its real or imaginary parts) to a common width."""

    def __init__(self, values, floating):
        self.floating, self.int_mode, self.sci_mode, self.max_width = floating, True, False, 1
        if not floating:
            for v in values.reshape(-1).tolist():
                self.max_width = max(self.max_width, len(_plain(v)))
            return
        v = values.astype(np.float64).reshape(-1)
        nz = v[np.isfinite(v) & (v != 0)]
        if nz.size == 0:
            return
        a = np.abs(nz)
        lo, hi = a.min(), a.max()
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if PRINT_OPTS.sci_mode is None \
            else PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        for x in nz.tolist():
            if self.sci_mode:
                w = len(f"{x:.{p}e}")
            elif self.int_mode:
                w = len(f"{x:.0f}") + 1  # the trailing '.' that marks a float
            else:
                w = len(f"{x:.{p}f}")
            self.max_width = max(self.max_width, w)

    def format(self, x):
        p = PRINT_OPTS.precision
        if not self.floating:
            s = _plain(x)
        elif self.sci_mode:
            s = f"{x:{self.max_width}.{p}e}"
        elif self.int_mode:
            s = f"{x:.0f}" + ("" if math.isinf(x) or math.isnan(x) else ".")
        else:
            s = f"{x:.{p}f}"
        return s.rjust(self.max_width)


def _plain(v):
    return str(v)


def _element(v, f1, f2):
    if f2 is None:
        return f1.format(v)
    re, im = f1.format(v.real), (f2.format(v.imag) + "j").lstrip()
    return re + im if im[0] in "+-" else re + "+" + im


def _summarized(a):
    """The elements that a summarised print shows (what the formatter sizes its columns on)."""
    k = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:k], a[-k:])) if a.shape[0] > 2 * k else a
    if not k:
        return a.reshape(-1)[:0]
    rows = range(a.shape[0]) if a.shape[0] <= 2 * k else list(range(k)) + list(range(a.shape[0] - k, a.shape[0]))
    return np.stack([_summarized(a[i]) for i in rows])


def _vector(a, indent, summarize, f1, f2):
    element_len = f1.max_width + 2 + (f2.max_width + 1 if f2 is not None else 0)
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_len))
    k = PRINT_OPTS.edgeitems
    if summarize and not k:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * k:
        data = [_element(v, f1, f2) for v in a[:k].tolist()] + [" ..."] + \
               [_element(v, f1, f2) for v in a[-k:].tolist()]
    else:
        data = [_element(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _element(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector(a, indent, summarize, f1, f2)
    k, n = PRINT_OPTS.edgeitems, a.shape[0]
    if summarize and n > 2 * k:
        parts = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(k)] + ["..."] + \
                [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n - k, n)]
    else:
        parts = [_nested(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _body(a, indent):
    summarize = a.size > PRINT_OPTS.threshold
    sample = _summarized(a) if summarize else a
    kind = a.dtype.kind
    if kind == "c":
        f1, f2 = _Formatter(sample.real, True), _Formatter(sample.imag, True)
    else:
        f1, f2 = _Formatter(sample, kind == "f"), None
    return _nested(a, indent, summarize, f1, f2)


def _with_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"


def tensor_repr(t):
    """``repr`` of a tensor, as PyTorch prints it under the current print options."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _dt.get_default_dtype()
    has_default_dtype = t.dtype in (default, default.to_complex(), _dt.int64, _dt.bool)
    if t._storage.backend.shape_only:
        suffixes.append(f"size={tuple(t._shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        text = "..."
    elif t.numel() == 0:
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t._shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        text = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t._shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        a = t.detach().numpy(force=True)
        if a.dtype.kind == "f" and a.dtype.itemsize < 4 or t.dtype is _dt.bfloat16:
            a = a.astype(np.float32)
        text = _body(a, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + text, suffixes, indent)
