"""A differential fuzzer generated from every public signature tinytorch shares with PyTorch.

Nobody writes its calls. It enumerates the callables both libraries have: the functions of ``torch``, the
methods of ``torch.Tensor``, ``torch.nn.functional``, the modules of ``torch.nn`` (constructor and forward) and the
optimizers of ``torch.optim``. For each it reads the signature: torch's operator schema
(``torch._C._jit_get_schemas_for_operator``, the text of ``native_functions.yaml``, parsed by ``torchgen``) where
there is one, otherwise the Python signature and its annotations. Typed argument generators build candidate calls
(tensors of a few shape families and dtypes, ints, floats, scalars and lists chosen by type and by the argument's
conventional name), and the first candidate that PyTorch accepts becomes the target's **base call**. Each base is
then mutated through a catalogue of bad values: the hand corpus's mutations (``differential.mutations``: every
dtype, empty and 0-d tensors, wrong ranks, NaN/inf, wrong Python types, misspelt keywords) and this file's
(integers at and past 2**63 in every int slot and list, ``None`` in every slot and keyword, non-contiguous views,
more dtypes, ``out=`` aliasing an input or of the wrong dtype, every defaulted argument set to valid and bad
values). Every call runs in both libraries under the watchdog and gets ``differential.classify``'s verdict.

The call list depends only on ``--seed`` and on the two libraries' surfaces; ``--budget N`` takes the first N
calls of a seeded shuffle of all of them.

    python tests/fuzz.py --report                       # the CI sample (SAMPLE calls), counts and failures
    python tests/fuzz.py --report --budget 60000        # the long run, before a release (all calls: --budget 0)
    python tests/fuzz.py --report --name addmm          # the calls of targets whose name contains "addmm"
"""
import argparse
import inspect
import os
import random
import sys
import time
import typing
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import (FAIL_CLASSES, HANG_S, D, T, Incomparable, _leaves, _replace, _run,  # noqa: E402
                          classify, mutations)

import tinytorch  # noqa: E402

try:
    import torch
    from torchgen.model import FunctionSchema, ListType, OptionalType
except ImportError:  # pragma: no cover - the differential suite needs PyTorch
    torch = None

SEED = 20261128
GATE = ("SILENT", "WRONG", "HANG", "CRASH", "HARNESS")  # verdicts that fail CI; TYPE/LEAK/REFUSED are counted
SAMPLE = 6000          # calls of the CI run
PER_BASE = 24          # mutations drawn per base call (all of them with --budget 0)

# ---- what is not fuzzed, and why -----------------------------------------------------------------------------
# Global state (a call would change every later call), I/O, threads and compilation, or results that are not
# values (addresses, identities). Everything else the two libraries share is fuzzed.
NOT_FUZZED = {
    "set_default_dtype", "set_default_device", "set_default_tensor_type", "set_num_threads",
    "set_num_interop_threads", "set_printoptions", "set_rng_state", "manual_seed", "seed", "initial_seed",
    "use_deterministic_algorithms", "set_deterministic_debug_mode", "set_float32_matmul_precision",
    "set_anomaly_enabled", "set_autocast_enabled", "set_autocast_cpu_enabled", "set_autocast_dtype",
    "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "set_autocast_cache_enabled", "autocast_increment_nesting",
    "autocast_decrement_nesting", "clear_autocast_cache", "set_grad_enabled", "set_flush_denormal",
    "set_warn_always", "compile", "vmap", "load", "save", "from_file", "frombuffer", "asarray", "from_numpy",
    "get_rng_state", "cond", "export", "jit", "profiler", "typename", "get_device_module",
    "data_ptr", "untyped_storage", "storage", "_storage", "storage_type", "share_memory_", "is_shared",
    "pin_memory", "is_pinned", "numpy", "tolist", "__hash__", "register_hook", "register_post_accumulate_grad_hook",
    "backward", "retain_grad", "cuda", "cpu", "to", "type", "new", "apply_", "map_", "map2_", "record_stream",
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_", "resize_as_", "set_",
    "dim_order", "module_load", "to_dense", "to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
    "to_sparse_bsc", "to_mkldnn", "is_nonzero", "item", "nonzero_static", "__reduce_ex__", "__deepcopy__",
    "__setstate__", "__getstate__",
}
# results drawn from the random stream where torch's stream is not the spec of the values (shape and dtype only)
SHAPE_ONLY = set()


# ---- signatures ----------------------------------------------------------------------------------------------
class Param:
    """One argument: ``name``, ``type`` in native_functions' spelling (``Tensor``, ``int[]?``, ``Scalar``, ...),
    whether it has a default, and whether it is keyword-only."""

    __slots__ = ("name", "type", "has_default", "kw_only")

    def __init__(self, name, type_, has_default, kw_only):
        self.name, self.type, self.has_default, self.kw_only = name, type_, has_default, kw_only

    def __repr__(self):
        return f"{self.name}:{self.type}{'=' if self.has_default else ''}"


