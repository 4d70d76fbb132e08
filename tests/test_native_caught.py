"""`try`/`except` of one expression (`udflow.caught.Caught`) and the parses of a text
(`float`, `int`, `datetime.strptime`) natively on the rows whose text is strictly spelled,
in Python on the others (`native_caught`, `native_parse`).

The differential part runs each term on Spark and in Python over texts where the parsers
part ways (Unicode digits and whitespace, one-digit fields, 29 February, year 0, a final
newline, exponents, 16 digits, None) and over texts hypothesis draws from the characters
of those spellings: every row gets Python's value, or raises Python's error.
"""

from __future__ import annotations

import ast
import collections
import datetime
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis import analyze
from udflow.analysis.caught_form import caught_form
from udflow.caught import Caught
from udflow.expr import Call, Field, Lit, evaluate
from udflow.spark_backend import native_parse
from tests.test_native_differential import native_error, python_outcome, same
from tests.frames import jvm_frame

FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d", "%d/%m/%Y", "%Y%m%d", "%H:%M", "%m-%d", "%Y-%m-%dT%H:%M:%S")
TEXTS = [
    "2025-03-04 10:00:00", " 2025-03-04 10:00:00 ", "2025-1-4 10:00:00", "2025-02-29 10:00:00", "2024-02-29 23:59:59",
    "1900-02-29 00:00:00", "2000-02-29 00:00:00", "0000-01-01 00:00:00", "0001-01-01 00:00:00", "9999-12-31 23:59:59",
    "2025-03-04 10:00:60", "2025-03-04 24:00:00", "2025-03-04  10:00:00", "2025-03-04\t10:00:00", "2025-03-04 10:00:00\n",
    "\u0662\u0660\u0662\u0665-03-04 10:00:00", "2025-03-04T10:00:00", "2025-03-04t10:00:00", "2025-04-31", "2025-04-30",
    "04/03/2025", "31/04/2025", "4/3/2025", "20250304", "2025034", "10:30", "9:30", "02-29", "02-28", "13-01",
    "1.5", "-0", "+3.25", ".5", "1.", ".", "1e3", "nan", "inf", " 2", "1_000", "123456789012345", "1234567890123456",
    "0.1", "-000.000", "\u0667", "12345678901234567890", "+", "", "   ", None, "abc", "\u00a0", "42", "-17",
    "999999999999999999", "9999999999999999999", "2025-W10-2", "2025W102", "2025-03-04 ", "+2025-03-04",
    # int() in a base: prefixes, letters in either case, underscores, Unicode digits
    "0x1F", "-0x1f", "+0X1f", "0X", "0x", "0b101", "-0B11", "0o17", "0O8", "ff", "FF", "z", "Z9", "0x_1f", "1_f",
    " 0x1f ", "\u0663f", "fffffffffffffff", "7fffffffffffffff", "0b" + "1" * 16, "1" * 18, "0_0", "__1",
]


def _parse_ts(text):
    try:
        return datetime.datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
    except (ValueError, AttributeError):
        return None


def completed(r):
    placed = _parse_ts(r["at"])
    if placed is not None and placed.year == 2025:
        yield {**r, "month": placed.month}


def assigned(r):
    try:
        qty = int(r["qty"])
    except ValueError:
        qty = 1
    return {**r, "qty": qty}


def returned_record(r):
    try:
        return {**r, "price": float(r["price"])}
    except (TypeError, ValueError):
        return {**r, "price": None}


def _terms():
    s, stripped = Field("s"), Call("str.strip", (Field("s"),))
    terms = [Call("float", (s,))] + [Call("datetime.strptime", (s, Lit(f))) for f in FORMATS]
    terms += [Call("datetime.date.fromisoformat", (s,)),
              Caught(Call("datetime.date.fromisoformat", (stripped,)), ("ValueError", "AttributeError"), Lit(None))]
    terms += [
        Caught(Call("float", (s,)), ("ValueError", "TypeError"), Lit(None)),
        Caught(Call("float", (stripped,)), ("ValueError",), Lit(-1.0)),  # None.strip(): AttributeError, not caught
        Caught(Call("int", (s,)), ("ValueError",), Lit(0)),  # int(None): TypeError, not caught
        Caught(Call("int", (stripped,)), ("Exception",), Lit(-1)),
        Caught(stripped, ("AttributeError",), Lit("")),
        Call("int", (s,)), Call("int", (s, Lit(16))), Call("int", (s, Lit(2))), Call("int", (s, Lit(8))),
        Call("int", (s, Lit(36))), Call("int", (stripped, Lit(16))), Call("int", (s, Lit(10))),
        Caught(Call("int", (s, Lit(16))), ("ValueError",), Lit(0)),
    ]
    terms += [Caught(Call("datetime.strptime", (stripped, Lit(f))), ("ValueError", "AttributeError"), Lit(None))
              for f in FORMATS]
    return terms


