"""A datetime's `.hour`, `.minute`, `.second` and a date's `.weekday()` / `.isoweekday()` run
natively (issue 29, item 3): the same values as Python over naive datetimes (TIMESTAMP_NTZ:
no zone shifts them), None an AttributeError in Python's words, and `.hour` of a date (which
has none in Python) left to Python, which raises."""

import datetime as dt

import pytest

import udflow as uf

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
