"""tinytorch.profiler, tinytorch.autograd.profiler and tinytorch.utils.flop_counter against PyTorch's: event names,
counts and nesting of a small model's forward and backward, the table layout, schedules, the chrome trace, and
FLOP counts."""
import json
import os
import re
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

from tinytorch import _dispatch
from tinytorch.autograd import engine


def _mlp(L, seed=0):
    L.manual_seed(seed)
    return L.nn.Sequential(L.nn.Linear(4, 3), L.nn.ReLU(), L.nn.Linear(3, 2))


def _profile_mlp(L, **kw):
    m = _mlp(L)
    x = L.randn(5, 4)
    with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU], **kw) as p:
        with L.profiler.record_function("fwd"):
            y = m(x).sum()
        y.backward()
    return p


def _names(p):
    return [e.name for e in p.events()]


def test_hook_is_off_outside_a_profiler():
    assert _dispatch._observer is None and engine._node_observer is None
    with tt.profiler.profile():
        assert _dispatch._observer is not None and engine._node_observer is not None
    assert _dispatch._observer is None and engine._node_observer is None


def test_forward_ops_match_torch_where_the_ops_are_the_same():
    tp, rp = _profile_mlp(tt, record_shapes=True), _profile_mlp(torch, record_shapes=True)
    # the ops directly inside the user range: both libraries run linear, relu, linear, sum at the top
    def top(p):
        fwd = [e for e in p.events() if e.name == "fwd"][0]
        return [(c.name, c.input_shapes) for c in fwd.cpu_children]
    assert top(tp) == [(n, s[:len(s)]) for n, s in top(rp) if n != "aten::sum"] + [("aten::sum", [[5, 2]])]
    assert [n for n, _ in top(tp)] == [n for n, _ in top(rp)]


def test_backward_nodes_match_torch():
    tp, rp = _profile_mlp(tt), _profile_mlp(torch)
    pre = "autograd::engine::evaluate_function: "

    def nodes(p):
        return [e.name[len(pre):] for e in p.events() if e.name.startswith(pre)]
    tn, rn = nodes(tp), nodes(rp)
    # PyTorch's linear is t + addmm, so its nodes are AddmmBackward0 / TBackward0; the others are shared
    shared = {"SumBackward0", "ReluBackward0", "torch::autograd::AccumulateGrad"}
    assert [n for n in tn if n in shared] == [n for n in rn if n in shared]
    assert tn.count("torch::autograd::AccumulateGrad") == 4
    for p in (tp, rp):
        for e in p.events():
            if e.name.startswith(pre):
                assert [c.name for c in e.cpu_children][:1] == [e.name[len(pre):]]
                assert e.cpu_children[0].scope == 1
    relu = [e for e in tp.events() if e.name == "ReluBackward0"][0]
    assert [c.name for c in relu.cpu_children] == ["aten::threshold_backward"]
    assert [c.name for c in [e for e in rp.events() if e.name == "ReluBackward0"][0].cpu_children] == \
        ["aten::threshold_backward"]


def test_self_time_excludes_children_and_nesting_is_consistent():
    p = _profile_mlp(tt)
    for e in p.events():
        assert e.cpu_time_total >= 0
        assert abs(e.self_cpu_time_total - (e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))) < 1e-6
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start and c.time_range.end <= e.time_range.end
    avg = p.key_averages()
    by = {a.key: a for a in avg}
    assert by["aten::linear"].count == 2 and by["fwd"].count == 1
    assert abs(sum(a.self_cpu_time_total for a in avg) - p.events().self_cpu_time_total) < 1e-3


def _table_shape(text):
    lines = text.splitlines()
    return lines[0], lines[1], lines[2], lines[-1].split(":")[0]


@pytest.mark.parametrize("grouped", [False, True])
def test_table_layout_matches_torch(grouped):
    tp, rp = _profile_mlp(tt, record_shapes=True), _profile_mlp(torch, record_shapes=True)
    t = tp.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=4)
    r = rp.key_averages(group_by_input_shape=grouped).table(sort_by="cpu_time_total", row_limit=4)
    th, rh = t.splitlines(), r.splitlines()
    assert len(th) == len(rh) == 3 + 4 + 2  # rule, header, rule, 4 rows, rule, total
    assert re.split(r"\s{2,}", th[1].strip()) == re.split(r"\s{2,}", rh[1].strip())
    assert th[-1].startswith("Self CPU time total: ") and rh[-1].startswith("Self CPU time total: ")
    # the name column is as wide as torch's (55 capped) and the fixed columns are 12 wide
    assert len(th[0]) == len(rh[0]) or grouped
    row = re.split(r"\s{2,}", th[3].strip())
    assert re.fullmatch(r"\d+\.\d\d%", row[1]) and re.fullmatch(r"[\d.]+(us|ms|s)", row[2])
    if grouped:
        assert "Input Shapes" in th[1]


