"""The optimizer at scale (issue 13): the size of the plan space decides the search; full
enumeration counts and ranks every plan without keeping them; the pruned search chooses
what full enumeration chooses; a budget returns a valid plan.

Everything runs the real analysis, RuleBook and cost model on generated flows (in-memory
sources, no Spark). Function profiles are fixed per flow so that costs repeat exactly.
"""

from __future__ import annotations

import math
import random
import tracemalloc

import pytest

import udflow as uf
from bench.enumeration import (RESOLUTION, explored, fixed_profiles, generated_flow, pruned_against_full,
                               pruned_agrees, shaped_flow)
from udflow.engine.budget import Clock
from udflow.engine.groups import GroupSearch
from udflow.engine.optimize import optimize as optimize_by_default
from udflow.engine.size import connected_subgraphs, estimated_groups, estimated_work, join_graph, join_pairs
from udflow.engine.space import PlanSpace
from udflow.engine import ties
from udflow.errors import OptimizationError
from udflow.rules import RuleBook, check

# The generated flows' plans differ by fractions of a percent (few records: stages dominate),
# so the searches are compared at a resolution that only absorbs rounding (`tests/test_ties.py`
# tests the default, the estimates' error, on TPC-H): bench.enumeration.RESOLUTION.


def optimize(flow, **options):
    return optimize_by_default(flow, **{"resolution": RESOLUTION, **options})


def better(a: float, b: float) -> bool:
    return ties.better(a, b, RESOLUTION)


def bag(flow):
    return sorted(map(repr, (dict(sorted(r.items())) for r in flow.collect(engine="reference"))))


# -- the optimal substructure the searches rely on -----------------------------------------------

SMALL_FLOWS = {
    "snowflake 4, two filters": lambda: generated_flow(4, star=1),
    "chain 4, a Map above the fact table and between the joins": lambda: generated_flow(4, star=0, maps=2),
    "3 joins, two join functions, a Map": lambda: generated_flow(3, star=1, maps=1, join_udfs=2),
    "star 4, three filters": lambda: generated_flow(4, star=4, filters=3),
}


@pytest.mark.parametrize("name", SMALL_FLOWS)
def test_every_plans_streamed_cost_is_its_cost_and_each_plan_is_counted_once(name):
    """Per group and interface class, cost(op(p1..pk)) = sum cost(pi) + a local cost of the
    classes: the streamed cost of *every* plan equals the cost model's estimate of its tree,
    and the count equals the number of distinct trees the groups expand to."""
    flow = SMALL_FLOWS[name]()
    groups, top, model = explored(flow, fixed_profiles(flow))
    trees = groups.plans(top)
    space = PlanSpace(groups, model.cost, model.interface)
    assert space.count(top) == groups.count(top) == len(trees) > 10
    streamed = sorted(cost for cost, _ in space.stream(top))
    costed = sorted(model.cost(c.node) for c in trees)
    assert len(streamed) == len(costed)
    assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(streamed, costed))
    best = space.cheapest(top)
    assert math.isclose(model.cost(best.node), costed[0], rel_tol=1e-12)


def test_full_enumeration_keeps_the_best_and_ranks_the_plan_as_written_among_all():
    flow = generated_flow(5, star=2)
    profiles = fixed_profiles(flow)
    opt = optimize(flow, mode="full", keep=7, profiles=profiles, native=False)
    groups, top, model = explored(flow, profiles)
    every = sorted(model.cost(c.node) for c in groups.plans(top))
    assert opt.alternatives.count == len(every) > 1000
    assert opt.alternatives.considered == len(every)  # every plan streamed ...
    kept = [a for a in opt.alternatives if a.node != flow.root]
    assert len(kept) == 7  # ... seven kept besides the plan as written
    assert all(math.isclose(a.cost, b, rel_tol=1e-9) for a, b in zip(sorted(kept, key=lambda a: a.cost), every))
    # a rank is 1 + the plans estimated better (engine/ties.py): plans within the resolution share it
    assert [a.rank for a in kept] == [1 + sum(better(c, a.cost) for c in every) for a in kept]
    original = opt.original_alternative
    assert original.rank == sum(1 for c in every if better(c, original.cost)) + 1 > 8
    assert opt.alternatives[-1] is original
    for alt in kept[:3]:  # kept plans are real plans: same bag, certificates that check
        assert bag(alt.flow) == bag(flow)
        assert all(check(c, flow).ok for c in alt.certificates)


# -- full against pruned ------------------------------------------------------------------------

