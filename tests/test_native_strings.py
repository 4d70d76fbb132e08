"""The models widened for the functions Polars translates (issue 29, item 3): str methods with
constant arguments run natively (`native_strings`), math.radians/degrees natively, and
numpy's functions of one value, `.title()` and `strftime` as Python inside the native plan
(`strptime` natively on strictly spelled rows, `native_parse`); each gives Python's value, type and error on Spark."""

from __future__ import annotations

import datetime
import math

import numpy as np
import unicodedata
import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError

TEXTS = ["", "a", "aaa", "  pad \u2003", "+12", "-7", "-", "a/\n", "a//", "\u00df\u0130", "\U0001f389 party", "x-y z",
         "--a--", "0042"]


def replaced(r):
    return {**r, "y": r["s"].replace("a", "-"), "z": r["s"].replace("aa", "b"), "w": r["s"].replace("\u00df", "ss")}


def zfilled(r):
    return {**r, "y": r["s"].zfill(5), "z": r["s"].zfill(0)}


def stripped(r):
    return {**r, "y": r["s"].rstrip("/"), "z": r["s"].lstrip("-a"), "w": r["s"].strip("-"), "v": r["s"].rstrip(),
            "u": r["s"].lstrip(), "t": r["s"].strip(None), "q": r["s"].strip("")}


def found(r):
    return {**r, "y": r["s"].find("a"), "z": r["s"].find(""), "w": r["s"].find("\u0130")}


def counted(r):
    s = r["s"]
    return {**r, "c1": s.count("a"), "c2": s.count("aa"), "c0": s.count(""), "c3": s.count("\u00df"),
            "asc": s.isascii(), "rp": s.removeprefix("-"), "rs": s.removesuffix("a/\n"), "r0": s.removeprefix(""),
            "lj": s.ljust(5), "rj": s.rjust(4, "*"), "lu": s.ljust(6, "\u00e9")}


def classified(r):
    s = r["s"]
    return {**r, "cf": s.casefold(), "sw": s.swapcase(), "dg": s.isdigit(), "dc": s.isdecimal(),
            "nm": s.isnumeric(), "al": s.isalpha(), "an": s.isalnum(), "sp": s.isspace(), "up": s.isupper(),
            "lo": s.islower()}


# beyond ASCII, the digits and cases of Unicode's tables: Arabic-Indic three, superscript two,
# a Roman numeral, a titlecase digraph, the sharp s, a dotted capital I, a full-width A
UNICODE_TEXTS = ["\u0663", "\u00b2", "\u2167", "\u01c5", "\u00df", "\u0130", "\uff21", "12\n", " \t\x1c",
                 "ABC", "Abc1", "1A", "aAaA", "abcabcab", "\u00e9\u00e9", "A\u00df"]


def titled(r):
    return {**r, "y": r["s"].title(), "z": r["s"].capitalize()}


def angles(r):
    return {**r, "rad": math.radians(r["x"]), "deg": math.degrees(r["x"])}


def numpy_calls(r):
    return {**r, "root": np.sqrt(r["x"]), "grown": np.exp(r["x"]), "size": np.abs(r["x"])}


def numpy_of_more(r):
    return {**r, "clipped": np.clip(r["x"], 0.0, 1.0), "rounded": np.round(r["x"], 2), "top": np.maximum(r["x"], 1),
            "low": np.minimum(2.5, r["x"]), "as64": float(np.float64(r["x"]) * 1.1), "whole": np.round(r["x"])}


def normalized(r):
    return {**r, "nfc": unicodedata.normalize("NFC", r["s"]), "nfkd": unicodedata.normalize("NFKD", r["s"]).strip()}


def days(r):
    return {**r, "day": r["ts"].date(), "label": r["ts"].strftime("%Y-%m %H")}


def parsed(r):
    return {**r, "ts": datetime.datetime.strptime(r["s"], "%Y-%m-%d")}


def _records(flow):
    return sorted(repr(sorted((k, type(v).__name__, v if v == v else "nan") for k, v in r.items()))
                  for r in flow)


def _numpy_as_float(rows):
    """numpy's float64 comes back from Spark as a float (a subclass it is): compared as one."""
    return [{k: v.item() if type(v).__module__ == "numpy" else v for k, v in r.items()} for r in rows]


def _same_on_spark(spark, fn, rows, describe: str):
    flow = uf.source("t", rows=rows).map(fn)
    assert flow.physical().root.describe().startswith(describe), flow.physical().root.describe()
    assert _records(flow.collect(spark=spark)) == _records(_numpy_as_float(flow.collect(engine="reference")))


@pytest.mark.parametrize("fn", [replaced, zfilled, stripped, found, counted, classified])
def test_a_str_method_with_constant_arguments_is_native_and_pythons(spark, fn):
    _same_on_spark(spark, fn, [{"s": s} for s in TEXTS + UNICODE_TEXTS], "native")
    assert "Python" not in uf.source("t", rows=[{"s": "a"}]).map(fn).physical().root.describe()


def test_unicode_normalization_is_pythons_call_in_the_native_plan(spark):
    """Python's Unicode database (14.0 in 3.11), not the JVM's Normalizer (13.0 in Java 17)."""
    _same_on_spark(spark, normalized, [{"s": s} for s in TEXTS + UNICODE_TEXTS + ["\ufb01", "e\u0301", "\u2460"]],
                   "native, with Python for unicodedata.normalize")


