"""Finite-difference gradient checks (``torch.autograd.gradcheck`` / ``gradgradcheck``)."""
import numpy as np


def _flat_inputs(inputs):
    from .._tensor import Tensor
    return [i for i in inputs if isinstance(i, Tensor) and i.requires_grad]


def _numerical_jacobian(fn, inputs, out_numel, eps):
    jac = []
    for x in _flat_inputs(inputs):
        if not x.is_contiguous():
            raise ValueError("gradcheck needs contiguous inputs")
        flat = x.detach().view(-1)  # shares x's storage on any device; writes bump its version
        cols = np.zeros((flat.numel(), out_numel))
        for k in range(flat.numel()):
            orig = flat[k].item()
            flat[k] = orig + eps
            plus = _out_vec(fn(*inputs))
            flat[k] = orig - eps
            minus = _out_vec(fn(*inputs))
            flat[k] = orig
            cols[k] = (plus - minus) / (2 * eps)
        jac.append(cols)
    return jac


def _out_vec(out):
    from .._tensor import Tensor
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return np.concatenate([o.detach().cpu().numpy().astype(np.float64).reshape(-1) for o in outs if isinstance(o, Tensor)])


def _analytical_jacobian(fn, inputs):
    from .._tensor import Tensor
    from .._ops.creation import zeros_like
    from . import grad
    out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, Tensor)]
    xs = _flat_inputs(inputs)
    total = sum(o.numel() for o in outs)
    jac = [np.zeros((x.numel(), total)) for x in xs]
    col = 0
    for o in outs:
        for k in range(o.numel()):
            if not o.requires_grad:
                col += 1
                continue
            go = zeros_like(o)
            go.view(-1)[k] = 1.0
            gs = grad([o], xs, [go], retain_graph=True, allow_unused=True)
            for j, g in enumerate(gs):
                if g is not None:
                    jac[j][:, col] = g.detach().cpu().numpy().reshape(-1)
            col += 1
    return jac, total


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """Compare analytical gradients with central finite differences; inputs should be float64.

    Returns True, or raises ``GradcheckError`` (a RuntimeError) naming the input and the worst entry.
    """
    from .._tensor import Tensor
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    analytical, total = _analytical_jacobian(func, inputs)
    numerical = _numerical_jacobian(func, inputs, total, eps)
    for i, (a, n) in enumerate(zip(analytical, numerical)):
        if not np.allclose(a, n, atol=atol, rtol=rtol):
            if raise_exception:
                k = np.unravel_index(np.argmax(np.abs(a - n)), a.shape)
                raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input {i},\n"
                                     f"numerical:{n[k]}\nanalytical:{a[k]}\n")
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kw):
    """gradcheck of the first derivative (checks double backward)."""
    from .._tensor import Tensor
    from .._ops.random import randn
    from . import grad
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    out = func(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    gos = grad_outputs or [randn(o._shape, dtype=o.dtype, device=o.device) for o in outs]

    def first(*args):
        o = func(*args)
        o = o if isinstance(o, (tuple, list)) else (o,)
        xs_ = _flat_inputs(args)
        return grad(list(o), xs_, list(gos), create_graph=True, allow_unused=True)
    return gradcheck(first, inputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)


class GradcheckError(RuntimeError):
    pass
