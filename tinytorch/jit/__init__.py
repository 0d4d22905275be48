"""``torch.jit`` on tinytorch's compiler: ``trace`` captures the ops a function sends through the dispatcher on
example inputs and replays that graph; ``script`` compiles a module or function as ``tinytorch.compile`` does.

The TorchScript language is not parsed: ``script`` runs the Python function (every call, so its control flow is
honoured) with its ops recorded and run as graphs. A traced function, as PyTorch's, replays the ops of the example
run: control flow that depended on the example's values is baked in (a new shape, dtype or module mode records a
new graph instead of failing). Saving compiled graphs (``save``/``load``) is not supported: save the module's
``state_dict`` with ``tinytorch.save`` and rebuild it.
"""
from ..compiler.api import _MISS, CompiledFunction, compile as _compile
from ..compiler.graph import format_graph
from ..nn.modules.module import Module

__all__ = ["trace", "script", "script_if_tracing", "save", "load", "ignore", "unused", "export", "is_scripting", "is_tracing",
           "ScriptModule", "ScriptFunction", "TracedModule", "Final", "annotate", "fork", "wait"]


class _Graph:
    def __init__(self, fn):
        self._fn = fn

    def __str__(self):
        rec = getattr(self._fn, "recording", None)
        if rec is None:
            return "graph(\n)"
        return format_graph(rec.last_nodes, rec.last_info)

    __repr__ = __str__


class ScriptFunction:
    """A traced function (``torch.jit.ScriptFunction``): call it as the function; ``graph`` prints the recorded
    ops; ``code`` the same text."""

    def __init__(self, compiled):
        self._c = compiled
        self.__name__ = getattr(compiled.fn, "__name__", "traced")

    def __call__(self, *args, **kwargs):
        c = self._c
        if c._replay is not None:
            out = c._replay.call(args, kwargs)
            if out is not _MISS:
                c.replays += 1
                return out
        return c.trace(args, kwargs)

    @property
    def graph(self):
        return _Graph(self._c)

    @property
    def code(self):
        return str(self.graph)


class TracedModule(Module):
    """A traced module (``torch.jit.TracedModule``): its parameters, buffers and ``state_dict`` are the traced
    module's (same names); calls replay the traced graph."""

    def __init__(self, mod, compiled):
        super().__init__()
        self.__dict__["_traced_fn"] = ScriptFunction(compiled)
        self.__dict__["_orig"] = mod

    def forward(self, *args, **kwargs):
        return self.__dict__["_traced_fn"](*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.__dict__["_traced_fn"](*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.__dict__["_orig"], name)

    def state_dict(self, *args, **kwargs):
        return self.__dict__["_orig"].state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self.__dict__["_orig"].load_state_dict(*args, **kwargs)

    def named_parameters(self, *args, **kwargs):
        return self.__dict__["_orig"].named_parameters(*args, **kwargs)

    def parameters(self, recurse=True):
        return self.__dict__["_orig"].parameters(recurse)

    def named_buffers(self, *args, **kwargs):
        return self.__dict__["_orig"].named_buffers(*args, **kwargs)

    def buffers(self, recurse=True):
        return self.__dict__["_orig"].buffers(recurse)

    def train(self, mode=True):
        self.__dict__["_orig"].train(mode)
        return self

    @property
    def graph(self):
        return self.__dict__["_traced_fn"].graph

    @property
    def code(self):
        return str(self.graph)


ScriptModule = TracedModule


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Trace ``func`` (a function or module) on ``example_inputs`` (a tensor or a tuple of them), as
    ``torch.jit.trace``: the ops it sends through the dispatcher are recorded as one graph (``.graph``), and later
    calls with arguments of the same shapes, dtypes and strides replay that graph without running the Python
    function. Arguments of another signature record a new graph. A function whose run needs a host value in the
    middle (``.item()``) or draws random numbers runs in full on every call instead. Returns a ``TracedModule``
    for a module, a ``ScriptFunction`` otherwise. ValueError without example inputs.

    Source: https://pytorch.org/docs/stable/generated/torch.jit.trace.html
    """
    if example_inputs is None and example_kwarg_inputs is None:
        raise ValueError("Tracing a function requires example inputs: pass example_inputs")
    from .._tensor import Tensor
    args = (example_inputs,) if isinstance(example_inputs, Tensor) else tuple(example_inputs or ())
    kwargs = dict(example_kwarg_inputs or {})
    c = CompiledFunction(func, mode="reduce-overhead")
    c.trace(args, kwargs)
    if isinstance(func, Module):
        return TracedModule(func, c)
    return ScriptFunction(c)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``torch.jit.script`` for a module or function: compiled with ``tinytorch.compile`` (default mode). The
    TorchScript language is not parsed; the Python code runs on every call with its ops recorded as graphs, so the
    results are the eager ones."""
    return _compile(obj)


def save(m, f, _extra_files=None):
    """Not supported: tinytorch does not serialize compiled graphs. NotImplementedError (save the module's
    ``state_dict`` with ``tinytorch.save`` and rebuild the module instead)."""
    raise NotImplementedError("tinytorch.jit.save: compiled graphs are not serialized; save the module's state_dict "
                              "with tinytorch.save(model.state_dict(), f) and rebuild the module to load it")


def load(f, map_location=None, _extra_files=None):
    """Not supported, as ``save``: NotImplementedError."""
    raise NotImplementedError("tinytorch.jit.load: compiled graphs are not serialized; load a state_dict with "
                              "tinytorch.load and model.load_state_dict instead")


def ignore(drop=False, **kwargs):
    """``torch.jit.ignore``: the function is left as Python (here every function is)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``torch.jit.unused``: the function is left as Python."""
    return fn


def export(fn):
    """``torch.jit.export``: marks a method for scripting; nothing to do here."""
    return fn


def is_scripting():
    """False: the code is never run as TorchScript."""
    return False


def is_tracing():
    """Whether a trace is capturing (``torch.jit.is_tracing``)."""
    from ..compiler.api import is_compiling
    return is_compiling()


def script_if_tracing(fn):
    """``torch.jit.script_if_tracing``: ``fn`` scripted when called during a trace, so its control flow is kept.
    A tinytorch trace records every op ``fn`` sends through the dispatcher and ``script`` runs the Python, so ``fn``
    is called as it is, inside a trace or not."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper.__original_fn = fn
    return wrapper


_script_if_tracing = script_if_tracing  # the private name packages call


def _overload_method(func):
    """``torch.jit._overload_method``: declares a typed overload of a method for TorchScript's compiler. tinytorch
    runs the Python method, which handles every overload, so the declaration is not kept."""
    return func


def annotate(the_type, the_value):
    """``torch.jit.annotate``: returns the value."""
    return the_value


class _FinalMeta(type):
    def __getitem__(cls, item):
        return item


class Final(metaclass=_FinalMeta):
    """``torch.jit.Final[T]``: T."""


class _Future:
    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    """``torch.jit.fork``: runs ``func`` now and returns a future holding its result."""
    return _Future(func(*args, **kwargs))


def wait(future):
    """``torch.jit.wait``: the future's value."""
    return future.wait()
