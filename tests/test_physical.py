"""The physical plan (issue 29, item 1): how each operator runs is decided once, from the
models, and the cost model, `explain` and the Spark lowering all read that one decision."""

import re
import warnings

import pytest

import udflow as uf
from udflow.engine.cost import CostModel
from udflow.engine.statistics import SourceStatistics
from udflow.engine.steps import physical_plan
from udflow.spark_backend.forms import SPARK_FORMS
from udflow.errors import FieldWarning, NativeFallbackWarning
from udflow.physical import PhysicalPlan, Step
from udflow.spark_backend.lower import Lowering

ORDERS = [{"o_id": i, "o_cust": i % 4, "o_total": float(i) * 1.5, "o_note": f"n{i} x"} for i in range(20)]
CUSTOMERS = [{"c_id": i, "c_name": f"C{i}"} for i in range(4)]


def big(r):
    return r["o_total"] > 6.0


def noted(r):
    m = re.match(r"n(\d+)", r["o_note"])  # a match object's .start(): no model
    return {**r, "o_digits": m.start(1)}


def doubled(r):
    return {**r, "o_twice": r["o_total"] * 2}


def worded(r):
    return {"o_id": r["o_id"], "o_word": r["o_note"].center(20), "o_total": r["o_total"]}  # center: no model


def per_customer(rows):
    rows = list(rows)
    yield {"o_cust": rows[0]["o_cust"], "n": len(rows), "spent": sum(r["o_total"] for r in rows)}


def orders():
    return uf.source("orders", rows=ORDERS, key="o_id")


def test_the_plan_prints_one_line_per_operator_parents_first():
    flow = orders().filter(big).map(doubled)
    assert str(flow.physical()) == "\n".join([
        "Map(doubled)    native",
        "Filter(big)     native",
        "Source(orders)  native scan",
    ])


def test_a_python_step_names_the_construct_and_the_fields_it_is_shown():
    step = orders().map(noted).physical().root
    assert step.how == "scalar" and step.reads == frozenset({"o_note", "o_digits"})  # read and written
    assert re.fullmatch(r"Python \(scalar UDF\): .*\.start\(\).*\(line \d+\)", step.describe())


def test_a_modelled_function_over_pickled_records_is_planned_in_python_and_says_why():
    """A Map creating fields in Python leaves pickled records: no columns for the model above."""
    plan = orders().map(worded).map(doubled).physical()
    below, above = plan["Map(worded)"], plan["Map(doubled)"]
    assert below.how == "batches" and below.pickled and "line" in below.reason
    assert above.how == "batches" and above.reason == "its input is pickled Python records (no columns)"
    assert orders().map(doubled).physical().root.native  # the same function over columns


def misspelled(r):
    return {**r, "o_twice": r["o_totl"] * 2}


def test_a_read_of_a_field_the_input_lacks_is_planned_python_and_raises_pythons_key_error(spark):
    """No column holds `o_totl`: the plan says so (no lowering finds it later), and on
    Spark the function raises Python's KeyError, naming the closest field."""
    with pytest.warns(FieldWarning, match="o_totl"):
        flow = orders().map(misspelled)
    step = flow.physical().root
    assert step.how == "scalar" and step.reason == "reads field 'o_totl', which its input does not have"
    with warnings.catch_warnings():
        warnings.simplefilter("error", NativeFallbackWarning)  # decided by the plan, not by the lowering
        with pytest.raises(uf.UdfRuntimeError, match="KeyError: 'o_totl'.*did you mean 'o_total'"):
            flow.collect(spark=spark)


def test_a_native_step_names_its_python_fallback():
    step = orders().map(doubled).physical().root
    assert step.native and step.fallback is not None and step.fallback.how == "scalar"
    assert step.as_python is step.fallback
    assert orders().map(doubled).physical(native=False).root.describe().startswith("Python (scalar UDF)")


def test_a_join_step_carries_its_strategy_and_the_lowering_reads_it(spark):
    flow = orders().match(uf.source("customers", rows=CUSTOMERS, key="c_id"), on=("o_cust", "c_id"))
    label = flow.root.label
    plan = physical_plan(flow.root, {label: "broadcast_right"}, SPARK_FORMS)
    assert plan.root == Step(label, "join", strategy="broadcast_right", columns=plan.root.columns)
    assert plan.root.describe() == "native join (broadcast_right)"
    executed = Lowering(spark, plan).typed(flow.root)._jdf.queryExecution().executedPlan().toString()
    assert "Broadcast" in executed


def test_the_lowering_runs_what_the_plan_says(spark):
    flow = orders().filter(big).map(noted).map(doubled).reduce("o_cust", per_customer, name="per_customer")
    plan = flow.physical()
    lowering = Lowering(spark, plan)
    rows = lowering.records(flow.root)
    assert lowering.native_labels == {s.label for s in plan.steps if s.native}, lowering.python_reasons
    assert lowering.python_reasons == {}
    assert sorted(rows, key=lambda r: r["o_cust"]) == sorted(flow.collect(engine="reference"),
                                                             key=lambda r: r["o_cust"])


def test_the_cost_model_prices_each_operator_by_the_same_step():
    flow = orders().filter(big).map(noted).map(doubled)
    model = CostModel({"orders": SourceStatistics(rows=len(ORDERS), width=40.0)}, {}, forms=SPARK_FORMS)
    plan = flow.physical()
    for node in flow.root.walk():
        assert model.step(node) == plan[node.label]


def test_explain_prints_the_chosen_plans_steps():
    opt = uf.optimize(orders().map(noted).filter(big))
    text = opt.explain()
    shown = text.split("How the chosen plan runs on Spark")[1].splitlines()[1:]
    steps = opt.best.physical().lines()
    assert [line.strip() for line in shown[:len(steps)]] == [line.strip() for line in steps]


def test_a_step_refuses_an_unknown_way_to_run():
    with pytest.raises(ValueError, match="unknown way to run 'quickly'"):
        Step("Map(f)", "quickly")
    with pytest.raises(KeyError, match="no operator 'Map\\(g\\)'"):
        PhysicalPlan((Step("Map(f)", "native"),))["Map(g)"]


def test_the_plan_asks_the_backend_it_is_handed_what_runs_natively():
    """The engine plans with the forms the backend hands it (`udflow.native_forms`): a
    backend without a native `abs` plans the same Map as Python, naming the call."""
    from dataclasses import replace

    def absolute(r):
        return {**r, "o_abs": abs(r["o_total"])}

    flow = orders().map(absolute)
    assert physical_plan(flow.root, forms=SPARK_FORMS).root.native
    without_abs = replace(SPARK_FORMS, name="no abs", calls=SPARK_FORMS.calls - {"abs"})
    step = physical_plan(flow.root, forms=without_abs).root
    assert not step.native and "calls abs, which has no exact native form" in step.reason
    assert physical_plan(flow.root, forms=None).root.reason == "native lowering is off"


def test_the_engines_planning_does_not_import_the_spark_backend():
    """Which calls run natively is the backend's to say: the modules that decide and cost the
    physical plan import no `udflow.spark_backend` module (only the entry points that pick
    the backend do, when called)."""
    import ast
    import pathlib

    engine = pathlib.Path(uf.__file__).parent / "engine"
    for name in ("steps.py", "cost.py", "pieces_in_python.py"):
        tree = ast.parse((engine / name).read_text())
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module] + \
                   [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("udflow.spark_backend")], (name, imported)
