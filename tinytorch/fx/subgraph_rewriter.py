"""``torch.fx.subgraph_rewriter``: replace every match of a pattern subgraph with a replacement subgraph.

``replace_pattern(gm, pattern, replacement)`` traces ``pattern`` and ``replacement`` (functions or modules
with the same inputs), finds the non-overlapping places in ``gm.graph`` where the pattern's nodes occur with the
same ops, targets and literal arguments (its inputs match any value; its intermediate values must not be used
outside the match), splices in a copy of the replacement wired to the matched inputs, and erases the matched
nodes. Written after PyTorch's ``torch/fx/subgraph_rewriter.py`` and ``passes/utils/matcher_utils.py``.
"""
from typing import Dict, List, NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from ._symbolic_trace import symbolic_trace

__all__ = ["Match", "ReplacedPatterns", "replace_pattern"]


class Match(NamedTuple):
    """One replaced occurrence: ``anchor`` the pattern node the match was grown from (the pattern's returned
    value), ``nodes_map`` pattern node -> graph node."""
    anchor: Node
    nodes_map: Dict[Node, Node]


class ReplacedPatterns(NamedTuple):
    anchor: Node
    nodes_map: Dict[Node, Node]
    replacements: List[Node]


class _InternalMatch:
    def __init__(self, anchors):
        self.anchors = anchors
        self.nodes_map = {}
        self.placeholder_nodes = []
        self.returning_nodes = []


class _SubgraphMatcher:
    """Finds the occurrences of ``pattern`` (a Graph with placeholders and one output) in a graph."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        outputs = [n for n in pattern.nodes if n.op == "output"]
        if len(outputs) != 1:
            raise AssertionError("the pattern graph must have exactly one output node")
        self.pattern_returning_nodes = outputs[0].all_input_nodes
        self.pattern_anchors = self.pattern_returning_nodes

    def _nodes_are_equal(self, pn, gn):
        if pn.op == "placeholder":
            return True
        if pn.op != gn.op:
            return False
        if pn.op == "output":
            return True
        return pn.target == gn.target

    def _match_literals(self, pn, gn):
        return type(pn) is type(gn) and pn == gn

    def _match_args(self, a1, a2, match):
        if len(a1) != len(a2):
            return False
        for x, y in zip(a1, a2):
            if isinstance(x, Node) and isinstance(y, Node):
                ok = self._match_nodes(x, y, match)
            elif isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
                ok = self._match_args(x, y, match)
            else:
                ok = self._match_literals(x, y)
            if not ok:
                return False
        return True

    def _match_nodes(self, pn, gn, match):
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if pn.op != "placeholder" and gn in match.nodes_map.values():
            return False  # a graph node stands for one pattern node only
        if not self._nodes_are_equal(pn, gn):
            return False
        saved = dict(match.nodes_map)
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        ok = (self._match_args(pn.args, gn.args, match)
              and list(pn.kwargs.keys()) == list(gn.kwargs.keys())
              and self._match_args(list(pn.kwargs.values()), list(gn.kwargs.values()), match))
        if not ok:
            match.nodes_map = saved
        return ok

    def _is_contained(self, nodes_map):
        # a value computed inside the match but read outside it would be lost by the replacement
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            for user in gn.users:
                if user not in lookup:
                    return False
        return True

    def match(self, graph):
        candidates = [[n for n in graph.nodes if self._nodes_are_equal(a, n)] for a in self.pattern_anchors]
        matches = []

        def backtrack(i, match):
            if i == len(self.pattern_anchors):
                m = _InternalMatch(list(self.pattern_anchors))
                m.nodes_map = dict(match.nodes_map)
                m.placeholder_nodes = [m.nodes_map[pn] for pn in self.pattern_placeholder_nodes
                                       if pn in m.nodes_map]
                m.returning_nodes = [m.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(m)
                return
            for gn in candidates[i]:
                saved = dict(match.nodes_map)
                if self._match_nodes(self.pattern_anchors[i], gn, match):
                    backtrack(i + 1, match)
                match.nodes_map = saved

        backtrack(0, _InternalMatch(self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)
                   and len(m.placeholder_nodes) == len(self.pattern_placeholder_nodes)]
        kept, used = [], set()
        for m in matches:
            inner = {gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")}
            if inner & used:
                continue
            used |= inner
            kept.append(m)
        return kept


def replace_pattern(gm, pattern, replacement):
    """Replace each non-overlapping match of ``pattern`` in ``gm.graph`` by ``replacement`` (both callables or
    modules, traced with ``symbolic_trace``; or Graphs), recompile ``gm``, and return the list of ``Match``es
    (anchor and pattern->graph node map), in graph order."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def _graph_of(obj):
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    return symbolic_trace(obj).graph


def _replace_pattern(gm, pattern, replacement):
    original_graph = gm.graph
    pattern_graph = _graph_of(pattern)
    replacement_graph = _graph_of(replacement)
    matches = _SubgraphMatcher(pattern_graph).match(original_graph)
    changed = {}
    out = []
    for match in matches:
        rep_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(rep_placeholders):
            raise AssertionError("the pattern and the replacement must take the same inputs")
        val_map = {}
        for rn, gn in zip(rep_placeholders, match.placeholder_nodes):
            val_map[rn] = changed.get(gn, gn) if isinstance(gn, Node) else gn
        users = set()
        for n in match.returning_nodes:
            users.update(n.users)
        first_user = None
        if len(users) == 1:
            first_user = next(iter(users))
        elif users:
            first_user = next(n for n in original_graph.nodes if n in users)
        if first_user is None:
            last = max(match.returning_nodes)
            insert_point = last.next
        else:
            insert_point = first_user
        with original_graph.inserting_before(insert_point):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        replacements = [v for v in val_map.values() if v not in match.placeholder_nodes]
        if len(match.returning_nodes) != len(copied):
            raise AssertionError("the pattern and the replacement must return the same number of values")
        for gn, cn in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(cn)
            changed[gn] = cn
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                original_graph.erase_node(match.nodes_map[node])
        out.append(ReplacedPatterns(anchor=match.anchors[0],
                                    nodes_map=match.nodes_map, replacements=replacements))
    gm.recompile()
    from ..nn import Module
    if isinstance(replacement, Module):
        _copy_replacement_attributes(gm, replacement)
    return out


def _copy_replacement_attributes(gm, replacement):
    from .graph_module import _copy_attr
    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            obj = gm
            for atom in node.target.split("."):
                obj = getattr(obj, atom, None)
                if obj is None:
                    break
            if obj is None:
                _copy_attr(replacement, gm, node.target)
