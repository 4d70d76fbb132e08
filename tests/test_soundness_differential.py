"""Differential soundness suite (issue 16): random flows over the families of the shared
repros; every alternative must return the plan as written's bag, or raise where it raises.

The long run (10,000 flows) is `python -m bench.soundness_fuzz`; this runs a sample of the
same generator, and checks that both engines agree on the chosen plan of a few flows.
"""

import collections
import random

import pytest

from udflow import UdfRuntimeError

from tests import soundness_pool as pool

FLOWS = 60


def flows(n, start=0):
    stats = collections.Counter()
    out = []
    seed = start
    while len(out) < n:
        try:
            flow = pool.random_flow(random.Random(seed))
        except Exception:  # noqa: BLE001 - a draw the builder refuses
            flow = None
        if flow is not None and len(flow.operators) >= 2:
            out.append(flow)
        seed += 1
    return out, stats


def test_every_alternative_of_every_generated_flow_agrees():
    generated, stats = flows(FLOWS)
    problems = []
    for flow in generated:
        problems += pool.check_flow(flow, stats)
    print("\nsoundness differential:", dict(stats))
    assert stats["flows"] == FLOWS
    assert stats["alternatives"] > 2 * FLOWS, stats  # the families do get reordered
    assert not problems, problems[0]


def _spark_outcome(flow, spark):
    pool.SHARED_TABLE.clear()
    try:
        records = flow.collect(spark=spark)
    except UdfRuntimeError:
        return "raises"
    return collections.Counter(tuple(sorted((k, pool.canon(v)) for k, v in r.items())) for r in records)


@pytest.mark.spark
def test_both_engines_agree_on_the_chosen_plan(spark):
    compared = 0
    for flow in flows(12, start=1000)[0]:
        if any("shared" in n.label for n in flow.operators):
            continue  # module state is per process: Spark's workers do not share the driver's table
        opt = pool.optimized(flow, collections.Counter())
        assert _spark_outcome(opt.best, spark) == pool.outcome(opt.best), str(opt.best)
        compared += 1
    assert compared >= 6
