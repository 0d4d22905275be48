"""``tinytorch.func``: function transforms, as ``torch.func`` — ``functional_call``, ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and ``vmap``.

The gradient transforms are built on the autograd engine: each call marks copies of its inputs as requiring
grad and runs ``autograd.grad`` with ``create_graph=True``, so transforms nest (``grad(grad(f))``,
``jacfwd(jacrev(f))``). ``vmap`` maps ``func`` over a batch dim by calling it once per batch entry and
stacking the outputs — PyTorch's own fallback for ops without a batching rule, applied to every op: the
results are the same, the speed is that of a Python loop. Random ops inside ``vmap`` draw independently per
entry (PyTorch's ``randomness='different'``); ``randomness='error'`` and ``'same'`` are not enforced.
"""
import contextlib
import functools

from .. import autograd
from .._tensor import Tensor

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap"]


# ---- pytrees: tuples, lists and dicts of tensors -----------------------------------------------------------
def _flatten(tree):
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for t in tree:
            lv, sp = _flatten(t)
            leaves += lv
            specs.append(sp)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k in tree:
            lv, sp = _flatten(tree[k])
            leaves += lv
            specs.append((k, sp))
        return leaves, (dict, specs)
    return [tree], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, subs = sp
        if kind is dict:
            return {k: build(s) for k, s in subs}
        vals = [build(s) for s in subs]
        return kind(*vals) if hasattr(kind, "_fields") else kind(vals)
    return build(spec)


# ---- functional_call ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def _swapped(module, tensors, strict):
    saved = []
    if strict:
        expected = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
        missing, unexpected = sorted(expected - set(tensors)), sorted(set(tensors) - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n"
                               + (f"\tUnexpected key(s): {', '.join(repr(k) for k in unexpected)}.\n" if unexpected else "")
                               + (f"\tMissing key(s): {', '.join(repr(k) for k in missing)}." if missing else ""))
    try:
        for name, value in tensors.items():
            *path, leaf = name.split(".")
            mod = module
            for p in path:
                mod = getattr(mod, p)
            store = next((mod.__dict__[s] for s in ("_parameters", "_buffers") if leaf in mod.__dict__[s]), None)
            if store is None:
                raise AttributeError(f"'{type(mod).__name__}' object has no parameter or buffer '{leaf}' "
                                     f"(functional_call key '{name}')")
            saved.append((store, leaf, store[leaf]))
            store[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            store[leaf] = old


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors in
    ``parameter_and_buffer_dicts`` (a dict from qualified names such as ``'0.weight'``, or a sequence of such
    dicts); the module is unchanged afterwards (``torch.func.functional_call``). Names not given keep the
    module's own tensors. AttributeError for a name the module does not have; with ``strict``, RuntimeError
    listing missing and unexpected keys."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged = {}
        for d in dicts:
            dup = set(merged) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)[0]} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            merged.update(d)
        dicts = merged
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, dicts, strict):
        return module(*args, **(kwargs or {}))


# ---- gradients ---------------------------------------------------------------------------------------------
def _argnums(argnums, n):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums}, but only {n} positional inputs")
    return nums


