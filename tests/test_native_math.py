"""`math.sqrt`, `math.fabs`, `math.floor`, `math.ceil`, `math.trunc`, `math.isnan`,
`math.isinf`, `math.isfinite`, `round(x)` and `int(x)` run natively (issue 29, item 3):
IEEE 754 rounds a square root correctly, and the others are exact, so Spark's value is
Python's on every row; Python's errors (None, a negative root, NaN or an infinity made an
int) are raised in Python's words; an int past 64 bits raises the documented guard."""

import math

import pytest

import udflow as uf
from udflow.expr import Call, Field, evaluate
from udflow.spark_backend.native_math import ulps_apart
from tests.both_engines import raised_on_both_engines
from tests.test_native_differential import same
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

FLOATS = [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 4.0, 2.0, 1e-310, 1e308, float("nan"), float("inf"),
          float("-inf"), 2.0**53 + 2, 9.2e18, 2.0**63, -(2.0**63), -9.3e18, 123456789.987654321, None]
INTS = [0, 1, -1, 7, 2**53 + 1, 2**63 - 1, -(2**63), None]
BOOLS = [True, False, None]
NAMES = ("math.sqrt", "math.fabs", "math.floor", "math.ceil", "math.trunc", "math.isnan", "math.isinf",
         "math.isfinite", "round", "int")


def outcome(name, value):
    try:
        return "value", evaluate(Call(name, (Field("x"),)), {"x": value})
    except Exception as exc:  # noqa: BLE001 - the error the native form must raise
        return "raises", f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def frames(spark):
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    def frame(values, dtype):
        schema = StructType([StructField("id", LongType(), False), StructField("x", dtype, True)])
        return jvm_frame(spark, list(enumerate(values)), schema)

    return {"float": (FLOATS, frame(FLOATS, DoubleType())), "int": (INTS, frame(INTS, LongType())),
            "bool": (BOOLS, frame(BOOLS, BooleanType()))}


@pytest.mark.parametrize("family", ["float", "int", "bool"])
@pytest.mark.parametrize("name", NAMES)
def test_the_native_call_gives_pythons_value_or_error_on_every_row(frames, name, family):
    from pyspark.sql import functions as F

    from tests.test_native_differential import native_error
    from udflow.spark_backend.native import NativeLowering

    values, frame = frames[family]
    lowering = NativeLowering(frame.schema, "m (t.py:1)")  # no Python calls allowed: native or NotNative
    column = F.expr(lowering.lower(Call(name, (Field("x"),))).sql)
    expected = {i: outcome(name, v) for i, v in enumerate(values)}
    fine = [i for i, (kind, v) in expected.items() if kind == "value" and not _past_64_bits(v)]
    got = {r["id"]: r["y"] for r in frame.where(F.col("id").isin(fine)).select("id", column.alias("y")).collect()}
    for i in fine:
        assert same(expected[i][1], got[i]), (name, values[i], expected[i][1], got[i])
    # one row per distinct error (a Spark job each): Python's, and past 64 bits the guard's
    raising = {text: i for i, (kind, text) in reversed(expected.items()) if kind == "raises"}
    raising.update({"int overflow past 64 bits": i for i, (kind, v) in expected.items()
                    if kind == "value" and _past_64_bits(v)})
    for text, i in raising.items():
        error = native_error(frame, column, i)
        assert text in error, (name, values[i], text, error[:300])


def _past_64_bits(value) -> bool:
    return isinstance(value, int) and not -(2**63) <= value < 2**63


def rooted(r):
    return {**r, "root": math.sqrt(r["area"]), "whole": math.floor(r["price"]), "up": math.ceil(r["price"]),
            "size": math.fabs(r["delta"])}


