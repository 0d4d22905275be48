"""Every ATen overload the PyTorch bridge (``tinytorch.torch_backend``) registers, op by op, against real torch on the
CPU: values (float32 to 1e-5 absolute / 1e-4 relative, integers and bools exactly), result dtypes and shapes, that
fresh results live on the ``opencl`` device, and gradients through the public op (torch's autograd on the device
against torch's autograd on the CPU). Expected values always come from torch's CPU, never from tinytorch.

Where the samples come from:

* torch's own OpInfo database (``op_db``): every OpInfo whose first sample reaches a registered kernel (found at
  collection time by running that sample on the CPU under a dispatch-recording mode) runs its first samples in
  float32 (with gradients), and in int64 and bool where the OpInfo supports them;
* the ``_foreach_`` family: arguments built from each overload's schema;
* ``out=`` and in-place overloads: a call of their functional overload recorded on the device during the other
  tests, replayed as the ``out=`` / in-place overload (out= into an empty tensor, so the resize path runs too,
  and into a non-contiguous one);
* hand-written samples for what no OpInfo reaches (factories, copies, storage, random numbers, fused Adam, ...).

Each device run records, with a ``TorchDispatchMode``, the ATen overloads dispatched with a device tensor; a kernel
of a registered overload that falls back to the CPU inside (a new ``FALLBACKS`` entry while it runs) fails its test.
``test_every_registered_overload_is_exercised`` asserts that the union of those records covers
``tinytorch.torch_backend.registered_ops()``. The module is skipped, with one line saying why, only without an
OpenCL platform.
"""
import contextlib
import itertools
import math
import warnings

import pytest

import tinytorch

if not tinytorch.opencl.is_available():
    pytest.skip("PyTorch bridge op tests skipped: no OpenCL platform (tinytorch.opencl.is_available() is False)",
                allow_module_level=True)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import tinytorch.torch_backend as tb  # noqa: E402
from tinytorch.torch_backend import kernels as K  # noqa: E402
from tinytorch.torch_backend import registration as R  # noqa: E402

_flags_frozen = torch.backends.flags_frozen()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
if not _flags_frozen:
    # importing PyTorch's test utilities freezes torch.backends' global flags for the whole process (its own suite
    # sets them only through flags()); the rest of this suite sets torch.backends.cudnn.benchmark as users do
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True

DEV = "opencl"
aten = torch.ops.aten
REGISTERED = frozenset(tb.registered_ops())
ATOL, RTOL = 1e-5, 1e-4
N_FLOAT_SAMPLES = 3      # float32 samples per OpInfo (forward and gradients)
N_OTHER_SAMPLES = 2      # int64 / bool samples per OpInfo (forward)

# overloads nearly every sample dispatches: an OpInfo reaching only these is not selected
_UBIQUITOUS = {"view.default", "as_strided.default", "_to_copy.default", "clone.default", "copy_.default",
               "empty.memory_format", "empty_strided.default", "_reshape_alias.default", "fill_.Scalar",
               "zero_.default", "_local_scalar_dense.default", "alias.default", "unfold.default"}

# OpInfos whose results are uninitialized memory: only dtype, shape and device are compared
_UNINITIALIZED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}

# per-OpInfo gradient tolerances, each with its reason: {OpInfo id: (atol, rtol, reason)}
_GRAD_TOLERANCE = {
    "nn.functional.layer_norm": (2e-4, RTOL, "a one-element normalized_shape: the true gradients are 0; torch's CPU "
                                 "backward (terms in rstd**3, rstd ~ 316 for eps=1e-5) leaves up to ~1.2e-4 of "
                                 "rounding where the device gives 0"),
    "nn.functional.normalize": (5e-5, RTOL, "normalizing over a size-1 dim (p=0.5): the true gradient is 0; torch's "
                                "CPU gives ~1.5e-5 of rounding where the device gives 0"),
}


def _name(func):
    """``aten::add.Tensor`` -> ``add.Tensor``; default overloads as ``abs.default`` (registered_ops' spelling)."""
    return f"{func._schema.name.split('::', 1)[1]}.{func._overloadname}"


def _overload(name):
    packet, _, overload = name.partition(".")
    return getattr(getattr(aten, packet), overload or "default")


def _is_dev(x):
    return isinstance(x, torch.Tensor) and x.device.type == DEV


def _touches_device(args, kwargs):
    for x in pytree.tree_leaves((args, kwargs)):
        if _is_dev(x) or (isinstance(x, torch.device) and x.type == DEV):
            return True
    return False


# ---- the recording mode -----------------------------------------------------------------------------------------

class _OnDevice:
    """A device tensor recorded as its CPU copy (replayed as a fresh device tensor)."""
    def __init__(self, t):
        self.t = t.detach().cpu().clone()


def _freeze(tree):
    return pytree.tree_map(lambda x: _OnDevice(x) if _is_dev(x) else
                           (x.detach().clone() if isinstance(x, torch.Tensor) else x), tree)


def _thaw(tree, device):
    """The recorded arguments again: device tensors on ``device`` ("cpu" for the reference), CPU tensors as they
    were; fresh copies each time."""
    def f(x):
        if isinstance(x, _OnDevice):
            return x.t.clone() if device == "cpu" else x.t.to(device)
        if isinstance(x, torch.Tensor):
            return x.clone()
        if isinstance(x, torch.device) and x.type == DEV and device == "cpu":
            return torch.device("cpu")
        return x
    return pytree.tree_map(f, tree, is_leaf=lambda x: isinstance(x, _OnDevice))


