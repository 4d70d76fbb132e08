"""Calls of the user's own helpers inside a native plan (issue 29, items 2 and 3): a helper with
no value model (these have a try statement; `helper_models` inlines the others) runs as
Python, once per row, and everything around it natively; its errors are raised where Python
raises them, its result typed by the driver's sample."""

from datetime import datetime

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.errors import UdfRuntimeError
from udflow.helper_calls import HelperCall
from udflow.samples import output_samples
from udflow.spark_backend.lower import Lowering

ROWS = [
    {"k": i, "status": s, "at": at, "n": n}
    for i, (s, at, n) in enumerate([
        (" completed ", "2025-03-04 10:00:00", 1), ("COMPLETED", "2024-12-31 23:59:59", 2),
        ("completed", "not a time", 3), ("cancelled", "2025-01-01 00:00:00", 4),
        ("Completed", "", None), ("completed", "2025-11-30 08:15:00", -1),
    ])
]


def _parse(text):
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
    except (ValueError, AttributeError) as exc:  # binds the error: no value model (`caught_form`)
        return None


def completed(r):
    status = r["status"].strip().upper()
    placed = _parse(r["at"])
    if status == "COMPLETED" and placed is not None and placed.year == 2025:
        yield {**r, "status": status, "month": placed.month}


def _inverse(n):
    try:  # the error bound: no value model, so the helper is a call (`helper_models` inlines the others)
        return 1 / n
    except TypeError as exc:  # noqa: F841
        return None


def inverted(r):
    return {**r, "inv": _inverse(r["n"]) if r["n"] is not None and r["n"] > 1 else None}


def _label(n):
    try:  # the error bound: not inlined, typed by the sample
        return "big" if n > 2 else 7
    except TypeError as exc:  # noqa: F841
        return None


def labelled(r):
    return {**r, "label": _label(r["n"]) if r["n"] is not None else None}


def seven(r):
    return {**r, "seven": _label(r["n"]) == 7 if r["n"] is not None else None}


def stripped_if_any(r):
    return {**r, "up": r["status"].strip().upper() if r["n"] is not None else None}


def _rows(flow, native):
    return sorted((tuple(sorted(r.items())) for r in flow.collect(native=native)), key=repr)


def _lowered(spark, flow):
    lowering = Lowering(spark, flow.physical(), samples=dict(output_samples(flow.root)))
    return lowering, lowering.typed(flow.root)


def test_a_helper_of_plain_values_is_a_call_in_the_model():
    model = analyze(completed, ["status", "at", "k", "n"], "map").model
    calls = {t for case in model.cases for t in case.guard.walk() if isinstance(t, HelperCall)}
    assert {c.name for c in calls} == {"_parse"}
    # `placed` is computed on every path, used on some: the first guard computes it
    assert str(model.cases[0].guard).startswith("(computed(r['status'].strip().upper()) and computed(_parse(r['at']))")


def test_the_helper_runs_once_per_row_inside_the_native_plan(spark):
    flow = uf.source("t", rows=ROWS).map(completed)
    lowering, df = _lowered(spark, flow)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    plan = df._jdf.queryExecution().executedPlan().toString()
    passes = [line for line in plan.splitlines() if "ArrowEvalPython" in line]
    # one Python pass: the helper, and strip().upper() handed only the rows beyond ASCII (native on the others)
    assert len(passes) == 1 and passes[0].count("__udflow_term_") == 2 and "THEN status" in passes[0], passes
    assert _rows(flow, True) == _rows(flow, False)
    assert {r["month"] for r in flow.collect()} == {3, 11}


def test_a_helper_raises_where_python_raises_and_only_there(spark):
    fine = uf.source("t", rows=[r for r in ROWS if r["n"] != 0]).map(inverted)
    lowering, _ = _lowered(spark, fine)
    assert fine.root.label in lowering.native_labels, lowering.python_reasons
    assert _rows(fine, True) == _rows(fine, False)

    def always(r):
        return {**r, "inv": _inverse(r["n"] - 3) if r["n"] is not None else None}

    raising = uf.source("t", rows=ROWS).map(always)
    for native in (True, False):
        with pytest.raises(UdfRuntimeError, match="ZeroDivisionError: division by zero") as caught:
            raising.collect(native=native)
        assert "always" in str(caught.value)


def test_a_helper_returning_two_types_on_the_sample_stays_python_and_says_so(spark):
    flow = uf.source("t", rows=ROWS).map(seven)
    lowering, _ = _lowered(spark, flow)
    assert flow.root.label not in lowering.native_labels
    assert "returns int, str on the sampled records" in lowering.python_reasons[flow.root.label]
    assert _rows(flow, True) == _rows(flow, False)


def test_a_helper_returning_another_type_than_sampled_raises_instead_of_converting(spark):
    sampled = [r for r in ROWS if r["n"] is not None and r["n"] > 2]  # _label gives "big" on these
    flow = uf.source("t", rows=sampled).map(labelled)
    lowering = Lowering(spark, flow.physical(), samples=dict(output_samples(flow.root)))
    wider = uf.source("t", rows=ROWS).map(labelled)  # the same plan over records where it returns 7
    lowering.samples = {wider.root.input.label: lowering.samples[flow.root.input.label]}
    df = lowering.typed(wider.root)
    from udflow.spark_backend.udf import translated

    with pytest.raises(UdfRuntimeError, match="_label returned 7 here, where it returned a str"):
        with translated():
            df.collect()


def test_an_argument_that_raises_is_raised_only_where_its_branch_is_taken(spark):
    rows = ROWS + [{"k": 9, "status": None, "at": "", "n": None}]
    flow = uf.source("t", rows=rows).map(stripped_if_any)
    lowering, _ = _lowered(spark, flow)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert _rows(flow, True) == _rows(flow, False)
    taken = uf.source("t", rows=rows[:-1] + [{**rows[-1], "n": 1}]).map(stripped_if_any)
    with pytest.raises(UdfRuntimeError, match="AttributeError: 'NoneType' object has no attribute 'strip'"):
        taken.collect()
