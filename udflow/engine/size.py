"""How large is a flow's plan space? An estimate from its join graph, before any search.

The memo of the group search holds roughly one group per connected set of
sources (the inputs a join subtree can combine without a Cartesian product) and
per set of movable operators applied below:

    groups ~ csg(join graph) * 2 ** (unary operators)

`csg` is the number of connected subgraphs of the join graph (sources as
vertices, an edge for each source of a key field on one side of a Match or
CoGroup and each source of a key field on the other; one edge between the
first sources of the two sides of a Cross), counted with DPccp's `EnumerateCsg` (Moerkotte and Neumann 2006),
which yields each connected set once, and stops at `cap`. A chain of n sources
has n(n+1)/2 connected sets, a star with k points 2^k + k: the star, not the
number of joins, is what makes a plan space large.

The estimate bounds the memo from above on the flows we measured (the 12-join
snowflake: 404 estimated, 250 groups). The group search's *time* follows the
multi-expressions more than the groups: each is a join of two connected sets
(a csg-cmp pair of DPccp, `join_pairs`) with some of the movable operators
below it, so `estimated_work` = join pairs * 2 ** (unary operators), which
`optimize`'s auto mode bounds too (a chain of 20 sources holds 231 connected
sets but 1,540 pairs, a star of 8 points 264 and 1,024).
"""

from __future__ import annotations

from typing import Iterator

from udflow.plan import CoGroup, Cross, Match, Node, Source


def join_graph(root: Node) -> dict[int, set[int]]:
    """Sources (numbered in walk order) -> their neighbours in the join graph."""
    sources = [n for n in root.walk() if isinstance(n, Source)]
    number = {id(s): i for i, s in enumerate(sources)}
    graph: dict[int, set[int]] = {i: set() for i in range(len(sources))}
    for node in root.walk():
        if isinstance(node, (Match, CoGroup)):
            left = _suppliers(node.inputs[0], node.left_key, number)
            right = _suppliers(node.inputs[1], node.right_key, number)
        elif isinstance(node, Cross) or len(node.inputs) == 2:
            # no key: one edge between the two sides (their first sources), as if it were a join
            left = {min(number[id(s)] for s in node.inputs[0].walk() if isinstance(s, Source))}
            right = {min(number[id(s)] for s in node.inputs[1].walk() if isinstance(s, Source))}
        else:
            continue
        for a in left:
            for b in right:
                graph[a].add(b)
                graph[b].add(a)
    return graph


def _suppliers(side: Node, key, number: dict[int, int]) -> set[int]:
    """The sources under `side` that have a field of `key`; all of them if none has (a computed key)."""
    under = [s for s in side.walk() if isinstance(s, Source)]
    having = {number[id(s)] for s in under if set(key) & set(s.fields)}
    return having or {number[id(s)] for s in under}


def connected_subgraphs(graph: dict[int, set[int]], cap: int) -> int:
    """The number of connected vertex sets of `graph`, counting stops above `cap`."""
    count = 0
    for _ in _csg(graph):
        count += 1
        if count > cap:
            break
    return count


def _csg(graph: dict[int, set[int]]) -> Iterator[frozenset]:
    """EnumerateCsg: each connected set once, grown from its smallest vertex by neighbours above it."""
    for v in sorted(graph, reverse=True):
        start = frozenset({v})
        yield start
        yield from _grow(graph, start, frozenset(u for u in graph if u <= v))


def _grow(graph: dict[int, set[int]], subset: frozenset, excluded: frozenset) -> Iterator[frozenset]:
    frontier = sorted(set().union(*(graph[v] for v in subset)) - excluded)
    for extra in _nonempty_subsets(frontier):  # generated twice rather than kept: 2^20 for a star
        yield subset | extra
    excluded = excluded | frozenset(frontier)
    for extra in _nonempty_subsets(frontier):
        yield from _grow(graph, subset | extra, excluded)


def _nonempty_subsets(items: list) -> Iterator[frozenset]:
    for mask in range(1, 1 << len(items)):
        yield frozenset(x for i, x in enumerate(items) if mask >> i & 1)


def join_pairs(graph: dict[int, set[int]], cap: int) -> int:
    """The number of csg-cmp pairs of `graph` (DPccp's EnumerateCmp for each connected set):
    the unordered pairs of disjoint connected sets joined by an edge, i.e. the joins a
    dynamic programme over connected subgraphs considers; counting stops above `cap`. A
    chain of n sources has (n^3 - n) / 6, a star with k points k * 2^(k-1)."""
    count = 0
    for s1 in _csg(graph):
        excluded = frozenset(u for u in graph if u <= min(s1)) | s1
        neighbours = sorted(set().union(*(graph[v] for v in s1)) - excluded, reverse=True)
        for v in neighbours:
            count += 1  # {v}, then the connected sets grown from it that s1 may join
            for _ in _grow(graph, frozenset({v}), excluded | frozenset(u for u in neighbours if u <= v)):
                count += 1
                if count > cap:
                    return count
        if count > cap:
            return count
    return count


def estimated_work(root: Node, cap: int = 100_000) -> int:
    """The group search's work: join pairs times the placements of the unary operators (each
    multi-expression it explores and costs is a join of two connected sets with some movable
    operators applied below); above `cap` it only says "more than `cap`"."""
    placements = 2 ** sum(1 for n in root.walk() if len(n.inputs) == 1)
    return join_pairs(join_graph(root), cap // placements + 1) * placements


def estimated_groups(root: Node, cap: int = 100_000) -> int:
    """The estimate above: connected source sets times the placements of the unary operators;
    above `cap` it only says "more than `cap`" (a star of 20 points has a million sets)."""
    placements = 2 ** sum(1 for n in root.walk() if len(n.inputs) == 1)
    return connected_subgraphs(join_graph(root), cap // placements + 1) * placements