# the out= and in-place overloads the bridge registers -> their functional overload, whose recorded calls they replay
_OUT_OF = {}
for _f in K.KERNELS:
    _o = R._out_overload(_f)
    if _o is not None and _o in REGISTERED:
        _OUT_OF[_o] = _f if "." in _f else _f + ".default"
_INPLACE_OF = {}
for _i in REGISTERED:
    _p, _, _ov = _i.partition(".")
    if _p.endswith("_") and not _p.startswith("_foreach") and f"{_p[:-1]}.{_ov}" in REGISTERED:
        _INPLACE_OF[_i] = f"{_p[:-1]}.{_ov}"
_WANTED = set(_OUT_OF.values()) | set(_INPLACE_OF.values())
CAPTURED = {}            # functional overload -> up to 4 recorded calls (frozen args, kwargs)
COVERED = {}             # test id -> registered overloads its device runs dispatched
LEAKS = []               # (registered overload, ops that fell back to the CPU while its kernel ran)


class Recorder(TorchDispatchMode):
    """Records every overload dispatched with a device tensor, keeps calls of the functionals in ``_WANTED``
    and notes fallbacks that happen inside a registered kernel."""

    def __init__(self):
        super().__init__()
        self.ops = set()
        self.leaks = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _name(func)
        if not _touches_device(args, kwargs):
            return func(*args, **kwargs)
        self.ops.add(name)
        if name in _WANTED and len(CAPTURED.setdefault(name, [])) < 4:
            CAPTURED[name].append((_freeze(args), _freeze(kwargs)))
        before = sum(tb.FALLBACKS.values())
        snapshot = dict(tb.FALLBACKS)
        out = func(*args, **kwargs)
        if name in REGISTERED and sum(tb.FALLBACKS.values()) != before:
            self.leaks.append((name, sorted(k for k, v in tb.FALLBACKS.items() if snapshot.get(k) != v)))
        return out


class Case:
    """One test's device runs: everything inside ``with case.recording():`` is recorded under its id."""

    def __init__(self, tid):
        self.tid = tid
        COVERED.setdefault(tid, set())

    def recording(self):
        case = self

        class _Ctx:
            def __enter__(self):
                self.rec = Recorder()
                self.rec.__enter__()
                return self.rec

            def __exit__(self, *exc):
                self.rec.__exit__(*exc)
                COVERED[case.tid] |= self.rec.ops & REGISTERED
                LEAKS.extend(self.rec.leaks)
                assert not self.rec.leaks, f"registered kernels fell back to the CPU inside: {self.rec.leaks}"
                return False
        return _Ctx()


# ---- comparison ------------------------------------------------------------------------------------------------

