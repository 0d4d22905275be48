"""DeviceMesh and DTensor on every rank of an MPI job (``mpiexec -n N python dtensor.py``, N in 1, 2, 4).

Each rank checks its own results: the expected pieces come from real PyTorch's ``torch.chunk`` applied to the
global tensor mesh dimension by mesh dimension (and torch's pure ``_compute_local_shape_and_global_offset`` for
offsets), never from tinytorch. Prints ``OK rank r/N dtensor K checks`` and exits 0, or raises (the job fails)."""
import itertools

import numpy as np

import torch as real  # noqa: E402  (the reference; installed for the differential tests)
from torch.distributed.tensor import placement_types as rpt  # noqa: E402
from torch.distributed.tensor._utils import _compute_local_shape_and_global_offset as real_offsets  # noqa: E402

import tinytorch as tt  # noqa: E402
import tinytorch.distributed as dist  # noqa: E402
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402
from tinytorch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor  # noqa: E402
from tinytorch.distributed.tensor._utils import compute_local_shape_and_global_offset  # noqa: E402
from tinytorch.distributed.tensor.placement_types import _StridedShard  # noqa: E402

checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")
    checks += 1


def real_placement(p):
    if isinstance(p, _StridedShard):
        return rpt._StridedShard(p.dim, split_factor=p.split_factor)
    if isinstance(p, Shard):
        return rpt.Shard(p.dim)
    if isinstance(p, Partial):
        return rpt.Partial(p.reduce_op)
    return rpt.Replicate()


def chunk(t, n, d):
    """torch.chunk's pieces, padded with empty ones to n (DTensor's rule)."""
    parts = list(real.chunk(t, n, d))
    while len(parts) < n:
        shape = list(t.shape)
        shape[d] = 0
        parts.append(t.new_empty(shape))
    return parts


def expected_local(g, mesh_shape, coord, placements):
    t = g
    for i, p in enumerate(placements):
        n = mesh_shape[i]
        d = p.dim % g.ndim if isinstance(p, (Shard, _StridedShard)) else None
        if isinstance(p, _StridedShard):
            pieces = [chunk(s, n, d) for s in chunk(t, p.split_factor, d)]
            t = real.cat([pc[coord[i]] for pc in pieces], d)
        elif isinstance(p, Shard):
            t = chunk(t, n, d)[coord[i]]
    return t.numpy()


def same(a, b):
    a = a.detach().numpy() if isinstance(a, tt.Tensor) else np.asarray(a)
    return a.shape == np.asarray(b).shape and np.allclose(a, b, rtol=1e-6, atol=1e-6)


def layouts(ndim_tensor, mesh_ndim):
    options = [Replicate(), Shard(0), Shard(-1), _StridedShard(0, split_factor=2)]
    if ndim_tensor > 1:
        options.append(Shard(1))
    return itertools.product(options, repeat=mesh_ndim)


def check_mesh(mesh, full, names):
    """mesh's attributes against ``full``, the global ranks as a NumPy array."""
    rank = dist.get_rank()
    hit = np.argwhere(full == rank)
    coord = tuple(int(c) for c in hit[0]) if hit.size else None
    check(mesh.get_coordinate() == coord, f"coordinate {mesh.get_coordinate()} != {coord}")
    check(mesh.shape == full.shape and mesh.ndim == full.ndim and mesh.size() == full.size, "shape")
    check(mesh.mesh.tolist() == full.tolist() and mesh.get_rank() == rank, "mesh tensor")
    strides = tuple(int(np.prod(full.shape[i + 1:])) for i in range(full.ndim))
    body = f"({', '.join(f'{k}={v}' for k, v in zip(names, full.shape))})" if names else f"{full.shape}"
    check(repr(mesh) == f"DeviceMesh({body}, 'cpu', stride={strides})", repr(mesh))
    for d in range(full.ndim):
        line = np.moveaxis(full, d, -1).reshape(-1, full.shape[d])
        mine = [list(map(int, row)) for row in line if rank in row][0]
        group = mesh.get_group(d)
        check(dist.get_process_group_ranks(group) == mine, f"group of dim {d}: {group} != {mine}")
        check(mesh.get_local_rank(d) == coord[d] and mesh.size(d) == full.shape[d], "local rank")
        if names:
            check(mesh.get_group(names[d]) is group and mesh.get_local_rank(names[d]) == coord[d], "by name")
        t = tt.tensor([float(rank)])
        dist.all_reduce(t, group=group)
        check(t.item() == sum(mine), "all_reduce over the dim's group")


