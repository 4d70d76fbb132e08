"""The native lowering as Spark SQL text, and the model kinds it runs natively since (issue 12).

- literals mean exactly the Python value, under either string-escaping setting;
- Decimal arithmetic: the 28-digit guard is exact at its boundary, a result Spark
  would round (wider than 38 digits) is not native, and a result whose type cannot
  pass 28 digits carries no guard;
- a case chain's guards prove fields not None for the later cases, and an operator's
  proofs reach the operators above it (`nullness`);
- group filters (`any(...)`, whole groups), explosions (`for x in s.split(sep)`), sums
  used only where their list holds a value, and Reduces grouped by the fields their key
  determines return what the functions return in Python, or raise as they do.
"""

import datetime
import math
from decimal import Decimal

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.errors import UdfRuntimeError
from udflow.expr import Arith, BoolOp, Call, Cmp, Field, IsNone, Lit, Neg, Not, evaluate
from udflow.spark_backend import nullness
from udflow.spark_backend.lower import Lowering
from udflow.spark_backend.native import NativeLowering, NotNative
from udflow.spark_backend.sql import literal


@pytest.mark.parametrize("escaped", ["false", "true"])
def test_literals_mean_the_python_value(spark, escaped):
    values = [None, True, False, 0, -1, 2**63 - 1, -(2**63), 1.5, -0.0, 1e300, 5e-324, float("inf"),
              float("-inf"), Decimal("0.00"), Decimal("-12345678901234567890.123456"), "", "plain",
              "it's", "back\\slash", "new\nline", "\u00df\u4e2d\U0001f600", "\x00nul",
              datetime.date(1, 1, 1), datetime.date(1996, 2, 29)]
    before = spark.conf.get("spark.sql.parser.escapedStringLiterals")
    spark.conf.set("spark.sql.parser.escapedStringLiterals", escaped)
    try:
        row = spark.sql("SELECT " + ", ".join(f"{literal(v)} AS c{i}" for i, v in enumerate(values))).collect()[0]
        nan = spark.sql(f"SELECT {literal(float('nan'))} AS x").collect()[0]["x"]
    finally:
        spark.conf.set("spark.sql.parser.escapedStringLiterals", before)
    for i, v in enumerate(values):
        assert row[f"c{i}"] == v and type(row[f"c{i}"]) is type(v), (v, row[f"c{i}"])
    assert math.copysign(1, row["c6"]) == -1  # -0.0 stays negative
    assert math.isnan(nan)


def _decimal_frame(spark, pairs, precision, scale):
    return spark.createDataFrame([(a, b) for a, b in pairs], f"a decimal({precision},{scale}), b decimal({precision},{scale})")


def test_a_decimal_product_at_28_digits_is_exact_and_past_them_raises(spark):
    """Python rounds a result whose coefficient needs more than 28 digits; the native form
    raises there, and returns the exact value below: |x| >= 10**(28 - scale) is the line.
    Past the guard the value fits 28 digits, and its type says so: decimal(28, 4), not
    Spark's decimal(38, 4) (a sum over it then needs no bound on each value)."""
    below = (Decimal("999999999999.99"), Decimal("1000000000000.00"))  # coefficient 10**28 - 10**14
    at = (Decimal("1000000000000.00"), Decimal("1000000000000.00"))  # 10**28, 29 digits: Python rounds
    df = _decimal_frame(spark, [below], 30, 2)
    lowering = NativeLowering(df.schema, "product (t.py:1)", nonnull=frozenset({"a", "b"}))
    term = lowering.lower(Arith("*", Field("a"), Field("b")))
    got = df.selectExpr(f"{term.sql} AS x")
    assert got.collect()[0]["x"] == below[0] * below[1] and term.decimal == (28, 4)
    assert got.schema["x"].dataType.simpleString() == "decimal(28,4)"
    with pytest.raises(UdfRuntimeError, match="more than 28 digits"):
        from udflow.spark_backend.udf import translated

        with translated():
            _decimal_frame(spark, [at], 30, 2).selectExpr(f"{term.sql} AS x").collect()


def test_a_decimal_result_spark_would_round_is_not_native(spark):
    df = _decimal_frame(spark, [], 38, 10)
    lowering = NativeLowering(df.schema, "f (t.py:1)")
    with pytest.raises(NotNative, match="wider than 38 digits"):
        lowering.lower(Arith("*", Field("a"), Field("b")))