def test_sort_and_row_limit():
    p = _profile_mlp(tt)
    avg = p.key_averages()
    rows = avg.table(sort_by="count", row_limit=2).splitlines()[3:5]
    counts = sorted((a.count for a in avg), reverse=True)[:2]
    assert [int(re.split(r"\s{2,}", r.strip())[-1]) for r in rows] == counts
    with pytest.raises(AttributeError):
        avg.table(sort_by="no_such_key")


def test_chrome_trace_is_valid_json(tmp_path):
    p = _profile_mlp(tt)
    path = str(tmp_path / "t.json")
    p.export_chrome_trace(path)
    d = json.load(open(path))
    evs = d["traceEvents"]
    assert {e["name"] for e in evs} == {e.name for e in p.events()}
    for e in evs:
        assert e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["ts"], float)
    # the legacy profiler writes a plain list, as PyTorch's
    with tt.autograd.profiler.profile() as lp:
        tt.ones(3) + 1
    lp.export_chrome_trace(path)
    assert [e["name"] for e in json.load(open(path))] == ["aten::add"]


def test_schedule_matches_torch():
    for kw in [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2, skip_first=3),
               dict(wait=2, warmup=1, active=3, skip_first=2, skip_first_wait=1)]:
        a, b = tt.profiler.schedule(**kw), torch.profiler.schedule(**kw)
        assert [a(i).name for i in range(20)] == [b(i).name for i in range(20)]
    with pytest.raises(AssertionError):
        tt.profiler.schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="warmup"):
        tt.profiler.schedule(wait=0, warmup=0, active=1)


def _run_schedule(L, acc_events=False):
    out = []
    x = L.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.profiler.profile(schedule=L.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                                on_trace_ready=lambda p: out.append([e.name for e in p.events()
                                                                     if e.name in ("ProfilerStep*", "aten::add")]),
                                acc_events=acc_events) as p:
            for i in range(9):
                x + i
                p.step()
    return out, p.step_num


def test_schedule_cycles_and_steps_match_torch():
    assert _run_schedule(tt) == _run_schedule(torch)


def test_tensorboard_trace_handler(tmp_path):
    x = tt.ones(2)
    with tt.profiler.profile(schedule=tt.profiler.schedule(wait=0, warmup=1, active=1),
                             on_trace_ready=tt.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), "w")) as p:
        for _ in range(4):
            x * 2
            p.step()
    files = sorted(os.listdir(tmp_path / "tb"))
    assert len(files) == 2 and all(re.fullmatch(r"w\.\d+\.pt\.trace\.json", f) for f in files)
    d = json.load(open(tmp_path / "tb" / files[0]))
    assert "aten::mul" in {e["name"] for e in d["traceEvents"]}


def test_record_function_decorator_and_legacy_profile():
    @tt.autograd.profiler.record_function("my_fn")
    def f(a):
        return a.exp()

    with tt.autograd.profiler.profile(record_shapes=True) as p:
        f(tt.ones(2, 3))
    ev = p.function_events
    assert [e.name for e in ev] == ["my_fn", "aten::exp"]
    assert ev[1].cpu_parent is ev[0] and ev[1].input_shapes == [[2, 3]]
    with pytest.raises(RuntimeError, match="not reentrant"):
        with p:
            pass
    f(tt.ones(1))  # outside a profiler: a plain call
    assert p.table().splitlines()[1].split()[0] == "Name"


def test_legacy_use_cuda_without_cuda_warns_as_torch():
    with pytest.warns(FutureWarning):
        with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
            p = tt.autograd.profiler.profile(use_cuda=True)
    assert p.use_device is None


def test_emit_nvtx_without_cuda_raises_as_torch():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with torch.autograd.profiler.emit_nvtx():
            pass
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with tt.autograd.profiler.emit_nvtx():
            pass
    assert _dispatch._observer is None
    with tt.autograd.profiler.emit_nvtx(enabled=False):
        pass


def test_activities_and_enums():
    assert tt.profiler.supported_activities() == {tt.profiler.ProfilerActivity.CPU}
    for name in ("CPU", "CUDA", "XPU", "MTIA", "HPU", "PrivateUse1"):
        assert int(getattr(tt.profiler.ProfilerActivity, name)) == int(getattr(torch.profiler.ProfilerActivity, name))
    assert [(a.name, a.value) for a in tt.profiler.ProfilerAction] == \
        [(a.name, a.value) for a in torch.profiler.ProfilerAction]
    with pytest.raises(AssertionError, match="initialized"):
        tt.profiler.profile().events()


