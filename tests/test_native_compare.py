"""An int compared with a float, natively, as Python compares them: exactly.

Spark rounds the long to a double before it compares (`2**53 + 1 == 2.0**53` is true
there); Python compares the two values exactly, so a filter `r["i"] > r["f"]` once
dropped the record `{i: 2**53 + 1, f: 2.0**53}` that Python keeps. The native form
(`native_calls.int_float_order`) compares through floor(f) instead, and keeps Spark's
plain comparison only where it is exact: an int constant within 2**53, or a float
constant below 2**53 in magnitude (or infinite, or NaN).
"""

import itertools
import math
import operator

import pytest

import udflow as uf
from udflow.expr import Cmp, Field, Lit
from udflow.spark_backend.native import NativeLowering

OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
       ">=": operator.ge}
INTS = [0, 1, -1, 3, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**62 + 1, 2**63 - 1, -(2**63), -(2**63) + 1]
FLOATS = [0.0, -0.0, 0.5, -0.5, 3.0, 2.0**53, 2.0**53 + 2, -(2.0**53), 2.0**63, -(2.0**63), 2.0**63 - 1024,
          -(2.0**63) - 2048, 9.2e18, 1e300, -1e300, math.inf, -math.inf, math.nan, 5e-324]


@pytest.fixture(scope="module")
def pairs(spark):
    rows = [(k, i, f) for k, (i, f) in enumerate(itertools.product(INTS, FLOATS))]
    rows += [(len(rows), None, 1.0), (len(rows) + 1, 1, None), (len(rows) + 2, None, None)]
    return spark.createDataFrame(rows, "k long, i long, f double")


def _native(frame, terms: dict) -> dict:
    """{name: [value per row, by k]} of each term lowered natively."""
    lowering = NativeLowering(frame.schema, "test")
    exprs = [f"{lowering.lower(term).sql} AS `{name}`" for name, term in terms.items()]
    rows = sorted(frame.selectExpr("k", *exprs).collect(), key=lambda r: r["k"])
    return {name: [r[name] for r in rows] for name in terms}


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_an_int_and_a_float_compare_exactly_both_ways_round(spark, pairs, ansi):
    terms = {f"{a}{op}{b}": Cmp(op, Field(a), Field(b)) for op in OPS for a, b in (("i", "f"), ("f", "i"))}
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        ordered = pairs.where("i IS NOT NULL AND f IS NOT NULL")
        got = _native(ordered, {n: t for n, t in terms.items() if t.op not in ("==", "!=")})
        got |= _native(pairs, {n: t for n, t in terms.items() if t.op in ("==", "!=")})
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
    records = sorted(pairs.collect(), key=lambda r: r["k"])
    for name, term in terms.items():
        kept = records if term.op in ("==", "!=") else [r for r in records if r["i"] is not None and r["f"] is not None]
        expected = [OPS[term.op](r[term.left.name], r[term.right.name]) for r in kept]
        assert got[name] == expected, (name, [(r["i"], r["f"]) for r, g, e in zip(kept, got[name], expected) if g != e])


def test_constants_keep_the_plain_comparison_only_where_it_is_exact(spark, pairs):
    """`r["f"] > 0` stays a plain comparison Spark can push into a scan; a constant at or past
    2**53 compares exactly."""
    ordered = pairs.where("i IS NOT NULL AND f IS NOT NULL")
    terms = {f"i>{c!r}": Cmp(">", Field("i"), Lit(c)) for c in FLOATS}
    terms |= {f"{k!r}<=f": Cmp("<=", Lit(k), Field("f")) for k in INTS}
    terms |= {f"i=={c!r}": Cmp("==", Field("i"), Lit(c)) for c in FLOATS}
    got = _native(ordered, terms)
    records = sorted(ordered.collect(), key=lambda r: r["k"])
    for name, term in terms.items():
        left = term.left.value if isinstance(term.left, Lit) else None
        right = term.right.value if isinstance(term.right, Lit) else None
        expected = [OPS[term.op](r["i"] if left is None else left, r["f"] if right is None else right)
                    for r in records]
        assert got[name] == expected, name
    lowering = NativeLowering(ordered.schema, "test")
    assert lowering.lower(Cmp(">", Field("f"), Lit(0))).sql.count("floor") == 0
    assert lowering.lower(Cmp(">", Field("i"), Lit(2.5))).sql.count("floor") == 0
    assert "floor" in lowering.lower(Cmp(">", Field("i"), Lit(2.0**53))).sql


