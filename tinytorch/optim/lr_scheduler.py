"""Learning-rate schedulers: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, OneCycleLR, PolynomialLR,
CosineAnnealingWarmRestarts, CyclicLR, SequentialLR, ChainedScheduler, ReduceLROnPlateau,
LinearLR, ConstantLR (``torch.optim.lr_scheduler``)."""
import math


class LRScheduler:
    """Base class: ``step()`` advances ``last_epoch`` and sets each group's 'lr' from ``get_lr()``.

    As in torch, the decaying schedules compute the next lr from each group's *current* lr (the chainable
    form), so they compose (``ChainedScheduler``) and keep a change made to the lr between steps; ``step(epoch)``
    jumps with ``_get_closed_form_lr`` where a schedule has one."""

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch=None):
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for g, lr in zip(self.optimizer.param_groups, values):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _lrs(self):
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v)}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler


class _LambdaState:
    """State of a scheduler driven by functions (LambdaLR, MultiplicativeLR): as PyTorch's, a plain function or
    lambda is not saved (``None`` in its place: it is code, and pickle could not store a lambda); a callable object's
    ``__dict__`` is."""

    def state_dict(self):
        import types
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(f, types.FunctionType) else f.__dict__.copy()
                               for f in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for f, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                f.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """lr = base_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [b * f(self.last_epoch) for b, f in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """lr = previous lr * lr_lambda(epoch) after each step (``torch.optim.lr_scheduler.MultiplicativeLR``);
    ``lr_lambda`` is one function or one per parameter group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch > 0:
            return [g["lr"] * f(self.last_epoch) for g, f in zip(groups, self.lr_lambdas)]
        return [g["lr"] for g in groups]


class StepLR(LRScheduler):
    """lr *= gamma every ``step_size`` epochs (closed form base_lr * gamma ** (epoch // step_size))."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr *= gamma at each milestone epoch (a milestone listed twice applies gamma twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        import collections
        self.milestones, self.gamma = collections.Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]

    def _get_closed_form_lr(self):
        import bisect
        k = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma ** k for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr *= gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr * factor until epoch ``total_iters``, then the lr it had before."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The lr factor goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._lrs()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        d = self.end_factor - self.start_factor
        f = 1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d)
        return [lr * f for lr in self._lrs()]

    def _get_closed_form_lr(self):
        t = min(self.total_iters, self.last_epoch)
        return [b * (self.start_factor + (self.end_factor - self.start_factor) * t / self.total_iters)
                for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the lr to ``eta_min`` over ``T_max`` epochs (Loshchilov & Hutter 2017, SGDR
    without restarts), in torch's recursive form: eta_min + (base - eta_min) (1 + cos(pi epoch / T_max)) / 2
    when nothing else touches the lr."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._lrs()
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [lr + (b - lo) * (1 - math.cos(math.pi / T)) / 2 for b, lr in zip(self.base_lrs, self._lrs())]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (lr - lo) + lo
                for lr in self._lrs()]

    def _get_closed_form_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin 2017): warm up to max_lr, anneal to max_lr/(div*final_div)."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        self.total_steps = total_steps
        n = len(optimizer.param_groups)
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * n
        for g, m in zip(optimizer.param_groups, max_lrs):
            if last_epoch == -1:
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        self.anneal = (lambda s, e, p: e + (s - e) / 2 * (math.cos(math.pi * p) + 1)) if anneal_strategy == "cos" \
            else (lambda s, e, p: (e - s) * p + s)
        end1 = float(pct_start * total_steps) - 1
        # (phase end step, lr from, lr to, momentum from, momentum to), as PyTorch's _schedule_phases
        if three_phase:
            self.phases = [(end1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (2 * end1, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                           (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(end1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self.cycle_momentum = cycle_momentum and "betas" in optimizer.defaults or (
            cycle_momentum and "momentum" in optimizer.defaults)
        self.use_beta = "betas" in optimizer.defaults
        if self.cycle_momentum and last_epoch == -1:
            for g in optimizer.param_groups:
                g["max_momentum"], g["base_momentum"] = max_momentum, base_momentum
                if self.use_beta:
                    g["betas"] = (max_momentum, *g["betas"][1:])
                else:
                    g["momentum"] = max_momentum
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0
            for i, (end, a, b, ma, mb) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self.anneal(g[a], g[b], pct)
                    if self.cycle_momentum:
                        mom = self.anneal(g[ma], g[mb], pct)
                        if self.use_beta:
                            g["betas"] = (mom, *g["betas"][1:])
                        else:
                            g["momentum"] = mom
                    break
                start = end
            lrs.append(lr)
        return lrs


class PolynomialLR(LRScheduler):
    """Polynomial decay to 0 over ``total_iters`` epochs: base_lr * (1 - epoch / total_iters) ** power."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._lrs()
        f = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * f for lr in self._lrs()]

    def _get_closed_form_lr(self):
        f = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [b * f for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter 2017, arXiv:1608.03983): cosine annealing from base_lr to eta_min over T_i
    epochs, restarting with T_i *= T_mult. ``step(epoch)`` accepts fractional epochs."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for b in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i, self.T_cur = self.T_0, epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


