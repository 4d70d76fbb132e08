"""min/max of tuples over a Reduce's group: `Agg("min", GroupRows(Tuple(...)))` and `Item`.

- the model (`apply_group`) returns what the function returns, or raises the same
  exception type, on generated groups: None items (TypeError only where a comparison
  reaches one), equal prefixes, NaN and -0.0, one-record groups, filters leaving nothing;
- every other use of a tuple gets no model, with the reason;
- natively, min/max of a struct over never-None int/str/date/Decimal/bool items returns
  exactly what the function returns in Python on Spark; a nullable or float item stays Python.
"""

import datetime
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis.model import GroupFilterModel, ReduceModel, apply_group
from udflow.errors import UdfRuntimeError
from udflow.expr import Agg, Field, GroupRows, Item, Tuple, evaluate_group
from udflow.fields import properties_of
from udflow.spark_backend.lower import Lowering

FIELDS = ("k", "x", "s", "t", "d")
values = {
    "k": st.sampled_from(["a", "b"]),
    "x": st.one_of(st.none(), st.integers(-1, 1)),
    "s": st.sampled_from([None, "", "a", "b", "\uffff", "\U0001f600"]),
    "t": st.one_of(st.none(), st.integers(-1, 1), st.sampled_from([0.0, -0.0, 1.0, float("nan")])),
    "d": st.sampled_from([Decimal("1.0"), Decimal("1.00"), Decimal("-0"), Decimal("0.0"), Decimal(2)]),
}
groups = st.lists(st.fixed_dictionaries(values), min_size=1, max_size=5)


def outcome(call):
    try:
        return repr(list(call()))  # repr: equal tuples must give the very value Python keeps (-0.0, 1.00)
    except Exception as err:  # noqa: BLE001 - any error, compared by type
        return ("raises", type(err).__name__)


def agrees(fn, model, examples=300):
    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(group=groups)
    def check(group):
        expected = outcome(lambda: fn([dict(r) for r in group]))
        got = outcome(lambda: apply_group(model, [dict(r) for r in group]))
        assert expected == got, (fn.__name__, group, expected, got)

    check()


def model_of(fn, fields=FIELDS):
    return uf.analyze(fn, set(fields), kind="reduce")


# -- the model is Python's tuple order -------------------------------------------------------


def first_by_x(rows):
    rows = list(rows)
    x, s, d = min((r["x"], r["s"], r["d"]) for r in rows)
    yield {"k": rows[0]["k"], "x": x, "s": s, "d": d, "n": len(rows)}


def last_named(rows):
    rows = list(rows)
    m = max((r["s"], r["x"]) for r in rows if r["s"] is not None and r["s"] != "")  # may leave none
    yield {**rows[0], "s": m[0], "x": m[-1]}


def floats_first(rows):
    rows = list(rows)
    low = min((r["t"], r["d"], r["s"]) for r in rows)
    high = max((r["t"], r["k"]) for r in rows)  # (eager aggregates' errors: one type, any order)
    yield {"k": rows[0]["k"], "low_t": low[0], "low_d": low[1], "high": high[0]}


def one_item(rows):
    rows = list(rows)
    (low,) = min((r["d"],) for r in rows)
    yield {"k": rows[0]["k"], "low": low}


def only_if_known(rows):
    rows = list(rows)
    known = [r for r in rows if r["x"] is not None]
    yield {"k": rows[0]["k"], "x": min((r["x"], r["s"]) for r in known)[1] if known else "none"}


def computed_items(rows):
    rows = list(rows)
    m = min((r["x"] * 2, r["s"] is None) for r in rows)  # TypeError on None, record by record
    yield {"k": rows[0]["k"], "m": m[0], "none": m[1]}


def from_a_named_list(rows):
    rows = list(rows)
    known = [(r["x"], r["s"]) for r in rows if r["x"] is not None]
    yield {"k": rows[0]["k"], "s": min(known)[1] if known else None}


