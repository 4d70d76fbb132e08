"""Full enumeration over the memo's groups, without materialising every plan.

The plans of a group are partitioned into *classes* by their interface
(`CostModel.interface`: everything the estimate of an operator above reads of a
plan besides its cost: rows, width, fields, partitioning, decoding, distinct
counts of the keys above). The cost model then has optimal substructure: for
an operator `op` over plans p1..pk of its input groups,

    cost(op(p1, ..., pk))  = cost(p1) + ... + cost(pk) + local(op, class(p1), ..., class(pk))
    class(op(p1, ..., pk)) = step(op, class(p1), ..., class(pk))

so one representative per (group, class), its cheapest plan, is enough to know
`local` and `step` of every *combination* of a multi-expression with one class
of each input (a `Combo`). From the combos, per group and class, bottom-up:

    count   = sum over the combos into the class of the product of the inputs' counts
    best    = min over the combos into the class of local + the inputs' classes' best
    plans   every plan's cost, generated depth first (`stream`): nothing is kept but
            the path being generated, so memory grows with the groups, not the plans

`ranked` keeps the cheapest `keep` plans of that stream in a heap, counts the
plans cheaper than the plan as written (its rank), and builds trees for the kept
plans only. Every plan is counted once: after `GroupSearch.explore` no two
multi-expressions are the same operator over the same groups, so distinct paths
are distinct trees.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from itertools import chain, product
from typing import Callable, Hashable, Iterator, NamedTuple, Optional

from udflow.engine.budget import Clock
from udflow.engine.groups import GroupSearch, MExpr, _chain_of
from udflow.engine.search import Candidate
from udflow.engine.ties import RESOLUTION, threshold
from udflow.plan import Node

SMALL = 512  # plans of a class kept as a list while streaming (larger classes are generated anew)


@dataclass(frozen=True)
class Combo:
    """A multi-expression over one class of plans of each of its input groups."""

    mexpr: MExpr
    inputs: tuple[tuple[int, int], ...]  # (group, class index) per input
    local: float  # the operator's own cost over inputs of these classes
    best: float  # the cheapest plan of this combination


@dataclass
class PlanClass:
    """The plans of one group with one interface: their cheapest plan, how they are built, how many."""

    interface: Hashable
    tree: Node  # the cheapest plan of the class
    cost: float
    best: Combo
    combos: list[Combo] = field(default_factory=list)
    count: int = 0


class Ranking(NamedTuple):
    """The outcome of `PlanSpace.ranked`."""

    kept: list[tuple[float, Candidate]]  # the cheapest plans, cheapest first (streamed cost)
    cheaper: int  # plans estimated better than the plan as written (engine/ties.py)
    seen: int  # plans enumerated
    complete: bool  # False when the budget stopped the enumeration


class PlanSpace:
    """The classes of every group reachable from the top one; see the module docstring."""

    def __init__(
        self,
        groups: GroupSearch,
        cost: Callable[[Node], float],
        interface: Callable[[Node], Hashable],
        clock: Optional[Clock] = None,
    ) -> None:
        self.groups = groups
        self._cost = cost
        self._interface = interface
        self._clock = clock
        self._classes: dict[int, list[PlanClass]] = {}
        self._cheapest: dict[tuple[int, int], Candidate] = {}
        self._small: dict[tuple[int, int], list] = {}
        self.combos = 0  # combinations costed (one tree each)

    # -- classes ---------------------------------------------------------------------

    def classes(self, g: int) -> list[PlanClass]:
        g = self.groups.find(g)
        found = self._classes.get(g)
        if found is None:
            found = self._classes[g] = self._build(g)
        return found

    def _build(self, g: int) -> list[PlanClass]:
        classes: list[PlanClass] = []
        at: dict[Hashable, int] = {}
        rebuild = self.groups.interner.rebuild
        for m in self.groups.groups[g].mexprs:
            inputs = [(self.groups.find(c), self.classes(c)) for c in m.children]
            for choice in product(*(range(len(of)) for _, of in inputs)):
                kids = [inputs[i][1][k] for i, k in enumerate(choice)]
                tree = rebuild(m.op, tuple(k.tree for k in kids)) if kids else m.op
                total = self._cost(tree)
                combo = Combo(m, tuple((inputs[i][0], k) for i, k in enumerate(choice)),
                              total - sum(k.cost for k in kids), total)
                self.combos += 1
                key = self._interface(tree)
                index = at.get(key)
                if index is None:
                    index = at[key] = len(classes)
                    classes.append(PlanClass(key, tree, total, combo))
                cls = classes[index]
                cls.combos.append(combo)
                count = 1
                for k in kids:
                    count *= k.count
                cls.count += count
                if total < cls.cost:
                    cls.tree, cls.cost, cls.best = tree, total, combo
        return classes

    def count(self, g: int) -> int:
        """The number of plans of group `g`."""
        return sum(c.count for c in self.classes(g))

    # -- the cheapest plans ----------------------------------------------------------------

    def cheapest(self, g: int) -> Candidate:
        """The cheapest plan of group `g`, with the certificates that derived it."""
        classes = self.classes(g)
        index = min(range(len(classes)), key=lambda i: classes[i].cost)
        return self._candidate(self.groups.find(g), index)

    def cheapest_per(self, g: int, key: Callable[[Combo, PlanClass], Hashable]) -> list[Candidate]:
        """The cheapest plan of group `g` per `key(combo, its class)`, cheapest first."""
        g = self.groups.find(g)
        best: dict[Hashable, Combo] = {}
        for cls in self.classes(g):
            for combo in cls.combos:
                slot = key(combo, cls)
                if slot not in best or combo.best < best[slot].best:
                    best[slot] = combo
        return [self._candidate_of(c) for c in sorted(best.values(), key=lambda c: c.best)]

    def _candidate(self, g: int, index: int) -> Candidate:
        found = self._cheapest.get((g, index))
        if found is None:
            found = self._cheapest[(g, index)] = self._candidate_of(self._classes[g][index].best)
        return found

    def _candidate_of(self, combo: Combo) -> Candidate:
        kids = tuple(self._candidate(g, k) for g, k in combo.inputs)
        tree = self.groups.interner.rebuild(combo.mexpr.op, tuple(k.node for k in kids)) if kids else combo.mexpr.op
        return Candidate(tree, _chain_of(combo.mexpr.provenance, kids))

    # -- every plan ------------------------------------------------------------------------

    def stream(self, g: int) -> Iterator[tuple[float, tuple]]:
        """(cost, path) of every plan of group `g`; a path is (combo, the inputs' paths)."""
        g = self.groups.find(g)
        return chain.from_iterable(self._plans(g, k) for k in range(len(self.classes(g))))

    def _plans(self, g: int, index: int):
        """The plans of one class: a list kept when the class is small (at most SMALL plans, so
        memory stays a constant per class), generated again on every use otherwise."""
        cls = self._classes[g][index]
        if cls.count > SMALL:
            return self._generate(cls)
        found = self._small.get((g, index))
        if found is None:
            found = self._small[(g, index)] = list(self._generate(cls))
        return found

    def _generate(self, cls: PlanClass) -> Iterator[tuple[float, tuple]]:
        for combo in cls.combos:
            if not combo.inputs:
                yield combo.local, (combo, ())
            elif len(combo.inputs) == 1:
                g, index = combo.inputs[0]
                local = combo.local
                for below, path in self._plans(g, index):
                    yield local + below, (combo, (path,))
            else:
                yield from self._combine(combo, 0, combo.local, ())

    def _combine(self, combo: Combo, i: int, cost: float, paths: tuple) -> Iterator[tuple[float, tuple]]:
        if i == len(combo.inputs):
            yield cost, (combo, paths)
            return
        g, index = combo.inputs[i]
        for below, path in self._plans(g, index):
            yield from self._combine(combo, i + 1, cost + below, paths + (path,))

    def plan(self, path: tuple) -> Candidate:
        """The tree (and certificates) a path of `stream` stands for."""
        combo, paths = path
        kids = tuple(self.plan(p) for p in paths)
        tree = self.groups.interner.rebuild(combo.mexpr.op, tuple(k.node for k in kids)) if kids else combo.mexpr.op
        return Candidate(tree, _chain_of(combo.mexpr.provenance, kids))

    def ranked(self, g: int, keep: int, original_cost: float, resolution: float = RESOLUTION) -> Ranking:
        """The `keep` cheapest plans of group `g` (ties: first enumerated first), and how many
        plans are estimated better than `original_cost` (beyond `resolution`, `engine/ties.py`),
        in one pass over every plan."""
        better = threshold(original_cost, resolution)
        heap: list[tuple[float, int, tuple]] = []  # a max-heap on (cost, order): the worst kept on top
        cheaper = seen = 0
        complete = True
        for cost, path in self.stream(g):
            seen += 1
            if cost < better:
                cheaper += 1
            if len(heap) < keep:
                heapq.heappush(heap, (-cost, -seen, path))
            elif cost < -heap[0][0]:
                heapq.heapreplace(heap, (-cost, -seen, path))
            if seen % 4096 == 0 and self._clock is not None and self._clock.expired("enumerating", seen):
                complete = False
                break
        kept = sorted(((-c, -s), p) for c, s, p in heap)
        return Ranking([(cost, self.plan(p)) for (cost, _), p in kept], cheaper, seen, complete)
