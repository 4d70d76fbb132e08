"""What a Reduce's records cost to reach their groups (`udflow.engine.physical.grouping`), by
how the Reduce runs, and the hint the cost model hands Spark for a native group filter."""

from __future__ import annotations

import pytest

from udflow.engine.physical import MAX_BROADCAST_BYTES, SPLITS, STAGE, Estimate, grouping, shuffle

KEY = ("k",)
ON_KEY = frozenset({frozenset(KEY)})


def _input(rows: float, width: float = 100.0, fields: float = 10.0, partitioning=frozenset()) -> Estimate:
    return Estimate(rows, width, 0.0, 0.0, 0.0, 0.0, partitioning, fields=fields)


def test_a_python_reduce_shuffles_every_record():
    child = _input(1e6)
    moved = grouping("python", KEY, child, groups=1e3, width=50.0, share=1.0)
    assert moved.shuffled == child.bytes and moved.cost == shuffle(child)
    assert moved.partitioning == ON_KEY and moved.strategy is None


def test_a_native_aggregate_shuffles_one_record_per_group_and_split():
    child = _input(1e6)
    moved = grouping("aggregate", KEY, child, groups=1e3, width=50.0, share=1.0)
    assert moved.shuffled == 1e3 * SPLITS * 50.0
    python = grouping("python", KEY, child, 1e3, 50.0, 1.0)
    assert moved.cost - STAGE < (python.cost - STAGE) / 100  # one stage each, far fewer records
    few_per_group = grouping("aggregate", KEY, _input(1e3), groups=900, width=50.0, share=1.0)
    assert few_per_group.shuffled == 1e3 * 50.0  # never more records than its input has


def test_a_native_group_filter_broadcasts_the_kept_keys_and_leaves_its_input_in_place():
    partitioned = frozenset({frozenset({"other"})})
    child = _input(1e6, partitioning=partitioned)
    moved = grouping("group filter", KEY, child, groups=1e5, width=100.0, share=0.1)
    assert moved.strategy == "broadcast_kept" and moved.partitioning == partitioned
    assert moved.broadcast == pytest.approx(1e4 * 10.0)  # 10% of the groups, one field of ten
    assert moved.shuffled < child.bytes / 100


def test_kept_keys_too_large_to_broadcast_shuffle_the_input_on_the_key():
    child = _input(1e9, width=100.0, fields=1.0)
    moved = grouping("group filter", KEY, child, groups=1e8, width=100.0, share=1.0)
    assert 1e8 * 100.0 > MAX_BROADCAST_BYTES
    assert moved.strategy is None and moved.partitioning == ON_KEY
    assert moved.cost >= shuffle(child) and moved.broadcast == 0.0


@pytest.mark.parametrize("kind", ["python", "aggregate", "group filter"])
def test_input_partitioned_on_the_key_moves_nothing(kind):
    moved = grouping(kind, KEY, _input(1e6, partitioning=ON_KEY), groups=1e3, width=50.0, share=0.5)
    assert (moved.cost, moved.shuffled, moved.broadcast) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("kind, stages", [("python", 1), ("aggregate", 1), ("group filter", 2)])
def test_every_exchange_is_a_stage_whatever_it_moves(kind, stages):
    """A shuffle and a broadcast each cost `STAGE` on top of their records: a group filter
    shuffles its kept keys and broadcasts them."""
    moved = grouping(kind, KEY, _input(1.0), groups=1.0, width=50.0, share=1.0)
    assert stages * STAGE <= moved.cost < stages * STAGE + 1e-4


def test_a_native_group_filter_computes_its_input_twice():
    """Once for the kept keys, once for the semi join: an input that costs c adds c again
    (a group filter above a join repeats the join); an aggregate adds nothing."""
    def costing(cost):
        return Estimate(1e5, 100.0, cost, 0.0, 0.0, 0.0, fields=10.0)

    for kind, again in (("group filter", 2.5), ("aggregate", 0.0), ("python", 0.0)):
        cheap, dear = (grouping(kind, KEY, costing(c), groups=1e3, width=50.0, share=0.1) for c in (0.0, 2.5))
        assert dear.cost - cheap.cost == pytest.approx(again)