def branches_on_an_item(rows):
    rows = list(rows)
    m = min((r["x"], r["s"]) for r in rows)
    if m[0] > 0:  # TypeError where the minimum's x is None
        yield {"k": rows[0]["k"], "s": m[1]}


def keeps_groups_by_an_item(rows):
    rows = list(rows)
    if max((r["s"], r["d"]) for r in rows)[1] > 1:
        yield from rows


MODELLED = [first_by_x, last_named, floats_first, one_item, only_if_known, computed_items, from_a_named_list,
            branches_on_an_item, keeps_groups_by_an_item]


@pytest.mark.parametrize("fn", MODELLED, ids=[f.__name__ for f in MODELLED])
def test_min_max_of_tuples_is_modelled_with_python_semantics(fn):
    props = model_of(fn)
    assert isinstance(props.model, (ReduceModel, GroupFilterModel)), props.model_reason
    agrees(fn, props.model)


def test_the_model_reads_as_items_of_one_aggregate():
    model = model_of(first_by_x).model
    tuple_aggs = [a for a in model.aggregates() if isinstance(a.rows.elem, Tuple)]
    assert len(tuple_aggs) == 1 and tuple_aggs[0] in model.eager
    assert "min([(r['x'], r['s'], r['d']) for r in rows])[2]" in str(model)


def test_python_semantics_at_the_edges():
    agg = Agg("min", GroupRows(Tuple((Field("x"), Field("s"))), None))
    assert evaluate_group(Item(agg, 1), [{"x": 1, "s": None}, {"x": 0, "s": None}]) is None  # never reached
    with pytest.raises(TypeError):
        evaluate_group(agg, [{"x": 1, "s": None}, {"x": 1, "s": "a"}])  # equal prefix: None compared
    nan = float("nan")
    got = evaluate_group(agg, [{"x": nan, "s": "b"}, {"x": 0.0, "s": "a"}])
    assert math.isnan(got[0]) and got[1] == "b"  # NaN < 0.0 and 0.0 < NaN are False: the first stays
    assert repr(evaluate_group(agg, [{"x": -0.0, "s": "a"}, {"x": 0.0, "s": "a"}])) == "(-0.0, 'a')"
    with pytest.raises(ValueError):
        evaluate_group(Agg("max", GroupRows(agg.rows.elem, Field("x"))), [{"x": 0, "s": "a"}])
    assert str(Tuple((Field("x"),))) == "(r['x'],)"


# -- every other tuple: no model -------------------------------------------------------------


def emits_the_tuple(rows):
    rows = list(rows)
    m = min((r["x"], r["s"]) for r in rows)
    yield {"k": rows[0]["k"], "m": m}


def compares_the_tuple(rows):
    rows = list(rows)
    m = min((r["x"], r["s"]) for r in rows)
    yield {"k": rows[0]["k"], "low": m < (0, "a")}


def truth_of_the_tuple(rows):
    rows = list(rows)
    m = min((r["x"], r["s"]) for r in rows)
    if m:
        yield {"k": rows[0]["k"]}


def sums_tuples(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "n": len([(r["x"], r["s"]) for r in rows]), "m": min(r["x"] for r in rows)}


def unpacks_too_few(rows):
    rows = list(rows)
    a, b = min((r["x"], r["s"], r["d"]) for r in rows)  # ValueError in Python
    yield {"k": rows[0]["k"], "a": a}


def unpacks_starred(rows):
    rows = list(rows)
    a, *b = min((r["x"], r["s"], r["d"]) for r in rows)
    yield {"k": rows[0]["k"], "a": a}


def index_out_of_range(rows):
    rows = list(rows)
    m = min((r["x"], r["s"]) for r in rows)
    yield {"k": rows[0]["k"], "a": m[2]}


def nested_tuple(rows):
    rows = list(rows)
    m = min(((r["x"], r["s"]), r["d"]) for r in rows)
    yield {"k": rows[0]["k"], "a": m[1]}


