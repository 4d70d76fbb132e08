"""`uf.optimize`: statistics -> sampling -> RuleBook -> search -> costs -> `Optimized`.

    flow ──▶ source statistics (parquet metadata, key distinct counts)
         ──▶ function profiles (each function run on a sample of its real input)
         ──▶ RuleBook(flow) : exchanges(subtree) with certificates
         ──▶ Search, chosen by the size of the plan space (mode="auto"):
               greedy   the join graph's estimate exceeds GROUP_LIMIT groups or WORK_LIMIT
                        join pairs x placements: steepest descent by single exchanges
                        from the plan as written
               pruned   the group search's memo holds more than FULL_LIMIT plans: the
                        cheapest plan per interface per group (exact for the cost model)
               full     otherwise: every plan costed and counted, the best KEEP kept
         ──▶ Optimized(best, original, alternatives ranked by cost, certificates)

A `budget_s` stops whichever search runs when the time is up; the best plan found so
far is returned and `explain()` says so.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from bisect import bisect_left
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Optional

from udflow.diagnostics import check_foreign_keys, proved_for
from udflow.engine.budget import Clock, Progress
from udflow.engine.cost import CostModel
from udflow.engine.greedy import Descent
from udflow.engine.memo import ExchangeMemo, Interner
from udflow.engine.optimized import Alternative, Alternatives, Optimized
from udflow.engine.groups import GroupSearch
from udflow.engine.search import Candidate, CertificateChain, Search
from udflow.engine.size import estimated_groups, estimated_work
from udflow.engine.space import PlanSpace
from udflow.engine.ties import RESOLUTION, threshold
from udflow.engine.statistics import (
    DEFAULT_SAMPLE_SIZE,
    key_fields_of,
    profile_functions,
    source_statistics,
)
from udflow.errors import OptimizationError, surfaced
from udflow.flow import Flow
from udflow.plan import CoGroup, Match, Node, Reduce, Source
from udflow.samples import output_samples, samples_from

FULL_LIMIT = 1_000  # plans: enumerated one by one, all kept, up to this many (Q7 has 242)
GROUP_LIMIT = 600  # estimated groups: the group search beyond is slower than a user waits
WORK_LIMIT = 1_000  # estimated join pairs x placements: ~0.5-1.2 ms of CPU each in the group search
KEEP = 1_000  # plans kept by full enumeration besides the plan as written
MODES = ("auto", "full", "pruned", "greedy", "exact")
PROPERTIES = ("analysis", "manual")


@dataclass(frozen=True)
class Found:
    """What a search found: the candidates to rank and what explain says about it."""

    candidates: list
    considered: int  # trees or multi-expressions looked at
    count: Optional[int]  # plans in the space searched (None: unknown)
    complete: bool  # False: the budget ran out
    cheaper: Optional[int] = None  # full: plans cheaper than the plan as written


@surfaced
def optimize(
    flow: Flow,
    *,
    properties: str = "analysis",
    spark: Any = None,
    mode: str = "auto",
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    profiles: Optional[dict] = None,
    full_limit: int = FULL_LIMIT,
    group_limit: int = GROUP_LIMIT,
    work_limit: int = WORK_LIMIT,
    keep: int = KEEP,
    budget_s: Optional[float] = None,
    progress: Optional[Callable[[Progress], None]] = None,
    clock: Optional[Clock] = None,
    resolution: float = RESOLUTION,
    native: bool = True,
) -> Optimized:
    """The cheapest valid reordering of `flow`, the best alternatives, and why; see `Optimized`.

    `properties`: "analysis" (static analysis of the functions) or "manual"
    (`@uf.annotate`). `mode`: "auto" decides by the size of the plan space: "greedy"
    when the join graph's estimate exceeds `group_limit` groups or `work_limit` join pairs
    times placements of the movable operators (`engine/size.py`), else the group search,
    enumerating fully when its memo holds at most `full_limit` plans and pruning beyond;
    "full", "pruned" or "greedy" force one; "exact" is Algorithm 1 on concrete trees,
    asking the RuleBook about every tree (the reference the group search is tested
    against). Full enumeration keeps the `keep` cheapest plans and the plan as written.
    `budget_s`: seconds for the search; when they run out the best plan found so far is
    returned (`opt.alternatives.complete` is False). `progress(Progress)` is called about
    once a second during the search (`clock`, a `budget.Clock`, replaces both). `profiles` reuses function profiles of an earlier
    run (skips sampling). `spark` is accepted for symmetry with `collect`; statistics
    never need a Spark job. `resolution`: the relative difference of estimated costs below
    which two plans tie (`engine/ties.py`): among the plans within it of the cheapest, the
    one with the fewest rewrites from the plan as written is chosen, so a tie keeps the
    plan as written. `native`: cost each function as the backend runs it by default, natively
    where it has an exact native form (docs/native.md); False costs every function as Python
    calls, for plans run with `collect(native=False)`.
    """
    _check_arguments(flow, properties, mode, budget_s, keep, resolution)
    check_foreign_keys(flow.root)
    from udflow.rules import RuleBook

    root = flow.root
    proved = proved_for(root)  # the values the analysis below sees, checked again when a plan runs
    timings: dict[str, float] = {}
    started = time.perf_counter()
    sources = statistics_of(root)
    timings["statistics"] = time.perf_counter() - started

    started = time.perf_counter()
    written_outputs: dict = {}  # label -> what the plan as written emitted on the sample
    if profiles is None:
        profiles = profile_functions(root, sample_size, written_outputs)
    timings["sampling"] = time.perf_counter() - started

    started = time.perf_counter()
    clock = clock or Clock(budget_s, progress)
    interner = Interner()
    model = CostModel(sources, profiles, interner, keyed=keyed_operators(root), forms=_backend_forms(native))
    with _collector_paused():
        with RuleBook(root, properties=properties) as book:
            timings["rules_setup"] = time.perf_counter() - started  # facts, Datalog, Z3 key queries
            started = time.perf_counter()
            asked = ExchangeMemo(book.exchanges, interner)
            mode, reason, found = _search(root, asked, interner, model, mode, clock, full_limit=full_limit,
                                          group_limit=group_limit, work_limit=work_limit, keep=keep,
                                          resolution=resolution)
        timings["search"] = time.perf_counter() - started
        timings["rulebook"] = asked.seconds  # the part of "search" spent inside RuleBook.exchanges

        started = time.perf_counter()
        found, refused = field_flow_checked(found, root, properties)
        timings["field_flow"] = time.perf_counter() - started

        started = time.perf_counter()
        ranked = rank(found, root, model, resolution, proved, refused.verdicts)
        timings["costing"] = time.perf_counter() - started

    started = time.perf_counter()  # taken now, so that building the chosen plan's DataFrame runs no job
    root_id = interner.id_of(root)
    as_written = interner.id_of(ranked[0].node) == root_id and written_outputs
    samples = samples_from(ranked[0].node, written_outputs) if as_written else output_samples(ranked[0].node)
    ranked[0] = dataclasses.replace(ranked[0], samples=samples)
    timings["output_samples"] = time.perf_counter() - started

    original = next(a for a in ranked if interner.id_of(a.node) == root_id)
    if not found.complete:
        reason += f"; the budget of {clock.budget_s:g} s ran out while {clock.ran_out}: the best plan found so far"

    def why_not(a: str, b: str):
        # the search's book: its facts, derivations and refusals are the ones to explain, and a
        # book per question would derive them again (seconds per pair on a large flow)
        try:
            return book.why_not(a, b)
        finally:
            book.close()  # verdicts stay cached; the memos of the moves tried need not

    return Optimized(
        original=original,
        alternatives=Alternatives(ranked, mode, found.considered, count=found.count,
                                  complete=found.complete, reason=reason, resolution=resolution,
                                  refused=refused.plans),
        model=model,
        properties=properties,
        timings=timings,
        why_not=why_not,
        profiles=profiles,
        origin=getattr(flow, "origin", ()),
    )


def _check_arguments(flow, properties: str, mode: str, budget_s, keep: int, resolution: float) -> None:
    if not isinstance(flow, Flow):
        raise OptimizationError(f"optimize takes a Flow, got {type(flow).__name__}")
    if properties not in PROPERTIES:
        raise OptimizationError(f"properties must be one of {PROPERTIES}, got {properties!r}")
    if mode not in MODES:
        raise OptimizationError(f"mode must be one of {MODES}, got {mode!r}")
    if budget_s is not None and not budget_s > 0:
        raise OptimizationError(f"budget_s must be a positive number of seconds, got {budget_s!r}")
    if keep < 1:
        raise OptimizationError(f"keep must be at least 1, got {keep!r}")
    if not isinstance(resolution, (int, float)) or not 0 <= resolution < 1:
        raise OptimizationError(f"resolution must be a relative tolerance in [0, 1), got {resolution!r}")


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


def _search(root: Node, asked: ExchangeMemo, interner: Interner, model: CostModel, mode: str,
            clock: Clock, *, full_limit: int, group_limit: int, work_limit: int, keep: int,
            resolution: float) -> tuple[str, str, Found]:
    """The mode that ran, why, and what it found."""
    if mode == "exact":
        search = Search(asked, interner=interner)
        plans = search.alternatives(root)
        return mode, "exact mode asked for: Algorithm 1 on concrete trees", Found(plans, len(plans), len(plans), True)
    if mode == "greedy":
        return mode, "greedy mode asked for", _greedy(root, asked, interner, model, clock)
    if mode == "full":
        return mode, "full enumeration asked for", _full(root, asked, interner, model, clock, keep, resolution)
    if mode == "pruned":
        return mode, "pruned search asked for", _pruned(_explored(root, asked, interner, clock, pruned=True), model, clock)
    estimate = estimated_groups(root, cap=100 * group_limit)
    if estimate > group_limit:
        why = (f"auto: the join graph gives ~{estimate:,} memo groups, more than the group search's "
               f"limit of {group_limit:,}: greedy descent by single exchanges (a heuristic)")
        return "greedy", why, _greedy(root, asked, interner, model, clock)
    work = estimated_work(root, cap=100 * work_limit)
    if work > work_limit:
        why = (f"auto: the join graph gives ~{work:,} join pairs x placements of the movable operators, "
               f"more than the group search's limit of {work_limit:,}: greedy descent by single "
               f"exchanges (a heuristic)")
        return "greedy", why, _greedy(root, asked, interner, model, clock)
    groups, top = _explored(root, asked, interner, clock, pruned=True)
    plans = groups.count(top)
    if plans <= full_limit and groups.complete:
        why = (f"auto: the memo holds {plans:,} plans, at most {full_limit:,}: every plan enumerated "
               f"(join graph estimate ~{estimate:,} groups)")
        return "full", why, _full(root, asked, interner, model, clock, keep, resolution)
    why = (f"auto: the memo holds {plans:,} plans, more than {full_limit:,} to enumerate: the cheapest "
           f"plan per interface per group, as cheap as full enumeration for this cost model "
           f"(join graph estimate ~{estimate:,} groups)")
    return "pruned", why, _pruned((groups, top), model, clock)


def _explored(root: Node, asked: ExchangeMemo, interner: Interner, clock: Clock, *, pruned: bool):
    groups = GroupSearch(asked, interner=interner, one_per_root=pruned, one_member=pruned)
    top = groups.explore(root, clock=clock)
    return groups, top


def _pruned(explored, model: CostModel, clock: Clock) -> Found:
    groups, top = explored
    found = groups.best(top, model.cost, model.partitioning, interface=model.interface, clock=clock)
    complete = groups.complete and clock.ran_out is None
    return Found(found, len(groups.mexprs), groups.count(top), complete)


def _full(root: Node, asked: ExchangeMemo, interner: Interner, model: CostModel, clock: Clock, keep: int,
          resolution: float) -> Found:
    groups, top = _explored(root, asked, interner, clock, pruned=False)
    count = groups.count(top)
    if count <= keep:  # every plan is kept anyway: build them (Q7's 242) rather than stream them
        plans = groups.plans(top)
        return Found(plans, len(plans), count, groups.complete)
    space = PlanSpace(groups, model.cost, model.interface, clock)
    ranking = space.ranked(top, keep, model.cost(root), resolution)
    candidates = [c for _, c in ranking.kept]
    if not ranking.complete:
        candidates.append(space.cheapest(top))  # known from the classes even if the stream stopped
    return Found(candidates, ranking.seen, count, groups.complete and ranking.complete, ranking.cheaper)


def _greedy(root: Node, asked: ExchangeMemo, interner: Interner, model: CostModel, clock: Clock) -> Found:
    descent = Descent(asked, interner, model.cost, lambda n: model.estimate(n).rows, clock, interface=model.interface)
    visited = descent.run(root)
    return Found(visited, descent.considered, None, descent.complete)


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


@dataclass(frozen=True)
class Checked:
    """The field-flow verdicts of the candidates (by node id) and the plans refused."""

    verdicts: dict
    plans: tuple


def field_flow_checked(found: Found, root: Node, properties: str) -> tuple[Found, Checked]:
    """`found` without the candidates the field-flow check refuses (`udflow.fieldflow`):
    every plan kept reads, writes and outputs its fields as the plan as written does."""
    from udflow.fieldflow import FieldFlow

    flow_check = FieldFlow(root, properties)
    verdicts, kept, refused = {}, [], []
    for candidate in found.candidates:
        verdict = verdicts.get(id(candidate.node)) or flow_check.check(candidate.node)
        verdicts[id(candidate.node)] = verdict
        (kept if verdict.ok else refused).append(candidate)
    verdicts[id(root)] = flow_check.check(root)
    plans = tuple((c.node, verdicts[id(c.node)]) for c in refused)
    return dataclasses.replace(found, candidates=kept), Checked(verdicts, plans)


def rank(found: Found, root: Node, model: CostModel, resolution: float = RESOLUTION,
         proved: tuple = (), verdicts: Optional[dict] = None) -> list[Alternative]:
    """Cost the candidates (and the plan as written, always shown) and order them, the chosen
    plan first (`engine/ties.py`): a plan's rank is 1 + the number of candidates estimated
    better than it beyond the `resolution`; the plans ranking #1 come first, fewest rewrites
    from the plan as written first (so a tie keeps the plan as written), then every other plan
    by cost. A plan as written that full enumeration did not keep ranks among all plans:
    1 + every plan estimated better."""
    intern = model.interner.id_of
    root_id = intern(root)
    unique = {}
    for c in [Candidate(root, ())] + list(found.candidates):
        unique.setdefault(intern(c.node), c)
    costs = [model.cost(c.node) for c in unique.values()]
    ascending = sorted(costs)
    out = []
    for i, ((node_id, c), cost) in enumerate(zip(unique.items(), costs)):
        r = 1 + bisect_left(ascending, threshold(cost, resolution))
        if node_id == root_id and found.cheaper is not None:
            r = found.cheaper + 1  # counted over every plan, beyond the plans kept
        tied = r == 1
        order = (0, len(c.chain), cost, i) if tied else (1, 0, cost, i)
        out.append((order, Alternative(node=c.node, cost=cost, rank=r, certificates=CertificateChain(c.chain),
                                       estimate=model.estimate(c.node), model=model, proved_for=proved,
                                       field_flow=(verdicts or {}).get(id(c.node)))))
    return [a for _, a in sorted(out, key=lambda t: t[0])]


def _backend_forms(native: bool):
    """What the backend a plan is costed for runs natively (`udflow.native_forms`): Spark's,
    the one backend (its forms are given to the cost model, not imported by it); None where
    `native` is False."""
    from udflow.spark_backend.forms import forms_of

    return forms_of(native)
