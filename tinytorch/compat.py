"""Make ``import torch`` resolve to tinytorch, so unmodified PyTorch programs run on it.

``tinytorch.compat.install()`` adds an import hook: ``torch`` is ``tinytorch`` and ``torch.X.Y`` is
``tinytorch.X.Y``. A submodule tinytorch lacks raises ModuleNotFoundError naming the tinytorch module it
looked for, and a missing attribute raises the usual AttributeError: never a silent stand-in.
``python -m tinytorch.run script.py [args]`` runs a script with the hook installed.
"""
import importlib
import importlib.abc
import importlib.util
import sys

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
        return importlib.import_module(_target_name(spec.name))

    def exec_module(self, module):
        pass  # the tinytorch module is already executed


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
        if name == _TARGET or name.startswith(_TARGET + "."):
            sys.modules[_ALIAS + name[len(_TARGET):]] = mod


def uninstall():
    """Remove the hook and the ``torch`` aliases it created."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(_TARGET):
            del sys.modules[name]
