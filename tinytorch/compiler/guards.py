"""Guards on the Python state a compiled function reads (what Dynamo's guards check before reusing a frame).

A replay skips the Python function, so everything Python could have decided differently must be checked before it:
the values a call read from globals, closure cells, default arguments, the non-tensor arguments, the attributes of
the objects it reaches (modules, optimizers and their ``param_groups``, schedulers, a user's own objects), and the
items of the lists and dicts among them. Python's branches and loop counts follow from those values, so guarding the
values guards the branches.

How the values are found: not by watching each read (Dynamo interprets the bytecode), but by walking what the
function's code can name, before the captured call. The roots are the function itself (its ``__self__``, closure
cells, defaults), the globals its code objects name (``co_names``, nested code objects included), and the arguments;
from a root the walk goes into lists, tuples, dicts, user objects' ``__dict__``, modules' containers and submodules,
and the functions and methods it finds (their own globals and closures). That is more than a call reads, never less
for code that names what it uses; the cost is a guard that fails on a change the graph did not depend on (the
function then runs again, correct and a little slower).

What is checked cheaply elsewhere is left out: a module's scalar attributes (assigning any module attribute bumps
``_lazy.module_version``, one guard for all), tensors (the replay's tensor guards: geometry, dtype, identity).

``GuardSet.check()`` is one generated function (no loop over records): it returns None when every guard holds, or
the index of the first that fails (``GuardSet.describe(i)`` names its source, e.g. ``G['lr']`` or
``opt.param_groups[0]['lr']``). A value that cannot be guarded (an iterator, a generator, a file, more state than
``MAX_GUARDS``) makes the function unreplayable: it runs its Python on every call (``unguardable``).

Source: PyTorch's Dynamo guards, https://pytorch.org/docs/stable/torch.compiler_dynamo_deepdive.html
"""
import builtins
import random as _random
import sys
import types

MAX_GUARDS = 4096  # more Python state than this and the function is not replayed (the check would cost too much)
MAX_ITEMS = 256  # a list, tuple or dict longer than this is guarded by its length (or keys) only
MAX_ARRAY = 4096  # a NumPy array up to this many bytes is guarded by value, a larger one by identity
_SCALARS = (int, float, bool, str, bytes, complex, type(None))
_SKIP_MODULES = ("tinytorch", "builtins", "typing", "abc", "functools", "collections", "enum", "warnings")


class Guard:
    """One check: ``kind`` is 'value' (``read(ref) == value`` with the same type), 'is' (the same object), 'len'
    (the same length) or 'keys' (a dict's keys, in order); ``read`` is a Python expression over ``R`` (the object
    holding the value: a dict, a list, a cell or an object) and ``source`` what the user would call it."""
    __slots__ = ("kind", "read", "ref", "source", "value")

    def __init__(self, kind, ref, read, value, source):
        self.kind, self.ref, self.read, self.value, self.source = kind, ref, read, value, source


class Unguardable(Exception):
    """The function reads a value whose changes a guard cannot see."""


def _user_function(f):
    g = getattr(f, "__globals__", None)
    name = g.get("__name__", "") if g is not None else ""
    return not name.startswith(_SKIP_MODULES)


def _codes(code):
    """``code`` and the code objects nested in it (lambdas, comprehensions, inner functions)."""
    out = [code]
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out.extend(_codes(c))
    return out


def _names(code):
    names = set()
    for c in _codes(code):
        names.update(c.co_names)
    return names


