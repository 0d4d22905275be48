"""tinytorch.utils.tensorboard.SummaryWriter against torch.utils.tensorboard: the same calls, read back with
tensorboard's EventAccumulator, give the same scalars, histograms, images, text and hparams."""
import io
import os

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

import tensorboard  # noqa: E402,F401  (a declared test dependency: a missing one fails here, never skips)
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from tinytorch.utils.tensorboard import SummaryWriter  # noqa: E402


def _write(L, writer_cls, d):
    rng = np.random.default_rng(0)
    hist = rng.standard_normal(200).astype("float32")
    chw = rng.random((3, 4, 5)).astype("float32")
    hwc_u8 = (rng.random((4, 5, 3)) * 255).astype("uint8")
    gray = rng.random((6, 7)).astype("float32")
    with writer_cls(str(d)) as w:
        for i in range(3):
            w.add_scalar("loss", L.tensor(1.5 / (i + 1)), i, walltime=100.0 + i)
        w.add_scalar("lr", 0.1, 7)
        w.add_scalars("pair", {"a": 1.0, "b": 2.0}, 2, walltime=1.0)
        w.add_histogram("h", L.tensor(hist), 0)
        w.add_histogram("h_bins", L.tensor(hist), 1, bins=10)
        w.add_image("chw", L.tensor(chw), 0)
        w.add_image("hwc", L.tensor(hwc_u8), 0, dataformats="HWC")
        w.add_image("hw", L.tensor(gray), 0, dataformats="HW")
        w.add_image("nchw", L.tensor(np.stack([chw, chw])), 0, dataformats="NCHW")
        w.add_text("note", "hello *world*", 3)
        w.add_hparams({"lr": 0.01, "opt": "sgd", "flag": True}, {"hp/acc": 0.75}, run_name="run",
                      hparam_domain_discrete={"opt": ["sgd", "adam"], "lr": [0.01, 0.1]})
    return d


def _acc(path):
    a = EventAccumulator(str(path), size_guidance={"images": 0, "histograms": 0, "scalars": 0, "tensors": 0})
    a.Reload()
    return a


def _decode(png):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    return (_write(tt, SummaryWriter, tmp_path_factory.mktemp("tt")),
            _write(torch, TorchWriter, tmp_path_factory.mktemp("torch")))


def test_scalars(runs):
    a, b = _acc(runs[0]), _acc(runs[1])
    assert sorted(a.Tags()["scalars"]) == sorted(b.Tags()["scalars"]) == ["loss", "lr"]
    for tag in ("loss", "lr"):
        assert [(e.step, e.value) for e in a.Scalars(tag)] == [(e.step, e.value) for e in b.Scalars(tag)]
    assert [e.wall_time for e in a.Scalars("loss")] == [100.0, 101.0, 102.0]
    # add_scalars: one run directory per key
    assert sorted(d for d in os.listdir(runs[0]) if d.startswith("pair")) == \
        sorted(d for d in os.listdir(runs[1]) if d.startswith("pair")) == ["pair_a", "pair_b"]
    for k, v in (("a", 1.0), ("b", 2.0)):
        assert [(e.step, e.value) for e in _acc(runs[0] / f"pair_{k}").Scalars("pair")] == [(2, v)]


def test_histograms(runs):
    a, b = _acc(runs[0]), _acc(runs[1])
    for tag in ("h", "h_bins"):
        x, y = a.Histograms(tag)[0].histogram_value, b.Histograms(tag)[0].histogram_value
        assert (x.min, x.max, x.num) == (y.min, y.max, y.num)
        assert np.isclose(x.sum, y.sum) and np.isclose(x.sum_squares, y.sum_squares)
        assert list(x.bucket) == list(y.bucket)
        assert np.allclose(x.bucket_limit, y.bucket_limit)


