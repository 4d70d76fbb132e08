"""Reduce functions as models and as native aggregations (issue 12, items 2-4).

Three checks for each Reduce function below:

- the model (`apply_group`) computes what the function computes on generated
  groups full of None, zeros, big ints, NaN and empty strings, or both raise;
- on Spark, the native aggregation returns the same bag as the function run in
  Python (`native=False`), or both raise a `UdfRuntimeError`;
- the functions that must stay Python do, for the stated reason.
"""

import datetime
import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.analysis import analyze
from udflow.analysis.model import ReduceModel, apply_group
from udflow.errors import UdfRuntimeError
from udflow.spark_backend.lower import Lowering
from tests.frames import jvm_frame

FIELDS = ["k", "i", "f", "d", "s", "day"]


def mean_rating(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "mean": sum(r["f"] for r in rows) / len(rows), "n": len(rows)}


def revenue(rows):
    rows = list(rows)
    first = rows[0]
    total = sum(r["d"] * 2 for r in rows)
    yield {**first, "total": total}


def int_total(rows):
    yield {"k": rows[0]["k"], "total": sum(r["i"] for r in rows)}


def counted_where(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "big": sum(1 for r in rows if r["i"] is not None and r["i"] > 1),
           "named": len([r for r in rows if r["s"]])}


def extremes(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "lo": min(r["s"] for r in rows), "hi": max(r["day"] for r in rows)}


def min_where(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "lo": min(r["i"] for r in rows if r["s"] == "a")}


def busy_groups(rows):
    rows = list(rows)
    if len(rows) > 2:
        yield {"k": rows[0]["k"], "n": len(rows), "last_day": max(r["day"] for r in rows)}


def first_record(rows):
    rows = list(rows)
    yield rows[0]


def named_groups(rows):
    rows = list(rows)
    if any(r["s"] == "a" for r in rows):
        yield from rows


def flagged(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "ones": sum(1 for r in rows if r["s"] == "a"), "trues": sum(True for r in rows)}


# -- functions that stay Python ---------------------------------------------------------

def float_sum_where(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "t": sum(r["f"] for r in rows if r["i"] == 1)}


def divides_on_some_paths(rows):
    rows = list(rows)
    if len(rows) > 1:
        yield {"k": rows[0]["k"], "q": sum(r["i"] // 2 for r in rows)}


def loops(rows):
    total = 0
    for r in rows:
        total += r["i"]
    yield {"k": 1, "total": total}


def float_extreme(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "top": max(r["f"] for r in rows), "bottom": min(r["f"] for r in rows)}


NATIVE = [mean_rating, revenue, int_total, counted_where, extremes, min_where, busy_groups, first_record,
          flagged, float_extreme]
PYTHON = {
    float_sum_where: "Python's sum is the int 0",
    divides_on_some_paths: "on some paths only",
}


def model_of(fn):
    return analyze(fn, FIELDS, "reduce").model


@pytest.mark.parametrize("fn", NATIVE + list(PYTHON), ids=lambda f: f.__name__)
def test_every_listed_function_has_a_model(fn):
    assert isinstance(model_of(fn), ReduceModel), analyze(fn, FIELDS, "reduce").model_reason


def test_a_loop_over_the_group_has_no_model_and_says_where():
    props = analyze(loops, FIELDS, "reduce")
    assert props.model is None and "a loop (line" in props.model_reason


# -- the model against the function -----------------------------------------------------

records = st.fixed_dictionaries({
    "k": st.just(1),
    "i": st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([2**62, -(2**63)])),
    "f": st.sampled_from([0.0, -0.5, 2.25, float("nan"), 1e16]),
    "d": st.sampled_from([Decimal("0.00"), Decimal("1.25"), Decimal("-0.05")]),
    "s": st.one_of(st.none(), st.sampled_from(["", "a", "b", "\u00df"])),
    "day": st.sampled_from([datetime.date(1995, 6, 1), datetime.date(1997, 1, 1)]),
})


def outcome(run):
    try:
        return list(run())
    except Exception:  # noqa: BLE001 - any error: both must raise
        return "raises"


def same(a, b) -> bool:
    if a == "raises" or b == "raises":
        return a == b
    return len(a) == len(b) and all(
        list(x) == list(y) and all(x[n] == y[n] or _both_nan(x[n], y[n]) for n in x) for x, y in zip(a, b))


def _both_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


@pytest.mark.parametrize("fn", NATIVE + list(PYTHON), ids=lambda f: f.__name__)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(group=st.lists(records, min_size=1, max_size=5))
def test_the_model_computes_what_the_function_computes(fn, group):
    model = model_of(fn)
    expected = outcome(lambda: fn([dict(r) for r in group]))
    assert same(outcome(lambda: apply_group(model, [dict(r) for r in group])), expected)


# -- native on Spark against the function in Python -------------------------------------

def _frame(spark, rows):
    schema = "k long, i long, f double, d decimal(12,2), s string, day date"
    return jvm_frame(spark, [tuple(r[n] for n in FIELDS) for r in rows], schema)


def _groups():
    day = datetime.date(1996, 3, 1)
    rows = []
    for k in range(6):
        for j in range(k + 1):
            rows.append({"k": k, "i": j - 1, "f": 0.25 * j, "d": Decimal(j) / 4, "s": "ab"[j % 2] * (j % 3),
                         "day": day + datetime.timedelta(days=7 * j + k)})
    return rows


def _run(flow, native):
    try:
        return sorted((tuple(sorted(r.items())) for r in flow.collect(native=native)), key=repr)
    except UdfRuntimeError:
        return "raises"


@pytest.mark.parametrize("fn", NATIVE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("data", ["clean", "with_none"])
def test_native_reduce_returns_what_python_returns(spark, fn, data):
    rows = _groups()
    if data == "with_none":
        rows[3] = {**rows[3], "i": None, "s": None}
        rows[-1] = {**rows[-1], "i": None}
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], fn)
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert lowering.native_labels == {flow.root.label}, lowering.python_reasons
    assert _run(flow, True) == _run(flow, False)


