"""The PyTorch ecosystem on tinytorch, unpatched: each program in tests/ecosystem uses a library as its users do
(transformers, timm, torchvision, Lightning, accelerate, torchmetrics, safetensors) and runs twice, under
``python -m tinytorch.run`` and under real PyTorch in another process, and the results they print are compared.

The libraries are declared test dependencies (the ``ecosystem`` extra, installed without their dependency on torch:
see .ci/run), so a missing one fails here rather than skipping. Tolerances: floating results within ``RTOL``/``ATOL``
(the two libraries' kernels round differently; training steps amplify it a little), everything else exactly.
"""
import json
import math
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ecosystem")
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = {  # program: (rtol, atol)
    "safetensors_io.py": (0.0, 0.0),
    "hf_gpt2.py": (1e-4, 1e-5),
    "hf_bert.py": (1e-4, 1e-5),
    "timm_models.py": (1e-4, 1e-4),
    "torchvision_models.py": (1e-4, 1e-4),
    "torchmetrics_metrics.py": (1e-5, 1e-6),
    "lightning_fit.py": (1e-4, 1e-5),
    "accelerate_train.py": (1e-4, 1e-5),
}


def _run(args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]), OMP_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    r = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=HERE, env=env, timeout=900)
    assert r.returncode == 0, f"{args} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    m = re.search(r"^RESULT (.*)$", r.stdout, re.M)
    assert m, r.stdout[-2000:]
    return json.loads(m.group(1))


def _compare(ours, theirs, rtol, atol, path="result"):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and sorted(ours) == sorted(theirs), f"{path}: keys {sorted(ours)} vs {sorted(theirs)}"
        for k in theirs:
            _compare(ours[k], theirs[k], rtol, atol, f"{path}.{k}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{path}: {ours} vs {theirs}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, rtol, atol, f"{path}[{i}]")
    elif isinstance(theirs, float) and not isinstance(theirs, bool):
        ok = math.isclose(ours, theirs, rel_tol=rtol, abs_tol=atol) or (math.isnan(ours) and math.isnan(theirs))
        assert ok, f"{path}: tinytorch {ours} vs torch {theirs}"
    else:
        assert ours == theirs, f"{path}: tinytorch {ours!r} vs torch {theirs!r}"


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_library_program_matches_torch(program):
    ours = _run(["-m", "tinytorch.run", program])
    theirs = _run([program])
    extra = {k: ours.pop(k) for k in [k for k in ours if k not in theirs and k.endswith("_error")]}
    _compare(ours, theirs, *PROGRAMS[program])
    if program == "torchvision_models.py":  # the compiled ops fail with torchvision's own message
        assert extra == {"nms_error": "Couldn't load custom C++ ops"}, extra