def check_layouts(mesh, full, shapes=((7, 5), (8, 6), (3,), (1, 9))):
    rank = dist.get_rank()
    coord = mesh.get_coordinate()
    rng = np.random.default_rng(7)
    for gshape in shapes:
        g = real.tensor(rng.standard_normal(gshape).astype(np.float32))
        x = tt.tensor(g.numpy())
        for pl in layouts(len(gshape), mesh.ndim):
            dt = distribute_tensor(x, mesh, list(pl))
            want = expected_local(g, mesh.shape, coord, pl)
            check(isinstance(dt, DTensor) and tuple(dt.shape) == gshape and dt.stride() == x.stride(), "meta")
            check(same(dt.to_local(), want), f"distribute_tensor {pl} on {gshape}")
            shape, off = compute_local_shape_and_global_offset(gshape, mesh, dt.placements)
            rshape, roff = real_offsets(gshape, mesh.shape, list(coord), [real_placement(p) for p in dt.placements])
            check((shape, off) == (tuple(rshape), tuple(roff)) and shape == want.shape, f"offsets {pl}")
            check(same(dt.full_tensor(), g.numpy()), f"full_tensor {pl}")
            for dst in layouts(len(gshape), mesh.ndim):
                moved = dt.redistribute(mesh, list(dst))
                check(same(moved.to_local(), expected_local(g, mesh.shape, coord, dst)), f"{pl} -> {dst}")
        # src_data_rank: rank-dependent inputs; the source of truth is the rank at coordinate (0, ..., 0)
        mine = tt.tensor(g.numpy() + rank)
        src = int(full.reshape(-1)[0]) if full.ndim == 1 else int(full[(0,) * full.ndim])
        dt = distribute_tensor(mine, mesh, [Shard(0)] + [Replicate()] * (mesh.ndim - 1))
        check(same(dt.full_tensor(), g.numpy() + src), "src_data_rank=0 broadcasts the first rank's tensor")
        dt = distribute_tensor(mine, mesh, [Shard(0)] + [Replicate()] * (mesh.ndim - 1), src_data_rank=None)
        check(same(dt.to_local(), expected_local(real.tensor(g.numpy() + rank), mesh.shape, coord,
                                                 [Shard(0)] + [Replicate()] * (mesh.ndim - 1))), "src None")


def check_partial_and_from_local(mesh1):
    rank, n = dist.get_rank(), dist.get_world_size()
    ranks = np.arange(n, dtype=np.float32) + 1
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    for op, want in [("sum", ranks.sum()), ("avg", ranks.mean()), ("max", ranks.max()), ("min", ranks.min())]:
        dt = DTensor.from_local(tt.tensor(base * (rank + 1)), mesh1, [Partial(op)])
        check(same(dt.full_tensor(), base * want), f"Partial({op}) -> Replicate")
        sh = dt.redistribute(mesh1, [Shard(1)])
        check(same(sh.to_local(), chunk(real.tensor(base * want), n, 1)[rank].numpy()), f"Partial({op}) -> Shard")
    # uneven pieces given with their global shape and stride
    sizes = [Shard.local_shard_size_and_offset(9, n, r)[0] for r in range(n)]
    g = np.arange(9 * 2, dtype=np.float32).reshape(9, 2)
    start = sum(sizes[:rank])
    dt = DTensor.from_local(tt.tensor(g[start:start + sizes[rank]]), mesh1, [Shard(0)], shape=(9, 2), stride=(2, 1))
    check(tuple(dt.shape) == (9, 2) and same(dt.full_tensor(), g), "from_local uneven")
    dt = DTensor.from_local(tt.ones(2, 3), mesh1, [Shard(1)])
    check(tuple(dt.shape) == (2, 3 * n) and dt.stride() == (3 * n, 1), "from_local global shape")
    # run_check broadcasts Replicate pieces from the dim's first rank
    dt = DTensor.from_local(tt.full((2,), float(rank)), mesh1, [Replicate()], run_check=True)
    check(same(dt.to_local(), [0.0, 0.0]), "run_check broadcast")
    # autograd through full_tensor and redistribute, on the local pieces
    w = np.linspace(-1, 1, 4 * n * 3, dtype=np.float32).reshape(4 * n, 3)
    piece = tt.ones(4, 3, requires_grad=True)
    full = DTensor.from_local(piece, mesh1, [Shard(0)]).full_tensor()
    (full * tt.tensor(w)).sum().backward()
    check(same(piece.grad, w[4 * rank:4 * rank + 4]), "gradient of Shard -> Replicate")
    rep = tt.ones(4 * n, 3, requires_grad=True)
    mine = DTensor.from_local(rep, mesh1, [Replicate()]).redistribute(mesh1, [Shard(0)]).to_local()
    (mine * tt.tensor(w[4 * rank:4 * rank + 4])).sum().backward()
    check(same(rep.grad, w), "gradient of Replicate -> Shard (all-gathered)")
    # operators refuse clearly
    try:
        dt + 1
        check(False, "DTensor + 1 must raise")
    except NotImplementedError as e:
        check("to_local()" in str(e) and "__add__" in str(e), str(e))


