"""``tinytorch.utils._pytree`` (``torch.utils._pytree`` under the import swap): nested containers as trees.

A *pytree* is a nested Python value. Containers whose type is registered in :data:`SUPPORTED_NODES` (tuple,
list, dict, namedtuple, OrderedDict, defaultdict, deque and whatever :func:`register_pytree_node` adds) are
inner nodes; everything else (tensors, numbers, ``None``, strings) is a leaf. :func:`tree_flatten` splits a tree
into its leaves, in depth-first order, and a :class:`TreeSpec` that records the containers; ``tree_unflatten``
puts leaves back into that shape. On these two rest :func:`tree_map`, the key paths (:func:`tree_flatten_with_path`,
:func:`keystr`) and the JSON form of a spec (:func:`treespec_dumps` / :func:`treespec_loads`), which is
PyTorch's protocol 1 byte for byte, so a spec written here loads in PyTorch and the other way round.

Behaviour, names, warnings and error messages follow PyTorch 2.13's ``torch/utils/_pytree.py`` (the pure-Python
pytree; there is no C++ ``_cxx_pytree`` twin here). One difference a program may see: PyTorch registers its
``torch.return_types`` structseqs as nodes of their own, while tinytorch's return types are namedtuples, so they
flatten as ``namedtuple`` nodes.
"""
import dataclasses
import functools
import importlib
import json
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, Generic, NamedTuple, Optional, Protocol, TypeVar

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get", "register_pytree_node",
    "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
    "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only",
    "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads",
    "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
    "is_structseq_class", "is_structseq_instance",
]

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"

# ---- type aliases (documentation for signatures; PyTorch exports the same names) ------------------------------
Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any  # anything json.dumps accepts
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
ToStrFunc = Callable[["TreeSpec", list[str]], str]  # deprecated in PyTorch, kept for signatures
MaybeFromStrFunc = Callable[[str], Optional[tuple[Any, Context, str]]]  # deprecated likewise


