"""A datetime's `.hour`, `.minute`, `.second` and a date's `.weekday()` / `.isoweekday()` run
natively (issue 29, item 3): the same values as Python over naive datetimes (TIMESTAMP_NTZ:
no zone shifts them), None an AttributeError in Python's words, and `.hour` of a date (which
has none in Python) left to Python, which raises."""

import datetime as dt

import pytest

import udflow as uf
from tests.both_engines import raised_on_both_engines

pytestmark = pytest.mark.spark

ROWS = [{"k": i, "at": dt.datetime(2024, 2, 26 + i, i * 5, i * 7, i * 11, 999), "d": dt.date(2024, 2, 26 + i)}
        for i in range(4)] + [{"k": 8, "at": dt.datetime(1, 1, 1), "d": dt.date(1, 1, 1)},
                              {"k": 9, "at": dt.datetime(9999, 12, 31, 23, 59, 59), "d": dt.date(9999, 12, 31)}]


def parts(r):
    return {**r, "h": r["at"].hour, "m": r["at"].minute, "s": r["at"].second, "wd": r["at"].weekday(),
            "iwd": r["d"].isoweekday(), "dwd": r["d"].weekday()}


def weekend(r):
    return r["d"].weekday() >= 5


def by_key(rows):
    return sorted(rows, key=lambda r: r["k"])


@pytest.mark.parametrize("build", [lambda f: f.map(parts), lambda f: f.filter(weekend)], ids=["map", "filter"])
def test_time_parts_and_weekdays_run_natively_with_pythons_values(spark, build):
    flow = build(uf.source("t", rows=ROWS))
    assert flow.physical().root.native
    assert by_key(flow.collect(spark=spark)) == by_key(flow.collect(engine="reference"))


def test_a_none_datetime_raises_pythons_attribute_error_on_spark(spark):
    flow = uf.source("t", rows=[{"k": 1, "at": None, "d": dt.date(2024, 1, 1)}]).map(parts)
    with pytest.raises(uf.UdfRuntimeError, match="AttributeError: 'NoneType' object has no attribute 'hour'"):
        flow.collect(spark=spark)


def test_the_hour_of_a_date_raises_as_in_python(spark):
    flow = uf.source("t", rows=[{"k": 1, "d": dt.date(2024, 1, 1)}]).map(lambda r: {**r, "h": r["d"].hour})
    with pytest.raises(uf.UdfRuntimeError, match="AttributeError: 'datetime.date' object has no attribute 'hour'"):
        flow.collect(spark=spark)


def trip(r):
    return {**r, "mins": (r["drop"] - r["pick"]).total_seconds() / 60, "days": (r["drop"] - r["pick"]).days,
            "ddays": (r["due"] - r["sent"]).days}


TRIPS = [
    {"k": 1, "pick": dt.datetime(2024, 3, 10, 1), "drop": dt.datetime(2024, 3, 10, 4, 0, 0, 1),  # a DST night
     "sent": dt.date(2024, 1, 1), "due": dt.date(2023, 12, 1)},
    {"k": 2, "pick": dt.datetime(2024, 3, 10, 5), "drop": dt.datetime(2024, 3, 9, 4, 59, 59, 999999),
     "sent": dt.date(2024, 1, 1), "due": dt.date(2024, 3, 1)},
    {"k": 3, "pick": dt.datetime(2000, 1, 1), "drop": dt.datetime(2000, 1, 1),
     "sent": dt.date(1, 1, 1), "due": dt.date(9999, 12, 31)},
]


def test_durations_of_datetimes_and_dates_run_natively_with_pythons_values(spark):
    """The taxi pipeline's `(r["drop"] - r["pick"]).total_seconds()`: no scalar UDF."""
    flow = uf.source("t", rows=TRIPS).map(trip)
    assert flow.physical().root.describe() == "native"
    assert by_key(flow.collect(spark=spark)) == by_key(flow.collect(engine="reference"))


def test_a_none_in_a_duration_raises_pythons_type_error(spark):
    flow = uf.source("t", rows=[{**TRIPS[0], "pick": None}]).map(trip)
    with pytest.raises(uf.UdfRuntimeError, match=r"TypeError: unsupported operand type\(s\) for -: "
                                                 r"'datetime.datetime' and 'NoneType'"):
        flow.collect(spark=spark)


def test_a_duration_beyond_2_53_microseconds_is_computed_by_python(spark):
    """Past 2**53 microseconds the native total_seconds() has no exactly rounded form: that row
    lies outside the operator's normal case and runs in Python (`general_case`)."""
    far = {**TRIPS[0], "pick": dt.datetime(1, 1, 1), "drop": dt.datetime(9999, 1, 1)}
    flow = uf.source("t", rows=[far, TRIPS[0]]).map(trip)
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))


def test_a_date_minus_a_datetime_stays_python_and_raises_there(spark):
    flow = uf.source("t", rows=[TRIPS[0]]).map(lambda r: {**r, "d": (r["drop"] - r["sent"]).days})
    with pytest.raises(uf.UdfRuntimeError, match="TypeError: unsupported operand"):
        flow.collect(spark=spark)


