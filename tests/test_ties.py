"""A tie keeps the plan as written (issue 15, item 3).

Plans whose estimated costs are within the cost model's resolution (`engine/ties.py`) of the
cheapest tie: every search mode chooses among them the one with the fewest rewrites from the
plan as written (the plan as written itself when it ties), ranks them all #1, and explain
never calls a plan better than the plan as written unless it is estimated better.

Pure Python: the real analysis, RuleBook and cost model, no Spark.
"""

from __future__ import annotations


import pytest

from bench.enumeration import fixed_profiles, scale_flow
from udflow.engine.budget import Clock
from udflow.engine import ties
from udflow.engine.optimize import optimize as optimize_by_default
from udflow.errors import OptimizationError


class Steps:
    """A timer that advances by `step` seconds each time it is read (a budget independent of load)."""

    def __init__(self, step: float):
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


# The generated flows' plans differ by fractions of a percent (their records are few, and
# stages dominate): the rule's mechanics are tested at a resolution that only absorbs
# rounding; the default (the estimates' error) is tested on TPC-H Q7 and Q15 below.
RESOLUTION = 1e-6


def optimize(flow, **options):
    return optimize_by_default(flow, **{"resolution": RESOLUTION, **options})


def better(a: float, b: float, resolution: float = RESOLUTION) -> bool:
    return ties.better(a, b, resolution)


def tied(opt, resolution: float = RESOLUTION) -> list:
    """The kept plans no kept plan is estimated better than."""
    best = min(a.cost for a in opt.alternatives)
    return [a for a in opt.alternatives if not better(best, a.cost, resolution)]


def assert_tie_rule(opt, resolution: float = RESOLUTION) -> None:
    """The chosen plan: as written, or estimated better than it; the fewest rewrites among
    the plans tied with the cheapest; every tied plan ranks #1, no other does."""
    chosen, written = opt.chosen, opt.original_alternative
    ties = tied(opt, resolution)
    assert chosen in ties
    assert chosen.node is written.node or better(chosen.cost, written.cost, resolution)
    if written in ties:
        assert chosen.node is written.node and not chosen.certificates
    assert len(chosen.certificates) == min(len(a.certificates) for a in ties)
    assert {id(a) for a in opt.alternatives if a.rank == 1} == {id(a) for a in ties}


# -- TPC-H Q7 as `make run` optimizes it -------------------------------------------------------

@pytest.mark.parametrize("query", ["tpch_q7", "tpch_q15"])
def test_tpch_at_the_default_resolution_keeps_the_plan_as_written(tpch_dir, query):
    """issue 29, item 8: at TPC-H scale 0.01 Q7's best alternative (6 rewrites away) is
    estimated 0.08 % cheaper and Q15's 0.16 %, both within the estimates' error
    (`ties.RESOLUTION`, 4 %): they tie, and the plan as written is kept. At a resolution
    that only absorbs rounding, each is presented as better."""
    import importlib

    flow = importlib.import_module(f"examples.{query}").build_flow(tpch_dir)
    opt = optimize_by_default(flow)  # as `make run` does: auto mode, sampled profiles
    assert opt.alternatives.resolution == ties.RESOLUTION == 0.04
    assert_tie_rule(opt, ties.RESOLUTION)
    written = opt.original_alternative
    assert opt.chosen.node is written.node and written.rank == 1
    text = opt.explain()
    assert "the plan as written is kept" in text and "Rewrites applied" not in text
    fine = optimize_by_default(flow, resolution=RESOLUTION, profiles=opt.profiles)
    assert fine.chosen.node is not fine.original_alternative.node
    assert 1 < fine.speedup < 1 + ties.RESOLUTION


# -- the fewest rewrites among ties ----------------------------------------------------------------

