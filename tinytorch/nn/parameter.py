"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter."""
from .._tensor import Tensor, _new
from ..overrides import _disabled_torch_function_impl


def _is_dtensor(data):
    # a DTensor (tinytorch.distributed.tensor) keeps this rank's piece in _local_tensor; its own memory is a shell
    return getattr(data, "_local_tensor", None) is not None


class Parameter(Tensor):
    """A leaf Tensor (sharing ``data``'s storage) with ``requires_grad=True`` by default."""

    __torch_function__ = _disabled_torch_function_impl  # its ops give plain tensors, as PyTorch's

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        if type(data) is not Tensor and _is_dtensor(data):  # a DTensor's own storage is a meta shell
            raise NotImplementedError("nn.Parameter of a DTensor is not supported by tinytorch (it does not run "
                                      "operators on DTensors): make the parameter from dtensor.to_local() or "
                                      "dtensor.full_tensor()")
        t = _new(data._storage, data._shape, data._stride, data._offset, data.dtype, data._nat, cls)
        t.requires_grad = False
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(requires_grad)  # refuses an inference tensor outside inference_mode
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        from ..serialization import _rebuild_param
        return (_rebuild_param, (self.detach().numpy(force=True).copy(), self.dtype.name, self.requires_grad))


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        # a Buffer is a plain Tensor flagged _is_buffer, as in PyTorch (so ``isinstance(t, nn.Buffer)`` is True)
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor a Module registers as a buffer when assigned as an attribute (``self.b = nn.Buffer(t,
    persistent=False)`` is ``register_buffer("b", t, persistent=False)``): state that is not a parameter. Returns
    ``data`` detached (sharing its memory), flagged ``_is_buffer``, with its ``persistent`` flag."""

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class _Uninitialized:
    """Shared by the placeholders of lazy modules: ``materialize`` gives this same object memory of the
    inferred shape and turns it into ``cls_to_become``, so references held elsewhere (an optimizer's param
    list) see the real tensor."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        pass

    def materialize(self, shape, device=None, dtype=None):
        """Allocate (uninitialised) memory of ``shape`` and become ``cls_to_become``."""
        from .._ops.creation import empty
        _adopt(self, empty(shape, device=device or self.device, dtype=dtype or self.dtype))

    @property
    def shape(self):
        """RuntimeError, as PyTorch: the shape is not known until the lazy module's first forward."""
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (lazy modules): an empty placeholder until ``materialize``
    turns this same object into an ordinary Parameter (``torch.nn.UninitializedParameter``)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._ops.creation import empty
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (lazy modules); becomes an ordinary Tensor when materialized."""

    __torch_function__ = _disabled_torch_function_impl

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._ops.creation import empty
        e = empty(0, device=device, dtype=dtype)
        t = _new(e._storage, e._shape, e._stride, e._offset, e.dtype, e._nat, cls)
        t.requires_grad, t.persistent = requires_grad, persistent
        return t


def _adopt(placeholder, t):
    """Make ``placeholder`` (an uninitialized parameter or buffer) hold ``t``'s memory and turn it into an
    ordinary Parameter / Tensor, keeping the object's identity."""
    placeholder._storage, placeholder._shape, placeholder._stride = t._storage, t._shape, t._stride
    placeholder._offset, placeholder._nat, placeholder.dtype = t._offset, t._nat, t.dtype
    placeholder.__class__ = type(placeholder).cls_to_become
