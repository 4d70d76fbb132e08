"""The memo as equivalence classes (Cascades-style groups), for fast full and pruned search.

`search.Search` computes Alts(D) per concrete subtree and asks the RuleBook
about every tree it meets. Here the memo holds *groups*: sets of subtrees known
to compute the same bag, each subtree written as a multi-expression

    m = op(g1, ..., gk)        an operator over child groups

so that `op` over *any* member of g1..gk belongs to m's group. A valid
exchange is a bag-preserving rewrite, so its `after` tree joins the group of
its `before` tree, and substituting one member of a group for another is
sound whichever derivation found it (bag equality is symmetric).

The RuleBook is asked once per (multi-expression, input position, root of that
input): `op` over representatives of its child groups, with one child's root
chosen among that child group's multi-expressions, which is what an exchange
looks at (an operator and the root of one of its inputs; the paper's
"at least one plan for each possible root node s of a sub-flow"). A group that
gains a multi-expression re-triggers its parents.

Afterwards the groups are either expanded into every plan (full enumeration,
`plans()`), or costed bottom-up (pruned search, `best()`, section 6's last
paragraphs), each group keeping only the plans a parent could prefer:

    full     explore every member of every group; expand the groups into all plans
    pruned   explore a few members per group (`one_member`); per group keep the
             cheapest plan per interface (what a parent's cost reads of its
             input: rows, width, partitioning, distinct counts of the keys above),
             the top group one per (root operator, partitioning)
"""

from __future__ import annotations

from collections import deque
from itertools import product
from dataclasses import dataclass, field
from typing import Callable, Hashable, NamedTuple, Optional, Sequence

from udflow.engine.budget import Clock
from udflow.engine.memo import ExchangeMemo, Interner
from udflow.engine.search import Candidate
from udflow.plan import Node, Source


class _Derivation(NamedTuple):
    """How an exchange's tree was reached; concatenated into a chain only when the tree
    is new (most exchanges rediscover known trees)."""

    parent: tuple
    child: tuple
    exchange: object

    def chain(self) -> tuple:
        return self.parent + self.child + (self.exchange,)


@dataclass
class MExpr:
    """An operator over child groups, and the exchanges that derived it (their certificates are
    built only for the plans reported)."""

    op: Node  # the operator (its own inputs are some members of the child groups)
    children: tuple[int, ...]
    provenance: tuple = ()
    rep: Optional[Node] = None
    index: int = -1


@dataclass
class Group:
    id: int
    mexprs: list[MExpr] = field(default_factory=list)
    parents: list[tuple[int, int]] = field(default_factory=list)  # (parent mexpr index, slot)


