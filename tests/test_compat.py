"""Unmodified PyTorch scripts run on tinytorch through ``python -m tinytorch.run`` (and ``compat.install()``).

Each script in tests/scripts is run twice, by real PyTorch and through tinytorch.run, and the final results
they print are compared. tinytorch's generator reproduces PyTorch's random stream, so both runs start from the
same weights and see the same batches; the results agree closely, not to the last digit (the BLAS libraries
round differently, and long or discrete trainings such as a DQN amplify small differences), hence a tolerance per script.
"""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SCRIPTS = {  # script: (rtol, atol) between the two final results
    "polynomial_regression.py": (1e-3, 1e-6),
    "lstm_language_model.py": (0.02, 1e-3),
    "autoencoder.py": (0.02, 1e-4),
    "resnet_classifier.py": (0.0, 0.05),  # test accuracy
    "dqn.py": (0.0, 1.0),  # mean episode length of the last 10 episodes (7 is optimal)
    "nanogpt_train.py": (0.05, 0.01),
}


def _run(args, **kw):
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, **kw)
    assert r.returncode == 0, f"{args} failed:\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _result(out):
    m = re.search(r"RESULT ([0-9.eE+-]+)", out)
    assert m, out
    return float(m.group(1))


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_unmodified_script_matches_torch(script):
    path = os.path.join(HERE, "scripts", script)
    ours = _result(_run(["-m", "tinytorch.run", path]))
    theirs = _result(_run([path]))
    rtol, atol = SCRIPTS[script]
    assert abs(ours - theirs) <= atol + rtol * abs(theirs), f"{script}: tinytorch {ours} vs torch {theirs}"


def test_import_hook_maps_torch_to_tinytorch_and_reports_gaps():
    code = r'''
import tinytorch.compat
tinytorch.compat.install()
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
import tinytorch
assert torch is tinytorch and nn is tinytorch.nn and F is tinytorch.nn.functional
assert DataLoader is tinytorch.utils.data.DataLoader and optim is tinytorch.optim
assert torch.cuda.is_available() is False
try:
    import torch.distributed.fsdp_nonexistent
except ModuleNotFoundError as e:
    assert "tinytorch has no module 'tinytorch.distributed" in str(e), e
else:
    raise AssertionError("missing submodule imported")
try:
    torch.definitely_not_a_function
except AttributeError as e:
    assert "definitely_not_a_function" in str(e)
else:
    raise AssertionError("missing attribute resolved")
tinytorch.compat.uninstall()
print("OK")
'''
    assert _run(["-c", code]).strip().endswith("OK")


def test_run_passes_argv_and_reports_a_missing_script(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys, torch\nprint(sys.argv[1:], torch.__name__)\n")
    assert _run(["-m", "tinytorch.run", str(script), "--x", "1"]).strip() == "['--x', '1'] tinytorch"
    r = subprocess.run([sys.executable, "-m", "tinytorch.run", str(tmp_path / "nope.py")], capture_output=True,
                       text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "can't open file" in r.stderr


def test_distributed_and_cuda_queries_answer_as_a_cpu_only_build():
    """Scripts import torch.distributed and DistributedDataParallel at the top and take that path only under
    torchrun: the imports work, the queries answer truthfully, and anything needing a process group raises
    the error torch raises without one."""
    import tinytorch as tt
    import tinytorch.distributed as dist
    from conftest import torch
    from tinytorch.nn.parallel import DistributedDataParallel as DDP
    assert not dist.is_available() and not dist.is_initialized()
    for m, d in ((torch, torch.distributed), (tt, dist)):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            d.get_rank()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            d.all_reduce(m.ones(1))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DDP(tt.nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match="tinytorch has no distributed backend"):
        dist.init_process_group("gloo")
    assert tt.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    assert tt.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    for m in (torch, tt):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            m.cuda.current_device()
