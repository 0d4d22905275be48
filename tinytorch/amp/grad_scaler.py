"""Dynamic loss scaling (``torch.amp.GradScaler``; Micikevicius et al., "Mixed Precision Training", 2018).

The loss is multiplied by a scale before backward so that small float16 / bfloat16 gradients do not flush
to zero; ``step`` divides the gradients by it again and skips the optimizer step when any gradient is inf or
NaN; ``update`` halves the scale after such a step (``backoff_factor``) and doubles it after
``growth_interval`` clean steps in a row (``growth_factor``).
"""
import warnings

from .autocast_mode import _cuda_missing

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``, as torch's: ``scale(loss)``, ``unscale_(optimizer)``,
    ``step(optimizer)``, ``update(new_scale=None)``, ``get_scale()``, ``state_dict()``. Disabled, every method
    passes through. A "cuda" scaler disables itself with a warning, as torch's does without CUDA; use
    device="cpu" or "opencl"."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and _cuda_missing():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval = growth_interval
        self._scale = None  # a float32 0-dim tensor on the device of the first scaled output
        self._growth_tracker = 0
        self._per_optimizer = {}

    def is_enabled(self):
        return self._enabled

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists / tuples of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        if isinstance(outputs, Tensor):
            if self._scale is None:
                from .._ops.creation import full
                self._scale = full((), self._init_scale, dtype=_float32(), device=outputs.device)
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _check(self, what):
        if self._scale is None:
            raise AssertionError(f"Attempted {what} but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")

    def unscale_(self, optimizer):
        """Divides the gradients of ``optimizer``'s parameters by the scale in place and records whether any is
        inf or NaN. RuntimeError when called twice before ``update`` or after ``step``."""
        if not self._enabled:
            return
        self._check("unscale_")
        st = self._state(optimizer)
        if st["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from ..autograd.grad_mode import no_grad
        from .. import _dtype as _dt
        inv = 1.0 / float(self._scale.item())
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype is _dt.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inv)
                    if not found and not bool(p.grad.isfinite().all()):
                        found = True
        st["found_inf"] = found
        st["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless ``unscale_`` already did) and runs ``optimizer.step(*args, **kwargs)`` unless a
        gradient was inf or NaN; returns what it returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        st = self._state(optimizer)
        if st["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == _READY:
            self.unscale_(optimizer)
        ret = None if st["found_inf"] else optimizer.step(*args, **kwargs)
        st["stage"] = _STEPPED
        return ret

    def update(self, new_scale=None):
        """Sets the scale for the next iteration: ``new_scale`` when given, else backoff after an inf/NaN step
        and growth after ``growth_interval`` clean steps."""
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            self._scale.fill_(float(new_scale.item() if hasattr(new_scale, "item") else new_scale))
        else:
            seen = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not seen:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(seen):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        """{scale, growth_factor, backoff_factor, growth_interval, _growth_tracker}, or {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


def _float32():
    from .. import _dtype as _dt
    return _dt.float32
