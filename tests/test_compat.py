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
assert torch.Tensor is tinytorch.Tensor and nn is tinytorch.nn and F is tinytorch.nn.functional
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
    script.write_text("import sys, torch\nprint(sys.argv[1:], torch.Tensor.__module__)\n")
    assert _run(["-m", "tinytorch.run", str(script), "--x", "1"]).strip() == "['--x', '1'] tinytorch._tensor"
    r = subprocess.run([sys.executable, "-m", "tinytorch.run", str(tmp_path / "nope.py")], capture_output=True,
                       text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 2 and "can't open file" in r.stderr


def test_distributed_and_cuda_queries_answer_as_a_cpu_only_build():
    """Scripts import torch.distributed and DistributedDataParallel at the top and take that path only under
    torchrun: the imports work, the queries answer truthfully (the MPI backend is available, nothing is
    initialized), and anything needing a process group raises the error torch raises without one."""
    import tinytorch as tt
    import tinytorch.distributed as dist
    from conftest import torch
    from tinytorch.nn.parallel import DistributedDataParallel as DDP
    assert dist.is_available() and not dist.is_initialized()
    assert dist.is_available() == torch.distributed.is_available()
    for m, d in ((torch, torch.distributed), (tt, dist)):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            d.get_rank()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            d.all_reduce(m.ones(1))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DDP(tt.nn.Linear(1, 1))
    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    assert tt.cuda.is_bf16_supported() is torch.cuda.is_bf16_supported() is False
    assert tt.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    for m in (torch, tt):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            m.cuda.current_device()


def test_torch_onnx_imports_and_refuses_export_by_name():
    """``import torch.onnx`` works under the hook and as an attribute; what needs an exporter raises
    NotImplementedError naming itself; the rest answers as torch's."""
    code = r'''
import tinytorch.compat
tinytorch.compat.install()
import torch
import torch.onnx
from torch.onnx import OnnxExporterError, TrainingMode
import tinytorch
assert torch.onnx is tinytorch.onnx
assert torch.onnx.is_in_onnx_export() is False
try:
    torch.onnx.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),), "model.onnx")
except NotImplementedError as e:
    assert "torch.onnx.export" in str(e), e
else:
    raise AssertionError("export returned")
print("OK")
'''
    assert _run(["-c", code]).strip().endswith("OK")


def test_torch_onnx_surface_matches_torch():
    import inspect

    import tinytorch as tt
    from conftest import torch
    assert tt.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert set(torch.onnx.__all__) - {"ops"} <= set(tt.onnx.__all__)
    assert list(inspect.signature(tt.onnx.export).parameters) == list(inspect.signature(torch.onnx.export).parameters)
    for enum_name in ("TrainingMode", "OperatorExportTypes", "TensorProtoDataType"):
        theirs = getattr(torch.onnx, enum_name).__members__
        ours = getattr(tt.onnx, enum_name).__members__
        assert {k: int(v) for k, v in ours.items()} == {k: int(v) for k, v in theirs.items()}
        for k in ours:  # torch's pybind11 enums: int() is the value; only the arithmetic one equals an int
            assert (ours[k] == int(ours[k])) is (theirs[k] == int(theirs[k]))
            assert str(ours[k]) == str(theirs[k])
    assert issubclass(tt.onnx.OnnxExporterError, RuntimeError) and issubclass(torch.onnx.OnnxExporterError,
                                                                             RuntimeError)
    assert str(tt.onnx.errors.UnsupportedOperatorError("aten::foo", 17, None)) == \
        str(torch.onnx.errors.UnsupportedOperatorError("aten::foo", 17, None))
    for name, call in (("torch.onnx.export", lambda: tt.onnx.export(tt.nn.Linear(1, 1), (tt.ones(1),))),
                       ("torch.onnx.ONNXProgram", lambda: tt.onnx.ONNXProgram(None, None)),
                       ("torch.onnx.utils", lambda: tt.onnx.utils)):
        with pytest.raises(NotImplementedError, match=name.replace(".", r"\.")):
            call()
    with pytest.raises(AttributeError):
        tt.onnx.not_a_member  # noqa: B018
    import warnings
    for name in ("::foo", "foo", "a::1b", "mydomain::foo"):  # registration (there is no exporter to use it)
        got = []
        for m in (tt, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch deprecates the TorchScript exporter's API
                try:
                    m.onnx.register_custom_op_symbolic(name, lambda g: None, 9)
                    got.append("ok")
                except m.onnx.OnnxExporterError as e:
                    got.append(str(e))
        assert got[0] == got[1], name
    # select_model_mode_for_export sets the mode inside and restores it, as torch's
    import warnings
    for m in (torch, tt):
        model = m.nn.Linear(1, 1)
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch deprecates it
            for mode in (m.onnx.TrainingMode.EVAL, m.onnx.TrainingMode.TRAINING, m.onnx.TrainingMode.PRESERVE):
                with m.onnx.select_model_mode_for_export(model, mode):
                    seen.append(model.training)
                seen.append(model.training)
            with pytest.raises(TypeError, match="torch.onnx.TrainingMode"):
                with m.onnx.select_model_mode_for_export(model, 0):
                    pass
        assert seen == [False, True, True, True, True, True]

    class Exportable(tt.onnx.ExportableModule):
        def forward(self, x):
            return x * 2

        def example_arguments(self):
            return (tt.ones(1),), None
    assert Exportable()(tt.ones(2)).tolist() == [2.0, 2.0] and isinstance(Exportable(), tt.nn.Module)
    with pytest.raises(NotImplementedError, match="to_onnx"):
        Exportable().to_onnx()


class _Sized:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


@pytest.mark.parametrize("n", [1, 10, 1000, 2**33])
def test_random_sampler_with_replacement_draws_torch_stream(n):
    """RandomSampler(replacement=True) yields torch's indices: 32 at a time from randint(high=n, size=(32,)),
    then the remainder; with a seeded default generator and with an explicit generator."""
    import itertools

    import tinytorch as tt
    from conftest import torch
    res = []
    for m in (tt, torch):
        m.manual_seed(7)
        s = m.utils.data.RandomSampler(_Sized(n), replacement=True, num_samples=10**10)
        head = list(itertools.islice(iter(s), 300))
        g = m.Generator().manual_seed(11)
        full = list(m.utils.data.RandomSampler(_Sized(n), replacement=True, num_samples=77, generator=g))
        after = m.randint(0, 1000, (5,), generator=g).tolist()  # the generator is left where torch leaves it
        res.append((head, full, after))
    assert res[0] == res[1]
    assert len(res[0][1]) == 77


def test_random_sampler_huge_num_samples_is_lazy():
    """10**10 draws are not materialised: the first items come at once and in constant memory."""
    import itertools
    import time
    import tracemalloc

    import tinytorch as tt
    s = tt.utils.data.RandomSampler(_Sized(100), replacement=True, num_samples=10**10)
    assert len(s) == 10**10
    tracemalloc.start()
    t0 = time.perf_counter()
    items = list(itertools.islice(iter(s), 1000))
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(items) == 1000 and all(0 <= i < 100 for i in items)
    assert elapsed < 5.0, elapsed  # 10**10 int64 draws would take minutes and 80 GB
    assert peak < 10 * 2**20, peak
    # the same without replacement: whole permutations, lazily
    s = tt.utils.data.RandomSampler(_Sized(10), num_samples=10**10)
    assert sorted(itertools.islice(iter(s), 10)) == list(range(10))


def test_random_sampler_without_replacement_and_bad_arguments_match_torch():
    import itertools

    import tinytorch as tt
    from conftest import torch
    res = []
    for m in (tt, torch):
        m.manual_seed(3)
        s = m.utils.data.RandomSampler(_Sized(7), num_samples=23)
        it = iter(s)
        m.rand(3)  # torch draws the sampler's seed at the first next(), not at iter()
        res.append((list(it), list(itertools.islice(iter(m.utils.data.RandomSampler(range(5))), 5))))
        with pytest.raises(TypeError, match="replacement should be a boolean value"):
            m.utils.data.RandomSampler(range(3), replacement=1)
        for bad in (0, -1, 2.0):
            with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
                m.utils.data.RandomSampler(range(3), num_samples=bad)
    assert res[0] == res[1]


def test_script_using_these_idioms_runs_unmodified_and_prints_what_torch_prints(tmp_path):
    """One program with the idioms that stopped public scripts: an unconditional ``import torch.onnx``, a huge
    lazily drawn RandomSampler, ``size=`` factories, Python types as dtypes, ``tensor == 'a'``; run by torch
    and through ``python -m tinytorch.run``, the outputs are identical."""
    script = tmp_path / "idioms.py"
    script.write_text(r'''
import itertools
import torch
import torch.onnx
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

torch.manual_seed(0)
print(torch.onnx.is_in_onnx_export())
data = TensorDataset(torch.arange(50, dtype=float).reshape(25, 2), torch.arange(25))
sampler = RandomSampler(data, replacement=True, num_samples=10**10)
loader = DataLoader(data, batch_size=4, sampler=sampler)
for x, y in itertools.islice(loader, 3):
    print(x.dtype, x.tolist(), y.tolist())
print(torch.zeros(size=(2, 3)).shape, torch.full(size=(2,), fill_value=3).tolist())
print(torch.randint(10, size=(5,)).tolist(), torch.rand(size=(2,)).dtype)
x = torch.ones(3, dtype=int)
print(x.dtype, x.to(float).dtype, x.sum(dtype=float).item(), torch.tensor([1.5]).to(bool).tolist())
print(x == "a", x != "a", x == None, "a" in [x])
''')
    ours = _run(["-m", "tinytorch.run", str(script)])
    theirs = _run([str(script)])
    assert ours == theirs


def test_version_policy_under_the_swap():
    """``torch.__version__`` and the ``torch`` distribution's metadata name the PyTorch API version tinytorch follows
    (so "PyTorch >= 2.6" checks pass); ``tinytorch.__version__`` stays tinytorch's own; names set on either module
    reach the other."""
    code = r'''
import importlib.metadata as md
import tinytorch, tinytorch.compat
tinytorch.compat.install()
import torch, torch.version
from torch.torch_version import TorchVersion
import packaging.version
api = "2.13.0+tinytorch." + tinytorch.__version__
assert tinytorch.__version__ == "0.1.0" and torch.__version__ == api and torch.version.__version__ == api
assert isinstance(torch.__version__, TorchVersion) and isinstance(torch.__version__, str)
assert torch.__version__ >= (2, 6) and torch.__version__ < (2, 14) and torch.__version__ >= "2.6.0"
assert torch.__version__ > packaging.version.Version("2.12") and not torch.__version__ < "2.6"
assert md.version("torch") == api and md.distribution("torch").metadata["Name"] == "torch"
assert torch.version.cuda is None and torch.version.hip is None
torch.some_global_flag = 3
assert tinytorch.some_global_flag == 3
tinytorch.other_flag = 4
assert torch.other_flag == 4
del torch.other_flag
assert not hasattr(tinytorch, "other_flag")
tinytorch.compat.uninstall()
import sys
assert "torch" not in sys.modules or sys.modules["torch"].__name__ == "torch" and hasattr(sys.modules["torch"], "_C")
print("OK")
'''
    assert _run(["-c", code]).strip().endswith("OK")


def test_torch_version_compares_as_pytorch_s():
    from conftest import torch
    import tinytorch.torch_version as ours
    for v in ("2.13.0+cpu", "2.6.0a0", "parrot"):
        for other in ("2.6", "2.13.0", (2, 6), (2, 13, 0), "zebra"):
            for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
                try:
                    want = getattr(torch.torch_version.TorchVersion(v), op)(other)
                except Exception as e:  # noqa: BLE001
                    want = type(e)
                try:
                    got = getattr(ours.TorchVersion(v), op)(other)
                except Exception as e:  # noqa: BLE001
                    got = type(e)
                assert got == want, (v, op, other)
