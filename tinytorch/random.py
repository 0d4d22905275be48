"""``torch.random``: the default generator's seed and state, and ``fork_rng``."""
import contextlib

from ._ops.generator import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng", "default_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Inside, random ops may draw freely; on exit the default generator's state is restored, so the code after
    the block sees the same random stream as without it (``torch.random.fork_rng``)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