def _per_group(name, optimizer, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. optimizer.param_groups "
                             f"has {len(optimizer.param_groups)} values, {name} has {len(value)} values.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith 2017, arXiv:1506.01186): the lr cycles between base_lr and max_lr
    ('triangular', 'triangular2', 'exp_range' or a custom ``scale_fn``); momentum cycles inversely."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        if scale_fn is None:
            self.scale_fn = {"triangular": lambda x: 1.0, "triangular2": lambda x: 1 / (2.0 ** (x - 1)),
                             "exp_range": lambda x: gamma ** x}[mode]
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        else:
            self.scale_fn, self.scale_mode = scale_fn, scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, g in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    if self.use_beta:
                        g["betas"] = (m, *g["betas"][1:])
                    else:
                        g["momentum"] = m
                    g["max_momentum"], g["base_momentum"] = m, b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        s = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * scale * s for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, bm, mm in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                mom = mm - (mm - bm) * scale * s
                if self.use_beta:
                    g["betas"] = (mom, *g["betas"][1:])
                else:
                    g["momentum"] = mom
        return lrs


class SequentialLR(LRScheduler):
    """Runs ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; each later scheduler starts
    from its epoch 0 at its milestone."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler")
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(f"SequentialLR expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler at index {i} to be different than the optimizer passed in.")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        import bisect
        self.optimizer = optimizer
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.last_epoch = last_epoch + 1
        for g in optimizer.param_groups:
            g["lr"] = g["initial_lr"]
        self._undo(self)  # undo the step each scheduler took at construction
        i = bisect.bisect_right(self._milestones, 0)
        self._schedulers[i]._initial_step()
        self._last_lr = self._schedulers[i].get_last_lr()

    def _undo(self, sched):
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch") and sched is not self:
            sched.last_epoch -= 1

    def step(self):
        import bisect
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            s._update_lr(0)  # the next schedule starts from its epoch 0, in closed form
        else:
            s.step()
        self._last_lr = s.get_last_lr()


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in ``schedulers`` in turn at each ``step()``: each continues from the lr the
    previous one left, so their decays compose (``torch.optim.lr_scheduler.ChainedScheduler``)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(s).__name__} at index {i} to be different than the optimizer "
                                 "passed in.")
        self.optimizer = optimizer
        self._schedulers = list(schedulers)
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` once ``metrics`` (passed to ``step``) has not improved for ``patience``
    epochs, then wait ``cooldown`` epochs; never below ``min_lr``."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.optimizer = optimizer
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.min_lrs = _per_group("min_lr", optimizer, min_lr)
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def is_better(self, a, best):
        if self.mode == "min":
            return a < best * (1 - self.threshold) if self.threshold_mode == "rel" else a < best - self.threshold
        return a > best * (self.threshold + 1) if self.threshold_mode == "rel" else a > best + self.threshold

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for g, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                old = float(g["lr"])
                new = max(old * self.factor, min_lr)
                if old - new > self.eps:
                    g["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


def _composite_state_dict(self):
    state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in self._schedulers]
    return state


def _composite_load_state_dict(self, state_dict):
    state = dict(state_dict)
    inner = state.pop("_schedulers")
    self.__dict__.update(state)
    for s, sd in zip(self._schedulers, inner):
        s.load_state_dict(sd)


SequentialLR.state_dict = ChainedScheduler.state_dict = _composite_state_dict
SequentialLR.load_state_dict = ChainedScheduler.load_state_dict = _composite_load_state_dict
