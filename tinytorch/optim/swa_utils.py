"""Weight averaging (``torch.optim.swa_utils``): ``AveragedModel`` keeps a running average of a model's
parameters, equal-weight (SWA, Izmailov et al. 2018, "Averaging Weights Leads to Wider Optima and Better
Generalization") or exponential (EMA); ``SWALR`` anneals the learning rate to a constant; ``update_bn``
recomputes batch-norm statistics for the averaged weights."""
import copy
import itertools
import math

from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .._ops.creation import tensor
from .. import _dtype
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ema <- ema + (1 - decay) (param - ema)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for e, p in zip(ema_param_list, current_param_list):
            if e.dtype.is_floating_point or e.dtype.is_complex:
                e.lerp_(p, 1 - decay)
            else:
                e.copy_(e * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place equal-weight average over lists of tensors: avg <- avg + (param - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = float(num_averaged)
        for a, p in zip(averaged_param_list, current_param_list):
            if a.dtype.is_floating_point or a.dtype.is_complex:
                a.lerp_(p, 1 / (n + 1))
            else:
                a.add_((p - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns decay * ema + (1 - decay) * param."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Equal-weight average of one tensor: returns avg + (param - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` (as ``self.module``) whose parameters (and buffers, with ``use_buffers``) are a
    running average of the model's, updated by ``update_parameters(model)``: SWA by default, or ``avg_fn``
    (per tensor, returns the new average) / ``multi_avg_fn`` (in place over lists). The first update copies.
    Without ``use_buffers``, buffers are copied from the model at each update. ``n_averaged`` is an int64
    buffer. AssertionError when both averaging functions are given."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=_dtype.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model):
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        theirs = [p.detach().to(a.device) for a, p in zip(mine, theirs)]
        mine = [a.detach() for a in mine]
        n = int(self.n_averaged.item())
        if n == 0:
            for a, p in zip(mine, theirs):
                a.copy_(p)
        elif self.avg_fn is not None:
            for a, p in zip(mine, theirs):
                a.copy_(self.avg_fn(a, p, self.n_averaged.to(a.device)))
        else:
            (self.multi_avg_fn or get_swa_multi_avg_fn())(mine, theirs, self.n_averaged)
        if not self.use_buffers:
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running mean and variance of every batch-norm layer of ``model`` with one pass over
    ``loader`` (batches, or (input, ...) tuples whose first item is the input), as a cumulative average
    (momentum None); the model's training flag and the layers' momenta are restored afterwards."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for inp in loader:
        if isinstance(inp, (list, tuple)):
            inp = inp[0]
        if device is not None:
            inp = inp.to(device)
        model(inp)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate from its value to ``swa_lr`` over ``anneal_epochs`` steps, along a
    cosine ('cos') or linear ('linear') curve, then holds it. ValueError for an unknown strategy or a
    negative / non-integer anneal_epochs."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(optimizer.param_groups)
        if len(swa_lrs) != len(optimizer.param_groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: "
                             f"{len(optimizer.param_groups)}, got {len(swa_lrs)}")
        for lr, g in zip(swa_lrs, optimizer.param_groups):
            g["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t):
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    @staticmethod
    def _initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev)]

