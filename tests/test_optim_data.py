"""Optimizers' and schedulers' trajectories against torch; DataLoader, datasets, save/load."""
import io
import os
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch

OPTS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.1)),
    ("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.02, weight_decay=0.5, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, alpha=0.9, weight_decay=0.1, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1)), ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()), ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01)), ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)), ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Rprop", dict(lr=0.01)), ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    ("ASGD", dict(lr=0.01)), ("ASGD", dict(lr=0.01, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1)),
    ("Adafactor", dict()), ("Adafactor", dict(lr=0.05, weight_decay=0.1, d=1.5, eps=(1e-6, 1e-2), maximize=True)),
]


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_adafactor_vector_and_stacked_matrices_match_torch(shape):
    """A full second moment for vectors, row/column factors over the last two dims of a 3-D parameter."""
    a = np.random.default_rng(0).standard_normal(shape)
    p_tt, p_th = tt.nn.Parameter(tt.tensor(a)), torch.nn.Parameter(torch.tensor(a))
    o_tt, o_th = tt.optim.Adafactor([p_tt], lr=0.03), torch.optim.Adafactor([p_th], lr=0.03)
    for _ in range(5):
        for p, o in ((p_tt, o_tt), (p_th, o_th)):
            o.zero_grad()
            (p.sin() * p).sum().backward()
            o.step()
        assert_close(p_tt.detach(), p_th.detach(), "float64", 1e-9, 1e-11)
    assert set(o_tt.state[p_tt]) == set(o_th.state[p_th])
    with pytest.raises(ValueError, match="beta2_decay should be <= 0"):
        tt.optim.Adafactor([p_tt], beta2_decay=0.5)


# cpu and opencl run their fused updates, mydev the in-place ops
@pytest.mark.parametrize("device", ["cpu", "mydev"] + (["opencl"] if tt.opencl.is_available() else []))
@pytest.mark.parametrize("name,kw", OPTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTS)])
def test_optimizer_trajectory(name, kw, device):
    a = np.random.default_rng(0).standard_normal((3, 4))
    target = np.random.default_rng(1).standard_normal((3, 4))
    p_tt, p_th = tt.nn.Parameter(tt.tensor(a, device=device)), torch.nn.Parameter(torch.tensor(a))
    o_tt, o_th = getattr(tt.optim, name)([p_tt], **kw), getattr(torch.optim, name)([p_th], **kw)
    for _ in range(6):
        for p, o, lib in ((p_tt, o_tt, tt), (p_th, o_th, torch)):
            o.zero_grad()
            ((p - lib.tensor(target, device=p.device)) ** 4).sum().backward()
            o.step()
        assert_close(p_tt.detach().cpu(), p_th.detach(), "float64", 1e-9, 1e-11)
    sd = o_tt.state_dict()
    assert sd["param_groups"][0]["params"] == [0]
    assert set(sd["state"].get(0, {})) == set(o_th.state_dict()["state"].get(0, {}))


def test_optimizer_groups_state_dict_roundtrip():
    w, b = tt.nn.Parameter(tt.ones(2)), tt.nn.Parameter(tt.zeros(2))
    opt = tt.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    (w.sum() + b.sum()).backward()
    opt.step()
    sd = opt.state_dict()
    opt2 = tt.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    assert tt.equal(opt2.state[w]["momentum_buffer"], opt.state[w]["momentum_buffer"])
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(ValueError, match="empty parameter list"):
        tt.optim.Adam([])


SCHEDS = [
    ("StepLR", dict(step_size=3, gamma=0.5)), ("MultiStepLR", dict(milestones=[2, 5], gamma=0.1)),
    ("ExponentialLR", dict(gamma=0.9)), ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("LinearLR", dict(start_factor=0.2, total_iters=4)), ("ConstantLR", dict(factor=0.5, total_iters=3)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=12)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=10, anneal_strategy="linear", three_phase=True)),
    ("PolynomialLR", dict(total_iters=6, power=2.0)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9)),
]


