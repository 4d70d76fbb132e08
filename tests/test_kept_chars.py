"""`"".join(c for c in s if <tests of c>)` runs natively (issue 29, item 3): one
regexp_replace drops the characters the tests reject. Membership in constant text is exact
on every string (non-ASCII and beyond the Basic Multilingual Plane included); a str method
of the character follows Python's Unicode tables, so its form holds on ASCII rows and Python
computes the others. None raises Python's TypeError; a comprehension of another shape has
no such term."""

import string
import unicodedata

import pytest

import udflow as uf
from udflow import kept_chars
from udflow.analysis import analyze
from udflow.expr import Call, Field, Lit, evaluate
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines
from tests.test_native_differential import native_error
from tests.frames import jvm_frame

PUNCTUATION = ".,;:!?"
TEXTS = ["", "abc", "+33 (0)6 12-34", "Hello, World!", "٣٤٥ ²", "naïve café; ok.", "a-b_c d\te\u2003f",
         "𝔘nicode 🎉.", "ǅungla ß SS", "\x1c\x1f\x00", "1²³4", "e\u0301te\u0308 \U0001d165x"]


def digits(r):
    return {**r, "phone": "".join(ch for ch in r["phone"] if ch.isdigit())}


def slug(r):
    return {**r, "slug": "".join([c for c in r["name"].lower() if c.isalnum() or c in "-_"])}


def unpunctuated(r):
    return {**r, "text": "".join(c for c in r["name"] if c not in string.punctuation)}


def squeezed(r):
    return {**r, "text": "".join(c for c in r["name"] if not c.isspace() if c not in PUNCTUATION)}


def has_letters(r):
    return "".join(c for c in r["name"] if c.isalpha()) != ""


def strip_accents(r):
    text = unicodedata.normalize("NFKD", r["name"])
    return {**r, "text": "".join(c for c in text if not unicodedata.combining(c))}


def dashed(r):
    return {**r, "text": "-".join(c for c in r["name"] if c.isdigit())}


def upper_of_each(r):
    return {**r, "text": "".join(c.upper() for c in r["name"] if c.isalpha())}


def test_the_comprehension_is_one_term_with_its_tests_and_other_shapes_have_none():
    written = dict(analyze(slug, ["name"]).model.cases[0].emit.fields)
    assert written["slug"] == Call("chars.keep", (Call("str.lower", (Field("name"),)), Lit("or"), Lit("isalnum"),
                                                  Lit(""), Lit("in"), Lit("-_")))
    written = dict(analyze(squeezed, ["name"]).model.cases[0].emit.fields)
    assert written["text"].args[1:] == (Lit("and"), Lit("not isspace"), Lit(""), Lit("not in"), Lit(PUNCTUATION))
    for fn in (dashed, upper_of_each):
        assert analyze(fn, ["name"]).model is None, fn


@pytest.mark.parametrize("op, tests", [
    ("and", ("in", "abc")), ("and", ("not in", "abc")), ("or", ("in", "ab", "in", "bc")),
    ("and", ("in", "ab", "not in", "bc")), ("or", ("not in", "ab", "in", "b")), ("and", ("in", "")),
    ("or", ("not in", "a", "not in", "b")),
])
def test_membership_alone_gives_the_kept_set_of_every_character(op, tests):
    chars, complemented = kept_chars.by_membership(op, tests)
    for c in "abcdz\u00e9🎉":
        assert ((c in chars) != complemented) == kept_chars.passes(c, op, tests), (op, tests, c)


@pytest.mark.spark
def test_every_form_is_pythons_on_every_text_and_none_raises_type_error(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from udflow.spark_backend.native import NativeLowering

    rows = [(i, s) for i, s in enumerate(TEXTS + [None])]
    frame = jvm_frame(spark, rows, StructType([StructField("id", LongType(), False),
                                                    StructField("s", StringType(), True)]))
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    exact = [("and", "in", "-_ 1"), ("and", "not in", string.punctuation), ("or", "in", "🎉", "in", "é"),
             ("and", "not in", "ß", "not in", "\u2003\t"), ("and", "not combining", ""),
             ("or", "combining", "", "in", "a"), ("and", "in", "")]
    terms = [Call("chars.keep", (Field("s"), *map(Lit, spec))) for spec in exact]
    columns = [F.expr(lowering.lower(t).sql) for t in terms]
    got = {r[0]: r[1:] for r in frame.where("s IS NOT NULL").select("id", *columns).collect()}
    for i, s in rows[:-1]:
        assert list(got[i]) == [evaluate(t, {"s": s}) for t in terms], s
    assert "TypeError: 'NoneType' object is not iterable" in native_error(frame, columns[0], len(TEXTS))
    # a method's form, on the ASCII rows (the others: Python's call in a plan, `native_case`)
    method = Call("chars.keep", (Field("s"), Lit("or"), Lit("isdigit"), Lit(""), Lit("not isalpha"), Lit("")))
    column = F.expr(lowering.lower(method).sql)
    ascii_rows = [i for i, s in rows[:-1] if s.isascii()]
    got = dict(frame.where(F.col("id").isin(ascii_rows)).select("id", column).collect())
    assert got == {i: evaluate(method, {"s": rows[i][1]}) for i in ascii_rows}


ROWS = [{"id": i, "phone": s, "name": s} for i, s in enumerate(TEXTS)]


@pytest.mark.spark
@pytest.mark.parametrize("build", [lambda s: s.map(digits), lambda s: s.map(slug), lambda s: s.map(unpunctuated),
                                   lambda s: s.map(squeezed), lambda s: s.filter(has_letters)])
def test_a_flow_of_kept_characters_runs_natively_with_pythons_records(spark, build):
    flow = build(uf.source("texts", rows=ROWS))
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert spark_rows == python_rows


@pytest.mark.spark
def test_accents_stripped_after_python_normalizes_are_dropped_natively(spark):
    rows = [{"id": i, "name": s} for i, s in enumerate(["Zürich", "São Paulo", "Ångström", "ǅ", "plain", ""])]
    flow = uf.source("cities", rows=rows).map(strip_accents)
    step = flow.physical().root
    assert step.how == "native" and [t.split(" ")[0] for t in step.python_terms] == ["unicodedata.normalize"], step
    assert sorted(flow.collect(spark=spark), key=lambda r: r["id"]) == \
        sorted(flow.collect(engine="reference"), key=lambda r: r["id"])
    assert [r["text"] for r in sorted(flow.collect(spark=spark), key=lambda r: r["id"])][:3] == \
        ["Zurich", "Sao Paulo", "Angstrom"]


@pytest.mark.spark
def test_none_is_not_iterable_on_either_engine():
    rows = [{"id": 1, "phone": "12", "name": "a"}, {"id": 2, "phone": None, "name": "b"}]
    said = raised_on_both_engines(uf.source("texts", rows=rows).map(digits))
    assert said[0] == said[1] and said[0].startswith("TypeError: 'NoneType' object is not iterable"), said
