"""`s.lower()` / `s.upper()` natively on ASCII rows, the other rows in Python (`native_case`).

Python's case tables are not the JVM's beyond ASCII ("İ", "ß", "ǅ", the Kelvin sign, a final
sigma); on ASCII they agree. The native form maps the rows whose fields are ASCII; on the
others, a Map's or a filter's call is computed by Python in the plan (handed those rows'
fields only), and over an explosion's pieces the general case (`general_case.split`) runs
the function in Python. Every row gets Python's value.
"""

from __future__ import annotations

import re

import pytest

import udflow as uf
from udflow.expr import Arith, Call, Elem, Field, IfElse, Lit, Slice
from udflow.spark_backend.lower import Lowering
from udflow.spark_backend.native_case import ascii_leaves, case_mapped, elem_ascii
from tests.both_engines import raised_on_both_engines
from tests.spark_plans import union_sides

WORDS = ["  Completed ", "ABC xyz", "İstanbul", "straße", "ΟΔΟΣ", "ǅemal", "ﬁne", "\u212a kelvin", "",
         "MiXeD Case", None, "tab\tSEP", "Ünïcode words"]
ROWS = [{"k": i % 3, "s": w} for i, w in enumerate(WORDS)]


def cased(r):
    return {**r, "low": r["s"].strip().lower() if r["s"] is not None else None,
            "up": r["s"].upper() if r["s"] else ""}


def is_completed(r):
    return r["s"] is not None and r["s"].strip().lower() == "completed"


def lowered_pieces(r):
    for raw in r["s"].split():
        word = raw.strip(".,").lower()
        if word and word != "fine":
            yield {**r, "w": word}


def replaced_then_lowered(r):
    return {**r, "low": r["s"].replace("x", "é").lower()}  # é: not ASCII whatever s holds


def stripped_twice(r):
    return {**r, "t": r["s"].strip(), "low": r["s"].strip().lower()}  # the strip recurs: a hidden column


def _bag(rows):
    return sorted(repr(sorted(r.items())) for r in rows)


def _lowered(spark, flow):
    chosen = uf.optimize(flow).chosen
    lowering = Lowering(spark, chosen.flow.physical(), samples=dict(chosen.samples))
    rows = lowering.records(chosen.node)
    plan = lowering.lower(chosen.node).df._jdf.queryExecution().executedPlan().toString()
    return chosen, lowering, rows, plan


@pytest.mark.parametrize("fn", [cased, is_completed], ids=["map", "filter"])
def test_a_case_mapping_runs_natively_on_ascii_rows_and_as_a_python_call_on_the_others(spark, fn):
    flow = uf.source("t", rows=ROWS).filter(fn) if fn is is_completed else uf.source("t", rows=ROWS).map(fn)
    assert flow.physical().root.describe() == "native"  # as the general case: the rows beyond ASCII are rare
    chosen, lowering, rows, plan = _lowered(spark, flow)
    assert chosen.node.label in lowering.native_labels and not lowering.general_cases, lowering.python_reasons
    assert "lower(" in plan and "octet_length" in plan, plan
    assert "ArrowEvalPython" in plan and "MapInArrow" not in plan and "Union" not in plan, plan  # one pass
    assert _bag(rows) == _bag(flow.collect(engine="reference")) and rows


def test_the_python_call_is_handed_the_rows_beyond_ascii_only(spark):
    """The UDF's input column is null on ASCII rows: Python runs the call on the others only."""
    flow = uf.source("t", rows=ROWS).map(cased)
    _, _, _, plan = _lowered(spark, flow)
    assert "CASE WHEN coalesce(" in plan and "octet_length" in plan, plan


