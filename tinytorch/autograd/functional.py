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
