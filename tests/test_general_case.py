"""The rows a native form cannot hold run in Python (issue 29, item 4): `native_spans`,
`general_case`.

A native int term's guards of what a long and a double hold (an int past 64 bits, an
`int / int` past 2**53) once raised where Python returns a value. Now the operator's
normal case bounds the int columns it reads, the native form runs on the rows inside
the bound (where the spans prove those guards never fire), and the function runs in
Python on the others: every row gets Python's value, or Python's error.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import IntegerType, LongType, StructField, StructType

import udflow as uf
from udflow.errors import UdfRuntimeError
from udflow.expr import Arith, Field
from udflow.spark_backend import native_spans
from udflow.spark_backend.lower import Lowering
from udflow.spark_backend.native import NativeLowering
from tests.spark_plans import union_sides

BIG = 2**63 - 1
SMALLEST = -(2**63)


def _run(spark, flow):
    """The flow lowered as its physical plan says, its records, and the lowering."""
    physical = flow.physical()
    lowering = Lowering(spark, physical)
    rows = lowering.records(flow.root)
    assert flow.root.label in lowering.native_labels, (physical[flow.root.label].reason, lowering.python_reasons)
    return lowering, rows


def _bag(rows):
    return sorted(repr(sorted((k, (type(v).__name__, v)) for k, v in r.items())) for r in rows)


def _same_as_python(spark, flow) -> str:
    """The flow's records on Spark are the reference interpreter's (values and types); what the
    lowering says of its root's general case."""
    lowering, rows = _run(spark, flow)
    assert _bag(rows) == _bag(flow.collect(engine="reference"))
    return lowering.general_cases.get(flow.root.label, "")


def _error(flow, **how) -> str:
    with pytest.raises(UdfRuntimeError) as err:
        flow.collect(**how)
    return str(err.value).splitlines()[0].split(" raised ", 1)[1]


def past_64_bits(r):
    return {**r, "y": r["x"] + 1 - 2 / 3}


def exact_ratio(r):
    return {**r, "q": r["a"] / r["b"]}


def huge_product(r):
    return r["a"] * r["b"] > 4_000_000_000_000_000_000


def rate(r):
    minutes = (r["off"] - r["on"]) / 60
    return {**r, "minutes": minutes, "per_hour": r["miles"] / (minutes / 60)}


def halves(r):
    for word in r["s"].split():
        yield {**r, "word": word, "half": (r["x"] + 1) / 2}


def tiered(r):
    if r["x"] > 1000:
        yield {**r, "y": r["x"] * 3 / 4}
    elif r["x"] >= -1000:
        yield {**r, "y": (r["x"] - 1) / 2}


def test_an_int_intermediate_past_64_bits_gives_pythons_float(spark):
    """The issue's `x + 1 - 2/3`: at 2**63 - 1 Python's int grows to 2**63 and the float is
    9.223372036854776e18; the native form could only raise there."""
    rows = [{"x": 1}, {"x": BIG}, {"x": SMALLEST}, {"x": 2**62}, {"x": -5}]
    said = _same_as_python(spark, uf.source("t", rows=rows).map(past_64_bits))
    assert said.startswith("rows where x lie beyond ±2**62 run in Python"), said


def test_a_second_lowering_takes_the_normal_case_found_before_and_lowers_the_operator_once(spark, monkeypatch):
    """`general_case.split` remembers the normal case of a model over some columns: lowered
    again, the operator is lowered over those rows only (once, not twice), where that
    lowering finds the same normal case; a guess it does not confirm is set aside."""
    from udflow.spark_backend import native_ops

    runs = []
    real_run = native_ops.run
    monkeypatch.setattr(native_ops, "run", lambda df, *a, **k: runs.append(df) or real_run(df, *a, **k))
    rows = [{"x": 1}, {"x": BIG}, {"x": SMALLEST}, {"x": 2**62}, {"x": -7}]
    flow = uf.source("t", rows=rows).map(past_64_bits)
    said = _same_as_python(spark, flow)
    first = len(runs)
    assert _same_as_python(spark, flow) == said and len(runs) - first == 1, (first, len(runs))
    assert first in (1, 2)  # 1: an earlier test of this session left the guess
    small = uf.source("t", rows=[{"x": 1}, {"x": -7}]).map(past_64_bits)  # its data bound x: no split
    assert _same_as_python(spark, small) == ""


