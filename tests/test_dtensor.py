"""torch.distributed.tensor (DTensor, placements, shard arithmetic) and torch.distributed.device_mesh.

The placement values and the shard arithmetic are compared with real PyTorch's in this process (meshes built
with ``_init_backend=False``, which needs no process group in either library). DeviceMesh and DTensor with real
communication run as MPI jobs of tests/distributed/dtensor.py on 1, 2 and 4 ranks, each rank checking its pieces
against ``torch.chunk`` of the global tensor; this pytest process never initializes MPI itself."""
import itertools
import os
import re
import subprocess
import sys

import pytest

import tinytorch as tt
from conftest import torch
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from tinytorch.distributed.tensor import Partial, Placement, Replicate, Shard
from tinytorch.distributed.tensor import _utils as ours
from tinytorch.distributed.tensor.placement_types import _StridedShard

from torch.distributed.device_mesh import DeviceMesh as RealMesh  # noqa: E402
from torch.distributed.tensor import placement_types as rpt  # noqa: E402
from torch.distributed.tensor import _utils as theirs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pair_of(p):
    """A tinytorch placement and the equal PyTorch one, from a tuple spec."""
    kind, *args = p
    if kind == "S":
        return Shard(*args), rpt.Shard(*args)
    if kind == "SS":
        return _StridedShard(args[0], split_factor=args[1]), rpt._StridedShard(args[0], split_factor=args[1])
    if kind == "P":
        return Partial(*args), rpt.Partial(*args)
    return Replicate(), rpt.Replicate()


SPECS = [("S", 0), ("S", 1), ("S", -1), ("SS", 0, 2), ("SS", 1, 3), ("R",), ("P",), ("P", "avg"), ("P", "max")]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_placement_values_match_torch(spec):
    ours_p, theirs_p = pair_of(spec)
    assert repr(ours_p) == repr(theirs_p) and str(ours_p) == str(theirs_p)
    assert hash(ours_p) == hash(theirs_p)
    assert (ours_p.is_shard(), ours_p.is_replicate(), ours_p.is_partial()) == \
        (theirs_p.is_shard(), theirs_p.is_replicate(), theirs_p.is_partial())
    for dim in (0, 1, -1):
        assert ours_p.is_shard(dim) == theirs_p.is_shard(dim)
    for op in ("sum", "avg", "max"):
        assert ours_p.is_partial(op) == theirs_p.is_partial(op)
    for other in SPECS:
        o2, t2 = pair_of(other)
        assert (ours_p == o2) == (theirs_p == t2), (spec, other)
    import copy
    import pickle
    assert pickle.loads(pickle.dumps(ours_p)) == ours_p and copy.deepcopy(ours_p) == ours_p
    assert isinstance(ours_p, Placement)


def test_placement_attributes_and_errors_match_torch():
    assert Shard(2).dim == 2 and Partial().reduce_op == "sum" and _StridedShard(1, sf=4).split_factor == 4
    assert Partial.LINEAR_REDUCE_OPS == rpt.Partial.LINEAR_REDUCE_OPS
    assert Partial.ALL_REDUCE_OPS == rpt.Partial.ALL_REDUCE_OPS
    for make in (lambda m: m.Shard("a"), lambda m: m.Shard(), lambda m: m.Partial(3)):
        with pytest.raises(TypeError):
            make(rpt)
        with pytest.raises(TypeError):
            make(sys.modules["tinytorch.distributed.tensor.placement_types"])
    for m in (rpt, sys.modules["tinytorch.distributed.tensor.placement_types"]):
        with pytest.raises(TypeError, match="both split_factor and sf"):
            m._StridedShard(0, split_factor=2, sf=2)
        with pytest.raises(AttributeError):
            m.Shard(0).dim = 1
    assert {Shard(0): 1, Replicate(): 2}[Shard(0)] == 1


def test_local_shard_size_and_offset_matches_torch():
    for size, n in itertools.product(range(0, 13), range(1, 6)):
        for r in range(n):
            assert Shard.local_shard_size_and_offset(size, n, r) == rpt.Shard.local_shard_size_and_offset(size, n, r)
            for sf in (1, 2, 3):
                mine, real = _StridedShard(0, split_factor=sf), rpt._StridedShard(0, split_factor=sf)
                for mode in (0, 1, 2):
                    assert mine.local_shard_size_and_offset(size, n, r, mode) == \
                        real.local_shard_size_and_offset(size, n, r, mode), (size, n, r, sf, mode)