class KeyEntry(Protocol):
    """One step of a key path: hashable, comparable, printable, and able to fetch its child from a parent."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[KeyEntry, Any]], Any]]
FlattenFunc = FlattenFn
UnflattenFunc = UnflattenFn
FlattenWithKeysFunc = FlattenWithKeysFn


def _warn_deprecated(message, stacklevel=3):
    warnings.warn(message, FutureWarning, stacklevel=stacklevel)


# ---- the registry ------------------------------------------------------------------------------------------------
class NodeDef(NamedTuple):
    """How one container type is taken apart and rebuilt.

    ``flatten_fn(node) -> (children, context)``; ``unflatten_fn(children, context) -> node``;
    ``flatten_with_keys_fn(node) -> ([(key_entry, child), ...], context)`` or None when the type has no key paths.
    """
    type: type
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Optional[FlattenWithKeysFn]


class _SerializeNodeDef(NamedTuple):
    typ: type
    serialized_type_name: str
    to_dumpable_context: Optional[ToDumpableContextFn]
    from_dumpable_context: Optional[FromDumpableContextFn]


_NODE_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES: dict = {}
SUPPORTED_SERIALIZED_TYPES: dict = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE: dict = {}
CONSTANT_NODES: set = set()


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register ``cls`` in every table, overwriting (with a warning) an earlier registration.

    The argument check comes first so that a rejected call leaves the registry as it was (PyTorch fills
    ``SUPPORTED_NODES`` before it checks)."""
    if (to_dumpable_context is None) != (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or registered.")
    if serialized_type_name is None:
        serialized_type_name = NO_SERIALIZED_TYPE_NAME_FOUND
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=2)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, serialized_type_name, to_dumpable_context,
                                                            from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make instances of the container type ``cls`` inner nodes of pytrees.

    Args:
        cls: the type; its instances are flattened by ``flatten_fn`` from now on (subclasses are not included).
        flatten_fn: ``node -> (children, context)``: the children in order and whatever (hashable, comparable)
            value ``unflatten_fn`` needs besides them.
        unflatten_fn: ``(children, context) -> node``.
        serialized_type_name: the name :func:`treespec_dumps` writes for this type (usually its qualified name);
            without one, specs holding the type cannot be dumped.
        to_dumpable_context / from_dumpable_context: convert the context to and from a JSON-able value for
            :func:`treespec_dumps`; both or neither. Without them the context itself must be JSON-able.
        flatten_with_keys_fn: like ``flatten_fn`` but yields ``(key_entry, child)`` pairs; needed for the
            ``*_with_path`` functions.

    Raises:
        ValueError: ``cls`` is already registered (``"<cls> is already registered as pytree node."``), or only one
            of the two context converters is given. The registry is unchanged in both cases.

    Source: ``torch.utils._pytree.register_pytree_node``.
    """
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
        _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                      to_dumpable_context=to_dumpable_context,
                                      from_dumpable_context=from_dumpable_context,
                                      flatten_with_keys_fn=flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """Deprecated spelling of :func:`register_pytree_node` that overwrites an earlier registration (with a warning)
    instead of raising. Warns FutureWarning; ``to_str_fn``/``maybe_from_str_fn`` are ignored (a second
    FutureWarning says so). Source: ``torch.utils._pytree._register_pytree_node``."""
    _warn_deprecated("`torch.utils._pytree._register_pytree_node` is deprecated. "
                     "Please use `torch.utils._pytree.register_pytree_node` instead.")
    if to_str_fn is not None or maybe_from_str_fn is not None:
        _warn_deprecated("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                         "Please use `to_dumpable_context` and `from_dumpable_context` instead.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    """Remove ``cls`` from every registry table (KeyError when it is not registered).

    The name-to-type entry goes only when it still names ``cls``: every type registered without a serialized name
    shares the placeholder name, and PyTorch's version raises KeyError for the second of those."""
    with _NODE_REGISTRY_LOCK:
        del SUPPORTED_NODES[cls]
        name = SUPPORTED_SERIALIZED_TYPES.pop(cls).serialized_type_name
        if SERIALIZED_TYPE_TO_PYTHON_TYPE.get(name) is cls:
            del SERIALIZED_TYPE_TO_PYTHON_TYPE[name]
        CONSTANT_NODES.discard(cls)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Register a dataclass (or a class built by keyword arguments named ``field_names``) as a pytree node.

    The children are the fields that are not None, in ``field_names`` order (for a dataclass: its ``init``
    fields less ``drop_field_names``); fields holding None are rebuilt as None. Key paths use
    :class:`GetAttrKey`.

    Raises:
        ValueError: ``cls`` is not a dataclass and ``field_names`` is missing, or ``field_names`` disagrees with
            the dataclass's init fields (the message lists the missing and unexpected names).

    Source: ``torch.utils._pytree.register_dataclass``.
    """
    drop_field_names = drop_field_names or []
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init} - set(drop_field_names)
        if init_fields != set(field_names):
            message = "field_names does not include all dataclass fields.\n"
            missing = init_fields - set(field_names)
            if missing:
                message += (f"Missing fields in `field_names`: {missing}. If you want to include these fields in "
                            "the pytree, please add them to `field_names`, otherwise please add them to "
                            "`drop_field_names`.\n")
            unexpected = set(field_names) - init_fields
            if unexpected:
                message += (f"Unexpected fields in `field_names`: {unexpected}. "
                            "Please remove these fields, or add them to `drop_field_names`.\n")
            raise ValueError(message)
    names = list(field_names)

    def flatten(obj):
        present, absent, values = [], [], []
        for name in names:
            value = getattr(obj, name)
            if value is None:
                absent.append(name)
            else:
                present.append(name)
                values.append(value)
        return values, [present, absent]

    def unflatten(values, context):
        present, absent = context
        return cls(**dict(zip(present, values, strict=True)), **dict.fromkeys(absent))

    def flatten_with_keys(obj):
        values, (present, _) = flatten(obj)
        return [(GetAttrKey(n), v) for n, v in zip(present, values, strict=True)], present

    _private_register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=flatten_with_keys)


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode(Generic[T]):
    """The context of a node registered by :func:`register_constant`: the constant itself."""
    value: T


def register_constant(cls):
    """Register ``cls`` as a pytree node without children: an instance flattens to no leaves and its spec holds
    the instance (as a :class:`ConstantNode` context), so unflattening returns it.

    Raises:
        TypeError: ``cls`` keeps ``object``'s ``__eq__``, or has no ``__hash__``.

    Source: ``torch.utils._pytree.register_constant``.
    """
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    # a class that defines __eq__ without __hash__ gets __hash__ = None
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")

    def flatten(x):
        return [], ConstantNode(x)

    def unflatten(_, context):
        return context.value

    with _NODE_REGISTRY_LOCK:
        _private_register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten)
        CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    """Whether ``cls`` was registered by :func:`register_constant`."""
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _is_constant_holder(spec):
    return isinstance(spec._context, ConstantNode)


def _retrieve_constant(spec):
    if not _is_constant_holder(spec):
        raise AssertionError("spec does not correspond to a registered constant pytree")
    return tree_unflatten([], spec)


def _register_namedtuple(cls, *, serialized_type_name):
    """Give the namedtuple class ``cls`` a serialized name, so specs holding it can be dumped and loaded."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


