"""The ``__torch_function__`` protocol (``torch.overrides``): Tensor subclasses, modes, tensor-like objects and
``as_subclass``, each program run with tinytorch and with PyTorch and the results compared."""
import pytest

import tinytorch as tt
from conftest import torch


def _subclass_program(L):
    class Tagged(L.Tensor):
        pass

    x = L.ones(2, 3, requires_grad=True)
    y = x.as_subclass(Tagged)
    out = {"as_subclass": (type(y).__name__, y.requires_grad, y.is_leaf, y.data_ptr() == x.data_ptr())}
    results = {"mul": y * 2, "add": L.add(y, 1), "index": y[0], "cat": L.cat([y, y]), "clone": y.clone(),
               "sum": y.sum(), "relu": L.nn.functional.relu(y), "t": y.t(), "method": y.exp()}
    out.update({k: type(v).__name__ for k, v in results.items()})
    (y * 3).sum().backward()
    out["grad"] = x.grad.tolist()
    out["param"] = type(L.nn.Parameter(L.ones(1)) * 2).__name__
    out["shape"] = type(y.shape).__name__
    out["detached"] = type(x.detach().as_subclass(Tagged) + 1).__name__
    return out


def _custom_handler_program(L):
    seen = []

    class Logged(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    a = L.arange(4.).as_subclass(Logged)
    b = L.mul(a, a).add(1)
    return {"seen": [n for n in seen if n in ("mul", "add")], "type": type(b).__name__, "values": b.tolist()}


def _unwrap_program(L):
    """torchvision's tv_tensors pattern: the handler unwraps results to plain tensors, except clone."""
    from_overrides = L._C.DisableTorchFunctionSubclass if hasattr(L._C, "DisableTorchFunctionSubclass") else None

    class Image(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            with from_overrides():
                out = func(*args, **(kwargs or {}))
            if func is L.Tensor.clone:
                return out.as_subclass(cls)
            return out.as_subclass(L.Tensor) if isinstance(out, cls) else out

    img = L.rand(3, 4, 4).as_subclass(Image)
    return [type(v).__name__ for v in (img + 1, img.clone(), img.flip(-1), L.stack([img, img]))]


def _mode_program(L):
    calls = []

    class Count(L.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return func(*args, **(kwargs or {}))

    x = L.ones(3)
    with Count():
        y = L.add(L.relu(x).mul(2), 1)
        with Count():
            L.exp(x)
    return {"calls": calls, "value": y.tolist(), "after": L.ones(1).add(1).tolist()}


def _tensor_like_program(L):
    class Box:
        def __init__(self, v):
            self.v = v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func.__name__, [type(a).__name__ for a in args])

    return L.add(Box(1), L.ones(1)), L.overrides.has_torch_function((Box(1),)), \
        L.overrides.has_torch_function((L.ones(1),)), L.overrides.is_tensor_like(Box(1))


@pytest.mark.parametrize("program", [_subclass_program, _custom_handler_program, _unwrap_program, _mode_program,
                                     _tensor_like_program])
def test_protocol_matches_torch(program):
    assert program(tt) == program(torch)


def test_as_subclass_refuses_non_tensor_classes():
    for L in (tt, torch):
        with pytest.raises(TypeError, match="does not inherit from Tensor"):
            L.ones(1).as_subclass(int)


def test_modes_leave_plain_tensor_methods_unwrapped():
    """The protocol costs nothing on plain tensors outside a mode: the methods are the methods themselves."""
    base = tt.Tensor.add
    with tt.overrides.TorchFunctionMode():
        assert tt.Tensor.add is not base
    assert tt.Tensor.add is base


def test_methods_keep_their_argument_checks_after_a_mode():
    """Popping the last mode puts back the methods as they were: with the surface's argument checks (a copy of
    them taken while tinytorch was imported had none, and ``copy_(None)`` then wrote NaN)."""
    for L in (tt, torch):
        with L.overrides.TorchFunctionMode():
            pass
        x = L.ones(3)
        with pytest.raises(TypeError):
            x.copy_(None)
        assert x.tolist() == [1.0, 1.0, 1.0]
