"""The legacy ``size_average`` / ``reduce`` arguments of the losses (PyTorch's ``torch.nn._reduction``)."""
import warnings


def _legacy_get_string(size_average, reduce):
    # PyTorch's _Reduction.legacy_get_string: an unset flag counts as True
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=3)
    return ret


def _legacy_reduction_args(fn):
    """``fn`` with its deprecated ``size_average`` / ``reduce`` arguments honoured as in PyTorch: when either
    is given it overrides ``reduction`` (``size_average=False`` sums, ``reduce=False`` gives per-element
    losses), with PyTorch's deprecation warning."""
    import functools
    import inspect
    sig = inspect.signature(fn)
    names = list(sig.parameters)
    first = min(names.index("size_average"), names.index("reduce"))

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if len(args) <= first and "size_average" not in kwargs and "reduce" not in kwargs:
            return fn(*args, **kwargs)
        bound = sig.bind(*args, **kwargs)
        a = bound.arguments
        if a.get("size_average") is not None or a.get("reduce") is not None:
            a["reduction"] = _legacy_get_string(a.get("size_average"), a.get("reduce"))
            a["size_average"] = a["reduce"] = None
        return fn(*bound.args, **bound.kwargs)
    return wrapper
