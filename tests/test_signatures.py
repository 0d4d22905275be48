"""Public call signatures against PyTorch's.

Every ``torch.nn`` module class (its ``__init__`` and ``forward``), every ``torch.nn.functional`` function,
every ``torch.optim`` optimizer and every ``torch.optim.lr_scheduler`` class that tinytorch also has must take
the same parameter names, in the same order, with the same defaults and the same kinds (positional-only,
keyword-only, ``*args`` / ``**kwargs``): a script that passes an argument by position or by keyword must bind
it to the same parameter in both, and a misspelt keyword must raise TypeError in both.

Where ``inspect.signature`` cannot read torch's signature, the reference is taken by a rule, never by a list
of names (see ``torch_reference``):
  * C builtins (``F.conv2d``, ``F.gelu``, ...) have no Python signature; their Python binding accepts exactly
    the arguments of the ATen schema of the same name (its default overload, or its only overload without an
    ``out`` argument; ``self`` spelt ``input``, ``out`` dropped), so that schema is the reference.
  * A torch ``(*args, **kwargs)`` wrapper that declares ``typing.overload`` signatures (``nn.RNN/LSTM/GRU``)
    is compared with its first explicit overload. Its real ``**kwargs`` catches keywords the overload does not
    declare (``GRU(proj_size=2)`` is a ValueError, not a TypeError), so ours may end with ``**kwargs`` there:
    ``test_misspelt_or_extra_arguments_raise_type_error`` checks those still refuse a misspelt keyword.
  * A torch ``boolean_dispatch`` wrapper (``F.max_pool2d``, ...: ``(*args, **kwargs)``) is compared with the
    function it calls when the flag is False, ``torch.nn.functional._<name>``.
  * torch's deprecated ``nn.init`` aliases (``init.normal``: ``(*args, **kwargs)``) are compared with the
    in-place function they forward to (``init.normal_``).
  * torch classes without their own ``forward`` (``nn.Module``, ``RNNBase``, containers) inherit
    ``Module._forward_unimplemented``: there is no forward signature to compare.
"""
import importlib
import inspect
import pkgutil
import typing

import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
import tinytorch.optim as optim
import tinytorch.optim.lr_scheduler as lr_scheduler
from conftest import torch

tnn, tF, toptim, tlr = torch.nn, torch.nn.functional, torch.optim, torch.optim.lr_scheduler

_EMPTY = inspect.Parameter.empty
_KINDS = {False: inspect.Parameter.POSITIONAL_OR_KEYWORD, True: inspect.Parameter.KEYWORD_ONLY}


def _opaque(sig):
    """A signature that says nothing: only ``*args, **kwargs`` (after ``self``)."""
    kinds = [p.kind for p in sig.parameters.values() if p.name != "self"]
    return kinds == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]


def _schema_params(fn):
    """Parameters ``(name, kind, default)`` of the ATen schema behind the C builtin ``fn``, as its Python
    binding accepts them; None when torch has no such schema."""
    every = torch._C._jit_get_schemas_for_operator("aten::" + fn.__name__)
    schemas = [s for s in every if s.overload_name == ""]
    if not schemas:  # e.g. conv_transpose2d has only the overload ".input" besides none: take the single non-out one
        schemas = [s for s in every if not any(a.name == "out" for a in s.arguments)]
    if len(schemas) != 1:
        return None
    out = []
    for a in schemas[0].arguments:
        if a.name == "out":
            continue
        name = "input" if a.name == "self" else a.name
        default = a.default_value if a.has_default_value() else _EMPTY
        out.append((name, _KINDS[a.kwarg_only], default))
    return out


def torch_reference(obj, name=None):
    """``(params, from_schema)`` for the torch callable ``obj``: params is a list of (name, kind, default)."""
    try:
        sig = inspect.signature(obj)
    except (ValueError, TypeError):
        params = _schema_params(obj)
        assert params is not None, f"no signature and no ATen schema for torch's {name}"
        return params, True
    if _opaque(sig):
        # an overload with ``...`` defaults is a typing stub (Module.to), not a signature: keep the real one
        overloads = [o for o in typing.get_overloads(obj) if not _opaque(inspect.signature(o))
                     and all(p.default is not Ellipsis for p in inspect.signature(o).parameters.values())]
        if overloads:
            sig = inspect.signature(overloads[0])
            return [(p.name, p.kind, p.default) for p in sig.parameters.values()], "overload"
        elif name is not None and callable(getattr(tF, "_" + name, None)) and obj is getattr(tF, name, None):
            sig = inspect.signature(getattr(tF, "_" + name))  # boolean_dispatch: its return_indices=False branch
        elif name is not None and obj is getattr(torch.nn.init, name, None) and hasattr(torch.nn.init, name + "_"):
            sig = inspect.signature(getattr(torch.nn.init, name + "_"))  # deprecated alias of the in-place init
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()], False


