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
