"""``FlopCounterMode``: count the FLOPs of matrix products, convolutions and attention run in a context
(``torch.utils.flop_counter``).

It listens to the dispatcher (``tinytorch/autograd/profiler.py``'s op hook), so forward and backward ops are both
seen. Each tinytorch op is counted under the ATen op PyTorch's counter would see for the same call, with PyTorch's
formulas: a matmul is ``2*m*k*n`` per product (``aten.mm`` / ``aten.addmm`` / ``aten.bmm`` / ``aten.baddbmm``; a
``matmul`` or ``linear`` is counted as the mm/addmm/bmm PyTorch lowers it to, and matrix-vector and dot products
are not counted, as in PyTorch), a convolution ``2 * prod(spatial) * prod(kernel) * batch * c_out * c_in`` with the
output's spatial size (the input's for a transposed one), attention two batched products. An op whose
decomposition runs counted ops is not counted itself, so nothing is counted twice.

Counts are reported for ``"Global"`` only: tinytorch has no global module hooks to attribute them to modules.
"""
import warnings
from collections import defaultdict
from math import prod

from ..autograd import profiler as _prof

__all__ = ["FlopCounterMode", "register_flop_formula", "mm_flop", "addmm_flop", "bmm_flop", "baddbmm_flop",
           "conv_flop_count", "sdpa_flop_count"]


def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    """FLOPs of ``(m, k) @ (k, n)``: ``2*m*k*n``."""
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"mm_flop: inner dimensions differ ({k} vs {k2})")
    return m * n * 2 * k


def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """FLOPs of ``bias + a @ b``: the product's (the addition is not counted)."""
    return mm_flop(a_shape, b_shape)


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    """FLOPs of ``(b, m, k) @ (b, k, n)``: ``2*b*m*k*n``."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2 or k != k2:
        raise AssertionError(f"bmm_flop: shapes {list(a_shape)} and {list(b_shape)} do not match")
    return b * m * n * 2 * k


def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    """FLOPs of ``input + a @ b`` (batched): the product's."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """FLOPs of a convolution (multiplications and additions of the products; bias not counted):
    ``2 * prod(spatial) * prod(kernel) * batch * w_shape[0] * w_shape[1]``, spatial being the output's (the
    input's when ``transposed``)."""
    batch = x_shape[0]
    spatial = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *kernel = w_shape
    return prod(spatial) * prod(kernel) * batch * c_out * c_in * 2


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """FLOPs of attention on ``(b, h, s, d)`` inputs: ``q @ k^T`` and ``scores @ v`` (key/value may have fewer heads,
    the query's being a multiple). AssertionError on shapes that do not fit."""
    b, h_q, s_q, d_q = query_shape
    b2, h_kv, s_k, d2 = key_shape
    b3, h3, s3, d_v = value_shape
    if not (b == b2 == b3 and h_kv == h3 and d_q == d2 and s_k == s3):
        raise AssertionError(f"sdpa_flop_count: query/key/value shapes are incompatible: q={list(query_shape)}, "
                             f"k={list(key_shape)}, v={list(value_shape)}")
    if h_q < h_kv or h_q % h_kv != 0:
        raise AssertionError(f"sdpa_flop_count: query heads ({h_q}) must be a multiple of key/value heads ({h_kv})")
    return bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k)) + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v))


def _shape(t):
    return tuple(t.shape)


def _matmul(a, b):
    """(key, flops) of ``a @ b`` as PyTorch lowers it: 2-D (or a 1-D left) -> mm, a batched left with a 2-D right
    folded into one mm, batched on both sides -> bmm over the broadcast batch; None for mv/dot."""
    sa, sb = _shape(a), _shape(b)
    if len(sb) == 1:
        return None
    if len(sa) == 1:
        sa = (1,) + sa
    if len(sb) == 2 and len(sa) >= 2:
        return "aten.mm", mm_flop((prod(sa[:-1]), sa[-1]), sb)
    batch = _broadcast(sa[:-2], sb[:-2])
    return "aten.bmm", bmm_flop((batch, sa[-2], sa[-1]), (batch, sb[-2], sb[-1]))