def test_over_an_explosions_pieces_the_rows_beyond_ascii_run_the_function_in_python(spark):
    flow = uf.source("t", rows=[r for r in ROWS if r["s"] is not None]).map(lowered_pieces)
    assert flow.physical().root.describe() == "native"
    chosen, lowering, rows, plan = _lowered(spark, flow)
    assert chosen.node.label in lowering.native_labels, lowering.python_reasons
    native_side, python_side = union_sides(plan)
    assert "ArrowEvalPython" not in native_side and "lower(" in native_side, plan
    # its rows are ASCII texts, so their pieces are: no piece is checked again
    assert not re.search(r"octet_length\(__udflow_elem", native_side), native_side
    # the non-ASCII rows: the function in Python once per record, over the field it reads,
    # its emitted words exploded by Spark (no Python per piece)
    assert "octet_length" in python_side and re.search(r"ArrowEvalPython \[run\(s#", python_side), plan
    assert "Generate inline(pythonUDF" in python_side, plan
    assert _bag(rows) == _bag(flow.collect(engine="reference")) and rows


def test_every_word_comes_out_as_python_maps_it(spark):
    rows = uf.source("t", rows=ROWS).map(cased).collect(spark=spark)
    by_word = {r["s"]: (r["low"], r["up"]) for r in rows}
    assert by_word["İstanbul"] == ("i̇stanbul", "İSTANBUL") and by_word["straße"][1] == "STRASSE"
    assert by_word["\u212a kelvin"][0] == "k kelvin" and by_word["ǅemal"] == ("ǆemal", "ǄEMAL")
    assert all(by_word[w] == (w.strip().lower(), w.upper()) for w in WORDS if w)


def test_a_receiver_not_shown_ascii_runs_the_call_in_python(spark):
    flow = uf.source("t", rows=[r for r in ROWS if r["s"] is not None]).map(replaced_then_lowered)
    assert flow.physical().root.describe().startswith("native, with Python for str.lower")
    _, lowering, rows, plan = _lowered(spark, flow)
    assert "ArrowEvalPython" in plan and "MapInArrow" not in plan, plan
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_a_case_mapping_of_a_hidden_column_runs_in_python_and_gives_pythons_values(spark):
    """A term a later field reuses is a hidden column (`native_ops._shared_below`), not an input
    column a row condition can read: the call runs as Python there, still Python's values."""
    flow = uf.source("t", rows=[r for r in ROWS if r["s"] is not None]).map(stripped_twice)
    _, _, rows, _ = _lowered(spark, flow)
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_a_none_receiver_raises_pythons_attribute_error_on_both_engines(spark):
    flow = uf.source("t", rows=[{"s": "A"}, {"s": None}]).map(lambda r: {**r, "low": r["s"].lower()})
    said = raised_on_both_engines(flow)
    assert said[0] == said[1] and said[0].startswith("AttributeError: 'NoneType' object has no attribute 'lower'")


S, T = Field("s"), Field("t")


@pytest.mark.parametrize("term, leaves", [
    (S, {S}),
    (Call("str.strip", (S, Lit(".é"))), {S}),  # strip removes characters: its chars do not matter
    (Call("str.replace", (S, Lit("a"), T)), {S, T}),
    (Call("str.replace", (S, Lit("a"), Lit("é"))), None),
    (Arith("+", Slice(S, 1, None), Lit("-")), {S}),
    (IfElse(Field("b"), Call("str.lower", (S,)), T), {S, T}),
    (Lit("straße"), None),
    (Call("str.title", (S,)), None),  # udflow does not follow its characters
    (Call("str", (Field("n"),)), None),
])
def test_the_fields_that_make_a_term_ascii(term, leaves):
    assert ascii_leaves(term) == (None if leaves is None else frozenset(leaves))


def test_a_piece_is_ascii_where_its_split_string_is():
    piece = Call("str.lower", (Call("str.strip", (Elem(), Lit("."))),))
    assert case_mapped(piece, Call("str.strip", (S,))) and elem_ascii(Call("str.strip", (S,))) == ("s",)
    assert not case_mapped(piece, None)  # a list's items (Python's): nothing shows them ASCII
    assert not case_mapped(Call("str.lower", (Field("__udflow_let0"),)), None)