def _torchgen_type(t):
    if isinstance(t, OptionalType):
        return _torchgen_type(t.elem) + "?"
    if isinstance(t, ListType):
        return _torchgen_type(t.elem) + "[]"
    return {"SymInt": "int", "SymFloat": "float"}.get(str(t), str(t))


_UNSUPPORTED = ("Dimname", "Storage", "Stream", "Any", "t", "Layout", "Device", "MemoryFormat", "Generator",
                "QScheme", "str[]", "Dimname[]", "float[]?", "bool[]")


def schema_params(name, method=False):
    """The parameter lists of the overloads of ``aten::<name>`` that a Python caller can reach (no out=, no
    Dimname, no list-of-numbers overloads); for a method the ``self`` receiver comes first."""
    out = []
    for s in torch._C._jit_get_schemas_for_operator("aten::" + name):
        text = str(s).split("::", 1)[1]
        try:
            fs = FunctionSchema.parse(text)
        except Exception:  # noqa: BLE001 - an overload torchgen cannot read is not fuzzed
            continue
        if fs.is_out_fn() or fs.name.name.inplace and not name.endswith("_"):
            continue
        params = []
        for a in fs.arguments.flat_all:
            ty = _torchgen_type(a.type)
            required = a.default is None and not ty.endswith("?")
            if any(u == ty.rstrip("?") for u in _UNSUPPORTED) and required:
                params = None
                break
            if any(u == ty.rstrip("?") for u in _UNSUPPORTED):
                continue
            params.append(Param(a.name, ty, a.default is not None or ty.endswith("?"),
                                a in fs.arguments.flat_kwarg_only))
        if params is None or not params or (method and (params[0].name != "self" or params[0].type != "Tensor")):
            continue
        if not method and params[0].type in ("int[]", "float[]", "bool[]", "complex[]") and params[0].name == "self":
            continue
        out.append(params)
    return out


def _annotation_type(ann, name):
    """A Python annotation in native_functions' spelling (None when it is not one the generators know)."""
    if ann is inspect.Parameter.empty:
        return {"input": "Tensor", "tensor": "Tensor", "other": "Tensor", "self": "Tensor", "dim": "int?",
                "tensors": "Tensor[]"}.get(name)
    if isinstance(ann, str):
        ann = {"Tensor": torch.Tensor, "int": int, "float": float, "bool": bool, "str": str}.get(ann, ann)
    origin = typing.get_origin(ann)
    targs = [a for a in typing.get_args(ann) if a is not type(None)]
    if origin is typing.Union:
        inner = _annotation_type(targs[0], name) if targs else None
        if inner and type(None) in typing.get_args(ann):
            return inner if inner.endswith("?") else inner + "?"
        return inner
    if origin in (list, tuple, typing.List, typing.Tuple) or ann in (list, tuple):
        elem = _annotation_type(targs[0], name) if targs else "int"
        return (elem or "int").rstrip("?") + "[]"
    if ann is torch.Tensor or getattr(ann, "__name__", "") == "Tensor":
        return "Tensor"
    if ann in (int, float, bool, str):
        return ann.__name__
    if getattr(ann, "__name__", "") in ("Number", "_Number"):
        return "Scalar"
    if ann is torch.dtype:
        return "ScalarType"
    return None


