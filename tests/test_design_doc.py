"""``docs/design.md`` cites the code by path and by name; these tests fail when a citation no longer matches the
tree, so the document cannot drift from the code without someone noticing.

What counts as a citation:

- a *path*: a backticked span, or a word of a fenced block, made of path characters and ending in ``.py``,
  ``.md`` or ``/``. It must exist relative to the repository root or to ``tinytorch/``; a bare file name
  (``pointwise.py``) must name some file of the repository; a ``*`` pattern must match at least one file;
- a *qualified name*: a backticked dotted name starting with ``tinytorch.`` (``tinytorch.autograd.backward``). The
  longest importable module prefix is imported and the rest is looked up with ``getattr``;
- any other backticked identifier, dotted identifier (``Op.mutates``) or call (``dispatch(op, args, kw)``, whose
  callee is checked): each part must occur in the code (not the comments or docstrings) of ``tinytorch/`` or
  ``tests/``, and when its first part is a global of a tinytorch module, the rest must be attributes of it. This
  is weaker than an import, but it catches a function renamed or removed. PyTorch's own names are listed in
  ``PYTORCH_NAMES``.

And the tree of section 6 must have a line for every package folder of ``tinytorch/``.
"""
import importlib
import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "design.md"

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"^[\w.*/-]*[A-Za-z][\w.*/-]*(\.py|\.md|/)$")
_NAME = re.compile(r"^@?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(\(.*\))?$", re.S)
_SKIP_DIRS = {"__pycache__", ".git", ".hypothesis", "tinytorch.egg-info"}


def _doc():
    return DOC.read_text(encoding="utf-8")


def _spans():
    """Backticked spans of the prose (fenced blocks removed), newlines folded to spaces."""
    prose = _FENCE.sub("", _doc())
    return [" ".join(s.split()) for s in _SPAN.findall(prose)]


def _fenced_words():
    words = []
    for block in _FENCE.findall(_doc()):
        for line in block.splitlines()[1:-1]:
            words.extend(w.strip(",;:()\"'") for w in line.split())
    return words


def _paths():
    found = {s for s in _spans() if _PATH.match(s)}
    found |= {w for w in _fenced_words() if _PATH.match(w)}
    return sorted(found)


def _repo_files():
    out = []
    for p in ROOT.rglob("*"):
        if not _SKIP_DIRS.intersection(p.relative_to(ROOT).parts):
            out.append(p)
    return out


def _exists(path, files):
    if "*" in path:
        return any(True for _ in ROOT.glob(path)) or any(True for _ in (ROOT / "tinytorch").glob(path))
    for base in (ROOT, ROOT / "tinytorch"):
        p = base / path
        if (p.is_dir() if path.endswith("/") else p.is_file()):
            return True
    if "/" not in path:
        return any(f.name == path and f.is_file() for f in files)
    return False


def test_cited_paths_exist():
    files = _repo_files()
    paths = _paths()
    assert len(paths) > 30, "the path extraction found almost nothing: has the document's format changed?"
    missing = [p for p in paths if not _exists(p, files)]
    assert not missing, f"docs/design.md cites paths that do not exist: {missing}"


def _names():
    """(qualified names, other names) cited in backticks."""
    qualified, other = set(), set()
    for s in _spans():
        if _PATH.match(s):
            continue
        m = _NAME.match(s)
        if m is None:
            continue
        name = m.group(1)
        (qualified if name.startswith("tinytorch.") else other).add(name)
    return sorted(qualified), sorted(other)


def _resolve(dotted):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def test_qualified_names_resolve():
    qualified, _ = _names()
    assert qualified, "the document cites no tinytorch.* name"
    bad = []
    for n in qualified:
        try:
            _resolve(n)
        except (ImportError, AttributeError) as e:
            bad.append(f"{n} ({type(e).__name__}: {e})")
    assert not bad, f"docs/design.md cites names that do not resolve: {bad}"


def _module_objects(first):
    """The objects other than modules that tinytorch's modules (and the test device's) bind to the name ``first``
    (a submodule of the same name, ``nn.modules.loss`` for ``loss.backward``, is not what the text means)."""
    import sys
    import types

    import tinytorch  # noqa: F401
    import mydevice  # noqa: F401
    mods = [m for n, m in list(sys.modules.items()) if m is not None and (n == "mydevice" or n.startswith("tinytorch"))]
    return [vars(m)[first] for m in mods
            if first in vars(m) and not isinstance(vars(m)[first], types.ModuleType)]


def test_dotted_names_resolve_where_their_first_part_is_a_module_global():
    """``Tensor.hypot``, ``Op.mutates``, ``KERNELS.register``: when the first part is a global of some tinytorch
    module, the rest must be attributes of it (``ctx.inputs`` or ``loss.backward`` name no global: left to the
    word check)."""
    _, other = _names()
    bad = []
    for n in other:
        first, *rest = n.split(".")
        if not rest:
            continue
        objs = _module_objects(first)
        if not objs:
            continue

        def has(obj):
            for p in rest:
                if not hasattr(obj, p):
                    return False
                obj = getattr(obj, p)
            return True
        if not any(has(o) for o in objs):
            bad.append(n)
    assert not bad, f"docs/design.md cites attributes that do not exist: {bad}"


# PyTorch's names the document cites for comparison; they are not tinytorch's, so no source defines them
PYTORCH_NAMES = {"computeStride", "derivatives.yaml", "native_functions.yaml", "original_self"}


def _code_words():
    """Identifiers of the code of ``tinytorch/`` and ``tests/`` (names, and string literals that are one
    identifier, as op names are: ``defop("softmax_backward", ...)``); comments and docstrings do not count, so a
    function that survives only in prose is reported."""
    words = set()
    for folder in ("tinytorch", "tests"):
        for f in (ROOT / folder).rglob("*.py"):
            src = f.read_text(encoding="utf-8")
            try:
                for tok in tokenize.generate_tokens(io.StringIO(src).readline):
                    if tok.type == tokenize.NAME:
                        words.add(tok.string)
                    elif tok.type == tokenize.STRING:
                        m = re.fullmatch(r"[rbuRBU]*(['\"])(\w+)\1", tok.string)
                        if m:
                            words.add(m.group(2))
            except (tokenize.TokenError, SyntaxError):  # not Python this test can read: its test fails elsewhere
                words.update(re.findall(r"\w+", src))
    return words


def test_other_names_occur_in_the_code():
    words = _code_words()
    _, other = _names()
    assert len(other) > 50, "the name extraction found almost nothing: has the document's format changed?"
    missing = sorted({n for n in other if n not in PYTORCH_NAMES for part in n.split(".") if part not in words})
    assert not missing, f"docs/design.md cites names that no code of tinytorch/ or tests/ contains: {missing}"


def test_tree_lists_every_package_folder():
    words = set(_fenced_words())
    folders = sorted({p.parent.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "tinytorch").rglob("*.py")
                      if "__pycache__" not in p.parts})
    missing = [f for f in folders if f not in words]
    assert not missing, f"section 6 of docs/design.md has no line for: {missing}"


@pytest.mark.parametrize("path", ["README.md"])
def test_readme_links_the_design_doc(path):
    assert "docs/design.md" in (ROOT / path).read_text(encoding="utf-8")