@pytest.mark.parametrize("spec", ["star/3/filters+maps", "mixed/3"])
def test_full_enumeration_chooses_the_fewest_rewrites_among_tied_plans(spec):
    """Both flows hold several plans of the cheapest cost, derived by different numbers of
    rewrites (star: 6 to 13; mixed: 6 and 7); the first enumerated used to win."""
    flow = scale_flow(spec)
    profiles = fixed_profiles(flow)
    count = optimize(flow, mode="full", keep=1, profiles=profiles).alternatives.count
    opt = optimize(flow, mode="full", keep=count, profiles=profiles)  # every plan kept: ties checked over all
    assert len(opt.alternatives) == count
    ties = tied(opt)
    assert len({len(a.certificates) for a in ties}) > 1  # the flow has ties that differ in rewrites
    assert_tie_rule(opt)


@pytest.mark.parametrize("mode", ["full", "pruned", "greedy", "auto", "budget"])
def test_every_mode_keeps_the_plan_as_written_when_it_ties(mode):
    """A bare star: every join order costs the same (the dimensions' keys are unique), so the
    plan as written ties with every other plan, and every mode keeps it."""
    flow = scale_flow("star/5/bare")
    profiles = fixed_profiles(flow)
    if mode == "budget":  # full enumeration stopped by its budget after 4 looks at the clock
        clock = Clock(budget_s=4e-3, timer=Steps(1e-3))
        opt = optimize(flow, mode="full", profiles=profiles, clock=clock)
        assert not opt.alternatives.complete
    else:
        opt = optimize(flow, mode=mode, profiles=profiles)
    assert len(opt.alternatives) > 1
    assert_tie_rule(opt)
    assert opt.chosen.node is flow.root and opt.speedup == 1.0
    assert "the plan as written is kept" in opt.explain()
    assert "tie with it" in opt.explain()


@pytest.mark.parametrize("mode", ["full", "pruned", "greedy"])
def test_every_mode_applies_the_rule_where_the_plan_as_written_loses(mode):
    flow = scale_flow("snowflake/4/filters+maps")
    opt = optimize(flow, mode=mode, profiles=fixed_profiles(flow))
    assert_tie_rule(opt)
    assert better(opt.chosen.cost, opt.original_alternative.cost)
    assert opt.original_alternative.rank > 1


# -- the resolution ------------------------------------------------------------------------------

def test_a_wider_resolution_ties_more_plans_and_keeps_the_rule():
    """chain/4 with filters and Maps costed as Python calls: the cheapest plans take 8 rewrites; one 0.6 % dearer takes
    7. Strict costs choose the cheapest; a resolution of 1 % ties them and chooses the plan with
    fewer rewrites."""
    flow = scale_flow("chain/4/filters+maps")
    profiles = fixed_profiles(flow)
    strict = optimize(flow, mode="full", keep=50, profiles=profiles, resolution=0.0, native=False)
    wide = optimize(flow, mode="full", keep=50, profiles=profiles, resolution=1e-2, native=False)
    assert strict.chosen.cost == min(a.cost for a in strict.alternatives)
    assert_tie_rule(strict, 0.0)
    assert_tie_rule(wide, 1e-2)
    assert len(tied(wide, 1e-2)) > len(tied(strict, 0.0))
    assert len(wide.chosen.certificates) < len(strict.chosen.certificates)
    assert wide.chosen.cost > strict.chosen.cost and not better(strict.chosen.cost, wide.chosen.cost, 1e-2)
    assert wide.alternatives.resolution == 1e-2


def test_a_plan_as_written_kept_out_of_the_stream_ranks_after_every_plan_estimated_better():
    flow = scale_flow("chain/4/filters+maps")
    profiles = fixed_profiles(flow)
    opt = optimize(flow, mode="full", keep=5, profiles=profiles)
    assert opt.alternatives.count > 1000
    written = opt.original_alternative
    every = optimize(flow, mode="full", keep=opt.alternatives.count, profiles=profiles).alternatives
    assert written.rank == 1 + sum(1 for a in every if better(a.cost, written.cost))
    assert opt.alternatives[-1] is written


@pytest.mark.parametrize("resolution", [-1e-6, 1.0, "0.1"])
def test_a_bad_resolution_is_a_udflow_error(resolution):
    flow = scale_flow("chain/4/bare")
    with pytest.raises(OptimizationError, match="resolution"):
        optimize(flow, resolution=resolution)