def python_params(fn, method=False):
    """The parameter list of a Python function from its signature and annotations, or None when an argument
    without a default has a type the generators do not know (*args of tensors is read as ``Tensor[]``)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    for i, p in enumerate(sig.parameters.values()):
        if method and i == 0:
            params.append(Param("self", "Tensor", False, False))
            continue
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            if p.name in ("tensors", "operands", "inputs"):
                params.append(Param("*" + p.name, "Tensor[]", False, False))
            continue
        ty = "params" if p.name == "params" else _annotation_type(p.annotation, p.name)
        if ty is None and p.default is not p.empty and p.default is not None:
            ty = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(p.default))
        has_default = p.default is not p.empty
        if ty is None:
            if has_default:
                continue
            return None
        params.append(Param(p.name, ty, has_default, p.kind is p.KEYWORD_ONLY))
    return params


# ---- targets -------------------------------------------------------------------------------------------------
class Target:
    """One public callable: ``area`` (torch, Tensor, F, nn, optim), ``name``, ``fn(m, *args, **kw)`` calling it
    in module ``m``, and the candidate parameter lists. ``values`` False compares shapes and dtypes only."""

    __slots__ = ("name", "area", "fn", "sigs", "values", "args", "kw")

    def __init__(self, area, name, fn, sigs, values=True):
        self.area, self.name, self.fn, self.sigs, self.values = area, name, fn, sigs, values
        self.args, self.kw = (), {}


def _is_function(obj):
    return callable(obj) and not isinstance(obj, type) and not inspect.ismodule(obj)


_DUNDER_OPS = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "sub", "__mul__": "mul",
               "__rmul__": "mul", "__truediv__": "div", "__rtruediv__": "div", "__floordiv__": "floor_divide",
               "__rfloordiv__": "floor_divide", "__mod__": "remainder", "__rmod__": "remainder",
               "__pow__": "pow", "__rpow__": "pow", "__matmul__": "matmul", "__rmatmul__": "matmul",
               "__and__": "__and__", "__or__": "__or__", "__xor__": "__xor__", "__lshift__": "__lshift__",
               "__rshift__": "__rshift__", "__neg__": "neg", "__invert__": "bitwise_not", "__abs__": "abs",
               "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq", "__ne__": "ne",
               "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
               "__ipow__": "pow_", "__iand__": "__iand__", "__ior__": "__ior__", "__ixor__": "__ixor__",
               "__ilshift__": "__ilshift__", "__irshift__": "__irshift__", "__ifloordiv__": "floor_divide_",
               "__imod__": "remainder_"}


def _function_target(area, name, torch_fn, call):
    sigs = []
    py = python_params(torch_fn) if not inspect.isbuiltin(torch_fn) else None
    if py and not any(p.name.startswith("*") and p.name != "*tensors" for p in py):
        sigs.append(py)
    sigs.extend(schema_params(name))
    return Target(area, name, call, sigs) if sigs else None


def targets():
    """Every public callable the two libraries share, sorted by (area, name)."""
    out = []
    F, tF = torch.nn.functional, tinytorch.nn.functional
    for name in sorted(dir(torch)):
        obj = getattr(torch, name, None)
        if name.startswith("_") or name in NOT_FUZZED or not _is_function(obj) or not hasattr(tinytorch, name):
            continue
        t = _function_target("torch", name, obj, lambda m, *a, _n=name, **k: getattr(m, _n)(*a, **k))
        if t:
            out.append(t)
    for name in sorted(dir(torch.Tensor)):
        if name in NOT_FUZZED or (name.startswith("_") and name not in _DUNDER_OPS) or \
                not hasattr(tinytorch.Tensor, name) or not callable(getattr(torch.Tensor, name, None)):
            continue
        obj = getattr(torch.Tensor, name)
        sigs = []
        py = python_params(obj, method=True) if inspect.isfunction(obj) else None
        if py:
            sigs.append(py)
        sigs.extend(schema_params(_DUNDER_OPS.get(name, name), method=True))
        if sigs:
            out.append(Target("Tensor", name, lambda m, x, *a, _n=name, **k: getattr(x, _n)(*a, **k), sigs))
    for name in sorted(dir(F)):
        obj = getattr(F, name, None)
        if name.startswith("_") or name in NOT_FUZZED or not _is_function(obj) or not hasattr(tF, name):
            continue
        t = _function_target("F", name, obj, lambda m, *a, _n=name, **k: getattr(m.nn.functional, _n)(*a, **k))
        if t:
            out.append(t)
    for name in sorted(dir(torch.nn)):
        cls = getattr(torch.nn, name)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)) or not hasattr(tinytorch.nn, name) or \
                name in ("Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
                         "Container", "Identity"):
            continue
        init = python_params(cls.__init__, method=True)
        fwd = python_params(cls.forward, method=True)
        if init is None or fwd is None:
            continue
        out.append(Target("nn", name, _module_call(name), [("nn", init[1:], fwd[1:])]))
    for name in sorted(dir(torch.optim)):
        cls = getattr(torch.optim, name)
        if not (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)) or cls is torch.optim.Optimizer \
                or not hasattr(tinytorch.optim, name):
            continue
        init = python_params(cls.__init__, method=True)
        if init:
            out.append(Target("optim", name, _optim_call(name), [("optim", init[2:], None)]))
    return out


def _refill(m, module):
    """The same parameters and buffers in both libraries: each filled from NumPy draws seeded by its name
    (the libraries' initializers draw from their random streams in their own order)."""
    with m.no_grad():
        for n, p in list(module.named_parameters()) + list(module.named_buffers()):
            if p.dtype.is_floating_point:
                rng = np.random.default_rng(sum(map(ord, n)))
                a = rng.uniform(0.1, 1.0, tuple(p.shape)) if "var" in n else rng.standard_normal(tuple(p.shape))
                p.copy_(m.from_numpy(a.astype(np.float64)).to(p.dtype))


def _module_call(name):
    def call(m, ctor, *inputs, **kw):
        module = getattr(m.nn, name)(*ctor, **kw)
        _refill(m, module)
        return module(*inputs)
    return call


def _optim_call(name):
    def call(m, *args, **kw):
        rng = np.random.default_rng(7)
        p = m.nn.Parameter(m.from_numpy(rng.standard_normal((3, 4)).astype(np.float32)))
        opt = getattr(m.optim, name)([p], *args, **kw)
        for step in range(2):
            opt.zero_grad()
            p.grad = m.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
            if name == "LBFGS":
                opt.step(lambda: (p * p).sum())
            else:
                opt.step()
        return p.detach()
    return call


# ---- valid arguments by type and name ------------------------------------------------------------------------
FAMILIES = [((4, 4), "float32"), ((2, 4, 4), "float32"), ((5,), "float32"), ((2, 3, 4, 4), "float32"),
            ((3, 4), "float32"), ((), "float32"), ((2, 3, 5), "float32"), ((4, 4), "int64"), ((5,), "bool")]
_INT_BY_NAME = {"dim": -1, "dim0": 0, "dim1": -1, "dim2": -2, "start_dim": 0, "end_dim": -1, "axis": -1, "source": 0,
                "destination": -1, "k": 1, "n": 2, "diagonal": 0, "offset": 0, "groups": 1, "num_classes": 5,
                "split_size": 2, "split_size_or_sections": 2, "sections": 2, "chunks": 2, "repeats": 2, "steps": 5,
                "num_samples": 2, "high": 5, "low": 0, "upscale_factor": 2, "downscale_factor": 2, "batch_size": 2,
                "kernel_size": 2, "stride": 1, "padding": 0, "dilation": 1, "output_padding": 0, "size": 3,
                "in_features": 4, "out_features": 3, "in_channels": 3, "out_channels": 2, "num_features": 3,
                "embedding_dim": 4, "num_embeddings": 5, "hidden_size": 4, "input_size": 4, "normalized_shape": 4,
                "num_groups": 1, "num_channels": 3, "d_model": 4, "nhead": 2, "embed_dim": 4, "num_heads": 2,
                "output_size": 2, "window_length": 4, "n_fft": 4, "bins": 5, "decimals": 1, "shifts": 1,
                "padding_idx": 0, "max_norm": 1, "lambd": 0.5, "num_layers": 1, "dimension": 0, "step": 1,
                "end": 5, "start": 0, "diagonals": 0, "m": 3, "row": 3, "col": 3, "N": 4, "r": 2}
_INTS_BY_NAME = {"size": (2, 3), "sizes": (2, 3), "shape": (2, 3), "dims": (0,), "dim": (-1,), "perm": (1, 0),
                 "kernel_size": (2, 2), "stride": (1, 1), "padding": (0, 0), "dilation": (1, 1), "pad": (1, 1),
                 "output_size": (2, 2), "normalized_shape": (4,), "repeats": (2,), "shifts": (1,), "stride_": (1,),
                 "split_size_or_sections": (2, 2), "split_sizes": (2, 2), "indices": (1, 2), "tensor_indices_or_sections": (2,)}
_FLOAT_BY_NAME = {"p": 0.5, "eps": 1e-5, "momentum": 0.1, "lr": 0.01, "alpha": 1.0, "beta": 1.0, "min": -0.5,
                  "max": 0.5, "min_val": -0.5, "max_val": 0.5, "negative_slope": 0.1, "threshold": 0.1,
                  "value": 0.5, "lambd": 0.5, "margin": 1.0, "weight_decay": 0.01, "rtol": 1e-5, "atol": 1e-8,
                  "end": 1.0, "start": 0.0, "scale": 1.0, "temperature": 1.0, "tau": 1.0, "base": 10.0}
_STR_BY_NAME = {"reduction": "mean", "reduce": "sum", "rounding_mode": "floor", "mode": "constant", "side": "left",
                "padding_mode": "zeros", "approximate": "none", "equation": "ij->ji", "nonlinearity": "tanh",
                "indexing": "ij", "interpolation": "linear", "norm": "backward", "UPLO": "L", "driver": "gelsy",
                "ord": "fro", "compute_mode": "use_mm_for_euclid_dist_if_necessary", "activation": "relu"}


def valid_value(p, shape, dtype):
    """A valid value for parameter ``p`` of a call whose tensors have ``shape`` and ``dtype`` (a best guess;
    torch decides which candidate is valid)."""
    ty, name = p.type.rstrip("?"), p.name.lstrip("*")
    if ty == "Tensor":
        if name in ("index", "indices", "idx", "target_index"):
            return T(shape, "int64", "i2")
        if name in ("mask", "condition"):
            return T(shape, "bool", "b")
        kind = {"int64": "i9", "bool": "b"}.get(dtype, "p" if name in ("p", "probs", "lambd", "rate") else "n")
        return T(shape, dtype, kind)
    if ty in ("Tensor[]", "Tensor?[]"):
        return [T(shape, dtype, "i9" if dtype == "int64" else "n"), T(shape, dtype, "i9" if dtype == "int64" else "n")]
    if ty == "int":
        return _INT_BY_NAME.get(name, 2)
    if ty == "int[]":
        v = _INTS_BY_NAME.get(name)
        if v is None:
            return (_INT_BY_NAME.get(name, 2),)
        return v
    if ty == "float":
        return _FLOAT_BY_NAME.get(name, 0.5)
    if ty == "Scalar":
        return _FLOAT_BY_NAME.get(name, 2)
    if ty == "bool":
        return False
    if ty == "str":
        return _STR_BY_NAME.get(name, "mean")
    if ty == "ScalarType":
        return D("float32")
    if ty == "complex":
        return 1 + 1j
    return None


# Writes whose result is undefined when an index repeats (PyTorch's docs: put_ "If accumulate is False, the behavior
# is undefined if index contain duplicate elements"; torch's CPU kernel then keeps whichever write its iteration
# order does last, which changes with the source's layout): their index is drawn without repeats.
UNIQUE_INDEX = {"put", "put_"}


def _target_candidates(target):
    """Candidate (args, kw) of the target's base call, in order of preference."""
    out = []
    for sig in target.sigs:
        for shape, dtype in FAMILIES:
            if isinstance(sig, tuple):  # a module or an optimizer: (kind, constructor params, forward params)
                kind, init, fwd = sig
                ctor = tuple(valid_value(p, shape, dtype) for p in init if not p.has_default and not p.kw_only)
                kw = {p.name: valid_value(p, shape, dtype) for p in init if not p.has_default and p.kw_only}
                if kind == "optim":
                    out.append((ctor, kw))
                    break
                inputs = tuple(valid_value(p, shape, dtype) for p in fwd if not p.has_default)
                out.append(((ctor,) + inputs, kw))
                continue
            args, kw = [], {}
            for p in sig:
                if p.has_default:
                    continue
                v = valid_value(p, shape, dtype)
                if target.name in UNIQUE_INDEX and p.name == "index":
                    v = v.but(kind="perm")
                if p.name.startswith("*"):
                    args.extend(v)
                elif p.kw_only:
                    kw[p.name] = v
                else:
                    args.append(v)
            out.append((tuple(args), kw))
    return out


def _torch_ok(target, args, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = _run(torch, target, args, kw, SEED, watchdog=True)
    return r[0] == "ret"


def find_base(target):
    """The target's base call: the first candidate torch accepts (else the first candidate, so both libraries
    must at least agree that it raises)."""
    cands = _target_candidates(target)
    if not cands:
        return None
    for args, kw in cands:
        if _torch_ok(target, args, kw):
            return args, kw, True
    return cands[0][0], cands[0][1], False


# ---- mutations beyond the hand corpus's ---------------------------------------------------------------------
PAST_INT64 = (2 ** 63, 2 ** 64, -(2 ** 63) - 1, 2 ** 63 - 1)
MORE_DTYPES = ("int32", "int8", "int16", "complex128", "float32")


class OutAlias:
    """``out=`` given the call's first tensor argument (an input aliasing the output)."""

    def __repr__(self):
        return "<input 0>"


def _with_out(call):
    def run(m, *a, **k):
        if isinstance(k.get("out"), OutAlias):
            alias = next(x for x in a if isinstance(x, m.Tensor))
            if m is torch:
                return _torch_aliased(call, alias, a, k)
            k["out"] = alias
        return call(m, *a, **k)
    return run


def _torch_aliased(call, alias, a, k):
    """torch's result of ``call`` with ``out=`` the input ``alias``, or ``Incomparable`` when it is not torch's
    result of the same call without aliasing: torch resizes ``out`` (a reduction) or zeroes it (``mm``) before
    its kernel reads the input, so the value depends on that order, which PyTorch leaves undefined."""
    plain = dict(k, out=None)
    try:
        want = call(torch, *[x.clone() if isinstance(x, torch.Tensor) else x for x in a], **plain)
    except Exception:  # noqa: BLE001 - the plain call raising says nothing about aliasing
        want = None
    shape = alias.shape
    try:
        got = call(torch, *a, **dict(k, out=alias))
    except Exception:
        if alias.shape != shape:  # torch resized its input before failing on it (``dot`` into its operand)
            raise Incomparable("torch resized the input its out= aliases, then refused that input") from None
        raise
    if isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor) and (
            want.shape != got.shape or not np.allclose(want.detach().to(torch.complex128).numpy(),
                                                       got.detach().to(torch.complex128).numpy(),
                                                       rtol=1e-5, atol=1e-6, equal_nan=True)):
        raise Incomparable("torch's result into an out= aliasing its input differs from its result without "
                           "aliasing (it resizes or zeroes out before reading the input)")
    return got


def extra_mutations(target, args, kw):
    """This fuzzer's catalogue beyond ``differential.mutations``, as (description, args, kw)."""
    out = []

    def add(desc, path, new):
        out.append((desc,) + _replace(args, kw, path, new))
    for path, v in _leaves(args, kw):
        where = ".".join(str(p) for p in path[1:])
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int):
            for bad in PAST_INT64:
                add(f"{where}:={bad}", path, bad)
        elif isinstance(v, (tuple, list)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            for bad in (2 ** 63, -(2 ** 63) - 1, 2 ** 62):
                add(f"{where}:[0]={bad}", path, type(v)([bad] + list(v)[1:]))
            add(f"{where}:[0]=None", path, type(v)([None] + list(v)[1:]))
        elif isinstance(v, T):
            if len(v.shape) >= 2:
                add(f"{where}:transposed", path, v.but(view="t"))
            if v.shape:
                add(f"{where}:strided", path, v.but(view="step"))
            for d in MORE_DTYPES:
                if d != v.dtype:
                    add(f"{where}:dtype={d}", path, v.but(dtype=d))
            add(f"{where}:huge", path, v.but(special="huge"))
            add(f"{where}:-inf", path, v.but(special="-inf"))
        if len(path) == 2:
            add(f"{where}:=None", path, None)
    has_out = target.area == "torch" and any(
        "out" in str(s) for s in torch._C._jit_get_schemas_for_operator("aten::" + target.name))
    if has_out and any(isinstance(a, T) for a in args):
        first = next(a for a in args if isinstance(a, T))
        out.append(("out=input", args, dict(kw, out=OutAlias())))
        out.append(("out=int64", args, dict(kw, out=first.but(dtype="int64"))))
        out.append(("out=empty", args, dict(kw, out=first.but(shape=(0,)))))
    for sig in target.sigs:
        if isinstance(sig, tuple):
            sig = sig[1]
        for p in sig:
            if not p.has_default or p.name in kw or p.name.startswith("*"):
                continue
            good = valid_value(p, (4, 4), "float32")
            if good is not None and not isinstance(good, (T, list)):
                out.append((f"{p.name}={good!r}", args, dict(kw, **{p.name: good})))
            bads = [None]
            ty = p.type.rstrip("?")
            if ty in ("int", "int[]"):
                bads += [2 ** 63, -(2 ** 63) - 1, 2 ** 40, -7, 1.5, "a"]
            elif ty in ("float", "Scalar"):
                bads += [float("nan"), float("inf"), -1.0, 2 ** 63, "a"]
            elif ty == "bool":
                bads += ["yes", 2]
            elif ty == "str":
                bads += ["bogus", 1]
            elif ty == "ScalarType":
                bads += [D(d) for d in ("int64", "bool", "complex64", "float16")] + ["float32"]
            elif ty == "Tensor":
                bads += [T((3,)), T((4, 4), "int64", "i2"), 1.5]
            for bad in bads:
                out.append((f"{p.name}={bad!r}", args, dict(kw, **{p.name: bad})))
        break
    return out


# ---- the call list -------------------------------------------------------------------------------------------
class Call:
    """A base call of a target, in ``differential.classify``'s terms."""

    __slots__ = ("name", "area", "fn", "args", "kw", "values")

    def __init__(self, target, args, kw):
        self.name, self.area, self.values = target.name, target.area, target.values and target.name not in SHAPE_ONLY
        self.fn, self.args, self.kw = _with_out(target.fn), args, kw


def calls(seed=SEED, per_base=PER_BASE, names=None, areas=None):
    """The deterministic call list: (base, description, args, kw), bases first in target order, then the
    mutations drawn per base."""
    rng = random.Random(seed)
    out = []
    for target in targets():
        if names and not any(n in target.name for n in names):
            continue
        if areas and target.area not in areas:
            continue
        found = find_base(target)
        if found is None:
            continue
        args, kw, valid = found
        base = Call(target, args, kw)
        out.append((base, "base" if valid else "base(torch refuses)", args, kw))
        if not valid:
            continue
        cands = mutations(args, kw) + extra_mutations(target, args, kw)
        rng.shuffle(cands)
        out.extend((base, *c) for c in (cands if per_base is None else cands[:per_base]))
    return out


def sample(budget=SAMPLE, seed=SEED, **kw):
    """``budget`` calls of the full call list (every mutation of every base), chosen by a seeded shuffle; all of
    them when ``budget`` is 0."""
    every = calls(seed, per_base=None, **kw)
    if not budget or budget >= len(every):
        return every
    order = list(range(len(every)))
    random.Random(seed + 1).shuffle(order)
    return [every[i] for i in sorted(order[:budget])]


def _ours_alone(spec, index, conn):
    """Run call ``index`` of ``spec``'s list in tinytorch only and send what it did ("return", "raise" or
    "hang"): after a worker died or hung on that call, this says which library it was."""
    from differential import _run as run_one
    base, desc, args, kw = sample(**spec["sample"])[index]
    r = run_one(tinytorch, base, args, kw, spec["sample"]["seed"] + index, watchdog=True)
    conn.send({"ok": "return", "exc": "raise"}.get(r[0], r[0]))


def _which_library(ctx, spec, index, verdict):
    """``verdict`` (HANG/CRASH of call ``index``) when tinytorch alone also dies or hangs on the call; SKIP when
    tinytorch alone returns or raises, so torch was the one that crashed or hung (``MaxPool1d(2**62)`` loops
    inside torch's kernel; ``ReplicationPad2d(2**63 - 1)`` segfaults it): there is nothing to compare with, as
    for a torch that runs > 5 s in Python (``differential.classify``)."""
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_ours_alone, args=(spec, index, child), daemon=True)
    proc.start()
    child.close()
    got = None
    if parent.poll(600 + 3 * HANG_S):
        try:
            got = parent.recv()
        except EOFError:
            got = None
    proc.kill()
    proc.join(5)
    if got in ("return", "raise"):
        return "SKIP", f"torch itself {'hangs' if verdict[0] == 'HANG' else 'crashes'} (tinytorch alone: {got})"
    return verdict


