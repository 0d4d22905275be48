"""Helpers shared by op definitions."""
from .._tensor import Tensor


def method(name):
    """Attach the decorated function to ``Tensor`` as method ``name`` (the function itself is returned)."""
    def deco(fn):
        setattr(Tensor, name, fn)
        return fn
    return deco


def defop_on_cpu(name, meta, backward, registry, **kw):
    """Define an op whose kernel only ``cpu`` has (LAPACK, FFT, complex parts). Its decomposition, which other
    backends run, copies the tensor arguments to cpu, runs the op there and copies the result(s) back; the
    backward formula still runs on the tensor's own device. The op is stored in ``registry[name]``."""
    from .._dispatch import defop, dispatch

    def decomp(*args, **kwargs):
        dev = next(a.device for a in args if isinstance(a, Tensor))
        out = dispatch(registry[name], tuple(a.cpu() if isinstance(a, Tensor) else a for a in args), kwargs)
        return tuple(o.to(dev) for o in out) if isinstance(out, tuple) else out.to(dev)
    registry[name] = op = defop(name, meta, backward, decomp=decomp, **kw)
    return op


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
