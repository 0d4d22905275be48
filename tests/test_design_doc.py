"""``docs/design.md`` and ``docs/compiler.md`` cite the code by path and by name; these tests fail when a citation
no longer matches the tree, so the documents cannot drift from the code without someone noticing.

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

And the tree of section 6 of ``docs/design.md`` must have a line for every package folder of ``tinytorch/``.
``docs/compiler.md`` is held to its claims about the compiler: the records of ``ir.py`` it lists with their fields,
the passes in the order ``Plan`` runs them, and the table of backends and their code generators.
"""
import importlib
import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "design.md"
COMPILER_DOC = ROOT / "docs" / "compiler.md"
# each document checked for its citations, with the fewest paths and other names its extraction must find
DOCS = {"design.md": (30, 50), "compiler.md": (10, 30)}

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_SPAN = re.compile(r"`([^`]+)`")
_PATH = re.compile(r"^[\w.*/-]*[A-Za-z][\w.*/-]*(\.py|\.md|/)$")
_NAME = re.compile(r"^@?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(\(.*\))?$", re.S)
_SKIP_DIRS = {"__pycache__", ".git", ".hypothesis", "tinytorch.egg-info"}


def _doc(name="design.md"):
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def _spans(name="design.md"):
    """Backticked spans of the prose (fenced blocks removed), newlines folded to spaces."""
    prose = _FENCE.sub("", _doc(name))
    return [" ".join(s.split()) for s in _SPAN.findall(prose)]


def _fenced_words(name="design.md"):
    words = []
    for block in _FENCE.findall(_doc(name)):
        for line in block.splitlines()[1:-1]:
            words.extend(w.strip(",;:()\"'") for w in line.split())
    return words


def _paths(name):
    found = {s for s in _spans(name) if _PATH.match(s)}
    found |= {w for w in _fenced_words(name) if _PATH.match(w)}
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


@pytest.mark.parametrize("doc", DOCS)
def test_cited_paths_exist(doc):
    files = _repo_files()
    paths = _paths(doc)
    assert len(paths) > DOCS[doc][0], "the path extraction found almost nothing: has the document's format changed?"
    missing = [p for p in paths if not _exists(p, files)]
    assert not missing, f"docs/{doc} cites paths that do not exist: {missing}"


def _names(doc="design.md"):
    """(qualified names, other names) cited in backticks."""
    qualified, other = set(), set()
    for s in _spans(doc):
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


@pytest.mark.parametrize("doc", DOCS)
def test_qualified_names_resolve(doc):
    qualified, _ = _names(doc)
    assert qualified, "the document cites no tinytorch.* name"
    bad = []
    for n in qualified:
        try:
            _resolve(n)
        except (ImportError, AttributeError) as e:
            bad.append(f"{n} ({type(e).__name__}: {e})")
    assert not bad, f"docs/{doc} cites names that do not resolve: {bad}"


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


@pytest.mark.parametrize("doc", DOCS)
def test_dotted_names_resolve_where_their_first_part_is_a_module_global(doc):
    """``Tensor.hypot``, ``Op.mutates``, ``KERNELS.register``: when the first part is a global of some tinytorch
    module, the rest must be attributes of it (``ctx.inputs`` or ``loss.backward`` name no global: left to the
    word check)."""
    _, other = _names(doc)
    bad = []
    for n in other:
        first, *rest = n.split(".")
        if not rest:
            continue
        objs = _module_objects(first)
        if not objs:
            continue

        def has(obj):
            for i, p in enumerate(rest):
                if not hasattr(obj, p):
                    # an attribute a class's methods set (``Plan.source``), the last part only
                    return i == len(rest) - 1 and isinstance(obj, type) and p in _self_attrs(obj)
                obj = getattr(obj, p)
            return True
        if not any(has(o) for o in objs):
            bad.append(n)
    assert not bad, f"docs/{doc} cites attributes that do not exist: {bad}"


def _self_attrs(cls):
    """The names ``cls``'s methods (and its bases') assign on ``self``: its instance attributes."""
    import inspect
    names = set()
    for k in inspect.getmro(cls):
        try:
            src = inspect.getsource(k)
        except (OSError, TypeError):
            continue
        for line in src.splitlines():
            lhs = re.match(r"\s*((?:self\.\w+\s*,\s*)*self\.\w+)\s*=[^=]", line)
            if lhs:
                names.update(re.findall(r"self\.(\w+)", lhs.group(1)))
    return names


# PyTorch's (and tinygrad's) names the documents cite for comparison; they are not tinytorch's, so no source
# defines them
PYTORCH_NAMES = {"computeStride", "derivatives.yaml", "native_functions.yaml", "original_self", "UOp"}


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