def test_an_int_true_division_past_2_53_is_pythons_correctly_rounded_one(spark):
    rows = [{"a": 2**53 + 1, "b": 3}, {"a": BIG, "b": BIG - 2}, {"a": 7, "b": 2}, {"a": SMALLEST, "b": -7}]
    said = _same_as_python(spark, uf.source("t", rows=rows).map(exact_ratio))
    assert "beyond ±2**53" in said and "a, b" in said, said


def test_a_filter_keeps_the_rows_python_keeps_where_a_product_leaves_64_bits(spark):
    rows = [{"a": 2**40, "b": 2**40}, {"a": 3, "b": 4}, {"a": -(2**62), "b": 4}, {"a": 2**33, "b": 2**33}]
    said = _same_as_python(spark, uf.source("t", rows=rows).filter(huge_product))
    assert "beyond ±2**31" in said, said


def test_a_term_computed_once_for_later_fields_keeps_its_bound(spark):
    """`minutes` is a hidden column read by `per_hour` (`native_ops._shared_below`): its span
    carries the bound of the columns it was computed from."""
    rows = [{"on": -10, "off": BIG, "miles": 3.0}, {"on": 0, "off": 600, "miles": 12.5},
            {"on": SMALLEST, "off": 2**62, "miles": 1.0}]
    said = _same_as_python(spark, uf.source("t", rows=rows).map(rate))
    assert "off, on lie beyond ±2**52" in said, said


def test_an_explosions_fields_and_a_maps_cases_get_pythons_values(spark):
    rows = [{"s": "a b", "x": BIG}, {"s": "c", "x": 4}, {"s": "", "x": BIG}]
    assert _same_as_python(spark, uf.source("t", rows=rows).map(halves))
    rows = [{"x": BIG}, {"x": 5000}, {"x": SMALLEST}, {"x": 3}, {"x": -2000}]
    assert _same_as_python(spark, uf.source("t", rows=rows).map(tiered))


def _sides(lowering, flow) -> tuple[str, str]:
    """The Spark plans of the root's native side and of the rows its function runs in Python."""
    return union_sides(lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString())


def scaled_and_shifted(r):
    return {**r, "y": (r["a"] * 3 + r["b"]) // 7, "z": (r["a"] << 2) - r["b"], "w": abs(r["a"]) / 3}


def test_a_true_divisions_bound_check_raises_no_operand_error_ahead_of_earlier_fields(spark):
    """`abs(a) / 3` checks its operand within ±2**53 (to run the rows past it in Python);
    written as BETWEEN, Spark 4 computed `abs(a)` in a projection below, so a None `a` raised
    abs's TypeError ahead of `a * 3`'s, the field written first, as Python raises it."""
    flow = uf.source("t", rows=[{"a": 2**31, "b": 1}, {"a": None, "b": -1}]).map(scaled_and_shifted)
    assert _error(flow, spark=spark) == _error(flow, engine="reference")
    assert "for *: 'NoneType' and 'int'" in _error(flow, spark=spark)


EXTREME_INTS = st.sampled_from([0, 1, -1, 7, 2**31, -(2**31), 2**52 + 1, 2**53 + 1, 2**60, -(2**61), BIG, SMALLEST])


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.fixed_dictionaries({"a": EXTREME_INTS, "b": EXTREME_INTS}), min_size=1, max_size=6))
def test_the_native_side_without_its_proven_guards_gives_pythons_rows(spark, rows):
    """Rows on both sides of the bounds (and past 64 bits in Python): the native side, which
    writes none of the guards its normal case proves, still returns what Python returns.
    (A result past 64 bits is no column's value: a named error, tested elsewhere.)"""
    assume(all(-(2**63) <= v < 2**63 for r in rows for v in scaled_and_shifted(r).values() if isinstance(v, int)))
    _same_as_python(spark, uf.source("t", rows=rows).map(scaled_and_shifted))


@pytest.mark.parametrize("fn, rows", [
    (past_64_bits, [{"x": BIG, "note": "n"}, {"x": 3, "note": None}]),
    (halves, [{"s": "a b", "x": BIG, "note": "n"}, {"s": "c d", "x": 4, "note": "m"}]),
], ids=["map", "explosion"])
def test_the_native_side_writes_no_guard_its_normal_case_proves(spark, fn, rows):
    """The native side is lowered over the rows within the bound only, where `x + 1` cannot
    leave 64 bits nor `(x + 1) / 2` pass 2**53: no overflow check and no raise per row, and
    so no filter keeping a raising column computed."""
    flow = uf.source("t", rows=rows).map(fn)
    lowering, rows_out = _run(spark, flow)
    assert _bag(rows_out) == _bag(flow.collect(engine="reference"))
    native, _ = _sides(lowering, flow)
    assert re.search(r"\(x#\d+L <= \d+\)", native), native  # the bound's filter
    assert "raise_error" not in native and "SPARK_PARTITION_ID" not in native, native