def test_a_decimal_result_that_cannot_pass_28_digits_has_no_guard(spark):
    df = _decimal_frame(spark, [], 15, 2)
    lowering = NativeLowering(df.schema, "f (t.py:1)", nonnull=frozenset({"a", "b"}))
    text = lowering.lower(Arith("-", Lit(1), Field("a"))).sql
    assert "raise_error" not in text and lowering.guards_made == 0


def test_what_conditions_prove_not_none():
    a, b = Field("a"), Field("b")
    either_none = BoolOp("or", (IsNone(a), IsNone(b)))
    assert nullness.when_false(either_none) == {"a", "b"}
    assert nullness.when_true(either_none) == frozenset()
    assert nullness.when_true(BoolOp("and", (Cmp(">", a, Lit(0)), IsNone(b, negated=True)))) == {"a", "b"}
    assert nullness.when_true(Cmp("==", a, Lit(None))) == frozenset()
    assert nullness.when_true(Not(IsNone(a))) == {"a"}
    assert nullness.when_true(BoolOp("or", (a, b))) == frozenset()


def complete(r):
    if r["fare"] is None or r["miles"] is None:
        return
    if r["fare"] > 0 and r["miles"] > 0:
        yield r


def per_mile(r):
    return {**r, "per_mile": r["fare"] / r["miles"]}


def test_a_case_chain_proves_fields_not_none_for_later_cases_and_operators(spark):
    rows = [{"fare": f, "miles": m} for f, m in [(None, 1.0), (2.0, None), (3.0, 1.5), (-1.0, 2.0), (4.0, 0.5)]]
    frame = spark.createDataFrame([(r["fare"], r["miles"]) for r in rows], "fare double, miles double")
    flow = uf.source("t", dataframe=frame).map(complete).map(per_mile)
    lowering = Lowering(spark, flow.physical())
    lowered = lowering.lower(flow.root)
    assert lowering.native_labels == {"Map(complete)", "Map(per_mile)"}
    assert {"fare", "miles", "per_mile"} <= lowered.nonnull
    plan = lowered.df._jdf.queryExecution().optimizedPlan().toString()
    assert "None in" not in plan  # no None guard survives: every one is proven unneeded
    assert sorted(r["per_mile"] for r in flow.collect(spark=spark)) == [2.0, 8.0]


# -- model kinds run natively --------------------------------------------------------------


def buying_sessions(rows):
    rows = list(rows)
    if any(r["action"] == "buy" for r in rows):
        yield from rows


def all_viewed(rows):
    rows = list(rows)
    if all(r["action"] in ("view", "buy") for r in rows):
        yield from rows


def per_genre(r):
    for genre in r["genres"].split("|"):
        yield {**r, "genre": genre}


def per_word(r):
    for word in r["genres"].split():
        yield {"id": r["id"], "word": word}


def per_dot(r):
    for part in r["genres"].split("."):
        yield {"id": r["id"], "part": part}


def tip_average(rows):
    rows = list(rows)
    tipped = [r for r in rows if r["tip"] is not None]
    yield {"k": rows[0]["k"], "n": len(rows),
           "avg_tip": sum(r["tip"] for r in tipped) / len(tipped) if tipped else None}


def tip_total_unguarded(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "t": sum(r["tip"] for r in rows if r["tip"] is not None)}


def _outcome(flow, spark, native):
    try:
        rows = flow.collect(spark=spark, native=native)
    except UdfRuntimeError as exc:
        return ("raises", str(exc).split(" raised ")[1].split(":")[0])
    return sorted((tuple(sorted((k, repr(v)) for k, v in r.items())) for r in rows))


def _native_and_same(spark, flow, label):
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert label in lowering.native_labels, lowering.python_reasons
    assert _outcome(flow, spark, True) == _outcome(flow, spark, False)


CLICKS = [("s1", "view"), ("s1", "buy"), ("s2", "view"), ("s2", None), (None, "buy"), (None, "view"),
          ("s3", None), ("s4", "buy")]


@pytest.mark.parametrize("fn", [buying_sessions, all_viewed], ids=lambda f: f.__name__)
def test_a_group_filter_runs_natively_and_keeps_what_python_keeps(spark, fn):
    frame = spark.createDataFrame(CLICKS, "sid string, action string")
    flow = uf.source("clicks", dataframe=frame).reduce(["sid"], fn)
    _native_and_same(spark, flow, flow.root.label)


