"""SGD with momentum, dampening, Nesterov and weight decay (``torch.optim.SGD``)."""
from ..autograd.grad_mode import no_grad
from .._ops.optim import fused_sgd, sgd_momentum_step
from .optimizer import Optimizer, _by_device_and_dtype, _fused, _multi_tensor, _nonzero, required

_SGD_HYPER = {"lr": "lr", "momentum": "momentum", "weight_decay": "weight_decay"}


class SGD(Optimizer):
    """``v = mu v + (1 - dampening) g``; ``p -= lr * (g + mu v if nesterov else v)`` (PyTorch's formulation)."""

    _differentiable_step = True  # step runs under set_grad_enabled(differentiable), as torch's

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused))

    @no_grad()
    def step(self, closure=None):
        loss = self._closure(closure)
        for g in self.param_groups:
            if _multi_tensor(g):
                self._group_step(g)
            else:
                self._single_tensor_step(g)
        return loss

    def _group_step(self, g):
        """The group's update as ``fused_sgd`` calls per device and dtype: one for the params whose momentum
        buffer exists, one (``is_first_step``) for those whose buffer is created now and set to the gradient."""
        from .._ops.creation import empty_like
        mu = _nonzero(g, "momentum")
        params, grads, bufs = [], [], []
        new_params, new_grads, new_bufs = [], [], []
        for p in g["params"]:
            grad = p._grad
            if grad is None:
                continue
            if not mu:
                params.append(p)
                grads.append(grad)
                continue
            st = self.state[p]
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = st["momentum_buffer"] = empty_like(p)
                new_params.append(p)
                new_grads.append(grad)
                new_bufs.append(buf)
            else:
                params.append(p)
                grads.append(grad)
                bufs.append(buf)
        kw = dict(dampening=g["dampening"], nesterov=g["nesterov"], maximize=g.get("maximize", False))
        for first, ps_all, gs_all, bs_all in ((False, params, grads, bufs if mu else None),
                                              (True, new_params, new_grads, new_bufs)):
            if ps_all:
                for ps, gs, bs in _by_device_and_dtype(ps_all, gs_all, bs_all):
                    _fused(fused_sgd, g, _SGD_HYPER, ps, gs, bs, is_first_step=first, **kw)

    def _single_tensor_step(self, g):
        """The update one parameter at a time, for the groups the multi-tensor op does not take."""
        lr, mu, damp, wd = g["lr"], g["momentum"], g["dampening"], g["weight_decay"]
        for p, grad in self._grads(g):
            if mu and not g["nesterov"] and not damp:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is not None:
                    sgd_momentum_step(p, grad, buf, lr=lr, momentum=mu, weight_decay=wd)
                    continue
            if wd:
                grad = grad + p * wd
            if mu:
                st = self.state[p]
                buf = st.get("momentum_buffer")
                if buf is None:
                    buf = st["momentum_buffer"] = grad.clone()
                else:
                    buf.mul_(mu).add_(grad, alpha=1 - damp)
                grad = grad + buf * mu if g["nesterov"] else buf
            p.add_(grad, alpha=-lr)
