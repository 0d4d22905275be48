"""``torch.autograd.functional``: jacobian and hessian built on ``autograd.grad``."""


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False):
    """Jacobian of ``func`` at ``inputs``: shape out.shape + in.shape (tuples for several inputs/outputs)."""
    from .._tensor import Tensor
    from .._ops.creation import zeros_like
    from .._ops.shape import stack
    from . import grad
    single_in = isinstance(inputs, Tensor)
    ins = (inputs,) if single_in else tuple(inputs)
    ins = tuple(i.detach().requires_grad_(True) for i in ins)
    from .grad_mode import enable_grad
    with enable_grad():
        out = func(*ins)
    single_out = isinstance(out, Tensor)
    outs = (out,) if single_out else tuple(out)
    result = []
    for o in outs:
        rows = [[] for _ in ins]
        flat = o.reshape(-1)
        for k in range(flat.numel()):
            gs = grad([flat[k]], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
            for j, g in enumerate(gs):
                rows[j].append(g if g is not None else zeros_like(ins[j]))
        per_in = tuple(stack(r).reshape(o._shape + ins[j]._shape) if r else zeros_like(ins[j]).reshape(
            o._shape + ins[j]._shape) for j, r in enumerate(rows))
        result.append(per_in[0] if single_in else per_in)
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False):
    """Hessian of scalar ``func`` at ``inputs`` (shape in.shape + in.shape)."""
    from .._tensor import Tensor
    from . import grad
    single = isinstance(inputs, Tensor)

    def g(*xs):
        out = func(*xs)
        gs = grad([out], xs, create_graph=True)
        return gs[0] if single else gs
    return jacobian(g, inputs, create_graph=create_graph)


def _grad_inputs(inputs):
    from .._tensor import Tensor
    single = isinstance(inputs, Tensor)
    ins = (inputs,) if single else tuple(inputs)
    return tuple(i.detach().requires_grad_(True) for i in ins), single


def _vector(v, like, what):
    """``v`` as a tuple matching ``like`` (tensors); None allowed only for one single-element tensor."""
    from .._tensor import Tensor
    from .._ops.creation import ones_like
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} is a single Tensor with a single "
                               "element.")
        return (ones_like(like[0]),)
    vs = (v,) if isinstance(v, Tensor) else tuple(v)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for a, b in zip(vs, like):
        if a.shape != b.shape:
            raise RuntimeError(f"Mismatch in shape: expected v of shape {tuple(b.shape)}, got {tuple(a.shape)}.")
    return vs


def _finish(gs, like, create_graph):
    from .._ops.creation import zeros_like
    out = tuple(zeros_like(x) if g is None else g for g, x in zip(gs, like))
    return out if create_graph else tuple(g.detach() for g in out)


def _out(out, create_graph):
    from .._tensor import Tensor
    if create_graph:
        return out
    return out.detach() if isinstance(out, Tensor) else tuple(o.detach() for o in out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at ``inputs`` (``torch.autograd.functional.vjp``).
    ``v`` has the output's shape (may be None for a single-element output); the product has the inputs'
    shapes (a tuple when ``inputs`` is one). Results are detached unless ``create_graph``."""
    from .._tensor import Tensor
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _grad_inputs(inputs)
    with enable_grad():
        out = func(*ins)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        vs = _vector(v, outs, "user-provided function returns")
        gs = grad(list(outs), list(ins), list(vs), create_graph=create_graph, allow_unused=True)
    res = _finish(gs, ins, create_graph)
    return _out(out, create_graph), res[0] if single else res


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product (``torch.autograd.functional.jvp``), by the double
    backward trick: J v is the gradient, with respect to u, of (J^T u) . v. ``v`` has the inputs' shapes."""
    from .._tensor import Tensor
    from .._ops.creation import zeros_like
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _grad_inputs(inputs)
    vs = _vector(v, ins, "input to the function")
    with enable_grad():
        out = func(*ins)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
        gs = grad(list(outs), list(ins), list(us), create_graph=True, allow_unused=True)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None]
        jv = grad([g for g, _ in pairs], list(us), [w for _, w in pairs], create_graph=create_graph,
                  allow_unused=True) if pairs else (None,) * len(us)
    res = _finish(jv, outs, create_graph)
    return _out(out, create_graph), res[0] if isinstance(out, Tensor) else res


def _value_and_gradient(func, ins):
    """func(*ins), which must be a single-element tensor, and its gradient with a graph (for a second one)."""
    from .._tensor import Tensor
    from . import grad
    out = func(*ins)
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
    return out, grad([out], list(ins), create_graph=True, allow_unused=True)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a function with a single-element output (``torch.autograd.functional.vhp``)."""
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _grad_inputs(inputs)
    vs = _vector(v, ins, "input to the function")
    with enable_grad():
        out, jac = _value_and_gradient(func, ins)
        pairs = [(j, w) for j, w in zip(jac, vs) if j is not None]
        res = grad([j for j, _ in pairs], list(ins), [w for _, w in pairs], create_graph=create_graph,
                   allow_unused=True) if pairs else (None,) * len(ins)
    res = _finish(res, ins, create_graph)
    return _out(out, create_graph), res[0] if single else res


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a function with a single-element output (``torch.autograd.functional.hvp``),
    computed as torch does: the gradient with respect to u of (J^T-of-the-gradient u) . v."""
    from .._ops.creation import zeros_like
    from . import grad
    from .grad_mode import enable_grad
    ins, single = _grad_inputs(inputs)
    vs = _vector(v, ins, "input to the function")
    with enable_grad():
        out, jac = _value_and_gradient(func, ins)
        keep = [(j, x) for j, x in zip(jac, ins) if j is not None]
        us = [zeros_like(x).requires_grad_(True) for _, x in keep]
        dbl = grad([j for j, _ in keep], list(ins), us, create_graph=True, allow_unused=True) if keep else ()
        pairs = [(d, w) for d, w in zip(dbl, vs) if d is not None]
        res = grad([d for d, _ in pairs], us, [w for _, w in pairs], create_graph=create_graph,
                   allow_unused=True) if pairs else ()
    full, it = [], iter(res)
    for j in jac:
        full.append(next(it, None) if j is not None else None)
    res = _finish(full, ins, create_graph)
    return _out(out, create_graph), res[0] if single else res