def assert_same(dev, ref, what="", values=True, tol=(ATOL, RTOL), expect_device=True):
    """``dev`` (the device run's result) against ``ref`` (torch's CPU): the same structure; tensors with the same
    dtype, shape and values, device results on the device."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(dev, torch.Tensor), f"{what}: got {type(dev).__name__}, torch gives a Tensor"
        if expect_device:
            assert dev.device.type == DEV, f"{what}: result on {dev.device}, expected the {DEV} device"
        assert dev.dtype == ref.dtype, f"{what}: dtype {dev.dtype}, torch gives {ref.dtype}"
        assert dev.shape == ref.shape, f"{what}: shape {tuple(dev.shape)}, torch gives {tuple(ref.shape)}"
        if values:
            d = dev.detach().cpu()
            r = ref.detach()
            if r.is_complex():
                d, r = torch.view_as_real(d.resolve_conj()), torch.view_as_real(r.resolve_conj())
            exact = not r.is_floating_point()  # integers and bools: exactly
            torch.testing.assert_close(d, r, atol=0 if exact else tol[0], rtol=0 if exact else tol[1],
                                       equal_nan=True, check_device=False, msg=lambda m: f"{what}: {m}")
    elif isinstance(ref, (list, tuple)):
        assert isinstance(dev, (list, tuple)) and len(dev) == len(ref), \
            f"{what}: got {type(dev).__name__} of {len(dev) if isinstance(dev, (list, tuple)) else '-'}, torch " \
            f"gives {type(ref).__name__} of {len(ref)}"
        for i, (a, b) in enumerate(zip(dev, ref)):
            assert_same(a, b, f"{what}[{i}]", values, tol, expect_device)
    elif isinstance(ref, float) and values:
        assert isinstance(dev, (float, int)) and (math.isclose(dev, ref, rel_tol=tol[1], abs_tol=tol[0]) or
                                                 (math.isnan(dev) and math.isnan(ref))), f"{what}: {dev} != {ref}"
    elif values or not isinstance(ref, (int, float, bool)):
        assert type(dev) is type(ref) and dev == ref, f"{what}: {dev!r} != torch's {ref!r}"


def _to(tree, device):
    """Fresh copies of a sample's tensors on ``device`` (leaves that required grad still do); ``device=`` keyword
    values become ``device``."""
    def f(x):
        if isinstance(x, torch.Tensor):
            y = x.detach().clone() if device == "cpu" else x.detach().to(device)
            return y.requires_grad_(x.requires_grad)
        if isinstance(x, torch.device) or (isinstance(x, str) and x == "cpu"):
            return torch.device(device) if device != "cpu" else x
        return x
    return pytree.tree_map(f, tree)


def _run(fn, seed=0):
    """``fn()`` after seeding torch (the device's generator reproduces torch's CPU numbers); the exception it
    raised, if any, instead of its result."""
    torch.manual_seed(seed)
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - compared with the other device's outcome
        return None, e


def differential(case, fn, *, what="", values=True, tol=(ATOL, RTOL), expect_device=True):
    """``fn(device)`` on the CPU and on the device (recorded): either both raise, or their results agree."""
    ref, ref_exc = _run(lambda: fn("cpu"))
    with case.recording():
        dev, dev_exc = _run(lambda: fn(DEV))
    if ref_exc is not None:
        assert dev_exc is not None, f"{what}: torch's CPU raises {type(ref_exc).__name__}: {ref_exc}; the device " \
            f"returned {dev!r}"
        return None, None
    if dev_exc is not None:
        raise AssertionError(f"{what}: the device raised {type(dev_exc).__name__}: {dev_exc}") from dev_exc
    assert_same(dev, ref, what, values, tol, expect_device)
    return dev, ref


# ---- OpInfo samples ----------------------------------------------------------------------------------------------

class _CpuRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(_name(func))
        return func(*args, **(kwargs or {}))


def _opinfo_id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _sample_iter(op, dtype, requires_grad=False):
    """``op.sample_inputs`` without its wrapper (which walks the interpreter stack for every sample, slow under
    pytest)."""
    return iter(op.sample_inputs_func(op, "cpu", dtype, requires_grad))


def _first_sample(op, dtype, requires_grad=False):
    return next(_sample_iter(op, dtype, requires_grad))


# OpInfos selected whatever their forward dispatches: their backward (or the device's own dispatch) reaches
# registered kernels that the CPU forward does not show
_ALSO = {"nn.functional.embedding", "nn.functional.scaled_dot_product_attention", "nn.functional.interpolate.nearest",
         "nn.functional.upsample_nearest"}


def _select_opinfos():
    """The OpInfos whose first sample (float32, else int64, else bool), run on torch's CPU, dispatches a registered
    overload that is not one of the ubiquitous ones (views, copies, allocation); and those named in ``_ALSO``."""
    selected = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in op_db:
            dtypes = [d for d in (torch.float32, torch.int64, torch.bool) if d in op.supported_dtypes("cpu")]
            if not dtypes:
                continue
            if _opinfo_id(op) in _ALSO:
                selected.append(op)
                continue
            try:
                torch.manual_seed(0)
                s = _first_sample(op, dtypes[0])
                with _CpuRecorder() as rec:
                    op(s.input, *s.args, **s.kwargs)
            except Exception:  # noqa: BLE001 - an OpInfo this torch build cannot run on the CPU
                continue
            if (rec.ops & REGISTERED) - _UBIQUITOUS:
                selected.append(op)
    return selected


OPINFOS = _select_opinfos()


def _samples(op, dtype, n, requires_grad):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(itertools.islice(_sample_iter(op, dtype, requires_grad), n))


def _call(op, sample):
    inp, args, kwargs = sample
    return op(inp, *args, **kwargs)


def _grad_inputs(sample):
    return [t for t in pytree.tree_leaves(sample) if isinstance(t, torch.Tensor) and t.requires_grad]


def _grad_outputs(out, process):
    out = process(out) if process is not None else out
    return [o for o in pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad and
            o.is_floating_point()]


def _topk_by_value(sample, out):
    """topk's indices of tied values are unspecified: each index is compared by the input value it selects."""
    inp, args, kwargs = sample
    dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
    return out[0], inp.detach().gather(dim, out[1])


# OpInfo name -> (sample, result) -> what is compared, where torch leaves part of the result unspecified
_COMPARABLE = {"topk": _topk_by_value}


@pytest.mark.parametrize("op", OPINFOS, ids=_opinfo_id)
def test_opinfo(op):
    """The OpInfo's first float32 samples (forward and gradients), then its first int64 and bool samples."""
    tid = "opinfo:" + _opinfo_id(op)
    case = Case(tid)
    values = op.name not in _UNINITIALIZED
    grad_tol = _GRAD_TOLERANCE.get(_opinfo_id(op), (ATOL, RTOL, ""))[:2]
    grad = op.supports_autograd
    floats = _samples(op, torch.float32, N_FLOAT_SAMPLES, grad) if torch.float32 in op.supported_dtypes("cpu") \
        else []
    view = _COMPARABLE.get(op.name, lambda sample, out: out)
    for k, s in enumerate(floats):
        what = f"{tid} float32 sample {k} ({s.summary() if hasattr(s, 'summary') else s})"
        sample = (s.input, s.args, s.kwargs)
        cpu_s, dev_s = _to(sample, "cpu"), _to(sample, DEV)
        ref, ref_exc = _run(lambda: _call(op, cpu_s))
        with case.recording():
            dev, dev_exc = _run(lambda: _call(op, dev_s))
        if ref_exc is not None:
            assert dev_exc is not None, f"{what}: torch's CPU raises {ref_exc!r}; the device does not"
            continue
        if dev_exc is not None:
            raise AssertionError(f"{what}: the device raised {dev_exc!r}") from dev_exc
        assert_same(view(dev_s, dev), view(cpu_s, ref), what, values)
        if not (grad and values):
            continue
        ref_outs = _grad_outputs(ref, s.output_process_fn_grad)
        ref_ins = _grad_inputs(cpu_s)
        if not ref_outs or not ref_ins:
            continue
        dev_outs = _grad_outputs(dev, s.output_process_fn_grad)
        dev_ins = _grad_inputs(dev_s)
        assert len(dev_outs) == len(ref_outs), f"{what}: {len(dev_outs)} differentiable outputs, torch gives " \
            f"{len(ref_outs)}"
        g = torch.Generator().manual_seed(k)
        cot = [torch.randn(o.shape, generator=g, dtype=o.dtype) for o in ref_outs]
        ref_g, ref_exc = _run(lambda: torch.autograd.grad(ref_outs, ref_ins, cot, allow_unused=True))
        with case.recording():
            dev_g, dev_exc = _run(lambda: torch.autograd.grad(dev_outs, dev_ins, [c.to(DEV) for c in cot],
                                                              allow_unused=True))
        if ref_exc is not None:
            assert dev_exc is not None, f"{what} backward: torch's CPU raises {ref_exc!r}; the device does not"
            continue
        if dev_exc is not None:
            raise AssertionError(f"{what} backward: the device raised {dev_exc!r}") from dev_exc
        assert_same(list(dev_g), list(ref_g), what + " gradients", True, grad_tol)
    for dtype in (torch.int64, torch.bool):
        if dtype not in op.supported_dtypes("cpu"):
            continue
        for k, s in enumerate(_samples(op, dtype, N_OTHER_SAMPLES, False)):
            sample = (s.input, s.args, s.kwargs)
            def run(device, sample=sample):
                s = _to(sample, device)
                return view(s, _call(op, s))
            differential(case, run, what=f"{tid} {dtype} sample {k}", values=values)


