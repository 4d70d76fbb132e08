"""Look-ups in constant tables (`udflow.tables`, issue 29 item 3): modelled, native on Spark,
and Python again where the table changed after the analysis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis import analyze
from udflow.analysis.model import RecordModel
from udflow.errors import UdfRuntimeError
from udflow.expr import evaluate
from udflow.spark_backend.lower import Lowering
from udflow.tables import InTable, Table, TableGet, TableItem

REGIONS = {"FR": "EU", "DE": "EU", "US": "NA", "JP": "APAC"}
COUPONS = {"WELCOME10": 0.10, "SPRING5": 0.05, "VIP20": 0.20}
BY_NUMBER = {1: "one", 2.5: "two and a half", None: "none"}
CLOSED = frozenset({"cancelled", "returned"})
PRIORITIES = ("high", "urgent")


def priced(r):
    discount = COUPONS.get(r["coupon"], 0.0)
    return {**r, "total": r["price"] * (1 - discount), "region": REGIONS.get(r["country"], "other"),
            "named": BY_NUMBER.get(r["n"])}


def open_urgent(r):
    return r["status"] not in CLOSED and r["priority"] in PRIORITIES


def strict_region(r):
    return {**r, "region": REGIONS[r["country"]]}


FIELDS = ["coupon", "price", "country", "n", "status", "priority"]
ROWS = [
    {"coupon": "VIP20", "price": 10.0, "country": "FR", "n": 1, "status": "open", "priority": "high"},
    {"coupon": None, "price": 3.5, "country": "BR", "n": 2, "status": "cancelled", "priority": "urgent"},
    {"coupon": "EXPIRED", "price": 0.0, "country": "JP", "n": None, "status": "open", "priority": "low"},
    {"coupon": "SPRING5", "price": -2.0, "country": None, "n": 7, "status": None, "priority": None},
]
SCHEMA = "coupon string, price double, country string, n long, status string, priority string"


def _flow(spark, fn, rows=ROWS, kind="map"):
    source = uf.source("t", dataframe=spark.createDataFrame([tuple(r[f] for f in FIELDS) for r in rows], SCHEMA))
    return source.filter(fn) if kind == "filter" else source.map(fn)


def test_the_model_names_each_table_and_what_it_looks_up():
    model = analyze(priced, FIELDS, "map").model
    assert isinstance(model, RecordModel)
    text = str(model)
    assert "COUPONS.get(r['coupon'], 0.0)" in text and "REGIONS.get(r['country'], 'other')" in text
    assert "BY_NUMBER.get(r['n'], None)" in text
    assert "(r['status'] not in CLOSED)" in str(analyze(open_urgent, FIELDS, "filter").model)


values = st.one_of(st.none(), st.sampled_from(["FR", "US", "BR", "", "VIP20", "high", "returned"]),
                   st.sampled_from([1, 1.0, True, 2.5, 0, -0.0]))


@settings(max_examples=200, deadline=None)
@given(key=values)
def test_each_node_computes_what_python_computes(key):
    for name, obj in (("REGIONS", REGIONS), ("BY_NUMBER", BY_NUMBER), ("CLOSED", CLOSED), ("PRIORITIES", PRIORITIES)):
        table = Table.of(name, obj)
        record = {"k": key}
        from udflow.expr import Field, Lit

        assert evaluate(InTable(Field("k"), table), record) == (key in obj)
        if isinstance(obj, dict):
            assert evaluate(TableGet(table, Field("k"), Lit("d")), record) == obj.get(key, "d")
            try:
                expected = obj[key]
            except KeyError:
                with pytest.raises(KeyError):
                    evaluate(TableItem(table, Field("k")), record)
            else:
                assert evaluate(TableItem(table, Field("k")), record) == expected


def test_tables_of_anything_but_literals_are_no_tables():
    assert Table.of("T", {"a": [1]}) is None
    assert Table.of("T", {float("nan"): 1}) is None  # found only as the same object
    assert Table.of("T", {"a": object()}) is None
    assert Table.of("T", "abc") is None


def _rows(flow, native):
    return sorted((tuple(sorted(r.items())) for r in flow.collect(native=native)), key=repr)


@pytest.mark.parametrize("fn,kind", [(priced, "map"), (open_urgent, "filter")], ids=["get", "in"])
def test_look_ups_run_natively_and_return_what_python_returns(spark, fn, kind):
    flow = _flow(spark, fn, kind=kind)
    lowering = Lowering(spark, flow.physical())
    df = lowering.typed(flow.root)
    assert lowering.native_labels >= {flow.root.label}, lowering.python_reasons
    assert "ArrowEvalPython" not in df._jdf.queryExecution().executedPlan().toString()
    assert _rows(flow, True) == _rows(flow, False)


def test_a_missing_key_raises_key_error_in_python_words(spark):
    flow = _flow(spark, strict_region, rows=ROWS[:1] + [{**ROWS[1], "country": "it's"}])
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    with pytest.raises(UdfRuntimeError, match="KeyError: \"it's\"") as native:
        flow.collect()
    assert "strict_region" in str(native.value)
    with pytest.raises(UdfRuntimeError, match="KeyError: \"it's\""):
        flow.collect(native=False)


def test_a_table_changed_after_the_analysis_runs_as_python_reads_it_now(spark):
    flow = _flow(spark, priced)
    opt = uf.optimize(flow)
    COUPONS["VIP20"] = 0.5
    try:
        lowering = Lowering(spark, flow.physical())
        lowering.typed(opt.best.root)
        assert "COUPONS changed since the function was analysed" in " ".join(lowering.python_reasons.values())
        totals = {r["coupon"]: r["total"] for r in opt.best.collect()}
        assert totals["VIP20"] == 10.0 * (1 - 0.5)
    finally:
        COUPONS["VIP20"] = 0.20


def test_a_table_of_ints_and_floats_stays_python_and_says_why(spark):
    rates = {"a": 1, "b": 0.5}

    def rated(r):
        return {**r, "rate": rates.get(r["coupon"], 0)}

    flow = _flow(spark, rated)
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert "int and float" in " ".join(lowering.python_reasons.values()) or \
        "float and int" in " ".join(lowering.python_reasons.values()), lowering.python_reasons
    assert _rows(flow, True) == _rows(flow, False)


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def named_positions(r):
    return {"i": r["i"], "day": WEEKDAYS[r["i"]], "month": MONTH_NAMES[-1 - r["i"]]}


def test_a_tuple_or_list_indexed_by_an_int_is_native_from_either_end(spark):
    rows = [{"i": i} for i in range(-7, 7)]
    flow = uf.source("t", rows=rows).map(named_positions)
    assert flow.physical().root.describe() == "native"
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, map(named_positions, rows)))


@pytest.mark.parametrize("i, error", [(7, "IndexError: tuple index out of range"), (-8, "IndexError: tuple index"),
                                      (None, "TypeError: tuple indices must be integers or slices, not NoneType")])
def test_an_index_past_either_end_or_none_raises_pythons_error(spark, i, error):
    flow = uf.source("t", rows=[{"i": 0}, {"i": i}]).map(named_positions)
    for how in ({"engine": "reference"}, {"spark": spark}):
        with pytest.raises(UdfRuntimeError, match=error):
            flow.collect(**how)


# -- tables written in the function itself (`analysis.local_tables`) ---------------------------

def local_sizes(r):
    ranks = {"high": 2, "urgent": 3}
    label = {"FR": "France", "DE": "Germany"}.get(r["country"], "elsewhere")
    return {**r, "rank": ranks.get(r["priority"], 0), "label": label, "closed": r["status"] in ["cancelled", "returned"],
            "first": ("a", "b", "c")[r["n"] % 3] if r["n"] is not None else None}


def used_before_bound(r):
    if r["n"] == 7:
        return {**r, "rank": ranks.get(r["priority"], 0)}  # UnboundLocalError in Python  # noqa: F821
    ranks = {"high": 2}
    return {**r, "rank": ranks.get(r["priority"], 0)}


def changed_after(r):
    ranks = {"high": 2}
    ranks["urgent"] = 3
    return {**r, "rank": ranks.get(r["priority"], 0)}


def handed_on(r):
    ranks = {"high": 2}
    return {**r, "rank": ranks.get(r["priority"], 0), "n_ranks": len(ranks)}


def bound_in_a_branch(r):
    if r["n"]:
        ranks = {"high": 2}
    return {**r, "rank": ranks.get(r["priority"], 0)}


def test_a_literal_or_a_local_bound_to_one_and_only_looked_up_is_a_table():
    model = analyze(local_sizes, set(FIELDS)).model
    shown = str(model)
    assert "ranks.get(r['priority'], 0)" in shown and "{'FR': 'France', 'DE': 'Germany'}.get(r['country'], 'elsewhere')" in shown, shown
    for fn in (used_before_bound, changed_after, handed_on, bound_in_a_branch):
        props = analyze(fn, set(FIELDS))
        assert props.model is None or "ranks.get" not in str(props.model), (fn.__name__, str(props.model))


def test_a_local_table_runs_natively_and_returns_what_python_returns(spark):
    flow = _flow(spark, local_sizes)
    lowering = Lowering(spark, flow.physical())
    df = lowering.typed(flow.root)
    assert lowering.native_labels >= {flow.root.label}, lowering.python_reasons
    assert "ArrowEvalPython" not in df._jdf.queryExecution().executedPlan().toString()
    assert _rows(flow, True) == _rows(flow, False)
    said = []
    for native in (False, True):
        with pytest.raises(UdfRuntimeError) as err:
            _flow(spark, used_before_bound, [ROWS[3]]).collect(native=native)
        said.append(str(err.value).splitlines()[0].split(" raised ", 1)[1])
    assert said[0] == said[1] and "UnboundLocalError" in said[0], said