def _broadcast(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return prod(max(x, y) for x, y in zip(a, b))


def _conv(transposed):
    def count(args, kw, result):
        x, w = args[0], args[1]
        xs, os_ = _shape(x), _shape(result)
        if len(xs) == w.dim() - 1:  # unbatched input: PyTorch counts it as a batch of one
            xs, os_ = (1,) + xs, (1,) + os_
        return "aten.convolution", conv_flop_count(xs, _shape(w), os_, transposed)
    return count


def _sdpa(args, kw, result):
    q, k, v = args[0], args[1], args[2]

    def four(s):
        return (prod(s[:-3]) if len(s) > 3 else 1, s[-3] if len(s) >= 3 else 1, s[-2], s[-1])
    return "aten._scaled_dot_product_flash_attention", sdpa_flop_count(four(_shape(q)), four(_shape(k)),
                                                                        four(_shape(v)))


def _linear(args, kw, result):
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else kw.get("bias")
    xs = _shape(x)
    if len(xs) == 1:
        return None  # a matrix-vector product
    flops = mm_flop((prod(xs[:-1]), xs[-1]), _shape(w)[::-1])
    return ("aten.mm" if bias is None else "aten.addmm"), flops


# tinytorch op name -> function(args, kw, result) -> (ATen key, flops) or None
_FORMULAS = {
    "mm": lambda a, kw, r: ("aten.mm", mm_flop(_shape(a[0]), _shape(a[1]))),
    "addmm": lambda a, kw, r: ("aten.addmm", addmm_flop(_shape(a[0]), _shape(a[1]), _shape(a[2]))),
    "bmm": lambda a, kw, r: ("aten.bmm", bmm_flop(_shape(a[0]), _shape(a[1]))),
    "baddbmm": lambda a, kw, r: ("aten.baddbmm", baddbmm_flop(_shape(a[0]), _shape(a[1]), _shape(a[2]))),
    "matmul": lambda a, kw, r: _matmul(a[0], a[1]),
    "linear": _linear,
    "conv1d": _conv(False), "conv2d": _conv(False), "conv3d": _conv(False),
    "conv_transpose1d": _conv(True), "conv_transpose2d": _conv(True), "conv_transpose3d": _conv(True),
    "scaled_dot_product_attention": _sdpa,
}


def register_flop_formula(targets, get_raw=False):
    """Decorator registering ``formula(*shapes, out_shape=...) -> int`` for tinytorch op name(s) ``targets``
    (PyTorch takes ATen op objects; tinytorch's ops are named by strings, e.g. ``"mm"``). The count is reported
    under ``"aten.<name>"``. With ``get_raw`` the formula gets the tensors instead of their shapes."""
    names = targets if isinstance(targets, (list, tuple)) else [targets]

    def register(formula):
        for name in names:
            _FORMULAS[name] = (lambda a, kw, r, n=name: _named(n, formula, get_raw, a, kw, r))
        formula._get_raw = get_raw
        return formula
    return register


def _named(name, formula, get_raw, args, kw, result):
    from .._tensor import Tensor

    def conv(v):
        return v if get_raw or not isinstance(v, Tensor) else _shape(v)
    out = result if get_raw or not isinstance(result, Tensor) else _shape(result)
    return (_prof.aten_name(name).replace("::", "."),
            formula(*[conv(v) for v in args], **{k: conv(v) for k, v in kw.items()}, out_shape=out))


def _count_flops(op, args, kw, result, nested=False):
    """FLOPs of one op call (0 when the op has no formula or no result, or runs ``nested`` in an op that has
    one): the profiler's ``with_flops``."""
    f = _FORMULAS.get(op.name)
    if f is None or result is None or nested:
        return 0
    got = f(args, kw, result)
    return 0 if got is None else got[1]


class FlopCounterMode:
    """Count the FLOPs of the ops run inside the context (``torch.utils.flop_counter.FlopCounterMode``).

    ``get_total_flops()`` is the sum, ``get_flop_counts()`` ``{"Global": {"aten.mm": n, ...}}``, ``get_table()``
    the text table printed at exit when ``display`` (columns Module, FLOP, % Total). ``custom_mapping`` maps op
    names to extra formulas (``register_flop_formula``'s convention). ``mods`` is deprecated (UserWarning), as in
    PyTorch. Not reentrant.
    """

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self._formulas = dict(_FORMULAS)
        for name, formula in (custom_mapping or {}).items():
            self._formulas[name] = (lambda a, kw, r, n=name, f=formula:
                                    _named(n, f, getattr(f, "_get_raw", False), a, kw, r))
        self._depth = 0  # how many ops with a formula are running
        self._active = False

    def get_total_flops(self):
        """All FLOPs counted."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """``{module: {op: flops}}``; tinytorch reports the module ``"Global"`` only."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None):
        """The counts as a text table (``Module``, ``FLOP`` with a K/M/B/T suffix chosen from the total,
        ``% Total``), laid out as PyTorch's (tabulate's simple format)."""
        total = self.get_total_flops()
        suffixes = ["", "K", "M", "B", "T"]
        idx = max(0, min(len(suffixes) - 1, (len(str(total)) - 2) // 3))

        def num(n):
            return f"{n / 1000 ** idx:.3f}" + suffixes[idx]

        def pct(n):
            return "0%" if total == 0 else f"{n / total:.2%}"
        rows = []
        if "Global" in self.flop_counts:
            rows.append(["Global", num(total), pct(total)])
            for k, v in self.flop_counts["Global"].items():
                rows.append([" - " + str(k), num(v), pct(v)])
        if not rows:
            rows = [["Global", "0", "0%"]]
        header = ["Module", "FLOP", "% Total"]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(3)]
        lines = [f"{header[0]:<{widths[0]}}  {header[1]:>{widths[1]}}  {header[2]:>{widths[2]}}",
                 "  ".join("-" * w for w in widths)]
        lines += [f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}" for r in rows]
        return "\n".join(lines)

    def __enter__(self):
        self.flop_counts.clear()
        self._depth = 0
        self._active = True
        _prof._add_listener(self)
        return self

    def __exit__(self, *exc):
        _prof._remove_listener(self)
        self._active = False
        if self.display:
            print(self.get_table(self.depth))
        return False

    def op_enter(self, op, args, kw):
        if op.name not in self._formulas:
            return None
        self._depth += 1
        # the outermost op with a formula is the one PyTorch sees; the ops it runs inside are its own work
        return (op, args, kw) if self._depth == 1 else _NESTED

    def op_exit(self, token, result):
        if token is None:
            return
        self._depth -= 1
        if token is _NESTED or result is None:
            return
        op, args, kw = token
        got = self._formulas[op.name](args, kw, result)
        if got is not None:
            self.flop_counts["Global"][got[0]] += got[1]


_NESTED = object()
