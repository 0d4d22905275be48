"""Devices and the backend registry.

A backend is an allocator plus kernels (see ``tinytorch.backends.base.Backend``). Every device type
name maps to exactly one backend object; ``register_backend`` is the public entry point for a new
device (PyTorch's PrivateUse1 + ``rename_privateuse1_backend`` in one call).
"""
import threading

_BACKENDS = {}


class device:
    """``tinytorch.device("cpu")``, ``device("opencl:1")``, ``device("opencl", 1)``.

    Raises RuntimeError for an unknown device type or a malformed string, as PyTorch does.
    """

    __slots__ = ("type", "index")
    _interned = {}

    def __new__(cls, type, index=None):
        # devices are interned, so the dispatcher's same-device check is an identity test
        if isinstance(type, device) and index is None:
            return type
        key = (type, index)
        d = cls._interned.get(key) if isinstance(type, str) else None
        if d is None:
            d = object.__new__(cls)
            d._init(type, index)
            d = cls._interned.setdefault((d.type, d.index), d)
            if isinstance(type, str):
                cls._interned[key] = d
        return d

    def _init(self, type, index):
        if not isinstance(type, str):
            raise TypeError(f"device(): argument 'type' must be str, not {builtins_type(type).__name__}")
        if ":" in type:
            if index is not None:
                raise ValueError("type (string) must not include an index because index was passed explicitly: " + type)
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _BACKENDS and type not in ("cuda", "mps", "xpu"):
            known = ", ".join(sorted(_BACKENDS))
            raise RuntimeError(f"Expected one of {known} device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = type
        self.index = index

    def __reduce__(self):
        return (device, (str(self),))

    def __eq__(self, other):
        """Equal to a device of the same type and index; anything else (a string such as "cpu" included) is not
        equal, as in PyTorch: compare ``d.type == "cpu"`` or ``d == torch.device("cpu")``."""
        if other is self:
            return True
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type + (f":{self.index}" if self.index is not None else "")

    def __enter__(self):
        """``with tinytorch.device("meta"):`` makes this the default device of factory functions inside."""
        _default_device.stack = _default_device.stack + (_default_device.value,)
        _default_device.value = None if self.type == "cpu" and self.index is None else as_device(self)
        return self

    def __exit__(self, *a):
        _default_device.value = _default_device.stack[-1]
        _default_device.stack = _default_device.stack[:-1]
        return False


class _DefaultDevice(threading.local):
    """The calling thread's default device for factory functions, as PyTorch keeps it (``set_default_device``
    and ``with torch.device(...)`` do not reach other threads; a new thread starts on cpu). ``value`` None
    means cpu; ``stack`` holds the values that enclosing ``with device(...)`` blocks restore. Class-level
    defaults: no per-thread initialisation."""
    value = None
    stack = ()


_default_device = _DefaultDevice()


def set_default_device(device):
    """Make ``device`` (a device, a string, or None for cpu) the device that factory functions (zeros, randn,
    tensor, arange, ... and the parameters that nn modules create) use when given no ``device``, as
    ``torch.set_default_device``. RuntimeError for an unknown or unavailable device."""
    if device is None:
        _default_device.value = None
        return
    d = as_device(device)
    get_backend(d)  # fail here, not at the next factory call
    _default_device.value = None if d.type == "cpu" and d.index is None else d


def get_default_device():
    """The device factory functions use when given none (``torch.get_default_device``)."""
    return _default_device.value or device("cpu")


def builtins_type(x):
    return type(x)


def register_backend(name, backend):
    """Register ``backend`` (a :class:`tinytorch.backends.base.Backend`) as device type ``name``.

    After this, ``tinytorch.device(name)``, ``tensor.to(name)`` and every op whose kernel or
    decomposition chain reaches the backend's primitive kernels work on it.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"register_backend(): invalid device name {name!r}")
    backend.name = name
    _BACKENDS[name] = backend
    return backend


class _NotCompiledWithCUDA(AssertionError, RuntimeError):
    """torch's AssertionError for CUDA on a build without it; also a RuntimeError, the type of tinytorch's other
    unavailable-device errors, so either ``except`` catches it."""


def no_cuda(reason):
    """The error of using the ``cuda`` device where it is unavailable; ``reason`` says what is missing."""
    return _NotCompiledWithCUDA(f"Torch not compiled with CUDA enabled: tinytorch's cuda device is unavailable here "
                                f"({reason}); use device='opencl' for a GPU without CUDA, or 'cpu'")


def get_backend(dev):
    """The backend object for a device (or device string).

    RuntimeError when no backend is registered for the device type, or the device index is out of range.
    """
    d = dev if isinstance(dev, device) else device(dev)
    b = _BACKENDS.get(d.type)
    if b is None and d.type == "cuda":
        raise no_cuda("no backend is registered for it")
    if b is None:
        raise RuntimeError(f"device type '{d.type}' is not available in tinytorch: no backend is registered for it "
                           f"(registered: {', '.join(sorted(_BACKENDS))})")
    if not b.is_available():
        if d.type == "cuda":
            raise no_cuda(b.unavailable_reason())
        raise RuntimeError(f"{d.type} device is not available: {b.unavailable_reason()}")
    if d.index is not None and d.index >= b.device_count():
        raise RuntimeError(f"{d.type} device index {d.index} is out of range: {b.device_count()} {d.type} "
                           f"device(s) available")
    return b


def is_registered(name):
    """True when a backend is registered for device type ``name``."""
    return name in _BACKENDS


def as_device(d):
    """``d`` as a device; an accelerator without an index means its current device (``"opencl"`` -> ``opencl:0``;
    ``cuda`` after ``torch.cuda.set_device(1)`` -> ``cuda:1``), as in PyTorch, so tensors created with and
    without the index are on the same device."""
    if d is None:
        return d
    if not isinstance(d, device):
        if isinstance(d, int):
            raise RuntimeError("tinytorch has no default accelerator; pass a device string such as 'cpu'")
        d = device(d)
    if d.index is None and d.type not in ("cpu", "meta"):
        d = device(d.type, current_index.get(d.type, 0))
    return d


# device type -> the index its name alone means (``torch.cuda.set_device``); 0 when never set
current_index = {}