# Values that are artifacts of how torch's kernels round, not of what the function computes. A WRONG verdict there
# is a SKIP with the reason; whether a call raises, its dtype and shape are still compared. Each entry: target
# names, the mutation (a substring of its description), why no value is the right one.
IMPLEMENTATION_DEFINED = (
    (("layer_norm", "group_norm", "GroupNorm", "LayerNorm", "TransformerEncoderLayer", "TransformerDecoderLayer"),
     ":huge", "a 1e38 element puts the row's variance past float32's range; whether torch's moments (Welford over "
              "SIMD lanes) give NaN depends on the row length and the machine's vector width"),
    (("remainder", "remainder_", "fmod", "fmod_"), ":huge",
     "x / y past float32's range: torch's vectorized float32 loop (8 or more elements) gives NaN there, its scalar "
     "loop and its float64 loop the exact remainder, as tinytorch"),
    (("linear_cross_entropy",), ":huge", "float32 terms near float32's maximum: whether their sum overflows depends "
                                         "on the summation order"),
    (("cholesky_inverse",), ":dtype=complex", "a complex 'factor' whose diagonal is not real (a Cholesky factor's "
                                              "is): LAPACK's potri reads only parts of it"),
    (("logdet",), ":dtype=complex", "a determinant that is real and negative up to rounding: the imaginary part "
                                    "+pi or -pi is the sign of a rounding error"),
)