def past_two_to_the_53(r):
    return r["i"] > r["f"]


def test_a_filter_keeps_the_record_python_keeps(spark):
    """Before the exact form, Spark compared 2**53 + 1 as 2.0**53 and dropped the record."""
    rows = [{"i": 2**53 + 1, "f": 2.0**53}, {"i": 3, "f": 3.0}]
    flow = uf.source("t", rows=rows).filter(past_two_to_the_53)
    assert flow.collect(spark=spark) == flow.collect(engine="reference") == [rows[0]]


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_a_bool_compares_with_numbers_as_the_int_0_or_1(spark, ansi):
    """`True == 1`, `True == 1.0`, `False < 0.5`, `True > False`, `True == Decimal(1)`: Python
    compares a bool as an int (Spark would refuse, or cast the number to a bool); NaN and
    None as for any number, and None == None is True."""
    from decimal import Decimal

    bools, decimals = [True, False, None], [Decimal("1.00"), Decimal("0.00"), Decimal("0.50"), Decimal("-1.00"), None]
    numbers = [(i, f) for i in INTS[:4] + [None] for f in FLOATS[:5] + [math.inf, math.nan, None]]
    rows = [(k, b, c, i, f, decimals[k % len(decimals)]) for k, (b, c, (i, f)) in
            enumerate(itertools.product(bools, bools, numbers))]
    frame = spark.createDataFrame(rows, "k long, b boolean, c boolean, i long, f double, d decimal(10,2)")
    pairs = [("b", other) for other in ("c", "i", "f", "d")] + [(other, "b") for other in ("i", "f", "d")]
    terms = {f"{a}{op}{b}": Cmp(op, Field(a), Field(b)) for op in OPS for a, b in pairs}
    terms |= {f"b{op}{c!r}": Cmp(op, Field("b"), Lit(c)) for op in OPS for c in (1, 0.5, True, Decimal("1"))}
    records = sorted(frame.collect(), key=lambda r: r["k"])
    expected, selected = {}, []
    lowering = NativeLowering(frame.schema, "test")
    for name, term in terms.items():
        right = (lambda r: r[term.right.name]) if isinstance(term.right, Field) else (lambda r: term.right.value)
        # an ordering raises on None: compared only on the rows where Python returns
        fine = [r for r in records if term.op in ("==", "!=") or None not in (r[term.left.name], right(r))]
        expected[name] = {r["k"]: OPS[term.op](r[term.left.name], right(r)) for r in fine}
        nonnull = " AND ".join(f"{t.name} IS NOT NULL" for t in (term.left, term.right) if isinstance(t, Field))
        value = lowering.lower(term).sql
        selected.append(f"{value if term.op in ('==', '!=') else f'CASE WHEN {nonnull} THEN {value} END'} AS `{name}`")
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        got = frame.selectExpr("k", *selected).collect()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
    for name in terms:
        differ = [(r["k"], r[name]) for r in got if r["k"] in expected[name] and r[name] != expected[name][r["k"]]]
        assert not differ, (name, differ[:5])


def test_a_negated_constant_is_a_constant_and_compares_as_python_compares(spark, pairs):
    """`x < -0.5`: the negation of an int or float constant lowers to a literal (no NaN test
    of a constant, no guard), and every column value, NaN and the extremes included, compares
    with it as in Python; -(-2**63) leaves the longs and keeps its guarded form."""
    from udflow.expr import Neg

    ordered = pairs.where("i IS NOT NULL AND f IS NOT NULL")
    constants = [0.5, 0.0, math.inf, 3, 2**53 + 1, 2**63 - 1]
    terms = {f"{column}{op}neg{k}": Cmp(op, Field(column), Neg(Lit(c)))
             for op in ("<", "<=", ">", ">=") for column in ("i", "f") for k, c in enumerate(constants)}
    lowering = NativeLowering(ordered.schema, "test")
    assert lowering.lower(Neg(Lit(0.5))).sql == "CAST('-0.5' AS DOUBLE)"
    assert "isnan" not in lowering.lower(Cmp("<", Field("f"), Neg(Lit(0.5)))).sql
    assert lowering.lower(Neg(Lit(-(2**63)))).known is None  # 2**63: no long holds it
    got = _native(ordered, terms)
    records = sorted(ordered.collect(), key=lambda r: r["k"])
    for name, term in terms.items():
        expected = [OPS[term.op](r[term.left.name], -term.right.operand.value) for r in records]
        assert got[name] == expected, name
