"""The package's layers import downward only.

Every import of every module under ``tinytorch/`` is parsed, the ones inside functions included (a function-local
import is still a dependency, only a later one), and each is checked against the layer order below: a module may
import from its own layer and the layers under it, never from one above. The order is the one in
``docs/design.md``:

  core      dtypes, strides, storage, devices, the thread-local mode flags, shape arithmetic, the elementwise
            kernel formulas and their renderers (``kernels``, which import nothing else of tinytorch), and the
            backends (which receive native arrays, never Tensors or ops);
  dispatch  the op record and the one op path, the autograd engine and grad mode, the Tensor data model;
  ops       the op declarations by topic (``tinytorch/_ops/``);
  tensor    the Tensor surface installed from the declarations, the ``torch.*`` sub-namespaces, printing,
            serialization, ``Parameter``;
  lib       nn, optim, utils.data, distributions, amp, distributed, ``torch.functional``, the compiler and jit;
  top       the package root, the namespace spellings that reach into nn, the compatibility modules, the
            launchers (``run``, ``distributed.run`` and its per-rank ``distributed._worker``), and the modules that
            look functions up in the public namespace at run time (``fx``, ``sparse``, ``torch.ops``/``library``).

A module not named in the table fails the test too, so a new file must be given its layer.
"""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tinytorch")

# (layer, module prefixes); a module belongs to the layer of its longest matching prefix
LAYERS = [
    ("core", ["_C", "_dtype", "_strides", "_storage", "device", "_modes", "_geometry", "backends.base", "backends.cpu",
              "backends.opencl", "backends.webgpu", "backends.meta", "kernels", "version", "torch_version", "_layout"]),
    ("dispatch", ["_dispatch", "_tensor", "autograd.engine", "autograd.grad_mode", "autograd.graph",
                  "autograd.anomaly_mode", "_schema"]),
    ("ops", ["_ops"]),
    ("tensor", ["_surface", "_print", "linalg", "fft", "special", "random", "serialization", "_utils",
                "_weights_only_unpickler", "nn.parameter", "autograd", "func", "_legacy", "testing", "backends",
                "storage", "overrides", "types", "accelerator", "futures"]),
    ("lib", ["nn", "optim", "utils", "distributions", "amp", "distributed", "datasets", "functional", "compiler",
             "jit", "ao", "multiprocessing", "profiler", "_dynamo", "hub", "autograd.profiler",
             "autograd.profiler_util"]),
    ("top", ["__init__", "_variants", "compat", "run", "onnx", "cuda", "cpu", "opencl", "webgpu", "_c_api",
             # modules that look functions up in the public namespace at run time (torch.fx prints and resolves
             # torch.* names, torch.ops.aten.* are the namespace's functions, sparse ops compose public functions)
             "fx", "sparse", "_ops_namespace", "library", "_custom_ops",
             "utils.tensorboard",  # add_graph traces with torch.fx
             "distributed.run", "distributed._worker", "torch_backend", "_torch_autoload", "quantization"]),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module):
    best, length = None, -1
    for name, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > length:
                best, length = name, len(p)
    return best


def _modules():
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                if rel == "__init__":
                    yield path, "__init__", ""
                elif rel.endswith(".__init__"):
                    yield path, rel[:-9], rel[:-9]
                else:
                    yield path, rel, rel.rpartition(".")[0]


def _is_module(dotted):
    base = os.path.join(ROOT, *dotted.split("."))
    # _C: the C++ extension built from tinytorch/csrc (no .py file)
    return os.path.isfile(base + ".py") or os.path.isdir(base) or dotted == "_C"


def imports_of(path, package):
    """(line, imported tinytorch module) for every import in the file, function-local ones included.
    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else ``pkg``."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level > 1:
                    parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            elif node.module and (node.module == "tinytorch" or node.module.startswith("tinytorch.")):
                base = node.module[len("tinytorch"):].lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                yield node.lineno, sub if _is_module(sub) else (base or "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "tinytorch" or alias.name.startswith("tinytorch."):
                    yield node.lineno, alias.name[len("tinytorch"):].lstrip(".") or "__init__"


MODULES = list(_modules())


def test_every_module_has_a_layer():
    missing = [m for _, m, _ in MODULES if layer_of(m) is None]
    assert not missing, f"modules without a layer in tests/test_layers.py: {missing}"


@pytest.mark.parametrize("path,module,package", MODULES, ids=[m for _, m, _ in MODULES])
def test_imports_go_downward(path, module, package):
    mine = layer_of(module)
    if mine is None:
        pytest.fail(f"{module} has no layer")
    up = [f"line {line}: imports {target} ({layer_of(target)})" for line, target in imports_of(path, package)
          if layer_of(target) is not None and RANK[layer_of(target)] > RANK[mine]]
    assert not up, f"{module} ({mine}) imports from a higher layer:\n  " + "\n  ".join(up)


def test_the_checker_sees_upward_imports():
    """The parser finds a function-local upward import (a module written for the purpose, parsed, not run)."""
    import tempfile
    src = "def f():\n    from ..nn.functional import relu\n    return relu\n"
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(src)
    try:
        found = list(imports_of(fh.name, "_ops"))
    finally:
        os.unlink(fh.name)
    assert found and layer_of(found[0][1]) == "lib" and RANK["lib"] > RANK[layer_of("_ops.pointwise")]
