"""In-place kernels (``Backend.inplace_kernels``: ``add_`` ...) and the fused optimizer updates, the fast paths
of the ops in ``tinytorch/_ops/optim.py``: each update in one pass, no temporary and no copy back."""
import math

import numpy as np

from .codegen import _ct
from .elementwise import _binary
from .runtime import INPLACE_KERNELS, KERNELS, _is_arr


def _inplace_binary(name):
    k = _binary(name)

    def ik(be, dst, other, alpha=1, rounding_mode=None):
        if _is_arr(other):
            if other.dtype is not dst.dtype:
                other = be.cast(other, dst.dtype)
            elif other.buf is dst.buf and (other.offset, other.strides, other.shape) != \
                    (dst.offset, dst.strides, dst.shape):
                other = be._copy(other)  # a partly overlapping operand: read it all before writing
        if alpha != 1:
            k(be, dst, other, _out=dst, alpha=alpha)
        else:
            k(be, dst, other, _out=dst)
    return ik


for _n in ("add", "sub", "mul", "div"):
    INPLACE_KERNELS.add(_n, _inplace_binary(_n))


def _fused_update(name, body, arrays, scalars):
    """One kernel over dense tensors of one shape: ``body`` reads/writes ``a{i}[j]``, scalars ``s{i}``.
    Returns False when an operand is not contiguous (the caller then runs separate elementwise passes)."""
    if any(not a.is_contiguous() for a in arrays):
        return False
    dt, dev, n = arrays[0].dtype, arrays[0].buf.dev, arrays[0].size
    if n == 0:
        return True
    ct = _ct(dt)

    def source():
        params = ", ".join(f"__global {ct}* a{i}, long o{i}" for i in range(len(arrays)))
        scs = "".join(f", {ct} s{i}" for i in range(len(scalars)))
        ptrs = " ".join(f"a{i} += o{i};" for i in range(len(arrays)))
        return (f"typedef {ct} T;\n__kernel void k({params}{scs}, long n) {{\n long j = get_global_id(0);"
                f" if (j >= n) return; {ptrs}\n {body}\n}}\n")
    k = dev.kernel(("fused_update", name, dt.name, len(arrays), len(scalars)), source)
    args = []
    for a in arrays:
        args += [a.buf.mem, np.int64(a.offset)]
    args += [dt.np.type(v) for v in scalars] + [np.int64(n)]
    dev.launch_1d(k, n, args)
    return True


@KERNELS.register("sgd_momentum_step")
def _sgd_momentum_step(be, p, g, buf, lr, momentum, weight_decay):
    dt = p.dtype
    if _fused_update("sgd", "T d = a1[j] + a0[j] * s2; T b = a2[j] * s1 + d; a2[j] = b; a0[j] -= b * s0;",
                     [p, g, buf], [lr, momentum, weight_decay]):
        return
    if weight_decay:
        be._ew("sgd_buf_wd", "x0 * s0 + x1 + x2 * s1", [buf, g, p], [(momentum, dt), (weight_decay, dt)], dt,
               p.shape, out=buf)
    else:
        be._ew("sgd_buf", "x0 * s0 + x1", [buf, g], [(momentum, dt)], dt, p.shape, out=buf)
    be._ew("sgd_p", "x0 - x1 * s0", [p, buf], [(lr, dt)], dt, p.shape, out=p)


@KERNELS.register("adam_step")
def _adam_step(be, p, g, m, v, vmax, lr, beta1, beta2, eps, step, weight_decay, decoupled):
    dt = p.dtype
    l2 = weight_decay if weight_decay and not decoupled else 0.0
    decay = 1 - lr * weight_decay if weight_decay and decoupled else 1.0
    sc = [beta1, 1 - beta1, beta2, 1 - beta2, l2, decay, math.sqrt(1 - beta2 ** step), eps,
          lr / (1 - beta1 ** step)]
    body = ("T gr = a1[j] + a0[j] * s4; T mm = a2[j] * s0 + gr * s1; T vv = a3[j] * s2 + gr * gr * s3;"
            " a2[j] = mm; a3[j] = vv;")
    if vmax is not None:
        body += " T vm = a4[j]; vm = (vm > vv || isnan(vm)) ? vm : vv; a4[j] = vm; vv = vm;"
    body += " a0[j] = a0[j] * s5 - mm / (sqrt(vv) / s6 + s7) * s8;"
    if _fused_update("adam" + ("_amsgrad" if vmax is not None else ""), body,
                     [p, g, m, v] + ([vmax] if vmax is not None else []), sc):
        return
    if weight_decay and not decoupled:
        g = be._ew("adam_wd", "x0 + x1 * s0", [g, p], [(weight_decay, dt)], dt, p.shape)
    be._ew("adam_m", "x0 * s0 + x1 * s1", [m, g], [(beta1, dt), (1 - beta1, dt)], dt, p.shape, out=m)
    be._ew("adam_v", "x0 * s0 + x1 * x1 * s1", [v, g], [(beta2, dt), (1 - beta2, dt)], dt, p.shape, out=v)
    if vmax is not None:
        _binary("maximum")(be, vmax, v, _out=vmax)
        v = vmax
    decay = 1 - lr * weight_decay if weight_decay and decoupled else 1.0
    be._ew("adam_p", "x0 * s0 - x1 / (sqrt(x2) / s1 + s2) * s3", [p, m, v],
           [(decay, dt), (math.sqrt(1 - beta2 ** step), dt), (eps, dt), (lr / (1 - beta1 ** step), dt)], dt,
           p.shape, out=p)
