"""``torch.onnx.symbolic_helper``: what packages use to write the ONNX symbolic functions they register
(``register_custom_op_symbolic``).

``parse_args(*descriptors)`` declares how an exporter should convert a symbolic function's graph arguments ("v": a
value, "i"/"f"/"b"/"s": a constant int/float/bool/string, "is"/"fs": lists, "none"); tinytorch has no exporter, so
nothing ever calls a symbolic function and the declaration is kept on the function (``_onnx_arg_descriptors``)
for an exporter to read.
"""

__all__ = ["parse_args"]

_DESCRIPTORS = {"v", "i", "is", "f", "fs", "b", "s", "t", "none"}


def parse_args(*arg_descriptors):
    """Decorator declaring the argument kinds of a symbolic function (see the module docstring); ValueError for an
    unknown descriptor."""
    bad = [d for d in arg_descriptors if d not in _DESCRIPTORS]
    if bad:
        raise ValueError(f"parse_args: unknown argument descriptors {bad}; expected some of {sorted(_DESCRIPTORS)}")

    def decorator(fn):
        fn._onnx_arg_descriptors = arg_descriptors
        return fn
    return decorator