def unused_where_the_generator_ends(rows):
    rows = list(rows)
    pairs = [(r["x"] * 2, r["s"]) for r in rows]  # TypeError on None, for every group
    if len(rows) > 2:
        yield {"k": rows[0]["k"], "m": min(pairs)[0]}  # the model would raise for big groups only


UNMODELLED = [unused_where_the_generator_ends, emits_the_tuple, compares_the_tuple, truth_of_the_tuple, sums_tuples, unpacks_too_few, unpacks_starred,
              index_out_of_range, nested_tuple]


@pytest.mark.parametrize("fn", UNMODELLED, ids=[f.__name__ for f in UNMODELLED])
def test_other_tuples_have_no_model(fn):
    props = model_of(fn)
    assert props.model is None and props.model_reason, fn.__name__


def divides_then_maybe_yields(r):
    x = 1 // r["x"]
    if r["s"]:
        yield {**r, "x": x}


def test_a_raising_value_unused_where_a_generator_ends_has_no_model():
    """Python computes it on every call; where no case matches, a model would not. A Map's
    model computes it in its first guard (`Evaluated`); a Reduce's has none."""
    reason = uf.analyze(unused_where_the_generator_ends, set(FIELDS), kind="reduce").model_reason
    assert "on a path that does not use it" in reason, reason
    model = uf.analyze(divides_then_maybe_yields, set(FIELDS), kind="map").model
    assert str(model.cases[0].guard).startswith("(computed((1 // r['x']))"), str(model)


def pair_in_a_map(r):
    return {**r, "p": (r["x"], r["s"])}


def pair_compared_in_a_map(r):
    return {**r, "low": (r["x"], r["s"]) < (1, "a")}


@pytest.mark.parametrize("fn", [pair_in_a_map, pair_compared_in_a_map], ids=lambda f: f.__name__)
def test_tuples_in_a_map_have_no_model(fn):
    props = uf.analyze(fn, set(FIELDS), kind="map")
    assert props.model is None and "tuple" in props.model_reason


# -- natively ---------------------------------------------------------------------------------

D = datetime.date
CLICKS = [("s1", 3, "b", D(2020, 1, 2), True), ("s1", 3, "a", D(2020, 1, 2), False), ("s1", 5, "", D(2019, 5, 1), True),
          ("s2", 7, "\uffff", D(2021, 1, 1), False), ("s2", 7, "\U0001f600", D(2021, 1, 1), True),
          ("s2", 7, "\U0001f600", D(2020, 1, 1), True), ("s3", -1, "x", D(1, 1, 1), False),
          ("s4", 2, "é", D(2000, 2, 29), False), ("s4", 2, "e", D(2000, 2, 29), True), ("s4", 2, "e", D(2000, 2, 29), False)]
SCHEMA = "sid string NOT NULL, n bigint NOT NULL, url string NOT NULL, day date NOT NULL, ok boolean NOT NULL"


def landing(rows):
    rows = list(rows)
    n, url, day = min((r["n"], r["url"], r["day"]) for r in rows)
    last = max((r["day"], r["url"], r["ok"]) for r in rows)
    yield {**rows[0], "n": n, "url": url, "day": day, "last_day": last[0], "last_url": last[1], "last_ok": last[2],
           "clicks": len(rows)}


def first_ok(rows):
    rows = list(rows)
    ok = [r for r in rows if r["ok"]]
    yield {"sid": rows[0]["sid"], "url": min((r["url"], r["n"]) for r in ok)[0] if ok else None}


def first_ok_unguarded(rows):
    rows = list(rows)
    m = min((r["url"], r["n"]) for r in rows if r["ok"] and r["n"] > 0)  # s3 keeps none: ValueError
    yield {"sid": rows[0]["sid"], "url": m[0]}


CUTOFF = datetime.date(2020, 1, 2)


def late_sessions(rows):
    rows = list(rows)
    if max((r["day"], r["url"]) for r in rows)[0] >= CUTOFF:
        yield from rows