@pytest.mark.parametrize("name,kw", SCHEDS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDS)])
def test_scheduler_sequence(name, kw):
    seqs = []
    for lib in (tt, torch):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        sch = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
        seq = []
        for _ in range(10):
            opt.step()
            sch.step()
            seq.append((opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"]))
        seqs.append(seq)
    np.testing.assert_allclose(seqs[0], seqs[1], rtol=1e-12, atol=1e-15)


def _lr_sequence(lib, make, metrics=None):
    p = lib.nn.Parameter(lib.zeros(1))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    sch = make(lib.optim.lr_scheduler, opt)
    seq = []
    for i in range(14):
        opt.step()
        sch.step(metrics[i]) if metrics else sch.step()
        seq.append(opt.param_groups[0]["lr"])
    return seq


@pytest.mark.parametrize("make", [
    lambda S, o: S.SequentialLR(o, [S.LinearLR(o, 0.1, total_iters=3), S.ExponentialLR(o, 0.8)], milestones=[4]),
    lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, 0.5, total_iters=2), S.StepLR(o, 2, 0.5),
                                    S.CosineAnnealingLR(o, 5)], milestones=[3, 8]),
    lambda S, o: S.ChainedScheduler([S.LinearLR(o, 0.2, total_iters=4), S.ExponentialLR(o, 0.9)]),
    lambda S, o: S.ChainedScheduler([S.StepLR(o, 3, 0.5), S.PolynomialLR(o, 10, 1.5), S.CosineAnnealingLR(o, 20)]),
], ids=["sequential-warmup", "sequential-3", "chained", "chained-3"])
def test_composed_schedulers_match_torch(make):
    np.testing.assert_allclose(_lr_sequence(tt, make), _lr_sequence(torch, make), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=3, gamma=0.5)), ("MultiStepLR", dict(milestones=[2, 5, 5])),
                                     ("ExponentialLR", dict(gamma=0.8)), ("ConstantLR", dict(factor=0.5, total_iters=3)),
                                     ("LinearLR", dict(start_factor=0.2, total_iters=6)),
                                     ("CosineAnnealingLR", dict(T_max=4, eta_min=0.01)),
                                     ("PolynomialLR", dict(total_iters=8, power=2.0))])
def test_schedulers_keep_an_lr_changed_between_steps_like_torch(name, kw):
    """torch's decaying schedules are chainable: each step scales the group's current lr, so a change made to
    the lr between steps (by hand, or by another scheduler) carries on; ``step(epoch)`` jumps in closed form."""
    seqs = []
    for lib in (tt, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        sch = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
        seq = []
        for i in range(12):
            opt.step()
            sch.step()
            if i == 3:
                opt.param_groups[0]["lr"] *= 0.5
            seq.append(opt.param_groups[0]["lr"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch deprecates step(epoch)
            sch.step(2)
        seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    np.testing.assert_allclose(seqs[0], seqs[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kw", [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2, min_lr=0.02),
                                dict(threshold=0.1, threshold_mode="abs", patience=0)])
def test_reduce_lr_on_plateau_matches_torch(kw):
    metrics = [1.0, 0.9, 0.95, 0.92, 0.91, 0.99, 0.85, 0.86, 0.86, 0.87, 0.2, 0.3, 0.3, 0.3]
    make = lambda S, o: S.ReduceLROnPlateau(o, **kw)  # noqa: E731
    np.testing.assert_allclose(_lr_sequence(tt, make, metrics), _lr_sequence(torch, make, metrics), rtol=1e-12)


def test_multiplicative_lr_matches_torch():
    make = lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.5)  # noqa: E731
    np.testing.assert_allclose(_lr_sequence(tt, make), _lr_sequence(torch, make), rtol=1e-12)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        tt.optim.lr_scheduler.MultiplicativeLR(tt.optim.SGD([tt.nn.Parameter(tt.zeros(1))], lr=0.1),
                                               [lambda e: 1.0, lambda e: 1.0])


def test_lambda_lr():
    p = tt.nn.Parameter(tt.zeros(1))
    opt = tt.optim.Adam([p], lr=1.0)
    sch = tt.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1))
    lrs = []
    for _ in range(3):
        lrs.append(sch.get_last_lr()[0])
        opt.step()
        sch.step()
    assert lrs == [1.0, 0.5, 1 / 3]


