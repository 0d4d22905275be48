"""Argument helpers shared by the ``nn.functional`` families."""


def _pair(x, n=2):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _scalar_name(dtype):
    """PyTorch's C++ name of a dtype in messages ('Long', 'Half', ...)."""
    from ..._ops.movement import _SCALAR_TYPE
    return _SCALAR_TYPE.get(dtype.name, dtype.name)


def _check_int64(value):
    """ValueError, as PyTorch's argument parser, for an int argument outside the C int64 range."""
    if not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return value
