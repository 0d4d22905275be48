"""``nn.Module``: parameters, buffers and submodules with PyTorch's bookkeeping and state_dict keys."""
import warnings
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..._modes import bump_module_version
from ..parameter import Buffer, Parameter
from ...utils.hooks import RemovableHandle


def _grad_enabled():
    from ...autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def _backward_hook_fns():
    """Identity autograd Functions around a module's inputs and outputs: the one on the outputs records the
    output gradients (after the backward pre-hooks), the one on the inputs calls the full backward hooks with
    (grad_input, grad_output) and passes on what they return (PyTorch's BackwardHook)."""
    from ...autograd.function import Function

    class _InputHook(Function):
        @staticmethod
        def forward(ctx, state, *xs):
            ctx.state = state
            outs = tuple(x.view_as(x) for x in xs)
            # inputs that do not require grad stay so; their grad_input entries are zeros, as in torch
            ctx.mark_non_differentiable(*(o for o, x in zip(outs, xs) if not x.requires_grad))
            return outs

        @staticmethod
        def backward(ctx, *grads):
            st = ctx.state
            grad_input = list(st["template"])
            for pos, g in zip(st["positions"], grads):
                grad_input[pos] = g
            grad_input = tuple(grad_input)
            for hook in list(st["module"]._backward_hooks.values()):
                r = hook(st["module"], grad_input, st["grad_output"])
                if r is not None:
                    grad_input = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            return (None,) + tuple(grad_input[p] for p in st["positions"])

    class _OutputHook(Function):
        @staticmethod
        def forward(ctx, state, *ys):
            ctx.state = state
            return tuple(y.view_as(y) for y in ys)

        @staticmethod
        def backward(ctx, *grads):
            st = ctx.state
            mod = st["module"]
            for hook in list(mod.__dict__.get("_backward_pre_hooks", {}).values()):
                r = hook(mod, grads)
                if r is not None:
                    grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            st["grad_output"] = grads
            if not st["positions"] and mod._backward_hooks:  # no input needs a gradient: grad_input of Nones now
                import warnings
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.")
                for hook in list(mod._backward_hooks.values()):
                    hook(mod, st["template"], grads)
            return (None,) + tuple(grads)
    return _InputHook, _OutputHook


_HOOK_FNS = []


def _wrap_inputs_for_backward_hooks(module, args):
    if not _HOOK_FNS:
        _HOOK_FNS.extend(_backward_hook_fns())
    # every tensor argument is wrapped (and gets a gradient) once one of them requires grad, as in torch
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    if not any(args[i].requires_grad for i in positions):
        positions = []
    state = {"module": module, "positions": positions, "template": (None,) * len(args), "grad_output": None}
    if positions:
        wrapped = _HOOK_FNS[0].apply(state, *(args[i] for i in positions))
        args = list(args)
        for i, w in zip(positions, wrapped if isinstance(wrapped, tuple) else (wrapped,)):
            args[i] = w
        args = tuple(args)
    return args, state


def _wrap_outputs_for_backward_hooks(module, out, state):
    outs = out if isinstance(out, tuple) else (out,)
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not idx:
        return out
    wrapped = _HOOK_FNS[1].apply(state, *(outs[i] for i in idx))
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    outs = list(outs)
    for i, w in zip(idx, wrapped):
        outs[i] = w
    return tuple(outs) if isinstance(out, tuple) else outs[0]


def _old_batch_norm(state_dict, key):
    """Whether ``state_dict`` records a batch norm of version < 2 (or no version) at ``key``'s module."""
    meta = getattr(state_dict, "_metadata", None) or {}
    version = meta.get(key[:-len(".num_batches_tracked")], {}).get("version")
    return version is None or version < 2


def _run_always_called_hooks(module, flags, args, kwargs):
    """After forward raised: the ``always_call`` forward hooks run with output None, their own errors turned
    into warnings, as in torch; the caller then re-raises."""
    import warnings
    out = None
    for hid, hook in list(module._forward_hooks.items()):
        with_kwargs, always = flags.get(hid, (False, False))
        if not always:
            continue
        try:
            r = hook(module, args, kwargs, out) if with_kwargs else hook(module, args, out)
            if r is not None:
                out = r
        except Exception as e:
            warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced as another "
                          f"error was raised in forward: {e}")


class _IncompatibleKeys(tuple):
    def __new__(cls, missing_keys, unexpected_keys):
        t = tuple.__new__(cls, (missing_keys, unexpected_keys))
        t.missing_keys, t.unexpected_keys = missing_keys, unexpected_keys
        return t

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


