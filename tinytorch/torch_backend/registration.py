"""Registering the kernels with PyTorch's dispatcher (``torch.library``), the ``_foreach_`` rule and the CPU
fallback for every ATen op without a kernel."""
import warnings

import torch

from . import autocast, kernels as K, serialization
from ._bridge import State

aten = torch.ops.aten
_KEY = "PrivateUse1"
_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_libs = []

# ops that ran on the CPU through the fallback: {"aten::name.overload": calls}; tests assert it stays empty
FALLBACKS = {}


def registered_ops():
    """The ATen overloads with a kernel of this device, sorted."""
    return sorted(_REGISTERED)


_REGISTERED = set()


def _impl(lib, name, fn):
    lib.impl(name, fn, _KEY)
    _REGISTERED.add(name if "." in name else name + ".default")


def _cpu_redispatch(name):
    packet, _, overload = name.partition(".")
    op = getattr(getattr(aten, packet), overload or "default")

    def kernel(*args, **kwargs):
        return op.redispatch(_CPU, *args, **kwargs)
    kernel.__name__ = "view_" + name.replace(".", "_")
    return kernel


# ---- the _foreach_ family: one rule, the per-tensor op on each element ---------------------------------------

_FOREACH_SINGLE = {"norm": "linalg_vector_norm"}


def _foreach_kernel(packet, overload):
    base = packet[len("_foreach_"):]
    inplace = base.endswith("_")
    single = getattr(aten, _FOREACH_SINGLE.get(base, base))
    functional = overload.removesuffix("_out")  # "List_out": the out= form of "List"
    if base.rstrip("_") in ("maximum", "minimum") and functional in ("Scalar", "ScalarList"):
        # maximum/minimum have no scalar overload: torch's own foreach kernels clamp
        single = getattr(aten, ("clamp_min" if base.startswith("maximum") else "clamp_max") + base[7:])
    per_element_scalars = functional == "Tensor" and base.rstrip("_") in ("addcmul", "addcdiv")
    # a foreach op takes positionally what its per-tensor op may take as keyword-only (addcmul_'s value)
    schema = getattr(single, single.overloads()[0])._schema
    n_positional = sum(not a.kwarg_only for a in schema.arguments)
    kw_only = [a.name for a in schema.arguments if a.kwarg_only]

    def kernel(self, *args, **kwargs):
        if per_element_scalars:  # the scalars of addcmul/addcdiv given as one cpu tensor
            args = args[:-1] + (args[-1].tolist(),)
        dest = kwargs.pop("out", None)  # the _out overloads: the per-tensor results are written into `out`
        out = []
        with torch._C._AutoDispatchBelowADInplaceOrView():
            for i, t in enumerate(self):
                a = [x[i] if isinstance(x, (list, tuple)) else x for x in args]
                extra = dict(zip(kw_only, a[n_positional - 1:]))
                out.append(single(t, *a[:n_positional - 1], **extra, **kwargs))
            for d, r in zip(dest if dest is not None else (), out):
                if d.shape != r.shape:
                    d.resize_(r.shape)
                d.copy_(r)
        return None if inplace or dest is not None else out
    kernel.__name__ = f"{packet}_{overload}"
    return kernel


def _foreach_overloads():
    for qual in torch._C._dispatch_get_all_op_names():
        if not qual.startswith("aten::_foreach_"):
            continue
        name = qual[len("aten::"):]
        packet, _, overload = name.partition(".")
        base = packet[len("_foreach_"):]
        if overload == "out":
            continue
        if not hasattr(aten, _FOREACH_SINGLE.get(base, base)):
            continue
        if overload in ("ScalarAndTensor",):  # the scalar is the first argument: no per-tensor op of that shape
            continue
        yield name, packet, overload


# ---- out= overloads: the functional kernel, then a write into `out` ------------------------------------------