MESHES = [(4,), (3,), (2, 3), (2, 2), (2, 1, 3)]


def _placement_lists(ndim, tensor_ndim):
    options = [("R",), ("S", 0), ("P",), ("SS", 0, 2)]
    if tensor_ndim > 1:
        options += [("S", 1), ("SS", 1, 2)]
    return itertools.product(options, repeat=ndim)


@pytest.mark.parametrize("mesh_shape", MESHES, ids=str)
def test_compute_local_shape_and_global_offset_matches_torch(mesh_shape):
    import numpy as np
    n = int(np.prod(mesh_shape))
    ranks = np.arange(n).reshape(mesh_shape).tolist()
    for gshape in [(7, 5), (8, 6), (5,), (2, 9), (0, 4)]:
        for specs in _placement_lists(len(mesh_shape), len(gshape)):
            if any(s[0] in ("S", "SS") and s[1] >= len(gshape) for s in specs):
                continue
            mine = [pair_of(s)[0] for s in specs]
            real = [pair_of(s)[1] for s in specs]
            for rank in range(n):
                m = DeviceMesh("cpu", ranks, _init_backend=False, _rank=rank)
                rm = RealMesh("cpu", ranks, _init_backend=False, _rank=rank)
                want = theirs.compute_local_shape_and_global_offset(gshape, rm, real)
                got = ours.compute_local_shape_and_global_offset(gshape, m, mine)
                assert got == (tuple(want[0]), tuple(want[1])), (gshape, specs, rank)
                assert ours.compute_local_shape_and_global_offset(gshape, m, mine, skip_offset=True) == \
                    (tuple(want[0]), ())
    outside = DeviceMesh("cpu", [0, 1], _init_backend=False, _rank=5)
    assert ours.compute_local_shape_and_global_offset((4, 4), outside, [Shard(0)]) == \
        theirs.compute_local_shape_and_global_offset((4, 4), RealMesh("cpu", [0, 1], _init_backend=False, _rank=5),
                                                     [rpt.Shard(0)])