# the state_dict key suffix of a module's get_extra_state() (torch.nn.modules.module._EXTRA_STATE_KEY_SUFFIX)
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class Module:
    """Base class of all layers (``torch.nn.Module``).

    Attributes that are Parameters, Modules or registered buffers are tracked in ``_parameters``,
    ``_modules`` and ``_buffers``; ``state_dict`` keys are their dotted paths, as in PyTorch.

    A model subclasses it, assigns its layers in ``__init__`` (after ``super().__init__()``) and computes
    in ``forward``; calling the module runs ``forward`` with the hooks around it.

    Examples::

        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> net = Net()
        >>> net(torch.randn(3, 4)).shape
        torch.Size([3, 2])
        >>> list(net.state_dict())
        ['fc.weight', 'fc.bias']
    """

    training = True
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call")
        if compiled is not None and not compiled.__dict__.get("_inside"):
            compiled._inside = True
            try:
                return compiled(*args, **kwargs)
            finally:
                compiled._inside = False
        if self._forward_pre_hooks:
            with_kwargs = self.__dict__.get("_forward_pre_hooks_with_kwargs", ())
            for hid, hook in list(self._forward_pre_hooks.items()):
                if hid in with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if not (isinstance(r, tuple) and len(r) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {r}.")
                        args, kwargs = r
                else:
                    r = hook(self, args)
                    if r is not None:
                        args = r if isinstance(r, tuple) else (r,)
        state = None
        if (self._backward_hooks or self.__dict__.get("_backward_pre_hooks")) and _grad_enabled():
            args, state = _wrap_inputs_for_backward_hooks(self, args)
        if not self._forward_hooks:
            out = self.forward(*args, **kwargs)
        else:
            flags = self.__dict__.get("_forward_hook_flags", {})  # hook id -> (with_kwargs, always_call)
            try:
                out = self.forward(*args, **kwargs)
            except Exception:
                _run_always_called_hooks(self, flags, args, kwargs)
                raise
            for hid, hook in list(self._forward_hooks.items()):
                r = hook(self, args, kwargs, out) if flags.get(hid, (False,))[0] else hook(self, args, out)
                if r is not None:
                    out = r
        if state is not None:
            out = _wrap_outputs_for_backward_hooks(self, out, state)
        return out

    # ---- attribute bookkeeping ----
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        bump_module_version()  # a compiled replay assumed the modules as they were
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' (torch.nn.Parameter or "
                                "None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, keep="_modules")
            d["_modules"][name] = value
        elif d.get("_modules") is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' (torch.nn.Module or "
                                "None expected)")
            d["_modules"][name] = None
        elif isinstance(value, Buffer) or (d.get("_buffers") is not None and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (torch.Tensor or None "
                                "expected)")
            if isinstance(value, Buffer):  # nn.Buffer: register it, with its persistent flag
                if d.get("_buffers") is None:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                self._remove_from(name, keep="_buffers")
                self.register_buffer(name, value, value.persistent)
            else:
                d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _remove_from(self, name, keep=None):
        # the store being assigned keeps its entry, so re-assigning a child or parameter keeps its position in
        # named_children / state_dict (as torch; fuse_modules and pruning replace children in place)
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store == keep:
                continue
            s = d.get(store)
            if s is not None:
                s.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name):
        bump_module_version()
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[store]:
                del self.__dict__[store][name]
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return list(super().__dir__()) + list(self._parameters) + list(self._buffers) + list(self._modules)

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter or None) under ``name``; KeyError/TypeError for bad names or values."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' (torch.nn.Parameter "
                            "or None required)")
        self._parameters[name] = param
        bump_module_version()

    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer (saved in state_dict unless ``persistent=False``)."""
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        self._buffers[name] = tensor
        bump_module_version()
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        self._modules[name] = module
        bump_module_version()

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target):
        mod, _, name = target.rpartition(".")
        return self.get_submodule(mod)._parameters[name]

    def get_buffer(self, target):
        """The buffer at dotted path ``target``; AttributeError when there is none."""
        mod, _, name = target.rpartition(".")
        m = self.get_submodule(mod)
        if name not in m._buffers:
            raise AttributeError(f"{type(m).__name__} has no attribute `{name}`")
        return m._buffers[name]

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        parent, _, name = target.rpartition(".")
        mod = self.get_submodule(parent)
        if strict and name not in mod._modules:
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        setattr(mod, name, module)

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save non-tensor state in the state_dict under
        ``_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue.")

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    # ---- iteration ----
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self, remove_duplicate=True):
        """Every module of the tree, this one first (each once unless ``remove_duplicate`` is False)."""
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mp, m in mods:
            for k, v in getattr(m, store).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mp + ("." if mp else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, Parameter) pairs, shared parameters listed once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and conversion ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        bump_module_version()
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default)."""
        from ..._tensor import reset_grads
        reset_grads(self.parameters(), set_to_none)

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on ``self``."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for k, p in self._parameters.items():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new
                    if p._grad is not None:
                        p._grad = fn(p._grad)
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        bump_module_version()
        return self

    def to(self, *args, **kwargs):
        """Move/cast parameters and buffers in place: ``to(device)``, ``to(dtype)`` (floating only), ``to(tensor)``."""
        from ..._ops.creation import _parse_to
        dtype, dev = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def conv(t):
            return t.to(device=dev, dtype=dtype if t.is_floating_point() else None)
        return self._apply(conv)

    def to_empty(self, *, device, recurse=True):
        """Replace every parameter and buffer by an uninitialized tensor of the same shape on ``device`` (after
        building a model on the ``meta`` device; initialize it afterwards, e.g. with ``reset_parameters``)."""
        from ..._ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device))

    def compile(self, *args, **kwargs):
        """``Module.compile``: compile this module's calls in place, with ``tinytorch.compile``'s arguments (its
        forward is recorded and run as graphs; see ``tinytorch.compiler``). Returns None, as PyTorch's."""
        from ...compiler.api import CompiledFunction
        from ...compiler import compile as _compile
        _compile(lambda: None, *args, **kwargs)  # the arguments' checks
        call = type(self).__call__
        compiled = CompiledFunction(lambda *a, **k: call(self, *a, **k), *args, **kwargs)
        compiled.module = self
        self.__dict__["_compiled_call"] = compiled

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        """Move parameters and buffers to ``cuda:device`` (``cuda:0`` when None), as ``nn.Module.cuda``; the
        ``no_cuda`` AssertionError where the cuda device is unavailable."""
        return self.to(_cuda_device(device))

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        from ... import _dtype
        return self._cast(_dtype.float32)

    def double(self):
        from ... import _dtype
        return self._cast(_dtype.float64)

    def half(self):
        from ... import _dtype
        return self._cast(_dtype.float16)

    def bfloat16(self):
        from ... import _dtype
        return self._cast(_dtype.bfloat16)

    def type(self, dst_type):
        """Every parameter and buffer converted with ``Tensor.type(dst_type)``, integer buffers included (as
        ``nn.Module.type``; ValueError for a Python type such as ``float``, which ``to`` accepts)."""
        return self._apply(lambda t: t.type(dst_type))

    # ---- state dict ----
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """OrderedDict of parameters and persistent buffers keyed by dotted name (detached unless keep_vars).

        Positional ``destination, prefix, keep_vars`` still work with PyTorch's FutureWarning (it deprecates
        them)."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # per-module {"version": cls._version}, as torch records
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        hooks = self.__dict__.get("_state_dict_hooks")
        if hooks:
            for hook in list(hooks["pre"].values()):
                hook(self, prefix, keep_vars)
        for k, p in self._parameters.items():
            if p is not None:
                destination[prefix + k] = p if keep_vars else p.detach()
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent_buffers_set:
                destination[prefix + k] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()
        for k, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + k + ".", keep_vars=keep_vars)
        if hooks:
            for hook in list(hooks["post"].values()):
                r = hook(self, destination, prefix, local_metadata)
                if r is not None:
                    destination = r
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from ``state_dict`` into parameters/buffers (in place, shapes must match).

        ``strict``: RuntimeError listing missing and unexpected keys. Returns (missing, unexpected).
        """
        missing, unexpected, errors = [], [], []
        hooked = [(name, m) for name, m in self.named_modules() if m.__dict__.get("_load_state_dict_pre_hooks")]
        if hooked:
            state_dict = dict(state_dict)  # hooks may rename keys; the caller's dict is left alone
            for name, m in hooked:
                for hook in list(m.__dict__["_load_state_dict_pre_hooks"].values()):
                    hook(state_dict, name + "." if name else "", {}, strict, missing, unexpected, errors)
        own = {}
        for name, m in self.named_modules():
            pre = name + "." if name else ""
            for k, p in m._parameters.items():
                if p is not None:
                    own[pre + k] = (m, "_parameters", k)
            for k, b in m._buffers.items():
                if b is not None and k not in m._non_persistent_buffers_set:
                    own[pre + k] = (m, "_buffers", k)
        for name, m in self.named_modules():
            if m._has_extra_state():
                key = (name + "." if name else "") + _EXTRA_STATE_KEY_SUFFIX
                if key in state_dict:
                    m.set_extra_state(state_dict[key])
                    own[key] = None
                elif strict:
                    missing.append(key)
        for key, entry in own.items():
            if entry is None:
                continue
            m, store, k = entry
            if key not in state_dict:
                if k == "num_batches_tracked" and _old_batch_norm(state_dict, key):
                    continue  # a checkpoint from before the counter existed: keep the current count, as torch
                missing.append(key)
                continue
            src = state_dict[key]
            dst = getattr(m, store)[k]
            if not isinstance(src, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                              f"from checkpoint but received {type(src)}")
                continue
            if src._shape != dst._shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {src.shape} from checkpoint, the "
                              f"shape in current model is {dst.shape}.")
                continue
            with no_grad():
                dst.copy_(src)
        for key in state_dict:
            if key not in own:
                unexpected.append(key)
        result = _IncompatibleKeys(missing, unexpected)
        for _, m in self.named_modules():
            for hook in list((m.__dict__.get("_state_dict_hooks") or {}).get("load_post", {}).values()):
                hook(m, result)  # may edit the missing / unexpected lists in place, before the strict check
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        return result

    # ---- hooks ----
    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)`` (with
        ``with_module``, the module first) runs before ``load_state_dict`` reads this module's keys, and may
        rename or convert entries of ``state_dict``."""
        fn = (lambda *a: hook(self, *a)) if with_module else hook
        table = self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict())
        handle = RemovableHandle(table)
        table[handle.id] = fn
        return handle

    def _state_dict_hook_table(self, kind):
        table = self.__dict__.setdefault("_state_dict_hooks", {"pre": OrderedDict(), "post": OrderedDict(),
                                                               "load_post": OrderedDict()})[kind]
        handle = RemovableHandle(table)
        return table, handle

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module's entries."""
        table, handle = self._state_dict_hook_table("pre")
        table[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` after this module's entries (and its children's)
        are in ``state_dict``; it may edit it in place."""
        table, handle = self._state_dict_hook_table("post")
        table[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook  # the older name (it may also return a new dict)

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` after ``load_state_dict``; it may edit
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place before the strict check."""
        table, handle = self._state_dict_hook_table("load_post")
        table[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` before ``load_state_dict`` reads this module's keys (``Module.register_load_state_dict_pre_hook``)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)`` with ``with_kwargs``) after
        every forward; a non-None return replaces the output. ``always_call`` also runs it, with output None,
        when forward raises. ``prepend`` puts it before the hooks already registered."""
        flags = self.__dict__.setdefault("_forward_hook_flags", OrderedDict())
        handle = RemovableHandle(self._forward_hooks, extra_dict=flags)
        self._forward_hooks[handle.id] = hook
        if with_kwargs or always_call:
            flags[handle.id] = (with_kwargs, always_call)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args) -> None or new args`` before every forward; with ``with_kwargs``,
        ``hook(module, args, kwargs) -> None or (new_args, new_kwargs)`` (RuntimeError for anything else)."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self.__dict__.setdefault("_forward_pre_hooks_with_kwargs", set()).add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None or new grad_input``, called when the gradients of the
        module's inputs are computed: grad_input has one entry per positional argument (None for arguments
        that are not tensors requiring grad), grad_output one per tensor output."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None or new grad_output``, called when the gradients of the module's
        outputs are known, before those of its inputs are computed."""
        table = self.__dict__.setdefault("_backward_pre_hooks", OrderedDict())
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    # ---- repr ----
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        child = []
        for k, m in self._modules.items():
            r = repr(m).split("\n")
            r = [r[0]] + ["  " + x for x in r[1:]]
            child.append(f"({k}): " + "\n".join(r))
        lines += child
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not child:
                main += lines[0]
            else:
                # as torch: each child's own lines are indented once (above), then every entry once more
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state):
        self.__dict__.update(state)


def _cuda_device(device):
    if device is None:
        return "cuda"
    return f"cuda:{device}" if isinstance(device, int) else device