@pytest.mark.parametrize("doc", DOCS)
def test_other_names_occur_in_the_code(doc):
    words = _code_words()
    _, other = _names(doc)
    assert len(other) > DOCS[doc][1], "the name extraction found almost nothing: has the document's format changed?"
    missing = sorted({n for n in other if n not in PYTORCH_NAMES for part in n.split(".") if part not in words})
    assert not missing, f"docs/{doc} cites names that no code of tinytorch/ or tests/ contains: {missing}"


def test_tree_lists_every_package_folder():
    words = set(_fenced_words())
    folders = sorted({p.parent.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "tinytorch").rglob("*.py")
                      if "__pycache__" not in p.parts})
    missing = [f for f in folders if f not in words]
    assert not missing, f"section 6 of docs/design.md has no line for: {missing}"


@pytest.mark.parametrize("path", ["README.md"])
def test_readme_links_the_design_doc(path):
    assert "docs/design.md" in (ROOT / path).read_text(encoding="utf-8")


# ---- docs/compiler.md's claims about the compiler -----------------------------------------------------------------
def _section(doc, title):
    """The text of the section of ``doc`` whose heading starts with ``title``, up to the next heading."""
    m = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", _doc(doc), re.S | re.M)
    assert m, f"docs/{doc} has no section '{title}'"
    return m.group(1)


def test_compiler_doc_lists_every_ir_record_with_its_fields():
    """Every record of ``ir.py`` is named in the IR section, and a record written as a call (``Node(kind, ...)``)
    lists its fields in their order."""
    import inspect
    import typing
    from tinytorch.compiler import ir
    records = {n: c for n, c in vars(ir).items() if inspect.isclass(c) and c.__module__ == ir.__name__}
    assert {"Node", "Ext", "Pending", "TensorList", "Const", "KwSpec", "Graph"} <= set(records)
    text = " ".join(_section("compiler.md", "The IR").split())
    spans = _SPAN.findall(text)
    missing = [n for n in records if not any(re.match(rf"(ir\.)?{n}\b", s) for s in spans)]
    assert not missing, f"docs/compiler.md's IR section does not name these records of ir.py: {missing}"
    written = [m for m in (re.fullmatch(r"(\w+)\(([\w, ]*)\)", s) for s in spans) if m and m.group(1) in records]
    assert written, "the IR section writes no record with its fields"
    for m in written:
        fields = tuple(f.strip() for f in m.group(2).split(","))
        cls = records[m.group(1)]
        assert issubclass(cls, tuple) and cls is not typing.NamedTuple and fields == cls._fields, \
            f"docs/compiler.md writes {m.group(0)}; ir.{m.group(1)} has the fields {cls._fields}"
    for fn in ("with_consts",):
        assert f"ir.{fn}" in text and callable(getattr(ir, fn))


def test_compiler_doc_lists_the_passes_in_the_order_plans_run_them():
    from tinytorch.compiler import passes
    text = _section("compiler.md", "Graphs, plans and passes")
    listed = re.findall(r"^\d+\. `(\w+)\.(\w+)`", text, re.M)
    got = [getattr(importlib.import_module(f"tinytorch.compiler.{mod}"), fn) for mod, fn in listed]
    assert got == list(passes.PASSES), \
        f"docs/compiler.md lists the passes {listed}; passes.PASSES is {[p.__name__ for p in passes.PASSES]}"
    assert all(p.__doc__ for p in passes.PASSES), "every pass has a docstring"


def test_compiler_doc_code_generator_table_matches_the_backends():
    """Each row: a device, its backend class, that class's ``kernel_language`` and the module its ``codegen``
    names, whose ``LANGUAGE`` is that language; every backend of the package with a code generator has a row."""
    import sys

    import tinytorch  # noqa: F401
    from tinytorch.backends.base import Backend
    import tinytorch.backends.cuda.backend  # noqa: F401 - its backend class, registered or not
    registered = sys.modules["tinytorch.device"]._BACKENDS
    rows = re.findall(r"^\| `(\w+)` \| `([\w.]+)` \| `\"([^\"]+)\"` \| `(\w+)\.py` \|$", _doc("compiler.md"), re.M)
    assert len(rows) >= 3, "docs/compiler.md has no table of backends and code generators"
    for device, cls_name, language, module in rows:
        cls = _resolve(cls_name)
        assert cls.kernel_language == language, f"{cls_name}.kernel_language is {cls.kernel_language!r}"
        assert cls.codegen == f"tinytorch.compiler.{module}", f"{cls_name}.codegen is {cls.codegen!r}"
        assert importlib.import_module(cls.codegen).LANGUAGE == language
        if device in registered:
            assert type(registered[device]) is cls, f"the {device} device's backend is {type(registered[device])}"

    def subclasses(c):
        return [c] + [x for s in c.__subclasses__() for x in subclasses(s)]
    with_codegen = {f"{c.__module__}.{c.__name__}" for c in subclasses(Backend)
                    if c.codegen is not None and c.__module__.startswith("tinytorch.")}
    missing = with_codegen - {r[1] for r in rows}
    assert not missing, f"docs/compiler.md's table has no row for {sorted(missing)}"