def _outcome(flow, spark, native):
    try:
        rows = flow.collect(spark=spark, native=native)
    except UdfRuntimeError as exc:
        return ("raises", str(exc).split(" raised ")[1].split(":")[0])
    return sorted(tuple(sorted((k, repr(v)) for k, v in r.items())) for r in rows)


def _flow(spark, fn, data=CLICKS, schema=SCHEMA):
    return uf.source("clicks", dataframe=spark.createDataFrame(data, schema)).reduce(["sid"], fn)


@pytest.mark.parametrize("fn", [landing, first_ok, first_ok_unguarded, late_sessions], ids=lambda f: f.__name__)
def test_a_tuple_min_max_runs_natively_and_returns_what_python_returns(spark, fn):
    flow = _flow(spark, fn)
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    native = _outcome(flow, spark, True)
    assert native == _outcome(flow, spark, False)
    if fn is first_ok_unguarded:
        assert native == ("raises", "ValueError")


def cheapest(rows):
    rows = list(rows)
    price, item = min((r["price"], r["item"]) for r in rows)
    yield {"sid": rows[0]["sid"], "price": price, "item": item}


def test_a_decimal_item_runs_natively(spark):
    data = [("a", Decimal("1.50"), "x"), ("a", Decimal("1.50"), "w"), ("a", Decimal("2.25"), "a"),
            ("b", Decimal("-0.25"), "y"), ("b", Decimal("10.00"), "b")]
    flow = _flow(spark, cheapest, data, "sid string NOT NULL, price decimal(10,2) NOT NULL, item string NOT NULL")
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert _outcome(flow, spark, True) == _outcome(flow, spark, False)
    assert {r["sid"]: r["item"] for r in flow.collect(spark=spark)} == {"a": "w", "b": "y"}


def test_the_native_tuple_values_are_exact(spark):
    rows = {r["sid"]: r for r in _flow(spark, landing).collect(spark=spark)}
    assert (rows["s1"]["n"], rows["s1"]["url"]) == (3, "a")  # equal first items: the second decides
    assert rows["s2"]["url"] == "\uffff" and rows["s2"]["last_url"] == "\U0001f600"  # code point order
    assert rows["s4"]["last_url"] == "é" and rows["s4"]["last_ok"] is False and rows["s4"]["url"] == "e"


@pytest.mark.parametrize("schema, why", [
    (SCHEMA.replace("url string NOT NULL", "url string"), "may be None"),
    (SCHEMA.replace("n bigint", "n double"), "float"),
], ids=["nullable", "float"])
def test_a_nullable_or_float_item_stays_python_with_the_reason(spark, schema, why):
    data = [(s, float(n), u, d, o) for s, n, u, d, o in CLICKS] if "double" in schema else CLICKS
    flow = _flow(spark, landing, data, schema)
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert flow.root.label not in lowering.native_labels
    assert why in lowering.python_reasons[flow.root.label]


def test_clickstreams_condense_session_is_modelled_and_native(spark, tmp_path):
    """On data made here (a small scale of examples/clickstream.py's generator), whose click
    columns are never None (udflow.field_types), both Reduces have models, the tuple min of
    (timestamp, url, action) lowers natively, and the native plan returns what the functions
    return run in Python."""
    from examples import clickstream

    data = clickstream.generate_data(str(tmp_path / "clickstream"), 0.01)
    flow = clickstream.build_flow(data)
    reduces = [op for op in flow.root.walk() if getattr(op, "fn", None) is not None]
    assert all(properties_of(op).model is not None for op in reduces), [properties_of(op).model_reason for op in reduces]
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert "Reduce[session_id](condense_session)" in lowering.native_labels, lowering.python_reasons

    def bag(native):
        return sorted(repr(sorted(r.items())) for r in flow.collect(spark=spark, native=native))

    assert bag(True) == bag(False)