GENRES = [(1, "Drama|Comedy"), (2, ""), (3, "|a||b|"), (4, "x.y..z"), (5, " \t spaced\u2003words\u00a0 "),
          (6, "one"), (7, "a$b^c|d\\e")]


@pytest.mark.parametrize("fn", [per_genre, per_word, per_dot], ids=lambda f: f.__name__)
def test_an_explosion_runs_natively_with_python_split_semantics(spark, fn):
    frame = spark.createDataFrame(GENRES, "id long, genres string")
    flow = uf.source("movies", dataframe=frame).map(fn)
    _native_and_same(spark, flow, flow.root.label)


def test_an_explosion_of_none_raises_attribute_error_like_python(spark):
    frame = spark.createDataFrame([(1, "a|b"), (2, None)], "id long, genres string")
    flow = uf.source("movies", dataframe=frame).map(per_genre)
    assert _outcome(flow, spark, True) == _outcome(flow, spark, False) == ("raises", "AttributeError")


TIPS = [(1, 2.5), (1, None), (1, 0.1), (2, None), (2, None), (3, 0.3), (3, 0.7), (3, 0.2)]


def test_a_sum_used_only_where_its_list_holds_a_value_is_native(spark):
    frame = spark.createDataFrame(TIPS, "k long, tip double")
    flow = uf.source("trips", dataframe=frame).reduce(["k"], tip_average)
    _native_and_same(spark, flow, flow.root.label)
    assert {r["k"]: r["avg_tip"] for r in flow.collect(spark=spark)}[2] is None
    # `if r["tip"] is not None` proves the summed values present: no count of None among them
    assert "_none" not in _plan(flow)


def test_a_float_sum_over_an_if_used_unguarded_stays_python(spark):
    frame = spark.createDataFrame(TIPS, "k long, tip double")
    flow = uf.source("trips", dataframe=frame).reduce(["k"], tip_total_unguarded)
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert "int 0" in lowering.python_reasons[flow.root.label]
    assert analyze(tip_total_unguarded, ["k", "tip"], kind="reduce").model is not None


def zone_summary(rows):
    rows = list(rows)
    first = rows[0]
    yield {"zone": first["zone_id"], "name": first["name"], "trips": len(rows)}


def busy_zones(rows):
    rows = list(rows)
    if any(r["trip"] != 1 for r in rows):
        yield from rows


@pytest.mark.parametrize("group_filter", [False, True], ids=["directly", "through_a_group_filter"])
def test_a_reduce_groups_by_the_fields_its_key_determines(spark, group_filter):
    """Through a Reduce keeping whole groups too: it keeps records unchanged."""
    trips = spark.createDataFrame([(1, 10), (2, 10), (3, 11), (4, 12)], "trip long, zone long")
    zones = spark.createDataFrame([(10, "Harlem"), (11, "SoHo"), (12, None)], "zone_id long, name string")
    joined = (uf.source("trips", dataframe=trips)
              .match(uf.source("zones", dataframe=zones, key=["zone_id"]), on=("zone", "zone_id")))
    flow = (joined.reduce(["zone"], busy_zones) if group_filter else joined).reduce(["zone"], zone_summary)
    lowering = Lowering(spark, flow.physical())
    df = lowering.typed(flow.root)
    assert len(lowering.native_labels) == 1 + group_filter, lowering.python_reasons
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "first(" not in plan and (group_filter or "SortAggregate" not in plan)
    assert _outcome(flow, spark, True) == _outcome(flow, spark, False)


def words_of_post(r):
    for w in r["text"].split():
        yield {"post": r["post"], "author": r["author"], "word": w}


def words_with_marked_author(r):
    for w in r["text"].split():
        yield {"post": r["post"], "author": r["author"] + "!", "word": w}


def words_keyed_by_word(r):
    for w in r["text"].split():
        yield {"post": w, "author": r["author"], "word": w}


def post_summary(rows):
    rows = list(rows)
    yield {"post": rows[0]["post"], "author": rows[0]["author"], "words": len(rows)}