def test_dataloader_batches_shuffle_and_collate():
    from tinytorch.utils.data import DataLoader, Dataset, TensorDataset, random_split, Subset
    x = tt.arange(10).float().unsqueeze(1)
    y = tt.arange(10)
    ds = TensorDataset(x, y)
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape[0] for b in batches] == [4, 4, 2] and batches[1][1].tolist() == [4, 5, 6, 7]
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    order1 = [b[1].tolist() for b in DataLoader(ds, 3, shuffle=True, generator=tt.Generator().manual_seed(5))]
    order2 = [b[1].tolist() for b in DataLoader(ds, 3, shuffle=True, generator=tt.Generator().manual_seed(5))]
    assert order1 == order2 and sorted(sum(order1, [])) == list(range(10)) and sum(order1, []) != list(range(10))

    class Dicts(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": tt.ones(2) * i, "n": i, "f": 0.5, "pair": (i, tt.tensor(i))}

    b = next(iter(DataLoader(Dicts(), batch_size=5)))
    assert b["x"].shape == (5, 2) and b["n"].tolist() == [0, 1, 2, 3, 4] and b["f"].dtype is tt.float64  # as torch
    assert b["pair"][1].tolist() == [0, 1, 2, 3, 4]
    a, c = random_split(ds, [7, 3], generator=tt.Generator().manual_seed(0))
    assert len(a) == 7 and len(c) == 3 and not set(a.indices) & set(c.indices)
    assert len(random_split(ds, [0.5, 0.5])[0]) == 5
    assert Subset(ds, [2, 3])[1][1].item() == 3
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


def test_weighted_random_sampler():
    from tinytorch.utils.data import WeightedRandomSampler
    w = [0.0, 1.0, 3.0, 0.0]
    idx = list(WeightedRandomSampler(w, 4000, generator=tt.Generator().manual_seed(0)))
    assert len(idx) == 4000 and set(idx) == {1, 2} and abs(idx.count(2) / 4000 - 0.75) < 0.03
    no_rep = list(WeightedRandomSampler(tt.tensor([1.0, 1.0, 5.0]), 3, replacement=False))
    assert sorted(no_rep) == [0, 1, 2]
    assert len(WeightedRandomSampler(w, 7)) == 7
    for bad, msg in ((dict(weights=w, num_samples=0), "num_samples should be a positive integer"),
                     (dict(weights=w, num_samples=2, replacement=1), "replacement should be a boolean"),
                     (dict(weights=[[1.0]], num_samples=2), "weights should be a 1d sequence")):
        with pytest.raises(ValueError, match=msg):
            WeightedRandomSampler(**bad)
        with pytest.raises(ValueError, match=msg):
            torch.utils.data.WeightedRandomSampler(**bad)


def test_distributed_sampler_matches_torch_without_shuffle_and_partitions_with_it():
    from tinytorch.utils.data import DistributedSampler
    from torch.utils.data.distributed import DistributedSampler as TorchDS
    for n, reps, drop in ((10, 3, False), (10, 3, True), (2, 5, False), (12, 4, True)):
        for r in range(reps):
            ours, theirs = DistributedSampler(range(n), reps, r, shuffle=False, drop_last=drop), \
                TorchDS(range(n), reps, r, shuffle=False, drop_last=drop)
            assert list(ours) == list(theirs) and len(ours) == len(theirs), (n, reps, r, drop)
    # shuffled: the ranks share one permutation per epoch, so together they cover the dataset exactly once
    parts = [DistributedSampler(range(12), 3, r, seed=5) for r in range(3)]
    assert sorted(sum((list(p) for p in parts), [])) == list(range(12))
    first = list(parts[0])
    parts[0].set_epoch(1)
    assert list(parts[0]) != first and list(DistributedSampler(range(12), 3, 0, seed=5)) == first
    for bad in (dict(num_replicas=2, rank=2), dict(num_replicas=2, rank=-1)):
        with pytest.raises(ValueError, match="Invalid rank"):
            DistributedSampler(range(4), **bad)
        with pytest.raises(ValueError, match="Invalid rank"):
            TorchDS(range(4), **bad)
    for cls in (DistributedSampler, TorchDS):  # no process group: both ask for one
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            cls(range(4))


def test_stack_chain_datasets_default_convert_and_worker_info():
    from tinytorch.utils import data as D
    a, b = D.TensorDataset(tt.arange(4)), tt.arange(4) * 10
    st = D.StackDataset(a, b)
    assert len(st) == 4 and st[2][0][0].item() == 2 and st[2][1].item() == 20
    sd = D.StackDataset(x=b, y=b + 1)
    assert set(sd[1]) == {"x", "y"} and (sd[1]["x"].item(), sd[1]["y"].item()) == (10, 11)
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        D.StackDataset(b, tt.arange(3))

    class Count(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    ch = D.ChainDataset([Count(2), Count(3)])
    assert list(ch) == [0, 1, 0, 1, 2] and len(ch) == 5
    for x in (np.arange(3), (np.ones(2), 3), {"a": np.float64(2.5)}, ["s", np.array(["a"])]):
        got, want = D.default_convert(x), torch.utils.data.default_convert(x)
        assert type(got).__name__ == type(want).__name__ and repr(got) == repr(want)
    assert D.get_worker_info() is None
    assert [b.tolist() for b in D.DataLoader(np.arange(6).reshape(3, 2), batch_size=None)] == [[0, 1], [2, 3], [4, 5]]


DATA = os.path.join(os.path.dirname(__file__), "..", "data", "mnist")


def test_mnist_dataset_reads_and_verifies(tmp_path):
    ds = tt.datasets.MNIST(DATA, train=False)
    assert len(ds) == 10000 and ds.data.shape == (10000, 28, 28) and ds.data.dtype is tt.uint8
    img, label = ds[0]
    assert img.shape == (1, 28, 28) and label == 7 and 0 <= img.min().item() <= img.max().item() <= 1
    x, y = next(iter(tt.utils.data.DataLoader(ds, batch_size=32)))
    assert x.shape == (32, 1, 28, 28) and y.tolist()[:3] == [7, 2, 1]
    with pytest.raises(tt.datasets.DatasetFileError, match="t10k-images-idx3-ubyte.gz not found"):
        tt.datasets.MNIST(str(tmp_path), train=False)
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        data = open(os.path.join(DATA, name), "rb").read()
        (tmp_path / name).write_bytes(data if "labels" in name else data[:-10] + b"0" * 10)
    with pytest.raises(tt.datasets.DatasetFileError, match="corrupt: md5"):
        tt.datasets.MNIST(str(tmp_path), train=False)


def test_save_load_roundtrip(tmp_path):
    m = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.BatchNorm1d(2))
    obj = {"model": m.state_dict(), "step": 7, "lr": 1e-3, "names": ["a", "b"], "t": (1, None),
           "bf": tt.ones(2, dtype=tt.bfloat16), "i": tt.arange(4).view(2, 2).t()}
    path = tmp_path / "ckpt.pt"
    tt.save(obj, path)
    back = tt.load(path)
    assert list(back["model"]) == list(m.state_dict()) and back["step"] == 7 and back["t"] == (1, None)
    assert tt.equal(back["model"]["0.weight"], m.state_dict()["0.weight"])
    assert back["bf"].dtype is tt.bfloat16 and back["i"].tolist() == [[0, 2], [1, 3]]
    m2 = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.BatchNorm1d(2))
    m2.load_state_dict(back["model"])
    buf = io.BytesIO()
    tt.save(tt.ones(3), buf)
    buf.seek(0)
    assert tt.load(buf).tolist() == [1.0, 1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]  # no temporary file left behind


