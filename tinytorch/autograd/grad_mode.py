"""Grad-mode switches: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each works as a context manager and as a decorator, as in PyTorch.
"""
import functools

from .._modes import _GradState, _state  # noqa: F401 (the flags live in the core layer)


def is_grad_enabled():
    """True when ops record the autograd graph."""
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _ContextDecorator:
    """A context manager that also decorates functions: each call runs inside a fresh instance built from
    ``self._args``."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(*self._args):
                return fn(*a, **k)
        return wrapper


class _Mode(_ContextDecorator):
    _value = None

    def __enter__(self):
        self._prev = (_state.enabled, _state.inference)
        _state.enabled = self._value
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._prev
        return False


class _NoParamDecorator:
    """``@no_grad`` without parentheses decorates too (PyTorch's ``_NoParamDecoratorContextManager``)."""

    def __new__(cls, orig_func=None):
        if orig_func is None or not callable(orig_func):
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator, _Mode):
    """Context manager / decorator (with or without parentheses) that disables graph recording."""
    _value = False
    _args = ()

    def __init__(self):
        pass


class enable_grad(_NoParamDecorator, _Mode):
    """Context manager / decorator (with or without parentheses) that enables graph recording (inside
    ``no_grad``)."""
    _value = True
    _args = ()

    def __init__(self):
        pass


class set_grad_enabled(_Mode):
    """``set_grad_enabled(mode)``: sets grad mode now; as a context manager, restores it on exit."""

    def __init__(self, mode):
        self._value = bool(mode)
        self._args = (mode,)
        self._prev = (_state.enabled, _state.inference)
        _state.enabled = self._value

    def __enter__(self):
        return self


class inference_mode(_Mode):
    """Like ``no_grad``: no graph is recorded, and tensors allocated inside are inference tensors
    (``Tensor.is_inference()``): outside the mode they may not be written in place, require grad, or be saved
    for backward (RuntimeError, as ``torch.inference_mode``). ``inference_mode(False)`` switches back."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):  # bare ``@inference_mode``
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self._value = not mode
        self._args = (mode,)
        self._mode = mode

    def __enter__(self):
        super().__enter__()
        _state.inference = self._mode
        if self._mode and not _GradState.inference_seen:
            _GradState.inference_seen = True
        return self