class GuardSet:
    """The guards of one captured call (see the module docstring); ``collect`` builds it, ``check`` runs it."""

    def __init__(self, fn, args, kwargs):
        from .._tensor import Tensor
        from ..nn.modules.module import Module
        from ..optim.optimizer import Optimizer
        self._Tensor, self._Module, self._Optimizer = Tensor, Module, Optimizer
        self.guards = []
        self.reason = None  # why the function cannot be guarded (Unguardable), or None
        self.groups = []  # (optimizer, index, param group, source): guarded by what the call reads (``end``)
        self.proxies = []
        self.mutated = None  # what the captured call changed of the Python state it reads (``end``)
        self._seen = set()
        self._fns = set()
        try:
            self._function(fn, "fn")
            for i, a in enumerate(args):
                self._walk(a, f"args[{i}]")
            for k, v in kwargs.items():
                self._walk(v, f"kwargs[{k!r}]")
            exposed = [grp for grp in self.groups if id(grp[2]) in self._seen]
            for _, _, g, source in exposed:  # reached from elsewhere too: all its values, read by anyone
                self._seen.discard(id(g))
                self._walk(g, source)
            self.groups = [grp for grp in self.groups if grp not in exposed]
        except Unguardable as e:
            self.reason = str(e)
        self._seen = self._fns = None
        self.check = None

    # ---- the parameter groups of optimizers --------------------------------------------------------------------
    def begin(self):
        """Before the captured call: each optimizer's groups are replaced by ``GroupProxy`` copies that note which
        hyperparameters the call reads, and which of those go only into fused optimizer kernels (bound as graph
        inputs, ``Recording.bind_group``)."""
        for opt, i, g, _ in self.groups:
            proxy = GroupProxy(g)
            self.proxies.append((proxy, dict(g)))
            opt.param_groups[i] = proxy

    def end(self):
        """After the captured call: the groups back in place, their guards made from what the call read (a value
        read by Python: its value; a value only bound into a kernel: its type, the replay reads it; a value not
        read: nothing), and ``check`` generated. ``mutated`` says what the call changed, if anything."""
        for (opt, i, g, source), (proxy, before) in zip(self.groups, self.proxies):
            if i < len(opt.param_groups) and opt.param_groups[i] is proxy:
                opt.param_groups[i] = g
            else:
                self.mutated = self.mutated or f"{source} (replaced by the call)"
            proxy.active = False
            if dict(g) != before:
                self.mutated = self.mutated or f"{source} (changed by the call)"
            try:
                self._add("keys", g, "tuple(R)", tuple(g), f"{source}.keys()")
                self._seen, self._fns = set(), set()
                for k in g:
                    if k in proxy.reads or proxy.read_all:
                        self._leaf_or_walk(g[k], g, f"R[{k!r}]", f"{source}[{k!r}]")
                    elif k in proxy.bound:
                        self._add("types", g, f"TYPES(R[{k!r}])", _types(g[k]), f"type of {source}[{k!r}]")
                    if k in proxy.truths and k not in proxy.reads and not proxy.read_all:
                        self._add("value", g, f"bool(R[{k!r}])", bool(g[k]), f"bool({source}[{k!r}])")
            except Unguardable as e:
                self.reason = str(e)
            self._seen = self._fns = None
        self.proxies = []
        if self.reason is None:
            self.check = self._generate()
        if self.mutated is None and self.check is not None:
            failed = self.check()
            if failed is not None:
                self.mutated = self.describe(failed)

    # ---- collecting -------------------------------------------------------------------------------------------
    def _add(self, kind, ref, read, value, source):
        if len(self.guards) >= MAX_GUARDS:
            raise Unguardable(f"it reaches more than {MAX_GUARDS} Python values (the guards would cost more than "
                              "the replay saves)")
        self.guards.append(Guard(kind, ref, read, value, source))

    def _function(self, f, source):
        """The state a function's code can name: its closure cells, defaults, the globals its code names, and
        for a bound method or a module its ``self``."""
        if isinstance(f, self._Module):
            self._walk(f, source)
            f = type(f).forward
        elif isinstance(f, types.MethodType):
            self._walk(f.__self__, f"{source}.__self__")
            f = f.__func__
        elif not isinstance(f, types.FunctionType):
            call = getattr(type(f), "__call__", None)
            if isinstance(call, types.FunctionType) and hasattr(f, "__dict__"):
                self._walk(f, source)
                f = call
            else:
                return
        if id(f) in self._fns or not _user_function(f):
            return
        self._fns.add(id(f))
        code = f.__code__
        name = getattr(f, "__qualname__", "fn")
        for i, cell in enumerate(f.__closure__ or ()):
            var = code.co_freevars[i] if i < len(code.co_freevars) else str(i)
            try:
                v = cell.cell_contents
            except ValueError:
                continue  # an empty cell (assigned later): read when it is filled, guarded as it is now
            self._leaf_or_walk(v, cell, "R.cell_contents", f"{name}.<closure {var}>")
        if f.__defaults__:
            for i, v in enumerate(f.__defaults__):
                self._walk(v, f"{name}.__defaults__[{i}]")
        if f.__kwdefaults__:
            for k, v in f.__kwdefaults__.items():
                self._walk(v, f"{name}.__kwdefaults__[{k!r}]")
        g = f.__globals__
        names = _names(code)
        for n in sorted(names):
            if n not in g:
                continue
            v = g[n]
            if isinstance(v, types.ModuleType):
                self._module_attrs(v, names, f"{name}.<global {n}>")
                continue
            self._leaf_or_walk(v, g, f"R[{n!r}]", f"{name}.<global {n}>")

    def _module_attrs(self, mod, names, source):
        """``mod.attr`` for the attribute names the code uses, where the module holds such an attribute (a
        configuration module's constants)."""
        if mod.__name__.startswith(_SKIP_MODULES) or mod.__name__ in sys.builtin_module_names:
            return
        d = mod.__dict__
        for n in sorted(names):
            if n in d and not isinstance(d[n], (types.ModuleType, type)):
                self._leaf_or_walk(d[n], d, f"R[{n!r}]", f"{source}.{n}")

    def _leaf_or_walk(self, v, ref, read, source):
        """Guard what ``read`` gives (from ``ref``): a scalar by value, anything else by identity, then walk it."""
        if isinstance(v, _SCALARS) or (type(v) is tuple and all(isinstance(x, _SCALARS) for x in v)):
            self._add("value", ref, read, v, source)
            return
        np = sys.modules.get("numpy")
        if np is not None and type(v) is np.ndarray:
            self._add("is", ref, read, v, source)
            if v.nbytes <= MAX_ARRAY:  # values read into a graph as constants (``tensor(arr)``)
                self._add("value", ref, read + ".tobytes()", v.tobytes(), f"{source} (its values)")
            return
        if isinstance(v, (types.ModuleType, type)) or callable(v) and not isinstance(
                v, (types.FunctionType, types.MethodType, self._Module)) and not hasattr(v, "__dict__"):
            return  # a class, a module or a builtin function: what it does is not Python state of the call
        self._add("is", ref, read, v, source)
        self._walk(v, source)

    def _walk(self, v, source):
        if isinstance(v, (*_SCALARS, self._Tensor)) or id(v) in self._seen:
            return
        self._seen.add(id(v))
        t = type(v)
        if t is list or t is tuple:
            if t is list:
                self._add("len", v, "len(R)", len(v), f"len({source})")
            if len(v) > MAX_ITEMS:  # a data set in a list: its length only (its items cost too much to check)
                return
            for i, x in enumerate(v):
                if isinstance(x, self._Tensor):
                    if t is list:  # a slot of a list can be given another tensor
                        self._add("is", v, f"R[{i}]", x, f"{source}[{i}]")
                    continue
                if t is list:
                    self._leaf_or_walk(x, v, f"R[{i}]", f"{source}[{i}]")
                else:
                    self._walk(x, f"{source}[{i}]")
            return
        if t is dict:
            if len(v) > MAX_ITEMS:
                self._add("len", v, "len(R)", len(v), f"len({source})")
                return
            self._add("keys", v, "tuple(R)", tuple(v), f"{source}.keys()")
            for k, x in v.items():
                if isinstance(x, self._Tensor):
                    self._add("is", v, f"R[{k!r}]", x, f"{source}[{k!r}]") if isinstance(k, _SCALARS) else None
                    continue
                if isinstance(k, _SCALARS):
                    self._leaf_or_walk(x, v, f"R[{k!r}]", f"{source}[{k!r}]")
                else:  # a dict keyed by objects (an optimizer's state, keyed by parameters): its values
                    self._walk(x, f"{source}[...]")
            return
        if isinstance(v, (types.GeneratorType, types.CoroutineType)) or hasattr(t, "__next__") or \
                hasattr(v, "readinto"):
            raise Unguardable(f"{source} is a {t.__name__}: what it yields next cannot be guarded")
        if isinstance(v, (types.FunctionType, types.MethodType)):
            self._function(v, source)
            return
        if isinstance(v, self._Module):
            d = v.__dict__  # scalar attributes: the module version guards them; containers are walked
            for k, x in d.items():
                if k in ("_parameters", "_buffers") or k.endswith(("_hooks", "_hooks_with_kwargs")):
                    continue
                if k == "_modules":
                    for name, m in x.items():
                        if m is not None:
                            self._walk(m, f"{source}.{name}")
                    continue
                if not isinstance(x, _SCALARS) and not isinstance(x, self._Tensor):
                    self._walk(x, f"{source}.{k}")
            self._methods(t, source)
            return
        if isinstance(v, self._Optimizer):
            groups = v.param_groups
            self._add("is", v.__dict__, "R['param_groups']", groups, f"{source}.param_groups")
            self._add("len", groups, "len(R)", len(groups), f"len({source}.param_groups)")
            for i, g in enumerate(groups):
                self._add("is", groups, f"R[{i}]", g, f"{source}.param_groups[{i}]")
                self.groups.append((v, i, g, f"{source}.param_groups[{i}]"))
            self._walk(v.defaults, f"{source}.defaults")
            return
        d = getattr(v, "__dict__", None)
        if type(d) is dict and t.__module__ != "builtins":
            if t.__module__.startswith(_SKIP_MODULES):
                return  # tinytorch's own objects (a device, a dtype, a generator): guarded by identity
            for k in list(d):
                x = d[k]
                if isinstance(x, self._Tensor):
                    self._add("is", d, f"R[{k!r}]", x, f"{source}.{k}")
                else:
                    self._leaf_or_walk(x, d, f"R[{k!r}]", f"{source}.{k}")
            self._methods(t, source)

    def _methods(self, cls, source):
        """The globals and closures of a user class's methods (a module's ``forward`` reads its file's globals)."""
        for klass in cls.__mro__:
            if klass.__module__.startswith(_SKIP_MODULES) or klass is object:
                continue
            for name, m in vars(klass).items():
                if isinstance(m, (staticmethod, classmethod)):
                    m = m.__func__
                if isinstance(m, types.FunctionType):
                    self._function(m, f"{source}.{name}")

    # ---- checking ---------------------------------------------------------------------------------------------
    def _generate(self):
        """``check()`` as one function: a line per guard, the objects bound as constants."""
        ns = {"len": len, "tuple": tuple, "type": type, "bool": bool, "TYPES": _types}
        lines = ["def check():", "    try:"]
        for i, g in enumerate(self.guards):
            ns[f"R{i}"], ns[f"V{i}"] = g.ref, g.value
            read = g.read.replace("R", f"R{i}", 1)
            if g.kind == "value":
                ns[f"T{i}"] = type(g.value)
                cond = f"(x := {read}) is not V{i} and (type(x) is not T{i} or x != V{i})"
            elif g.kind == "is":
                cond = f"{read} is not V{i}"
            else:  # 'len', 'keys', 'types'
                cond = f"{read} != V{i}"
            lines.append(f"        if {cond}:")
            lines.append(f"            return {i}")
        lines += ["        pass", "    except Exception:", "        return -1", "    return None"]
        code = "\n".join(lines) + "\n"
        exec(builtins.compile(code, "<tinytorch guards>", "exec"), ns)  # noqa: S102 - our own code
        return ns["check"]

    def describe(self, i):
        """What guard ``i`` (a result of ``check``) watched."""
        if i is None:
            return "no guard failed"
        if i < 0:
            return "a guarded container changed shape (a key or an item is gone)"
        g = self.guards[i]
        return {"value": f"{g.source} == {g.value!r}", "is": f"{g.source} is the same object",
                "len": f"{g.source} == {g.value}", "keys": f"{g.source} == {g.value!r}",
                "types": f"{g.source} == {g.value!r}"}[g.kind]

    def __len__(self):
        return len(self.guards)


