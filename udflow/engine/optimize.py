"""`uf.optimize`: statistics -> sampling -> RuleBook -> search -> costs -> `Optimized`.

    flow ──▶ source statistics (parquet metadata, key distinct counts)
         ──▶ function profiles (each function run on a sample of its real input)
         ──▶ RuleBook(flow) : exchanges(subtree) with certificates
         ──▶ Search: full enumeration (Algorithm 1 + memo) up to FULL_LIMIT operators,
                     pruned (a few members explored per group, the cheapest plan kept
                     per interface: what the cost of an operator above reads) beyond
         ──▶ CostModel: every alternative costed, join strategies chosen
         ──▶ Optimized(best, original, alternatives ranked by cost, certificates)
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from typing import Any, Optional

from udflow.engine.cost import CostModel
from udflow.engine.memo import Interner
from udflow.engine.optimized import Alternative, Alternatives, Optimized
from udflow.engine.groups import GroupSearch
from udflow.engine.search import Candidate, CertificateChain, Search
from udflow.engine.statistics import (
    DEFAULT_SAMPLE_SIZE,
    key_fields_of,
    profile_functions,
    source_statistics,
)
from udflow.errors import OptimizationError
from udflow.flow import Flow
from udflow.plan import CoGroup, Match, Node, Reduce, Source

FULL_LIMIT = 10  # operators; full enumeration is exponential beyond (Q7 has 8)
MODES = ("auto", "full", "pruned", "exact")
PROPERTIES = ("analysis", "manual")


def optimize(
    flow: Flow,
    *,
    properties: str = "analysis",
    spark: Any = None,
    mode: str = "auto",
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    profiles: Optional[dict] = None,
    full_limit: int = FULL_LIMIT,
) -> Optimized:
    """Every valid reordering of `flow` (or the best per interesting property), costed; see `Optimized`.

    `properties`: "analysis" (static analysis of the functions) or "manual"
    (`@uf.annotate`). `mode`: "auto" enumerates fully up to FULL_LIMIT
    operators (`full_limit`) and prunes beyond; "full" or "pruned" force one; "exact" is
    Algorithm 1 on concrete trees, asking the RuleBook about every tree (the
    reference the group search is tested against). `profiles`
    reuses function profiles of an earlier run (skips sampling). `spark` is
    accepted for symmetry with `collect`; statistics never need a Spark job.
    """
    if not isinstance(flow, Flow):
        raise OptimizationError(f"optimize takes a Flow, got {type(flow).__name__}")
    if properties not in PROPERTIES:
        raise OptimizationError(f"properties must be one of {PROPERTIES}, got {properties!r}")
    if mode not in MODES:
        raise OptimizationError(f"mode must be one of {MODES}, got {mode!r}")
    from udflow.rules import RuleBook

    root = flow.root
    timings: dict[str, float] = {}
    started = time.perf_counter()
    sources = statistics_of(root)
    timings["statistics"] = time.perf_counter() - started

    started = time.perf_counter()
    if profiles is None:
        profiles = profile_functions(root, sample_size)
    timings["sampling"] = time.perf_counter() - started

    started = time.perf_counter()
    interner = Interner()
    model = CostModel(sources, profiles, interner, keyed=keyed_operators(root))
    operators = sum(1 for n in root.walk() if not isinstance(n, Source))
    if mode == "auto":
        mode = "full" if operators <= full_limit else "pruned"
    with _collector_paused():
        with RuleBook(root, properties=properties) as book:
            timings["rules_setup"] = time.perf_counter() - started  # facts, Datalog, Z3 key queries
            started = time.perf_counter()
            candidates, considered, asked = _search(root, book, interner, model, mode)
        timings["search"] = time.perf_counter() - started
        timings["rulebook"] = asked  # the part of "search" spent inside RuleBook.exchanges

        started = time.perf_counter()
        if not any(interner.id_of(c.node) == interner.id_of(root) for c in candidates):
            candidates = [Candidate(root, ())] + list(candidates)  # pruned away: the user's plan is always shown
        ranked = rank(candidates, model)
        timings["costing"] = time.perf_counter() - started

    root_id = interner.id_of(root)
    original = next(a for a in ranked if interner.id_of(a.node) == root_id)

    def why_not(a: str, b: str):
        with RuleBook(root, properties=properties) as book:
            return book.why_not(a, b)

    return Optimized(
        original=original,
        alternatives=Alternatives(ranked, mode, considered),
        model=model,
        properties=properties,
        timings=timings,
        why_not=why_not,
        profiles=profiles,
    )


@contextmanager
def _collector_paused():
    """Pause Python's cyclic garbage collector during the search and the costing.

    The search allocates hundreds of thousands of small objects that live until it ends
    (trees, memo entries, exchanges); each generation-2 collection traverses all of them
    again, which more than doubled the time of a pruned search over a 12-join flow. Nothing
    is leaked: reference counting still frees what dies, and cycles are collected later.
    Concurrent calls are safe: whoever found the collector enabled enables it again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _search(root: Node, book, interner: Interner, model: CostModel, mode: str) -> tuple[list[Candidate], int, float]:
    """The candidates of one mode, how many trees the search looked at, and the time in the RuleBook."""
    if mode == "exact":
        search = Search(book.exchanges, interner=interner)
        found = search.alternatives(root)
        return found, len(found), search.exchange_seconds
    pruned = mode == "pruned"
    groups = GroupSearch(book.exchanges, interner=interner, one_per_root=pruned, one_member=pruned)
    top = groups.explore(root)
    if mode == "full":
        found = groups.plans(top)
        return found, len(found), groups.exchange_seconds
    found = groups.best(top, model.cost, model.partitioning, interface=model.interface)
    return found, len(groups.mexprs), groups.exchange_seconds


def keyed_operators(root: Node) -> dict[str, frozenset]:
    """Operator label -> the fields it joins or groups on (Match, CoGroup, Reduce).

    A Reduce's fields include the fields a Match equates with its key: the RuleBook may
    rewrite the key across that equality when it pushes the Reduce below the Match."""
    equated: dict[str, set] = {}
    for node in root.walk():
        if isinstance(node, (Match, CoGroup)):
            for a, b in zip(node.left_key, node.right_key):
                equated.setdefault(a, set()).add(b)
                equated.setdefault(b, set()).add(a)
    keys = {}
    for node in root.walk():
        if isinstance(node, (Match, CoGroup)):
            keys[node.label] = frozenset(node.left_key) | frozenset(node.right_key)
        elif isinstance(node, Reduce):
            keys[node.label] = frozenset(node.key).union(*(equated.get(f, ()) for f in node.key))
    return keys


def statistics_of(root: Node) -> dict:
    """Per source label: its statistics, with distinct counts of every key field of the flow."""
    keys = key_fields_of(root)
    return {n.label: source_statistics(n, keys) for n in root.walk() if isinstance(n, Source)}


def rank(candidates: list[Candidate], model: CostModel) -> list[Alternative]:
    """Cost every candidate and sort, cheapest first; ties keep enumeration order (original first)."""
    costed = sorted(
        ((model.cost(c.node), i, c) for i, c in enumerate(candidates)), key=lambda t: (t[0], t[1])
    )
    return [
        Alternative(
            node=c.node,
            cost=cost,
            rank=r,
            certificates=CertificateChain(c.chain),
            estimate=model.estimate(c.node),
            model=model,
        )
        for r, (cost, _, c) in enumerate(costed, 1)
    ]
