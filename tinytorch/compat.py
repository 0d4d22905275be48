"""Make ``import torch`` resolve to tinytorch, so unmodified PyTorch programs run on it.

``tinytorch.compat.install()`` adds an import hook: ``torch`` is ``tinytorch`` and ``torch.X.Y`` is
``tinytorch.X.Y``. A submodule tinytorch lacks raises ModuleNotFoundError naming the tinytorch module it
looked for, and a missing attribute raises the usual AttributeError: never a silent stand-in.
``python -m tinytorch.run script.py [args]`` runs a script with the hook installed.

``torch`` itself is a module of its own that holds every name of ``tinytorch`` (``torch.Tensor is
tinytorch.Tensor``; submodules such as ``torch.nn`` are tinytorch's), except ``__version__``: a program sees the
PyTorch version whose API tinytorch follows (see :mod:`tinytorch.version` for the policy), and so does
``importlib.metadata.version("torch")`` while the hook is installed; nothing is written to disk, so pip never
believes PyTorch is installed. Names set on either module are set on both.
"""
import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import os
import re
import sys
import types

_ALIAS = "torch"
_TARGET = "tinytorch"


def _target_name(fullname):
    return _TARGET + fullname[len(_ALIAS):]


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch[.X]`` and loads it as the already-imported ``tinytorch[.X]`` module object."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        name = _target_name(fullname)
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            raise ModuleNotFoundError(f"No module named '{fullname}': tinytorch has no module '{name}' "
                                      f"(tinytorch.compat maps torch.* to tinytorch.*)", name=fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package=spec.submodule_search_locations is not None)

    def create_module(self, spec):
        if spec.name == _ALIAS:
            return sys.modules.get(_ALIAS) if isinstance(sys.modules.get(_ALIAS), _TorchModule) else _torch_module()
        return importlib.import_module(_target_name(spec.name))

    def exec_module(self, module):
        pass  # the tinytorch module is already executed


    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        """The ``torch`` distribution's metadata, found before any installed one (``importlib.metadata`` asks every
        finder on ``sys.meta_path`` and takes the first answer)."""
        if context.name is None or re.sub(r"[-_.]+", "-", context.name).lower() == _ALIAS:
            return [_TorchDistribution()]
        return []


class _TorchDistribution(importlib.metadata.Distribution):
    """What ``importlib.metadata.distribution("torch")`` returns under the swap: the name and version, no files."""

    def read_text(self, filename):
        from . import version
        if filename in ("METADATA", "PKG-INFO"):
            return (f"Metadata-Version: 2.1\nName: {_ALIAS}\nVersion: {version.__version__}\n"
                    f"Summary: tinytorch {version.TINYTORCH_VERSION}, serving PyTorch's API\n")
        if filename == "top_level.txt":
            return _ALIAS + "\n"
        return None

    def locate_file(self, path):
        import pathlib
        return pathlib.Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) / path


class _TorchModule(types.ModuleType):
    """``sys.modules["torch"]``: a copy of tinytorch's namespace with PyTorch's ``__version__``.

    A copy, not a forwarding proxy: ``torch.relu`` is then a plain module-dict lookup (a forwarding
    ``__getattribute__`` costs about 0.4 us on every access). Names tinytorch gains later (a submodule imported
    afterwards) are found through ``__getattr__``; names set on one module are mirrored to the other.
    """

    def __getattr__(self, name):
        try:
            return getattr(sys.modules[_TARGET], name)
        except AttributeError:
            raise AttributeError(f"module '{_ALIAS}' has no attribute '{name}'") from None

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name not in _OWN_NAMES:
            types.ModuleType.__setattr__(sys.modules[_TARGET], name, value)

    def __delattr__(self, name):
        super().__delattr__(name)
        if name not in _OWN_NAMES and hasattr(sys.modules[_TARGET], name):
            types.ModuleType.__delattr__(sys.modules[_TARGET], name)


class _MirroredModule(types.ModuleType):
    """The class of the ``tinytorch`` module while the swap is installed: a name set on it reaches ``torch`` too."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        alias = sys.modules.get(_ALIAS)
        if isinstance(alias, _TorchModule) and name not in _OWN_NAMES:
            types.ModuleType.__setattr__(alias, name, value)

    def __delattr__(self, name):
        super().__delattr__(name)
        alias = sys.modules.get(_ALIAS)
        if isinstance(alias, _TorchModule) and name not in _OWN_NAMES and name in alias.__dict__:
            types.ModuleType.__delattr__(alias, name)


_OWN_NAMES = frozenset({"__version__", "__name__"})


def _torch_module():
    import tinytorch
    from .torch_version import __version__ as api_version
    alias = _TorchModule(_ALIAS, tinytorch.__doc__)
    alias.__dict__.update(tinytorch.__dict__)
    types.ModuleType.__setattr__(alias, "__name__", _ALIAS)
    types.ModuleType.__setattr__(alias, "__version__", api_version)
    tinytorch.__class__ = _MirroredModule
    return alias


_finder = _TorchFinder()


def install():
    """Route ``import torch`` (and every ``torch.*`` submodule) to tinytorch. Idempotent.

    Modules already imported as ``torch`` (real PyTorch) are replaced in ``sys.modules``.
    """
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        del sys.modules[name]
    import tinytorch  # noqa: F401
    for name, mod in list(sys.modules.items()):
        if name.startswith(_TARGET + "."):
            sys.modules[_ALIAS + name[len(_TARGET):]] = mod
    sys.modules[_ALIAS] = _torch_module()


def uninstall():
    """Remove the hook and the ``torch`` aliases it created."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(_TARGET) or isinstance(sys.modules[name], _TorchModule):
            del sys.modules[name]
    tinytorch = sys.modules.get(_TARGET)
    if isinstance(tinytorch, _MirroredModule):
        tinytorch.__class__ = types.ModuleType