def _same_default(ours, theirs, from_schema):
    if theirs is _EMPTY or ours is _EMPTY:
        return ours is theirs
    if callable(theirs) and callable(ours):  # e.g. Transformer's activation=F.relu
        return getattr(theirs, "__name__", None) == getattr(ours, "__name__", None)
    if not from_schema:
        return type(ours) is type(theirs) and repr(ours) == repr(theirs)
    # The binding converts Python values to the schema's types: an int for an int[2], None for an empty
    # int[] ("use kernel_size"), 1 and 1.0 for a Scalar.
    if isinstance(theirs, list):
        if theirs == [] and ours is None:
            return True
        if isinstance(ours, (int, float)) and not isinstance(ours, bool):
            return all(v == ours for v in theirs)
        return isinstance(ours, (list, tuple)) and list(ours) == theirs
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return type(ours) is type(theirs) and ours == theirs
    if isinstance(theirs, float) and isinstance(ours, float):
        return abs(ours - theirs) <= 1e-12 * max(1.0, abs(theirs))
    return ours == theirs


def compare(ours_obj, torch_obj, name=None):
    theirs, from_schema = torch_reference(torch_obj, name)
    ours = [(p.name, p.kind, p.default) for p in inspect.signature(ours_obj).parameters.values()]
    if from_schema == "overload" and ours and ours[-1][1] is inspect.Parameter.VAR_KEYWORD:
        ours = ours[:-1]  # torch's real signature is (*args, **kwargs): see the module docstring
    from_schema = from_schema is True
    show = lambda ps: ", ".join(f"{n}:{k.name}" + ("" if d is _EMPTY else f"={d!r}") for n, k, d in ps)  # noqa
    msg = f"\n  ours:  ({show(ours)})\n  torch: ({show(theirs)})"
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs], "names/kinds differ" + msg
    for (n, _, d1), (_, _, d2) in zip(ours, theirs):
        assert _same_default(d1, d2, from_schema), f"default of {n!r} differs" + msg


# ---- the names under comparison ------------------------------------------------------------------------------
def _module_classes():
    return sorted(n for n in dir(tnn) if isinstance(getattr(tnn, n), type) and issubclass(getattr(tnn, n), tnn.Module)
                  and isinstance(getattr(nn, n, None), type))


def _functions():
    return sorted(n for n in dir(tF) if not n.startswith("_") and callable(getattr(tF, n))
                  and not isinstance(getattr(tF, n), type) and getattr(getattr(tF, n), "__module__", "") != "typing"
                  and callable(getattr(F, n, None)))


def _optimizers():
    return sorted(n for n in dir(toptim) if isinstance(getattr(toptim, n), type)
                  and issubclass(getattr(toptim, n), toptim.Optimizer) and hasattr(optim, n))


def _schedulers():
    return sorted(n for n in dir(tlr) if isinstance(getattr(tlr, n), type) and n[0] != "_"
                  and getattr(getattr(tlr, n), "__module__", "").startswith("torch.optim")
                  and isinstance(getattr(lr_scheduler, n, None), type))


def test_the_sets_are_not_empty():
    """The comparison covers what both libraries have: guard against a listing bug that compares nothing."""
    assert len(_module_classes()) > 130 and len(_functions()) > 120
    assert len(_optimizers()) > 10 and len(_schedulers()) > 12


@pytest.mark.parametrize("name", _module_classes())
def test_module_init(name):
    compare(getattr(nn, name).__init__, getattr(tnn, name).__init__)


@pytest.mark.parametrize("name", [n for n in _module_classes()
                                  if getattr(tnn, n).forward is not tnn.Module.forward])
def test_module_forward(name):
    compare(getattr(nn, name).forward, getattr(tnn, name).forward)


@pytest.mark.parametrize("name", _functions())
def test_functional(name):
    compare(getattr(F, name), getattr(tF, name), name)


def _plain_functions(theirs, ours):
    return sorted(n for n in dir(theirs) if not n.startswith("_") and inspect.isfunction(getattr(theirs, n))
                  and callable(getattr(ours, n, None)))