def _track(x):
    """A copy of tensor (pytree) ``x`` that requires grad and is a fresh leaf of this transform's graph."""
    leaves, spec = _flatten(x)
    out = []
    for t in leaves:
        if not isinstance(t, Tensor):
            raise RuntimeError(f"Expected the differentiated inputs to be tensors, got {type(t).__name__}")
        out.append(t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True))
    return _unflatten(out, spec), out


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient of ``func``'s scalar output w.r.t. the ``argnums`` inputs, output)
    (``torch.func.grad_and_value``); with ``has_aux``, func returns (output, aux) and so does the value part."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        args = list(args)
        tracked = []
        with autograd.enable_grad():
            for a in nums:
                args[a], leaves = _track(args[a])
                tracked.append((a, leaves))
            out = func(*args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                out, aux = out
            if not isinstance(out, Tensor) or out.numel() != 1:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   + (f"tensor with {out.dim()} dims" if isinstance(out, Tensor) else type(out).__name__))
            flat = [t for _, leaves in tracked for t in leaves]
            gs = autograd.grad(out, flat, create_graph=True, allow_unused=True)
        gs = [g if g is not None else t.new_zeros(t.shape) for g, t in zip(gs, flat)]
        grads, i = [], 0
        for a, leaves in tracked:
            _, spec = _flatten(args[a])
            grads.append(_unflatten(gs[i:i + len(leaves)], spec))
            i += len(leaves)
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return (g, (out, aux)) if has_aux else (g, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``func`` w.r.t. its ``argnums`` inputs, as a function (``torch.func.grad``);
    with ``has_aux`` returns (gradient, aux). RuntimeError when func's output is not a one-element tensor."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn) where vjp_fn(cotangents) gives the vector-Jacobian product with respect to each
    primal (``torch.func.vjp``); with ``has_aux``, (output, vjp_fn, aux)."""
    with autograd.enable_grad():
        tracked = [_track(p) for p in primals]
        out = func(*(t for t, _ in tracked))
        aux = None
        if has_aux:
            out, aux = out
    out_leaves, out_spec = _flatten(out)
    flat_in = [t for _, leaves in tracked for t in leaves]

    def vjp_fn(cotangents):
        ct, _ = _flatten(cotangents)
        if len(ct) != len(out_leaves):
            raise RuntimeError(f"Expected {len(out_leaves)} cotangents, got {len(ct)}")
        with autograd.enable_grad():
            gs = autograd.grad(out_leaves, flat_in, ct, create_graph=True, allow_unused=True)
        gs = [g if g is not None else t.new_zeros(t.shape) for g, t in zip(gs, flat_in)]
        res, i = [], 0
        for p, (_, leaves) in zip(primals, tracked):
            res.append(_unflatten(gs[i:i + len(leaves)], _flatten(p)[1]))
            i += len(leaves)
        return tuple(res)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jvp(func, primals, tangents, *, has_aux=False):
    """(func(*primals), Jacobian-vector product with ``tangents``) (``torch.func.jvp``), by the double-vjp
    identity: the vjp is linear in its cotangent u, so d/du <vjp(u), tangents> = J tangents."""
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same length")
    res = vjp(func, *primals, has_aux=has_aux)
    out, fn = res[0], res[1]
    out_leaves, spec = _flatten(out)
    with autograd.enable_grad():
        us = [o.detach().new_zeros(o.shape).requires_grad_(True) for o in out_leaves]
        g = fn(_unflatten(us, spec))
        gl = [x for gi in g for x in _flatten(gi)[0]]
        tl = [x for t in tangents for x in _flatten(t)[0]]
        dots = sum((a * b).sum() for a, b in zip(gl, tl))
        jv = autograd.grad(dots, us, create_graph=True, allow_unused=True)
    jv = _unflatten([j if j is not None else u.detach() * 0 for j, u in zip(jv, us)], spec)
    return (out, jv, res[2]) if has_aux else (out, jv)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` w.r.t. its ``argnums`` inputs by reverse mode, as a function
    (``torch.func.jacrev``): output shape func(x).shape + x.shape."""
    @functools.wraps(func)
    def wrapper(*args):
        nums = _argnums(argnums, len(args))
        args = list(args)
        with autograd.enable_grad():
            ins = []
            for a in nums:
                args[a] = args[a].detach().requires_grad_(True) if not args[a].requires_grad else args[a].view_as(args[a])
                ins.append(args[a])
            out = func(*args)
            aux = None
            if has_aux:
                out, aux = out
            flat_out = out.reshape(-1)
            rows = [[] for _ in ins]
            for i in range(flat_out.numel()):
                gs = autograd.grad(flat_out[i], ins, retain_graph=True, create_graph=True, allow_unused=True)
                for r, g, x in zip(rows, gs, ins):
                    r.append(g if g is not None else x.new_zeros(x.shape))
        from .._ops.shape import stack
        jacs = [stack(r).reshape(tuple(out.shape) + tuple(x.shape)) if r else
                x.new_zeros(tuple(out.shape) + tuple(x.shape)) for r, x in zip(rows, ins)]
        j = jacs[0] if isinstance(argnums, int) else tuple(jacs)
        return (j, aux) if has_aux else j
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` w.r.t. its ``argnums`` inputs (``torch.func.jacfwd``); computed here by reverse
    mode (the values are the same), so it nests with ``jacrev`` for ``hessian``."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of scalar ``func`` w.r.t. its ``argnums`` inputs, as a function (``torch.func.hessian``)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap --------------------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Map ``func`` over dim ``in_dims`` of its inputs (an int, or a tuple with one entry per positional
    argument, None for an argument that is not mapped) and stack the outputs along ``out_dims``
    (``torch.func.vmap``). ValueError when the mapped sizes differ or nothing is mapped, as torch."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(func, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has structure {len(dims)} but inputs has structure {len(args)}.")
        size = None
        flat_args = []
        for a, d in zip(args, dims):
            leaves, spec = _flatten(a)
            flat_args.append((leaves, spec, d))
            if d is None:
                continue
            for t in leaves:
                if not isinstance(t, Tensor):
                    raise ValueError(f"vmap: Got in_dim={d} for an input but the input is of type {type(t)}. We cannot "
                                     "vmap over non-Tensor arguments, please use None as the respective in_dim")
                n = t.shape[d]
                if size is not None and n != size:
                    raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                     f"sizes {size} and {n} for the mapped dimension")
                size = n
        if size is None:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        results = []
        for i in range(size):
            call = [a if d is None else _unflatten([t.select(d, i) for t in leaves], spec)
                    for a, (leaves, spec, d) in zip(args, flat_args)]
            results.append(func(*call, **kwargs))
        out_leaves = [_flatten(r)[0] for r in results]
        spec = _flatten(results[0])[1]
        odims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(out_leaves[0])
        from .._ops.shape import stack
        stacked = []
        for j, od in enumerate(odims):
            parts = [leaves[j] for leaves in out_leaves]
            if od is None:
                stacked.append(parts[0])
            else:
                if not all(isinstance(p, Tensor) for p in parts):
                    raise ValueError("vmap: `func` must return only tensors (or tuples, lists and dicts of them), "
                                     f"got {type(next(p for p in parts if not isinstance(p, Tensor))).__name__}")
                stacked.append(stack(parts, od if od >= 0 else od + parts[0].dim() + 1))
        return _unflatten(stacked, spec)
    return wrapper
