"""The engine of tinytorch's differential tests of bad input: tensor placeholders, argument mutations, running
one call in PyTorch and in tinytorch under a watchdog, and classifying what the two did.

A call is ``base.fn(m, *args, **kw)`` where ``m`` is ``torch`` or ``tinytorch`` and the arguments hold ``T``
(tensor) and ``D`` (dtype) placeholders that ``build`` turns into the same data in both libraries. ``classify``
gives one verdict per call:

- OK: both raise (ours an instance of torch's built-in exception class; a TypeError where torch's Python code
  trips over a non-tensor with an AttributeError), or both return the same values (NaN-equal,
  dtype-dependent tolerances), dtypes and shapes, and leave their tensor arguments equal;
- SILENT: torch raises, tinytorch returns;
- WRONG: both return, but values, dtypes or shapes differ (of the results, or of arguments written in place);
- TYPE: both raise, with exception types that differ;
- LEAK: tinytorch's exception comes from inside NumPy or a backend kernel, or is an incidental KeyError /
  AttributeError / IndexError / ZeroDivisionError / MemoryError that torch does not raise;
- REFUSED: tinytorch raises where torch returns;
- HANG: tinytorch took more than ``HANG_S`` seconds (a SIGALRM watchdog interrupts it).

Used by ``test_bad_input.py`` (a hand-written corpus) and ``fuzz.py`` (calls generated from every public signature).
"""
import math
import os
import signal
import threading
import time
import traceback
import warnings

import numpy as np

import tinytorch

try:
    import torch
except ImportError:  # pragma: no cover - the differential suite needs PyTorch
    torch = None

HANG_S = 5.0           # the watchdog: a safety net, not a speed assertion
FAIL_CLASSES = ("SILENT", "WRONG", "TYPE", "LEAK", "REFUSED", "HANG")
INCIDENTAL = (KeyError, AttributeError, IndexError, ZeroDivisionError, MemoryError)
DTYPES = ("int64", "bool", "float16", "bfloat16", "complex64", "float64", "uint8")
HUGE = (2 ** 40, 2 ** 62)
TORCH_MEMORY_SKIP = (1 << 28, 1 << 36)  # elements that torch might really allocate (slow, large): not run
_PKG = os.path.dirname(os.path.abspath(tinytorch.__file__))
_NUMPY = os.path.dirname(os.path.abspath(np.__file__))


# ---- placeholders -------------------------------------------------------------------------------------------
class T:
    """A tensor argument: ``shape``, ``dtype`` name, value ``kind`` ('n' normal, 'p' positive, 'u' in [0, 1),
    'i<k>' integers in [0, k), 'perm' the distinct integers 0 .. numel - 1 in a random order, 'b' bool, 'spd'
    symmetric positive definite), ``rg`` requires_grad,
    ``special`` ('nan' / 'inf' / '-inf' / 'huge': the first element replaced; huge is 1e38, past float16's
    range), ``view`` (None: contiguous; 't': a transposed view; 'step': every second element of a wider tensor)."""

    __slots__ = ("shape", "dtype", "kind", "rg", "special", "view")

    def __init__(self, shape, dtype="float32", kind="n", rg=False, special=None, view=None):
        self.shape, self.dtype, self.kind, self.rg, self.special = tuple(shape), dtype, kind, rg, special
        self.view = view

    def but(self, **kw):
        t = T(self.shape, self.dtype, self.kind, self.rg, self.special, self.view)
        for k, v in kw.items():
            setattr(t, k, v)
        return t

    def __repr__(self):
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in ("rg", "special", "view") if getattr(self, k))
        return f"T{list(self.shape)}:{self.dtype}{'' if self.kind == 'n' else '/' + self.kind}{extra}"