def _types(v):
    return tuple(type(x) for x in v) if type(v) is tuple else type(v)


class GroupProxy(dict):
    """An optimizer's parameter group while a compiled call is captured: a copy of the group (writes go to both)
    that notes the keys Python reads (``reads``; ``read_all`` for a read of every value: ``items()``, a copy) and
    the keys read only into fused optimizer kernels (``bound``, by ``optim.optimizer._fused``) or, besides that,
    only for whether they are zero (``truths``, by ``optim.optimizer._nonzero``)."""

    def __init__(self, group):
        super().__init__(group)
        self.orig = group
        self.reads, self.bound, self.truths = set(), set(), set()
        self.read_all = False
        self.active = True

    def __getitem__(self, k):
        if self.active:
            self.reads.add(k)
        return dict.__getitem__(self, k)

    def get(self, k, default=None):
        if self.active:
            self.reads.add(k)
        return dict.get(self, k, default)

    def __setitem__(self, k, v):
        dict.__setitem__(self.orig, k, v)
        dict.__setitem__(self, k, v)

    def setdefault(self, k, default=None):
        if k not in self:
            self[k] = default
        return self[k]

    def _all(self):
        if self.active:
            self.read_all = True

    def items(self):
        self._all()
        return dict.items(self)

    def values(self):
        self._all()
        return dict.values(self)

    def copy(self):
        self._all()
        return dict(dict.items(self))

    def __reduce_ex__(self, protocol):
        self._all()
        return dict, (dict(dict.items(self)),)

    def update(self, *a, **kw):
        dict.update(self.orig, *a, **kw)
        dict.update(self, *a, **kw)

    def pop(self, k, *default):
        dict.pop(self.orig, k, *default)
        return dict.pop(self, k, *default)


def python_rng_state():
    """A cheap fingerprint of Python's and NumPy's global random generators: a call that draws from them cannot
    be replayed (the replay would reuse the numbers of the captured call)."""
    st = _random.getstate()
    fp = (st[1][-1], hash(st[1][:8]))
    np = sys.modules.get("numpy")
    if np is not None:
        s = np.random.get_state(legacy=False)
        fp += (s["state"]["pos"], hash(s["state"]["key"][:4].tobytes()))
    return fp