def test_a_function_of_math_calls_runs_natively_with_pythons_records(spark):
    rows = [{"area": 2.0, "price": 9.99, "delta": -0.5}, {"area": 0.0, "price": -0.01, "delta": -0.0}]
    flow = uf.source("t", rows=rows).map(rooted)
    assert flow.physical().root.describe() == "native"
    got, expected = flow.collect(spark=spark), flow.collect(engine="reference")
    key = lambda r: r["area"]  # noqa: E731
    for a, b in zip(sorted(got, key=key), sorted(expected, key=key)):
        assert a.keys() == b.keys() and all(same(b[f], a[f]) for f in a)


def test_a_negative_root_raises_pythons_value_error_on_spark(spark):
    flow = uf.source("t", rows=[{"area": -4.0, "price": 1.0, "delta": 1.0}]).map(rooted)
    with pytest.raises(uf.UdfRuntimeError, match="raised ValueError: math domain error"):
        flow.collect(spark=spark)


# -- the last-bit contract: math.log, math.log10, math.exp as a written field's value -------

CONTRACT = ("math.log", "math.log10", "math.exp", "math.sin", "math.cos", "math.tan", "math.atan")
SPREAD = [x * 10.0**e for x in (1.0, 1.37, 2.718281828459045, 9.99) for e in range(-300, 301, 37)] + \
    [0.5, 1.0 - 2**-53, 1.0 + 2**-52, 709.782712893384, 709.79, -745.2, -746.0, 1e-320]


