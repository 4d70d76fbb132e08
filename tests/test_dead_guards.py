"""Guards that cannot fire are not built: a raise site in the native plan costs Catalyst
time on every query (its message carries the record), so the lowering leaves out those
Python can never reach, and keeps every one it can (`nullness.terms_when_true`,
`native_calls._never_zero`, `NativeLowering._condition`)."""

from __future__ import annotations

from datetime import datetime

import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError

ROWS = [{"k": i % 2, "t": t, "x": float(i)} for i, t in
        enumerate(["2025-03-01", "bad", None, "2024-12-31", "2025-11-30", "2025-01-15"])]


def _parsed(text):
    try:
        return datetime.strptime(text, "%Y-%m-%d")
    except (TypeError, ValueError):
        return None


def dated(r):
    placed = _parsed(r["t"])
    if placed is not None and placed.year == 2025:
        yield {**r, "month": placed.month}


def undated(r):  # no test of None: a None date raises AttributeError, on both engines
    placed = _parsed(r["t"])
    return {**r, "month": placed.month}


def mean(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "mean": sum(r["x"] for r in rows) / len(rows)}


def mean_of_large(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "mean": sum(r["x"] for r in rows) / len([r for r in rows if r["x"] > 4])}


def _raise_sites(flow, spark) -> int:
    return flow.to_spark(spark=spark)._jdf.queryExecution().analyzed().toString().count("raise_error")


def _same_rows(flow, spark):
    def bag(rows):
        return sorted(repr(sorted(r.items())) for r in rows)

    assert bag(flow.collect(spark=spark)) == bag(flow.collect(engine="reference"))


@pytest.mark.spark
def test_a_helpers_result_tested_not_none_is_read_with_no_none_guard(spark):
    guarded = uf.source("t", rows=ROWS).map(dated)
    unguarded = uf.source("t", rows=[r for r in ROWS if r["t"] and r["t"][0] == "2"]).map(undated)
    assert guarded.physical().root.native and unguarded.physical().root.native
    # only the helper's own error remains: `placed.year` and `placed.month` follow `placed is not None`
    assert _raise_sites(guarded, spark) == 1
    assert _raise_sites(unguarded, spark) > 1  # there None.month is guarded too
    _same_rows(guarded, spark)
    _same_rows(unguarded, spark)
    nones = uf.source("t", rows=ROWS).map(undated)
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError, match="'NoneType' object has no attribute 'month'"):
            nones.collect(engine=engine, spark=spark if engine == "spark" else None)


@pytest.mark.spark
def test_a_division_by_a_groups_length_has_no_zero_guard_by_a_filtered_length_keeps_it(spark):
    whole = uf.source("t", rows=ROWS).reduce(["k"], mean)
    some = uf.source("t", rows=ROWS).reduce(["k"], mean_of_large)
    assert whole.physical().root.native and some.physical().root.native
    assert _raise_sites(whole, spark) == 0  # a group is never empty
    assert _raise_sites(some, spark) == 1
    _same_rows(whole, spark)
    for engine in ("reference", "spark"):  # k = 0 holds x 0, 2, 4: none above 4
        with pytest.raises(UdfRuntimeError, match="ZeroDivisionError: float division by zero"):
            some.collect(engine=engine, spark=spark if engine == "spark" else None)


def counts(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "n": len(rows), "large": len([r for r in rows if r["x"] > 4]),
           "total": sum(r["x"] for r in rows)}


def per_record(r):
    return {**r, "mean": r["total"] / r["n"]}


def per_large(r):
    return {**r, "mean": r["total"] / r["large"]}


@pytest.mark.spark
def test_a_groups_count_divides_with_no_zero_guard_in_the_map_above_a_filtered_count_keeps_it(spark):
    """A Reduce's count of its records is never 0 (`native_spans.emitted_nonzero`): the Map
    above divides by it with no zero guard. A count of the records an `if` keeps may be 0:
    its guard stays, and raises Python's error on both engines."""
    whole = uf.source("t", rows=ROWS).reduce(["k"], counts).map(per_record)
    some = uf.source("t", rows=ROWS).reduce(["k"], counts).map(per_large)
    assert whole.physical().root.native and whole.physical()["Reduce[k](counts)"].native
    assert _raise_sites(whole, spark) == _raise_sites(some, spark) - 1
    _same_rows(whole, spark)
    for engine in ("reference", "spark"):  # k = 0 holds x 0, 2, 4: none above 4
        with pytest.raises(UdfRuntimeError, match="ZeroDivisionError: float division by zero"):
            some.collect(engine=engine, spark=spark if engine == "spark" else None)


