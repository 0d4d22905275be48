"""``torch.nn.utils.prune``: zero out parts of a module's parameter through a mask.

Pruning parameter ``name`` of a module moves the original to a Parameter ``name + "_orig"``, stores the mask
(same shape, same dtype as the parameter, 1 = kept) as a buffer ``name + "_mask"``, sets the plain attribute
``name`` to ``mask * orig`` and registers the pruning method as a forward pre-hook that recomputes that
product before every forward (so training updates ``_orig`` and the pruned entries stay zero). Pruning the
same parameter again combines the masks through a ``PruningContainer``; ``remove`` makes the pruning
permanent: ``name`` becomes a Parameter again holding the masked values. The state_dict therefore holds
``name_orig`` and ``name_mask`` while pruned, ``name`` after ``remove``.

Source: torch/nn/utils/prune.py (PyTorch 2.13): same classes, functions, arguments, mask rules and errors.
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._ops.creation import ones_like, zeros_like
from ..._ops.random import rand, rand_like

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """The base of the pruning methods: subclasses define ``compute_mask(t, default_mask)`` and a
    ``PRUNING_TYPE`` ("unstructured", "structured" with a ``dim`` attribute, or "global"); ``apply`` prunes a
    module's parameter with a new instance and installs it as the forward pre-hook."""

    _tensor_name = None

    def __call__(self, module, inputs):
        """The forward pre-hook: refresh ``module.<name>`` as mask * orig."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for tensor ``t`` given the mask already in force (``default_mask``, same shape)."""

    def apply_mask(self, module):
        """``module.<name>_mask * module.<name>_orig`` (the mask cast to the parameter's dtype).
        AssertionError when this method has not been applied to a tensor yet."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, masks computed from ``importance_scores``
        (the parameter itself when None; same shape, AssertionError otherwise). A parameter already pruned
        gets its methods chained in a PruningContainer (its current mask is the starting mask). On an error
        while computing the mask the module is restored. Returns the method (or the container) installed."""
        method = _merge_with_existing(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as parameter {name} of "
                                     f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone().contiguous()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes for it (from ``importance_scores`` if given, same shape
        as ``t``, AssertionError otherwise), starting from ``default_mask`` (all ones when None)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError("importance_scores should have the same shape as tensor t, got "
                                     f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Make the pruning permanent: ``module.<name>`` becomes the ``_orig`` Parameter holding the masked
        values, and ``_orig`` / ``_mask`` are dropped (the hook itself is removed by ``prune.remove``)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        masked = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = masked.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _merge_with_existing(cls, module, name, *args, **kwargs):
    """The method to install for pruning ``name``: a new ``cls`` instance, wrapped with the pruning hook
    already on ``name`` (that hook is taken off the module; it is re-registered by ``apply``)."""
    old, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(k)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                             f"{module}. Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is None:
        return method
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    container = PruningContainer(old)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """A sequence of pruning methods on one tensor, applied one after another: each new method only sees
    the entries (unstructured) or slices along its ``dim`` (structured) that the masks so far keep."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method``. TypeError when it is not a BasePruningMethod, ValueError when it prunes a
        tensor of another name than the container's."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """``default_mask`` with the last method's mask written into the part it still keeps: the entries
        where it is 1 (unstructured), the slices along ``dim`` with any nonzero entry (structured), or all
        of it (global). AttributeError for a structured method without ``dim``, IndexError for a ``dim`` out
        of range, ValueError for an unknown PRUNING_TYPE."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            region = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                                     "`dim` defined.")
            nd = t.dim()
            dim = method.dim + nd if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {nd}")
            alive = default_mask.sum(dim=[d for d in range(nd) if d != dim]) != 0
            region = tuple(alive if d == dim else slice(None) for d in range(nd))
        elif kind == "global":
            region = tuple(slice(None) for _ in range(len(t.shape)))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[region], default_mask=default_mask[region])
        new_mask[region] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays as it is (all ones on a fresh tensor), but the tensor gets the
    ``_orig`` / ``_mask`` reparametrization."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Install on ``module.<name>``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Zero ``amount`` entries chosen uniformly at random (an int: that many; a float in [0, 1]: that
    fraction of the tensor, rounded)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """A copy of ``default_mask`` with the ``amount`` entries of largest uniform random draw zeroed."""
        k = _count_to_prune(self.amount, t.nelement())
        _check_amount_fits(k, t.nelement())
        mask = default_mask.clone().contiguous()
        if k:
            mask.view(-1)[rand_like(t).view(-1).topk(k).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Install on ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Zero the ``amount`` entries of smallest absolute value (of the importance scores)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        """A copy of ``default_mask`` with the ``amount`` entries of smallest ``|t|`` zeroed."""
        k = _count_to_prune(self.amount, t.nelement())
        _check_amount_fits(k, t.nelement())
        mask = default_mask.clone().contiguous()
        if k:
            mask.view(-1)[t.abs().view(-1).topk(k, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Install on ``module.<name>``, ranking by ``importance_scores`` if given."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _slice_mask(t, dim, index):
    """Zeros like ``t`` with ones on the slices ``index`` (bool mask or positions) along ``dim``."""
    mask = zeros_like(t)
    dim = dim % t.dim()
    mask[tuple(index if d == dim else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Zero ``amount`` whole slices along ``dim`` (default the last), chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Ones on the kept slices (those whose random draw exceeds the ``amount``-th smallest draw) times
        ``default_mask``. ValueError for a tensor of fewer than 2 dims, IndexError for ``dim`` out of range."""
        _check_structured(t)
        _check_dim(t, self.dim)
        n = t.shape[self.dim]
        k = _count_to_prune(self.amount, n)
        _check_amount_fits(k, n)
        if k == 0:
            return default_mask
        draw = rand(n)
        mask = _slice_mask(t, self.dim, draw > draw.kthvalue(k).values)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Install on ``module.<name>``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Zero the ``amount`` slices along ``dim`` of smallest L``n`` norm (``n`` as ``torch.norm``'s ``p``:
    a number, ``inf``, ``-inf``, ``"fro"`` or ``"nuc"``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        """Ones on the slices of largest norm (all but ``amount``) times ``default_mask``. ValueError for a
        tensor of fewer than 2 dims, IndexError for ``dim`` out of range."""
        _check_structured(t)
        _check_dim(t, self.dim)
        n = t.shape[self.dim]
        k = _count_to_prune(self.amount, n)
        _check_amount_fits(k, n)
        dims = list(range(t.dim()))
        dims.remove(dims[self.dim])
        norms = t.norm(p=self.n, dim=dims)
        keep = norms.topk(n - k, largest=True).indices
        if k == 0:
            return default_mask
        mask = _slice_mask(t, self.dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Install on ``module.<name>``, ranking by ``importance_scores`` if given."""
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prune with a given mask (multiplied into the mask in force; same shape, AssertionError otherwise)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        """``default_mask * mask``."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Install on ``module.<name>``."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Reparametrize ``module.<name>`` as ``_orig`` times an all-ones ``_mask``; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries of ``module.<name>`` (see RandomUnstructured); returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude (of ``importance_scores``
    if given); returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random slices along ``dim`` of ``module.<name>``; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` slices along ``dim`` of ``module.<name>`` of smallest L``n`` norm (of
    ``importance_scores`` if given); returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs in ``parameters`` together: ``pruning_method(**kwargs)`` (an
    unstructured method class) ranks all their entries (or ``importance_scores[(module, name)]``) as one
    flat vector, on top of their current masks; each parameter then gets its share as a CustomFromMask.
    TypeError when ``parameters`` is not iterable, ``importance_scores`` not a dict, or the method not
    unstructured."""
    from . import parameters_to_vector
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    current = parameters_to_vector([_current_mask(m, n) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, current)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + p.numel()].view_as(p))
        start += p.numel()


def _current_mask(module, name):
    """The mask in force on ``module.<name>``: its ``_mask`` buffer, all ones when not pruned."""
    mask = getattr(module, name + "_mask", None)
    return mask if mask is not None else ones_like(getattr(module, name))


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` with the given ``mask`` (1 keeps, 0 prunes); returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent and take its hook off; returns ``module``.
    ValueError when that parameter is not pruned."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any submodule carries a pruning hook."""
    return any(isinstance(h, BasePruningMethod) for _, m in module.named_modules()
               for h in m._forward_pre_hooks.values())


def _check_amount(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _check_amount_fits(amount, size):
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _check_structured(t):
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {len(t.shape)} dims")


def _count_to_prune(amount, size):
    """An int amount as it is, a fraction of ``size`` rounded half to even (Python's ``round``)."""
    return amount if isinstance(amount, numbers.Integral) else round(amount * size)


def _check_dim(t, dim):
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