# ---- the _foreach_ family: arguments from the schema ---------------------------------------------------------------

_FOREACH = sorted(n for n in REGISTERED if n.startswith("_foreach_"))
_POSITIVE = {"log", "log10", "log1p", "log2", "sqrt", "rsqrt", "lgamma", "pow", "div", "reciprocal"}
_UNIT = {"acos", "asin"}


def _foreach_args(name, device):
    """Arguments of ``_foreach_`` overload ``name`` on ``device`` (the same values for every device): two tensors
    per list (a (3,) and a (2, 2); matrices for mm), scalars and scalar lists from the schema, the per-tensor
    ``scalars`` of addcmul/addcdiv as a CPU tensor (as torch's optimizers pass them), ``out=`` lists sized like
    the results."""
    packet, _, overload = name.partition(".")
    base = packet[len("_foreach_"):].rstrip("_")
    schema = _overload(name)._schema
    g = _g(sum(map(ord, name)))
    lo, hi = (0.2, 2.0) if base in _POSITIVE else (-0.9, 0.9) if base in _UNIT else (-2.0, 2.0)

    def tensors(i):
        if base == "mm":
            ts = [torch.randn(2, 3, generator=g), torch.randn(3, 2, generator=g)] if i == 0 else \
                [torch.randn(3, 4, generator=g), torch.randn(2, 2, generator=g)]
        else:
            ts = [torch.rand(s, generator=g) * (hi - lo) + lo for s in [(3,), (2, 2)]]
        return [t.to(device) for t in ts]
    args, kwargs = [], {}
    n_lists = 0
    for a in schema.arguments:
        t = str(a.type)
        if a.name == "out":
            continue
        if t == "List[Tensor]":
            v = tensors(n_lists)
            n_lists += 1
        elif t == "Tensor" and a.name == "scalars":
            v = torch.tensor([0.5, 1.5])
        elif t == "Tensor":
            v = torch.tensor(0.75, device=device)
        elif t == "number" and a.has_default_value():
            continue
        elif t == "number":
            v = 0.3 if base == "lerp" else 0.75
        elif t == "List[number]":
            v = [0.3, 0.6] if base == "lerp" else [0.75, 1.5]
        elif a.has_default_value():
            continue
        else:
            raise AssertionError(f"{name}: no sample for argument {a.name}: {t}")
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            args.append(v)
    if overload.endswith("_out"):
        functional = _overload(f"{packet}.{overload[:-len('_out')]}")
        cpu_args, cpu_kwargs = _foreach_args(name.replace("_out", ""), "cpu")
        kwargs["out"] = [torch.empty(r.shape, dtype=r.dtype, device=device)
                         for r in functional(*cpu_args, **cpu_kwargs)]
    return args, kwargs


@pytest.mark.parametrize("name", _FOREACH)
def test_foreach(name):
    case = Case("foreach:" + name)
    op = _overload(name)

    def run(device):
        a, kw = _foreach_args(name, device)
        r = op(*a, **kw)
        # the in-place and out= forms return nothing: their written lists are the result
        return r if r is not None else (kw["out"] if "out" in kw else a[0])
    differential(case, run, what=name)
    assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


# ---- out= and in-place overloads: recorded functional calls replayed ------------------------------------------------

def _ensure_captured(functional):
    """Run the OpInfo and hand-written tests (once each) until a call of ``functional`` is recorded."""
    if CAPTURED.get(functional):
        return
    for op in OPINFOS:
        if "opinfo:" + _opinfo_id(op) not in COVERED:
            try:
                test_opinfo(op)
            except Exception:  # noqa: BLE001 - its own test reports it
                pass
            if CAPTURED.get(functional):
                return
    for name, fn in HAND.items():
        if "hand:" + name not in COVERED:
            try:
                fn(Case("hand:" + name))
            except Exception:  # noqa: BLE001 - its own test reports it
                pass
            if CAPTURED.get(functional):
                return


def _empty0(shape, dtype, device):
    return torch.empty(0, dtype=dtype, device=device)


def _noncontiguous_empty(shape, dtype, device):
    """An uninitialized tensor of ``shape`` that is not contiguous (a transpose; every other element in 1-d)."""
    if len(shape) == 0:
        return torch.empty(shape, dtype=dtype, device=device)
    if len(shape) == 1:
        return torch.empty(2 * shape[0], dtype=dtype, device=device)[::2]
    return torch.empty(tuple(reversed(shape)), dtype=dtype, device=device).permute(
        *reversed(range(len(shape))))


