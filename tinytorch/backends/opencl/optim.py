"""Fused optimizer updates on OpenCL devices (and the cuda device, which runs these kernels).

``fused_adam``: one kernel per parameter doing Adam's whole update (``_ops/optim._adam_update``'s arithmetic, in the
same order) instead of the decomposition's ten elementwise kernels. The step counts stay 0-dim float32 tensors on
the cpu, as PyTorch keeps them (not ``capturable``): the kernel bumps each on the host and computes the bias
corrections there, when it runs. That keeps a compiled training step one graph (the decomposition reads the count
with ``.item()`` while the step is recorded, a graph break), and rules the update out of a CUDA graph, whose replay
would neither bump the counts nor see the new corrections (as PyTorch's CUDA graphs need ``capturable=True``).
"""
import math

import numpy as np

from .codegen import _ct
from .runtime import KERNELS

_ACC = {"float64": "double"}  # arithmetic type by dtype; float otherwise (half and bfloat16 are stored, not computed)


def _adam_source(dt):
    return (f"typedef {_ct(dt)} T; typedef {_ACC.get(dt.name, 'float')} A;\n"
            "__kernel void k(__global T* p, long po, __global const T* g, long go, __global T* m, long mo,\n"
            "                __global T* v, long vo, __global T* vmax, long xo, long n, A b1, A omb1, A b2, A omb2,\n"
            "                A wd, A decay, A sbc2, A eps, A step_size, int flags) {\n"
            "#pragma OPENCL FP_CONTRACT OFF\n"
            " long j = get_global_id(0); if (j >= n) return;\n"
            " A gj = (A)g[go + j]; if (flags & 4) gj = -gj;\n"
            " A pj = (A)p[po + j];\n"
            " if (flags & 1) { if (flags & 2) pj = pj * decay; else gj = gj + pj * wd; }\n"
            " A mj = (A)m[mo + j] * b1 + gj * omb1; m[mo + j] = (T)mj;\n"
            " A vj = (A)v[vo + j] * b2 + (gj * gj) * omb2; v[vo + j] = (T)vj;\n"
            " if (flags & 8) { A x = (A)vmax[xo + j]; vj = (x >= vj || x != x) ? x : vj; vmax[xo + j] = (T)vj; }\n"
            " A denom = sqrt(vj) / sbc2 + eps;\n"
            " p[po + j] = (T)(pj + (mj / denom) * step_size);\n"
            "}\n")


@KERNELS.register("fused_adam")
def _fused_adam(be, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, eps,
                weight_decay, decoupled, maximize):
    """Adam (or AdamW with ``decoupled``) over lists of device tensors; ``state_steps`` are host arrays (the cpu
    step counts), bumped here. Raises the cuda runtime's CaptureError while a CUDA graph is captured."""
    if not params:
        return
    dev = params[0].buf.dev
    no_capture = getattr(dev, "_no_capture", None)
    if no_capture is not None:
        no_capture("an Adam update (its step counts are on the host)")
    flags = (1 if weight_decay else 0) | (2 if decoupled else 0) | (4 if maximize else 0) | \
        (8 if max_exp_avg_sqs is not None else 0)
    for i, p in enumerate(params):
        step = state_steps[i]
        if isinstance(step, np.ndarray):
            np.add(step, 1, out=step)  # float32, as the cpu kernels count
            t = float(step)
        else:  # a count on the device (PyTorch's fused Adam through the PrivateUse1 device): a host round trip
            count = be.to_numpy(step) + np.float32(1)
            # from_numpy reads the device's index only: the runtime's device object has one
            be.copy_(step, be.view(be.from_numpy(count, step.buf.dev), step.dtype, (), (), 0))
            t = float(count)
        bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
        group = [p, grads[i], exp_avgs[i], exp_avg_sqs[i]] + ([max_exp_avg_sqs[i]] if flags & 8 else [])
        work = [a if a.is_contiguous() else be._copy(a) for a in group]
        n = p.size
        if n:
            A = np.float64 if p.dtype.name == "float64" else np.float32
            w = work + ([work[3]] if not flags & 8 else [])
            k = dev.kernel(("fused_adam", p.dtype.name), lambda dt=p.dtype: _adam_source(dt))
            dev.launch_1d(k, n, [w[0].buf.mem, np.int64(w[0].offset), w[1].buf.mem, np.int64(w[1].offset),
                                 w[2].buf.mem, np.int64(w[2].offset), w[3].buf.mem, np.int64(w[3].offset),
                                 w[4].buf.mem, np.int64(w[4].offset), np.int64(n), A(beta1), A(1 - beta1), A(beta2),
                                 A(1 - beta2), A(weight_decay), A(1 - lr * weight_decay), A(math.sqrt(bc2)),
                                 A(eps), A(-lr / bc1), np.int32(flags)])
        for orig, tmp in zip(group, work):
            if tmp is not orig and orig is not grads[i]:
                be.copy_(orig, tmp)  # a strided parameter or state: updated in a copy, written back