@pytest.mark.parametrize("fn, rows, reads", [
    (halves, [{"s": "a b", "x": BIG, "note": "n" * 50}, {"s": "c", "x": 4, "note": "m"}], ["s", "x"]),
    (past_64_bits, [{"x": BIG, "note": "n" * 50}, {"x": 3, "note": None}], ["x"]),
    (huge_product, [{"a": BIG, "b": 2, "note": "n"}, {"a": 2, "b": 3, "note": "m"}], ["a", "b"]),
], ids=["explosion", "map", "filter"])
def test_the_python_side_is_shown_the_fields_it_reads_and_the_others_stay_native(spark, fn, rows, reads):
    """The rows outside the bound cross to Python as the columns the function reads (a scalar
    UDF), not as whole records: `note`, which it only copies, never leaves the JVM."""
    base = uf.source("t", rows=rows)
    flow = base.filter(fn) if fn is huge_product else base.map(fn)
    lowering, rows_out = _run(spark, flow)
    assert _bag(rows_out) == _bag(flow.collect(engine="reference"))
    _, side = _sides(lowering, flow)
    call = re.search(r"ArrowEvalPython \[run\(([^)]*)\)", side)
    assert "MapInArrow" not in side and call, side
    assert [re.sub(r"#\d+L?$", "", c) for c in call.group(1).split(", ")] == reads, side


def test_a_filter_above_the_python_side_does_not_spare_it_a_row(spark):
    """The Python side's call is pinned (nondeterministic): a later filter on a field it only
    copies is not pushed below it, so a row Python raises on raises, as Python does."""
    rows = [{"a": BIG, "b": 0, "keep": False}, {"a": 2, "b": 1, "keep": True}]
    flow = uf.source("t", rows=rows).map(exact_ratio).filter(lambda r: r["keep"])
    assert _error(flow, engine="reference") == _error(flow, spark=spark)


def test_pythons_errors_stay_pythons_on_both_sides_of_the_bound(spark):
    """A row outside the bound raises in Python what Python raises (ZeroDivisionError); a None
    inside it raises natively Python's TypeError."""
    for rows in ([{"a": BIG, "b": 0}], [{"a": 2, "b": 0}], [{"a": None, "b": 1}, {"a": BIG, "b": 2}]):
        flow = uf.source("t", rows=rows).map(exact_ratio)
        assert _error(flow, engine="reference") == _error(flow, spark=spark)


def test_a_sum_of_int_columns_needs_no_guard_and_no_bound():
    """An `int` (32-bit) column's sums and products of two fit 64 bits whatever the data: the
    spans prove it, no guard is written and no row needs Python."""
    schema = StructType([StructField("i", IntegerType(), False), StructField("j", IntegerType(), False),
                         StructField("n", LongType(), False)])
    lowering = NativeLowering(schema, "f")
    product = lowering.lower(Arith("+", Arith("*", Field("i"), Field("j")), Field("i")))
    assert "raise_error" not in product.sql and "try_" not in product.sql, product.sql
    assert not lowering.limits
    lowering.lower(Arith("+", Field("n"), Field("i")))
    assert native_spans.normal_case(lowering.limits).bound == 2**62


def test_a_columns_span_is_made_when_read_and_a_given_one_comes_first():
    schema = StructType([StructField("i", IntegerType()), StructField("n", LongType()), StructField("g", LongType())])
    spans = native_spans.ColumnSpans({f.name: f for f in schema.fields}, {"n": 5}, {"g": None})
    assert spans["i"] == native_spans.Span.column("i", IntegerType())
    assert spans["n"] == native_spans.Span.column("n", LongType(), 5) and spans["g"] is None
    assert spans.get("absent") is None and list(spans) == ["i", "n", "g"] and len(spans) == 3
    carried = native_spans.Restricted(spans, ["n"])
    assert carried["n"] == spans["n"] and carried.get("i") is None and "i" not in carried