@pytest.mark.parametrize("name", sorted(_OUT_OF))
def test_out_overload(name):
    """The out= overload on a recorded call of its functional: into an empty tensor (resized) and into a
    non-contiguous one of the right shape; the result is ``out`` itself."""
    functional = _OUT_OF[name]
    _ensure_captured(functional)
    assert CAPTURED.get(functional), f"no call of {functional} was recorded: add a sample that reaches it"
    case = Case("out:" + name)
    op, fop = _overload(name), _overload(functional)
    for args, kwargs in CAPTURED[functional]:
        ref = fop(*_thaw(args, "cpu"), **_thaw(kwargs, "cpu"))
        if not isinstance(ref, torch.Tensor):
            continue
        for make in (_empty0, _noncontiguous_empty):
            out = make(ref.shape, ref.dtype, DEV)
            with case.recording():
                r = op(*_thaw(args, DEV), **_thaw(kwargs, DEV), out=out)
            assert r is out, f"{name}: the out= overload did not return out"
            # the reference is the CPU functional's result: torch 2.13's own CPU gelu.out and _log_softmax.out
            # write wrong values into a non-contiguous out
            assert_same(out, ref, f"{name} into {make.__name__}")
        break
    assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@pytest.mark.parametrize("name", sorted(_INPLACE_OF))
def test_inplace_overload(name):
    """The in-place overload on a recorded call of its functional (self replaced by a copy): self written as
    torch's CPU writes it, and returned."""
    functional = _INPLACE_OF[name]
    _ensure_captured(functional)
    assert CAPTURED.get(functional), f"no call of {functional} was recorded: add a sample that reaches it"
    case = Case("inplace:" + name)
    op = _overload(name)
    ran = False
    for args, kwargs in CAPTURED[functional]:
        def run(device):
            a = _thaw(args, device)
            r = op(*a, **_thaw(kwargs, device))
            assert r is a[0], "the in-place overload did not return self"
            return a[0]
        _, ref_exc = _run(lambda: run("cpu"))
        if ref_exc is not None:  # torch refuses this call in place (the result would not fit self)
            continue
        differential(case, run, what=name)
        ran = True
    assert ran, f"every recorded call of {functional} is refused in place by torch's CPU: add a hand sample"
    assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


# ---- hand-written samples ----------------------------------------------------------------------------------------

HAND = {}


def hand(fn):
    HAND[fn.__name__] = fn
    return fn


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def _x(*shape, seed=0, dtype=torch.float32, device="cpu", low=-2.0, high=2.0):
    """The same values on every device: uniform in [low, high) (integers: rounded), made on the CPU."""
    t = torch.rand(shape, generator=_g(seed)) * (high - low) + low
    return (t.round() if not dtype.is_floating_point else t).to(dtype).to(device)