def test_save_is_atomic_and_load_refuses_code(tmp_path):
    import pickle
    import zipfile
    path = tmp_path / "x.pt"
    tt.save({"a": tt.ones(2)}, path)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        tt.save({"a": lambda: 0}, path)  # a local function cannot be pickled (nor can torch.save)
    assert tt.load(path)["a"].tolist() == [1.0, 1.0]  # the failed save left the old file intact
    assert sorted(os.listdir(tmp_path)) == ["x.pt"]
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps(os.system))
    with pytest.raises(RuntimeError, match="not a zip checkpoint"):
        tt.load(evil)
    # a checkpoint in torch's zip format whose pickle names os.system: refused unless weights_only=False
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps((os.getcwd, ()), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="unsupported GLOBAL posix.getcwd whose module posix is blocked"):
        tt.load(evil)
    assert tt.load(evil, weights_only=False) == (os.getcwd, ())


def test_checkpoints_move_between_torch_and_tinytorch(tmp_path):
    """tinytorch.save writes torch's zip format and tinytorch.load reads it: a model and optimizer state saved
    by one library load into the other (torch with weights_only=True, and mmap), views keep sharing storage,
    and dtypes, devices, sizes, parameters and nested containers come back as the other library's."""
    m_tt = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.BatchNorm1d(2))
    opt = tt.optim.Adam(m_tt.parameters())
    m_tt(tt.randn(4, 3)).sum().backward()
    opt.step()
    x = tt.arange(6.0).reshape(2, 3).t()
    obj = {"model": m_tt.state_dict(), "opt": opt.state_dict(), "x": x, "row": x[1], "p": tt.nn.Parameter(tt.ones(2)),
           "dt": tt.bfloat16, "dev": tt.device("cpu"), "size": x.shape, "bf": tt.ones(2, dtype=tt.bfloat16),
           "i8": tt.tensor([1, -2], dtype=tt.int8), "c": tt.tensor([1 + 2j]), "misc": (1, 2.5, None, "s", [True])}
    tt.save(obj, tmp_path / "tt.pt")
    for kw in ({}, {"mmap": True}):
        got = torch.load(tmp_path / "tt.pt", weights_only=True, **kw)
        assert got["x"].tolist() == x.tolist() and got["x"].stride() == (1, 3)
        assert got["row"].untyped_storage().data_ptr() == got["x"].untyped_storage().data_ptr()
        assert (got["dt"], got["dev"], got["size"]) == (torch.bfloat16, torch.device("cpu"), torch.Size([3, 2]))
        assert isinstance(got["p"], torch.nn.Parameter) and got["misc"] == (1, 2.5, None, "s", [True])
        assert got["bf"].dtype == torch.bfloat16 and got["i8"].tolist() == [1, -2] and got["c"].tolist() == [1 + 2j]
    m_th = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    m_th.load_state_dict(got["model"])
    opt_th = torch.optim.Adam(m_th.parameters())
    opt_th.load_state_dict(got["opt"])
    np.testing.assert_array_equal(m_th[0].weight.detach().numpy(), m_tt[0].weight.detach().numpy())
    np.testing.assert_array_equal(opt_th.state_dict()["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())
    # and back: a checkpoint torch wrote
    torch.save({"model": m_th.state_dict(), "opt": opt_th.state_dict(), "x": got["x"], "row": got["x"][1],
                "p": torch.nn.Parameter(torch.ones(2)), "dt": torch.float16, "size": torch.Size([2])},
               tmp_path / "th.pt")
    back = tt.load(tmp_path / "th.pt")
    assert back["x"].tolist() == x.tolist() and back["x"].stride() == (1, 3)
    assert back["row"].data_ptr() == back["x"].data_ptr() + 4  # a view of the same storage again
    assert back["dt"] is tt.float16 and back["size"] == (2,) and isinstance(back["p"], tt.nn.Parameter)
    assert back["model"]._metadata[""] == {"version": 1}
    m2 = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.BatchNorm1d(2))
    m2.load_state_dict(back["model"])
    opt2 = tt.optim.Adam(m2.parameters())
    opt2.load_state_dict(back["opt"])
    np.testing.assert_array_equal(m2[1].running_var.numpy(), m_tt[1].running_var.numpy())
    torch.save({"w": torch.ones(2)}, tmp_path / "gpu.pt")
    with zipfile_replace(tmp_path / "gpu.pt", b"cpu", b"cuda:0") as p:  # as if saved from a GPU
        with pytest.raises(RuntimeError, match="map_location"):
            tt.load(p)
        assert tt.load(p, map_location="cpu")["w"].tolist() == [1.0, 1.0]
        assert tt.load(p, map_location={"cuda:0": "cpu"})["w"].tolist() == [1.0, 1.0]


class zipfile_replace:
    """A copy of a torch checkpoint whose pickle has ``old`` replaced by ``new`` (same length not required)."""

    def __init__(self, path, old, new):
        self.path, self.old, self.new = path, old, new

    def __enter__(self):
        import zipfile
        out = self.path.with_suffix(".edited.pt")
        with zipfile.ZipFile(self.path) as zin, zipfile.ZipFile(out, "w") as zout:
            for n in zin.namelist():
                data = zin.read(n)
                if n.endswith("data.pkl"):
                    data = data.replace(b"X\x03\x00\x00\x00" + self.old,
                                        b"X" + len(self.new).to_bytes(4, "little") + self.new)
                zout.writestr(n, data)
        return out

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"),
                                dict(lr=0.5, history_size=3, max_iter=7, line_search_fn="strong_wolfe"),
                                dict(lr=0.1, max_iter=4)])