# ---- key entries -------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey(Generic[T]):
    """The key of a sequence element: prints as ``[idx]``; ``get(seq)`` is ``seq[idx]``."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence: Sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey(Generic[K, T]):
    """The key of a mapping entry: prints as ``[repr(key)]``; ``get(m)`` is ``m[key]``."""
    key: K

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping: Mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """An attribute step: prints as ``.name``; ``get(obj)`` is ``getattr(obj, name)``."""
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """The key path ``kp`` as text, e.g. ``[0]['a'].x``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value reached from ``obj`` by following the key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- namedtuple / structseq recognition ---------------------------------------------------------------------------
def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class (a tuple subclass with string ``_fields``, ``_make`` and ``_asdict``)."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether ``obj`` (a class or an instance) is a namedtuple class or an instance of one."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether ``obj`` is an instance of a namedtuple class."""
    return is_namedtuple_class(type(obj))


_Py_TPFLAGS_BASETYPE = 1 << 10


def is_structseq_class(cls):
    """Whether ``cls`` is a C ``PyStructSequence`` type (``os.stat_result``, ``time.struct_time``...): a direct,
    final subclass of tuple with ``n_fields``, ``n_sequence_fields`` and ``n_unnamed_fields``."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and all(isinstance(getattr(cls, a, None), int)
                    for a in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))
            and not cls.__flags__ & _Py_TPFLAGS_BASETYPE)


def is_structseq(obj):
    """Whether ``obj`` (a class or an instance) is a structseq type or an instance of one."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    """Whether ``obj`` is an instance of a structseq type."""
    return is_structseq_class(type(obj))


def _is_namedtuple_instance(tree):
    _warn_deprecated("torch.utils._pytree._is_namedtuple_instance is private and will be removed in a future "
                     "release. Please use torch.utils._pytree.is_namedtuple_instance instead.")
    return is_namedtuple_instance(tree)


# ---- built-in node types ------------------------------------------------------------------------------------------
def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    """A dict's children are its values and its context the list of its keys, both in insertion order."""
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    """Like :func:`_dict_flatten`, with each value paired with its :class:`MappingKey`."""
    values, keys = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(keys, values, strict=True)], keys


def _dict_unflatten(values, context):
    """The dict whose keys are ``context`` and values ``values`` (ValueError when their lengths differ)."""
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    # the class is the context, so two namedtuple types with equal fields still give different specs
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, cls = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(cls._fields, values, strict=True)], cls


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    if context not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
                                  "register a serializated_type_name. Please register using `_register_namedtuple`.")
    name = SUPPORTED_SERIALIZED_TYPES[context].serialized_type_name
    if name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't "
                                  "find a serializated_type_name. Please register using `_register_namedtuple`.")
    return name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} "
                                  "because we couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    values, keys = _ordereddict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(keys, values, strict=True)], keys


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values, strict=True))