class GroupSearch:
    """Explores the groups of one flow with `exchanges(node)` (RuleBook.exchanges)."""

    def __init__(
        self,
        exchanges: Callable[[Node], Sequence],
        *,
        interner: Optional[Interner] = None,
        one_per_root: bool = False,
        one_member: bool = False,
    ):
        """`one_per_root`: ask about an input group once per root *operator* rather than once per
        multi-expression (one plan per possible root).

        `one_member`: expand fewer members per group (the pruned search): the group's first
        member against every root of each input group, and the first member with each other
        root operator against the first member of each input group; not every member
        against every root. An exchange moves the operator below one root of one input, so
        the members of a group are a few answers away from these; that reaches every member
        of the groups of the flows we know (Q7, Q15, clickstream, text mining and the test
        flows give the same plans as expanding every member, tested). Expanding every member
        re-derives the same members many times over: on a 12-join flow 10310 questions
        against 2656. The first member alone is not enough (clickstream: 4 of 9 plans).
        Members reached only otherwise would be missed: full enumeration does not use it."""
        self.one_per_root = one_per_root
        self.one_member = one_member
        self.interner = interner or Interner()
        self._parent: dict[int, int] = {}  # union-find over group ids
        self.groups: dict[int, Group] = {}
        self.mexprs: list[MExpr] = []
        self._mexpr_group: list[int] = []
        self._by_key: dict[tuple, int] = {}  # (operator key, child groups) -> mexpr index
        self._tree_group: dict[int, int] = {}  # interned tree id -> group
        self._tasks: deque = deque()
        self._done: set[tuple[int, int, int]] = set()
        self._asked = exchanges if isinstance(exchanges, ExchangeMemo) else ExchangeMemo(exchanges, self.interner)
        self.complete = True  # False when a budget stopped the exploration

    # -- groups --------------------------------------------------------------------

    def find(self, g: int) -> int:
        while self._parent[g] != g:
            self._parent[g] = self._parent[self._parent[g]]
            g = self._parent[g]
        return g

    def group_of_mexpr(self, index: int) -> int:
        return self.find(self._mexpr_group[index])

    def _new_group(self) -> int:
        g = len(self._parent)
        self._parent[g] = g
        self.groups[g] = Group(g)
        return g

    def insert(self, tree: Node, into: Optional[int] = None, provenance: tuple = ()) -> int:
        """The group of `tree` (created or found); with `into`, the tree is known to belong there.
        `provenance` (a chain, or a `_Derivation`) is kept if `tree` becomes a new expression."""
        tree_id = self.interner.id_of(tree)
        known = self._tree_group.get(tree_id)
        if known is not None:
            known = self.find(known)
            return known if into is None else self._merge(known, self.find(into))
        children = tuple(self.insert(c) for c in tree.inputs)
        key = (self.interner.operator_of(tree), children)
        index = self._by_key.get(key)
        if index is not None:
            g = self.group_of_mexpr(index)
            if into is not None:
                g = self._merge(g, self.find(into))
        else:
            g = self.find(into) if into is not None else self._new_group()
            if isinstance(provenance, _Derivation):
                provenance = provenance.chain()
            self._add_mexpr(g, MExpr(tree, children, provenance), key)
        self._tree_group[tree_id] = g
        return g

    def _add_mexpr(self, g: int, m: MExpr, key: tuple) -> None:
        index = len(self.mexprs)
        m.index = index
        self.mexprs.append(m)
        self._mexpr_group.append(g)
        self._by_key[key] = index
        group = self.groups[g]
        group.mexprs.append(m)
        for slot, child in enumerate(m.children):
            self.groups[self.find(child)].parents.append((index, slot))
        # this expression against every root of each input ...
        for slot, child in enumerate(m.children):
            for cm in self.groups[self.find(child)].mexprs:
                self._tasks.append((index, slot, cm.index))
        # ... and every parent against this new root
        for parent, slot in group.parents:
            self._tasks.append((parent, slot, index))

    def _merge(self, a: int, b: int) -> int:
        a, b = self.find(a), self.find(b)
        if a == b:
            return a
        keep, gone = (a, b) if a < b else (b, a)
        self._parent[gone] = keep
        kept, lost = self.groups[keep], self.groups.pop(gone)
        for m in lost.mexprs:
            kept.mexprs.append(m)
            for parent, slot in kept.parents:
                self._tasks.append((parent, slot, m.index))
        for parent, slot in lost.parents:
            for m in kept.mexprs:
                self._tasks.append((parent, slot, m.index))
        kept.parents.extend(lost.parents)
        return keep

    # -- exploration -------------------------------------------------------------------

    def explore(self, root: Node, *, clock: Optional[Clock] = None) -> int:
        """Saturate the groups reachable from `root` under the RuleBook's exchanges; the root group.

        With a `clock` whose budget runs out, exploration stops where it is (`complete` False):
        the groups hold what was found so far, the plan as written among it. Afterwards
        duplicate multi-expressions are dropped (`settle`), so that the groups' plans are
        distinct trees and `count` counts each plan once."""
        top = self.insert(root)
        self._saturate(clock)
        while self._settle():
            self._saturate(clock)  # merged groups: their members meet their new parents
        self._tasks.clear()  # left over when the budget ran out
        return self.find(top)

    def _saturate(self, clock: Optional[Clock]) -> None:
        asked = 0
        while self._tasks:
            if not self.complete or (clock is not None and asked % 64 == 0 and clock.expired("exploring", len(self.mexprs))):
                self.complete = False
                return
            asked += 1
            task = self._tasks.popleft()
            index, slot, child_index = task
            if self.one_member and not self._expands(index, child_index):
                continue  # not a member this group is expanded from
            m, cm = self.mexprs[index], self.mexprs[child_index]
            if self.one_per_root:
                task = (index, slot, cm.op.label)
            if task in self._done:
                continue
            self._done.add(task)
            inputs = [self.representative_of_group(c) for c in m.children]
            inputs[slot] = self.representative(cm)
            tree = self.interner.rebuild(m.op, tuple(inputs))
            g = self.group_of_mexpr(index)
            for exchange in self._ask(tree):
                self.insert(exchange.after, into=g, provenance=_Derivation(m.provenance, cm.provenance, exchange))

    def _settle(self) -> bool:
        """Drop multi-expressions that merges made duplicates: the same operator over the same
        (now merged) child groups. Two groups holding one such expression hold the same bag,
        and are merged; whether any were (then exploration must go on)."""
        first: dict[tuple, int] = {}
        merged = False
        for g in list(self.groups):
            if g not in self.groups:
                continue  # merged away in this pass
            kept = []
            for m in self.groups[g].mexprs:
                key = (self.interner.operator_of(m.op), tuple(self.find(c) for c in m.children))
                owner = first.get(key)
                if owner is None:
                    first[key] = g
                    kept.append(m)
                elif self.find(owner) != self.find(g):
                    self._merge(owner, g)
                    merged = True
            if g in self.groups and not merged:
                self.groups[g].mexprs[:] = kept
        return merged

    def count(self, g: int) -> int:
        """How many plans (distinct trees) group `g` holds: the sum over its multi-expressions of
        the product of their inputs' counts. Exact after `explore` (each tree is reached through
        exactly one multi-expression: `_settle`); computed without building a plan."""
        memo: dict[int, int] = {}

        def plans_of(g: int) -> int:
            g = self.find(g)
            found = memo.get(g)
            if found is None:
                found = 0
                for m in self.groups[g].mexprs:
                    product_ = 1
                    for c in m.children:
                        product_ *= plans_of(c)
                    found += product_
                memo[g] = found
            return found

        try:
            return plans_of(g)
        finally:
            del plans_of

    def _expands(self, index: int, child_index: int) -> bool:
        """`one_member`: whether to ask multi-expression `index` about input root `child_index`:
        the first member of a group against every input root, the first member with each other
        root operator against its inputs' first members."""
        members = self.groups[self.group_of_mexpr(index)].mexprs
        if members[0].index == index:
            return True
        label = self.mexprs[index].op.label
        if next(m for m in members if m.op.label == label).index != index:
            return False
        child = self.groups[self.group_of_mexpr(child_index)]
        return child.mexprs[0].index == child_index

    def _ask(self, tree: Node) -> tuple:
        return self._asked(tree)

    @property
    def exchange_calls(self) -> int:
        return self._asked.calls

    @property
    def exchange_seconds(self) -> float:
        return self._asked.seconds

    def representative(self, m: MExpr) -> Node:
        if m.rep is None:
            if not m.children:
                m.rep = m.op
            else:
                m.rep = self.interner.rebuild(m.op, tuple(self.representative_of_group(c) for c in m.children))
        return m.rep

    def representative_of_group(self, g: int) -> Node:
        return self.representative(self.groups[self.find(g)].mexprs[0])

    # -- results ---------------------------------------------------------------------

    def plans(self, g: int) -> list[Candidate]:
        """Every plan of the group, each with the certificates that derived its operators' placement."""
        memo: dict[int, list[Candidate]] = {}

        def expand(g: int) -> list[Candidate]:
            g = self.find(g)
            if g in memo:
                return memo[g]
            out: list[Candidate] = []
            for m in self.groups[g].mexprs:
                if not m.children:
                    out.append(Candidate(m.op, m.provenance))
                    continue
                combos: list[tuple[tuple[Node, ...], tuple]] = [((), m.provenance)]
                for c in m.children:
                    combos = [
                        (nodes + (alt.node,), _merge_chains(chain, alt.chain))
                        for nodes, chain in combos
                        for alt in expand(c)
                    ]
                out.extend(Candidate(self.interner.rebuild(m.op, nodes), chain) for nodes, chain in combos)
            # Two groups may hold the same tree when the exchanges that would merge them were
            # never materialised; a plan is a tree, so keep each tree once.
            unique = {self.interner.id_of(c.node): c for c in reversed(out)}
            memo[g] = out = [unique[i] for i in dict.fromkeys(self.interner.id_of(c.node) for c in out)]
            return out

        try:
            return expand(g)
        finally:
            del expand  # the recursive closure refers to itself: break the cycle, free the memo now

    def best(
        self,
        g: int,
        cost: Callable[[Node], float],
        prop: Callable[[Node], Hashable],
        *,
        interface: Optional[Callable[[Node], Hashable]] = None,
        per_root: bool = False,
        clock: Optional[Clock] = None,
    ) -> list[Candidate]:
        """The cheapest plans of group `g`, bottom-up (dynamic programming over the groups).

        Group `g` keeps its cheapest plan per (root operator, interesting property `prop`),
        so that the user sees the best plan under each possible root. Every group below it
        keeps its cheapest plan per `interface` (what the cost of a parent reads of its
        input besides its cost, `CostModel.interface`), and a parent combines only its
        inputs' kept plans: the principle of optimality, exact when the interface says all
        a parent's cost depends on. Without `interface` the groups below keep one per
        `prop`; `per_root` keeps one per (root operator, `prop`) in every group, as
        section 6 literally says ("at least one plan for each possible root node s of a
        sub-flow"), the search's earlier form. Each tree is costed once: the cost model
        memoizes estimates per interned subtree, so a combination costs its root operator.
        With a `clock` whose budget has run out, the groups costed from then on keep only
        their cheapest plan (a heuristic: the plan found is valid, perhaps not the cheapest).
        """
        memo: dict[int, list[Candidate]] = {}
        top = self.find(g)

        def solve(g: int) -> list[Candidate]:
            g = self.find(g)
            if g in memo:
                return memo[g]
            by_root = per_root or g == top
            hurried = clock is not None and g != top and clock.expired("costing", len(memo))
            kept: dict[Hashable, tuple[float, Node, MExpr, tuple]] = {}
            for m in self.groups[g].mexprs:
                # every combination of the children's kept plans, first child outermost; the
                # chain of certificates is only assembled for the combinations kept
                for alts in product(*(solve(c) for c in m.children)):
                    tree = self.interner.rebuild(m.op, tuple([a.node for a in alts])) if alts else m.op
                    slot = (m.op.label, prop(tree)) if by_root else None if hurried else (interface or prop)(tree)
                    c_ = cost(tree)
                    if slot not in kept or c_ < kept[slot][0]:
                        kept[slot] = (c_, tree, m, alts)
            memo[g] = [Candidate(tree, _chain_of(m.provenance, alts))
                       for _, tree, m, alts in sorted(kept.values(), key=lambda t: t[0])]
            return memo[g]

        try:
            return solve(g)
        finally:
            del solve  # the recursive closure refers to itself: break the cycle, free the memo now


def _chain_of(provenance: tuple, alts: tuple) -> tuple:
    """The chain of a multi-expression over the children's plans `alts`, as `plans` merges it."""
    chain = provenance
    for alt in alts:
        chain = _merge_chains(chain, alt.chain)
    return chain


def _merge_chains(a: tuple, b: tuple) -> tuple:
    """`a` then the certificates of `b` not already in `a` (the same exchange can feed two parts)."""
    if not b:
        return a
    seen = {id(x) for x in a}
    return a + tuple(x for x in b if id(x) not in seen)