def test_title_and_capitalize_run_as_python_in_the_native_plan(spark):
    _same_on_spark(spark, titled, [{"s": s} for s in TEXTS], "native, with Python for str.title")


@pytest.mark.parametrize("fn, describe", [(angles, "native"), (numpy_calls, "native, with Python for numpy.sqrt"),
                                          (numpy_of_more, "native, with Python for numpy.clip")])
def test_radians_are_native_and_numpy_runs_in_the_plan(spark, fn, describe):
    values = [0.0, -0.0, 1.0, 180.0, -2.5, 1e308, float("inf"), float("nan"), 3.7, 1e-310]
    _same_on_spark(spark, fn, [{"x": x} for x in values], describe)


def test_a_datetimes_date_is_native_and_strftime_and_strptime_run_in_the_plan(spark):
    stamps = [datetime.datetime(2024, 2, 29, 23, 59, 59, 999999), datetime.datetime(1, 1, 1),
              datetime.datetime(9999, 12, 31, 12), datetime.datetime(1969, 12, 31, 23, 0)]
    _same_on_spark(spark, days, [{"ts": t} for t in stamps], "native, with Python for date.strftime")
    _same_on_spark(spark, parsed, [{"s": s} for s in ("2024-02-29", "0001-01-01", "1999-12-31")],
                   "native")  # a strict spelling's rows in Spark, the others Python's (`native_parse`)


@pytest.mark.parametrize("fn, rows", [
    (replaced, [{"s": None}]), (zfilled, [{"s": None}]), (stripped, [{"s": None}]), (found, [{"s": None}]),
    (counted, [{"s": None}]), (classified, [{"s": None}]),
    (titled, [{"s": None}]), (angles, [{"x": None}]), (numpy_calls, [{"x": None}]),
    (parsed, [{"s": "2024-02-30"}]),
])
def test_pythons_errors_are_raised_in_pythons_words(spark, fn, rows):
    typed = {"s": "2024-01-01", "x": 1.5}  # a row of the field's type beside it: the column is typed
    flow = uf.source("t", rows=rows + [{k: typed[k] for k in rows[0]}]).map(fn)
    said = []
    for how in ({"engine": "reference"}, {"spark": spark}):
        with pytest.raises(UdfRuntimeError) as err:
            flow.collect(**how)
        said.append(str(err.value).splitlines()[0].split(" raised ", 1)[1])
    assert said[0] == said[1]


def stripped_everywhere(r):
    s = r["s"]
    return {**r, "b": s.strip(), "l": s.lstrip(), "r": s.rstrip(), "c": s.strip("\u00e9\U0001f600-"),
            "q": s.lstrip("\\'"), "z": s.rstrip("\x00a\u2028")}


def test_strip_trims_exactly_pythons_characters_from_the_ends_only(spark):
    """`TRIM(... FROM s)` against Python's strip on strings of every whitespace character
    Python knows, multi-byte and supplementary ones, quotes, backslashes and NUL, in and
    around the ends."""
    import random

    from udflow.spark_backend.native_strings import WHITESPACE

    assert WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    pool = WHITESPACE + "ab-\u00e9\U0001f600\x00'\\\u20ac"
    rng = random.Random(26)
    texts = ["".join(rng.choice(pool) for _ in range(rng.randrange(9))) for _ in range(400)]
    _same_on_spark(spark, stripped_everywhere, [{"s": s} for s in texts], "native")


def split_words(r):
    for word in r["s"].split():
        yield {**r, "w": word}


def test_split_breaks_at_exactly_pythons_whitespace(spark):
    """`s.split()` exploded natively (a regex class of Python's whitespace, as ranges) against
    Python's on strings of every whitespace character and others around them."""
    import random

    from udflow.spark_backend.native_strings import WHITESPACE

    pool = WHITESPACE + "ab\u00e9\U0001f600\u200b\u180e\x00"  # zero-width space, Mongolian separator: not whitespace
    rng = random.Random(27)
    texts = ["".join(rng.choice(pool) for _ in range(rng.randrange(12))) for _ in range(400)]
    _same_on_spark(spark, split_words, [{"s": s} for s in texts], "native")


def parsed_stripped(r):
    return {"a": float(r["s"].strip()) if r["s"] != "" else None}


def test_a_parse_of_a_stripped_nullable_text_is_native_where_strictly_spelled(spark):
    """The flag handing Python its rows reads `s.strip()` without its None guard (null there:
    a None text raises Python's AttributeError in the CASE): the parse stays native."""
    rows = [{"s": " 1.5 "}, {"s": "2"}, {"s": "1e3"}, {"s": "\u0662"}, {"s": ""}]
    flow = uf.source("t", rows=rows).map(parsed_stripped)
    df = flow.to_spark(spark)
    assert "RLIKE" in df._jdf.queryExecution().executedPlan().toString()  # the strict spelling's test
    assert _records(flow.collect(spark=spark)) == _records(map(parsed_stripped, rows))
    with_none = uf.source("t", rows=rows + [{"s": None}]).map(parsed_stripped)
    with pytest.raises(UdfRuntimeError, match="AttributeError: 'NoneType' object has no attribute 'strip'"):
        with_none.collect(spark=spark)
    assert "RLIKE" in with_none.to_spark(spark)._jdf.queryExecution().executedPlan().toString()
