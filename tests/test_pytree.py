"""tinytorch.utils._pytree against torch.utils._pytree: the same trees give the same leaves, specs (repr, counts,
equality), key paths, maps, JSON strings, warnings and errors (type and message).

Leaves are ints, strings and None so that both libraries see identical values; tensors appear only in the
script run under the import swap. Each library has its own registry, so a custom node type is registered in
both (and removed from both afterwards)."""
import copy
import dataclasses
import enum
import os
import pickle
import subprocess
import sys
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple

import pytest

from conftest import torch

import tinytorch
import tinytorch.utils._pytree as tp
import torch.fx._pytree as torch_fx_pytree
import torch.utils._pytree as rp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Point = namedtuple("Point", ["x", "y"])
Triple = namedtuple("Triple", "a b c")


class Pair:
    """A custom container: two children, a label as context."""

    def __init__(self, first, second, label="p"):
        self.first, self.second, self.label = first, second, label

    def __eq__(self, other):
        return (type(other) is Pair and (self.first, self.second, self.label)
                == (other.first, other.second, other.label))

    def __repr__(self):
        return f"Pair({self.first!r}, {self.second!r}, {self.label!r})"


def _pair_flatten(p):
    return [p.first, p.second], p.label


def _pair_unflatten(values, label):
    return Pair(*values, label=label)


def _pair_flatten_with_keys(p):
    return [(tp.GetAttrKey("first"), p.first), (tp.GetAttrKey("second"), p.second)], p.label


def _pair_flatten_with_keys_torch(p):
    return [(rp.GetAttrKey("first"), p.first), (rp.GetAttrKey("second"), p.second)], p.label


class Color(enum.Enum):
    RED = 1
    BLUE = 2


class NoKeys:
    """A container registered without flatten_with_keys_fn."""

    def __init__(self, v):
        self.v = v