def implementation_defined(name, desc):
    """The reason a value difference of target ``name`` under mutation ``desc`` is not a verdict, or None."""
    for names, mutation, why in IMPLEMENTATION_DEFINED:
        if name in names and mutation in desc:
            return why
    return None


def _worker(spec, start, conn):
    """Build the call list of ``spec`` and run it from ``start``, sending each verdict down ``conn``."""
    call_list = sample(**spec["sample"])
    conn.send(("len", len(call_list)))
    for i in range(start, len(call_list)):
        base, desc, args, kw = call_list[i]
        if spec["trace"]:
            print(f"{i} {base.area}.{base.name} {desc}", file=sys.stderr, flush=True)
        conn.send(("start", i, base.area, base.name, desc))
        try:
            verdict, detail = classify(base, desc, args, kw, spec["sample"]["seed"] + i)
            if verdict == "WRONG" and implementation_defined(base.name, desc):
                verdict, detail = "SKIP", f"{implementation_defined(base.name, desc)} ({detail})"
        except BaseException as e:  # noqa: BLE001 - the harness itself failed on this call: report, go on
            verdict, detail = "HARNESS", f"{type(e).__name__}: {e}"
        conn.send(("done", i, verdict, str(detail)))
    conn.send(("end",))


class Ref:
    """What the parent knows of a call: area, name and description (the call itself lives in the worker)."""

    __slots__ = ("area", "name")

    def __init__(self, area, name):
        self.area, self.name = area, name


