"""Tensor: a strided view (shape, strides, offset) of a Storage, plus autograd fields.

Op methods (``add``, ``sum``, ``view`` ...) are attached by the modules in ``tinytorch._ops``,
where each op is defined once; this file holds the data model and the in-place write path.
"""
import builtins
from math import prod as _prod

import numpy as np

from . import _dispatch, _layout, _strides
from . import _dtype as _dt
from .autograd import engine
from .autograd.grad_mode import _state
from ._modes import _lazy, bump_module_version
from .device import as_device, device, get_backend
from ._storage import Storage

_CPU = device("cpu")


class Size(tuple):
    """``torch.Size``: a tuple of ints with ``numel()``."""

    def numel(self):
        return _strides.numel(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


# set by tinytorch.overrides: told of each Tensor subclass instance _new makes (the __torch_function__ protocol is
# consulted by the public functions once a dispatching subclass has an instance)
_subclass_instance_made = None


def _new(storage, shape, stride, offset, dtype, nat=None, cls=None):
    t = object.__new__(cls or Tensor)
    if cls is not None and _subclass_instance_made is not None:
        _subclass_instance_made(cls)
    t._storage = storage
    t._shape = shape
    t._stride = stride
    t._offset = offset
    t.dtype = dtype
    t._nat = nat
    t.requires_grad = False
    t.grad_fn = None
    return t


class Tensor:
    """A multi-dimensional array with autograd, as ``torch.Tensor``.

    ``Tensor(data)`` / ``Tensor(*sizes)`` follow PyTorch's legacy constructor (float32 by default);
    prefer ``tinytorch.tensor``.
    """

    __slots__ = ("_storage", "_shape", "_stride", "_offset", "dtype", "_nat", "requires_grad", "grad_fn",
                 "__weakref__", "__dict__")
    __hash__ = object.__hash__
    # rarely set fields: class-level defaults keep tensor creation cheap (instances override in __dict__)
    _grad = None
    _post_acc_hooks = None
    _output_nr = 0
    _base = None
    _hooks = None
    _retains_grad = False
    _grad_acc = None
    _from_user = False
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        pass

    # ---- construction from kernels ----
    @staticmethod
    def _from_native(backend, dev, res, dtype, shape):
        nat, buf, stride, off = backend.wrap(res, dtype)
        if shape is None:
            shape = tuple(nat.shape)
        elif nat.shape != shape:
            raise RuntimeError(f"internal error: kernel returned shape {tuple(nat.shape)}, meta says {shape}")
        return _new(Storage(buf, dtype, dev or _CPU, _prod(shape), backend), shape, stride, off, dtype, nat)

    def _native(self):
        n = self._nat
        if n is None:
            st = self._storage
            n = self._nat = st.backend.view(st.buf, self.dtype, self._shape, self._stride, self._offset)
        return n

    def _alias(self):
        """A new Tensor object over the same memory, with no autograd history."""
        return _new(self._storage, self._shape, self._stride, self._offset, self.dtype, self._nat)

    # ---- metadata ----
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim`` (IndexError when out of range)."""
        if dim is None:
            return Size(self._shape)
        return self._shape[_strides.wrap_dim(dim, len(self._shape))] if self._shape else \
            _strides.wrap_dim(dim, 0) and 1

    def stride(self, dim=None):
        """Strides in elements, or the stride of ``dim``."""
        if dim is None:
            return tuple(self._stride)
        return self._stride[_strides.wrap_dim(dim, len(self._shape))]

    def storage_offset(self):
        return self._offset

    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self):
        return self._storage.device.type == "cuda"

    @property
    def is_mps(self):
        return self._storage.device.type == "mps"

    @property
    def is_xpu(self):
        return self._storage.device.type == "xpu"

    @property
    def is_quantized(self):
        return False  # tinytorch has no quantized dtypes

    @property
    def is_meta(self):
        return self._storage.device.type == "meta"

    @property
    def is_cpu(self):
        return self._storage.device.type == "cpu"

    def get_device(self):
        """The device index, -1 for cpu tensors (``Tensor.get_device``)."""
        d = self._storage.device
        return -1 if d.type == "cpu" else (d.index or 0)

    def is_neg(self):
        return False  # tinytorch has no lazy negation bit: negation is always materialised

    def is_nonzero(self):
        """The truth value of a one-element tensor; RuntimeError otherwise, as ``Tensor.is_nonzero``."""
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def is_same_size(self, other):
        return self._shape == other._shape

    layout = _layout.strided  # a sparse tensor (tinytorch/sparse) has its own
    is_sparse = False
    is_sparse_csr = False

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    ndimension = dim

    def numel(self):
        return _strides.numel(self._shape)

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def is_contiguous(self, memory_format=None):
        return _strides.is_contiguous(self._shape, self._stride)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_signed(self):
        return self.dtype.is_signed

    def data_ptr(self):
        """Address of the first element (host backends), as in PyTorch."""
        from ._storage import host_address
        return host_address(self._storage.buf) + self._offset * self.dtype.itemsize

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """No argument: the legacy type name ('torch.FloatTensor'). Otherwise the tensor converted to
        ``dtype``: a dtype, a legacy type (``torch.LongTensor``) or its name ('torch.LongTensor'). As PyTorch,
        ValueError for any other string or class (``x.type(float)``: use ``x.to(float)``), TypeError for
        other objects."""
        if dtype is None:
            return "torch." + _TYPE_NAMES[self.dtype.name]
        if isinstance(dtype, str):
            d = {("torch." + v): getattr(_dt, k) for k, v in _TYPE_NAMES.items()}.get(dtype)
            if d is None:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = d
        elif isinstance(dtype, type):
            if not isinstance(getattr(dtype, "dtype", None), _dt.dtype):
                raise ValueError(f"invalid type: '{dtype.__name__}'")
            dtype = dtype.dtype  # a legacy type: x.type(torch.LongTensor)
        elif not isinstance(dtype, _dt.dtype):
            raise TypeError("dtype must be a type, str, or dtype object")
        return self.to(dtype)

    # ---- autograd fields ----
    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self.requires_grad:
            import warnings
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                          "attribute won't be populated during autograd.backward(). Use .retain_grad() on the "
                          "non-leaf Tensor if you want its gradient.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, g):
        if g is not None:
            if not isinstance(g, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}")
            if g._shape != self._shape:
                raise RuntimeError(f"assigned grad has data of a different size: got {list(g._shape)}, "
                                   f"expected {list(self._shape)}")
            if g.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: got {g.dtype}, expected {self.dtype}")
            if g.device != self.device:
                raise RuntimeError(f"assigned grad has data located on a different device: got {g.device}, "
                                   f"expected {self.device}")
        self._grad = g

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(other).__name__}")
        if _lazy.active:  # recorded ops read this tensor's old memory: they run first (a graph break)
            _lazy.recording.sync("assigning .data")
        bump_module_version()  # a compiled replay assumed this tensor's old geometry
        self._storage, self._shape, self._stride = other._storage, other._shape, other._stride
        self._offset, self.dtype, self._nat = other._offset, other.dtype, other._nat

    def is_inference(self):
        """Whether this is an inference tensor: its memory was allocated under ``inference_mode`` (a view
        shares its base's answer), as ``torch.Tensor.is_inference``."""
        return self._storage.inference

    def _check_inference_write(self):
        if self._storage.inference and not _state.inference:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                               "a clone to get a normal tensor before doing inplace update.See "
                               "https://github.com/pytorch/rfcs/pull/17 for more details.")

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place. Only leaves may change it (RuntimeError otherwise); TypeError for a
        non-bool, as PyTorch's argument parser."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type(requires_grad).__name__}")
        if requires_grad and self._storage.inference and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    def detach(self):
        """A tensor sharing storage (and version counter) with ``self`` but outside the graph."""
        return self._alias()

    def detach_(self):
        """Take ``self`` out of the graph in place. RuntimeError for a view (its base would keep the graph), as
        PyTorch."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self.requires_grad = False
        return self

    def retain_grad(self):
        """Populate ``.grad`` for this non-leaf tensor during backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        ref = __import__("weakref").ref(self)

        def hook(g):
            t = ref()
            if t is not None:
                t._grad = g.detach() if t._grad is None else t._grad + g.detach()
        self.grad_fn.register_prehook(self._output_nr, hook)
        self._retains_grad = True

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None`` called with this tensor's gradient."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._hooks is None:
                self._hooks = []
            self._hooks.append(hook)
            lst = self._hooks
        else:
            self.grad_fn.register_prehook(self._output_nr, hook)
            lst = self.grad_fn.pre_hooks[self._output_nr]

        class _Handle:
            def remove(self_h):
                if hook in lst:
                    lst.remove(hook)
        return _Handle()

    @property
    def _version(self):
        """The version counter of this tensor's storage: in-place writes through any view bump it."""
        return self._storage._version[0]

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)``, called after a backward pass has accumulated into this leaf's ``.grad``
        (``torch.Tensor.register_post_accumulate_grad_hook``: e.g. an optimizer step per parameter inside
        backward). RuntimeError on a tensor that does not require grad or is not a leaf."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = []
        lst = self._post_acc_hooks
        lst.append(hook)

        class _Handle:
            def remove(self_h):
                if hook in lst:
                    lst.remove(hook)
        return _Handle()

    # ---- conversion ----
    def numpy(self, force=False):
        """The data as an ndarray; shares memory on the cpu device (RuntimeError if it requires grad)."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if _lazy.active and id(self._storage) in _lazy.recording.dirty:
            _lazy.recording.sync()  # recorded in-place writes into this memory run first (a graph break)
        if self.device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self.device.type} device type tensor to numpy. Use Tensor.cpu() to "
                                "copy the tensor to host memory first.")
            return self._storage.backend.to_numpy(self._native())
        return self._native()

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy(force=True)
        return a.astype(dtype) if dtype is not None else a

    def tolist(self):
        a = self.detach().numpy(force=True)
        if self.dtype is _dt.bfloat16:
            a = a.astype(np.float32)
        return a.tolist()

    def item(self):
        """The single value as a Python number (RuntimeError unless numel() == 1)."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        v = self.detach().numpy(force=True).reshape(-1)[0]
        if self.dtype.is_floating_point:
            return builtins.float(v)
        if self.dtype is _dt.bool:
            return builtins.bool(v)
        if self.dtype.is_complex:
            return builtins.complex(v)
        return builtins.int(v)

    def __complex__(self):
        return builtins.complex(self.item())

    def __float__(self):
        return builtins.float(self.item())

    def __int__(self):
        return builtins.int(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return builtins.int(self.item())

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, item):
        return builtins.bool((self == item).any())

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return repr(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        with __import__("tinytorch").no_grad():
            new = self.clone()
        new.requires_grad = self.requires_grad
        if type(self) is not Tensor:
            new = type(self)(new, requires_grad=self.requires_grad)
        if self._grad is not None:
            new._grad = self._grad.clone()
        memo[id(self)] = new
        return new

    # ---- in-place write path ----
    def _check_inplace(self):
        if _state.enabled and self.requires_grad:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            self._check_multi_view()

    def _check_multi_view(self):
        """PyTorch's refusal of an in-place write into one of the views of a view op with several outputs
        (``split``, ``chunk``): their node computes every view's gradient at once."""
        fn = self.grad_fn
        if fn is not None and fn.n_outputs > 1 and self._base is not None and getattr(fn, "op", None) is not None \
                and fn.op.view and _state.enabled:
            raise RuntimeError(f"Output {self._output_nr} of {fn.name()[:-len('Backward0')]} is a view and is being "
                               "modified inplace. This view is the output of a function that returns multiple views. "
                               "Such functions do not allow the output views to be modified inplace. You should "
                               "replace the inplace operation by an out-of-place one.")

    def _inplace(self, fn, *args, **kw):
        """Run out-of-place ``fn(self, *args)`` and write the result into ``self`` (PyTorch's ``op_``): through
        the dispatcher's in-place step when ``fn`` is an op the backend has an in-place kernel for, else by
        computing ``fn`` and the dispatcher's write step."""
        if args and not isinstance(args[0], (Tensor, int, float, complex, bool)) and _second_param(fn) == "other":
            # a binary op's ``other`` is checked here, once for every ``op_``: the direct in-place kernel
            # would otherwise trip over it inside NumPy
            raise TypeError(f"{fn.__name__}_(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        name = fn.__name__
        if name in _TENSOR_OTHER and args and not isinstance(args[0], Tensor):
            raise TypeError(f"{name}_(): argument 'other' (position 1) must be Tensor, not {type(args[0]).__name__}")
        if args and isinstance(args[0], complex) and not self.dtype.is_complex and name not in _COMPARISONS \
                and _second_param(fn) in ("other", "exponent"):
            # the result type is complex: refused before any kernel runs (NumPy's would raise its own error)
            cplx = {"float16": "ComplexHalf", "float64": "ComplexDouble"}.get(self.dtype.name, "ComplexFloat")
            raise RuntimeError(f"result type {cplx} can't be cast to the desired output type "
                               f"{_dispatch._TYPE_NAMES[self.dtype.name]}")
        if name in _PROMOTING and args and isinstance(args[0], (Tensor, int, float, bool)):
            # PyTorch computes the operands' common dtype first and refuses an in-place op whose common dtype
            # cannot be cast to self's, before the kernel's own dtype checks
            o = args[0]
            common = _dt.result_type_of([self, o] if isinstance(o, Tensor) else [self],
                                        () if isinstance(o, Tensor) else (o,))
            if name in _INT_TO_FLOAT and not (common.is_floating_point or common.is_complex) \
                    and not kw.get("rounding_mode"):
                common = _dt.get_default_dtype()
            if common is not self.dtype and not _dispatch._can_cast(common, self.dtype):
                raise RuntimeError(f"result type {_dispatch._TYPE_NAMES[common.name]} can't be cast to the desired "
                                   f"output type {_dispatch._TYPE_NAMES[self.dtype.name]}")
        if name in _NOT_DIFFERENTIABLE and _state.enabled:
            # PyTorch records no graph for these, so it neither checks for a leaf nor drops requires_grad
            _state.enabled = False
            try:
                return self._inplace(fn, *args, **kw)
            finally:
                _state.enabled = True
        if name in self._storage.backend.inplace_kernels and "rounding_mode" not in kw:
            return _dispatch.dispatch(_dispatch.OPS[name], (self,) + args, kw, out=self)
        if _state.enabled and (self.requires_grad or builtins.any(
                isinstance(a, Tensor) and a.requires_grad for a in args)):
            self._check_inplace()
            # the op's node may save its input, which this write changes: give it a copy (PyTorch's original_self)
            return self._write(fn(self.clone(), *args, **kw), name + "_")
        return self._write(fn(self, *args, **kw), name + "_")

    def _write(self, src, op="copy_"):
        """Write tensor ``src`` into ``self``'s memory: the op ``copy_``, whose implementation is the dispatcher's
        write step (``_dispatch.write``); ``op`` names the in-place op in error messages."""
        return _dispatch.dispatch(_dispatch.COPY_OP, (self, src), {"op": op})


def reset_grads(params, set_to_none=True):
    """Clear ``.grad`` of every tensor in ``params``: to None, or zeroed in place (``zero_grad``'s two modes)."""
    for p in params:
        if p._grad is not None:
            if set_to_none:
                p._grad = None
            else:
                p._grad = p._grad.detach()
                p._grad.zero_()


# in-place ops whose PyTorch schema has no Scalar overload of ``other`` (``x.hypot_(2.0)`` is a TypeError)
_TENSOR_OTHER = frozenset(("atan2", "arctan2", "gcd", "lcm", "heaviside", "hypot", "igamma", "igammac", "ldexp",
                           "logical_and", "logical_or", "logical_xor", "nextafter"))


# binary ops whose in-place form checks the operands' common dtype against self's first (TensorIterator's
# common-dtype rule)
_PROMOTING = frozenset(("add", "sub", "mul", "div", "remainder", "fmod", "pow", "atan2", "arctan2", "hypot",
                        "copysign", "xlogy", "nextafter", "igamma", "igammac", "gcd", "lcm", "bitwise_and",
                        "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "floor_divide"))
# ... of which these compute integral operands in the default float dtype (true division and friends)
_INT_TO_FLOAT = frozenset(("div", "atan2", "arctan2", "copysign", "xlogy"))
# comparisons compute a bool result whatever their operands: a complex scalar is not a complex result
_COMPARISONS = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                          "not_equal"))
# in-place ops PyTorch gives no derivative: allowed on a leaf that requires grad
_NOT_DIFFERENTIABLE = frozenset(("logical_and", "logical_or", "logical_xor", "logical_not"))


def _second_param(fn, _cache={}):
    """Name of the parameter after ``input`` of the out-of-place function ``fn`` (None when it has none)."""
    try:
        return _cache[fn]
    except (KeyError, TypeError):
        pass
    import inspect
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        name = params[1].name if len(params) > 1 else None
    except (TypeError, ValueError):
        name = None
    try:
        _cache[fn] = name
    except TypeError:
        pass
    return name


_dispatch.Tensor = Tensor
_dispatch._new = _new
_dispatch.setup_native_dispatch()