def test_a_group_filter_on_any_keeps_the_keys_of_matching_records_none_included(spark):
    """`any(p(r) for r in rows)` over a `p` that cannot raise: the distinct keys of the records
    where `p` holds (a filter Spark pushes into the scan), joined null-safely where the key
    may be None: Python keeps a group of None keys like any other."""
    rows = _groups()
    rows[1], rows[2] = {**rows[1], "k": None, "s": "a"}, {**rows[2], "k": None}
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], named_groups)
    plan = flow.to_spark(spark)._jdf.queryExecution().optimizedPlan().toString()
    assert "max(" not in plan and "<=>" in plan
    assert _run(flow, True) == _run(flow, False)
    assert any(r["k"] is None for r in flow.collect(spark=spark))


def test_a_sum_of_ones_is_a_count(spark):
    flow = uf.source("t", dataframe=_frame(spark, _groups())).reduce(["k"], flagged)
    plan = flow.to_spark(spark)._jdf.queryExecution().optimizedPlan().toString()
    assert "decimal(38,0)" not in plan.lower() and "count(" in plan
    assert _run(flow, True) == _run(flow, False)


# -- the float contract (native_groups): min/max give a result of some order, sums agree up to association

def float_stats(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "total": sum(r["f"] for r in rows), "top": max(r["f"] for r in rows),
           "bottom": min(r["f"] for r in rows)}


FLOATS = [0.0, -0.0, 0.1, 0.2, 0.3, -1e16, 1e16, 3.0, 1e-300, float("nan"), float("inf"), -float("inf"), 1e308,
          2.5e307]


def _python_results(fn, group: list) -> dict:
    """Each output field's values over every order of the group (Python's results, one per order)."""
    import itertools

    seen: dict = {}
    for order in itertools.permutations(group):
        for name, value in next(fn(list(order))).items():
            seen.setdefault(name, []).append(value)
    return seen


def _one_of(value, results) -> bool:
    return any(value == r and math.copysign(1, value) == math.copysign(1, r) or _both_nan(value, r) for r in results)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(groups=st.lists(st.lists(st.sampled_from(FLOATS), min_size=1, max_size=5), min_size=1, max_size=4))
def test_float_min_max_are_a_result_of_some_order_and_sums_agree_up_to_association(spark, groups):
    from udflow.spark_backend.native_groups import float_sums_agree

    rows = [{"k": k, "i": 0, "f": f, "d": Decimal(0), "s": "", "day": datetime.date(2000, 1, 1)}
            for k, group in enumerate(groups) for f in group]
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], float_stats)
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert lowering.native_labels == {flow.root.label}, lowering.python_reasons
    for out in flow.collect(native=True):
        group = groups[out["k"]]
        python = _python_results(float_stats, [{"k": out["k"], "f": f} for f in group])
        assert _one_of(out["top"], python["top"]) and _one_of(out["bottom"], python["bottom"]), (group, out)
        assert all(float_sums_agree(out["total"], p, group) for p in python["total"]), (group, out)


