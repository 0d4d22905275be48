"""``torch.opencl``: the device module PyTorch looks up for an out-of-tree device (``torch._register_device_module``),
with the functions of ``torch.cuda`` that programs and PyTorch itself call (``Module.to``, ``torch.load``,
``torch.autocast``, the optimizers' foreach checks, ``torch.accelerator``)."""
import contextlib
import types

import numpy as np
import torch

import tinytorch
from tinytorch._ops import generator as _generator

from ._bridge import State, check_index


def make_module(name):
    """The device module ``torch.<name>``: a fresh module object whose functions act on tinytorch's backend."""
    mod = types.ModuleType(f"torch.{name}", f"tinytorch's {State.tt_type} device inside PyTorch ({name}).")
    backend = State.backend
    current = [0]

    def is_available():
        """True when the tinytorch backend found a device (for opencl: pyopencl and an OpenCL platform)."""
        return backend.is_available()

    def device_count():
        return backend.device_count() if backend.is_available() else 0

    # With the C++ extension the current device is its device guard's (per thread), which PyTorch's own
    # DeviceGuards and the allocator use; without it, this module's.
    def current_device():
        return State.native.current_device() if State.native is not None else current[0]

    def set_device(device):
        _set(check_index(_index(device)))

    def _set(index):
        if State.native is not None:
            State.native.set_device(index)
        current[0] = index

    def _index(device):
        if device is None:
            return current_device()
        if isinstance(device, int):
            return device
        d = torch.device(device)
        if d.type != name:
            raise ValueError(f"Expected a {name} device, but got: {d}")
        return d.index if d.index is not None else current_device()

    class device:
        """Context manager that makes ``device`` the current one (``torch.cuda.device``)."""

        def __init__(self, device):
            self.idx = _index(device) if device is not None else -1
            self.prev = None

        def __enter__(self):
            self.prev = current_device()
            if self.idx >= 0:
                set_device(self.idx)

        def __exit__(self, *exc):
            _set(self.prev)
            return False

    def synchronize(device=None):
        """Wait for every kernel queued on the device."""
        backend.synchronize(check_index(_index(device)))

    def manual_seed(seed):
        """Seed the device's random numbers. They are drawn by tinytorch's generator (PyTorch's CPU Mersenne
        Twister), so after the same seed the device gives torch's CPU numbers."""
        _generator.manual_seed(int(seed))

    def seed():
        return _generator.default_generator.seed()

    def initial_seed():
        return _generator.default_generator.initial_seed()

    def get_rng_state(device=None):
        """The generator's state as a uint8 CPU tensor (``torch.cuda.get_rng_state``)."""
        st = _generator.default_generator.get_state()
        return torch.from_numpy(np.array(st.numpy(), dtype=np.uint8))

    def set_rng_state(new_state, device=None):
        _generator.default_generator.set_state(tinytorch.from_numpy(new_state.cpu().numpy().astype(np.uint8)))

    def memory_allocated(device=None):
        """Bytes held by live tensors on the device."""
        return backend.dev_for(check_index(_index(device))).allocated

    def max_memory_allocated(device=None):
        return backend.dev_for(check_index(_index(device))).max_allocated

    def memory_reserved(device=None):
        return backend.dev_for(check_index(_index(device))).reserved

    def reset_peak_memory_stats(device=None):
        d = backend.dev_for(check_index(_index(device)))
        d.max_allocated = d.allocated

    def empty_cache():
        """Give the allocator's cached free blocks back to the driver."""
        getattr(tinytorch, State.tt_type).empty_cache()

    def get_device_name(device=None):
        return backend.dev_for(check_index(_index(device))).name

    def get_amp_supported_dtype():
        """The dtypes ``torch.autocast(<name>)`` may cast to: float16. On a device without it (no cl_khr_fp16)
        the first lower-precision op raises tinytorch's TypeError naming the missing extension, rather than
        autocast silently running in float32."""
        return [torch.float16]

    def is_bf16_supported(including_emulation=False):
        return False

    mod.__dict__.update(
        is_available=is_available, device_count=device_count, current_device=current_device, set_device=set_device,
        device=device, synchronize=synchronize, manual_seed=manual_seed, manual_seed_all=manual_seed, seed=seed,
        seed_all=seed, initial_seed=initial_seed, get_rng_state=get_rng_state, set_rng_state=set_rng_state,
        get_rng_state_all=lambda: [get_rng_state(i) for i in range(device_count())],
        set_rng_state_all=lambda states: [set_rng_state(s, i) for i, s in enumerate(states)],
        memory_allocated=memory_allocated, max_memory_allocated=max_memory_allocated,
        memory_reserved=memory_reserved, reset_peak_memory_stats=reset_peak_memory_stats, empty_cache=empty_cache,
        get_device_name=get_device_name, get_amp_supported_dtype=get_amp_supported_dtype,
        is_bf16_supported=is_bf16_supported, is_initialized=lambda: True, _is_in_bad_fork=lambda: False,
        _lazy_init=lambda: None, stream=lambda s=None: contextlib.nullcontext())
    return mod
