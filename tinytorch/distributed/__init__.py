"""``torch.distributed``, as far as a single-process framework can honestly go: tinytorch has no process-group
backend, so ``is_available()`` is False, ``is_initialized()`` is False, and every call that needs a process
group raises the ValueError PyTorch raises before ``init_process_group`` (which itself raises, naming what is
missing). Scripts that import these names and take the distributed path only under ``torchrun`` (RANK set)
therefore run unchanged in one process."""
import enum

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group", "get_rank",
           "get_world_size", "barrier", "all_reduce", "all_gather", "broadcast", "reduce", "gather", "scatter",
           "reduce_scatter", "all_gather_object", "broadcast_object_list", "ReduceOp", "get_backend",
           "new_group", "is_torchelastic_launched"]

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


class ReduceOp(enum.Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


def is_available():
    """False: tinytorch has no distributed (process group) backend."""
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    import os
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    raise RuntimeError(f"init_process_group(backend={backend!r}): tinytorch has no distributed backend (no gloo, "
                       "nccl or mpi process groups); run the script as a single process")


def _needs_group(*args, **kwargs):
    raise ValueError(_NOT_INIT)


get_rank = get_world_size = barrier = all_reduce = all_gather = broadcast = reduce = gather = scatter = \
    reduce_scatter = all_gather_object = broadcast_object_list = get_backend = new_group = _needs_group


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")