@pytest.mark.parametrize("family", ["float", "int", "bool"])
@pytest.mark.parametrize("name", CONTRACT)
def test_a_contract_call_at_a_fields_value_is_within_its_ulps_and_raises_pythons_errors(frames, spark, name, family):
    """Where the call is a written field's value it runs natively: within `CONTRACT_ULPS` of
    Python's value (Java's fdlibm against the C library), NaN and infinities as Python's, and
    Python's errors in Python's words (x <= 0 for the logarithms, a result past 1.8e308 for exp)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    from tests.test_native_differential import native_error
    from udflow.spark_backend.native import NativeLowering
    from udflow.spark_backend.native_math import CONTRACT_ULPS

    values, frame = frames[family]
    if family == "float":
        values = values + SPREAD
        schema = StructType([StructField("id", LongType(), False), StructField("x", DoubleType(), True)])
        frame = jvm_frame(spark, list(enumerate(values)), schema)
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    term = Call(name, (Field("x"),))
    column = F.expr(lowering.value(term, (term,))[0].sql)
    assert "__udflow_term_" not in str(column)  # native, no Python call
    expected = {i: outcome(name, v) for i, v in enumerate(values)}
    fine = [i for i, (kind, _) in expected.items() if kind == "value"]
    got = {r["id"]: r["y"] for r in frame.where(F.col("id").isin(fine)).select("id", column.alias("y")).collect()}
    for i in fine:
        want = expected[i][1]
        if math.isnan(want) or math.isinf(want) or want == 0.0:
            assert same(want, got[i]), (name, values[i], want, got[i])
        else:
            assert ulps_apart(want, got[i]) <= CONTRACT_ULPS, (name, values[i], want, got[i])
    raising = {text: i for i, (kind, text) in reversed(expected.items()) if kind == "raises"}
    assert raising  # None, at least
    for text, i in raising.items():
        assert text in native_error(frame, column, i), (name, values[i], text)


def logged(r):
    return {**r, "lg": math.log10(r["x"]), "grown": math.exp(r["y"]) if r["y"] < 700 else None}


def logged_and_compared(r):
    return {**r, "lg": math.log10(r["x"]), "big": math.log10(r["x"]) > 1}


def logged_then_tested(r):
    lg = math.log10(r["x"])
    if lg > 1:
        yield {**r, "lg": lg}


def log_in_a_comparison(r):
    return {**r, "big": math.log(r["x"]) > 2}


@pytest.mark.parametrize("fn, python_for", [
    (logged, None),
    (logged_and_compared, "math.log10"),  # the same call in a decision: Python for both
    (logged_then_tested, "math.log10"),
    (log_in_a_comparison, "math.log"),
])
def test_only_a_fields_value_takes_the_contract_and_explain_says_which(spark, fn, python_for):
    """A decision of the function (a comparison, a guard) never reads the contract's last bits:
    a call that recurs there runs as Python everywhere, exactly; explain says which."""
    from tests.test_native_differential import same as same_value

    rows = [{"x": 1.37 * i + 0.5, "y": i / 7} for i in range(120)]
    flow = uf.source("t", rows=rows).map(fn)
    described = flow.physical().root.describe()
    assert described == "native" if python_for is None else described.startswith(f"native, with Python for {python_for}")
    got = sorted(flow.collect(spark=spark), key=lambda r: r["x"])
    expected = sorted(flow.collect(engine="reference"), key=lambda r: r["x"])
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.keys() == b.keys()
        exact = [f for f in a if f not in ("lg", "grown") or python_for is not None]
        assert all(same_value(b[f], a[f]) for f in exact), (a, b)
        assert all(b[f] is None and a[f] is None or ulps_apart(a[f], b[f]) <= 3 for f in a if f not in exact)


# -- math of two numbers, and math's constants -----------------------------------------------

def distance(r):
    return {**r, "d": math.hypot(r["x"], r["y"]), "angle": math.atan2(r["y"], r["x"]),
            "signed": math.copysign(1.0, r["y"]), "turn": math.cos(r["x"] * math.pi / 180) + math.tau - math.e}


def grown(r):
    return {**r, "g": r["x"] * math.pow(1.05, r["y"])}


def packs(r):
    return {**r, "pack": math.gcd(r["n"], 12)}


PAIRS = [(3.0, 4.0), (-0.0, -0.0), (0.0, -0.0), (float("nan"), 1.0), (1.0, float("-nan")), (float("inf"), 2.0),
         (1e308, 1e308), (-5.0, 0.5), (2.5, None), (-1e300, 1e-300)]


def _raises(fn, row) -> bool:
    try:
        fn(row)
    except Exception:  # noqa: BLE001 - Python's error: compared on both engines apart
        return True
    return False


@pytest.mark.parametrize("fn", [distance, grown], ids=["hypot-atan2-copysign-pi", "pow"])
def test_math_of_two_numbers_runs_as_pythons_call_inside_the_native_plan(spark, fn):
    """hypot, atan2, copysign and pow (Java's and C's libraries may differ in the last bit):
    Python's call in the plan, the rest native; `math.pi`, `math.tau`, `math.e` are their
    floats. A row Python raises on (cos of an infinity, pow's domain and range, None) raises
    Python's error on both engines."""
    rows = [{"x": x, "y": y} for x, y in PAIRS]
    fine = [r for r in rows if not _raises(fn, r)]
    flow = uf.source("t", rows=fine).map(fn)
    assert flow.physical().root.describe().startswith("native, with Python for math."), flow.physical().root.describe()
    got, expected = flow.collect(spark=spark), flow.collect(engine="reference")
    key = lambda r: repr((r["x"], r["y"]))  # noqa: E731
    for a, b in zip(sorted(got, key=key), sorted(expected, key=key)):
        assert a.keys() == b.keys() and all(same(b[f], a[f]) for f in a), (a, b)
    for row in (r for r in rows if _raises(fn, r)):
        said = raised_on_both_engines(uf.source("t", rows=[row]).map(fn))
        assert said[0] == said[1], (row, said)


def test_gcd_of_ints_is_pythons_and_of_a_float_raises_pythons_type_error(spark):
    rows = [{"n": n} for n in (18, 0, -7, 2**63 - 1, -(2**63), None)]
    flow = uf.source("t", rows=[r for r in rows if r["n"] is not None]).map(packs)
    assert sorted(r["pack"] for r in flow.collect(spark=spark)) == sorted(math.gcd(r["n"], 12) for r in flow.collect(
        engine="reference"))
    said = raised_on_both_engines(uf.source("t", rows=[{"n": None}]).map(packs))
    assert said[0] == said[1] and "TypeError" in said[0], said


def test_min_and_max_of_floats_are_pythons_fold_on_nan_and_signed_zeros(spark):
    """max(a, b, c) keeps the first argument until a later one is greater: NaN compares
    False in Python (max(nan, 1.0) is nan, max(1.0, nan) is 1.0) and -0.0 equals 0.0."""
    import itertools

    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering

    values = [0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), float("-inf")]
    rows = [(i, *t) for i, t in enumerate(itertools.product(values, repeat=3))]
    frame = jvm_frame(spark, rows, "id long, a double not null, b double not null, c double not null")
    terms = [Call(name, fields) for name in ("max", "min")
             for fields in [(Field("a"), Field("b")), (Field("a"), Field("b"), Field("c"))]]
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    columns = [F.expr(lowering.lower(t).sql).alias(f"t{k}") for k, t in enumerate(terms)]
    assert not any("greatest" in str(c) or "least" in str(c) for c in columns)  # Spark's skip NaN
    for row in frame.select("a", "b", "c", *columns).collect():
        for k, term in enumerate(terms):
            assert same(evaluate(term, row.asDict()), row[f"t{k}"]), (str(term), row)