@pytest.mark.parametrize("device", ["cpu", "mydev"])
def test_lbfgs_trajectory_matches_torch(kw, device):
    """L-BFGS on the Rosenbrock function plus a least-squares fit, in float64: the iterates follow torch's (up to
    rounding, which Rosenbrock's curvature amplifies to ~1e-6) with the same numbers of evaluations."""
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((8, 3)), rng.standard_normal(8)

    def run(m, dev):
        xy = m.tensor([-1.5, 2.0], dtype=m.float64, device=dev, requires_grad=True)
        w = m.zeros(3, dtype=m.float64, device=dev, requires_grad=True)
        At, bt = m.tensor(A, device=dev), m.tensor(b, device=dev)
        opt = m.optim.LBFGS([xy, w], **kw)

        def closure():
            opt.zero_grad()
            rosen = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
            loss = rosen + ((At @ w - bt) ** 2).sum()
            loss.backward()
            return loss
        traj = []
        for _ in range(5):
            traj.append(float(opt.step(closure)))
        traj += xy.detach().cpu().tolist() + w.detach().cpu().tolist()
        return traj, opt.state[xy]["func_evals"], opt.state[xy]["n_iter"]

    ours, theirs = run(tt, device), run(torch, "cpu")
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-4, atol=1e-6)
    assert ours[1:] == theirs[1:]