# Up to 6 joins here; `python -m bench.enumeration --pruned-check` runs the same check on 7 and 8
# (2.5 s to 27 s a flow: a star of 8 points with a Map has 14 million plans).
GENERATED = [(shape, joins, maps) for shape in ("chain", "snowflake", "star")
             for joins in range(2, 7) for maps in (0, 1)]


@pytest.mark.parametrize("shape, joins, maps", GENERATED)
def test_pruned_search_chooses_the_cost_of_full_enumeration(shape, joins, maps):
    """Every generated flow up to 6 joins, in three shapes, with two filters above the joins,
    with and without a computing Map above the fact table (it may move anywhere above it)."""
    result = pruned_against_full(shape, joins, maps)
    assert result["pruned_plans"] == result["full_plans"]  # the pruned exploration reaches every plan
    assert pruned_agrees(result), result


def random_flow(seed: int) -> uf.Flow:
    """A random snowflake with Python functions between the joins: computing Maps, join
    functions, filters."""
    rng = random.Random(seed)
    joins = rng.randint(3, 5)
    return generated_flow(joins, seed=seed, star=rng.randint(0, joins), filters=rng.randint(0, 2),
                          maps=rng.randint(1, 2), join_udfs=rng.randint(0, 2))


@pytest.mark.parametrize("seed", range(8))
def test_pruned_search_equals_full_enumeration_on_random_flows_with_udfs_between_joins(seed):
    flow = random_flow(seed)
    profiles = fixed_profiles(flow, cost=1e-6 * (1 + seed % 3))
    pruned = optimize(flow, mode="pruned", profiles=profiles)
    full = optimize(flow, mode="full", keep=5, profiles=profiles)
    assert full.alternatives.count == pruned.alternatives.count > 1
    assert math.isclose(pruned.chosen.cost, full.chosen.cost, rel_tol=1e-9)
    assert bag(pruned.best) == bag(flow)


# -- memory ---------------------------------------------------------------------------------------


def test_counting_300k_plans_takes_memory_of_the_groups_not_of_the_plans():
    """The 8-join snowflake with a star of 4 has 344,640 plans; the old full enumeration kept
    every one (1.7 GB). Streaming them, keeping the best 100, allocates a few megabytes."""
    flow = generated_flow(8, star=4, filters=2)
    groups, top, model = explored(flow, fixed_profiles(flow))
    space = PlanSpace(groups, model.cost, model.interface)
    count = space.count(top)
    assert count > 300_000
    tracemalloc.start()
    try:
        ranking = space.ranked(top, 100, model.cost(flow.root))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ranking.seen == count and ranking.complete and len(ranking.kept) == 100
    assert peak < 32 * 2**20, f"{peak / 2**20:.1f} MiB for {count} plans"  # < 100 bytes a plan
    assert [c for c, _ in ranking.kept] == sorted(c for c, _ in ranking.kept)


# -- the mode, and why ------------------------------------------------------------------------------


def test_the_join_graph_estimate_counts_connected_source_sets():
    chain = shaped_flow(6, "chain", filters=0)  # 7 sources in a path: 7 * 8 / 2 connected sets
    assert connected_subgraphs(join_graph(chain.root), 10**6) == 28
    assert estimated_groups(chain.root) == 28
    star = shaped_flow(6, "star", filters=2)  # fact and 6 points: 2^6 sets with the fact, 6 without
    assert connected_subgraphs(join_graph(star.root), 10**6) == 2**6 + 6
    assert estimated_groups(star.root) == (2**6 + 6) * 4
    big = shaped_flow(20, "star", filters=0)
    assert estimated_groups(big.root, cap=5000) > 5000  # stops counting early


def test_the_work_estimate_counts_join_pairs_times_placements():
    """DPccp's csg-cmp pairs: a path of n sources has (n^3 - n) / 6, a star with k points k 2^(k-1)."""
    for joins in (3, 6, 8, 12):
        n = joins + 1
        assert join_pairs(join_graph(shaped_flow(joins, "chain", filters=0).root), 10**6) == (n**3 - n) // 6
        assert join_pairs(join_graph(shaped_flow(joins, "star", filters=0).root), 10**6) == joins * 2 ** (joins - 1)
    assert estimated_work(shaped_flow(4, "chain", filters=2, maps=2).root) == 20 * 2**4
    assert estimated_work(shaped_flow(20, "star", filters=0).root, cap=5000) > 5000  # stops counting early