@pytest.mark.parametrize("fn, determined", [
    (words_of_post, True),
    (words_with_marked_author, False),  # a changed field: one value per group still, but not proven
    (words_keyed_by_word, False),  # the key itself is written
], ids=["copied", "changed", "key-written"])
def test_a_key_determines_the_fields_a_map_copies(spark, fn, determined):
    """`post` is the source's key; a Map emitting several records per post copies `author`
    unchanged into each, so the Reduce groups by (post, author) instead of taking `author`
    from one record (`first`, which Spark only sort-aggregates)."""
    from udflow.spark_backend.grouping import determined_fields

    posts = spark.createDataFrame([(1, "ann", "a b c"), (2, "bob", "d e"), (3, "ann", "f")],
                                  "post long, author string, text string")
    flow = uf.source("posts", dataframe=posts, key=["post"]).map(fn).reduce(["post"], post_summary)
    assert (determined_fields(flow.root.input, ("post",)) == {"author"}) == determined
    lowering = Lowering(spark, flow.physical())
    plan = lowering.typed(flow.root)._jdf.queryExecution().executedPlan().toString()
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert ("first(" not in plan) == determined
    assert _outcome(flow, spark, True) == _outcome(flow, spark, False)


def busiest(rows):
    rows = list(rows)
    yield {**rows[0], "v": max(r["v"] for r in rows), "n": len(rows)}


def test_a_copied_first_record_does_not_fetch_the_fields_every_case_overwrites(spark):
    frame = spark.createDataFrame([(1, 5, "a"), (1, 7, "b"), (2, 1, "c")], "k long, v long, note string")
    flow = uf.source("t", dataframe=frame).reduce(["k"], busiest)
    df = Lowering(spark, flow.physical()).typed(flow.root)
    first = [line for line in df._jdf.queryExecution().optimizedPlan().toString().splitlines() if "first(" in line]
    fetched = [line.split("first(named_struct(")[1].split(")")[0] for line in first]
    assert fetched and all("note" in arg and "v#" not in arg for arg in fetched), fetched
    _native_and_same(spark, flow, flow.root.label)


def same_label(r):
    if r["label"] == r["code"]:  # a str and an int: equal only when both are None
        yield r


def price_is_ratio(r):
    if r["ratio"] == r["price"]:  # a float and a Decimal: Python compares them exactly
        yield r


def test_values_of_unrelated_types_are_equal_only_when_both_are_none(spark):
    """`"1" == 1` is False, but `None == None` is True whatever the fields' types; the
    native form once said FALSE for every record (found by the native differential suite)."""
    frame = spark.createDataFrame([(0, None, None), (1, "1", 1), (2, None, 1), (3, "a", None)],
                                  "id long, label string, code long")
    flow = uf.source("t", dataframe=frame).map(same_label)
    _native_and_same(spark, flow, flow.root.label)
    assert [r["id"] for r in flow.collect(spark=spark)] == [0]


def test_a_float_compared_with_a_decimal_stays_python(spark):
    """`1.5 == Decimal("1.50")` is True and `0.1 == Decimal("0.10")` False in Python (exact),
    while Spark compares through a double (both True); the native form once said FALSE."""
    frame = spark.createDataFrame([(0, 1.5, Decimal("1.50")), (1, 0.1, Decimal("0.10")), (2, None, None)],
                                  "id long, ratio double, price decimal(10,2)")
    with pytest.raises(NotNative, match="float and a Decimal"):
        NativeLowering(frame.schema, "price_is_ratio (t.py:1)").lower(Cmp("==", Field("ratio"), Field("price")))
    flow = uf.source("t", dataframe=frame).map(price_is_ratio)
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert flow.root.label not in lowering.native_labels
    assert "float and a Decimal" in lowering.python_reasons[flow.root.label]
    assert sorted(r["id"] for r in flow.collect(spark=spark)) == [0, 2]


def third_of(r):
    return {**r, "q": -3 / r["n"]}


def test_true_division_by_the_smallest_long_gives_pythons_value_in_both_ansi_modes(spark):
    """The guard for `int / int` past 2**53 once took abs() of each operand, and
    abs(-2**63) overflows: Spark's own ARITHMETIC_OVERFLOW under ANSI mode, where Python
    returns 3.25e-19 (found by `bench.native_fuzz --seed 100`). Then the native form gave
    the documented guard there; now the row lies outside the operator's normal case and
    runs in Python (`general_case`): Python's value, in both ANSI modes."""
    frame = spark.createDataFrame([(0, 7), (1, -2**63)], "id long, n long")
    flow = uf.source("t", dataframe=frame).map(third_of)
    before = spark.conf.get("spark.sql.ansi.enabled")
    try:
        for ansi in ("true", "false"):
            spark.conf.set("spark.sql.ansi.enabled", ansi)
            got = {r["id"]: r["q"] for r in flow.collect(spark=spark)}
            assert got == {0: -3 / 7, 1: -3 / -2**63}
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def with_speed(r):
    minutes = (r["off"] - r["on"]) / 60
    return {**r, "minutes": minutes, "mph": r["miles"] / (minutes / 60), "fare_per_mile": r["fare"] / r["miles"]}