def test_the_other_side_reads_no_row_group_the_bound_excludes(spark, tmp_path):
    """The bound is a comparison with constants: Spark pushes it into the Parquet scan, so the
    side of the rows outside it skips the row groups whose statistics lie inside."""
    path = str(tmp_path / "t.parquet")
    spark.createDataFrame([(1, 2), (BIG, 3)], "a long, b long").write.parquet(path)
    flow = uf.source("t", path=path).map(exact_ratio)
    lowering, rows = _run(spark, flow)
    assert sorted(r["q"] for r in rows) == sorted(r["q"] for r in flow.collect(engine="reference"))
    plan = lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    assert "Union" in plan and "GreaterThan(" in plan and str(2**53) in plan, plan


def test_the_normal_case_is_the_largest_bound_under_which_the_most_limits_hold():
    schema = StructType([StructField("a", LongType()), StructField("b", LongType())])
    lowering = NativeLowering(schema, "f")
    lowering.lower(Arith("+", Field("a"), Field("b")))  # holds under 2**62
    lowering.lower(Arith("*", Field("a"), Field("b")))  # under 2**31
    case = native_spans.normal_case(lowering.limits)
    assert (case.bound, case.columns, case.held, case.limits) == (2**31, ("a", "b"), 2, 2)
    assert "(`a` IS NULL OR `a` BETWEEN CAST(-2147483648 AS BIGINT) AND CAST(2147483648 AS BIGINT))" in case.rows()


def test_where_the_data_proves_the_bound_no_row_needs_python(spark, tmp_path):
    """A parquet column's row-group statistics (or a `rows=` source's values) bound every value:
    one native side, no union; its guards stay written (files changed since would raise)."""
    path = str(tmp_path / "small.parquet")
    spark.createDataFrame([(1, 2), (2**40, 3)], "a long, b long").write.parquet(path)
    for source in (uf.source("t", path=path), uf.source("t", rows=[{"a": 2**40, "b": 3}, {"a": -7, "b": 2}])):
        flow = source.map(exact_ratio)
        lowering, rows = _run(spark, flow)
        assert flow.root.label not in lowering.general_cases
        assert "Union" not in lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
        assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_a_source_fields_magnitude_is_what_its_data_proves(tmp_path):
    from udflow.field_types import source_field_types

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "m.parquet")
    pq.write_table(pa.table({"a": [3, -2**40, None], "f": [1.5, 2.0, None], "n": [None, None, None],
                             "d": [Decimal("-12.50"), Decimal("3.25"), None]},
                            schema=pa.schema([("a", pa.int64()), ("f", pa.float64()), ("n", pa.int64()),
                                              ("d", pa.decimal128(10, 2))])), path)
    types = source_field_types(uf.source("t", path=path).root)
    assert (types["a"].magnitude, types["f"].magnitude, types["n"].magnitude) == (2**40, None, None)
    assert types["d"].magnitude == Decimal("12.50")
    rows = source_field_types(uf.source("t", rows=[{"a": -9, "b": True}, {"a": None, "b": False}]).root)
    assert (rows["a"].magnitude, rows["b"].magnitude) == (9, 1)


def test_a_small_csvs_values_bound_its_columns_a_large_ones_do_not(tmp_path, monkeypatch):
    from udflow import field_types

    path = tmp_path / "m.csv"
    path.write_text("k,score,price,name\n1,-7,12.50,a\n2,,3.25,b\n3,5,,c\n")
    source = uf.source("m", path=str(path), schema="k bigint, score bigint, price decimal(10,2), name string").root
    types = field_types.source_field_types(source)
    assert (types["k"].magnitude, types["score"].magnitude, types["name"].magnitude) == (3, 7, None)
    assert types["price"].magnitude == Decimal("12.50")
    monkeypatch.setattr(field_types, "CSV_SCANNED", 10)  # now a file too large to read on each lowering
    assert field_types.source_field_types(source)["score"].magnitude is None


def halves_of_rounded(r):
    return {**r, "half": round(r["rating"] * 2) / 2}


def cell(r):
    return {**r, "cell": f"{math.floor(r['lat'])}:{math.ceil(r['lon'])}"}


def seconds_between(r):
    return {**r, "seconds": (r["end"] - r["start"]).total_seconds()}


def mean_of_present(r):
    return {**r, "mean": ((r["a"] or 0) + (r["b"] or 0)) / 2}


