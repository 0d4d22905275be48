"""``torch._custom_ops``: the pre-2.4 spellings of ``torch.library`` that packages still import (torchvision's fake
kernels call ``get_ctx``).

``impl`` and ``impl_abstract`` are ``torch.library.impl`` / ``register_fake`` with the old keyword signatures;
``get_ctx`` gives the context a fake kernel asks for an output size that depends on the data. tinytorch's fake
kernels run on ``meta`` tensors of concrete shapes and it has no symbolic sizes, so that context refuses
(RuntimeError) to invent one.
"""
from . import library

__all__ = ["impl", "impl_abstract", "get_ctx"]


def impl(qualname, *, device_types=("cpu", "cuda"), func=None):
    """Register ``func`` as ``qualname``'s kernel for ``device_types`` (a decorator when ``func`` is None)."""
    return library.impl(qualname, device_types, func)


def impl_abstract(qualname, *, func=None):
    """Register ``func`` as ``qualname``'s fake kernel (``torch.library.register_fake``)."""
    return library.register_fake(qualname, func)


class _FakeContext:
    def new_dynamic_size(self, *, min=0, max=None):
        raise RuntimeError("new_dynamic_size: tinytorch has no symbolic sizes, so an op whose output size depends on "
                           "its input values cannot run on meta tensors")

    create_unbacked_symint = new_dynamic_size


def get_ctx():
    """The context of the fake kernel being run."""
    return _FakeContext()
