"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter."""
from .._tensor import Tensor, _new


class Parameter(Tensor):
    """A leaf Tensor (sharing ``data``'s storage) with ``requires_grad=True`` by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        t = _new(data._storage, data._shape, data._stride, data._offset, data.dtype, data._nat, cls)
        t.requires_grad = requires_grad
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        from ..serialization import _rebuild_param
        return (_rebuild_param, (self.detach().numpy(force=True).copy(), self.dtype.name, self.requires_grad))


class Buffer(Tensor):
    def __new__(cls, data=None, *, persistent=True):
        t = _new(data._storage, data._shape, data._stride, data._offset, data.dtype, data._nat, Tensor)
        t.persistent = persistent
        return t


class UninitializedParameter(Parameter):
    pass
