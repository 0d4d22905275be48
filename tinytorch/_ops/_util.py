"""Helpers shared by op definitions."""
from .._tensor import Tensor


def method(name):
    """Attach the decorated function to ``Tensor`` as method ``name`` (the function itself is returned)."""
    def deco(fn):
        setattr(Tensor, name, fn)
        return fn
    return deco


def scalar_check(x, op, arg):
    if not isinstance(x, (int, float, bool)):
        raise TypeError(f"{op}(): argument '{arg}' must be a number, not {type(x).__name__}")
    return x


def as_dims(dim):
    """Normalize ``dim`` arguments given as int, tuple, list, or None."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (dim,)
    return tuple(dim)