@hand
def factories(case):
    """empty.memory_format (contiguous, channels_last), empty_strided, arange.start_out: dtype, shape, strides and
    device (the values of empty tensors are unspecified)."""
    def empties(d):
        return [torch.empty(2, 3, device=d), torch.empty((2, 3, 4, 5), memory_format=torch.channels_last, device=d),
                torch.empty_strided((2, 3), (1, 2), device=d), torch.empty(0, 4, dtype=torch.int64, device=d),
                torch.empty((), dtype=torch.bool, device=d), torch.zeros(2, 2, device=d).new_empty((3,))]
    dev, ref = differential(case, empties, what="empty", values=False)
    assert [t.stride() for t in dev] == [t.stride() for t in ref], "empty: strides differ from torch's"
    for what, fn in [("arange", lambda d: torch.arange(2, 11, 3, device=d)),
                     ("arange end", lambda d: torch.arange(5, device=d)),
                     ("arange float", lambda d: torch.arange(0.5, 2.0, 0.25, device=d)),
                     ("arange int dtype", lambda d: torch.arange(-3, 3, dtype=torch.int32, device=d)),
                     ("arange out", lambda d: torch.arange(1, 4, out=torch.empty(7, device=d)))]:
        differential(case, fn, what=what)
    for name in ("empty.memory_format", "empty_strided.default", "arange.start_out"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def copies(case):
    """copy_ in every direction (cpu to device, device to cpu, device to device), with dtype conversion,
    broadcasting and non-contiguous source and destination; clone; _to_copy; _local_scalar_dense (item)."""
    def run(d):
        x = _x(3, 4, device=d)
        out = []
        a = torch.zeros(3, 4, device=d)
        a.copy_(_x(3, 4, seed=1))                      # from the cpu
        out.append(a)
        b = torch.zeros(4, 3, device=d).t()            # non-contiguous destination
        b.copy_(x)
        out.append(b)
        c = torch.zeros(3, 4, device=d)
        c.copy_(x.t().contiguous().t())                # device to device, non-contiguous source
        out.append(c)
        e = torch.zeros(3, 4, dtype=torch.int32, device=d)
        e.copy_(x * 3)                                 # float to int: truncation
        out.append(e)
        f = torch.zeros(3, 4, dtype=torch.bool, device=d)
        f.copy_(x.round())
        out.append(f)
        h = torch.zeros(2, 3, 4, device=d)
        h.copy_(x[0])                                  # broadcast
        out.append(h)
        out.append(x.clone())
        out.append(x.to(torch.float64) if _fp64() else x.to(torch.float16).float())
        out.append(x.to(torch.int64))
        out += [x[1, 2].item(), x.sum().item(), (x > 0).sum().item(), (x > 0)[0, 0].item(),
                torch.tensor(7, device=d).item()]
        return out
    differential(case, run, what="copy")

    def to_host(d):
        host = torch.empty(4, 3)
        host.copy_(_x(3, 4, device=d).t())             # device to cpu
        return host
    differential(case, to_host, what="copy to the cpu", expect_device=False)
    for name in ("copy_.default", "_local_scalar_dense.default", "clone.default", "_to_copy.default"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


def _fp64():
    """Whether the device has float64 (cl_khr_fp64)."""
    return tb._bridge.State.backend.dev_for(0).fp64


@hand
def storage(case):
    """resize_ (shrinking in place, growing into a new storage that keeps the old values) and the three set_
    overloads; sizes, strides, offsets and values."""
    def run(d):
        x = _x(2, 3, device=d)
        x.resize_(5)                                   # shrink: same storage
        kept = x.clone()
        y = _x(4, device=d)
        y.resize_(2, 3)                                # grow: the first four values kept
        grown = (y.shape, y.stride(), y.flatten()[:4].clone())
        z = torch.empty(0, device=d)
        z.set_(_x(6, seed=2, device=d))
        src = _x(12, seed=3, device=d)
        w = torch.empty(0, device=d)
        w.set_(src.untyped_storage(), 2, (2, 3), (3, 1))
        v = torch.empty(0, device=d)
        v.set_(src.untyped_storage())
        w.mul_(2)                                      # set_ aliases: src sees the write
        return [kept, grown, z, (w, w.stride(), w.storage_offset()), v, src]
    differential(case, run, what="storage")
    for name in ("resize_.default", "set_.source_Tensor", "set_.source_Storage_storage_offset",
                 "set_.source_Storage"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def views(case):
    """view, as_strided, _reshape_alias, unfold, view_as_real / view_as_complex, squeeze, unsqueeze: values,
    strides, and writes through the view reaching the base (the view shares its base's memory)."""
    def run(d):
        out = []
        x = _x(4, 6, device=d)
        for v in (x.view(6, 4), x.as_strided((3, 3), (2, 5), 1), aten._reshape_alias(x, (2, 12), (12, 1)),
                  x.unfold(1, 3, 2), x.t().unsqueeze(0), x.view(1, 4, 6).squeeze(0)):
            out.append((v.clone(), v.stride(), v.storage_offset()))
        v = x.as_strided((2, 2), (6, 1), 7)
        v.fill_(5.0)                                   # through the view
        out.append(x.clone())
        c = torch.view_as_complex(_x(3, 2, seed=4, device=d))
        r = torch.view_as_real(c)
        r.mul_(2)
        out.append(torch.view_as_real(c).clone())
        return out
    differential(case, run, what="views")
    for name in ("view.default", "as_strided.default", "_reshape_alias.default", "unfold.default",
                 "view_as_real.default", "view_as_complex.default"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def random_numbers(case):
    """normal_, uniform_, bernoulli_ (float p), random_ (from/to, to): after the same seed the device draws
    torch's CPU numbers."""
    def run(d):
        return [torch.empty(50, device=d).normal_(1.5, 0.5), torch.empty(50, device=d).uniform_(-1, 3),
                torch.empty(50, device=d).bernoulli_(0.3), torch.empty(50, dtype=torch.int64, device=d).random_(3, 9),
                torch.empty(50, dtype=torch.int64, device=d).random_(7), torch.randn(4, 5, device=d),
                torch.rand(6, device=d), torch.randint(-4, 4, (7,), device=d)]
    differential(case, run, what="random")
    for name in ("normal_.default", "uniform_.default", "bernoulli_.float", "random_.from", "random_.to"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def fills_and_scalars(case):
    """fill_ (a number, a device tensor, a CPU 0-dim tensor), zero_, div_ by a number, clamp_max/clamp_min with
    numbers and tensors, comparisons and pow with a number, lerp with a tensor weight."""
    def run(d):
        x = _x(3, 4, device=d)
        out = [torch.empty(3, device=d).fill_(2.5), torch.empty(3, device=d).fill_(torch.tensor(1.5, device=d)),
               torch.empty(2, 2, dtype=torch.int64, device=d).fill_(torch.tensor(4)),
               x.clone().zero_(), aten.div_.Scalar(x.clone(), 4.0), aten.mul_.Scalar(x.clone(), -2),
               x.clone().div_(torch.tensor(2.0, device=d)), x.clone().mul_(3.0),
               torch.clamp_max(x, 0.5), torch.clamp_min(x, -0.5), torch.clamp(x, max=_x(3, 4, seed=5, device=d)),
               torch.clamp(x, min=_x(4, seed=6, device=d)), torch.clamp_max(x, _x(4, seed=7, device=d)),
               torch.clamp_min(x, _x(3, 1, seed=8, device=d)), x.clone().clamp_min_(0.1), x.clone().clamp_(-1, 1),
               torch.gt(x, 0.5), torch.ge(x, 0.5), torch.lt(x, 0.5), torch.le(x, 0.5), torch.eq(x.round(), 1),
               torch.ne(x.round(), 1), x.int() > 0, torch.pow(2.0, x), torch.pow(x.abs(), 1.5),
               torch.pow(3, x.int().abs()),
               torch.lerp(x, _x(3, 4, seed=9, device=d), _x(3, 4, seed=10, device=d, low=0, high=1)),
               torch.lerp(x, _x(3, 4, seed=9, device=d), 0.25)]
        return out
    differential(case, run, what="scalars")
    for name in ("fill_.Scalar", "fill_.Tensor", "zero_.default", "div_.Scalar", "div_.Tensor", "clamp_max.default",
                 "clamp_max.Tensor", "clamp_min.Tensor", "gt.Scalar", "pow.Scalar", "lerp.Tensor"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def indexing(case):
    """index_put_ (assignment by index tensors and by a mask, accumulate on repeated indices), _index_put_impl_,
    sort with stable=True (values and indices of ties)."""
    def run(d):
        x = _x(5, 4, device=d)
        idx = torch.tensor([0, 3, 3, 1], device=d)
        v = _x(4, 4, seed=11, device=d)
        a = x.clone()
        a[idx[:2]] = v[:2]
        b = x.clone().index_put_((idx,), v, accumulate=True)
        c = x.clone()
        c[x > 0] = 0.0
        e = aten._index_put_impl_(x.clone(), [idx, None], v, True, False)
        f = aten._index_put_impl_(x.clone(), [None, torch.tensor([1, 2], device=d)], _x(5, 2, seed=12, device=d),
                                  False, False)
        ints = _x(4, 9, seed=13, dtype=torch.int64, device=d, low=-3, high=3)   # many ties
        return [a, b, c, e, f, torch.sort(ints, stable=True), torch.sort(ints, dim=0, descending=True, stable=True),
                torch.sort(x, stable=True, dim=1), torch.argsort(ints, stable=True)]
    differential(case, run, what="indexing")
    for name in ("index_put_.default", "_index_put_impl_.default", "sort.stable"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


def _nn_grads(fn, *shapes, seed=0):
    """``fn(device, *leaves)`` and the gradients of its output for a fixed cotangent, on ``device``."""
    def run(d):
        leaves = [_x(*s, seed=seed + i, device=d).requires_grad_() for i, s in enumerate(shapes)]
        out = fn(d, *leaves)
        cot = torch.randn(out.shape, generator=_g(99)).to(d)
        grads = torch.autograd.grad(out, leaves, cot, allow_unused=True)
        return [out.detach(), *grads]
    return run


@hand
def nn_ops(case):
    """upsample_nearest2d (size and scale; backward), the _native_batch_norm_legit overloads (training without
    running stats, eval), and native_batch_norm's running-statistics update, against torch's CPU."""
    differential(case, _nn_grads(lambda d, x: F.interpolate(x, scale_factor=2, mode="nearest"), (2, 3, 4, 5)),
                 what="upsample scale")
    differential(case, _nn_grads(lambda d, x: F.interpolate(x, size=(7, 3), mode="nearest"), (1, 2, 4, 5)),
                 what="upsample size")

    def legit(d):
        x, w, b = _x(4, 3, 5, device=d), _x(3, seed=1, device=d), _x(3, seed=2, device=d)
        rm, rv = _x(3, seed=3, device=d), _x(3, seed=4, device=d, low=0.5, high=2)
        return [aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5),
                aten._native_batch_norm_legit_no_training(x, w, b, rm, rv, 0.1, 1e-5),
                aten._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1, 1e-5), rm, rv]
    differential(case, legit, what="batch norm legit")

    def running(d):
        bn = torch.nn.BatchNorm2d(3).to(d)
        x = _x(4, 3, 2, 2, device=d)
        y = bn(x)
        bn.eval()
        return [y, bn.running_mean, bn.running_var, bn(x), bn.num_batches_tracked]
    differential(case, running, what="batch norm running stats")
    for name in ("upsample_nearest2d.default", "upsample_nearest2d_backward.default",
                 "_native_batch_norm_legit.no_stats", "_native_batch_norm_legit_no_training.default",
                 "_native_batch_norm_legit.default"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


def _adam_state(d, n_steps):
    params = [_x(3, 2, seed=20, device=d), _x(4, seed=21, device=d)]
    return dict(self=params, grads=[_x(*p.shape, seed=30 + i, device=d) for i, p in enumerate(params)],
                exp_avgs=[_x(*p.shape, seed=40 + i, device=d, low=-0.1, high=0.1) for i, p in enumerate(params)],
                exp_avg_sqs=[_x(*p.shape, seed=50 + i, device=d, low=0, high=0.1) for i, p in enumerate(params)],
                max_exp_avg_sqs=[_x(*p.shape, seed=60 + i, device=d, low=0, high=0.2) for i, p in enumerate(params)],
                state_steps=[torch.tensor(float(n_steps), device=d) for _ in params])


@hand
def fused_adam(case):
    """_fused_adam_ / _fused_adamw_ with and without amsgrad and maximize, with a grad_scale, with found_inf set
    (the step is skipped); then torch.optim.Adam/AdamW(fused=True) for three steps."""
    for op in (aten._fused_adam_, aten._fused_adamw_):
        for amsgrad, maximize, scale, inf in [(False, False, None, None), (True, False, None, None),
                                              (False, True, 2.0, 0.0), (True, False, 4.0, 1.0)]:
            def run(d):
                st = _adam_state(d, 3)
                kw = {}
                if scale is not None:
                    kw = dict(grad_scale=torch.tensor(scale, device=d), found_inf=torch.tensor(inf, device=d))
                op(st["self"], st["grads"], st["exp_avgs"], st["exp_avg_sqs"],
                   st["max_exp_avg_sqs"] if amsgrad else [],  # torch requires it empty without amsgrad
                   st["state_steps"], lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8,
                   amsgrad=amsgrad, maximize=maximize, **kw)
                return st
            differential(case, lambda d: list(run(d).values()),
                         what=f"{op} amsgrad={amsgrad} maximize={maximize} grad_scale={scale} found_inf={inf}")

    for opt_cls in (torch.optim.Adam, torch.optim.AdamW):
        def train(d):
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 3).to(d)
            opt = opt_cls(model.parameters(), lr=0.01, fused=True, amsgrad=True)
            for i in range(3):
                loss = model(_x(5, 4, seed=70 + i, device=d)).pow(2).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            return [model.weight.detach(), model.bias.detach()]
        differential(case, train, what=f"{opt_cls.__name__}(fused=True)")
    for name in ("_fused_adam_.default", "_fused_adamw_.default"):
        assert name in COVERED[case.tid], f"{name} was not dispatched to the device kernel"


@hand
def fused_sgd(case):
    """torch.optim.SGD(fused=True) (the _fused_sgd_ op) with momentum, nesterov, weight decay, dampening and
    without momentum, three steps, against torch's CPU fused SGD."""
    for momentum, nesterov, weight_decay, dampening in ((0.9, False, 0.0, 0.0), (0.9, True, 0.01, 0.0),
                                                        (0.0, False, 0.01, 0.0), (0.9, False, 0.0, 0.1)):
        def train(d):
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 3).to(d)
            opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=momentum, nesterov=nesterov,
                                  weight_decay=weight_decay, dampening=dampening, fused=True)
            for i in range(3):
                loss = model(_x(5, 4, seed=80 + i, device=d)).pow(2).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            return [model.weight.detach(), model.bias.detach()]
        differential(case, train, what=f"SGD(fused=True, momentum={momentum}, nesterov={nesterov}, "
                                       f"weight_decay={weight_decay}, dampening={dampening})")
    assert "_fused_sgd_.default" in COVERED[case.tid], "_fused_sgd_ was not dispatched to the device kernel"


@hand
def attention_choice(case):
    """_fused_sdp_choice on the device names torch's math backend, which PyTorch then decomposes; and
    scaled_dot_product_attention (causal, masked) with gradients against torch's CPU."""
    from torch.nn.attention import SDPBackend
    q = _x(2, 3, 4, 8, device=DEV)
    with case.recording():
        choice = aten._fused_sdp_choice(q, q, q)
    assert choice == SDPBackend.MATH.value, f"_fused_sdp_choice: {choice}, not SDPBackend.MATH"

    def sdpa(d, q, k, v):
        mask = _x(4, 4, seed=80, device=d) > -1
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) + \
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    differential(case, _nn_grads(sdpa, (2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8)), what="sdpa")
    assert "_fused_sdp_choice.default" in COVERED[case.tid]


@hand
def shallow_copy_type(case):
    """_has_compatible_shallow_copy_type against torch's CPU answer for two strided tensors, and what it is for:
    Module.to keeps tied weights tied (one Parameter object moved with ``param.data = ...``)."""
    def run(d):
        a, b = torch.zeros(2, device=d), torch.zeros(3)
        return [torch._has_compatible_shallow_copy_type(a, b), torch._has_compatible_shallow_copy_type(b, a),
                torch._has_compatible_shallow_copy_type(a, a)]
    differential(case, run, what="_has_compatible_shallow_copy_type")

    def tied(d):
        emb = torch.nn.Embedding(5, 3)
        head = torch.nn.Linear(3, 5, bias=False)
        head.weight = emb.weight
        m = torch.nn.ModuleList([emb, head])
        p = emb.weight
        with case.recording() if d == DEV else contextlib.nullcontext():
            m.to(d)
        return [m[0].weight is m[1].weight, m[0].weight is p, m[0].weight.device.type == d]
    assert tied(DEV) == tied("cpu")[:2] + [True]
    assert "_has_compatible_shallow_copy_type.default" in COVERED[case.tid]


@pytest.mark.parametrize("name", list(HAND))
def test_hand(name):
    HAND[name](Case("hand:" + name))


# ---- coverage ------------------------------------------------------------------------------------------------------

def test_every_registered_overload_is_exercised():
    """The union of every test's device records covers every registered overload (tests deselected in this run
    are run here, once, for their records), and no fallback happened inside a registered kernel."""
    for op in OPINFOS:
        if "opinfo:" + _opinfo_id(op) not in COVERED:
            try:
                test_opinfo(op)
            except Exception:  # noqa: BLE001 - its own test reports it
                pass
    for tests, prefix in ((HAND, "hand:"), (_FOREACH, "foreach:"), (_OUT_OF, "out:"), (_INPLACE_OF, "inplace:")):
        for name in tests:
            if prefix + name not in COVERED:
                try:
                    {"hand:": test_hand, "foreach:": test_foreach, "out:": test_out_overload,
                     "inplace:": test_inplace_overload}[prefix](name)
                except Exception:  # noqa: BLE001 - its own test reports it
                    pass
    covered = set().union(*COVERED.values())
    missing = sorted(REGISTERED - covered)
    assert not missing, f"{len(missing)} of {len(REGISTERED)} registered overloads were never dispatched to their " \
        f"device kernel by any sample: {missing}"
    assert not LEAKS, f"registered kernels fell back to the CPU inside: {LEAKS}"
    fallen = {k.split("::", 1)[1] for k in tb.FALLBACKS}
    fallen = {k if "." in k else k + ".default" for k in fallen}
    assert not fallen & REGISTERED, f"registered overloads in FALLBACKS: {sorted(fallen & REGISTERED)}"