def test_the_float_sum_contract_bounds_association_not_anything():
    from udflow.spark_backend.native_groups import float_sums_agree

    values = [0.1, 0.2, 0.3]
    assert float_sums_agree((0.1 + 0.2) + 0.3, 0.1 + (0.2 + 0.3), values)  # 0.6000000000000001 vs 0.6
    assert not float_sums_agree(0.6 + 1e-12, 0.6, values)
    assert not float_sums_agree(1.0, float("nan"), [1.0, float("nan")])
    assert float_sums_agree(float("inf"), 1e308, [1e308, 1e308, -1e308])


def test_native_errors_name_the_function_and_the_error(spark):
    rows = _groups()
    rows[2] = {**rows[2], "i": None}
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], int_total)
    with pytest.raises(UdfRuntimeError) as caught:
        flow.collect()
    assert "int_total" in str(caught.value) and "TypeError" in str(caught.value)


def test_an_int_sum_past_64_bits_is_refused_by_name_instead_of_wrapping(spark):
    """The group runs in Python (its records lie past the sum's bound: `general_case`), whose
    total no long column holds: refused, naming the field, never wrapped."""
    rows = [{**r, "i": 2**62} for r in _groups()]
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], int_total)
    with pytest.raises(UdfRuntimeError, match="total=9223372036854775808 .*does not fit"):
        flow.collect()


def test_min_over_no_values_raises_value_error(spark):
    rows = [{**r, "s": "b"} for r in _groups()]
    flow = uf.source("t", dataframe=_frame(spark, rows)).reduce(["k"], min_where)
    with pytest.raises(UdfRuntimeError, match="ValueError"):
        flow.collect()


@pytest.mark.parametrize("fn", list(PYTHON), ids=lambda f: f.__name__)
def test_functions_without_an_exact_native_form_stay_python_and_say_why(spark, fn):
    flow = uf.source("t", dataframe=_frame(spark, _groups())).reduce(["k"], fn)
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)  # float_sum_where's field holds ints and floats: no typed column
    assert flow.root.label not in lowering.native_labels
    assert PYTHON[fn] in lowering.python_reasons[flow.root.label]


# -- the Python that remains: a filter without a model inside Catalyst's plan ----------

def test_a_filter_without_a_model_is_an_arrow_scalar_udf_inside_the_plan(spark):
    import re

    def looks_like_code(r):  # a regular expression: no model, stays Python
        return re.fullmatch(r"[ab]+", r["s"] or "") is not None

    flow = uf.source("t", dataframe=_frame(spark, _groups())).filter(looks_like_code)
    lowering = Lowering(spark, flow.physical())
    df = lowering.typed(flow.root)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan and "MapInArrow" not in plan
    expected = [r for r in _groups() if looks_like_code(r)]
    assert sorted(r["s"] for r in flow.collect()) == sorted(r["s"] for r in expected)


def test_an_error_in_a_scalar_udf_filter_names_the_function(spark):
    import re

    def strict(r):
        return re.match("a", r["s"]) is not None  # TypeError on None

    rows = _groups()
    rows[4] = {**rows[4], "s": None}
    flow = uf.source("t", dataframe=_frame(spark, rows)).filter(strict)
    with pytest.raises(UdfRuntimeError, match="strict"):
        flow.collect()


# -- Match and Cross functions: a Map over the concatenated pair -----------------------

def priced(left, right):
    if right["rate"] is not None and right["rate"] > 0:
        return {**left, **right, "cost": left["i"] * right["rate"]}
    return {**left, **right, "cost": 0}


def pair_names(left, right):
    return {"k": left["k"], "label": left["s"] + "/" + right["name"]}


@pytest.mark.parametrize("fn,kind", [(priced, "match"), (pair_names, "cross")], ids=["match", "cross"])
def test_a_pair_function_with_a_model_runs_natively_over_the_joined_row(spark, fn, kind):
    rates = jvm_frame(spark, [(0, 2, "zero"), (1, None, "one"), (2, -1, "two"), (3, 5, "three")],
                                  "rk long, rate long, name string")
    rows = [{**r, "s": r["s"] or "x"} for r in _groups()]
    left = uf.source("t", dataframe=_frame(spark, rows))
    right = uf.source("rates", dataframe=rates)
    flow = left.match(right, on=("k", "rk"), f=fn) if kind == "match" else left.cross(right, f=fn)
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert _run(flow, True) == _run(flow, False)


def test_a_map_without_a_model_is_a_struct_scalar_udf_with_the_rest_native(spark):
    import re

    def initials(r):  # re.sub: no model
        if r["i"] > 0:
            yield {**r, "s": re.sub("a", "A", r["s"]), "n_a": r["s"].count("a")}

    rows = _groups()
    flow = uf.source("t", dataframe=_frame(spark, rows)).map(initials)
    lowering = Lowering(spark, flow.physical())
    plan = lowering.typed(flow.root)._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan and "MapInArrow" not in plan
    expected = [out for r in rows for out in initials(dict(r))]
    assert _run(flow, True) == sorted((tuple(sorted(r.items())) for r in expected), key=repr)