@pytest.mark.parametrize("fn, rows, bound", [
    (halves_of_rounded, [{"rating": 1e16}, {"rating": 4.3}, {"rating": -2.5e300}, {"rating": 0.25}], "±2**51"),
    (cell, [{"lat": 1e308, "lon": -3.5}, {"lat": 48.85, "lon": 2.35}, {"lat": -1e19, "lon": 1e200}], "±2**62"),
    (seconds_between, [{"start": dt.datetime(1, 1, 1), "end": dt.datetime(9999, 12, 31, 23, 59, 59, 999999)},
                       {"start": dt.datetime(2024, 1, 1), "end": dt.datetime(2024, 1, 2, 0, 0, 0, 1)}],
     "microseconds from 1970"),
    (mean_of_present, [{"a": BIG, "b": None}, {"a": BIG, "b": BIG}, {"a": 3, "b": 4}], "±2**52"),
])
def test_floats_datetimes_and_or_operands_have_spans_too(spark, fn, rows, bound):
    """round and floor of a float past 2**63, a datetime difference past 2**53 microseconds,
    `a or 0` past 64 bits: Python's value, from the rows outside the bound."""
    said = _same_as_python(spark, uf.source("t", rows=rows).map(fn))
    assert bound in said, said


def test_a_nan_outside_the_bound_raises_pythons_error(spark):
    flow = uf.source("t", rows=[{"lat": float("nan"), "lon": 1.0}, {"lat": 2.0, "lon": 1.0}]).map(cell)
    assert _error(flow, engine="reference") == _error(flow, spark=spark)


