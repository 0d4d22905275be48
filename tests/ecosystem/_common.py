"""Shared by the ecosystem programs: which library runs them, a seed, and the result line the test compares.

Each program runs twice, under ``python -m tinytorch.run`` (``import torch`` is tinytorch) and under real PyTorch
(the reference), and prints ``RESULT <json>``. The reference process needs one preparation this machine forces:
the only torchvision wheel for PyTorch 2.13 is built against CUDA PyTorch, so its C++ library cannot load into the
CPU build of PyTorch the tests install, and torchvision's import then stops where it registers Python fake kernels
for its C++ ops. For the reference only, ``prepare_reference`` defines those op names (a schema with no kernel) so
torchvision's pure-Python parts import; no compiled torchvision op is ever called by these programs. The tinytorch
run gets no preparation at all.
"""
import json
import re
import sys

import torch

UNDER_TINYTORCH = "+tinytorch" in torch.__version__
_libraries = []  # the op definitions live as long as their Library object


def prepare_reference():
    if UNDER_TINYTORCH or "torchvision" in sys.modules:
        return
    lib = torch.library.Library("torchvision", "FRAGMENT")
    _libraries.append(lib)
    for _ in range(64):
        try:
            import torchvision  # noqa: F401
            return
        except RuntimeError as e:
            m = re.search(r"operator torchvision::(\w+) does not exist", str(e))
            if not m:
                raise
            lib.define(f"{m.group(1)}(Tensor[] args) -> Tensor")
            for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
                del sys.modules[name]
    raise RuntimeError("torchvision did not import")


def summary(t):
    """A tensor as numbers the two runs can compare: shape, sum, sum of squares, first values."""
    t = t.detach().double()
    flat = t.reshape(-1)
    return {"shape": list(t.shape), "sum": flat.sum().item(), "sq": (flat * flat).sum().item(),
            "head": flat[:4].tolist()}


def report(result):
    print("RESULT " + json.dumps(result, sort_keys=True))
