"""The package imports only what it declares: a module that happens to be installed on a developer's machine
(SciPy was one) must not change what tinytorch computes or whether it works on a fresh one."""
import ast
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]
# distribution name -> the module it installs, where the two differ
MODULE_OF = {"pyyaml": "yaml", "pillow": "PIL", "cuda_bindings": "cuda"}
# further top-level modules a distribution installs (the torch wheel ships torchgen, its schema parser)
ALSO_INSTALLS = {"torch": {"torchgen"}}
# what ComfyUI's own environment provides to a node pack it loads (and to the test that starts ComfyUI)
COMFYUI_HOST = {"comfy", "folder_paths", "torch", "PIL"}


def _declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for name, extra in project.get("optional-dependencies", {}).items():
        if name not in ("test", "ecosystem"):  # test extras (torch, pytest, the libraries run on tinytorch) are
            # for tests only, never for the package
            reqs += extra
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower().replace("-", "_") for r in reqs}
    return {MODULE_OF.get(n, n) for n in names}


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno


def test_package_imports_only_declared_dependencies():
    allowed = _declared() | set(sys.stdlib_module_names) | {"tinytorch", "__future__"}
    undeclared = [f"{p.relative_to(ROOT)}:{line} imports {mod}"
                  for pkg, extra in (("tinytorch", set()), ("comfyui_tinytorch", COMFYUI_HOST))
                  for p in sorted((ROOT / pkg).rglob("*.py"))
                  for mod, line in _imports(p) if mod not in allowed | extra]
    assert not undeclared, "undeclared dependencies:\n" + "\n".join(undeclared)


def test_test_extra_declares_what_the_tests_import():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower().replace("-", "_")
             for r in project["optional-dependencies"]["test"] + project["optional-dependencies"]["ecosystem"]}
    allowed = _declared() | {MODULE_OF.get(n, n) for n in names} | set(sys.stdlib_module_names) | \
        {m for n in names for m in ALSO_INSTALLS.get(n, ())} | \
        {"tinytorch", "comfyui_tinytorch", "conftest", "op_db", "mydevice", "__future__"}
    # the repository's own scripts, which tests put on sys.path
    local = {p.stem for d in ("tests", "examples", "tools", "benchmarks") for p in (ROOT / d).rglob("*.py")} | \
        {p.name for p in (ROOT / "tests").iterdir() if p.is_dir()}  # the tests' own folders (tests/ecosystem)
    undeclared = [f"{p.relative_to(ROOT)}:{line} imports {mod}" for p in sorted((ROOT / "tests").rglob("*.py"))
                  for mod, line in _imports(p)
                  if mod not in allowed | local | (COMFYUI_HOST if p.name == "test_comfyui.py" else set())]
    assert not undeclared, "undeclared test dependencies:\n" + "\n".join(undeclared)