def run(budget=SAMPLE, seed=SEED, names=None, areas=None, trace=False):
    """[(verdict, target, description, detail)] of every call of ``sample(budget, seed, ...)``.

    The calls run in a worker process started fresh (spawn: a forked copy of a process whose thread pools
    already ran can deadlock), which builds the call list itself. SIGALRM (``differential.HANG_S``) interrupts a
    call that loops in Python; a call stuck inside C code (a LAPACK routine that never converges) cannot be
    interrupted, so the parent kills a worker that stays on one call for ``3 * HANG_S`` seconds, records HANG,
    and starts a new worker at the next call. A worker that dies mid-call records CRASH. Either is rerun in
    tinytorch alone (``_which_library``): if tinytorch returns or raises there, torch was the one that hung or
    crashed, and the call is a SKIP."""
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    spec = {"sample": {"budget": budget, "seed": seed, "names": names, "areas": areas}, "trace": trace}
    verdicts, refs = {}, {}
    start, n = 0, None
    while n is None or start < n:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker, args=(spec, start, child), daemon=True)
        proc.start()
        child.close()
        current, started = start, False
        while True:
            # building the call list (finding every target's base call) takes a while; a call, 3 * HANG_S
            if not parent.poll(3 * HANG_S if started else 600):
                proc.kill()
                verdicts[current] = _which_library(
                    ctx, spec, current, ("HANG", f"> {3 * HANG_S:.0f} s inside C code (the worker was killed)"))
                break
            try:
                msg = parent.recv()
            except EOFError:
                proc.join(5)
                verdicts[current] = _which_library(
                    ctx, spec, current, ("CRASH", f"the worker process died (exit code {proc.exitcode})"))
                break
            if msg[0] == "len":
                n = msg[1]
            elif msg[0] == "start":
                current, started = msg[1], True
                refs[current] = (Ref(msg[2], msg[3]), msg[4])
            elif msg[0] == "done":
                verdicts[msg[1]] = (msg[2], msg[3])
            else:
                current = n - 1
                break
        proc.join(5)
        if n is None:
            raise RuntimeError("the fuzz worker failed before building its call list")
        start = current + 1
    out = []
    for i in range(n):
        verdict, detail = verdicts.get(i, ("HANG", "not run"))
        ref, desc = refs.get(i, (Ref("?", "?"), "?"))
        out.append((verdict, ref, desc, detail))
    return out