_odict_flatten = _ordereddict_flatten
_odict_unflatten = _ordereddict_unflatten


def _defaultdict_flatten(d):
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values, strict=True)], context


def _defaultdict_unflatten(values, context):
    default_factory, keys = context
    return defaultdict(default_factory, _dict_unflatten(values, keys))


def _defaultdict_serialize(context):
    default_factory, keys = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__,
            "dict_context": keys}


def _defaultdict_deserialize(dumpable_context):
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    expected = {"default_factory_module", "default_factory_name", "dict_context"}
    if set(dumpable_context) != expected:
        raise AssertionError(f"dumpable_context keys must be {expected}, got {set(dumpable_context)}")
    module_name = dumpable_context["default_factory_module"]
    name = dumpable_context["default_factory_name"]
    if not isinstance(module_name, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(name, str):
        raise AssertionError("default_factory_name must be a string")
    factory = getattr(importlib.import_module(module_name), name)
    return [factory, dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_private_register_pytree_node(tuple, _tuple_flatten, _tuple_unflatten, serialized_type_name="builtins.tuple",
                              flatten_with_keys_fn=_tuple_flatten_with_keys)
_private_register_pytree_node(list, _list_flatten, _list_unflatten, serialized_type_name="builtins.list",
                              flatten_with_keys_fn=_list_flatten_with_keys)
_private_register_pytree_node(dict, _dict_flatten, _dict_unflatten, serialized_type_name="builtins.dict",
                              flatten_with_keys_fn=_dict_flatten_with_keys)
# every namedtuple class is a node; they share the key ``collections.namedtuple`` (see _get_node_type)
_private_register_pytree_node(namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
                              serialized_type_name="collections.namedtuple",
                              to_dumpable_context=_namedtuple_serialize,
                              from_dumpable_context=_namedtuple_deserialize,
                              flatten_with_keys_fn=_namedtuple_flatten_with_keys)
_private_register_pytree_node(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
                              serialized_type_name="collections.OrderedDict",
                              flatten_with_keys_fn=_ordereddict_flatten_with_keys)
_private_register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                              serialized_type_name="collections.defaultdict",
                              to_dumpable_context=_defaultdict_serialize,
                              from_dumpable_context=_defaultdict_deserialize,
                              flatten_with_keys_fn=_defaultdict_flatten_with_keys)
_private_register_pytree_node(deque, _deque_flatten, _deque_unflatten, serialized_type_name="collections.deque",
                              flatten_with_keys_fn=_deque_flatten_with_keys)

STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _get_node_type(tree):
    """The registry key of ``tree``: its type, except ``collections.namedtuple`` for every namedtuple instance
    (even one whose class was registered itself, as PyTorch does)."""
    cls = type(tree)
    return namedtuple if is_namedtuple_class(cls) else cls


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: ``is_leaf(tree)`` says so, or its node type is not registered."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


def _is_leaf(tree, is_leaf=None):
    """Deprecated alias of :func:`tree_is_leaf` (warns FutureWarning, as PyTorch 2.13 does)."""
    _warn_deprecated("torch.utils._pytree._is_leaf is private and will be removed in a future release. "
                     "Please use torch.utils._pytree.tree_is_leaf instead.")
    return tree_is_leaf(tree, is_leaf=is_leaf)


# ---- TreeSpec ----------------------------------------------------------------------------------------------------
@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """The shape of a pytree: the root's node type, its context, and one child spec per child.

    ``type`` is None for a leaf. ``num_leaves``, ``num_nodes`` (this node included) and ``num_children`` are
    computed on construction. Specs are immutable, hashable and compare by type name, context and children.
    ``TreeSpec(type, context, children_specs)`` raises AssertionError for a leaf (``type=None``) given a context
    or children. Source: ``torch.utils._pytree.TreeSpec``.
    """
    type: Any
    _context: Context
    _children: list

    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type, context, children_specs):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self):
        if self.type is None:
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(self._children) != 0:
                raise AssertionError("leaf node should not have children")
            nodes, leaves = 1, 1
        else:
            nodes = 1 + sum(c.num_nodes for c in self._children)
            leaves = sum(c.num_leaves for c in self._children)
        object.__setattr__(self, "num_nodes", nodes)
        object.__setattr__(self, "num_leaves", leaves)
        object.__setattr__(self, "num_children", len(self._children))

    def __repr__(self, indent=0):
        # the first child follows the bracket; the others go on lines of their own, indented two more spaces
        text = f"TreeSpec({self.type.__name__}, {self._context}, ["
        if self._children:
            indent += 2
            text += self._children[0].__repr__(indent)
            rest = self._children[1:]
            if rest:
                text += "," + ",".join("\n" + " " * indent + c.__repr__(indent) for c in rest)
        return text + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        # by name, so that a spec survives a reload of the module defining its type
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        node_type = self.type
        if node_type is defaultdict:
            factory, keys = self._context
            context = (factory, tuple(keys))
        elif node_type in (dict, OrderedDict):
            context = tuple(self._context)
        elif node_type is None or node_type in BUILTIN_TYPES:
            context = self._context
        elif isinstance(self._context, ConstantNode):
            context = self._context.value
        else:
            context = None  # a custom context need not be hashable; equal specs still hash equal
        return hash((node_type, context, tuple(self._children)))

    @property
    def context(self):
        """The root node's context (e.g. a dict's key list); None for a leaf."""
        return self._context

    @property
    def children_specs(self):
        """The child specs (deprecated in PyTorch 2.13 in favour of :meth:`children`; warns FutureWarning)."""
        _warn_deprecated("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                         "child, or `treespec.children()` to get all children.")
        return self._children

    def is_leaf(self):
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """A new list of the child specs."""
        return self._children.copy()

    def child(self, index):
        """The child spec at ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` that sit where this spec has leaves (``tree`` may be deeper than the spec).

        Nodes must match the spec: the same type (any of dict/OrderedDict/defaultdict may stand for another,
        with the same key set; a deque's maxlen is not compared), the same number of children and, for other
        types, the same context. Raises ValueError naming the first mismatch.
        """
        out = []
        self._flatten_up_to(tree, out)
        return out

    def _flatten_up_to(self, node, out):
        if self.is_leaf():
            out.append(node)
            return
        node_type = _get_node_type(node)
        if self.type not in BUILTIN_TYPES:
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            dict_like = self.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
            if not dict_like and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if dict_like:
                keys = self._context[1] if self.type is defaultdict else self._context
                got, expected = set(node), set(keys)
                if got != expected:
                    message = ""
                    if expected - got:
                        message += f"; missing key(s): {expected - got}"
                    if got - expected:
                        message += f"; extra key(s): {got - expected}"
                    raise ValueError(f"Node keys mismatch{message}.")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; "
                                     f"expected {self._context!r}, but got {context!r}.")
        for child, spec in zip(children, self._children, strict=True):
            spec._flatten_up_to(child, out)

    def unflatten(self, leaves):
        """The pytree of this shape holding ``leaves`` (any iterable) in order.

        Raises ValueError when the number of leaves is not ``num_leaves``."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        unflatten_fn = SUPPORTED_NODES[self.type].unflatten_fn
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a single leaf; prints as ``*``.

    Constructing one warns FutureWarning (PyTorch 2.13 deprecates the class: test ``spec.is_leaf()`` instead of
    ``isinstance(spec, LeafSpec)``), but the specs :func:`tree_flatten` builds for leaves are LeafSpec instances.
    """
    __slots__ = ()

    def __init__(self):
        _warn_deprecated("`isinstance(treespec, LeafSpec)` is deprecated, "
                         "use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.")
        self._init_leaf()

    def _init_leaf(self):
        for name, value in (("type", None), ("_context", None), ("_children", []), ("num_nodes", 1),
                            ("num_leaves", 1), ("num_children", 0)):
            object.__setattr__(self, name, value)

    def __init_subclass__(cls, **kwargs):
        _warn_deprecated("`isinstance(treespec, LeafSpec)` is deprecated, "
                         "use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.")
        super().__init_subclass__(**kwargs)

    def __repr__(self, indent=0):
        return "*"