def check_functional(mesh1):
    """all_to_all_single (uneven splits, differentiable) and the functional collectives against NumPy."""
    from tinytorch.distributed import _functional_collectives as funcol
    rank, n = dist.get_rank(), dist.get_world_size()
    # rank r sends (k + 1) rows to rank k; row values encode (sender, receiver, row)
    send_sizes = [k + 1 for k in range(n)]
    recv_sizes = [rank + 1] * n
    rows = [[100 * rank + 10 * k + i, -1.0] for k in range(n) for i in range(k + 1)]
    want = [[100 * s + 10 * rank + i, -1.0] for s in range(n) for i in range(rank + 1)]
    out = tt.empty(sum(recv_sizes), 2)
    dist.all_to_all_single(out, tt.tensor(rows), recv_sizes, send_sizes)
    check(same(out, want), "all_to_all_single uneven")
    x = tt.tensor(rows, requires_grad=True)
    y = funcol.all_to_all_single_autograd(x, recv_sizes, send_sizes, mesh1.get_group())
    check(same(y, want), "funcol all_to_all_single")
    (y * tt.tensor(want)).sum().backward()  # d/dx of sum(y * y_values) sends the values back: x's own rows
    check(same(x.grad, rows), "all_to_all_single backward")
    eq = tt.arange(2.0 * n).reshape(n, 2) + rank
    got = funcol.wait_tensor(funcol.all_to_all_single(eq, None, None, mesh1))
    check(same(got, [[2 * rank + c + s for c in range(2)] for s in range(n)]), "equal split a2a")
    v = tt.full((2 * n, 3), float(rank + 1))
    check(same(funcol.all_reduce(v, "sum", (mesh1, 0)), np.full((2 * n, 3), n * (n + 1) / 2)), "funcol sum")
    check(same(v, np.full((2 * n, 3), rank + 1.0)), "funcol all_reduce leaves its input")
    check(same(funcol.all_gather_tensor(tt.full((1, 2), float(rank)), 1, mesh1),
               [[float(r) for r in range(n) for _ in range(2)]]), "funcol all_gather_tensor")
    rs = funcol.reduce_scatter_tensor(tt.arange(3.0 * n).reshape(3, n), "sum", 1, mesh1)
    check(same(rs, (np.arange(3.0 * n).reshape(3, n) * n)[:, rank:rank + 1]), "funcol reduce_scatter_tensor")
    check(same(funcol.broadcast(tt.full((2,), float(rank)), 0, mesh1), [0.0, 0.0]), "funcol broadcast")


def main():
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    mesh1 = init_device_mesh("cpu", (n,), mesh_dim_names=("x",))
    check_mesh(mesh1, np.arange(n), ("x",))
    check_layouts(mesh1, np.arange(n))
    check_partial_and_from_local(mesh1)
    check_functional(mesh1)
    shapes = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(2, 2)]}[n]
    for shape in shapes:
        full = np.arange(n).reshape(shape)
        mesh2 = init_device_mesh("cpu", shape, mesh_dim_names=("dp", "tp"))
        check_mesh(mesh2, full, ("dp", "tp"))
        for name, d in (("dp", 0), ("tp", 1)):
            sub = mesh2[name]
            line = [list(map(int, row)) for row in np.moveaxis(full, d, -1).reshape(-1, shape[d]) if rank in row][0]
            check(sub.mesh.tolist() == line and sub.get_group() is mesh2.get_group(name), f"slice {name}")
            check(sub.get_coordinate() == (mesh2.get_coordinate()[d],), "slice coordinate")
        flat = mesh2._flatten()
        check(flat.mesh_dim_names == ("dp_tp",) and flat.mesh.tolist() == list(range(n)), "flatten")
        check(mesh2["dp_tp"] is flat and mesh2._flatten("dp_tp") is flat and mesh2.get_group("dp_tp") is
              flat.get_group(), "flattened dim found from the root")
        check(dist.get_process_group_ranks(flat.get_group()) == list(range(n)), "flattened group")
        check_layouts(mesh2, full, [(7, 5), (3,)])
    if n == 4:
        full = np.array([[0, 2], [1, 3]])
        mesh_t = DeviceMesh("cpu", full.tolist())
        check(mesh_t.get_coordinate() == tuple(int(c) for c in np.argwhere(full == rank)[0]), "explicit mesh")
        for d in range(2):
            mine = [list(map(int, r)) for r in np.moveaxis(full, d, -1).reshape(-1, 2) if rank in r][0]
            check(dist.get_process_group_ranks(mesh_t.get_group(d)) == mine, "explicit mesh groups")
        check_layouts(mesh_t, full, [(5, 3)])
        sub = DeviceMesh("cpu", [1, 3])  # a mesh that leaves ranks 0 and 2 out
        check(sub.get_coordinate() == ({1: (0,), 3: (1,)}.get(rank)), "sub-world mesh coordinate")
        dt = distribute_tensor(tt.arange(6.), sub, [Shard(0)])
        check(same(dt.to_local(), {1: [0, 1, 2], 3: [3, 4, 5]}.get(rank, np.zeros(0))), "sub-world pieces")
    dist.destroy_process_group()
    print(f"OK rank {rank}/{n} dtensor {checks} checks", flush=True)


if __name__ == "__main__":
    main()
