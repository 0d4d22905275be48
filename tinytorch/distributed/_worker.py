"""One rank of a ``tinytorch.distributed.run`` job: ``python -m tinytorch.distributed._worker [-m] script args``.

Sets torchrun's per-rank environment from MPI, sizes the native thread pool from ``OMP_NUM_THREADS``, then runs
the script as ``__main__``. An exception leaving the script aborts the whole MPI job, so no other rank is left
waiting in a collective for this one.
"""
import os
import runpy
import sys
import traceback


def rank_environment(comm):
    """torchrun's variables for this rank of ``comm``: the node ("group") of a rank is the set of ranks sharing
    its memory (MPI_COMM_TYPE_SHARED); nodes are numbered in the order of their lowest rank."""
    from mpi4py import MPI
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    leaders = comm.allgather(comm.Get_rank() if node.Get_rank() == 0 else -1)
    leaders = sorted(r for r in leaders if r >= 0)
    my_leader = node.bcast(comm.Get_rank() if node.Get_rank() == 0 else None, root=0)
    env = {"RANK": comm.Get_rank(), "WORLD_SIZE": comm.Get_size(), "LOCAL_RANK": node.Get_rank(),
           "LOCAL_WORLD_SIZE": node.Get_size(), "GROUP_RANK": leaders.index(my_leader),
           "GROUP_WORLD_SIZE": len(leaders), "ROLE_RANK": comm.Get_rank(), "ROLE_WORLD_SIZE": comm.Get_size(),
           "ROLE_NAME": "default", "TORCHELASTIC_RESTART_COUNT": os.environ.get("TORCHELASTIC_RESTART_COUNT", 0),
           "TORCHELASTIC_MAX_RESTARTS": os.environ.get("TORCHELASTIC_MAX_RESTARTS", 0)}
    node.Free()
    return {k: str(v) for k, v in env.items()}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    as_module = bool(argv) and argv[0] == "-m"
    if as_module:
        argv = argv[1:]
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    os.environ.update(rank_environment(comm))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads and threads.isdigit() and int(threads) > 0:
        import tinytorch
        tinytorch.set_num_threads(int(threads))
    script = argv[0]
    sys.argv = list(argv)
    try:
        if as_module:
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            from . import abort_job
            abort_job("" if isinstance(e.code, int) else f"{e.code}\n", code, comm)
        return 0
    except BaseException:
        from . import abort_job
        abort_job(traceback.format_exc(), 1, comm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
