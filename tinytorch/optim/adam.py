"""Adam and AdamW (``torch.optim.Adam`` / ``AdamW``), with amsgrad."""
from ..autograd.grad_mode import no_grad
from .._ops.optim import adam_step, fused_adam
from .optimizer import Optimizer, _bump_step, _by_device_and_dtype, _fused, _init_step, _multi_tensor, _step_tensor

_ADAM_HYPER = {"lr": "lr", "beta1": ("betas", 0), "beta2": ("betas", 1), "eps": "eps", "weight_decay": "weight_decay"}


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015); ``weight_decay`` is L2 added to the gradient, or, with
    ``decoupled_weight_decay=True`` (as in AdamW), decays the parameter directly (Loshchilov & Hutter 2019)."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's
    _capturable_lists = ('params and state_steps', 'params and state_steps', True, False)

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused, decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            if _multi_tensor(g):
                self._group_step(g)
            else:
                self._single_tensor_step(g)
        return loss

    def _state_of(self, p, amsgrad):
        from .._ops.creation import zeros_like
        st = self.state[p]
        if not st:
            st["step"] = _init_step()
            st["exp_avg"] = zeros_like(p)
            st["exp_avg_sq"] = zeros_like(p)
            if amsgrad:
                st["max_exp_avg_sq"] = zeros_like(p)
        elif amsgrad and "max_exp_avg_sq" not in st:  # amsgrad switched on after the first step
            st["max_exp_avg_sq"] = zeros_like(p)
        return st

    def _group_step(self, g):
        """The group's update as one ``fused_adam`` call per device and dtype."""
        amsgrad = g["amsgrad"]
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        max_exp_avg_sqs = [] if amsgrad else None
        for p in g["params"]:
            grad = p._grad
            if grad is None:
                continue
            st = self._state_of(p, amsgrad)
            params.append(p)
            grads.append(grad)
            exp_avgs.append(st["exp_avg"])
            exp_avg_sqs.append(st["exp_avg_sq"])
            if amsgrad:
                max_exp_avg_sqs.append(st["max_exp_avg_sq"])
            steps.append(_step_tensor(st))
        for ps, gs, ms, vs, vmaxs, ts in _by_device_and_dtype(params, grads, exp_avgs, exp_avg_sqs,
                                                             max_exp_avg_sqs, steps):
            _fused(fused_adam, g, _ADAM_HYPER, ps, gs, ms, vs, vmaxs, ts,
                   decoupled=g.get("decoupled_weight_decay", self._decoupled), maximize=g.get("maximize", False))

    def _single_tensor_step(self, g):
        """The update one parameter at a time (``adam_step``), for the groups the multi-tensor op does not take."""
        lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
        decoupled = g.get("decoupled_weight_decay", self._decoupled)
        for p, grad in self._grads(g):
            st = self._state_of(p, g["amsgrad"])
            t = _bump_step(st)
            adam_step(p, grad, st["exp_avg"], st["exp_avg_sq"], st.get("max_exp_avg_sq"), lr=lr, beta1=b1,
                      beta2=b2, eps=eps, step=t, weight_decay=wd, decoupled=decoupled)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