def test_lbfgs_rejects_groups_and_missing_closure():
    p = tt.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        tt.optim.LBFGS([{"params": [p]}, {"params": [tt.zeros(1, requires_grad=True)]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe'"):
        p.grad = tt.ones(2)
        tt.optim.LBFGS([p], line_search_fn="armijo").step(lambda: (p * p).sum())


def test_grad_scaler_matches_torch():
    """Scale sequence, skipped steps on inf, explicit unscale_, and state_dict, step for step against torch."""
    import warnings

    def run(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        sc = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        scales, ws = [], []
        for i in range(6):
            opt.zero_grad()
            loss = (w * w).sum() * (float("inf") if i == 3 else 1.0)
            sc.scale(loss).backward()
            if i == 1:
                sc.unscale_(opt)
                with pytest.raises(RuntimeError, match="already been called"):
                    sc.unscale_(opt)
            sc.step(opt)
            sc.update()
            scales.append(sc.get_scale())
            ws.append(w.detach().numpy().copy())
        return scales, np.array(ws), sc.state_dict()
    (s1, w1, d1), (s2, w2, d2) = run(tt), run(torch)
    assert s1 == s2 and d1 == d2
    np.testing.assert_allclose(w1, w2, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not tt.cuda.amp.GradScaler().is_enabled() and not torch.cuda.amp.GradScaler().is_enabled()
    off = tt.amp.GradScaler("cpu", enabled=False)
    x = tt.ones(2)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}


def test_poisson_binomial_cauchy_geometric_sample_statistics():
    """Different random streams than torch, so moments: means and variances of 20000 draws per parameter."""
    tt.manual_seed(0)
    x = tt.poisson(tt.tensor([0.5, 4.0, 20.0]).expand(20000, 3))
    assert x.dtype == tt.float32 and np.allclose(x.mean(0).numpy(), [0.5, 4, 20], rtol=0.03)
    assert np.allclose(x.var(0).numpy(), [0.5, 4, 20], rtol=0.06)
    b = tt.binomial(tt.tensor([10.0, 50.0]).expand(20000, 2), tt.tensor([0.3, 0.9]))
    assert np.allclose(b.mean(0).numpy(), [3, 45], rtol=0.02) and np.allclose(b.var(0).numpy(), [2.1, 4.5], rtol=0.06)
    assert float(b.max()) <= 50 and float(b.min()) >= 0
    assert abs(float(tt.empty(20000).cauchy_(1.0, 2.0).median()) - 1.0) < 0.1
    g = tt.empty(20000).geometric_(0.25)
    assert abs(float(g.mean()) - 4.0) < 0.15 and float(g.min()) == 1.0
    for lib in (tt, torch):
        with pytest.raises(RuntimeError):
            lib.poisson(lib.tensor([-1.0]))


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.02, weight_decay=0.0, momentum=0.9, nesterov=False, ns_steps=3),
                                dict(lr=0.01, adjust_lr_fn="match_rms_adamw")])
@pytest.mark.parametrize("shape", [(3, 5), (6, 4)])
def test_muon_trajectory_matches_torch(kw, shape):
    """Muon on wide and tall matrices. Its Newton-Schulz iteration runs in bfloat16 in both libraries, so the
    trajectories agree to bfloat16 precision of the update times the learning rate."""
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    target = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    p_tt, p_th = tt.nn.Parameter(tt.tensor(a)), torch.nn.Parameter(torch.tensor(a))
    o_tt, o_th = tt.optim.Muon([p_tt], **kw), torch.optim.Muon([p_th], **kw)
    for _ in range(5):
        for p, o, lib in ((p_tt, o_tt, tt), (p_th, o_th, torch)):
            o.zero_grad()
            ((p - lib.tensor(target)) ** 2).sum().backward()
            o.step()
        assert_close(p_tt.detach(), p_th.detach(), "float32", 0, 0.2 * kw.get("lr", 1e-3))  # a step is ~lr
    assert not np.allclose(p_tt.detach().numpy(), a)  # it moved
    assert set(o_tt.state[p_tt]) == set(o_th.state[p_th])
    for m in (tt, torch):
        with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
            m.optim.Muon([m.nn.Parameter(m.ones(3))])
        with pytest.raises(ValueError, match="Adjust learning rate function bad is not supported"):
            m.optim.Muon([m.nn.Parameter(m.ones(3, 3))], adjust_lr_fn="bad")


def _swa_setup(m, avg):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Linear(4, 1))
    if m is tt:  # the same weights as torch's
        net.load_state_dict({k: tt.tensor(v.numpy()) for k, v in _swa_setup(torch, None)[0].state_dict().items()})
    kw = {"multi_avg_fn": m.optim.swa_utils.get_ema_multi_avg_fn(0.9)} if avg == "ema_multi" else \
        {"avg_fn": m.optim.swa_utils.get_ema_avg_fn(0.8)} if avg == "ema" else {}
    return net, (m.optim.swa_utils.AveragedModel(net, **kw) if avg is not None else None)


