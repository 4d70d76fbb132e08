"""A str's split read in place, `s.split(sep)[i]`, `len(s.split(sep))` and `j.join(s.split(sep))`,
and `j.join([a, b])` (`udflow.splits`),
natively (`native_splits`): Python's pieces (empty ones at the ends kept for a separator,
runs of Unicode whitespace for `split()`), Python's IndexError past them and AttributeError
on None, on Spark as in Python."""

from __future__ import annotations

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.expr import Field, Lit
from udflow.splits import JoinItems, SplitItem, SplitJoin, SplitLen
from tests.test_native_differential import native_error, python_outcome, same
from tests.frames import jvm_frame

TEXTS = ["a@b.com", "nobody", "@", "a@b@c", "", ",", "x, y,,z", " lead trail ", "\u2003uni\u2003code\u3000", "a\u00df@\u0130",
         "http://host/path", "///", "a::b::", "::", "tab\tsep\n", ":::", "a:::b", "\u00fc/\u00e9/\u00df", None]
TERMS = [SplitItem(Field("s"), sep, i) for sep in ("@", ",", "/", "::", None) for i in (0, 1, 2, -1, -2)] + \
    [SplitLen(Field("s"), sep) for sep in ("@", ",", "::", None)] + \
    [SplitItem(Lit("a,b"), ",", 1), SplitLen(Lit(""), None)] + \
    [SplitItem(Field("s"), sep, i, n) for sep in ("@", "::", "/") for i in (0, 1, -1) for n in (0, 1, 2)] + \
    [SplitLen(Field("s"), sep, n) for sep in (",", "/") for n in (0, 1)] + \
    [SplitItem(Field("s"), sep, i, 1, reverse=True) for sep in ("@", "::", "/") for i in (0, 1, -1, -2, 2)] + \
    [SplitJoin(Field("s"), sep, joiner) for sep in (",", "::", None) for joiner in (" ", "", "$1\\")] + \
    [JoinItems(",", (Field("s"), Lit("x"))), JoinItems("", (Lit("x"), Field("s"), Field("s")))]


def domain(r):
    return {**r, "domain": r["email"].split("@")[-1].lower(), "n": len(r["email"].split("."))}


@pytest.mark.spark
def test_split_items_and_lengths_agree_with_python(spark):
    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering

    table = jvm_frame(spark, list(enumerate(TEXTS)), "id long not null, s string")
    records = [{"id": i, "s": t} for i, t in enumerate(TEXTS)]
    columns = {k: F.expr(NativeLowering(table.schema, f"term_{k} (test.py:{k + 1})").lower(t).sql)
               for k, t in enumerate(TERMS)}
    outcomes = {k: [python_outcome(t, r) for r in records] for k, t in enumerate(TERMS)}
    selected = [F.when(F.col("id").isin([i for i, o in enumerate(outcomes[k]) if o[0] == "value"]), c).alias(f"t{k}")
                for k, c in columns.items()]
    rows = {r["id"]: r for r in table.select("id", *selected).collect()}
    compared = 0
    for k, term in enumerate(TERMS):
        for i, outcome in enumerate(outcomes[k]):
            if outcome[0] == "value":
                assert same(outcome[1], rows[i][f"t{k}"]), (str(term), TEXTS[i], outcome[1], rows[i][f"t{k}"])
                compared += 1
    raising = [(k, i) for k in outcomes for i, o in enumerate(outcomes[k]) if o[0] == "raises"]
    assert {o[1].split(":")[0] for k, i in raising for o in [outcomes[k][i]]} == {"IndexError", "AttributeError",
                                                                                  "TypeError"}
    for k, i in raising[:: max(1, len(raising) // 10)]:
        message = native_error(table, columns[k], i)
        assert message.startswith(f"term_{k} (test.py:{k + 1}) raised {outcomes[k][i][1]}\n"), message[:300]
    assert compared > 250


def test_the_analysis_models_a_split_read_in_place():
    model = analyze(domain).model
    (case,) = model.cases
    fields = dict(case.emit.fields)
    assert str(fields["n"]) == "len(r['email'].split('.'))"
    assert "r['email'].split('@')[-1]" in str(fields["domain"])


def first_and_rest(r):
    return {**r, "first": r["s"].split(" ", 1)[0], "rest": r["s"].split(" ", maxsplit=1)[-1], "n": len(r["s"].split("/", 2))}


def on_whitespace_once(r):
    return {**r, "x": r["s"].split(None, 1)[0]}


def with_a_negative_count(r):
    return {**r, "x": r["s"].split(" ", -1)[0]}


def with_a_computed_count(r):
    return {**r, "x": r["s"].split(" ", r["k"])[0]}


def test_a_split_with_a_maxsplit_of_a_constant_separator_is_a_term():
    (case,) = analyze(first_and_rest).model.cases
    fields = {name: str(term) for name, term in case.emit.fields}
    assert fields["first"] == "r['s'].split(' ', 1)[0]" and fields["rest"] == "r['s'].split(' ', 1)[-1]", fields
    assert fields["n"] == "len(r['s'].split('/', 2))", fields
    for fn in (on_whitespace_once, with_a_negative_count, with_a_computed_count):
        props = analyze(fn, {"s", "k"})
        assert props.model is None and "cannot express" in props.model_reason, (fn.__name__, props.model_reason)


def last_parts(r):
    return {**r, "leaf": r["path"].rsplit("/", 1)[-1], "parent": r["path"].rsplit("/", maxsplit=1)[0]}


def rsplit_unmodelled(r):
    return {**r, "a": r["s"].rsplit("/")[0], "b": r["s"].rsplit("/", 2)[0], "c": r["s"].rsplit(None, 1)[0]}


def test_an_rsplit_once_of_a_constant_separator_is_a_term():
    (case,) = analyze(last_parts, {"path"}).model.cases
    fields = {name: str(term) for name, term in case.emit.fields}
    assert fields == {"leaf": "r['path'].rsplit('/', 1)[-1]", "parent": "r['path'].rsplit('/', 1)[0]"}, fields
    props = analyze(rsplit_unmodelled, {"s"})  # another maxsplit, or runs of whitespace: no term
    assert props.model is None, props.model


@pytest.mark.spark
def test_an_email_domain_runs_natively_its_case_mapping_on_ascii_rows(spark):
    rows = [{"email": e} for e in ("A@Example.COM", "x@\u0130stanbul.tr", "none", "@")]
    flow = uf.source("t", rows=rows).map(domain)
    assert flow.physical()[flow.root.label].describe() == "native"
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, flow.collect(engine="reference")))


def tidied(r):
    return {**r, "name": " ".join(r["name"].split()), "tags": ",".join([r["category"], r["brand"]]),
            "path": "/".join(r["path"].split("\\"))}


def test_the_analysis_models_a_join_of_a_split_and_of_a_list_display():
    fields = dict(analyze(tidied).model.cases[0].emit.fields)
    assert fields["name"] == SplitJoin(Field("name"), None, " ")
    assert fields["tags"] == JoinItems(",", (Field("category"), Field("brand")))
    assert fields["path"] == SplitJoin(Field("path"), "\\", "/")
