"""``optim.Optimizer``: param_groups, per-parameter state, state_dict, zero_grad, add_param_group."""
import copy
from collections import OrderedDict, defaultdict

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..utils.hooks import RemovableHandle


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


def check_range(**values):
    """PyTorch's argument checks: each named hyperparameter must be >= 0 (ValueError naming it otherwise)."""
    names = {"lr": "learning rate", "eps": "epsilon value", "weight_decay": "weight_decay value",
             "momentum": "momentum value", "alpha": "alpha value", "lr_decay": "lr_decay value",
             "initial_accumulator_value": "initial_accumulator_value value",
             "momentum_decay": "momentum_decay value"}
    for k, v in values.items():
        if not v >= 0.0:
            raise ValueError(f"Invalid {names.get(k, k)}: {v}")


def check_betas(betas):
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def _init_step():
    """A fresh ``state['step']``. PyTorch keeps the step count as a 0-d float32 tensor on the CPU (not a
    Python int), so a state_dict moves between tinytorch and torch, through ``save``/``load``, unchanged."""
    from .._ops.creation import tensor
    from .._dtype import float32
    return tensor(0.0, dtype=float32)


def _bump_step(state):
    """Add 1 to ``state['step']`` in place and return the new count as a Python float (torch's ``_get_value``).
    A plain number (a state_dict written before the count was a tensor) first becomes a float32 tensor, as
    torch's optimizers' ``__setstate__`` converts it."""
    step = state["step"]
    if not isinstance(step, Tensor):
        from .._ops.creation import tensor
        from .._dtype import float32
        step = state["step"] = tensor(float(step), dtype=float32)
    step.add_(1)
    return step.item()


def _step_tensor(state):
    """``state['step']`` as the 0-d float32 tensor a multi-tensor update bumps (a plain number from an older
    state_dict is converted first, as in ``_bump_step``)."""
    step = state["step"]
    if not isinstance(step, Tensor):
        from .._ops.creation import tensor
        from .._dtype import float32
        step = state["step"] = tensor(float(step), dtype=float32)
    return step


def _fused(op, group, hyper, *args, **kw):
    """``op(*args, **kw)`` with the group's hyperparameters added as keyword arguments: ``hyper`` maps each keyword
    to its key in ``group`` (or ``(key, index)`` for an entry of a tuple such as ``betas``). While a compiled call
    is captured they become inputs of the graph (``Recording.bind_group``): a replay reads them from the group
    again, so a learning rate a scheduler changes every step neither recompiles nor reruns the step's Python."""
    values = {}
    for name, src in hyper.items():
        key, index = (src, None) if type(src) is str else src
        v = dict.__getitem__(group, key)  # not a read the capture guards: bound below
        values[name] = v if index is None else v[index]
    op(*args, **values, **kw)
    from .._modes import _lazy
    if _lazy.active and _lazy.recording is not None:
        _lazy.recording.bind_group(op.__name__, values, group, hyper)


def _nonzero(group, key):
    """Whether ``group[key]`` is nonzero (a momentum that switches the buffers on), noted under a guarded capture as
    the only use Python makes of it: its value can then change between replays (a momentum schedule) as long as it
    stays nonzero, the kernels reading it as a graph input (``_fused``)."""
    from ..compiler.guards import GroupProxy
    if type(group) is GroupProxy and group.active:
        group.truths.add(key)
    return bool(dict.__getitem__(group, key))


def _multi_tensor(group):
    """Whether ``group``'s update runs as one multi-tensor op over all its params (the default,
    ``foreach=None``/``fused=None``, as torch's foreach/fused paths): not with ``differentiable=True``, nor
    ``foreach=False`` (the per-tensor loop asked for), nor with complex params (updated per tensor, as torch
    updates their real views)."""
    if group.get("differentiable") or (group.get("foreach") is False and not group.get("fused")):
        return False
    for p in group["params"]:
        if p.dtype.is_complex:
            return False
    return True


def _by_device_and_dtype(params, *lists):
    """``(params, *lists)`` split by the params' device and dtype (torch's ``_group_tensors_by_device_and_dtype``):
    one multi-tensor call per kind of tensor; a list that is None stays None."""
    kinds = {}
    for i, p in enumerate(params):
        kinds.setdefault((p._storage.device, p.dtype), []).append(i)
    if len(kinds) <= 1:
        return [(params,) + lists]
    return [([params[i] for i in idx],) + tuple(None if ls is None else [ls[i] for i in idx] for ls in lists)
            for idx in kinds.values()]


def _cast_state(param, value, step_on_device, key=None):
    """One saved state value placed as torch's ``Optimizer.load_state_dict`` places it: tensors follow the
    parameter's device (and floating dtype), ``step`` is left as saved, containers are cast element-wise."""
    if isinstance(value, Tensor):
        if key == "step":
            if step_on_device:
                from .._dtype import float32
                return value.to(dtype=float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, step_on_device, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, step_on_device) for v in value)
    return value


_CAPTURABLE_DEVICES = ("cuda", "xpu", "hpu")


