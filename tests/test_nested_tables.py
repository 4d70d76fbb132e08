"""Look-ups in a constant dict of dicts run natively (issue 29, item 3): one CASE over the
outer key, each branch its inner dict's CASE, with Python's value on every key (missing
ones included), Python's KeyError for `[]`, and the snapshot checked inner dicts and all: a
table changed since the analysis runs the function in Python, which reads it as it is."""

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.expr import Field, Lit
from udflow.tables import NestedGet, Table
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines

SHIPPING = {"FR": {"std": 4.9, "express": 9.9}, "DE": {"std": 5.9}, "US": {}, 7: {"std": 1.5}}


def fee(r):
    return {**r, "fee": SHIPPING.get(r["country"], {}).get(r["speed"], 0.0)}


def fee_or_none(r):
    return {**r, "fee": SHIPPING[r["country"]].get(r["speed"])}


def strict_fee(r):
    return {**r, "fee": SHIPPING[r["country"]][r["speed"]]}


def costly(r):
    return r["country"] in SHIPPING and SHIPPING.get(r["country"], {}).get(r["speed"], 0.0) > 5


PROFILES = {"FR": {"vat": 0.2, "currency": "EUR"}, "US": {"vat": 0.0, "currency": "USD"}, "DE": {"currency": "EUR"}}


def vat(r):
    return {**r, "vat": PROFILES.get(r["country"], {}).get("vat", r["fallback"])}


def strict_vat(r):
    return {**r, "vat": PROFILES[r["country"]]["vat"]}


def other_default(r):
    return {**r, "fee": SHIPPING.get(r["country"], {"std": 1.0}).get(r["speed"], 0.0)}


def test_each_form_is_one_term_and_an_outer_default_other_than_the_empty_dict_is_none():
    written = dict(analyze(fee, ["country", "speed"]).model.cases[0].emit.fields)
    table = Table.of("SHIPPING", SHIPPING)
    assert written["fee"] == NestedGet(table, Field("country"), "get", Field("speed"), "get", Lit(0.0))
    assert str(written["fee"]) == "SHIPPING.get(r['country'], {}).get(r['speed'], 0.0)"
    written = dict(analyze(strict_fee, ["country", "speed"]).model.cases[0].emit.fields)
    assert (written["fee"].outer, written["fee"].inner) == ("item", "item")
    model = analyze(other_default, ["country", "speed"]).model
    assert model is None or not any(isinstance(e, NestedGet) for c in model.cases for _, t in c.emit.fields
                                    for e in t.walk())


def test_the_snapshot_covers_the_inner_dicts():
    inner = {"a": 1}
    table = Table.of("T", {"x": inner, "y": {}})
    assert table.kind == "nested" and table.unchanged()
    inner["a"] = 2
    assert not table.unchanged()
    assert Table.of("T", {"x": {"a": [1]}}) is None  # an inner value that is no literal: no table


ROWS = [{"id": i, "country": c, "speed": s} for i, (c, s) in enumerate([
    ("FR", "std"), ("FR", "express"), ("DE", "std"), ("DE", "express"), ("US", "std"), ("XX", "std"), (None, "std"),
    ("FR", None)])]


@pytest.mark.spark
@pytest.mark.parametrize("fn, kind, rows", [(fee, "map", ROWS), (fee_or_none, "map", ROWS[:5]),
                                            (costly, "filter", ROWS)])
def test_a_flow_of_nested_look_ups_runs_natively_with_pythons_records(spark, fn, kind, rows):
    source = uf.source("orders", rows=rows)
    flow = source.map(fn) if kind == "map" else source.filter(fn)
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert spark_rows == python_rows


VAT_ROWS = [{"id": i, "country": c, "fallback": f} for i, (c, f) in enumerate(
    [("FR", 0.5), ("US", 0.5), ("DE", 0.25), ("XX", 0.125), (None, 1.0)])]


@pytest.mark.spark
def test_a_constant_inner_key_is_found_on_the_driver_in_inner_dicts_of_mixed_value_types(spark):
    flow = uf.source("orders", rows=VAT_ROWS).map(vat)
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert spark_rows == python_rows
    said = raised_on_both_engines(uf.source("orders", rows=VAT_ROWS[:3]).map(strict_vat))
    assert all(s.startswith("KeyError: 'vat'") for s in said), said


@pytest.mark.spark
@pytest.mark.parametrize("rows, key", [(ROWS[:4], "'express'"), (ROWS[5:6], "'XX'")])
def test_a_missing_key_raises_pythons_key_error_on_both_engines(rows, key):
    said = raised_on_both_engines(uf.source("orders", rows=rows).map(strict_fee))
    assert all(s.startswith(f"KeyError: {key}") for s in said), said


@pytest.mark.spark
def test_a_table_changed_after_the_analysis_runs_in_python_with_its_new_values(spark):
    flow = uf.source("orders", rows=ROWS[:4]).map(fee)
    assert flow.physical().root.how == "native"
    SHIPPING["DE"]["express"] = 7.5
    try:
        got = {r["id"]: r["fee"] for r in flow.collect(spark=spark)}
    finally:
        del SHIPPING["DE"]["express"]
    assert got[3] == 7.5