class D:
    """A dtype argument by name (``m.<name>``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name



# ---- building arguments -------------------------------------------------------------------------------------
def _data(t, seed):
    rng = np.random.default_rng(seed)
    shape, kind = t.shape, t.kind
    if kind == "b":
        a = rng.random(shape) > 0.5
    elif kind == "perm":
        a = rng.permutation(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    elif kind.startswith("i"):
        a = rng.integers(0, int(kind[1:]), shape)
    elif kind == "p":
        a = rng.uniform(0.2, 1.5, shape)
    elif kind == "u":
        a = rng.uniform(0.05, 0.95, shape)
    elif kind == "spd" and len(shape) == 2 and shape[0] == shape[1]:
        q = rng.standard_normal(shape)
        a = q @ q.T + shape[0] * np.eye(shape[0])
    else:
        a = rng.standard_normal(shape) * 1.5
    a = np.array(a)
    if t.special and a.size:
        a = a.astype(np.float64)
        a.reshape(-1)[0] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "huge": 1e38}[t.special]
    return a


def _tensor(m, t, seed):
    a = _data(t, seed)
    if t.dtype in ("int64", "uint8", "int32", "int16", "int8") and t.kind == "n":
        # distinct integers: ties would make the indices of sort/kthvalue/max implementation-defined
        a = np.random.default_rng(seed).permutation(a.size).reshape(a.shape) - (a.size // 2 if t.dtype == "int64"
                                                                                 else 0)
    if t.dtype not in ("float16", "bfloat16", "float32", "float64", "complex64") and a.dtype.kind == "f":
        a = np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0)
        a = np.where(np.abs(a) > 1e9, 0.0, a)
    if t.dtype == "bfloat16":
        x = m.from_numpy(a.astype(np.float32)).to(m.bfloat16)
    elif t.dtype == "complex64":
        x = m.from_numpy(np.asarray(a + 0.5j * a[::-1].copy() if a.ndim else a + 0.5j).astype(np.complex64))
    else:
        x = m.from_numpy(np.ascontiguousarray(np.asarray(a).astype(t.dtype)))
    if t.view == "t" and x.dim() >= 2:
        # the same values, laid out transposed: a non-contiguous view of a contiguous tensor
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    elif t.view == "step" and x.dim() >= 1:
        x = m.stack([x, m.zeros_like(x)], -1).flatten(-2)[..., ::2]
    if t.rg:
        x.requires_grad_(True)
    return x


def _build(m, v, seed):
    if isinstance(v, T):
        return _tensor(m, v, seed)
    if isinstance(v, D):
        return getattr(m, v.name)
    if isinstance(v, list):
        return [_build(m, x, seed + 7 * i) for i, x in enumerate(v)]
    if isinstance(v, tuple):
        return tuple(_build(m, x, seed + 7 * i) for i, x in enumerate(v))
    return v


# ---- mutations ----------------------------------------------------------------------------------------------
def _leaves(args, kw):
    """(path, value) of every mutable leaf; a path is ('a', i, ...) or ('k', name, ...)."""
    out = []

    def walk(v, path):
        out.append((path, v))
        if isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                walk(x, path + (i,))
    for i, a in enumerate(args):
        walk(a, ("a", i))
    for k, a in kw.items():
        walk(a, ("k", k))
    return out


def _replace(args, kw, path, new):
    args, kw = list(args), dict(kw)

    def sub(v, rest):
        if not rest:
            return new
        seq = list(v)
        seq[rest[0]] = sub(seq[rest[0]], rest[1:])
        return type(v)(seq)
    if path[0] == "a":
        args[path[1]] = sub(args[path[1]], path[2:])
    else:
        kw[path[1]] = sub(kw[path[1]], path[2:])
    return tuple(args), kw



def mutations(args, kw):
    """Every mutation of the call ``(args, kw)`` as (description, args, kw)."""
    out = []

    def add(desc, path, new):
        out.append((desc,) + _replace(args, kw, path, new))
    for path, v in _leaves(args, kw):
        where = ".".join(str(p) for p in path[1:])
        if isinstance(v, T):
            for d in DTYPES:
                if d != v.dtype:
                    add(f"{where}:dtype={d}", path, v.but(dtype=d))
            add(f"{where}:0-d", path, v.but(shape=()))
            add(f"{where}:empty", path, v.but(shape=(0,) + v.shape[1:] if v.shape else (0,)))
            if v.shape:
                add(f"{where}:0-size-last", path, v.but(shape=v.shape[:-1] + (0,)))
                add(f"{where}:drop-dim", path, v.but(shape=v.shape[:-1]))
                add(f"{where}:last+1", path, v.but(shape=v.shape[:-1] + (v.shape[-1] + 1,)))
            add(f"{where}:extra-dim", path, v.but(shape=(2,) + v.shape))
            add(f"{where}:requires_grad", path, v.but(rg=True, dtype="float32"))
            add(f"{where}:nan", path, v.but(special="nan"))
            add(f"{where}:inf", path, v.but(special="inf"))
            for bad in (1.5, "a", None, [1.0, 2.0]):
                add(f"{where}:={bad!r}", path, bad)
        elif isinstance(v, D):
            for d in DTYPES:
                add(f"{where}:dtype={d}", path, D(d))
            add(f"{where}:=int", path, int)
            add(f"{where}:='float32'", path, "float32")
        elif isinstance(v, bool):
            add(f"{where}:=None", path, None)
            add(f"{where}:='yes'", path, "yes")
        elif isinstance(v, int):
            for bad in (-1, 0, -7, 3, 5, *HUGE, -(2 ** 63) + 1, 1.5, None, "a", float("nan")):
                add(f"{where}:={bad!r}", path, bad)
        elif isinstance(v, float):
            for bad in (float("nan"), float("inf"), -float("inf"), -3.0, 0.0, 2.0 ** 40, "a", None):
                add(f"{where}:={bad!r}", path, bad)
        elif isinstance(v, str):
            add(f"{where}:misspelt", path, v[:-1] + v[-1].upper() + "x")
            add(f"{where}:=1", path, 1)
        elif isinstance(v, (tuple, list)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            add(f"{where}:dup", path, type(v)(list(v) + [v[0]]))
            add(f"{where}:shorter", path, type(v)(list(v)[:-1]))
            add(f"{where}:longer", path, type(v)(list(v) + [2]))
            add(f"{where}:=()", path, type(v)())
        elif isinstance(v, list) and v and all(isinstance(x, T) for x in v):
            add(f"{where}:=[]", path, [])
            add(f"{where}:mixed-dtype", path, [v[0], v[-1].but(dtype="float64")])
            add(f"{where}:mixed-ndim", path, [v[0], v[-1].but(shape=(2,) + v[-1].shape)])
    for k in kw:
        new = dict(kw)
        val = new.pop(k)
        new[k[:-1] + k[-1] * 2 if len(k) > 1 else k + "x"] = val  # a misspelt keyword
        out.append((f"kw:{k}:misspelt", args, new))
    out.append(("kw:bogus", args, dict(kw, bogus=1)))
    return out



# ---- running and comparing ----------------------------------------------------------------------------------
class _Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _numel_estimate(args, kw):
    """A rough upper bound of the elements a call could allocate: the product of its positive ints times its
    largest tensor; a call that torch could really allocate gigabytes for (instead of refusing at once) is
    not run."""
    ints, big = 1, 1
    for _, v in _leaves(args, kw):
        if isinstance(v, bool):
            continue
        if isinstance(v, int) and v > 1:
            ints *= v
        elif isinstance(v, T):
            big = max(big, math.prod(v.shape) or 1)
    return ints * big


def _run(m, base, args, kw, seed, watchdog):
    """('ret', value) or ('exc', exception, traceback) of one call in module ``m``."""
    m.manual_seed(0)
    built_args = _build(m, args, seed)
    built_kw = {k: _build(m, v, seed + 1000 + i) for i, (k, v) in enumerate(kw.items())}
    use_alarm = watchdog and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    old = None
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, HANG_S)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = base.fn(m, *built_args, **built_kw)
        return ("ret", r, time.perf_counter() - t0)
    except _Hang:
        return ("hang", None, time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - every exception is a result to classify
        return ("exc", e, e.__traceback__)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def _builtin_base(exc_type):
    import builtins
    for k in exc_type.__mro__:
        if getattr(builtins, k.__name__, None) is k:
            return k
    return Exception


def _leak_frame(tb):
    """The innermost frame of ``tb`` when it lies inside NumPy or a tinytorch backend's kernels, else None."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return None
    f = os.path.abspath(frames[-1].filename)
    if f.startswith(_NUMPY) or "/scipy/" in f or f.startswith(os.path.join(_PKG, "backends")):
        return f"{os.path.basename(f)}:{frames[-1].lineno}"
    return None