# every leaf has the same spec, so one object serves (built without the deprecation warning)
_LEAF_SPEC = object.__new__(LeafSpec)
_LEAF_SPEC._init_leaf()


def treespec_leaf():
    """The spec of a single leaf."""
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    """A tuple spec with the given child specs (ValueError when one is not a TreeSpec)."""
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    """A dict spec mapping keys to child specs (ValueError when a value is not a TreeSpec)."""
    d = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in d.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {d!r}.")
    return TreeSpec(dict, list(d.keys()), list(d.values()))


def _is_pytreespec_instance(obj):
    return isinstance(obj, TreeSpec)


# ---- flatten / unflatten / map -------------------------------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """The leaves of ``tree`` in depth-first, left-to-right order, and its :class:`TreeSpec`.

    ``is_leaf(node) -> bool``, when given, can stop the descent at any node (that node becomes one leaf).
    Source: ``torch.utils._pytree.tree_flatten``.
    """
    leaves = []

    def walk(node):
        if tree_is_leaf(node, is_leaf=is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The pytree shaped like ``treespec`` holding ``leaves``: the inverse of :func:`tree_flatten`.

    The two arguments may be given in either order. Raises TypeError when neither is a TreeSpec and ValueError
    when the number of leaves is wrong."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """A generator over the leaves of ``tree``, in :func:`tree_flatten` order."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The list of the leaves of ``tree``."""
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    """The :class:`TreeSpec` of ``tree``."""
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def arg_tree_leaves(*args, **kwargs):
    """The leaves of all positional then keyword arguments: ``tree_leaves((args, kwargs))`` without the tuple."""
    leaves = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves


def tree_map(func, tree, *rests, is_leaf=None):
    """A new pytree shaped like ``tree`` whose leaves are ``func(leaf, *matching_parts_of_rests)``.

    Each tree in ``rests`` must have ``tree``'s structure or extend it (``tree`` is a prefix); the part of it at a
    leaf of ``tree`` is passed whole. Mismatches raise ValueError (see :meth:`TreeSpec.flatten_up_to`).

    >>> tree_map(lambda x: x + 1, {"x": 7, "y": (42, 64)})
    {'x': 8, 'y': (43, 65)}
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *columns))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on each leaf (with the matching parts of ``rests``) for its side effect; return ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    columns = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for args in zip(*columns):
        func(*args)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: ``map_only(T)(f)`` applies ``f`` to values that are instances of ``T`` (a type, a tuple of
    types, a union, or a predicate) and returns other values unchanged. TypeError for anything else."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map` of ``func`` over the leaves selected by ``type_or_types_or_pred`` (see :func:`map_only`);
    other leaves are kept as they are."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """:func:`tree_map_` of ``func`` over the leaves selected by ``type_or_types_or_pred``; returns ``tree``."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf (stops at the first failure)."""
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf (stops at the first success)."""
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf that is an instance of ``type_or_types``."""
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf that is an instance of ``type_or_types``."""
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree`` broadcast to ``treespec`` (each leaf of ``tree`` repeated over the leaves of the subtree it covers)
    and flattened, or None when ``tree`` is not a prefix of ``treespec``'s structure."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    out = []

    def spread(x, subtree):
        out.extend([x] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)

    try:
        tree_map_(spread, tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# ---- key paths -----------------------------------------------------------------------------------------------------
def _generate_key_paths(key_path, tree, is_leaf=None):
    if is_leaf and is_leaf(tree):
        yield key_path, tree
        return
    node_type = _get_node_type(tree)
    node_def = SUPPORTED_NODES.get(node_type)
    if not node_def:
        yield key_path, tree
        return
    if node_def.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    keyed_children, _ = node_def.flatten_with_keys_fn(tree)
    for key, child in keyed_children:
        yield from _generate_key_paths((*key_path, key), child, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """Like :func:`tree_flatten`, with each leaf paired with its key path: ``([(path, leaf), ...], spec)``.

    Raises ValueError when the tree holds a registered type that has no ``flatten_with_keys_fn``."""
    _, spec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    """The ``(key_path, leaf)`` pairs of ``tree``, in :func:`tree_flatten` order."""
    return list(_generate_key_paths((), tree, is_leaf))


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Like :func:`tree_map`, but ``func`` receives the leaf's key path first: ``func(path, leaf, *rest_parts)``."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    columns = list(zip(*pairs, strict=True)) + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*args) for args in zip(*columns, strict=True))


# ---- torch.fx flatten specs (the tables behind torch.fx._pytree) ---------------------------------------------------
_FX_FLATTEN_SPEC_NODES: dict = {}
_FX_FLATTEN_SPEC_EXACT_MATCH: dict = {}


def _register_pytree_flatten_spec(cls, flatten_fn_spec, flatten_fn_exact_match_spec=None):
    """``torch.fx._pytree.register_pytree_flatten_spec``: how to take ``cls`` apart following a given spec,
    ``flatten_fn_spec(node, spec) -> children`` (overwrites an earlier entry silently, as PyTorch does)."""
    _FX_FLATTEN_SPEC_NODES[cls] = flatten_fn_spec
    _FX_FLATTEN_SPEC_EXACT_MATCH[cls] = flatten_fn_exact_match_spec


def _deregister_pytree_flatten_spec(cls):
    del _FX_FLATTEN_SPEC_NODES[cls]
    del _FX_FLATTEN_SPEC_EXACT_MATCH[cls]


def _tree_flatten_spec(pytree, spec):
    """``torch.fx._pytree.tree_flatten_spec``: the leaves of ``pytree`` read the way ``spec`` says.

    Types with a flatten-spec function are taken apart by it (a dict by the spec's keys, so extra keys are
    ignored); any other node is flattened normally and must then have exactly ``spec``'s structure, else
    RuntimeError."""
    if spec.is_leaf():
        return [pytree]
    if spec.type in _FX_FLATTEN_SPEC_NODES:
        children = _FX_FLATTEN_SPEC_NODES[spec.type](pytree, spec)
        out = []
        for child, child_spec in zip(children, spec.children()):
            out += _tree_flatten_spec(child, child_spec)
        return out
    leaves, real_spec = tree_flatten(pytree)
    if spec != real_spec:
        raise RuntimeError(f"Real spec {real_spec} of object {pytree} is different from expected spec {spec}. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                           "template=bug-report.yml")
    return leaves


def _sequence_flatten_spec(d, spec):
    return [d[i] for i in range(spec.num_children)]


def _dict_flatten_spec(d, spec):
    return [d[k] for k in spec.context]


def _sized_exact_match(d, spec):
    return len(d) == spec.num_children


_register_pytree_flatten_spec(dict, _dict_flatten_spec, _sized_exact_match)
_register_pytree_flatten_spec(list, _sequence_flatten_spec, _sized_exact_match)
_register_pytree_flatten_spec(tuple, _sequence_flatten_spec, _sized_exact_match)
_register_pytree_flatten_spec(namedtuple, _sequence_flatten_spec, _sized_exact_match)


# ---- JSON serialization (protocol 1) ---------------------------------------------------------------------------------
class EnumEncoder(json.JSONEncoder):
    """JSON encoder that writes an Enum member as ``{"__enum__": true, "fqn": "module:QualName", "name": ...}``."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:{obj.__class__.__qualname__}",
                    "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    """``json.loads`` object hook undoing :class:`EnumEncoder`: imports the enum class and returns the member."""
    if "__enum__" in obj:
        module_name, _, qualname = obj["fqn"].partition(":")
        cls = importlib.import_module(module_name)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        return cls[obj["name"]]
    return obj


@dataclasses.dataclass
class _TreeSpecSchema:
    """One node of the JSON form: serialized type name (None for a leaf), dumped context, child schemas."""
    type: Optional[str]
    context: DumpableContext
    children_spec: list


class _ProtocolFn(NamedTuple):
    treespec_to_json: Callable
    json_to_treespec: Callable


_SUPPORTED_PROTOCOLS: dict = {}


def _treespec_to_json(treespec):
    if treespec.is_leaf():
        return _TreeSpecSchema(None, None, [])
    if treespec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {treespec.type} in pytree is not registered.")
    serialize_def = SUPPORTED_SERIALIZED_TYPES[treespec.type]
    if serialize_def.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(f"No registered serialization name for {treespec.type} found. Please update your "
                                  "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if serialize_def.to_dumpable_context is None:
        # the context travels as a JSON string inside the JSON document
        try:
            context = json.dumps(treespec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        context = serialize_def.to_dumpable_context(treespec._context)
    return _TreeSpecSchema(serialize_def.serialized_type_name, context,
                           [_treespec_to_json(c) for c in treespec._children])


def _json_to_treespec(schema):
    if schema["type"] is None and schema["context"] is None and len(schema["children_spec"]) == 0:
        return _LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not registered.")
    cls = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    serialize_def = SUPPORTED_SERIALIZED_TYPES[cls]
    if serialize_def.from_dumpable_context is None:
        try:
            context = json.loads(schema["context"], object_hook=enum_object_hook)
        except TypeError as e:
            raise TypeError("Unable to deserialize context. Please make the context json load-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        context = serialize_def.from_dumpable_context(schema["context"])
    return TreeSpec(cls, context, [_json_to_treespec(c) for c in schema["children_spec"]])


_SUPPORTED_PROTOCOLS[1] = _ProtocolFn(_treespec_to_json, _json_to_treespec)


def _unknown_protocol(protocol):
    return ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")


def treespec_dumps(treespec, protocol=None):
    """``treespec`` as a JSON string, ``[protocol, {"type": ..., "context": ..., "children_spec": [...]}]``.

    Every node type must have a serialized name (see :func:`register_pytree_node`) and a JSON-able context
    (or context converters). The text equals what PyTorch writes for the same spec.

    Raises:
        ValueError: unknown ``protocol`` (only 1 exists; None means 1).
        NotImplementedError: a node type without a serialized name.
        TypeError: a context json cannot encode.
        TypeError: ``treespec`` is not a TreeSpec.
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                        f"{type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    schema = _SUPPORTED_PROTOCOLS[protocol].treespec_to_json(treespec)
    return json.dumps((protocol, dataclasses.asdict(schema)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """The TreeSpec a :func:`treespec_dumps` string describes (results are cached: equal strings give the same
    object). ValueError for an unknown protocol, NotImplementedError for an unregistered type name."""
    protocol, schema = json.loads(serialized)
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise _unknown_protocol(protocol)
    return _SUPPORTED_PROTOCOLS[protocol].json_to_treespec(schema)


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"


_asterisk = _Asterisk()
del _Asterisk


def treespec_pprint(treespec):
    """The repr of the tree of this shape with every leaf shown as ``*``, e.g. ``([*, *], {'a': *})``."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))


def pytree_to_str(treespec):
    """Deprecated alias of :func:`treespec_dumps` (warns FutureWarning)."""
    _warn_deprecated("`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.")
    return treespec_dumps(treespec)


def str_to_pytree(json):
    """Deprecated alias of :func:`treespec_loads` (warns FutureWarning)."""
    _warn_deprecated("`str_to_pytree` is deprecated. Please use `treespec_loads` instead.")
    return treespec_loads(json)


# ---- torch.Size ----------------------------------------------------------------------------------------------------
# PyTorch registers torch.Size when `import torch` loads torch.fx.experimental.proxy_tensor, so every program sees
# a shape as a node of ints; it unflattens to a plain tuple (its maps may produce values Size would refuse).
from .._tensor import Size as _Size  # tinytorch.utils is imported after _tensor


def _size_flatten(size):
    return list(size), None


def _size_flatten_with_keys(size):
    return [(SequenceKey(i), v) for i, v in enumerate(size)], None


def _size_unflatten(values, context):
    return tuple(values)


_private_register_pytree_node(_Size, _size_flatten, _size_unflatten, serialized_type_name="torch.Size",
                              flatten_with_keys_fn=_size_flatten_with_keys)