STATS = collections.Counter()


def _within(term, text) -> bool:
    """Whether the row lies inside the term's native form: an int() of a text longer than
    `native_parse.int_width` characters is the general case's (the split test below)."""
    call = getattr(term, "body", term)
    if getattr(call, "name", None) != "int" or text is None:
        return True
    return len(text) <= native_parse.int_width(native_parse.int_base(call.args[1:]))


def _agree(spark, texts, errors: int):
    """Each term of `_terms` over `texts`: Python's value on every row that returns one, and on
    every row that raises, an error naming the term, in Python's words."""
    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering
    from udflow.spark_backend.python_calls import PythonCalls

    table = jvm_frame(spark, [(i, t) for i, t in enumerate(texts)], "id long not null, s string")
    records = [{"id": i, "s": t} for i, t in enumerate(texts)]
    calls = PythonCalls(spark)
    terms = _terms()
    columns = {k: F.expr(NativeLowering(table.schema, f"term_{k} (test.py:{k + 1})", python_calls=calls,
                                        sample=tuple(records)).lower(t).sql)
               for k, t in enumerate(terms)}
    strict = [k for k, t in enumerate(terms) if native_parse.parses(getattr(t, "body", t))]
    assert strict and all("RLIKE" in str(columns[k]) for k in strict)  # the strict rows are Spark's
    table = calls.with_calls(table)
    outcomes = {k: [python_outcome(t, r) if _within(t, r["s"]) else ("outside", None) for r in records]
                for k, t in enumerate(terms)}
    selected = [F.when(F.col("id").isin([i for i, o in enumerate(outcomes[k]) if o[0] == "value"]), c).alias(f"t{k}")
                for k, c in columns.items()]
    rows = {r["id"]: r for r in table.select("id", *selected).collect()}
    for k, term in enumerate(terms):
        for i, outcome in enumerate(outcomes[k]):
            if outcome[0] == "value":
                assert same(outcome[1], rows[i][f"t{k}"]), (str(term), texts[i], outcome[1], rows[i][f"t{k}"])
                STATS["values"] += 1
    raising = [(k, i) for k in outcomes for i, o in enumerate(outcomes[k]) if o[0] == "raises"]
    for k, i in raising[:: max(1, len(raising) // errors)]:  # a query each: a spread of them
        message = native_error(table, columns[k], i)
        expected = f"term_{k} (test.py:{k + 1}) raised {outcomes[k][i][1]}\n"
        assert message.startswith(expected), (str(terms[k]), texts[i], message[:300])
        STATS["errors"] += 1


@pytest.mark.spark
def test_parses_and_try_statements_agree_with_python_on_texts_where_parsers_differ(spark):
    _agree(spark, [t for t in TEXTS if t is None or len(t) <= 18], errors=12)


_PIECES = st.sampled_from(["2025", "0000", "1900", "02", "29", "31", "12", "9", "-", ":", "/", " ", "\t", "T", ".",
                           "+", "e", "5", "0", "\u0665", "\uff15", "_", "\n", "nan", "0x", "0B", "0o", "fF", "z"])


@pytest.mark.spark
@settings(max_examples=2, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(st.lists(_PIECES, max_size=7).map("".join).filter(lambda t: len(t) <= 18), min_size=30,
                      max_size=30))
def test_parses_agree_with_python_on_drawn_texts(spark, texts):
    _agree(spark, texts, errors=4)


@pytest.mark.spark
def test_an_int_parsed_from_a_long_text_is_outside_the_native_form_and_the_operator_splits(spark):
    """`int()` of 19 characters may pass 64 bits: those rows run the function in Python."""
    rows = [{"k": i, "qty": q, "price": "1.5"} for i, q in enumerate(["3", " 4 ", "x", " 1234567890123456789"])]
    flow = uf.source("t", rows=rows).map(assigned)
    assert "Union" in uf.optimize(flow).best.to_spark(spark=spark)._jdf.queryExecution().analyzed().toString()
    assert sorted(map(repr, flow.collect())) == sorted(map(repr, flow.collect(engine="reference")))
    assert {r["qty"] for r in flow.collect()} == {3, 4, 1, 1234567890123456789}


def hex_bucket(r):
    return {**r, "bucket": int(r["h"], 16) % 10, "code": int(r["c"].strip(), 2)}


@pytest.mark.spark
def test_an_int_in_a_base_parses_strict_rows_in_spark_and_long_texts_in_python(spark):
    """`int(h, 16)` of 15 hex digits or fewer is conv() natively; an md5's 32 digits pass 64
    bits, so those rows run the function in Python (and its `% 10` is Python's)."""
    import hashlib

    texts = ["ff", "0x1F", "-0b1", " a ", hashlib.md5(b"x").hexdigest(), "7" * 15, "\u0663f"]
    rows = [{"k": i, "h": h, "c": c} for i, (h, c) in enumerate(zip(texts, ["101", " 0b11 ", "1_0", "0", "1" * 62,
                                                                          "-1", "0B1"]))]
    flow = uf.source("t", rows=rows).map(hex_bucket)
    assert flow.physical()[flow.root.label].describe() == "native"
    analysed = uf.optimize(flow).best.to_spark(spark=spark)._jdf.queryExecution().analyzed().toString()
    assert "conv(" in analysed and "Union" in analysed
    assert sorted(map(repr, flow.collect())) == sorted(map(repr, flow.collect(engine="reference")))
    assert [r["bucket"] for r in sorted(flow.collect(), key=lambda r: r["k"])] == [hex_bucket(r)["bucket"] for r in rows]


def test_int_widths_are_the_longest_texts_whose_value_fits_64_bits():
    for base in (2, 8, 10, 16, 36):
        width = native_parse.int_width(base)
        assert base ** width <= 2**63 < base ** (width + 1)
    assert native_parse.int_base((Lit(0),)) is None and native_parse.int_base((Field("b"),)) is None
    assert native_parse.strict_int("x", (Lit(True),)) is None  # int("1", True): a bool is no base here


@pytest.mark.spark
def test_the_shops_timestamp_helper_parses_strict_rows_in_spark(spark):
    rows = [{"k": i, "at": t} for i, t in enumerate(TEXTS[:20] + [None])]
    flow = uf.source("t", rows=rows).map(completed)
    assert flow.physical()[flow.root.label].describe() == "native"
    df = uf.optimize(flow).best.to_spark(spark=spark)
    analysed = df._jdf.queryExecution().analyzed().toString()
    assert "make_timestamp_ntz" in analysed and "RLIKE" in analysed.upper()
    assert sorted(map(repr, flow.collect())) == sorted(map(repr, flow.collect(engine="reference")))


@pytest.mark.spark
def test_a_try_in_the_function_itself_assigning_or_returning_runs_natively(spark):
    rows = [{"k": i, "qty": q, "price": p} for i, (q, p) in
            enumerate([("3", "1.5"), ("x", None), ("٣", " 2 "), ("-0", "1e2"), ("7", "abc")])]
    for fn in (assigned, returned_record):
        flow = uf.source("t", rows=rows).map(fn)
        assert flow.physical()[flow.root.label].describe() == "native"
        assert sorted(map(repr, flow.collect())) == sorted(map(repr, flow.collect(engine="reference")))


def test_the_forms_of_a_try_that_are_one_term():
    def form(text: str):
        return caught_form(ast.parse(textwrap.dedent(text)).body[0])

    assert form("try:\n x = f(a)\nexcept ValueError:\n x = None").catches[0].id == "ValueError"
    assert form("try:\n return f(a)\nexcept (ValueError, KeyError):\n return 0") is not None
    assert form("try:\n return {**r, 'a': f(a)}\nexcept:\n return {**r, 'a': 0}").catches == (None,)
    refused = [
        "try:\n x = f(a)\nexcept ValueError as e:\n x = None",  # the error bound
        "try:\n x = f(a)\nexcept ValueError:\n y = None",  # another name
        "try:\n x = f(a)\nexcept ValueError:\n x = None\nexcept TypeError:\n x = 0",  # two handlers
        "try:\n x = f(a)\nexcept ValueError:\n x = None\nelse:\n x = 1",
        "try:\n x = f(a)\n y = 2\nexcept ValueError:\n x = None",
        "try:\n x = f(a)\nexcept MyError:\n x = None",  # not a builtin class
        "try:\n return {**r, 'a': f(a), 'b': g(a)}\nexcept ValueError:\n return {**r, 'a': 0, 'b': 1}",
        "try:\n return {'a': f(a), 'b': g(a)}\nexcept ValueError:\n return {'a': 0, 'b': g(a)}",  # g may raise again
    ]
    assert [t for t in refused if form(t) is not None] == []


def test_a_try_catches_what_pythons_except_catches_and_nothing_else():
    term = Caught(Call("int", (Field("s"),)), ("ArithmeticError", "ValueError"), Lit(-1))
    assert evaluate(term, {"s": "x"}) == -1
    with pytest.raises(TypeError):
        evaluate(term, {"s": None})
    assert evaluate(Caught(Call("int", (Field("s"),)), ("Exception",), Lit(-1)), {"s": None}) == -1
    with pytest.raises(TypeError, match="not builtin exception classes"):
        Caught(Field("s"), ("NotAnError",), Lit(None))


def test_a_shadowed_exception_name_is_not_a_builtin_class():
    ValueError = KeyError  # noqa: N806, F841 - the handler below names this, not the builtin

    def shadowed(r):
        try:
            x = int(r["s"])
        except ValueError:
            x = 0
        return {**r, "x": x}

    props = analyze(shadowed, ["s"])
    assert props.model is None or not any(isinstance(t, Caught) for c in props.model.cases
                                          for t in dict(c.emit.fields).get("x", Lit(None)).walk())


def test_the_analysis_models_a_helpers_try_as_one_term():
    props = analyze(completed, ["at", "k"])
    caught = {t for c in props.model.cases for t in c.guard.walk() if isinstance(t, Caught)}
    assert [str(t) for t in caught] == ["(try datetime.strptime(r['at'].strip(), '%Y-%m-%d %H:%M:%S') except "
                                        "(ValueError, AttributeError): None)"]


def test_strict_layouts():
    assert native_parse.strptime_layout("%Y-%m-%d")[1] == {"Y": 1, "m": 6, "d": 9}
    assert native_parse.strptime_layout("%d/%m/%Y  %H")[1] == {"d": 1, "m": 4, "Y": 7, "H": 12}
    assert [f for f in ("%y-%m", "%Y %Y", "%Y-%b", "%Y%%", "%Y-\u00e9") if native_parse.strptime_layout(f)] == []


def teardown_module(module):
    if STATS:
        print("\nparses and try statements:", dict(STATS))
        assert STATS["errors"] >= 15 and STATS["values"] >= 300, STATS


@pytest.mark.spark
def test_a_parse_of_a_text_that_may_raise_raises_only_where_python_reads_it(spark):
    """The flag handing Python its rows is computed on every row: a text that may raise (None's
    strip) makes the call Python's whole, so a row that never reads it raises nothing."""
    rows = [{"flag": False, "s": None}, {"flag": True, "s": " 2025-01-02 "}]
    flow = uf.source("t", rows=rows).map(lambda r: {**r, "ts": datetime.datetime.strptime(r["s"].strip(), "%Y-%m-%d")
                                                   if r["flag"] else None})
    assert flow.collect(spark=spark) == flow.collect(engine="reference")
    flow = uf.source("t", rows=[{"flag": False, "s": None}, {"flag": True, "s": "1.5"}]).map(
        lambda r: {**r, "x": float(r["s"].strip()) if r["flag"] else None})
    assert flow.collect(spark=spark) == flow.collect(engine="reference")


def negative_default(r):
    try:
        n = int(r["s"][1:])
    except (TypeError, ValueError):
        n = -1
    return {**r, "n": n}


@pytest.mark.spark
def test_a_try_of_int_with_a_negative_constant_default_runs_natively(spark):
    """`-1` is the negation of a literal, a constant all the same: before, the step planned
    native took its Python fallback on every run (found by `NativeFallbackWarning`)."""
    import warnings

    from udflow.errors import NativeFallbackWarning

    rows = [{"id": i, "s": s} for i, s in enumerate(["x12", "x 7", None, "xab", "x" + "9" * 18, "", "x-3"])]
    flow = uf.source("t", rows=rows).map(negative_default)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NativeFallbackWarning)
        got = sorted(flow.collect(spark=spark), key=lambda r: r["id"])
    assert got == sorted(flow.collect(engine="reference"), key=lambda r: r["id"])
    assert [r["n"] for r in got] == [12, 7, -1, -1, int("9" * 18), -1, -3]