@pytest.mark.parametrize("avg", ["swa", "ema", "ema_multi"])
def test_averaged_model_and_update_bn_match_torch(avg):
    """AveragedModel (SWA, EMA per tensor, EMA in place) over an SGD run, its state_dict, then update_bn
    recomputing the batch-norm statistics of the averaged model."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((8, 3)).astype(np.float32) for _ in range(4)]
    res = {}
    for m in (torch, tt):
        net, swa = _swa_setup(m, avg)
        opt = m.optim.SGD(net.parameters(), lr=0.1)
        for x in xs:
            opt.zero_grad()
            net(m.tensor(x)).pow(2).mean().backward()
            opt.step()
            swa.update_parameters(net)
        m.optim.swa_utils.update_bn([(m.tensor(x), 0) for x in xs], swa)
        res[m] = ({k: v.detach().numpy() for k, v in swa.state_dict().items()}, swa.training)
    assert list(res[tt][0]) == list(res[torch][0])
    for k, v in res[torch][0].items():
        np.testing.assert_allclose(res[tt][0][k], v, rtol=1e-5, atol=1e-6, err_msg=k)
    assert res[tt][1] == res[torch][1]


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05), dict(swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear"),
                                dict(swa_lr=0.01, anneal_epochs=0)])
def test_swalr_schedule_matches_torch(kw):
    seqs = []
    for m in (torch, tt):
        opt = m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=0.5)
        sched = m.optim.swa_utils.SWALR(opt, **kw)
        seq = []
        for _ in range(12):
            opt.step()
            sched.step()
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    np.testing.assert_allclose(seqs[1], seqs[0], rtol=1e-12)
    for m in (torch, tt):
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
            m.optim.swa_utils.SWALR(m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=0.5), 0.1, anneal_strategy="x")
        with pytest.raises(ValueError, match="Invalid decay value"):
            m.optim.swa_utils.get_ema_avg_fn(1.5)


def test_optimizer_step_hooks_match_torch():
    for m in (torch, tt):
        p = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([p], lr=0.1)
        log = []
        pre = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt)))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", float(p.detach()[0]))))
        p.sum().backward()
        opt.step()
        pre.remove()
        opt.step()
        assert [(k, round(v, 5) if isinstance(v, float) else v) for k, v in log] == \
            [("pre", True), ("post", 0.9), ("post", 0.8)]


def test_default_collate_matches_torch():
    """Tuples collate to lists, Python floats to float64, strings stay as the batch's tuple, mappings, named
    tuples and NumPy values as torch's default_collate."""
    import collections
    Pt = collections.namedtuple("Pt", "x y")

    def sample(m, i):
        return {"a": m.tensor([i, i + 1.0]), "b": i, "c": (np.float32(i), f"s{i}"), "d": Pt(i, 2.0 * i),
                "e": np.arange(2) * i, "f": [True, i]}
    got = [repr(m.utils.data.default_collate([sample(m, i) for i in range(3)])) for m in (tt, torch)]
    assert got[0] == got[1]
    loaders = [[repr(b) for b in m.utils.data.DataLoader(m.utils.data.TensorDataset(m.arange(5.0)), batch_size=2)]
               for m in (tt, torch)]
    assert loaders[0] == loaders[1]
    for m in (tt, torch):
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
            m.utils.data.default_collate([object(), object()])


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                                  "ASGD", "Rprop"])
def test_optimizer_param_groups_have_torchs_keys_and_defaults(name):
    groups = [getattr(m.optim, name)([m.nn.Parameter(m.ones(2))]).param_groups[0] for m in (tt, torch)]
    assert {k: repr(v) for k, v in groups[0].items() if k != "params"} == \
        {k: repr(v) for k, v in groups[1].items() if k != "params"}


def test_adam_decoupled_weight_decay_is_adamw():
    w0 = np.random.default_rng(0).standard_normal((3, 3))
    res = []
    for m, make in ((torch, lambda p: torch.optim.Adam(p, lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)),
                    (tt, lambda p: tt.optim.Adam(p, lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)),
                    (tt, lambda p: tt.optim.AdamW(p, lr=0.1, weight_decay=0.5))):
        p = m.nn.Parameter(m.tensor(w0))
        opt = make([p])
        for _ in range(5):
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
        res.append(p.detach().numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)
    np.testing.assert_allclose(res[2], res[0], rtol=1e-12)


def test_dataloader_keeps_torchs_arguments_and_rejects_worker_options_without_workers():
    for m in (tt, torch):
        dl = m.utils.data.DataLoader(list(range(4)), batch_size=2, pin_memory=False, timeout=0, in_order=True)
        assert (dl.pin_memory, dl.timeout, dl.prefetch_factor, dl.persistent_workers) == (False, 0, None, False)
        with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
            m.utils.data.DataLoader([1], prefetch_factor=2)
        with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
            m.utils.data.DataLoader([1], persistent_workers=True)
