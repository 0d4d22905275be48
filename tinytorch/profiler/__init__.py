"""``tinytorch.profiler``: the profiler API of ``torch.profiler`` over tinytorch's own CPU recorder
(``tinytorch.autograd.profiler``): ``profile`` with schedules and trace handlers, ``record_function``,
``ProfilerActivity``, ``ProfilerAction``, ``schedule``, ``tensorboard_trace_handler``."""
from ..autograd.profiler import kineto_available, record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (_KinetoProfile, ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
                       tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function"]