def one_and_one_point_oh(r):
    return {**r, "n": r["off"] + 1, "f": (r["off"] + 1.0) * 2}


def _plan(flow) -> str:
    return flow.to_spark()._jdf.queryExecution().analyzed().toString()  # before Catalyst rewrites it


def test_a_field_a_later_field_reuses_is_computed_once_with_the_same_values_and_errors(spark):
    """`minutes` is inlined into `mph` by the model; the native form computes it once, in a
    projection below, and `mph` reads it there (taxi's `with_measures`). The values are
    Python's, and a row where the later field divides by zero still raises."""
    rows = [{"on": 0, "off": 600, "miles": 2.5, "fare": 9.0}, {"on": 60, "off": 3660, "miles": 30.0, "fare": 70.0}]
    flow = uf.source("t", rows=rows).map(with_speed)
    _native_and_same(spark, flow, flow.root.label)
    upper = next(line for line in _plan(flow).splitlines() if " AS mph#" in line)
    assert "__udflow_let0" in upper and "try_subtract(" not in upper
    stopped = uf.source("t", rows=rows + [{"on": 5, "off": 5, "miles": 1.0, "fare": 3.0}]).map(with_speed)
    assert _outcome(stopped, spark, True) == _outcome(stopped, spark, False) == ("raises", "ZeroDivisionError")


def test_a_shared_term_is_matched_with_the_types_of_its_constants(spark):
    """As dataclasses, Lit(1) == Lit(1.0): `off + 1.0` must not read the column of `off + 1`."""
    flow = uf.source("t", rows=[{"off": 3}, {"off": -7}]).map(one_and_one_point_oh)
    _native_and_same(spark, flow, flow.root.label)
    assert {type(r["f"]) for r in flow.collect(spark=spark)} == {float}


def int_and_float_sums(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "i": sum(r["v"] * 1 for r in rows), "f": sum(r["v"] * 1.0 for r in rows)}


def test_aggregates_differing_only_in_a_constants_type_stay_apart(spark):
    """`sum(v * 1)` is an int, `sum(v * 1.0)` a float (and rounds past 2**53): one aggregate
    column for both, as once when Lit(1) == Lit(1.0), gives one of them the other's type."""
    rows = [{"k": 1, "v": 2**53}, {"k": 1, "v": 1}, {"k": 1, "v": 1}, {"k": 2, "v": -4}]
    flow = uf.source("t", rows=rows).reduce("k", int_and_float_sums)
    _native_and_same(spark, flow, flow.root.label)
    assert {(type(r["i"]), type(r["f"])) for r in flow.collect(spark=spark)} == {(int, float)}


def decimal_total(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "total": sum(r["v"] for r in rows)}


def test_a_decimal_sum_raises_only_where_its_total_passes_28_digits(spark):
    """Values of at most 28 digits can always be ordered so that no running total is larger
    than the largest value or the sum (a negative while the total is not negative, a positive
    while it is): the exact sum is what Python's sum gives in that order whenever the sum
    itself fits. So a group of large values that cancel is native and exact (once it raised:
    the bound was the sum of |x|), and one whose sum passes 28 digits raises (Python rounds)."""
    big = Decimal("900000000000000000000000.0000")  # 9 * 10**23 at scale 4: 28 digits
    frame = spark.createDataFrame([(1, big), (1, -big), (1, big), (1, -big), (2, Decimal("1.5"))],
                                  "k long, v decimal(28,4)")
    flow = uf.source("t", dataframe=frame).reduce("k", decimal_total)
    _native_and_same(spark, flow, flow.root.label)
    assert {r["k"]: r["total"] for r in flow.collect(spark=spark)} == {1: 0, 2: Decimal("1.5")}
    over = uf.source("t", dataframe=frame.where("v > 0")).reduce("k", decimal_total)
    with pytest.raises(UdfRuntimeError, match="Decimal sum past 28 digits"):
        over.collect(spark=spark)