def _check_step_flags(opt):
    """The checks PyTorch's ``step`` makes of the ``differentiable`` and ``capturable`` options before it changes
    a parameter (after the step pre-hooks, as there).

    ``differentiable``: the optimizers whose step runs under ``set_grad_enabled(defaults['differentiable'])``
    (``_differentiable_step``) raise its TypeError for a value that is not a bool. ``capturable``: a group with a
    true ``capturable`` whose params with gradients are not on a CUDA-like device raises AssertionError naming the
    per-parameter lists the class keeps (``_capturable_lists``: the single-tensor and the ``foreach=True``
    wording, and whether each path's device list names 'xla'). Raised before any state is created, so a failed
    step leaves the optimizer as it was."""
    cls = type(opt)
    if getattr(cls, "_differentiable_step", False):
        flag = opt.defaults.get("differentiable", False)
        if flag.__class__ is not bool:
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, not "
                            f"{type(flag).__name__}")
    lists = getattr(cls, "_capturable_lists", None)
    if lists is None:
        return
    for g in opt.param_groups:
        if not g.get("capturable"):
            continue
        if all(p._grad is None or p.device.type in _CAPTURABLE_DEVICES for p in g["params"]):
            continue
        path = 1 if g.get("foreach") is True else 0
        devices = list(_CAPTURABLE_DEVICES) + ["privateuseone"] + (["xla"] if lists[2 + path] else [])
        raise AssertionError(f"If capturable=True, {lists[path]} must be on supported devices: {devices}.")


def _with_step_hooks(step):
    import functools

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        hooks = self.__dict__.get("_step_hooks")
        if not hooks:
            _check_step_flags(self)
            return step(self, *args, **kwargs)
        for hook in list(hooks["pre"].values()):
            r = hook(self, args, kwargs)
            if r is not None:
                if not (isinstance(r, tuple) and len(r) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {r}.")
                args, kwargs = r
        _check_step_flags(self)
        out = step(self, *args, **kwargs)
        for hook in list(hooks["post"].values()):
            hook(self, args, kwargs)
        return out
    wrapper._hooked = True
    return wrapper


class Optimizer:
    """Base class: ``params`` is an iterable of tensors or of dicts (parameter groups with their own options)."""

    def __init_subclass__(cls, **kwargs):
        # every optimizer's step runs its step hooks (PyTorch patches step the same way)
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _with_step_hooks(step)

    def _hook_table(self, kind):
        hooks = self.__dict__.setdefault("_step_hooks", {"pre": OrderedDict(), "post": OrderedDict()})
        handle = RemovableHandle(hooks[kind])
        return hooks[kind], handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each ``step``; it may return (new_args, new_kwargs)."""
        table, handle = self._hook_table("pre")
        table[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each ``step``."""
        table, handle = self._hook_table("post")
        table[handle.id] = hook
        return handle

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            f"got {params.type()}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Add a group (dict with 'params' and options; missing options come from the defaults)."""
        params = param_group["params"]
        param_group["params"] = [params] if isinstance(params, Tensor) else list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + type(p).__name__)
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for k, v in self.defaults.items():
            if v is required and k not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            param_group.setdefault(k, v)
        existing = set(id(p) for g in self.param_groups for p in g["params"])
        if any(id(p) in existing for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset gradients: to None (default) or to zeros in place."""
        from .._tensor import reset_grads
        reset_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [options + 'params': indices]} as PyTorch."""
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = ids
            groups.append(d)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore per-parameter state and group options from ``state_dict`` (as ``state_dict()`` returns, or as
        ``torch.optim``'s, e.g. read back with ``load``). Saved state is matched to the parameters by position.

        As PyTorch: each state tensor is cast to its parameter's device (and, for a floating-point parameter,
        its dtype), except ``step``, which stays the 0-d float32 tensor it was (moved to the parameter's device
        only for a ``capturable``/``fused`` group); state of unknown indices is kept as is. Raises ValueError
        when the number of groups, or of parameters in a group, differs."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        params = []
        for g, sg in zip(self.param_groups, groups):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
            params.extend((pid, p, sg) for pid, p in zip(sg["params"], g["params"]))
        idmap = {pid: (p, sg) for pid, p, sg in params}
        self.state = defaultdict(dict)
        for k, s in state_dict["state"].items():
            if k in idmap:
                p, sg = idmap[k]
                self.state[p] = _cast_state(p, s, bool(sg.get("capturable") or sg.get("fused")))
            else:
                self.state[k] = s
        for g, sg in zip(self.param_groups, groups):
            for k, v in sg.items():
                if k != "params":
                    g[k] = copy.deepcopy(v)  # as torch: options are not shared with the state_dict

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _grads(group):
        """(param, gradient) for the params of ``group`` that have one; negated when the group maximizes."""
        for p in group["params"]:
            grad = p._grad
            if grad is not None:
                yield p, (-grad if group.get("maximize") else grad)

    @staticmethod
    def _weight_decay(p, grad, lr, weight_decay, decoupled):
        """L2 penalty added to the gradient, or decoupled decay of the parameter (AdamW, Loshchilov & Hutter)."""
        if weight_decay:
            if decoupled:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad + p * weight_decay
        return grad

    def _closure(self, closure):
        if closure is None:
            return None
        from ..autograd.grad_mode import enable_grad
        with enable_grad():
            return closure()

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += f"\nParameter Group {i}"
            for k in sorted(g):
                if k != "params":
                    s += f"\n    {k}: {g[k]}"
        return s + "\n)"


__all__ = ["Optimizer", "required", "no_grad"]