def test_profile_memory_and_flops_columns():
    p = _profile_mlp(tt, profile_memory=True, with_flops=True)
    head = p.key_averages().table().splitlines()[1]
    assert "CPU Mem" in head and "Self CPU Mem" in head and "Total FLOPs" in head
    lin = [e for e in p.events() if e.name == "aten::linear"]
    assert [e.flops for e in lin] == [2 * 5 * 4 * 3, 2 * 5 * 3 * 2]
    assert lin[0].cpu_memory_usage == 5 * 3 * 4


# ---- FLOP counter -----------------------------------------------------------------------------------------------

def _counts(L, fn):
    from importlib import import_module
    mode = import_module(L.__name__ + ".utils.flop_counter").FlopCounterMode
    with mode(display=False) as m:
        fn(L)
    return {str(k): v for k, v in m.get_flop_counts().get("Global", {}).items()}, m.get_total_flops()


def _r(L, *shape):
    return L.tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))


CASES = {
    "mlp_fwd_bwd": lambda L: _mlp(L)(_r(L, 5, 4)).sum().backward(),
    "linear3d_bias": lambda L: L.nn.functional.linear(_r(L, 2, 5, 4), _r(L, 3, 4), _r(L, 3)),
    "linear_nobias": lambda L: L.nn.functional.linear(_r(L, 5, 4), _r(L, 3, 4)),
    "mm": lambda L: L.mm(_r(L, 3, 4), _r(L, 4, 5)),
    "addmm": lambda L: L.addmm(_r(L, 3), _r(L, 2, 4), _r(L, 4, 3)),
    "bmm": lambda L: L.bmm(_r(L, 2, 3, 4), _r(L, 2, 4, 5)),
    "baddbmm": lambda L: L.baddbmm(_r(L, 3), _r(L, 2, 2, 4), _r(L, 2, 4, 3)),
    "matmul_vec_mat": lambda L: _r(L, 4) @ _r(L, 4, 5),
    "matmul_3d_2d": lambda L: _r(L, 2, 3, 4) @ _r(L, 4, 5),
    "matmul_bcast": lambda L: _r(L, 2, 1, 3, 4) @ _r(L, 5, 4, 2),
    "matmul_2d_3d": lambda L: _r(L, 3, 4) @ _r(L, 2, 4, 5),
    "conv1d_unbatched": lambda L: L.nn.functional.conv1d(_r(L, 3, 8), _r(L, 4, 3, 3)),
    "conv2d": lambda L: L.nn.functional.conv2d(_r(L, 2, 3, 8, 8), _r(L, 4, 3, 3, 3), stride=2, padding=1),
    "conv2d_groups": lambda L: L.nn.functional.conv2d(_r(L, 2, 4, 8, 8), _r(L, 6, 2, 3, 3), groups=2),
    "conv_transpose2d": lambda L: L.nn.functional.conv_transpose2d(_r(L, 2, 3, 8, 8), _r(L, 3, 4, 3, 3)),
    "conv3d": lambda L: L.nn.functional.conv3d(_r(L, 1, 2, 4, 4, 4), _r(L, 3, 2, 2, 2, 2)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_flop_counts_match_torch(case):
    assert _counts(tt, CASES[case]) == _counts(torch, CASES[case])


def test_sdpa_flops_use_torchs_formula():
    from torch.utils.flop_counter import sdpa_flop_count
    q, k = _r(tt, 2, 3, 4, 8), _r(tt, 2, 3, 6, 8)
    v = _r(tt, 2, 3, 6, 5)
    counts, total = _counts(tt, lambda L: L.nn.functional.scaled_dot_product_attention(q, k, v))
    assert total == sdpa_flop_count((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5))
    from tinytorch.utils.flop_counter import sdpa_flop_count as ours
    with pytest.raises(AssertionError):
        ours((2, 3, 4, 8), (2, 3, 6, 7), (2, 3, 6, 5))


def test_flop_table_and_deprecated_mods(capsys):
    from tinytorch.utils.flop_counter import FlopCounterMode
    with pytest.warns(UserWarning, match="mods argument"):
        FlopCounterMode(mods=_mlp(tt))
    with FlopCounterMode() as m:
        tt.mm(_r(tt, 3, 4), _r(tt, 4, 5))
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["Module", "FLOP", "%", "Total"]
    assert out[2].split() == ["Global", "120.000", "100.00%"]
    assert out[3].split() == ["-", "aten.mm", "120.000", "100.00%"]
    assert m.get_total_flops() == 120 and _dispatch._observer is None
