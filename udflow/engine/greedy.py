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

from typing import Callable, Iterator, Optional

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
    ) -> None:
        self._exchanges = exchanges
        self._interner = interner
        self._cost = cost
        self._rows = rows
        self._clock = clock
        self.complete = True  # False when the budget stopped the descent
        self.patience = patience
        self.considered = 0  # neighbours costed
        self._produced_by: dict[int, float] = {}

    def run(self, root: Node) -> list[Candidate]:
        """Every plan the walks passed through, the plan as written first.

        Two walks: one by (estimated cost, rows produced) from the plan as written; one by
        (rows produced, cost) - the classic heuristic of small intermediate results, which
        pushes filters down and joins the selective dimensions first - followed by a walk by
        cost from where its best plan. The cheapest plan of either is the answer (`rank`
        breaks ties of cost by rewrites, so the plans passed through are all kept: a tie
        with the plan as written is a tie, not a move)."""
        start = Candidate(root, ())
        _, by_cost = self._walk(start, self._score)
        best_by_rows, by_rows = self._walk(start, lambda t: self._score(t)[::-1])
        return by_cost + by_rows[1:] + self._walk(best_by_rows, self._score)[1][1:]

    def _walk(self, start: Candidate, score: Callable[[Node], tuple]) -> tuple[Candidate, list[Candidate]]:
        """Steepest descent on `score`, continued past a local minimum as a tabu search: the walk
        moves to the best neighbour it has not visited, even a worse one, and stops after
        `patience` moves without a new best. Rows produced (the sum over the plan's
        operators) break ties of cost: a filter moved below a broadcast join costs the same
        there (the streamed side's rows are free), but it is the step towards a place where
        fewer rows do pay. The best plan of the walk, and every plan visited."""
        current = start
        walked = [current]
        best_plan, best = current, score(start.node)
        visited = {self._interner.id_of(start.node)}
        stalled = 0
        while stalled <= self.patience:
            if self._clock is not None and self._clock.expired("improving", self.considered):
                self.complete = False
                break
            move = self._best_move(current.node, visited, score)
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

    def _score(self, tree: Node) -> tuple[float, float]:
        """(cost, rows produced), the cost rounded so that rounding differences tie."""
        return (float(f"{self._cost(tree):.9g}"), self._produced(tree))

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

    def _best_move(self, plan: Node, visited: set, score: Callable[[Node], tuple]) -> Optional[tuple]:
        """The best neighbour of `plan` not visited yet: (score, tree, exchange)."""
        best = None
        for path, subtree in _subtrees(plan, ()):
            for exchange in self._exchanges(subtree):
                tree = self._replace(plan, path, exchange.after)
                if self._interner.id_of(tree) in visited:
                    continue
                value = score(tree)
                self.considered += 1
                if best is None or value < best[0]:
                    best = (value, tree, exchange)
        return best

    def _replace(self, node: Node, path: tuple[int, ...], new: Node) -> Node:
        if not path:
            return new
        inputs = list(node.inputs)
        inputs[path[0]] = self._replace(inputs[path[0]], path[1:], new)
        return self._interner.rebuild(node, tuple(inputs))


def _subtrees(node: Node, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Node]]:
    """Every subtree with an operator at its root, with the input positions leading to it."""
    if node.inputs:
        yield path, node
    for i, child in enumerate(node.inputs):
        yield from _subtrees(child, path + (i,))