def test_a_struct_scalar_udf_value_that_does_not_fit_its_sampled_type_raises(spark):
    def label(r):
        return {**r, "tag": "small" if r["k"] < 5 else 5}  # str on the sample, then an int

    rows = [{**_groups()[0], "k": 1}] * 300 + [{**_groups()[0], "k": 7}]  # the sample sees strs only
    flow = uf.source("t", dataframe=_frame(spark, rows).coalesce(1)).map(label)
    with pytest.raises(UdfRuntimeError, match="tag"):
        flow.collect()


# -- ANSI mode: the session's setting never decides an outcome, and is left as it was -----

def ratio(r):
    return {**r, "q": r["i"] // (r["k"] - 2), "m": r["i"] % -3}


def grows(r):
    return {**r, "big": r["i"] * 4611686018427387904}  # 2**62: overflows 64 bits for |i| > 1


@pytest.mark.parametrize("fn", [ratio, grows, revenue], ids=lambda f: f.__name__)
def test_ansi_mode_does_not_change_what_a_native_operator_returns_or_raises(spark, fn):
    rows = _groups()
    rows[5] = {**rows[5], "i": None}
    source = uf.source("t", dataframe=_frame(spark, rows))
    flow = source.reduce(["k"], fn) if fn in (int_total, revenue) else source.map(fn)
    python = _run(flow, False)
    before = spark.conf.get("spark.sql.ansi.enabled")
    try:
        for ansi in ("true", "false"):
            spark.conf.set("spark.sql.ansi.enabled", ansi)
            assert _run(flow, True) == python, ansi
            assert spark.conf.get("spark.sql.ansi.enabled") == ansi  # udflow left it as it was
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_a_python_filter_never_sees_a_record_an_earlier_filter_drops(spark):
    """Spark merges adjacent deterministic filters and then runs every Python UDF of the
    condition on every row: udflow pins its Python filters and maps where they stand."""
    import re

    def named(r):
        return r["s"] is not None  # native

    def starts_with_a(r):
        return re.match("a", r["s"]) is not None  # Python; raises TypeError on None

    def tagged(r):
        return {**r, "tag": re.sub("b", "B", r["s"])}  # Python (struct UDF); raises on None

    rows = _groups()
    rows[1] = {**rows[1], "s": None}
    flow = uf.source("t", dataframe=_frame(spark, rows)).filter(named).filter(starts_with_a)
    assert sorted(r["s"] for r in flow.collect()) == sorted(r["s"] for r in rows if r["s"] and r["s"][0] == "a")
    mapped = uf.source("t", dataframe=_frame(spark, rows)).filter(named).map(tagged).filter(
        lambda r: r["tag"] != "")
    assert len(mapped.collect()) == len([r for r in rows if r["s"]])


def test_a_group_filter_above_a_join_broadcasts_its_kept_keys_when_hinted(spark):
    """Spark sizes the kept keys of a group filter above a join as the product of the join's
    inputs and would shuffle every record for a sort-merge semi join; the cost model's hint
    "broadcast_kept" broadcasts them instead, and the rows are the same."""
    names = jvm_frame(spark, [(k, f"n{k}") for k in range(6)], "nk long, name string")
    flow = (uf.source("t", dataframe=_frame(spark, _groups()))
            .match(uf.source("names", dataframe=names), on=("k", "nk"))
            .reduce(["k"], named_groups))
    hinted = uf.Flow(flow.root, hints=((flow.root.label, "broadcast_kept"),))

    def semi_joins(f):
        plan = f.to_spark(spark)._jdf.queryExecution().sparkPlan().toString()
        return {line.strip(" +-:*()0123456789").split()[0] for line in plan.splitlines() if "LeftSemi" in line}

    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # Spark broadcasts nothing by itself
    try:
        assert semi_joins(flow) == {"SortMergeJoin"}
        assert semi_joins(hinted) == {"BroadcastHashJoin"}
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assert _run(hinted, True) == _run(flow, True) == _run(flow, False)


def test_an_unknown_reduce_hint_is_refused_naming_the_operator(spark):
    flow = uf.source("t", dataframe=_frame(spark, _groups())).reduce(["k"], named_groups)
    with pytest.raises(uf.UdflowError, match=r"Reduce\[k\]\(named_groups\).*broadcast_kept"):
        uf.Flow(flow.root, hints=((flow.root.label, "broadcast"),)).collect(spark=spark)
