"""The generated differential fuzzer's CI sample (``fuzz.py``): ``fuzz.SAMPLE`` calls drawn with a fixed seed
from every public signature tinytorch shares with PyTorch, each run in both libraries.

Its gate: no SILENT, WRONG, HANG or CRASH verdict (nor a LEAK: an exception from inside NumPy or a kernel, or an
incidental KeyError/AttributeError/IndexError) other than those listed in ``fuzz_known.txt``, the differences
found and not yet fixed, one per line. The list is strict both ways: a new difference fails, and so does a listed
one that no longer occurs (delete its line). ``python tests/fuzz.py --report`` prints them all;
``python tests/test_fuzz.py --write-known`` rewrites the list from a run.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz  # noqa: E402

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_known.txt")
LISTED = fuzz.GATE + ("LEAK",)


def _key(verdict, ref, desc):
    return f"{verdict} {ref.area}.{ref.name} {desc}"


def _known():
    with open(KNOWN) as f:
        return {line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")}


@pytest.fixture(scope="module")
def results():
    if fuzz.torch is None:
        pytest.fail("the differential fuzzer needs PyTorch (the test extra pins torch==2.13.0)")
    return fuzz.run(fuzz.SAMPLE, fuzz.SEED)


def test_no_new_differences(results):
    """Every SILENT/WRONG/HANG/CRASH/LEAK verdict of the sample is a listed, known difference."""
    known = _known()
    found = {_key(v, ref, desc): detail for v, ref, desc, detail in results if v in LISTED}
    new = sorted(k for k in found if k not in known)
    assert not new, f"{len(new)} new differences from PyTorch:\n" + "\n".join(f"{k}  # {found[k][:160]}" for k in new)


def test_listed_differences_still_occur(results):
    """A listed difference the sample no longer finds has been fixed: its line must go."""
    found = {_key(v, ref, desc) for v, ref, desc, _ in results if v in LISTED}
    sampled = {f"{ref.area}.{ref.name} {desc}" for _, ref, desc, _ in results}
    gone = sorted(k for k in _known() if k.split(" ", 1)[1] in sampled and k not in found)
    assert not gone, f"{len(gone)} listed differences are fixed; delete them from {KNOWN}:\n" + "\n".join(gone)


def test_raises_come_from_deliberate_checks(results):
    """Under 2% of tinytorch's raises come from outside a deliberate check (inside NumPy or a kernel, or an
    incidental IndexError/KeyError/AttributeError): the issue's bound."""
    _, share, raised = fuzz.summary(results)
    assert share < 0.02, f"{100 * share:.2f}% of {raised} raises leaked"


def test_sample_reaches_every_area(results):
    """The sample covers each surface: functions, Tensor methods, nn.functional, modules and optimizers."""
    areas = {ref.area for _, ref, _, _ in results}
    assert {"torch", "Tensor", "F", "nn", "optim"} <= areas, areas


def _write_known():
    results = fuzz.run(fuzz.SAMPLE, fuzz.SEED)
    lines = sorted({_key(v, ref, desc) for v, ref, desc, _ in results if v in LISTED})
    with open(KNOWN, "w") as f:
        f.write("# differences from PyTorch the fuzzer's CI sample finds and that are not fixed yet (tests/test_fuzz.py)\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} lines written to {KNOWN}")


if __name__ == "__main__":
    if "--write-known" in sys.argv:
        _write_known()
    else:
        sys.exit(pytest.main([__file__, "-q"]))