def status_then_date(r):
    status = r["s"].strip().upper()
    placed = _parsed(r["t"])
    return status == "OK" and placed is not None


@pytest.mark.spark
def test_a_raising_and_chain_as_a_condition_repeats_no_operand(spark):
    rows = [{**r, "s": [" ok", "no ", "OK", "x"][i % 4]} for i, r in enumerate(ROWS)]
    flow = uf.source("t", rows=rows).filter(status_then_date)
    assert flow.physical().root.native
    # the error of strip().upper() computed by Python on rows beyond ASCII (`native_case`), the helper's
    assert _raise_sites(flow, spark) == 2
    _same_rows(flow, spark)
    nones = uf.source("t", rows=[*rows, {**rows[0], "s": None}]).filter(status_then_date)
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError, match="'NoneType' object has no attribute 'strip'"):
            nones.collect(engine=engine, spark=spark if engine == "spark" else None)


def average_of_known(rows):
    rows = list(rows)
    known = [r["x"] for r in rows if r["x"] is not None]
    yield {"k": rows[0]["k"], "avg": sum(known) / len(known) if known else None,
           "big": 1.0 / len([r for r in rows if r["x"] is not None and r["x"] > 4])}


@pytest.mark.spark
def test_a_division_by_a_count_tested_non_zero_has_no_zero_guard(spark):
    """`sum(xs) / len(xs) if xs else None`: the test counts the same records as the divisor
    (one count per condition, whatever the list's values), so the division needs no zero
    guard; an untested filtered count keeps its guard, and raises where Python does."""
    rows = [{"k": k, "x": x} for k, x in
            [(0, None), (0, 2.5), (1, 5.0), (1, None), (1, 1.0), (2, 6.0), (2, 7.5), (3, None), (3, 9.0)]]
    fine = uf.source("t", rows=[r for r in rows if r["k"] != 0]).reduce(["k"], average_of_known)
    assert fine.physical().root.native
    assert _raise_sites(fine, spark) == 1  # only the untested `big` division
    _same_rows(fine, spark)
    failing = uf.source("t", rows=rows).reduce(["k"], average_of_known)  # k = 0: x None, 2.5: none above 4
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError, match="ZeroDivisionError: float division by zero"):
            failing.collect(engine=engine, spark=spark if engine == "spark" else None)


def per_mile(r):
    if r["fare"] is None or not r["miles"]:
        return {**r, "per_mile": None}
    return {**r, "per_mile": r["fare"] / r["miles"]}


def short(r):
    return r["per_mile"] is not None and r["per_mile"] <= 3.0


def cheap(r):
    return r["per_mile"] is not None and 1.0 <= r["per_mile"]


TRIPS = [{"fare": f, "miles": m} for f, m in
         [(10.0, 4.0), (None, 2.0), (5.0, 0.0), (3.0, float("nan")), (float("nan"), 2.0), (2.0, -0.0), (9.0, 2.0)]]


@pytest.mark.spark
def test_a_divisor_an_earlier_case_proves_non_zero_has_no_zero_guard_and_every_row_is_kept(spark):
    flow = uf.source("t", rows=TRIPS).map(per_mile)
    assert flow.physical().root.native
    assert _raise_sites(flow, spark) == 0  # `not r["miles"]` was falsy: miles != 0
    plan = flow.to_spark(spark=spark)._jdf.queryExecution().analyzed().toString()
    assert "Filter" not in plan  # both cases emit, and no guard raises: no row to drop
    _same_rows(flow, spark)


@pytest.mark.spark
def test_a_nan_where_the_smaller_operand_stands_needs_no_guard(spark):
    """Spark orders NaN above every number, Python's orderings with NaN are all False: `nan <=
    3.0` is False on both, so it has no NaN test; `1.0 <= nan` is True on Spark and keeps it."""
    for fn, tests in ((short, 0), (cheap, 1)):
        flow = uf.source("t", rows=TRIPS).map(per_mile).filter(fn)
        plan = flow.to_spark(spark=spark)._jdf.queryExecution().analyzed().toString()
        assert plan.count("isnan") == tests, (fn.__name__, plan)
        _same_rows(flow, spark)
