"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

from .module import Module


class Sequential(Module):
    r"""Modules applied in order; built from positional modules or an OrderedDict of named ones. The output of
    each is the input of the next; it indexes, slices, appends and iterates like a list.

    Args:
        args: the modules, or one ``OrderedDict`` of them by name.

    Examples::

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> model(torch.randn(3, 4)).shape
        torch.Size([3, 2])
        >>> from collections import OrderedDict
        >>> nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
        Sequential(
          (fc): Linear(in_features=2, out_features=2, bias=True)
          (act): Tanh()
        )
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        if not -len(keys) <= idx < len(keys):
            raise IndexError(f"index {idx} is out of range")
        return self._modules[keys[idx]]

    def __setitem__(self, idx, module):
        self._modules[list(self._modules)[idx]] = module

    def __delitem__(self, idx):
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else [keys[idx]]):
            del self._modules[k]
        # renumber, as torch does, so the keys stay 0..n-1
        mods = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for m in sequential:
            self.append(m)
        return self

    def insert(self, index, module):
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)
        return self

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(other)


class ModuleList(Module):
    r"""A list of modules whose parameters the parent registers (a plain Python list would hide them from
    ``parameters()``, ``to()`` and ``state_dict()``).

    Args:
        modules (iterable, optional): the modules to start with.

    Examples::

        >>> layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        >>> layers.append(nn.Linear(4, 2))
        ModuleList(
          (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
          (3): Linear(in_features=4, out_features=2, bias=True)
        )
        >>> x = torch.randn(1, 4)
        >>> for layer in layers:
        ...     x = layer(x)
        >>> x.shape, len(list(layers.parameters()))
        (torch.Size([1, 2]), 8)
    """

    def __repr__(self):
        # as torch: a run of children with the same repr prints once, as "(i-j): n x <repr>"
        reprs = [repr(m) for m in self._modules.values()]
        if not reprs:
            return type(self).__name__ + "()"
        runs = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for a, b, r in runs:
            entry = f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}"
            lines.append(entry.replace("\n", "\n  "))
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return self._modules[str(idx % n)]

    def __setitem__(self, idx, module):
        self.add_module(str(idx % len(self)), module)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


class ModuleDict(Module):
    r"""A dict of named modules, registered with the parent in insertion order.

    Args:
        modules (mapping or iterable of pairs, optional): the named modules to start with.

    Examples::

        >>> acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
        >>> acts["relu"](torch.tensor([-1., 1.]))
        tensor([0., 1.])
        >>> list(acts.keys())
        ['relu', 'tanh']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules):
        items = modules.items() if hasattr(modules, "items") else modules
        for k, m in items:
            self.add_module(k, m)

    def pop(self, key):
        return self._modules.pop(key)


def _params_repr(items, type_name):
    """torch's extra_repr of ParameterList / ParameterDict: one indented line per parameter."""
    lines = []
    for k, p in items:
        dev = "" if p.device.type == "cpu" else f" ({p.device})"
        lines.append(f"  ({k}): Parameter containing: [{type_name(p)} of size {'x'.join(map(str, p.shape))}{dev}]")
    return "\n".join(lines)


class ParameterList(Module):
    r"""A list of parameters registered with the parent module (tensors put in are made Parameters).

    Args:
        values (iterable, optional): the parameters to start with.

    Examples::

        >>> params = nn.ParameterList(nn.Parameter(torch.ones(2)) for _ in range(3))
        >>> len(params), sum(p.numel() for p in params)
        (3, 6)
    """
    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value):
        from ..parameter import Parameter
        self.register_parameter(str(len(self._parameters)),
                                value if isinstance(value, Parameter) else Parameter(value))
        return self

    def __getitem__(self, i):
        return self._parameters[str(i % len(self._parameters))]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def __setitem__(self, i, p):
        from ..parameter import Parameter
        self.register_parameter(str(i % len(self._parameters)), p if isinstance(p, Parameter) else Parameter(p))

    def extra_repr(self):
        return _params_repr(self._parameters.items(), lambda p: str(p.dtype))


class ParameterDict(Module):
    r"""A dict of named parameters registered with the parent module (tensors put in are made Parameters).

    Args:
        parameters (mapping or iterable of pairs, optional): the named parameters to start with.

    Examples::

        >>> params = nn.ParameterDict({"scale": nn.Parameter(torch.ones(3))})
        >>> params["shift"] = nn.Parameter(torch.zeros(3))
        >>> sorted(params.keys())
        ['scale', 'shift']
    """
    def __init__(self, parameters=None):
        super().__init__()
        for k, v in (parameters or {}).items():
            self[k] = v

    def __setitem__(self, k, p):
        from ..parameter import Parameter
        self.register_parameter(k, p if isinstance(p, Parameter) else Parameter(p))

    def __getitem__(self, k):
        return self._parameters[k]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def extra_repr(self):
        return _params_repr(self._parameters.items(), lambda p: p.type())

    def values(self):
        return self._parameters.values()