WINDOW = dt.timedelta(days=7, microseconds=3)  # a module-level constant, folded


def moved(r):
    return {"k": r["k"], "due": r["d"] + dt.timedelta(days=30), "back": r["at"] - WINDOW,
            "next": r["at"] + dt.timedelta(hours=24, seconds=1.5), "odd": r["d"] + dt.timedelta(hours=23),
            "early": r["d"] + dt.timedelta(hours=-1), "same": r["d"] - dt.timedelta(hours=1),
            "first": dt.timedelta(minutes=90) + r["at"], "week": r["d"] - dt.timedelta(7)}


MOVABLE = [{"k": i, "at": dt.datetime(2024, 2, 28, 23, 30) + dt.timedelta(hours=7 * i, microseconds=i),
            "d": dt.date(2024, 2, 26) + dt.timedelta(days=i)} for i in range(6)] + [
    {"k": 8, "at": dt.datetime(1, 1, 8, 0, 0, 0, 3), "d": dt.date(1, 1, 8)},
    {"k": 9, "at": dt.datetime(9999, 12, 30, 23, 59, 58), "d": dt.date(9999, 11, 30)}]


def test_a_date_or_datetime_moved_by_a_constant_timedelta_is_native_and_pythons(spark):
    flow = uf.source("t", rows=MOVABLE).map(moved)
    assert flow.physical().root.describe() == "native"
    assert by_key(flow.collect(spark=spark)) == by_key(map(moved, MOVABLE))


@pytest.mark.parametrize("row, error", [
    ({"k": 10, "at": dt.datetime(2000, 1, 1), "d": dt.date(9999, 12, 31)}, "OverflowError: date value out of range"),
    ({"k": 11, "at": dt.datetime(1, 1, 7), "d": dt.date(2000, 1, 1)}, "OverflowError: date value out of range"),
    ({"k": 12, "at": dt.datetime(2000, 1, 1), "d": None},
     "TypeError: unsupported operand type(s) for +: 'NoneType' and 'datetime.timedelta'"),
])
def test_a_move_past_year_9999_or_before_year_1_or_of_none_raises_pythons_error(spark, row, error):
    flow = uf.source("t", rows=MOVABLE[:1] + [row]).map(moved)
    for how in ({"engine": "reference"}, {"spark": spark}):
        with pytest.raises(uf.UdfRuntimeError) as raised:
            flow.collect(**how)
        assert error in str(raised.value)


LAUNCH = dt.datetime(2023, 6, 1, 9, 0, 0, 1)
EPOCH = dt.datetime(1970, 1, 1)


def since_launch(r):
    return r["at"] >= LAUNCH and r["at"] != dt.datetime(2024, 2, 27, 5, 7, 11, 999)


def epoch_seconds(r):
    return {"k": r["k"], "epoch": (r["at"] - EPOCH).total_seconds(), "late": r["at"] > LAUNCH}


def test_a_naive_datetime_constant_is_a_timestamp_ntz_literal(spark):
    for flow, fn in ((uf.source("t", rows=ROWS).filter(since_launch), None),
                     (uf.source("t", rows=ROWS).map(epoch_seconds), epoch_seconds)):
        assert flow.physical().root.describe() == "native"
        expected = [r for r in ROWS if since_launch(r)] if fn is None else list(map(fn, ROWS))
        assert by_key(flow.collect(spark=spark)) == by_key(expected)


def churned(r):
    return r["last_seen"] < r["as_of"] - dt.timedelta(days=90)


def test_an_operands_own_error_comes_before_the_type_error_of_a_none_beside_it(spark):
    """Python computes both operands of `<` before it meets the None: the move's OverflowError
    is raised, not the comparison's TypeError (`NativeLowering.none_guard` reads every operand)."""
    rows = [{"last_seen": dt.date(2020, 1, 1), "as_of": dt.date(2020, 6, 1)}, {"last_seen": None, "as_of": dt.date(1, 1, 1)}]
    flow = uf.source("t", rows=rows).filter(churned)
    for how in ({"engine": "reference"}, {"spark": spark}):
        with pytest.raises(uf.UdfRuntimeError, match="OverflowError: date value out of range"):
            flow.collect(**how)


def test_a_duration_from_a_constant_past_2_53_microseconds_runs_in_python(spark):
    rows = [{"k": 0, "at": dt.datetime(2020, 1, 1)}, {"k": 1, "at": dt.datetime(1, 1, 1)},
            {"k": 2, "at": dt.datetime(9999, 1, 1, 0, 0, 0, 7)}]
    flow = uf.source("t", rows=rows).map(epoch_seconds)
    assert by_key(flow.collect(spark=spark)) == by_key(map(epoch_seconds, rows))


HOLIDAYS = {"2024-12-25", "0001-01-01"}


def written(r):
    return {"k": r["k"], "day": r["d"].isoformat(), "at": r["at"].isoformat(), "day_str": str(r["d"]),
            "at_str": str(r["at"]), "off": r["d"].isoformat() in HOLIDAYS, "both": f"{r['d']}/{r['at']}"}