def test_auto_mode_hands_a_search_of_many_join_pairs_to_the_descent():
    """A star of 8 points: 264 estimated groups but 1,024 join pairs (the exact group search took
    0.6 s of CPU): the descent runs, and says why."""
    star = shaped_flow(8, "star", filters=0)
    opt = optimize(star, profiles=fixed_profiles(star))
    assert opt.mode == "greedy" and "1,024 join pairs" in opt.explain()
    chain = shaped_flow(8, "chain", filters=0)  # 120 pairs: the exact search
    assert optimize(chain, profiles=fixed_profiles(chain)).mode == "pruned"


def test_auto_mode_decides_by_the_plan_space_and_explain_says_why():
    small = generated_flow(3, star=1)
    opt = optimize(small, profiles=fixed_profiles(small))
    assert opt.mode == "full" and opt.alternatives.complete
    assert f"the memo holds {opt.alternatives.count:,} plans" in opt.explain()

    middle = generated_flow(6, star=2)
    opt = optimize(middle, profiles=fixed_profiles(middle))
    assert opt.mode == "pruned" and opt.alternatives.count > 1000
    assert "more than 1,000 to enumerate" in opt.explain()

    large = shaped_flow(20, "snowflake", filters=2, maps=1)
    opt = optimize(large, profiles=fixed_profiles(large))
    assert opt.mode == "greedy" and opt.alternatives.count is None
    assert "greedy" in opt.explain() and "join graph gives" in opt.explain()
    assert opt.chosen.cost < opt.original_alternative.cost  # filters go down at least
    assert bag(opt.best) == bag(large)
    assert all(check(c, large).ok for c in opt.certificates)


# -- the budget ---------------------------------------------------------------------------------------


class Steps:
    """A timer that advances by `step` seconds each time it is read: the budget runs out after
    a fixed number of the search's checks, whatever the load of the machine."""

    def __init__(self, step: float):
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("mode, checks", [("pruned", 20), ("full", 20), ("greedy", 4)])
def test_a_budget_returns_a_valid_plan_and_says_so(mode, checks):
    """The search stops after `checks` looks at the clock (the exploration looks every 64
    questions, the descent every move) with the best plan found so far."""
    flow = generated_flow(12, star=2, maps=1)
    profiles = fixed_profiles(flow)
    clock = Clock(budget_s=checks * 1e-3, timer=Steps(1e-3))
    opt = optimize(flow, mode=mode, profiles=profiles, clock=clock)
    assert not opt.alternatives.complete and clock.ran_out
    assert f"the budget of {checks * 1e-3:g} s ran out while {clock.ran_out}" in opt.explain()
    assert "INCOMPLETE" in opt.explain()
    assert opt.chosen.cost < opt.original_alternative.cost  # some progress was made
    assert bag(opt.best) == bag(flow)
    assert all(check(c, flow).ok for c in opt.certificates)


def test_a_tiny_budget_still_returns_the_plan_as_written():
    flow = generated_flow(8, star=2)
    opt = optimize(flow, budget_s=1e-6, profiles=fixed_profiles(flow))
    assert not opt.alternatives.complete and len(opt.alternatives) >= 1
    assert opt.chosen.cost <= opt.original_alternative.cost


def test_progress_is_reported_while_exploring():
    flow = generated_flow(6, star=2)
    events = []
    with RuleBook(flow.root) as book:
        GroupSearch(book.exchanges).explore(flow.root, clock=Clock(progress=events.append, every_s=0.0))
    assert events and all(e.phase == "exploring" for e in events)
    assert events[-1].done > events[0].done and "exploring" in str(events[-1])


def test_bad_budgets_and_keeps_are_udflow_errors():
    flow = generated_flow(2, star=1)
    with pytest.raises(OptimizationError, match="budget_s"):
        optimize(flow, budget_s=0)
    with pytest.raises(OptimizationError, match="keep"):
        optimize(flow, keep=0)


# -- the command line ---------------------------------------------------------------------------------


def test_cli_budget_reaches_the_search_and_explain_says_it_ran_out():
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "udflow", "explain", "tests/pipelines/gen_joins.py::filter_above_join",
                           "--budget", "0.000001", "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "the budget of 1e-06 s ran out" in done.stdout and "Chosen plan" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "udflow", "explain", "tests/pipelines/gen_joins.py::filter_above_join",
                          "--budget", "-1"], cwd=root, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "more than 0 seconds" in bad.stderr


def test_plain_progress_lines_show_a_long_search():
    import io

    from udflow.batch.progress import PlainReporter

    out = io.StringIO()
    reporter = PlainReporter(out)
    reporter.begin(["p"])
    reporter.stage("p", "optimizing")  # a stage alone prints nothing ...
    reporter.stage("p", "optimizing: exploring (1,234), 2.0 s")  # ... a search's progress does
    assert out.getvalue() == "      p: optimizing: exploring (1,234), 2.0 s\n"
