"""Plan enumeration: the paper's Algorithm 1 (section 6), extended to trees.

Algorithm 1 enumerates, for a flow D with root r, the alternatives of D minus
its root, puts r back on top of each, and for every root s of those
alternatives that r may exchange with, pushes r below s and recurses. With
binary operators the same idea reads as a closure computed per subtree, with
a memo table keyed by the subtree:

    Alts(Source)            = { Source }
    Alts(r(D1, ..., Dk))    = the smallest set that contains r(D1, ..., Dk) and is
                              closed under
        (child)  T = r(..., Ci, ...)  ->  r(..., C', ...)  for C' in Alts(Ci)
        (root)   T                    ->  T'               for every exchange
                                                            RuleBook.exchanges(T)

Every exchange of the RuleBook rewrites one subtree (an operator and one of its
direct inputs: unary/unary, unary into or out of a binary operator's input,
binary/binary reassociation), so any sequence of valid pairwise exchanges
applied anywhere inside D ends in Alts(D): an exchange strictly inside input i
is a member of Alts(Ci) (induction on size), one at the root is the (root)
step. Conversely every member is reached by such a sequence, which the search
records as the chain of certificates that produced it.

Algorithm 1's "enumerate each root candidate only once" (its lines 16, 22, 23)
becomes: the (child) step runs once per *context* (the root operator and its
other inputs) and input class, not once per tree.

This is the exact form of the search: it asks the RuleBook about every tree
it meets. `udflow.engine.groups` gives the same plans with far fewer
questions, and the pruned search; this module is what it is tested against.
"""

from __future__ import annotations

from collections import abc, deque
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from udflow.engine.memo import ExchangeMemo, Interner
from udflow.plan import Node, Source

Chain = tuple  # tuple of exchanges (`rules.Exchange`), oldest first


class CertificateChain(abc.Sequence):
    """The certificates of a chain of exchanges, built on first access: a search meets
    thousands of exchanges, a user reads the certificates of a few plans."""

    __slots__ = ("_chain", "_certificates")

    def __init__(self, chain: Chain) -> None:
        self._chain = tuple(chain)
        self._certificates = None

    def _resolve(self) -> tuple:
        if self._certificates is None:
            self._certificates = tuple(getattr(x, "certificate", x) for x in self._chain)
        return self._certificates

    def __len__(self) -> int:
        return len(self._chain)

    def __getitem__(self, i):
        return self._resolve()[i]

    def __iter__(self):
        return iter(self._resolve())

    def __bool__(self) -> bool:
        return bool(self._chain)

    def __eq__(self, other) -> bool:
        if isinstance(other, (CertificateChain, tuple, list)):
            return self._resolve() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._resolve())

    def __repr__(self) -> str:
        return repr(self._resolve())


@dataclass(frozen=True)
class Candidate:
    """One alternative of a subtree and the exchanges that produced it."""

    node: Node
    chain: Chain


class Search:
    """Algorithm 1 with its memo table; `exchanges(node)` is `RuleBook.exchanges`."""

    def __init__(
        self,
        exchanges: Callable[[Node], Sequence],
        *,
        interner: Optional[Interner] = None,
    ) -> None:
        self.interner = interner or Interner()
        self._memo: dict[int, list[Candidate]] = {}
        self._exchanges_of = ExchangeMemo(exchanges, self.interner)

    def alternatives(self, node: Node) -> list[Candidate]:
        """Alts(node): every reachable reordering, the node itself first."""
        key = self.interner.id_of(node)
        found = self._memo.get(key)
        if found is None:
            found = [Candidate(node, ())] if isinstance(node, Source) else self._closure(node)
            self._memo[key] = found
        return found

    # -- the closure of one memo entry ------------------------------------------

    def _closure(self, start: Node) -> list[Candidate]:
        intern = self.interner.id_of
        kept: dict[int, Candidate] = {}
        covered: dict[tuple, set[int]] = {}
        queue: deque[Candidate] = deque()

        def offer(node: Node, chain: Chain) -> None:
            node_id = intern(node)
            if node_id not in kept:
                kept[node_id] = Candidate(node, chain)
                queue.append(kept[node_id])

        offer(start, ())
        while queue:
            candidate = queue.popleft()
            tree, chain = candidate.node, candidate.chain
            # (child) step: replace one input by each of its alternatives, once per context
            for position, child in enumerate(tree.inputs):
                child_id = intern(child)
                context = (
                    self.interner.operator_of(tree),
                    position,
                    tuple(intern(c) for i, c in enumerate(tree.inputs) if i != position),
                )
                done = covered.setdefault(context, set())
                if child_id in done:
                    continue
                alternatives = self.alternatives(child)
                done.update(intern(a.node) for a in alternatives)
                inputs = list(tree.inputs)
                for alt in alternatives:
                    if alt.node is child:
                        continue
                    inputs[position] = alt.node
                    offer(self.interner.rebuild(tree, tuple(inputs)), chain + alt.chain)
            # (root) step: exchange the root with one of its inputs
            for exchange in self._exchanges_of(tree):
                offer(exchange.after, chain + (exchange,))
        return list(kept.values())

    @property
    def exchange_calls(self) -> int:
        return self._exchanges_of.calls

    @property
    def exchange_seconds(self) -> float:
        return self._exchanges_of.seconds