def table(rows, limit=None):
    lines = [f"{cls:8} {base.area:6} {base.name:28} {desc:26} {' '.join(str(detail).split())[:200]}"
             for cls, base, desc, detail in rows]
    return "\n".join(lines[:limit])


def summary(results):
    """Counts per verdict, and the share of tinytorch's raises that came from outside a deliberate check (LEAK
    among every call where tinytorch raised: both raised, TYPE, LEAK, REFUSED)."""
    counts = {}
    for cls, *_ in results:
        counts[cls] = counts.get(cls, 0) + 1
    raised = sum(1 for cls, _, _, detail in results if cls in ("TYPE", "LEAK", "REFUSED") or
                 cls == "OK" and detail == "both raise")
    return counts, counts.get("LEAK", 0) / max(raised, 1), raised


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", action="store_true", help="print the counts and every failure")
    ap.add_argument("--budget", type=int, default=SAMPLE, help="calls to run (0: every call)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--name", action="append", help="only targets whose name contains this (repeatable)")
    ap.add_argument("--area", action="append", help="only these areas: torch, Tensor, F, nn, optim")
    ap.add_argument("--trace", action="store_true", help="print each call before running it")
    ap.add_argument("--limit", type=int, default=None, help="print at most this many failures")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = run(a.budget, a.seed, names=a.name, areas=a.area, trace=a.trace)
    counts, leak_share, raised = summary(results)
    n_targets = len({(b.area, b.name) for _, b, d, _ in results})
    print(f"{len(results)} calls of {n_targets} targets (seed {a.seed}, budget {a.budget}) in "
          f"{time.perf_counter() - t0:.1f} s")
    for cls in ("OK", "SKIP") + FAIL_CLASSES + ("CRASH", "HARNESS"):
        print(f"  {cls:8} {counts.get(cls, 0)}")
    print(f"  tinytorch raised in {raised} calls; {100 * leak_share:.2f}% of those raises came from outside a "
          "deliberate check (LEAK)")
    fails = [r for r in results if r[0] in FAIL_CLASSES + ("CRASH", "HARNESS")]
    if a.report:
        print(table(sorted(fails, key=lambda r: (r[0], r[1].area, r[1].name)), a.limit))
    return 1 if any(r[0] in GATE for r in fails) else 0


if __name__ == "__main__":
    sys.exit(main())
