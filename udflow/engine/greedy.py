"""Greedy improvement, for plan spaces too large for the group search (auto mode's last resort).

Starting from the plan as written, apply the one exchange, anywhere in the plan,
that lowers the estimated cost the most (steepest descent), and repeat until no
exchange lowers it or the budget runs out. Each step is one of the RuleBook's
exchanges, so every plan it passes through is valid, and the chain of
certificates leads from the plan as written to it, as in full enumeration.

This is a heuristic, like Postgres's genetic optimizer or DuckDB's greedy join
order beyond their limits: it stops in a local minimum, e.g. a join order that
pays only after two exchanges. Its cost per step is one question per new subtree
(the ones on the path of the last change) and one costing per neighbour.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterator, Optional

from udflow.engine.budget import Clock
from udflow.engine.memo import ExchangeMemo, Interner
from udflow.engine.search import Candidate
from udflow.plan import Node

IMPROVEMENT = 1e-9  # relative: a smaller change is rounding, not a better plan


class Descent:
    """Steepest descent over the plans reachable by one exchange at a time."""

    def __init__(
        self,
        exchanges: ExchangeMemo,
        interner: Interner,
        cost: Callable[[Node], float],
        rows: Callable[[Node], float],
        clock: Optional[Clock] = None,
        patience: int = 8,
        interface: Optional[Callable[[Node], Hashable]] = None,
    ) -> None:
        """`interface` (`CostModel.interface`): what an operator's estimate reads of its input
        besides its cost; with it, a neighbour is costed only up to the first operator whose
        interface the exchange leaves unchanged (see `_neighbour`)."""
        self._exchanges = exchanges
        self._interner = interner
        self._cost = cost
        self._rows = rows
        self._clock = clock
        self._interface = interface
        self.complete = True  # False when the budget stopped the descent
        self.patience = patience
        self.considered = 0  # neighbours costed
        self._produced_by: dict[int, float] = {}
        self._interfaces: dict[int, Hashable] = {}

    def run(self, root: Node) -> list[Candidate]:
        """Every plan the walks passed through, the plan as written first.

        Two walks: one by (estimated cost, rows produced) from the plan as written; one by
        (rows produced, cost) - the classic heuristic of small intermediate results, which
        pushes filters down and joins the selective dimensions first - followed by a walk by
        cost from where its best plan. The cheapest plan of either is the answer (`rank`
        breaks ties of cost by rewrites, so the plans passed through are all kept: a tie
        with the plan as written is a tie, not a move)."""
        start = Candidate(root, ())
        _, by_cost = self._walk(start, _by_cost)
        best_by_rows, by_rows = self._walk(start, _by_rows)
        return by_cost + by_rows[1:] + self._walk(best_by_rows, _by_cost)[1][1:]

    def _walk(self, start: Candidate, order: Callable[[float, float], tuple]) -> tuple[Candidate, list[Candidate]]:
        """Steepest descent on `order(cost, rows produced)`, continued past a local minimum as a
        tabu search: the walk moves to the best neighbour it has not visited, even a worse one,
        and stops after `patience` moves without a new best. Rows produced (the sum over the
        plan's operators) break ties of cost: a filter moved below a broadcast join costs the
        same there (the streamed side's rows are free), but it is the step towards a place
        where fewer rows do pay. The best plan of the walk, and every plan visited."""
        current = start
        walked = [current]
        best_plan, best = current, order(*self._measure(start.node))
        visited = {self._interner.id_of(start.node)}
        stalled = 0
        while stalled <= self.patience:
            if self._clock is not None and self._clock.expired("improving", self.considered):
                self.complete = False
                break
            move = self._best_move(current.node, visited, order)
            if move is None:
                break
            value, tree, exchange = move
            visited.add(self._interner.id_of(tree))
            current = Candidate(tree, current.chain + (exchange,))
            walked.append(current)
            if value < best:
                best, best_plan, stalled = value, current, 0
            else:
                stalled += 1
        return best_plan, walked

    def _measure(self, tree: Node) -> tuple[float, float]:
        return self._cost(tree), self._produced(tree)

    def _produced(self, tree: Node) -> float:
        """Rows produced by the plan's operators (not its sources), memoized per interned
        subtree: a neighbour shares all but the path above its exchange with known plans."""
        key = self._interner.id_of(tree)
        found = self._produced_by.get(key)
        if found is None:
            found = 0.0
            if tree.inputs:
                found = self._rows(tree) + sum(self._produced(c) for c in tree.inputs)
            self._produced_by[key] = found
        return found

    def _best_move(self, plan: Node, visited: set, order: Callable[[float, float], tuple]) -> Optional[tuple]:
        """The best neighbour of `plan` not visited yet: (its order, tree, exchange). A neighbour's
        tree is built only when it would be the best so far (to see whether it was visited)."""
        best = None
        measured = self._measure(plan)
        for path, subtree in _subtrees(plan, ()):
            for exchange in self._exchanges(subtree):
                value = order(*self._neighbour(plan, measured, path, subtree, exchange.after))
                self.considered += 1
                if best is not None and not value < best[0]:
                    continue
                tree = self._replace(plan, path, exchange.after)
                if self._interner.id_of(tree) in visited:
                    continue
                best = (value, tree, exchange)
        return best

    def _neighbour(self, plan: Node, measured: tuple[float, float], path: tuple[int, ...],
                   old: Node, new: Node) -> tuple[float, float]:
        """(cost, rows produced) of `plan` with its subtree `old` at `path` replaced by `new`.

        The operators above the exchange are rebuilt and costed from the bottom up only until
        one has the same interface as the operator it replaces: from there up every estimate
        is the plan's own (they read of their input only its interface, the substructure
        `engine/space.py` states), so the neighbour's cost is the plan's, minus the replaced
        subtree's, plus the new one's. Exchanging two joins of a star, or a filter across a
        join, usually stops right there instead of costing every operator up to the root."""
        if self._interface is None:
            return self._measure(self._replace(plan, path, new))
        ancestors = [plan]
        for i in path[:-1]:
            ancestors.append(ancestors[-1].inputs[i])
        level = len(path)  # the depth of `old` and `new`
        while level and self._interface_of(new) != self._interface_of(old):
            parent = ancestors[level - 1]
            inputs = list(parent.inputs)
            inputs[path[level - 1]] = new
            old, new = parent, self._interner.rebuild(parent, tuple(inputs))
            level -= 1
        if not level:
            return self._measure(new)  # the whole neighbour was rebuilt
        cost, produced = measured
        return (cost - self._cost(old) + self._cost(new),
                produced - self._produced(old) + self._produced(new))

    def _interface_of(self, node: Node) -> Hashable:
        key = self._interner.id_of(node)
        found = self._interfaces.get(key)
        if found is None:
            found = self._interfaces[key] = self._interface(node)
        return found

    def _replace(self, node: Node, path: tuple[int, ...], new: Node) -> Node:
        if not path:
            return new
        inputs = list(node.inputs)
        inputs[path[0]] = self._replace(inputs[path[0]], path[1:], new)
        return self._interner.rebuild(node, tuple(inputs))


def _rounded(cost: float) -> float:
    """The cost to 9 significant digits: rounding differences tie (and rows break the tie)."""
    return float(f"{cost:.9g}")


def _by_cost(cost: float, produced: float) -> tuple[float, float]:
    return _rounded(cost), produced


def _by_rows(cost: float, produced: float) -> tuple[float, float]:
    return produced, _rounded(cost)


def _subtrees(node: Node, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Node]]:
    """Every subtree with an operator at its root, with the input positions leading to it."""
    if node.inputs:
        yield path, node
    for i, child in enumerate(node.inputs):
        yield from _subtrees(child, path + (i,))
