"""Every ``tinytorch.nn`` module class that ``torch.nn`` also has documents itself as PyTorch's do: a summary,
``Args:`` (when its constructor takes arguments), ``Shape:`` (when its forward takes a tensor) and an
``Examples`` block whose ``>>>`` lines run against tinytorch.

Which sections a class needs is decided by rules, never by a list of names:
  * ``Args:`` when ``__init__`` has a named parameter besides ``self`` (``*args`` / ``**kwargs`` alone do not
    count: ``nn.Module`` takes only those).
  * ``Shape:`` when the class has its own forward with a parameter besides ``self``, unless torch defines it in
    ``torch.nn.modules.container``: a container's shapes are those of the modules it holds.
The examples run with ``torch`` bound to tinytorch and ``nn`` to ``tinytorch.nn``; an example line that shows
output is compared with it (whitespace-insensitively), the others only have to run without an exception.
"""
import doctest
import inspect
import re

import pytest

import tinytorch
import tinytorch.nn as nn
from conftest import torch


def _documented_classes():
    out = []
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if isinstance(cls, type) and issubclass(cls, nn.Module) and isinstance(getattr(torch.nn, name, None), type):
            out.append(name)
    return out


CLASSES = _documented_classes()


def _takes_arguments(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return any(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _forward_takes_input(name, cls):
    if getattr(torch.nn, name).__module__ == "torch.nn.modules.container":
        return False
    forward = getattr(cls, "forward", None)
    if forward is None or forward is nn.Module.forward:
        return False
    return len(inspect.signature(forward).parameters) > 1


def _section(doc, title):
    return re.search(rf"^\s*{title}\s*$", doc, re.MULTILINE) is not None


def test_the_rule_finds_the_classes():
    # a broken rule (say, comparing against the wrong namespace) would make every test below vacuous
    assert len(CLASSES) > 150
    for name in ("Linear", "Conv2d", "MaxPool2d", "BatchNorm2d", "ZeroPad2d", "Embedding", "Sequential", "Module"):
        assert name in CLASSES


@pytest.mark.parametrize("name", CLASSES)
def test_docstring_sections(name):
    cls = getattr(nn, name)
    doc = cls.__dict__.get("__doc__")
    assert doc and doc.strip(), f"nn.{name} has no docstring of its own"
    if _takes_arguments(cls):
        assert _section(doc, "Args:"), f"nn.{name}: no 'Args:' section"
    if _forward_takes_input(name, cls):
        assert _section(doc, "Shape:"), f"nn.{name}: no 'Shape:' section"
    assert _section(doc, r"Examples?::?"), f"nn.{name}: no 'Examples::' section"
    assert ">>>" in doc, f"nn.{name}: the Examples section has no '>>>' example"


@pytest.mark.parametrize("name", CLASSES)
def test_docstring_examples_run(name):
    cls = getattr(nn, name)
    doc = cls.__dict__.get("__doc__") or ""
    globs = {"torch": tinytorch, "nn": tinytorch.nn}
    test = doctest.DocTestParser().get_doctest(doc, globs, f"nn.{name}", None, 0)
    assert test.examples, f"nn.{name}: the docstring has no '>>>' example to run"
    tinytorch.manual_seed(0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS, verbose=False)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
