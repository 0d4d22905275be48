"""The ``cpu`` backend's in-place kernels (``Backend.inplace_kernels``): ``add``, ``sub``, ``mul`` and ``div``
written into an existing array, and the fused optimizer updates."""
import math

import numpy as np

from .registry import INPLACE_KERNELS, KERNELS, _quiet


def _ufunc_inplace(uf):
    def k(dst, other, alpha=1, rounding_mode=None):
        if rounding_mode is not None:
            raise NotImplementedError  # not reached: div_ with rounding_mode has no in-place kernel
        with _quiet():
            uf(dst, other if alpha == 1 else np.multiply(other, alpha), out=dst, casting="unsafe")
    return k


for _name, _uf in {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}.items():
    INPLACE_KERNELS.add(_name, _ufunc_inplace(_uf))


# fused optimizer updates: fast paths of the ops in tinytorch/_ops/optim.py, whose decompositions are the reference
@KERNELS.register("adam_step")
def _adam_step(p, g, m, v, vmax, lr, beta1, beta2, eps, step, weight_decay, decoupled):
    # the update of tinytorch.optim.Adam/AdamW written with out= so it makes two temporaries, not ten
    if weight_decay:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + p * weight_decay
    tmp = np.multiply(g, 1 - beta1)
    m *= beta1
    m += tmp
    np.multiply(g, g, out=tmp)
    tmp *= 1 - beta2
    v *= beta2
    v += tmp
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    denom = np.sqrt(v)
    denom /= math.sqrt(1 - beta2 ** step)
    denom += eps
    np.divide(m, denom, out=tmp)
    tmp *= -lr / (1 - beta1 ** step)
    p += tmp


@KERNELS.register("sgd_momentum_step")
def _sgd_momentum_step(p, g, buf, lr, momentum, weight_decay):
    # tinytorch.optim.SGD with momentum, no dampening, no Nesterov, after the first step
    if weight_decay:
        g = g + p * weight_decay
    buf *= momentum
    buf += g
    p -= buf * lr if lr != 1 else buf