@pytest.mark.parametrize("mesh_shape", [(2,), (2, 3), (4, 2)], ids=str)
def test_global_and_local_tensor_info_match_torch(mesh_shape):
    import numpy as np
    ranks = np.arange(int(np.prod(mesh_shape))).reshape(mesh_shape).tolist()
    m = DeviceMesh("cpu", ranks, _init_backend=False, _rank=0)
    rm = RealMesh("cpu", ranks, _init_backend=False, _rank=0)
    for shape, perm in [((3, 4), (0, 1)), ((3, 4), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((6,), (0,))]:
        a = tt.empty(*shape).permute(*perm)
        b = torch.empty(*shape).permute(*perm)
        for specs in itertools.product([("R",), ("S", 0), ("S", a.dim() - 1), ("P",)], repeat=len(mesh_shape)):
            mine = [pair_of(s)[0] for s in specs]
            real = [pair_of(s)[1] for s in specs]
            assert ours.compute_global_tensor_info(a, m, mine) == \
                tuple(map(list, theirs.compute_global_tensor_info(b, rm, real))), (shape, perm, specs)
            ga = tt.empty(*[s * 24 for s in shape]).permute(*perm)
            gb = torch.empty(*[s * 24 for s in shape]).permute(*perm)
            assert ours.compute_local_tensor_info(ga, m, mine) == theirs.compute_local_tensor_info(gb, rm, real)
    with pytest.raises(AssertionError, match="not divisible"):
        ours.compute_local_tensor_info(tt.empty(3), m, [Shard(0)] * len(mesh_shape))


@pytest.mark.parametrize("rank", [0, 3, 5, 9])
def test_device_mesh_layout_matches_torch(rank):
    for ranks, names in [([[0, 1, 2], [3, 4, 5]], ("dp", "tp")), ([[0, 2], [1, 3]], None), ([0, 1, 2, 3], ("x",)),
                         ([[[0, 1], [2, 3]], [[4, 5], [6, 7]]], ("a", "b", "c"))]:
        m = DeviceMesh("cpu", ranks, mesh_dim_names=names, _init_backend=False, _rank=rank)
        rm = RealMesh("cpu", ranks, mesh_dim_names=names, _init_backend=False, _rank=rank)
        assert repr(m) == repr(rm)
        assert (m.shape, m.ndim, m.size(), m.mesh_dim_names, m.get_coordinate(), m.device_type) == \
            (rm.shape, rm.ndim, rm.size(), rm.mesh_dim_names, rm.get_coordinate(), rm.device_type)
        assert [m.size(d) for d in range(m.ndim)] == [rm.size(d) for d in range(rm.ndim)]
        assert m.mesh.tolist() == rm.mesh.tolist() and m._is_current_rank_part_of_mesh() == \
            rm._is_current_rank_part_of_mesh()
        twin = DeviceMesh("cpu", ranks, mesh_dim_names=names, _init_backend=False, _rank=rank)
        assert m == twin and hash(m) == hash(twin) and m != DeviceMesh("cuda", ranks, mesh_dim_names=names,
                                                                       _init_backend=False, _rank=rank)
        with pytest.raises(RuntimeError, match="process groups not initialized"):
            m.get_group(0)


def test_device_mesh_slicing_and_errors():
    m = DeviceMesh("cpu", [[[0, 1], [2, 3]], [[4, 5], [6, 7]]], mesh_dim_names=("a", "b", "c"),
                   _init_backend=False, _rank=6)
    assert m["a", "b", "c"] is m
    assert m["b"].mesh.tolist() == [4, 6] and m["c"].mesh.tolist() == [6, 7] and m["a"].mesh.tolist() == [2, 6]
    assert m["a", "c"].mesh.tolist() == [[2, 3], [6, 7]] and m["a", "c"].get_coordinate() == (1, 0)
    assert repr(m["a", "c"]) == "DeviceMesh((a=2, c=2), 'cpu', stride=(4, 1))"
    with pytest.raises(KeyError, match="ascending order"):
        m["c", "a"]
    with pytest.raises(KeyError, match="Invalid mesh_dim_names"):
        m["z"]
    with pytest.raises(RuntimeError, match="without mesh_dim_names"):
        DeviceMesh("cpu", [0, 1], _init_backend=False, _rank=0)["x"]
    with pytest.raises(TypeError, match="mesh argument is required"):
        DeviceMesh("cpu")
    # init_device_mesh's argument errors come before any process group, as PyTorch's
    from torch.distributed.device_mesh import init_device_mesh as real_init
    for args, kwargs in [(("cpu", (2, 2)), {"mesh_dim_names": ("a", "a")}),
                         (("cpu", (2, 2)), {"mesh_dim_names": ("a",)}), (("cuda:0", (2,)), {})]:
        with pytest.raises(RuntimeError) as theirs_e:
            real_init(*args, **kwargs)
        with pytest.raises(RuntimeError) as ours_e:
            init_device_mesh(*args, **kwargs)
        assert str(ours_e.value) == str(theirs_e.value)


def _mpiexec():
    from tinytorch.distributed.run import find_mpiexec
    return find_mpiexec()


@pytest.mark.parametrize("n", [1, 2, 4])
def test_dtensor_on_mpi_ranks(n):
    """DeviceMesh (1-d, 2-d, sliced, explicit, sub-world), distribute_tensor for every placement list over Shard,
    _StridedShard and Replicate on several shapes (uneven ones too), full_tensor, redistribute between every pair,
    Partial reductions, from_local (uneven with shape/stride, run_check), autograd through full_tensor and
    redistribute, and the operator error, on every rank."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    r = subprocess.run([_mpiexec(), "-n", str(n), sys.executable, os.path.join(ROOT, "tests", "distributed",
                                                                               "dtensor.py")],
                       capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    counts = [int(c) for c in re.findall(r"OK rank \d/%d dtensor (\d+) checks" % n, out)]
    assert len(counts) == n and min(counts) > 1000, out[-2000:]


def test_operators_on_a_dtensor_raise_naming_the_op():
    code = """
import tinytorch as torch
from tinytorch.distributed.tensor import DTensor, Partial, Shard, Replicate, distribute_tensor
from tinytorch.distributed.device_mesh import init_device_mesh
mesh = init_device_mesh("cpu", (1,))
dt = distribute_tensor(torch.arange(6.).reshape(2, 3), mesh, [Shard(1)])
assert dt.shape == (2, 3) and dt.size(1) == 3 and dt.dim() == 2 and dt.numel() == 6 and len(dt) == 2
assert dt.device.type == "cpu" and not dt.is_meta and dt.dtype == torch.float32
assert torch.is_tensor(dt) and torch.numel(dt) == 6 and torch.is_floating_point(dt) and not torch.is_complex(dt)
for call, name in [(lambda: dt + 1, "Tensor.__add__"), (lambda: torch.matmul(dt, dt), "torch.matmul"),
                   (lambda: dt.sum(), "Tensor.sum"), (lambda: dt.tolist(), "Tensor.tolist"),
                   (lambda: dt.T, "Tensor.T"), (lambda: torch.sum(dt), "torch.sum")]:
    try:
        call()
        raise SystemExit("no error for " + name)
    except NotImplementedError as e:
        assert name in str(e) and "to_local()" in str(e) and "full_tensor()" in str(e), str(e)
d = dt.detach()
assert isinstance(d, DTensor) and d.placements == (Shard(1),) and d.to_local().tolist() == dt.to_local().tolist()
h = dt.to(torch.float64)
assert isinstance(h, DTensor) and h.dtype == torch.float64 and h.to_local().dtype == torch.float64
p = distribute_tensor(torch.ones(2, requires_grad=True), mesh, [Replicate()])
assert p.requires_grad and p.to_local().is_leaf
p.to_local().sum().backward()
assert isinstance(p.grad, DTensor) and p.grad.to_local().tolist() == [1.0, 1.0]
try:
    DTensor.from_local(dt, mesh, [Shard(0)])
    raise SystemExit("no error for a DTensor input")
except RuntimeError as e:
    assert "only accepts torch.Tensor" in str(e)
try:
    distribute_tensor(torch.ones(2), mesh, [Shard(0), Shard(0)])
    raise SystemExit("no error for two placements on a 1-d mesh")
except ValueError as e:
    assert "same length as `device_mesh.ndim`" in str(e)
try:
    dt.redistribute(mesh, [Partial()])
    raise SystemExit("no error for redistribute to Partial")
except RuntimeError as e:
    assert "redistributing to Partial is for internal use only" in str(e)
try:
    DTensor.from_local(torch.ones(2), mesh, [Partial("sum")], shape=(2,))
    raise SystemExit("no error for shape without stride")
except RuntimeError as e:
    assert "Please pass both shape and stride" in str(e)
try:
    torch.nn.Parameter(dt)
    raise SystemExit("no error for Parameter(DTensor)")
except NotImplementedError as e:
    assert "to_local()" in str(e)
import copy
c = copy.deepcopy(dt)
assert isinstance(c, DTensor) and c.placements == dt.placements and c.to_local().tolist() == dt.to_local().tolist()
assert c.to_local() is not dt.to_local() and c.device_mesh is dt.device_mesh
print("OPS OK")
"""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 0 and "OPS OK" in r.stdout, r.stdout + r.stderr


def test_libraries_module_level_imports_resolve_under_the_swap(tmp_path):
    """What transformers / accelerate / lightning import from torch.distributed at module level (or on their
    common paths) resolves to tinytorch's modules under ``python -m tinytorch.run``."""
    code = """
import torch
assert torch.distributed.is_available()
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset
from torch.distributed.tensor.placement_types import Shard as S2, _StridedShard
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed._tensor import DTensor as D2
from torch.distributed._functional_collectives import wait_tensor, all_to_all_single_autograd
from torch.distributed import all_gather_into_tensor, all_to_all_single, get_process_group_ranks
from torch.distributed.fsdp import FullyShardedDataParallel, CPUOffloadPolicy, MixedPrecisionPolicy, FSDPModule
from torch.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel as F2
from torch.distributed._composable.fsdp import fully_shard
from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader, HuggingFaceStorageWriter
assert D2 is DTensor and S2 is Shard and F2 is FullyShardedDataParallel and torch.distributed.DeviceMesh is DeviceMesh
import transformers.distributed.sharding_utils, transformers.distributed.tensor_parallel
import transformers.distributed.expert_parallel, transformers.distributed.fsdp, transformers.distributed.checkpoint
for make in (lambda: fully_shard(torch.nn.Linear(1, 1)), lambda: FullyShardedDataParallel(torch.nn.Linear(1, 1)),
             lambda: HuggingFaceStorageWriter("x")):
    try:
        make()
        raise SystemExit("no error")
    except NotImplementedError as e:
        assert "not implemented in tinytorch" in str(e)
print("IMPORTS OK")
"""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    script = tmp_path / "imports.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, "-m", "tinytorch.run", str(script)], capture_output=True, text=True,
                       timeout=300, cwd=ROOT, env=env)
    assert r.returncode == 0 and "IMPORTS OK" in r.stdout, (r.stdout + r.stderr)[-4000:]