@pytest.mark.parametrize("name", _plain_functions(torch.nn.init, tt.nn.init))
def test_init_function(name):
    compare(getattr(tt.nn.init, name), getattr(torch.nn.init, name), name)


@pytest.mark.parametrize("name", _plain_functions(torch.nn.utils, tt.nn.utils))
def test_nn_utils_function(name):
    compare(getattr(tt.nn.utils, name), getattr(torch.nn.utils, name), name)


@pytest.mark.parametrize("name", _optimizers())
def test_optimizer_init(name):
    compare(getattr(optim, name).__init__, getattr(toptim, name).__init__)


@pytest.mark.parametrize("name", _schedulers())
def test_lr_scheduler_init(name):
    compare(getattr(lr_scheduler, name).__init__, getattr(tlr, name).__init__)


def _own_methods(theirs, ours):
    """Public methods (plain, class- or static) that the torch class defines itself and ours also has."""
    out = []
    for m, v in vars(theirs).items():
        if m.startswith("_") or not (inspect.isfunction(v) or isinstance(v, (classmethod, staticmethod))):
            continue
        if m == "forward" or not callable(getattr(ours, m, None)):
            continue
        out.append(m)
    return out


def _methods():
    pairs = [(getattr(nn, n), getattr(tnn, n), n) for n in _module_classes()]
    pairs += [(optim.Optimizer, toptim.Optimizer, "Optimizer")]
    pairs += [(getattr(optim, n), getattr(toptim, n), n) for n in _optimizers()]
    pairs += [(lr_scheduler.LRScheduler, tlr.LRScheduler, "LRScheduler")]
    pairs += [(getattr(lr_scheduler, n), getattr(tlr, n), n) for n in _schedulers()]
    return sorted({f"{label}.{m}": (ours, theirs, m) for ours, theirs, label in pairs
                   for m in _own_methods(theirs, ours)}.items())


@pytest.mark.parametrize("name, classes", _methods(), ids=[k for k, _ in _methods()])
def test_public_method(name, classes):
    """``Module.state_dict``, ``Embedding.from_pretrained``, ``Optimizer.zero_grad``, ``ReduceLROnPlateau.step``,
    ...: every public method a torch class defines itself, where ours has it."""
    ours, theirs, m = classes
    compare(getattr(ours, m), getattr(theirs, m))


# ---- what the signatures mean at a call ---------------------------------------------------------------------
@pytest.mark.parametrize("call", ["ReLU(inplce=True)", "Softplus(betta=2)", "LeakyReLU(0.1, True, 5)",
                                  "GELU(approx='tanh')", "Threshold(0.1)", "Softmax(1, 2)", "Hardtanh(foo=1)",
                                  "LazyConv2d(4, 3, padding_mod='zeros')", "ELU(alpha=1.0, inplace=False, x=1)",
                                  "GRU(3, 4, hiden_size=1)", "RNN(3, 4, nonlinearty='relu')", "LSTM(3, 4, proj=2)",
                                  "RNNCell(3, 4, bias=True, nonlin='relu')"])
def test_misspelt_or_extra_arguments_raise_type_error(call):
    with pytest.raises(TypeError):
        eval("tnn." + call)
    with pytest.raises(TypeError):
        eval("nn." + call)


def test_activation_docstrings_and_repr():
    for name in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh",
                 "Hardsigmoid", "Hardswish", "Sigmoid", "Tanh", "LogSigmoid", "Softsign", "Tanhshrink", "Softmax",
                 "LogSoftmax", "Softmin", "GLU", "Threshold", "Hardshrink", "Softshrink"):
        cls = getattr(nn, name)
        assert cls.__doc__ and "_act" not in cls.__doc__ and "``F._" not in cls.__doc__, name
        assert cls.__module__ == "tinytorch.nn.modules.activation", name
    for call in ["ReLU()", "ReLU(True)", "LeakyReLU(0.2, True)", "ELU(2.0)", "CELU(inplace=True)", "GELU('tanh')",
                 "Softplus(2, 10)", "Hardtanh(-2, 3, True)", "Threshold(0.1, 20)", "Threshold(0.1, 20, True)",
                 "Softmax(1)", "LogSoftmax()", "Softmin(dim=0)", "GLU()", "Hardshrink(0.3)", "Softshrink()",
                 "SiLU(True)", "Mish()", "Hardswish(True)", "Hardsigmoid()", "SELU(True)", "ReLU6(True)",
                 "Sigmoid()", "Tanh()", "Softsign()", "Tanhshrink()", "LogSigmoid()", "PReLU(3, 0.1)",
                 "RReLU(0.1, 0.3, True)", "Softmax2d()"]:
        assert repr(eval("nn." + call)) == repr(eval("tnn." + call)), call


