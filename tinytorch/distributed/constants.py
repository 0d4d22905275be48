"""``torch.distributed.constants``: the default timeouts of process groups.

``default_pg_timeout`` (30 minutes) bounds every collective of a group created without a timeout;
``default_pg_nccl_timeout`` is None, as in a PyTorch built without NCCL.
"""
import datetime

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_timeout = datetime.timedelta(minutes=30)
default_pg_nccl_timeout = None