def _out_overload(name):
    """The ``out=`` overload of functional overload ``name`` (``add.Tensor`` -> ``add.out``, ``where.self`` ->
    ``where.self_out``): same arguments plus one ``out`` tensor; None when there is none."""
    packet, _, overload = name.partition(".")
    p = getattr(aten, packet, None)
    if p is None:
        return None
    functional = getattr(p, overload or "default")._schema
    args = [(a.name, str(a.type)) for a in functional.arguments]
    if len(functional.returns) != 1:
        return None
    for cand in ((overload + "_out") if overload else "out", "out"):
        if cand not in p.overloads():
            continue
        sch = getattr(p, cand)._schema
        if [(a.name, str(a.type)) for a in sch.arguments if a.name != "out"] == args and \
                [a.name for a in sch.arguments if a.alias_info is not None and a.alias_info.is_write] == ["out"]:
            return f"{packet}.{cand}"
    return None


# ---- the CPU fallback -----------------------------------------------------------------------------------------

def _to_cpu(x):
    if isinstance(x, torch.Tensor) and x.device.type == State.name:
        return x.cpu()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cpu(v) for v in x)
    return x


def _device_of(args):
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == State.name:
            return a.device
        if isinstance(a, (list, tuple)):
            d = _device_of(a)
            if d is not None:
                return d
    return None


def _fallback(keyset, op, *args, **kwargs):
    """Run ``op`` on the CPU: device tensors copied to the host, the op run there, every argument the schema
    marks as written copied back, and the outputs moved to the device (an output that aliases a written argument
    is that argument). Warns once per op, in the words PyTorch uses for MPS."""
    name = op._schema.name
    overload = f"{name}.{op._overloadname}" if op._overloadname != "default" else name
    if overload not in FALLBACKS:
        warnings.warn(f"The operator '{overload}' is not currently supported on the {State.name} device and will fall "
                      "back to run on the CPU. This may have performance implications.", UserWarning, stacklevel=2)
        FALLBACKS[overload] = 0
    FALLBACKS[overload] += 1
    schema = op._schema
    device = _device_of(list(args) + list(kwargs.values()))
    cpu_args = [_to_cpu(a) for a in args]
    cpu_kwargs = {k: _to_cpu(v) for k, v in kwargs.items()}
    with torch._C._AutoDispatchBelowADInplaceOrView():
        result = op(*cpu_args, **cpu_kwargs)
    written = {}
    for i, arg in enumerate(schema.arguments):
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        if i < len(args) and not arg.kwarg_only:
            orig, new = args[i], cpu_args[i]
        elif arg.name in kwargs:
            orig, new = kwargs[arg.name], cpu_kwargs[arg.name]
        else:
            continue
        for o, n in zip(orig, new) if isinstance(orig, (list, tuple)) else ((orig, new),):
            if isinstance(o, torch.Tensor) and o is not n:
                with torch._C._AutoDispatchBelowADInplaceOrView():
                    if o.shape != n.shape:  # an out= argument the CPU op resized
                        o.resize_(n.shape)
                    o.copy_(n)
                written[id(n)] = o

    def back(r):
        if isinstance(r, torch.Tensor):
            if id(r) in written:
                return written[id(r)]
            return r.to(device) if device is not None else r
        if isinstance(r, (list, tuple)):
            return type(r)(back(v) for v in r)
        return r
    with torch._C._AutoDispatchBelowADInplaceOrView():
        return back(result)


def register():
    """Register every kernel of ``kernels`` and the fallback for the PrivateUse1 key (once per process)."""
    if _libs:
        return
    lib = torch.library.Library("aten", "IMPL")
    _libs.append(lib)
    for name, fn in K.KERNELS.items():
        _impl(lib, name, K.make_kernel(fn, name))
    for name, fn in K.KERNELS.items():
        out = _out_overload(name)
        if out is not None and out not in K.KERNELS and out not in K.OTHER_KERNELS:
            _impl(lib, out, K.make_out_kernel(fn, out))
    for name, fn in K.INPLACE_KERNELS.items():
        _impl(lib, name, K.make_inplace_kernel(fn, name))
    for name, fn in K.OTHER_KERNELS.items():
        _impl(lib, name, fn)
    for name in K.VIEW_OPS:
        if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + name, "CompositeExplicitAutograd"):
            _impl(lib, name, _cpu_redispatch(name))
    for name, packet, overload in _foreach_overloads():
        _impl(lib, name, _foreach_kernel(packet, overload))
    fb = torch.library.Library("_", "IMPL")
    _libs.append(fb)
    fb.fallback(_fallback, _KEY, with_keyset=True)
    autocast.register(lib, fb)
    serialization.register()