@pytest.mark.parametrize("lo, hi", [(2.0, 1.0), (1.0, 1.0)])
def test_hardtanh_min_not_below_max_raises_as_torch(lo, hi):
    with pytest.raises(AssertionError) as theirs:  # PyTorch 2.13 raises AssertionError here
        tnn.Hardtanh(lo, hi)
    with pytest.raises(AssertionError) as ours:
        nn.Hardtanh(lo, hi)
    assert str(ours.value) == str(theirs.value)


def test_hardtanh_deprecated_min_value_keywords():
    with pytest.warns(FutureWarning):
        ours = nn.Hardtanh(min_value=-2.0)
    with pytest.warns(FutureWarning):
        theirs = tnn.Hardtanh(min_value=-2.0)
    assert (ours.min_val, ours.max_val) == (theirs.min_val, theirs.max_val)


@pytest.mark.parametrize("call", ["Threshold(1, 20)", "ReLU6()", "Hardtanh(-2, 3)", "ReLU()", "Hardtanh(-2.5, 3.5)"])
def test_clamping_activations_keep_integer_dtypes(call):
    x = [-5, -1, 0, 1, 2, 4, 9]
    ours, theirs = eval("nn." + call)(tt.tensor(x)), eval("tnn." + call)(torch.tensor(x))
    assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_prelu_keeps_the_input_shape(shape):
    ours, theirs = nn.PReLU()(tt.ones(shape) * -2), tnn.PReLU()(torch.ones(shape) * -2)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("name", ["RNN", "GRU"])
def test_proj_size_refused_as_torch(name):
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        getattr(tnn, name)(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        getattr(nn, name)(3, 4, proj_size=2)


def test_rnn_positionals_bind_as_torch():
    """torch's RNN/LSTM/GRU pass their positionals to RNNBase (RNN takes nonlinearity 4th)."""
    keys = ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional", "proj_size")
    for name, args in (("LSTM", (3, 4, 2, False, True, 0.0, True, 2)), ("GRU", (3, 4, 2, False, True, 0.0, True)),
                       ("RNN", (3, 4, 2, "relu", False, True, 0.0, True))):
        ours, theirs = getattr(nn, name)(*args), getattr(tnn, name)(*args)
        for k in keys + (("nonlinearity",) if name == "RNN" else ()):
            assert getattr(ours, k) == getattr(theirs, k), (name, k)
    for name, args in (("LSTMCell", (3, 4, False)), ("GRUCell", (3, 4, False)), ("RNNCell", (3, 4, False, "relu"))):
        ours, theirs = getattr(nn, name)(*args), getattr(tnn, name)(*args)
        assert (ours.bias, ours.hidden_size) == (theirs.bias, theirs.hidden_size)
        assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_flatten_parameters_is_a_no_op(name):
    m = getattr(nn, name)(3, 4)
    before = [p.detach().clone() for p in m.parameters()]
    assert m.flatten_parameters() is None and getattr(tnn, name)(3, 4).flatten_parameters() is None
    assert all((a == b.detach()).all() for a, b in zip(before, m.parameters()))
    out, _ = m(tt.ones(2, 1, 3))
    assert tuple(out.shape) == (2, 1, 4)


# ---- torch.nn.modules.<family> at PyTorch's names -----------------------------------------------------------
def _families():
    return sorted(m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__)
                  if not m.name.startswith("_") and m.name not in ("utils",))


@pytest.mark.parametrize("family", _families())
def test_module_family_submodules(family):
    """``torch.nn.modules.<family>`` defines classes; every one tinytorch implements (exports from ``nn`` or
    ``nn.modules``) is importable from ``tinytorch.nn.modules.<family>`` and is the same class."""
    theirs = importlib.import_module(f"torch.nn.modules.{family}")
    ours = importlib.import_module(f"tinytorch.nn.modules.{family}")  # imports even where nothing public is there

    def implemented(n):  # the public object of that name tinytorch exports, wherever it is defined
        return getattr(nn, n, None) or getattr(tt.nn.modules, n, None)
    names = [n for n, v in vars(theirs).items() if isinstance(v, type) and v.__module__ == theirs.__name__
             and not n.startswith("_") and implemented(n) is not None]
    for n in names:
        assert getattr(ours, n, None) is implemented(n), f"tinytorch.nn.modules.{family}.{n}"