@pytest.mark.parametrize("term", [Neg(Field("d")), Call("abs", (Field("d"),))], ids=["neg", "abs"])
def test_the_sign_of_a_decimal_wider_than_28_digits_is_not_native(spark, term):
    """Python's -x and abs(x) round a Decimal to 28 digits: abs(Decimal(30 digits)) is
    1.234...E+29, another value. Native only where the type holds at most 28 digits."""
    wide = spark.createDataFrame([], "d decimal(38,0)").schema
    with pytest.raises(NotNative, match="rounds it to 28 digits"):
        NativeLowering(wide, "test").lower(term)
    narrow = spark.createDataFrame([(Decimal("-12.50"),)], "d decimal(28,2)")
    lowered = NativeLowering(narrow.schema, "test").lower(term)
    assert narrow.selectExpr(f"{lowered.sql} AS v").collect()[0]["v"] == evaluate(term, {"d": Decimal("-12.50")})


def narrow_products(r):
    return {**r, "bb": r["b"] * r["b"], "ss": r["s"] * r["s"], "ii": r["i"] * r["i"], "nb": -r["b"],
            "ab": abs(r["b"]), "sum": r["b"] + r["s"] + r["i"]}


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_narrow_int_columns_compute_as_pythons_ints(spark, ansi):
    """Spark computes tinyint * tinyint in 8 bits (100 * 100 overflowed, and the native form
    raised its 64-bit overflow error where Python returns 10000); a narrow int column is read
    as a long."""
    frame = spark.createDataFrame([(1, 100, 300, 2**31 - 1), (2, -128, -32768, -(2**31))],
                                  "k long, b tinyint, s smallint, i int")
    flow = uf.source("t", dataframe=frame).map(narrow_products)
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        _native_and_same(spark, flow, flow.root.label)
        got = {r["k"]: r for r in flow.collect(spark=spark)}
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
    assert (got[1]["bb"], got[2]["nb"], got[2]["ab"], got[1]["ii"]) == (10000, 128, 128, (2**31 - 1) ** 2)


def test_literal_conditions_are_not_written():
    """`sql.case`, `sql.conjunction` and `sql.negation` leave out what a literal condition
    decides (a branch never or always taken, AND's TRUE, OR's FALSE), keep an absorbing
    literal beside parts that may raise, and are what they replace in three-valued logic."""
    from udflow.spark_backend import sql

    assert sql.case([("FALSE", "1"), ("c", "2")], "3") == "CASE WHEN c THEN 2 ELSE 3 END"
    assert sql.case([("c", "2"), ("TRUE", "4"), ("d", "5")], "3") == "CASE WHEN c THEN 2 ELSE 4 END"
    assert sql.case([("TRUE", "4")], "3") == "4" and sql.case([("FALSE", "4")], "3") == "3"
    assert sql.conjunction("OR", ["FALSE", "a"]) == "(a)" and sql.conjunction("AND", ["TRUE", "TRUE"]) == "TRUE"
    assert sql.conjunction("AND", ["FALSE", "raise_error('x')"]) == "(FALSE AND raise_error('x'))"
    assert sql.conjunction("OR", ["FALSE"]) == "FALSE" and sql.conjunction("OR", ["TRUE", "a"]) == "(TRUE OR a)"
    assert sql.negation("TRUE") == "FALSE" and sql.negation("FALSE") == "TRUE" and sql.negation("a") == "(NOT a)"


def test_no_term_is_written_inside_an_expression_spark_computes_ahead():
    """Spark 4 rewrites `x BETWEEN a AND b` and `nullif(x, y)` to compute x once, in a
    projection below the one that reads them (`With`, `RewriteWithExpression`): a term that
    may raise would then raise ahead of the fields written before it (a None raised abs's
    TypeError before `a * 3`'s). Only the normal case's filter, over plain input columns,
    writes BETWEEN."""
    import pathlib
    import re

    backend = pathlib.Path(nullness.__file__).parent
    found = [(path.name, line.strip()) for path in sorted(backend.glob("*.py"))
             for line in path.read_text().splitlines()
             if re.search(r"\bBETWEEN\b|\b(nullif|NULLIF)\(", line) and not line.lstrip().startswith("#")]
    assert [name for name, _ in found] == ["native_spans.py"] and "self._limits(c)" in found[0][1], found