@pytest.fixture(scope="module", autouse=True)
def custom_nodes():
    """Register the custom types in both registries for this module, and take them out again after it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tp.register_pytree_node(Pair, _pair_flatten, _pair_unflatten, serialized_type_name="test_pytree.Pair",
                                flatten_with_keys_fn=_pair_flatten_with_keys)
        rp.register_pytree_node(Pair, _pair_flatten, _pair_unflatten, serialized_type_name="test_pytree.Pair",
                                flatten_with_keys_fn=_pair_flatten_with_keys_torch)
        for m in (tp, rp):
            m.register_pytree_node(NoKeys, lambda n: ([n.v], None), lambda vs, c: NoKeys(vs[0]))
            m._register_namedtuple(Point, serialized_type_name="test_pytree.Point")
    yield
    for cls in (Pair, NoKeys, Point):
        tp._deregister_pytree_node(cls)
        # torch's _deregister_pytree_node fails on a second type without a serialized name; clear it by hand
        rp.SUPPORTED_NODES.pop(cls)
        rp.SUPPORTED_SERIALIZED_TYPES.pop(cls)
    assert not {Pair, NoKeys, Point} & set(tp.SUPPORTED_NODES)


def _trees():
    dd = defaultdict(list)
    dd["k"] = [1, 2]
    dd[3] = "v"
    return [
        1, "leaf", None, [], (), {}, [1, 2, 3], (1, (2, (3, (4,)))), {"b": 1, "a": 2, "c": [3, 4]},
        {2: "x", 1: "y"},  # insertion order, not sorted
        [1, [2, [3, [4, [5]]]], ()], ({"a": (1, None)}, [None, {}]),
        Point(1, [2, 3]), [Point(Point(1, 2), None), Triple("a", "b", ("c",))],
        OrderedDict([("z", 1), ("a", [2])]), dd, deque([1, (2, 3)]), deque([1, 2], maxlen=4),
        {"pair": Pair(1, [2, 3], label="lab"), "nested": Pair(Pair(1, 2), (3,))},
        [OrderedDict(a=Point(1, 2)), {"d": deque([{"e": 5}])}],
    ]


TREES = _trees()
IDS = [f"t{i}" for i in range(len(TREES))]


def _same_structure(a, b):
    """Rebuilt trees equal the original, container types included (== alone lets a list equal a deque? no, but
    it lets OrderedDict equal dict)."""
    assert type(a) is type(b)
    if isinstance(a, (list, tuple, deque)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_structure(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same_structure(a[k], b[k])
    else:
        assert a == b


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_flatten_matches_torch(tree):
    leaves, spec = tp.tree_flatten(tree)
    t_leaves, t_spec = rp.tree_flatten(tree)
    assert leaves == t_leaves
    assert repr(spec) == repr(t_spec)
    assert str(spec) == str(t_spec)
    for attr in ("num_leaves", "num_nodes", "num_children"):
        assert getattr(spec, attr) == getattr(t_spec, attr), attr
    assert spec.is_leaf() == t_spec.is_leaf()
    assert spec.context == t_spec.context
    assert [repr(c) for c in spec.children()] == [repr(c) for c in t_spec.children()]
    assert tp.tree_leaves(tree) == rp.tree_leaves(tree) == list(tp.tree_iter(tree))
    assert repr(tp.tree_structure(tree)) == repr(t_spec)
    assert tp.treespec_pprint(spec) == rp.treespec_pprint(t_spec)
    assert tp.tree_is_leaf(tree) == rp.tree_is_leaf(tree)
    assert tp._get_node_type(tree) is rp._get_node_type(tree)


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_unflatten_round_trip(tree):
    leaves, spec = tp.tree_flatten(tree)
    rebuilt = tp.tree_unflatten(leaves, spec)
    _same_structure(rebuilt, rp.tree_unflatten(*rp.tree_flatten(tree)))
    _same_structure(rebuilt, tree)
    _same_structure(tp.tree_unflatten(spec, leaves), tree)  # either argument order, as torch allows
    _same_structure(spec.unflatten(iter(leaves)), tree)  # any iterable of leaves
    if isinstance(tree, deque):
        assert rebuilt.maxlen == tree.maxlen
    if isinstance(tree, defaultdict):
        assert rebuilt.default_factory is tree.default_factory


@pytest.mark.parametrize("tree", TREES, ids=IDS)
def test_key_paths_match_torch(tree):
    ours = tp.tree_leaves_with_path(tree)
    theirs = rp.tree_leaves_with_path(tree)
    assert [(tp.keystr(p), v) for p, v in ours] == [(rp.keystr(p), v) for p, v in theirs]
    assert [[repr(k) for k in p] for p, _ in ours] == [[repr(k) for k in p] for p, _ in theirs]
    pairs, spec = tp.tree_flatten_with_path(tree)
    assert pairs == ours and repr(spec) == repr(rp.tree_structure(tree))
    for path, leaf in ours:
        assert tp.key_get(tree, path) is leaf
    mapped = tp.tree_map_with_path(lambda p, v: (tp.keystr(p), v), tree)
    t_mapped = rp.tree_map_with_path(lambda p, v: (rp.keystr(p), v), tree)
    _same_structure(mapped, t_mapped)


def test_key_entries():
    for ours, theirs, arg in ((tp.SequenceKey, rp.SequenceKey, 3), (tp.MappingKey, rp.MappingKey, "k"),
                              (tp.MappingKey, rp.MappingKey, (1, "a")), (tp.GetAttrKey, rp.GetAttrKey, "x")):
        a, b = ours(arg), theirs(arg)
        assert (str(a), repr(a)) == (str(b), repr(b))
        assert a == ours(arg) and hash(a) == hash(ours(arg)) and a != ours("other")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(a, dataclasses.fields(a)[0].name, 0)
    assert tp.keystr((tp.SequenceKey(0), tp.MappingKey("a"), tp.GetAttrKey("b"))) == "[0]['a'].b"
    assert tp.key_get({"a": [Point(1, 2)]}, (tp.MappingKey("a"), tp.SequenceKey(0), tp.GetAttrKey("y"))) == 2


def test_is_leaf_argument():
    tree = {"a": (1, 2), "b": [(3,), 4]}
    pred = lambda x: isinstance(x, tuple)  # noqa: E731
    leaves, spec = tp.tree_flatten(tree, is_leaf=pred)
    t_leaves, t_spec = rp.tree_flatten(tree, is_leaf=pred)
    assert leaves == t_leaves == [(1, 2), (3,), 4]
    assert repr(spec) == repr(t_spec)
    assert tp.tree_leaves(tree, is_leaf=pred) == t_leaves
    size = lambda x: len(x) if isinstance(x, tuple) else -x  # noqa: E731
    assert tp.tree_map(size, tree, is_leaf=pred) == rp.tree_map(size, tree, is_leaf=pred) == \
        {"a": 2, "b": [1, -4]}
    assert [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(tree, pred)] == \
        [rp.keystr(p) for p, _ in rp.tree_leaves_with_path(tree, pred)]
    assert tp.tree_is_leaf([1], is_leaf=lambda x: True) and not tp.tree_is_leaf([1])


def test_tree_map_family_matches_torch():
    tree = {"a": [1, 2.5, "s"], "b": (None, 3), "c": Point(4, [5])}
    for fn in (lambda x: x * 2 if isinstance(x, (int, float)) else x, lambda x: type(x).__name__):
        _same_structure(tp.tree_map(fn, tree), rp.tree_map(fn, tree))
    # several trees: the first gives the structure, the others may be deeper there
    other = {"a": [10, [20, 21], 30], "b": ((1,), 2), "c": Point({"q": 1}, [6])}
    f = lambda x, y: (x, y)  # noqa: E731
    _same_structure(tp.tree_map(f, tree, other), rp.tree_map(f, tree, other))
    # dict kinds stand in for one another; keys are matched whatever their order
    assert tp.tree_map(lambda x, y: x + y, {"a": 1, "b": 2}, OrderedDict(b=20, a=10)) == {"a": 11, "b": 22}
    assert tp.tree_map(lambda x, y: x + y, deque([1], maxlen=2), deque([5])) == deque([6], maxlen=2)
    for ours, theirs in ((tp.tree_map_only, rp.tree_map_only), ):
        for sel in (int, (int, float), int | str, lambda x: x == 3):
            _same_structure(ours(sel, lambda x: [x], tree), theirs(sel, lambda x: [x], tree))
    seen, t_seen = [], []
    assert tp.tree_map_(seen.append, tree) is tree
    rp.tree_map_(t_seen.append, tree)
    assert seen == t_seen
    seen2 = []
    assert tp.tree_map_(lambda x, y: seen2.append((x, y)), [1, 2], [[3], 4]) == [1, 2]
    assert seen2 == [(1, [3]), (2, 4)]
    seen, t_seen = [], []
    assert tp.tree_map_only_(int, seen.append, tree) is tree
    rp.tree_map_only_(int, t_seen.append, tree)
    assert seen == t_seen
    for pred in (lambda x: x is not None, lambda x: isinstance(x, int), lambda x: x == "s"):
        assert tp.tree_all(pred, tree) == rp.tree_all(pred, tree)
        assert tp.tree_any(pred, tree) == rp.tree_any(pred, tree)
        for typ in (int, str, (float, str), bytes):
            assert tp.tree_all_only(typ, pred, tree) == rp.tree_all_only(typ, pred, tree)
            assert tp.tree_any_only(typ, pred, tree) == rp.tree_any_only(typ, pred, tree)
    assert tp.arg_tree_leaves(1, [2, (3,)], k={"a": 4}) == rp.arg_tree_leaves(1, [2, (3,)], k={"a": 4})
    _same_structure(tp.tree_map_with_path(lambda p, x, y: (tp.keystr(p), x, y), [1, {"a": 2}], [3, {"a": [4]}]),
                    rp.tree_map_with_path(lambda p, x, y: (rp.keystr(p), x, y), [1, {"a": 2}], [3, {"a": [4]}]))


def _raises_like(ours, theirs, *args, **kwargs):
    """Both calls raise; same exception type and message. Returns our exception."""
    with pytest.raises(Exception) as t_err:
        theirs(*args, **kwargs)
    with pytest.raises(type(t_err.value)) as err:
        ours(*args, **kwargs)
    assert type(err.value) is type(t_err.value)
    assert str(err.value) == str(t_err.value)
    return err.value


def test_unflatten_errors_match_torch():
    tree = {"a": [1, 2], "b": (3,)}
    spec, t_spec = tp.tree_structure(tree), rp.tree_structure(tree)
    for leaves in ([1, 2], [1, 2, 3, 4], []):
        _raises_like(lambda: spec.unflatten(leaves), lambda: t_spec.unflatten(leaves))
        _raises_like(lambda: tp.tree_unflatten(leaves, spec), lambda: rp.tree_unflatten(leaves, t_spec))
    _raises_like(tp.tree_unflatten, rp.tree_unflatten, [1, 2], "not a spec")
    _raises_like(tp.tree_unflatten, rp.tree_unflatten, [1, 2], None)


@pytest.mark.parametrize("tree,other", [
    ([1, 2], (1, 2)),  # type mismatch
    ([1, 2], [1, 2, 3]),  # arity
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),  # keys
    ({"a": 1}, {"a": 1, "b": 2}),
    (Point(1, 2), Triple(1, 2, 3)),  # namedtuple context
    (Point(1, 2), (1, 2)),
    (OrderedDict(a=1), [1]),
    (deque([1]), [1]),
    (Pair(1, 2, "x"), Pair(1, 2, "y")),  # custom context
    (Pair(1, 2), [1, 2]),  # custom type
    ([Pair(1, 2)], [(1, 2)]),
    ({"x": [1, {"y": 2}]}, {"x": [1, {"z": 2}]}),
])
def test_mismatched_structures_raise_as_torch(tree, other):
    _raises_like(lambda: tp.tree_map(lambda a, b: a, tree, other), lambda: rp.tree_map(lambda a, b: a, tree, other))
    _raises_like(lambda: tp.tree_structure(tree).flatten_up_to(other),
                 lambda: rp.tree_structure(tree).flatten_up_to(other))


def test_register_pytree_node_errors_match_torch():
    class Box:
        def __init__(self, v):
            self.v = v

    def flat(b):
        return [b.v], None

    def unflat(vs, c):
        return Box(vs[0])

    try:
        for m in (tp, rp):
            m.register_pytree_node(Box, flat, unflat)
        before = (dict(tp.SUPPORTED_NODES), dict(tp.SUPPORTED_SERIALIZED_TYPES))
        _raises_like(tp.register_pytree_node, rp.register_pytree_node, Box, flat, unflat)
        for builtin in (dict, list, tuple, namedtuple, OrderedDict, defaultdict, deque):
            _raises_like(tp.register_pytree_node, rp.register_pytree_node, builtin, flat, unflat)
        assert (dict(tp.SUPPORTED_NODES), dict(tp.SUPPORTED_SERIALIZED_TYPES)) == before
        assert tp.tree_leaves([Box(1), Box([2, 3])]) == [1, 2, 3]
        assert tp.SUPPORTED_NODES[Box] == tp.NodeDef(Box, flat, unflat, None)
        # the deprecated private spelling overwrites, with a warning, as torch's does
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            tp._register_pytree_node(Box, lambda b: ([b.v, b.v], None), unflat)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            rp._register_pytree_node(Box, lambda b: ([b.v, b.v], None), unflat)
        assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in theirs]
        assert tp.tree_leaves(Box(7)) == rp.tree_leaves(Box(7)) == [7, 7]
    finally:
        for m in (tp, rp):
            m._deregister_pytree_node(Box)
    assert Box not in tp.SUPPORTED_NODES and tp.tree_is_leaf(Box(1))

    class Half:
        pass

    err = _raises_like(tp.register_pytree_node, rp.register_pytree_node, Half, flat, unflat,
                       to_dumpable_context=lambda c: c)
    del rp.SUPPORTED_NODES[Half]  # torch registers before it checks; ours leaves the registry alone
    assert "must be None or registered" in str(err)
    assert Half not in tp.SUPPORTED_NODES and Half not in tp.SUPPORTED_SERIALIZED_TYPES


def test_builtin_registry_matches_torch():
    builtins = {tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque}
    assert builtins <= set(tp.SUPPORTED_NODES)
    for cls in builtins:
        ours, theirs = tp.SUPPORTED_SERIALIZED_TYPES[cls], rp.SUPPORTED_SERIALIZED_TYPES[cls]
        assert ours.serialized_type_name == theirs.serialized_type_name
        assert tp.SERIALIZED_TYPE_TO_PYTHON_TYPE[ours.serialized_type_name] is cls
    assert tp.BUILTIN_TYPES == rp.BUILTIN_TYPES and tp.STANDARD_DICT_TYPES == rp.STANDARD_DICT_TYPES
    assert tp.NodeDef._fields == rp.NodeDef._fields
    for name in ("_dict_flatten", "_dict_flatten_with_keys", "_list_flatten", "_tuple_flatten",
                 "_ordereddict_flatten", "_defaultdict_flatten", "_deque_flatten", "_namedtuple_flatten"):
        tree = {"_dict": {"a": 1, "b": [2]}, "_list": [1, 2], "_tuple": (1, 2),
                "_ordereddict": OrderedDict(x=1), "_defaultdict": defaultdict(int, {"k": 1}),
                "_deque": deque([1], maxlen=3), "_namedtuple": Point(1, 2)}[name.split("_flatten")[0]]
        ours, theirs = getattr(tp, name)(tree), getattr(rp, name)(tree)
        if name.endswith("with_keys"):
            assert [(str(k), v) for k, v in ours[0]] == [(str(k), v) for k, v in theirs[0]]
            assert ours[1] == theirs[1]
        else:
            assert (list(ours[0]), ours[1]) == (list(theirs[0]), theirs[1])
    assert tp._dict_unflatten([1, 2], ["b", "a"]) == rp._dict_unflatten([1, 2], ["b", "a"])
    _raises_like(tp._dict_unflatten, rp._dict_unflatten, [1], ["a", "b"])


def test_namedtuple_and_structseq_predicates():
    import os as _os
    import time
    for obj in (Point, Point(1, 2), (1, 2), tuple, time.localtime(), type(time.localtime()), _os.stat("."), 3):
        for name in ("is_namedtuple", "is_structseq"):
            assert getattr(tp, name)(obj) == getattr(rp, name)(obj), (name, obj)
        if not isinstance(obj, type):
            for name in ("is_namedtuple_instance", "is_structseq_instance"):
                assert getattr(tp, name)(obj) == getattr(rp, name)(obj), (name, obj)
        else:
            for name in ("is_namedtuple_class", "is_structseq_class"):
                assert getattr(tp, name)(obj) == getattr(rp, name)(obj), (name, obj)


def test_treespec_equality_hash_and_immutability():
    a, b = tp.tree_structure({"a": [1, 2], "b": Point(1, 2)}), tp.tree_structure({"a": [3, 4], "b": Point(5, 6)})
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != tp.tree_structure({"b": Point(1, 2), "a": [1, 2]})  # key order is part of the spec
    assert a != tp.tree_structure({"a": [1, 2, 3], "b": Point(1, 2)})
    assert tp.tree_structure([Pair(1, 2, "x")]) != tp.tree_structure([Pair(1, 2, "y")])
    assert len({a, b, tp.tree_structure([1]), tp.tree_structure([2])}) == 2
    assert hash(tp.tree_structure(defaultdict(list, {"a": 1}))) == hash(tp.tree_structure(defaultdict(list, {"a": 2})))
    assert hash(tp.tree_structure(Pair(1, 2))) == hash(tp.tree_structure(Pair(3, 4)))
    assert (a == 5) is False and (a != "x") is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.type = list
    assert [f.name for f in dataclasses.fields(tp.TreeSpec)] == [f.name for f in dataclasses.fields(rp.TreeSpec)]
    for spec in (a, tp.tree_structure(deque([1, (2,)], maxlen=3)), tp.tree_structure(5)):
        for clone in (copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
            assert clone == spec and repr(clone) == repr(spec) and clone.num_leaves == spec.num_leaves
    leaf = tp.tree_structure(1)
    assert isinstance(leaf, tp.LeafSpec) and leaf.is_leaf() and repr(leaf) == "*"
    assert leaf is tp.treespec_leaf()
    # a leaf spec built by hand compares as torch's does
    manual = tp.TreeSpec(tuple, None, [leaf, leaf])
    assert manual == tp.tree_structure((1, 2)) and rp.TreeSpec(tuple, None, [rp.treespec_leaf()] * 2) == \
        rp.tree_structure((1, 2))
    assert (tp.TreeSpec(None, None, []) == leaf) == (rp.TreeSpec(None, None, []) == rp.treespec_leaf())
    _raises_like(tp.TreeSpec, rp.TreeSpec, None, 1, [])
    _raises_like(tp.TreeSpec, rp.TreeSpec, None, None, [leaf])
    assert repr(tp.treespec_tuple([leaf, tp.treespec_dict(a=leaf)])) == \
        repr(rp.treespec_tuple([rp.treespec_leaf(), rp.treespec_dict(a=rp.treespec_leaf())]))
    _raises_like(tp.treespec_tuple, rp.treespec_tuple, [1])
    _raises_like(tp.treespec_dict, rp.treespec_dict, {"a": 1})
    assert a.child(0) == a.children()[0] and a.children() is not a.children()
    assert tp.PyTreeSpec is tp.TreeSpec


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in caught]


def test_deprecations_warn_as_torch():
    spec, t_spec = tp.tree_structure([1, [2]]), rp.tree_structure([1, [2]])
    cases = [
        (lambda: tp.LeafSpec(), lambda: rp.LeafSpec()),
        (lambda: spec.children_specs, lambda: t_spec.children_specs),
        (lambda: tp._is_leaf([1]), lambda: rp._is_leaf([1])),
        (lambda: tp._is_leaf(1), lambda: rp._is_leaf(1)),
        (lambda: tp._is_namedtuple_instance(Point(1, 2)), lambda: rp._is_namedtuple_instance(Point(1, 2))),
        (lambda: tp.pytree_to_str(spec), lambda: rp.pytree_to_str(t_spec)),
    ]
    for ours, theirs in cases:
        (r, w), (t_r, t_w) = _warnings_of(ours), _warnings_of(theirs)
        assert w == t_w and w and w[0][0] is FutureWarning
        if isinstance(r, list):
            assert [repr(x) for x in r] == [repr(x) for x in t_r]
        elif not isinstance(r, tp.TreeSpec):
            assert r == t_r
    leaf, _ = _warnings_of(tp.LeafSpec)
    assert leaf == tp.treespec_leaf() and leaf.num_leaves == 1 and repr(leaf) == "*"
    # tree_flatten itself never warns
    assert _warnings_of(lambda: tp.tree_flatten([1, (2,), {"a": None}]))[1] == []


def test_lightning_style_flatten():
    """Lightning builds specs itself from SUPPORTED_NODES, _get_node_type, LeafSpec() and TreeSpec(...)."""
    def flatten(mod, tree):
        node_type = mod._get_node_type(tree)
        if node_type not in mod.SUPPORTED_NODES or all(
                isinstance(c, (int, str)) for c in mod.SUPPORTED_NODES[node_type].flatten_fn(tree)[0]):
            return [tree], mod.LeafSpec()
        children, context = mod.SUPPORTED_NODES[node_type].flatten_fn(tree)
        out, specs = [], []
        for c in children:
            flat, s = flatten(mod, c)
            out += flat
            specs.append(s)
        return out, mod.TreeSpec(node_type, context, specs)

    tree = {"a": [1, 2], "b": [[3], {"c": (4, 5)}], "d": Point([6], 7)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        leaves, spec = flatten(tp, tree)
        t_leaves, t_spec = flatten(rp, tree)
    assert leaves == t_leaves and repr(spec) == repr(t_spec)
    _same_structure(tp.tree_unflatten([x for x in leaves], spec), rp.tree_unflatten(t_leaves, t_spec))


JSON_TREES = [
    1, None, [], {}, [1, "a", None], (1, (2, 3)), {"b": [1, 2], "a": (3,)}, {1: "x", 2: "y"},
    OrderedDict([("z", 1), ("a", [2, 3])]), defaultdict(list, {"k": 1, "j": [2]}), defaultdict(int),
    deque([1, 2]), deque([1], maxlen=5), [Point(1, (2, 3))], {"p": Pair(1, [2], "lab")},
    {Color.RED: 1},  # an Enum in a context
    [{"a": OrderedDict(b=deque([(1,)]))}, defaultdict(dict, {"x": {"y": 2}})],
]


@pytest.mark.parametrize("tree", JSON_TREES, ids=[f"j{i}" for i in range(len(JSON_TREES))])
def test_treespec_dumps_matches_torch_both_ways(tree):
    spec, t_spec = tp.tree_structure(tree), rp.tree_structure(tree)
    text, t_text = tp.treespec_dumps(spec), rp.treespec_dumps(t_spec)
    assert text == t_text
    assert tp.treespec_dumps(spec, protocol=1) == text
    # what we write, torch reads back to its own spec; what torch writes, we read back to ours
    assert rp.treespec_loads(text) == t_spec
    loaded = tp.treespec_loads(t_text)
    assert loaded == spec and repr(loaded) == repr(spec)
    _same_structure(tp.tree_unflatten(tp.tree_leaves(tree), loaded), tree)


def test_treespec_serialization_errors_match_torch():
    spec, t_spec = tp.tree_structure([1]), rp.tree_structure([1])
    for protocol in (0, 2, "1"):
        _raises_like(lambda: tp.treespec_dumps(spec, protocol), lambda: rp.treespec_dumps(t_spec, protocol))
    _raises_like(tp.treespec_loads, rp.treespec_loads, '[7, {"type": null, "context": null, "children_spec": []}]')
    _raises_like(tp.treespec_loads, rp.treespec_loads,
                 '[1, {"type": "no.such.Type", "context": "null", "children_spec": []}]')
    unnamed = Triple(1, 2, 3)  # a namedtuple class without a serialized name
    _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(unnamed)),
                 lambda: rp.treespec_dumps(rp.tree_structure(unnamed)))
    _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(NoKeys(1))),
                 lambda: rp.treespec_dumps(rp.tree_structure(NoKeys(1))))
    bad = {object(): 1}  # a context json cannot encode
    err = _raises_like(lambda: tp.treespec_dumps(tp.tree_structure(bad)),
                       lambda: rp.treespec_dumps(rp.tree_structure(bad)))
    assert isinstance(err.__cause__, TypeError)
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec"):
        tp.treespec_dumps([1])
    assert tp.treespec_loads(tp.treespec_dumps(spec)) is tp.treespec_loads(tp.treespec_dumps(spec))  # cached


def test_key_paths_need_flatten_with_keys_fn():
    _raises_like(tp.tree_leaves_with_path, rp.tree_leaves_with_path, [NoKeys(1)])
    _raises_like(tp.tree_flatten_with_path, rp.tree_flatten_with_path, {"a": NoKeys(1)})
    assert tp.tree_leaves([NoKeys([1, 2])]) == [1, 2]


def test_map_only_rejects_non_types():
    _raises_like(lambda: tp.tree_map_only(3, str, [1]), lambda: rp.tree_map_only(3, str, [1]))
    inc = tp.map_only(int)(lambda x: x + 1)
    assert (inc(1), inc("a")) == (2, "a")


def test_register_dataclass_and_constant_match_torch():
    @dataclasses.dataclass
    class Cfg:
        a: int
        b: object = None
        c: str = "z"

    @dataclasses.dataclass(frozen=True)
    class Const:
        name: str

    class Plain:
        def __init__(self, u, v):
            self.u, self.v = u, v

    try:
        for m in (tp, rp):
            m.register_dataclass(Cfg, serialized_type_name="test_pytree.Cfg")
            m.register_constant(Const)
        tree = [Cfg(1, None, "q"), Cfg([2, 3], Const("k")), Const("m")]
        leaves, spec = tp.tree_flatten(tree)
        t_leaves, t_spec = rp.tree_flatten(tree)
        assert leaves == t_leaves and repr(spec) == repr(t_spec) and spec.num_leaves == t_spec.num_leaves
        assert [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(tree)] == \
            [rp.keystr(p) for p, _ in rp.tree_leaves_with_path(tree)]
        assert tp.tree_unflatten(leaves, spec) == tree
        assert tp.is_constant_class(Const) and not tp.is_constant_class(Cfg)
        assert tp._retrieve_constant(spec.child(2)) == Const("m")
        _raises_like(tp.register_dataclass, rp.register_dataclass, Plain)
        _raises_like(tp.register_dataclass, rp.register_dataclass, Cfg, field_names=["a", "x"])

        class NoEq:
            pass

        class NoHash:
            def __eq__(self, other):
                return True

        _raises_like(tp.register_constant, rp.register_constant, NoEq)
        _raises_like(tp.register_constant, rp.register_constant, NoHash)
    finally:
        for m in (tp, rp):
            for cls in (Cfg, Const):
                if cls in m.SUPPORTED_NODES:
                    m._deregister_pytree_node(cls)
    assert not tp.is_constant_class(Const)


def test_broadcast_to_and_flatten_matches_torch():
    spec, t_spec = tp.tree_structure([1, (2, 3), {"a": 4}]), rp.tree_structure([1, (2, 3), {"a": 4}])
    for prefix in (0, [0, 1, 2], [0, (1, 2), {"a": 3}], [0, 1], (0, 1, 2), [0, [1, 2], 3]):
        assert tp._broadcast_to_and_flatten(prefix, spec) == rp._broadcast_to_and_flatten(prefix, t_spec)


def test_fx_flatten_spec_matches_torch():
    """The tables behind torch.fx._pytree (register_pytree_flatten_spec / tree_flatten_spec)."""
    tree = {"a": [1, 2], "b": (3, Point(4, 5))}
    spec, t_spec = tp.tree_structure(tree), rp.tree_structure(tree)
    bigger = {"a": [1, 2, 99], "b": (3, Point(4, 5)), "extra": 0}  # flatten_spec reads only what the spec names
    for t in (tree, bigger):
        assert tp._tree_flatten_spec(t, spec) == torch_fx_pytree.tree_flatten_spec(t, t_spec)
    for t in ([Pair(1, 2, "y")], [OrderedDict(a=1)]):
        _raises_like(lambda: tp._tree_flatten_spec(t, tp.tree_structure([Pair(0, 0, "x")])),
                     lambda: torch_fx_pytree.tree_flatten_spec(t, rp.tree_structure([Pair(0, 0, "x")])))
    try:
        tp._register_pytree_flatten_spec(Pair, lambda p, s: [p.second, p.first])
        assert tp._tree_flatten_spec(Pair(1, [2, 3]), tp.tree_structure(Pair([0, 0], 1))) == [2, 3, 1]
    finally:
        tp._deregister_pytree_flatten_spec(Pair)
    assert Pair not in tp._FX_FLATTEN_SPEC_NODES


def test_reachable_from_tinytorch_and_signatures():
    import inspect
    assert tinytorch.utils._pytree is tp
    for name in ("tree_flatten", "tree_unflatten", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
                 "tree_all", "tree_any", "tree_all_only", "tree_any_only", "tree_leaves", "tree_structure",
                 "tree_iter", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
                 "key_get", "register_pytree_node", "_register_pytree_node", "register_dataclass",
                 "treespec_dumps", "treespec_loads", "treespec_pprint", "arg_tree_leaves", "tree_is_leaf",
                 "_is_leaf", "_get_node_type", "map_only"):
        ours, theirs = inspect.signature(getattr(tp, name)), inspect.signature(getattr(rp, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
    assert set(rp.__all__) == set(tp.__all__)
    for name in ("PyTree", "Context", "SUPPORTED_NODES", "NodeDef", "LeafSpec", "TreeSpec", "SequenceKey",
                 "MappingKey", "GetAttrKey", "FlattenFn", "UnflattenFn", "KeyPath", "KeyEntry"):
        assert hasattr(tp, name)


def test_under_the_swap_torch_utils_pytree_is_tinytorch_s(tmp_path):
    """A script that uses ``torch.utils._pytree`` with tensors as leaves prints the same under tinytorch.run as
    under PyTorch."""
    script = tmp_path / "pytree_script.py"
    script.write_text(r'''
import torch
from collections import OrderedDict


class Holder:
    def __init__(self, items, tag):
        self.items, self.tag = items, tag


torch.utils._pytree.register_pytree_node(
    Holder, lambda h: (list(h.items), h.tag), lambda vs, tag: Holder(list(vs), tag),
    serialized_type_name="script.Holder",
    flatten_with_keys_fn=lambda h: ([(torch.utils._pytree.SequenceKey(i), v) for i, v in enumerate(h.items)], h.tag))
try:
    torch.utils._pytree.register_pytree_node(Holder, lambda h: ([], None), lambda vs, c: None)
except ValueError as e:
    print("ValueError", "already registered as pytree node" in str(e))
import torch.utils._pytree as pytree

tree = {"w": torch.ones(2, 3), "h": Holder([torch.arange(3), 5], "t"), "o": OrderedDict(b=[torch.zeros(1)])}
leaves, spec = pytree.tree_flatten(tree)
print([type(x).__name__ for x in leaves], spec.num_leaves)
print(spec)
doubled = pytree.tree_map_only(torch.Tensor, lambda t: (t * 2).tolist(), tree)
print(doubled["w"], doubled["h"].items, doubled["o"])
print([(pytree.keystr(p), type(v).__name__) for p, v in pytree.tree_leaves_with_path(tree)])
print(pytree.treespec_dumps(spec))
print(pytree.tree_any_only(torch.Tensor, lambda t: t.sum().item() > 5, tree))
back = pytree.tree_unflatten(leaves, pytree.treespec_loads(pytree.treespec_dumps(spec)))
print(back["h"].tag, back["w"].shape)
''')
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")

    def run(args):
        r = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout

    ours = run(["-m", "tinytorch.run", str(script)])
    assert ours == run([str(script)])
    assert "ValueError True" in ours


def test_deregistering_types_without_serialized_names():
    """Types registered without a serialized name share a placeholder name; taking out one keeps the others
    registered and the second removal works (PyTorch's raises KeyError there)."""
    class A:
        pass

    class B:
        pass

    for cls in (A, B):
        tp.register_pytree_node(cls, lambda x: ([], None), lambda vs, c, cls=cls: cls())
    tp._deregister_pytree_node(A)
    assert B in tp.SUPPORTED_NODES and A not in tp.SUPPORTED_NODES
    tp._deregister_pytree_node(B)
    assert B not in tp.SUPPORTED_NODES and B not in tp.SUPPORTED_SERIALIZED_TYPES
    with pytest.raises(KeyError):
        tp._deregister_pytree_node(B)


def test_transformers_model_output_under_the_swap(tmp_path):
    """transformers registers every ModelOutput subclass with torch.utils._pytree (serialized_type_name=,
    flatten_with_keys_fn=_dict_flatten_with_keys): under tinytorch.run its outputs flatten, map, unflatten and
    serialize exactly as under PyTorch."""
    script = tmp_path / "model_output.py"
    script.write_text(r'''
from dataclasses import dataclass
from typing import Optional

import torch
import torch.utils._pytree as pytree
from transformers.utils import ModelOutput


@dataclass
class Out(ModelOutput):
    logits: Optional[torch.Tensor] = None
    loss: Optional[torch.Tensor] = None
    hidden: Optional[tuple] = None


o = Out(logits=torch.ones(2), hidden=(torch.zeros(1), torch.full((2,), 2.0)))
leaves, spec = pytree.tree_flatten({"out": o, "n": 3})
print(len(leaves), spec.num_leaves, spec)
print([pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path(o)])
r = pytree.tree_unflatten([x * 3 for x in leaves], spec)
print(type(r["out"]).__name__, r["out"].logits.tolist(), [h.tolist() for h in r["out"].hidden], r["n"])
print(pytree.treespec_dumps(spec))
print(pytree.treespec_loads(pytree.treespec_dumps(spec)) == spec)
print(pytree.tree_map_only(torch.Tensor, lambda t: t.shape[0], o).to_tuple())
''')
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")

    def run(args):
        r = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        return r.stdout

    ours = run(["-m", "tinytorch.run", str(script)])
    assert ours == run([str(script)])
    assert "TreeSpec(Out, ['logits', 'hidden']" in ours


def test_size_is_a_node_as_in_torch():
    """``import torch`` registers torch.Size (it flattens to its ints and unflattens to a plain tuple)."""
    tree, t_tree = [tinytorch.Size([2, 3]), {"s": tinytorch.Size([])}], [torch.Size([2, 3]), {"s": torch.Size([])}]
    leaves, spec = tp.tree_flatten(tree)
    t_leaves, t_spec = rp.tree_flatten(t_tree)
    assert leaves == t_leaves == [2, 3] and repr(spec) == repr(t_spec)
    assert tp.treespec_dumps(spec) == rp.treespec_dumps(t_spec)
    assert [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(tree)] == \
        [rp.keystr(p) for p, _ in rp.tree_leaves_with_path(t_tree)]
    mapped, t_mapped = tp.tree_map(lambda x: x * 2, tree), rp.tree_map(lambda x: x * 2, t_tree)
    assert mapped == t_mapped and type(mapped[0]) is type(t_mapped[0]) is tuple
    assert tp.tree_leaves(tinytorch.ones(2, 3).shape) == [2, 3]