def _to_np(x):
    x = x.detach()
    if str(x.layout) != "torch.strided":
        x = x.to_dense()
    if str(x.dtype) == "torch.bfloat16":
        x = x.float()
    if hasattr(x, "resolve_conj"):
        x = x.resolve_conj().resolve_neg()
    return np.asarray(x.numpy())


_TOL = {"torch.float16": (1e-3, 1e-3), "torch.bfloat16": (1.6e-2, 1e-2), "torch.float32": (2e-5, 1e-5),
        "torch.complex64": (2e-5, 1e-5), "torch.float64": (1e-7, 1e-9), "torch.complex128": (1e-7, 1e-9)}


def _compare(a, b, path="out"):
    """None when torch's result ``a`` and tinytorch's ``b`` agree, else a description of the difference."""
    if isinstance(a, torch.Tensor):
        if not isinstance(b, tinytorch.Tensor):
            return f"{path}: a {type(b).__name__} where torch gives a Tensor"
        if str(a.dtype) != str(b.dtype):
            return f"{path}: dtype {b.dtype} vs torch {a.dtype}"
        if tuple(a.shape) != tuple(b.shape):
            return f"{path}: shape {tuple(b.shape)} vs torch {tuple(a.shape)}"
        if a.requires_grad != b.requires_grad:
            return f"{path}: requires_grad {b.requires_grad} vs torch {a.requires_grad}"
        if a.numel() > 1 << 20 or not _compare.values:
            return None
        x, y = _to_np(a), _to_np(b)
        rtol, atol = _TOL.get(str(a.dtype), (0, 0))
        rtol, atol = max(rtol, _compare.floor[0]), max(atol, _compare.floor[1])
        if x.dtype.kind in "fc":
            ok = np.allclose(y, x, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(x, y)
        if not ok:
            bad = np.argwhere(~np.isclose(y, x, rtol=rtol, atol=atol, equal_nan=True) if x.dtype.kind in "fc"
                              else x != y)
            i = tuple(bad[0]) if len(bad) else ()
            return f"{path}: value {y[i]} vs torch {x[i]} at {i}"
        return None
    if isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            return f"{path}: {type(b).__name__} of {len(b) if hasattr(b, '__len__') else '?'} vs torch " \
                   f"{type(a).__name__} of {len(a)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _compare(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, torch.nn.Module):
        if type(a).__name__ != type(b).__name__:
            return f"{path}: {type(b).__name__} vs torch {type(a).__name__}"
        pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
        if sorted(pa) != sorted(pb):
            return f"{path}: parameters {sorted(pb)} vs torch {sorted(pa)}"
        for k in pa:
            d = _compare(pa[k], pb[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, (torch.Size,)):
        return None if tuple(a) == tuple(b) else f"{path}: {tuple(b)} vs torch {tuple(a)}"
    if isinstance(a, (bool, int, float, complex)):
        if not isinstance(b, (bool, int, float, complex, np.generic)):
            return f"{path}: {type(b).__name__} vs torch {type(a).__name__}"
        if isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b):
            return None
        return None if (a == b or abs(a - b) <= 1e-6 * max(1, abs(a))) else f"{path}: {b!r} vs torch {a!r}"
    return None


_compare.values = True
_compare.floor = (0, 0)


def _mixed_float_floor(args, kw):
    """The tolerance of the least precise floating input when the inputs mix floating dtypes (float32 logits
    with a float64 target): a composite rounds its intermediates in that dtype before the promotion (as
    ``linear_cross_entropy``'s float32 linear in both libraries), so the float64 result carries float32 rounding.
    (0, 0) otherwise."""
    order = ("float64", "float32", "bfloat16", "float16")
    kinds = {v.dtype for _, v in _leaves(args, kw) if isinstance(v, T) and v.dtype in order}
    if len(kinds) < 2:
        return (0, 0)
    return _TOL["torch." + max(kinds, key=order.index)]


class Incomparable(Exception):
    """Raised by a harness's torch-side call whose result is not PyTorch's defined behaviour (an ``out=`` that
    aliases an input, read after torch resized it): the call is a SKIP, not a verdict."""


def classify(base, desc, args, kw, seed):
    """(class, detail) of one call."""
    if _numel_estimate(args, kw) >= TORCH_MEMORY_SKIP[0] and _numel_estimate(args, kw) < TORCH_MEMORY_SKIP[1]:
        return "SKIP", "torch could allocate gigabytes"
    rt = _run(torch, base, args, kw, seed, watchdog=True)
    if rt[0] == "hang":  # PyTorch itself loops (nn.LSTM(num_layers=2**62)): nothing to compare with
        return "SKIP", "torch itself runs > 5 s"
    if rt[0] == "exc" and isinstance(rt[1], Incomparable):
        return "SKIP", str(rt[1])
    ro = _run(tinytorch, base, args, kw, seed, watchdog=True)
    if ro[0] == "hang":
        return "HANG", f"> {HANG_S:.0f} s"
    if rt[0] == "exc" and ro[0] == "exc":
        te, oe = rt[1], ro[1]
        leak = _leak_frame(ro[2])
        want = _builtin_base(type(te))
        if want is AttributeError and isinstance(oe, TypeError):
            # torch's Python functions (nn.functional) trip over a non-tensor with an incidental AttributeError
            # ('float' object has no attribute 'dim'); the TypeError naming the argument is the deliberate form
            want = TypeError
        if not isinstance(oe, want):
            kind = "LEAK" if isinstance(oe, INCIDENTAL) or leak else "TYPE"
            return kind, f"{type(oe).__name__}({str(oe)[:90]}) vs torch {type(te).__name__}({str(te)[:70]})" + \
                (f" from {leak}" if leak else "")
        if leak:
            return "LEAK", f"{type(oe).__name__} from {leak}: {str(oe)[:90]}"
        return "OK", "both raise"
    if rt[0] == "exc":
        return "SILENT", f"torch {type(rt[1]).__name__}: {str(rt[1])[:110]}"
    if ro[0] == "exc":
        oe = ro[1]
        leak = _leak_frame(ro[2])
        kind = "LEAK" if isinstance(oe, INCIDENTAL) or leak else "REFUSED"
        return kind, f"{type(oe).__name__}: {str(oe)[:110]}" + (f" from {leak}" if leak else "")
    _compare.values = base.values
    _compare.floor = _mixed_float_floor(args, kw)
    try:
        d = _compare(rt[1], ro[1])
    except Exception as e:  # noqa: BLE001 - a result we cannot even read back is wrong
        d = f"result not comparable: {type(e).__name__}: {e}"
    if d and base.values and _nearer_float64(base, args, kw, seed, rt[1], ro[1]):
        return "OK", "tinytorch is nearer than torch to torch's float64 result"
    return ("WRONG", d) if d else ("OK", "")


_WIDER = {"torch.float32": "float64", "torch.float16": "float64", "torch.bfloat16": "float64",
          "torch.complex64": "complex128"}


def _nearer_float64(base, args, kw, seed, theirs, ours):
    """True when torch's result in float64 (the same call, its reduced-precision tensor arguments cast to float64
    or complex128 after they were built, so the values are the same) exists and every element of tinytorch's
    result is as near to it as torch's own, within the comparison's tolerance (ill-conditioned problems: a float32 pinverse of a matrix
    of condition 1e4, digamma near a pole). A difference in which elements are NaN is never nearer."""
    def wider(v):
        if isinstance(v, torch.Tensor) and str(v.dtype) in _WIDER:
            return v.detach().to(getattr(torch, _WIDER[str(v.dtype)]))
        if isinstance(v, (list, tuple)):
            return type(v)(wider(x) for x in v)
        return v
    default = torch.get_default_dtype()
    try:
        torch.manual_seed(0)
        built = wider(_build(torch, args, seed))
        built_kw = {k: wider(_build(torch, v, seed + 1000 + i)) for i, (k, v) in enumerate(kw.items())}
        # a module built inside the call (nn targets) gets float64 parameters too
        torch.set_default_dtype(torch.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = base.fn(torch, *built, **built_kw)
    except Exception:  # noqa: BLE001 - no float64 answer: the difference stands
        return False
    finally:
        torch.set_default_dtype(default)

    def nearer(a, b, r):
        if isinstance(a, torch.Tensor):
            if not (isinstance(r, torch.Tensor) and str(r.dtype) in ("torch.float64", "torch.complex128")
                    and str(a.dtype) in _WIDER and tuple(r.shape) == tuple(a.shape)):
                return False
            x, y, z = _to_np(a).astype(np.complex128), _to_np(b).astype(np.complex128), _to_np(r)
            if not np.array_equal(np.isnan(x), np.isnan(y)):
                return False
            rtol, atol = _TOL[str(a.dtype)]
            with np.errstate(invalid="ignore"):
                ok = (np.abs(y - z) <= np.abs(x - z) + atol + rtol * np.abs(z)) | (x == y) | np.isnan(x)
            return bool(ok.all())
        if isinstance(a, (tuple, list)) and isinstance(r, (tuple, list)) and len(a) == len(r):
            return all(nearer(p, q, s) for p, q, s in zip(a, b, r))
        return False
    try:
        return nearer(theirs, ours, ref)
    except Exception:  # noqa: BLE001
        return False