def test_isoformat_and_str_of_dates_and_datetimes_are_native_and_pythons(spark):
    rows = ROWS + [{"k": 20, "at": dt.datetime(5, 1, 2, 3, 4, 5, 7), "d": dt.date(5, 1, 2)},
                   {"k": 21, "at": dt.datetime(2024, 12, 25, 3, 4, 5, 120000), "d": dt.date(2024, 12, 25)}]
    flow = uf.source("t", rows=rows).map(written)
    assert flow.physical().root.describe() == "native"
    assert by_key(flow.collect(spark=spark)) == by_key(map(written, rows))


# -- the ISO calendar's parts --------------------------------------------------------------

def iso_parts(r):
    return {**r, "year": r["d"].isocalendar()[0], "week": r["d"].isocalendar().week,
            "weekday": r["d"].isocalendar()[-1], "day_of_year": r["d"].timetuple().tm_yday}


ISO_DAYS = [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2024, 12, 30), dt.date(2021, 1, 3), dt.date(2020, 12, 31),
            dt.date(2026, 1, 1), dt.date(1582, 10, 4), dt.date(1582, 10, 15), dt.date(2000, 2, 29)]


@pytest.mark.parametrize("as_datetime", [False, True], ids=["date", "datetime"])
def test_the_iso_calendars_parts_are_native_and_pythons(spark, as_datetime):
    """`d.isocalendar()[k]` and `.year/.week/.weekday` are Spark's ISO 8601 week fields, equal
    to Python's from year 1 to 9999, the weeks that straddle a new year included; so is
    `d.timetuple().tm_yday`, Spark's dayofyear."""
    days = ISO_DAYS + [dt.date.fromordinal(k) for k in range(1, 3652059, 9973)]
    rows = [{"d": dt.datetime.combine(x, dt.time(23, 59, 59)) if as_datetime else x} for x in days]
    flow = uf.source("t", rows=rows).map(iso_parts)
    assert flow.physical().root.describe() == "native"
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))


def test_the_iso_calendar_of_none_raises_pythons_attribute_error():
    said = raised_on_both_engines(uf.source("t", rows=[{"d": None}, {"d": dt.date(2024, 1, 1)}]).map(iso_parts))
    assert said[0] == said[1] and "'isocalendar'" in said[0], said


def trip_ok(r):
    return r["dropoff"] > r["pickup"] and r["pickup"] >= dt.datetime(2000, 1, 1)


def latest(r):
    return {**r, "last": max(r["pickup"], r["dropoff"]), "first": min(r["pickup"], r["dropoff"])}


def test_naive_datetimes_compare_and_take_min_max_natively_as_python():
    """Ordering two naive datetimes, or one and a constant, is TIMESTAMP_NTZ's ordering (no zone,
    to the microsecond); a None raises Python's TypeError in its words."""
    import itertools

    from pyspark.sql import functions as F

    from udflow.expr import Call, Cmp, Field, Lit
    from udflow.spark_backend import get_session
    from udflow.spark_backend.native import NativeLowering
    from tests.test_native_differential import native_error, python_outcome, same

    moments = [dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 0, 0, 0, 1), dt.datetime(1, 1, 1),
               dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None]
    records = [{"id": i, "a": a, "b": b} for i, (a, b) in enumerate(itertools.product(moments, repeat=2))]
    frame = get_session().createDataFrame([tuple(r.values()) for r in records], "id long, a timestamp_ntz, b timestamp_ntz")
    terms = [Cmp(op, Field("a"), Field("b")) for op in ("<", "<=", ">", ">=")]
    terms += [Call("max", (Field("a"), Field("b"))), Call("min", (Field("a"), Field("b"))),
              Cmp(">=", Field("a"), Lit(dt.datetime(2020, 1, 1)))]
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    for term in terms:
        column = F.expr(lowering.lower(term).sql)
        outcomes = {r["id"]: python_outcome(term, r) for r in records}
        fine = [i for i, o in outcomes.items() if o[0] == "value"]
        got = {row["id"]: row["v"] for row in frame.where(F.col("id").isin(fine)).select("id", column.alias("v")).collect()}
        assert all(same(outcomes[i][1], got[i]) for i in fine), str(term)
        raising = next(i for i, o in outcomes.items() if o[0] == "raises")
        assert native_error(frame, column, raising).startswith(f"m (t.py:1) raised {outcomes[raising][1]}")


@pytest.mark.parametrize("build", [lambda f: f.filter(trip_ok), lambda f: f.map(latest)], ids=["filter", "map"])
def test_a_flow_ordering_naive_datetimes_runs_natively_with_pythons_records(spark, build):
    rows = [{"id": i, "pickup": ROWS[i]["at"], "dropoff": ROWS[-1 - i]["at"]} for i in range(len(ROWS))]
    flow = build(uf.source("trips", rows=rows))
    assert flow.physical().root.describe() == "native"
    from tests.both_engines import native_records_on_both_engines

    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert spark_rows == python_rows