def test_images(runs):
    a, b = _acc(runs[0]), _acc(runs[1])
    assert sorted(a.Tags()["images"]) == sorted(b.Tags()["images"])
    for tag in a.Tags()["images"]:
        x, y = a.Images(tag)[0], b.Images(tag)[0]
        assert (x.width, x.height) == (y.width, y.height)
        assert np.array_equal(_decode(x.encoded_image_string), _decode(y.encoded_image_string))


def test_text_and_hparams(runs):
    a, b = _acc(runs[0]), _acc(runs[1])
    assert a.Tensors("note/text_summary")[0].tensor_proto == b.Tensors("note/text_summary")[0].tensor_proto
    assert a.Tensors("note/text_summary")[0].step == 3
    ha, hb = _acc(runs[0] / "run"), _acc(runs[1] / "run")
    assert ha.summary_metadata.keys() == hb.summary_metadata.keys()
    for tag in ha.summary_metadata:
        assert ha.SummaryMetadata(tag) == hb.SummaryMetadata(tag)
    assert [e.value for e in ha.Scalars("hp/acc")] == [0.75]


def test_errors_and_default_logdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_x")
    assert w.log_dir.startswith("runs" + os.sep) and w.log_dir.endswith("_x") and os.path.isdir(w.log_dir)
    with pytest.raises(AssertionError, match="one element"):
        w.add_scalar("s", tt.ones(2))
    with pytest.raises(TypeError, match="should be dictionary"):
        w.add_hparams([1], {})
    with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
        w.add_image("i", tt.ones(3, 4))
    w.close()
    w.close()  # a second close does nothing


def test_add_graph_names_module_scopes_as_torch(tmp_path):
    """The graph written by ``add_graph`` has PyTorch's IO nodes and module scopes (``Net/Linear[fc1]``), its edges
    in the same order, and the output shapes; the ops inside a scope differ (an fx trace keeps a Linear whole)."""
    import subprocess
    import sys
    code = r'''
import sys, torch
from torch.utils.tensorboard import SummaryWriter
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc1 = torch.nn.Linear(4, 8); self.fc2 = torch.nn.Linear(8, 2)
    def forward(self, x): return self.fc2(torch.relu(self.fc1(x)))
w = SummaryWriter(sys.argv[1]); w.add_graph(Net(), torch.randn(3, 4)); w.close()
ea = EventAccumulator(sys.argv[1]); ea.Reload()
for n in ea.Graph().node:
    shapes = [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape]
    print(n.name, n.op == "IO Node", "|".join(n.input), shapes)
'''
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for i, runner in enumerate((["-m", "tinytorch.run", "-c"], ["-c"])):
        if runner[0] == "-m":  # tinytorch.run takes a script path
            path = tmp_path / "g.py"
            path.write_text(code)
            args = ["-m", "tinytorch.run", str(path)]
        else:
            args = ["-c", code]
        r = subprocess.run([sys.executable] + args + [str(tmp_path / f"run{i}")], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=root))
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append([line.split(" ", 1) for line in r.stdout.strip().splitlines()])
    ours, theirs = outs

    def scopes(lines):  # the module path of each node: its name up to the last "Type[attr]" part
        out = []
        for name, _ in lines:
            parts = name.split("/")
            last = max((i for i, p in enumerate(parts) if "[" in p), default=None)
            if last is not None:
                out.append("/".join(parts[:last + 1]))
        return out

    assert [n for n, _ in ours if n.startswith(("input/", "output/"))] == \
        [n for n, _ in theirs if n.startswith(("input/", "output/"))]
    assert sorted(set(scopes(ours))) == sorted(set(scopes(theirs))) == ["Net/Linear[fc1]", "Net/Linear[fc2]"]
    io = {n: rest for n, rest in ours}
    assert io["input/x"].endswith("[[3, 4]]") and io["output/output.1"].startswith("True Net/Linear[fc2]/")
    assert dict(theirs)["output/output.1"].startswith("True Net/Linear[fc2]/")