def test_a_dataframe_read_from_parquet_proves_its_columns_bound_a_computed_one_does_not(spark, tmp_path):
    """`file_stats`: a DataFrame source's column that is, unchanged, a Parquet file's column is
    bounded by the file's statistics (no union); one computed in the DataFrame is not."""
    from pyspark.sql import functions as F

    from udflow.spark_backend.file_stats import dataframe_magnitudes

    path = str(tmp_path / "df.parquet")
    spark.createDataFrame([(1, 2), (2**40, 3)], "a long, b long").write.parquet(path)
    read = spark.read.parquet(path).filter("b > 0")
    computed = read.withColumn("a", F.col("a") * 2**20)
    assert dataframe_magnitudes(read) == {"a": 2**40, "b": 3}
    assert dataframe_magnitudes(computed) == {"b": 3}
    for df, split in ((read, False), (computed, True)):
        flow = uf.source("t", dataframe=df).map(exact_ratio)
        lowering, rows = _run(spark, flow)
        assert (flow.root.label in lowering.general_cases) == split
        assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_a_small_csv_dataframe_proves_its_int_and_decimal_columns_bound(spark, tmp_path):
    """A DataFrame read from a CSV file of at most 8 MiB: its values read by pyarrow with the
    read's options and Spark's types prove each int and Decimal column's bound, as a Parquet
    footer does; an option udflow does not read alike, or a value pyarrow reads otherwise,
    proves nothing."""
    from udflow.spark_backend.file_stats import dataframe_magnitudes

    path = tmp_path / "t.csv"
    path.write_text("k;a;d;s\n1;-70000000000;12.50;x\n2;;-3.25;y\n3;4;;z\n")
    def read(file, **options):  # a DataFrameReader keeps the options set on it: one per read
        reader = spark.read.option("header", "true").option("sep", ";")
        return reader.options(**options).schema("k INT, a BIGINT, d DECIMAL(9,2), s STRING").csv(str(file))

    assert dataframe_magnitudes(read(path).select("a", "d", "k")) == {"a": 70000000000, "d": Decimal("12.50"), "k": 3}
    assert dataframe_magnitudes(read(path, multiLine="true")) == {}
    malformed = tmp_path / "malformed.csv"
    malformed.write_text("k;a;d;s\nx1;2;3;x\n")  # Spark reads null there; pyarrow refuses the file
    assert dataframe_magnitudes(read(malformed)) == {}
    extreme = tmp_path / "extreme.csv"
    extreme.write_text("k;a;d;s\n1;-9223372036854775808;0;x\n")  # |-2**63| is past the longs Arrow's abs keeps
    assert dataframe_magnitudes(read(extreme))["a"] == 2**63
    flow = uf.source("t", dataframe=read(path)).map(lambda r: {**r, "y": (r["a"] or 0) * 3 // 2})
    lowering, rows = _run(spark, flow)
    assert flow.root.label not in lowering.general_cases  # 7e10 * 3 fits 64 bits: no split
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


THRESHOLD = Decimal("1E+20")


def big_order(r):
    return r["unit_price"] * r["qty"] > THRESHOLD


def line_total(r):
    return {**r, "total": r["unit_price"] * r["qty"]}


def test_a_decimal_past_28_digits_is_pythons_rounded_one_or_refused_by_name(spark):
    """A Decimal product past 28 digits, which Python rounds: its rows run in Python. As a
    filter's test, Python's answer; as a written field, a value a decimal(28, 2) column cannot
    hold (27 digits before the point): refused by name, as on the Python path."""
    rows = [{"unit_price": Decimal("99999999.99"), "qty": BIG}, {"unit_price": Decimal("19.99"), "qty": 3},
            {"unit_price": Decimal("-0.01"), "qty": SMALLEST}]
    said = _same_as_python(spark, uf.source("t", rows=rows).filter(big_order))
    assert "qty lie beyond" in said, said
    flow = uf.source("t", rows=rows).map(line_total)
    with pytest.raises(UdfRuntimeError, match="does not fit the column type decimal"):
        flow.collect(spark=spark)
    assert flow.collect(engine="reference")[0]["total"] == Decimal("99999999.99") * BIG


def scaled_pair(order, rate):
    return {"id": order["id"], "cost": order["qty"] * rate["per_unit"] / 3}


def test_a_join_functions_pairs_outside_the_bound_run_in_python(spark):
    """A Match's function has a Map's model over the joined pair: the pairs whose product
    leaves 64 bits get Python's float, the others the native one."""
    orders = uf.source("o", rows=[{"id": 1, "k": 1, "qty": BIG}, {"id": 2, "k": 2, "qty": 5},
                                  {"id": 3, "k": 1, "qty": SMALLEST}, {"id": 4, "k": 2, "qty": None}])
    rates = uf.source("r", rows=[{"rk": 1, "per_unit": 3}, {"rk": 2, "per_unit": 7}])
    fine = orders.filter(lambda r: r["qty"] is not None)
    said = _same_as_python(spark, fine.match(rates, ("k", "rk"), scaled_pair))
    assert said.startswith("rows where qty lie beyond"), said  # per_unit: the rows prove it small
    raising = orders.match(rates, ("k", "rk"), scaled_pair)  # None * 7: Python's TypeError, natively
    assert _error(raising, engine="reference") == _error(raising, spark=spark)


def mean_of_products(rows):
    rows = list(rows)
    total = sum(r["a"] * r["b"] for r in rows)
    yield {"g": rows[0]["g"], "n": len(rows), "mean": total / len(rows)}


def mean_of_values(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "mean": sum(r["a"] for r in rows) / len(rows)}


def test_a_reduce_runs_the_groups_outside_its_normal_case_in_python(spark):
    """A group holding a product past 64 bits, or whose sum is past 2**53 (`int / int`),
    gets Python's value; the other groups the native one; a None key is a group of its own."""
    rows = [{"g": 1, "a": BIG, "b": 3}, {"g": 1, "a": 2, "b": 2}, {"g": 2, "a": 5, "b": 7},
            {"g": None, "a": 2**40, "b": 2**30}, {"g": None, "a": 1, "b": 1}, {"g": 3, "a": -3, "b": 9}]
    said = _same_as_python(spark, uf.source("t", rows=rows).reduce("g", mean_of_products))
    assert said.startswith("groups holding a record where a, b lie beyond ±2**11"), said  # (2**11)**2 * 2**31: 2**53
    rows = [{"g": 1, "a": 2**53}, {"g": 1, "a": 3}, {"g": 2, "a": 4}, {"g": 2, "a": 5}]
    said = _same_as_python(spark, uf.source("t", rows=rows).reduce("g", mean_of_values))
    assert said == "groups holding a record where a lie beyond ±2**22 run in Python", said  # 2**22 * 2**31: 2**53


def with_a_large_total(rows):
    rows = list(rows)
    if sum(r["a"] for r in rows) > 9223372036854775807:
        yield from rows


def test_a_group_filters_groups_outside_its_normal_case_run_in_python(spark):
    """A group filter's predicate is a Reduce's: a group whose total may pass 64 bits is kept
    or dropped by Python, whole; the others natively."""
    rows = [{"g": 1, "a": 2**62}, {"g": 1, "a": 2**62}, {"g": 2, "a": 5}, {"g": 3, "a": BIG},
            {"g": 3, "a": -BIG}, {"g": None, "a": 2**40}, {"g": None, "a": 1}]
    flow = uf.source("t", rows=rows).reduce("g", with_a_large_total)
    assert type(flow.physical()[flow.root.label].model).__name__ == "GroupFilterModel"
    said = _same_as_python(spark, flow)
    assert said == "groups holding a record where a lie beyond ±2**31 run in Python", said  # 2**31 * 2**31 < 2**63
    assert sorted(r["a"] for r in flow.collect(spark=spark)) == [2**62, 2**62]


def total_mod(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "t": sum(r["a"] for r in rows) % 1000}


def test_an_int_sum_past_64_bits_runs_its_group_in_python(spark):
    """Python's sum of ints never overflows; the native sum would past 64 bits. Its check is a
    limit: the groups holding a record past the bound run in Python, whole."""
    rows = [{"g": 1, "a": 2**62}, {"g": 1, "a": 2**62}, {"g": 2, "a": 5}, {"g": 2, "a": -7}, {"g": None, "a": BIG}]
    said = _same_as_python(spark, uf.source("t", rows=rows).reduce("g", total_mod))
    assert said == "groups holding a record where a lie beyond ±2**31 run in Python", said


def tripled_total(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "t": sum(r["a"] * 3 for r in rows)}


def test_the_native_groups_write_no_guard_their_normal_case_proves(spark):
    """The groups whose records lie within the bound are aggregated natively with no check
    of `a * 3`'s 64 bits, which the bound proves (the sum's check stays, as it rests on a
    group's size: at most 2**31 records, the data's own bound; see the next test)."""
    rows = [{"g": 1, "a": 2**61}, {"g": 1, "a": -(2**61)}, {"g": 2, "a": 5}, {"g": 2, "a": -7}, {"g": None, "a": 3}]
    flow = uf.source("t", rows=rows).reduce("g", tripled_total)
    lowering, rows_out = _run(spark, flow)
    assert _bag(rows_out) == _bag(flow.collect(engine="reference"))
    native, _ = _sides(lowering, flow)
    assert re.search(r"\(a#\d+L \* 3\)", native) and not re.search(r"coalesce\(\(a#\d+L \* 3\)", native), native


def test_a_sum_the_datas_bounds_keep_within_64_bits_raises_where_they_fail(spark, monkeypatch):
    """Where the data's bounds keep every partial sum within 64 bits, the running total is a
    long (`native_groups._long_total`); data past those bounds (here: a bound claimed for the
    data that it does not hold) makes it NULL, never a wrapped value, and its guard raises."""
    from udflow.spark_backend import lower

    rows = [{"g": 1, "a": 2**62}, {"g": 1, "a": 2**62}, {"g": 2, "a": 5}]
    flow = uf.source("t", rows=rows).reduce("g", total_mod)
    sql = Lowering(spark, flow.physical()).lower(flow.root).df._jdf.queryExecution().analyzed().toString()
    assert "try_sum" not in sql and "38,0" in sql  # 2**62 * 2**31 leaves 64 bits: an exact total
    monkeypatch.setattr(lower, "magnitudes_of", lambda types: {"a": 10})
    lowering = Lowering(spark, flow.physical())
    assert "try_sum" in lowering.lower(flow.root).df._jdf.queryExecution().analyzed().toString()
    with pytest.raises(UdfRuntimeError, match="int overflow past 64 bits in sum"):
        lowering.records(flow.root)
    assert flow.root.label not in lowering.general_cases


def shifted(r):
    return {**r, "y": (r["x"] << 4) / 16}


def test_a_left_shift_by_a_constant_past_64_bits_is_pythons(spark):
    rows = [{"x": 2**62}, {"x": -(2**61)}, {"x": 3}, {"x": None}]
    flow = uf.source("t", rows=[r for r in rows if r["x"] is not None]).map(shifted)
    assert _same_as_python(spark, flow).startswith("rows where x lie beyond ±2**49"), flow  # (x << 4) / 16: 2**53
    small = uf.source("t", rows=[{"x": 3}, {"x": -7}]).map(shifted)  # the rows prove x small: no guard
    assert _same_as_python(spark, small) == ""
    raising = uf.source("t", rows=rows).map(shifted)  # None << 4: Python's TypeError
    assert _error(raising, engine="reference") == _error(raising, spark=spark)


def residue_of_shift(r):
    return {**r, "y": (r["x"] << r["n"]) % 1000003}


def high_bit_set(r):
    return {**r, "high": ((1 << r["n"]) | r["x"]) > 1099511627776, "far": (r["x"] << 70) > 5}


def test_a_shift_by_a_column_runs_the_rows_it_takes_past_64_bits_in_python(spark):
    """`x << n` with n a column (or a constant of 64 or more) has no bound on x that keeps it
    within 64 bits; the rows where it leaves them run in Python, told apart by the shift
    itself. Python's errors (a negative count, None) stay Python's."""
    rows = [{"x": 3, "n": 4}, {"x": 1, "n": 62}, {"x": 1, "n": 63}, {"x": -5, "n": 100}, {"x": 0, "n": 1000},
            {"x": BIG, "n": 1}, {"x": 2, "n": 200}, {"x": -1, "n": 63}, {"x": SMALLEST, "n": 0}]
    said = _same_as_python(spark, uf.source("t", rows=rows).map(residue_of_shift))
    assert said.startswith("rows where x << n leaves 64 bits run in Python"), said
    said = _same_as_python(spark, uf.source("t", rows=rows).map(high_bit_set))
    assert "where 1 << n leaves 64 bits" in said and "where x << 70 leaves 64 bits" in said, said
    for bad in ({"x": 1, "n": -1}, {"x": None, "n": 3}, {"x": 3, "n": None}):
        flow = uf.source("t", rows=rows + [bad]).map(residue_of_shift)
        assert _error(flow, engine="reference") == _error(flow, spark=spark)


def mean_rating(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "mean": sum(r["stars"] for r in rows) / len(rows)}


def test_a_mean_of_ints_the_data_bounds_needs_no_split(spark):
    """`sum / len` over stars within ±5 (the rows prove it): the sum lies within 5 * 2**31, the
    count within 2**31, so the int / int's 2**53 guard never fires short of a group of more
    than 2**31 records (where it stays written, and raises)."""
    rows = [{"g": i % 3, "stars": i % 5 + 1} for i in range(30)]
    assert _same_as_python(spark, uf.source("t", rows=rows).reduce("g", mean_rating)) == ""


def totals(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "n": len(rows), "stars": sum(r["stars"] for r in rows),
           "big": sum(r["big"] for r in rows)}


@pytest.mark.parametrize("total, split", [("stars", False), ("big", True)])
def test_a_reduces_sums_and_counts_bound_the_operators_above_it(spark, total, split):
    """A Reduce's aggregates carry their spans up (`Ran.magnitudes`): a Map's `total / n` above
    it is exact in a double where the summed values are small (stars within ±5: no split, as
    in the Reduce itself), and splits where they are not (2**40 summed may pass 2**53)."""
    rows = [{"g": i % 3, "stars": i % 5 + 1, "big": 2**40 + i} for i in range(30)]
    flow = uf.source("t", rows=rows).reduce("g", totals).map(lambda r: {**r, "mean": r[total] / r["n"]})
    assert bool(_same_as_python(spark, flow)) == split


def spread(rows):
    rows = list(rows)
    top = max(r["a"] for r in rows)
    yield {"g": rows[0]["g"], "mean": sum(r["a"] - r["b"] for r in rows) / len(rows), "top": top // 3,
           "scaled": sum(r["a"] * 4 + r["b"] for r in rows) / 2}


def test_reduce_groups_on_random_extremes_get_pythons_records(spark):
    """Seeded random groups mixing small values with ones near 2**63 and 2**53: every group's
    record is Python's (the native ones, and those the split sends to Python)."""
    import random

    rng = random.Random(29)
    pick = [0, 1, -1, 7, 2**20, -(2**22), 2**31, 2**53 + 1, -(2**53), 2**62, BIG // 4, SMALLEST // 4]
    rows = [{"g": g, "a": rng.choice(pick if g in (3, None) else pick[:5]), "b": rng.choice(pick[:6])}
            for g in (1, 2, 3, None) * 15]  # groups 1 and 2 stay within the bound: native
    flow = uf.source("t", rows=rows).reduce("g", spread)
    said = _same_as_python(spark, flow)
    assert said.startswith("groups holding a record where"), said
    native_only = uf.source("t", rows=[r for r in rows if r["g"] in (1, 2)]).reduce("g", spread)
    assert _same_as_python(spark, native_only).startswith("groups holding")  # the same bound, no group past it