def widest(r):
    return {**r, "top": max(r["a"], r["b"])}


def test_a_native_step_that_runs_as_python_on_its_types_warns_at_the_users_function(spark):
    """A Decimal and a float have no max in one type: the step planned native runs as Python,
    and says so where the user wrote the function."""
    from decimal import Decimal

    from udflow.errors import NativeFallbackWarning

    floats = uf.source("t", rows=[{"a": 1.0, "b": 2.5}, {"a": float("nan"), "b": 0.0}]).map(widest)
    mixed = uf.source("t", rows=[{"a": Decimal("1.5"), "b": 2.5}]).map(widest)
    assert floats.physical().root.describe() == mixed.physical().root.describe() == "native"
    with pytest.warns(NativeFallbackWarning) as caught:
        assert mixed.collect(spark=spark) == [{"a": Decimal("1.5"), "b": 2.5, "top": 2.5}]
    (warning,) = [w for w in caught if issubclass(w.category, NativeFallbackWarning)]
    assert warning.filename == __file__ and warning.lineno == widest.__code__.co_firstlineno
    assert "Map(widest): " in str(warning.message) and "runs as Python (scalar)" in str(warning.message)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", NativeFallbackWarning)
        assert sorted(map(repr, floats.collect(spark=spark))) == sorted(map(repr, floats.collect(engine="reference")))


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
def test_an_int_to_a_constant_power_is_its_products_and_past_64_bits_the_documented_guard(spark, k):
    from pyspark.sql import functions as F

    from udflow.expr import Arith, Lit
    from udflow.spark_backend.native import NativeLowering
    from tests.test_native_differential import native_error, python_outcome

    values = [0, 1, -1, 7, -3, True, False, 2**31, 3037000499, 3037000500, 2097152, -(2**63), 2**63 - 1, None]
    records = [{"id": i, "x": int(v) if v is not None else None} for i, v in enumerate(values)]
    frame = jvm_frame(spark, [(r["id"], r["x"]) for r in records], "id long, x long")
    term = Arith("**", Field("x"), Lit(k))
    column = F.expr(NativeLowering(frame.schema, "m (t.py:1)").lower(term).sql)
    outcomes = {r["id"]: python_outcome(term, r) for r in records}
    fits = [i for i, o in outcomes.items() if o[0] == "value" and -(2**63) <= o[1] < 2**63]
    got = {row["id"]: row["v"] for row in frame.where(F.col("id").isin(fits)).select("id", column.alias("v")).collect()}
    assert all(type(got[i]) is int and got[i] == outcomes[i][1] for i in fits)
    for i, outcome in outcomes.items():
        if i not in fits:
            said = native_error(frame, column, i)
            assert said.startswith("m (t.py:1) raised " + ("int overflow past 64 bits" if outcome[0] == "value"
                                                             else outcome[1])), said[:200]
