"""Partial lowering (issue 29, item 2): a model's call with no exact native form (`str.title`,
`str.capitalize`, `round` near a tie, `math.*`) runs as an Arrow UDF inside the native plan, everything around
it as Spark expressions (`udflow/spark_backend/python_calls.py`). `str.lower`/`str.upper` run
natively on the rows whose text is ASCII, the others in Python (`native_case`).

Python's values and errors, on both engines: Unicode case mappings the JVM does differently,
float ties that Spark would round on the decimal text, None receivers, NaN and infinity; an
error in a branch the record does not take is never raised, one in a branch it takes is
raised in Python's words.
"""

from __future__ import annotations

import datetime
import math
import re

import pytest

import udflow as uf
from udflow.errors import UdfRuntimeError
from udflow.spark_backend.lower import Lowering
from tests.both_engines import raised_on_both_engines

WORDS = [" Completed ", "İstanbul", "straße", "ΟΔΟΣ", "ǅemal", "ﬁne", None, "", "MiXeD"]
NUMBERS = [2.675, 0.125, -0.5, 2.5, 1.005, -1e-9, 12345.6789, 3.0, 0.0]
ROWS = [{"k": i % 3, "s": WORDS[i % len(WORDS)], "x": NUMBERS[i % len(NUMBERS)], "n": i - 4} for i in range(36)]


def lowered(r):
    return {**r, "low": r["s"].lower() if r["s"] is not None else None, "up": r["s"].upper() if r["s"] else ""}


def titled(r):
    return {**r, "low": r["s"].title() if r["s"] is not None else None, "up": r["s"].capitalize() if r["s"] else ""}


def stripped_title_is_completed(r):
    return r["s"] is not None and r["s"].strip().title() == "Completed"


def rounded(r):
    return {**r, "r2": round(r["x"], 2), "r0": round(r["x"]), "ri": round(r["n"], -1)}


def rounded_total(rows):
    rows = list(rows)
    total = sum(r["x"] for r in rows)
    yield {"k": rows[0]["k"], "total": round(total, 3), "whole": round(total), "th": math.tanh(len(rows))}


def measured(r):
    return {**r, "root": math.sqrt(r["x"]) if r["x"] >= 0 else None, "lg": 2 * math.log10(abs(r["x"]) + 1),
            "fl": math.floor(r["x"]), "ce": math.ceil(r["n"] / 3), "based": math.log(r["n"] + 10, 2)}


def logged_total(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "lg": 2 * math.log10(sum(r["n"] for r in rows) + 100)}  # not a field's whole value


def out_of_domain(r):
    return {**r, "lg": math.log(r["x"])}


def no_receiver(r):
    return {**r, "low": r["s"].lower()}


def not_a_number(r):
    return {**r, "r0": round(r["x"])}


def _bag(rows):
    return sorted(repr(sorted(r.items())) for r in rows)


def _run(spark, flow):
    lowering = Lowering(spark, flow.physical())
    rows = lowering.records(flow.root)
    return lowering, rows


CASES = [
    ("map", lambda src: src.map(titled)),
    ("round", lambda src: src.map(rounded)),  # natively off a tie, Python's call near one
    ("filter", lambda src: src.filter(stripped_title_is_completed)),
    ("reduce", lambda src: src.reduce(["k"], rounded_total)),
    ("math", lambda src: src.map(measured)),
    ("math over aggregates", lambda src: src.reduce(["k"], logged_total)),
]


@pytest.mark.parametrize("name, build", CASES, ids=[c[0] for c in CASES])
def test_the_operator_runs_natively_with_the_call_in_python_and_gives_pythons_records(spark, name, build):
    flow = build(uf.source("t", rows=ROWS))
    assert flow.physical().root.describe().startswith("native, with Python for ")
    lowering, rows = _run(spark, flow)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    plan = lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan and "__udflow_term_" in plan
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_the_unicode_the_jvm_maps_otherwise_comes_out_as_python_maps_it(spark):
    _, rows = _run(spark, uf.source("t", rows=ROWS).map(lowered))
    by_word = {r["s"]: (r["low"], r["up"]) for r in rows}
    assert by_word["İstanbul"] == ("İstanbul".lower(), "İSTANBUL")  # Python: 'i̇stanbul' (with a combining dot)
    assert by_word["straße"][1] == "STRASSE" and by_word["ﬁne"][1] == "FINE"
    assert all(by_word[w] == (w.lower(), w.upper()) for w in WORDS if w)


def test_round_is_pythons_on_the_binary_value_not_sparks_on_the_decimal_text(spark):
    flow = uf.source("t", rows=ROWS).map(rounded)
    assert flow.physical().root.describe() == "native, with Python for round (line 43)"  # near a tie only
    lowering, rows = _run(spark, flow)
    plan = lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan  # 2.675 and 1.005 are near a tie at 2 digits: Python's rows
    assert _bag(rows) == _bag(flow.collect(engine="reference"))
    assert {r["x"]: r["r2"] for r in rows}[2.675] == 2.67  # Spark's round/bround give 2.68
    assert {r["x"]: r["r0"] for r in rows}[2.5] == 2 and {r["x"]: r["r0"] for r in rows}[-0.5] == 0


INFINITE = [{"k": 0, "s": "a", "x": 1.5, "n": 0}, {"k": 1, "s": "b", "x": math.inf, "n": 1}]


@pytest.mark.parametrize("fn, rows, error", [
    (no_receiver, ROWS, "AttributeError: 'NoneType' object has no attribute 'lower'"),
    (not_a_number, INFINITE, "OverflowError: cannot convert float infinity to integer"),
    (out_of_domain, ROWS, "ValueError: math domain error"),
])
def test_an_error_of_the_call_is_pythons_on_both_engines(spark, fn, rows, error):
    flow = uf.source("t", rows=rows).map(fn)
    assert flow.physical().root.describe().startswith("native")
    messages = []
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError) as raised:
            flow.collect(engine=engine, spark=spark)
        messages.append(str(raised.value).split("\n")[0])
    assert error in messages[0] and messages[0] == messages[1]


def lowered_upper(r):
    return {**r, "lu": r["s"].title().capitalize() if r["s"] is not None else None}


def test_a_call_over_another_call_is_one_python_term_with_no_column_for_the_inner_call(spark):
    """`s.title().capitalize()`: the outer call computes its argument itself, so the inner call,
    lowered only for its type, adds no column of its own."""
    flow = uf.source("t", rows=ROWS).map(lowered_upper)
    lowering, rows = _run(spark, flow)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    plan = lowering.lower(flow.root).df._jdf.queryExecution().analyzed().toString()
    assert plan.count("__udflow_term_") == 1, plan
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def test_a_call_in_a_branch_the_record_does_not_take_never_raises(spark):
    """Spark evaluates the UDF on every row (it sits below the CASE); the error it caught is
    raised only where the branch is taken."""
    flow = uf.source("t", rows=ROWS).map(lowered)  # s is None on some rows: .lower() not reached there
    _, rows = _run(spark, flow)
    assert any(r["s"] is None and r["low"] is None for r in rows)


def lowered_pieces(r):
    for word in r["s"].split():
        yield {"k": r["k"], "w": word.title()}


def lowered_inside_a_sum(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "n": sum(len(r["s"].title()) for r in rows)}


def test_inside_an_aggregate_the_call_keeps_the_operator_in_python(spark):
    flow = uf.source("t", rows=ROWS).filter(lambda r: r["s"] is not None).reduce(["k"], lowered_inside_a_sum)
    assert flow.physical().root.describe().startswith("Python")
    lowering, rows = _run(spark, flow)
    assert flow.root.label not in lowering.native_labels
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def _short_stem(word):
    try:  # a try statement: no value model, so the helper is not inlined (`helper_models`)
        for suffix in ("es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 2:
                return word[:-len(suffix)]
        return word
    except TypeError:
        return None


def pieces_of_upper(r):
    for word in r["s"].title().split(" "):
        yield {**r, "w": word, "n": len(word)}


def test_an_explosions_source_call_runs_in_python_before_a_native_split(spark):
    """issue 29, item 2: the source's call runs once per record before the split, which
    explodes natively"""
    flow = uf.source("t", rows=ROWS).filter(lambda r: r["s"] is not None).map(pieces_of_upper)
    chosen = uf.optimize(flow).chosen
    step = chosen.flow.physical()[chosen.node.label]
    assert step.describe().startswith("native, with Python for") and "str.title" in step.describe()
    lowering = Lowering(spark, chosen.flow.physical(), samples=dict(chosen.samples))
    rows = lowering.records(chosen.node)
    assert chosen.node.label in lowering.native_labels
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


def stemmed_tokens(r):
    for word in r["s"].split(" "):
        if word.title() not in ("The", "A"):
            yield {"k": r["k"], "w": _short_stem(word.title()), "tag": "t"}


def kept_pieces(r):
    for word in r["s"].split():
        if word.title() != "Fine":  # only the guard needs Python
            yield {**r, "w": word}


def _number(word):
    try:  # not inlined: the list is Python's
        return int(word)
    except TypeError:
        return None


def counted_pieces(r):
    for word in r["s"].split():
        yield {"k": r["k"], "n": _number(word)}  # ValueError on a word that is no int


@pytest.mark.parametrize("fn", [lowered_pieces, stemmed_tokens, kept_pieces], ids=["call", "helper", "guard"])
def test_an_explosion_whose_pieces_need_python_builds_their_list_in_python_and_explodes_natively(spark, fn):
    """issue 29, item 2: a call on each piece (str.title, the user's helper) would cross to
    Python once per piece; the list of what the pieces give is built once per record
    (`engine.pieces_in_python`), Spark explodes it and copies the record's fields"""
    flow = uf.source("t", rows=ROWS).filter(lambda r: r["s"] is not None).map(fn)
    said = flow.physical()[flow.root.label].describe()
    assert said.startswith("native, with Python for the pieces of the explosion"), said
    chosen = uf.optimize(flow).chosen  # its sample types the list's items
    lowering = Lowering(spark, chosen.flow.physical(), samples=dict(chosen.samples))
    rows = lowering.records(chosen.node)
    assert chosen.node.label in lowering.native_labels
    plan = lowering.lower(chosen.node).df._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" in plan and "explode(" in plan
    assert _bag(rows) == _bag(flow.collect(engine="reference"))


@pytest.mark.parametrize("bad, error", [
    ("4 five 6", "ValueError: invalid literal for int() with base 10: 'five'"),
    (None, "AttributeError: 'NoneType' object has no attribute 'split'"),
], ids=["on-a-piece", "on-the-source"])
def test_an_error_building_the_list_is_pythons_on_both_engines(spark, bad, error):
    """Python's words and Python's line: the yield's for a piece's error, the loop's for
    the source's (`Pieces.raising_line`)"""
    good = uf.source("t", rows=[{"k": 1, "s": "1 2 3"}]).map(counted_pieces)
    samples = dict(uf.optimize(good).chosen.samples)  # the sample the optimizer took, which types the items
    flow = uf.source("t", rows=[{"k": 1, "s": "1 2 3"}, {"k": 2, "s": bad}]).map(counted_pieces)
    assert flow.physical()[flow.root.label].describe().startswith("native, with Python for the pieces")
    lowering = Lowering(spark, flow.physical(), samples=samples)
    with pytest.raises(UdfRuntimeError) as on_spark:
        lowering.records(flow.root)
    assert flow.root.label in lowering.native_labels
    with pytest.raises(UdfRuntimeError) as in_python:
        flow.collect(engine="reference")
    said = [str(e.value).splitlines()[0].split(" raised ", 1)[1] for e in (in_python, on_spark)]
    assert said[0] == said[1] and said[0].startswith(error + " (line ")


def pieces_and_lengths(r):
    for word in r["s"].split(" "):
        yield {**r, "w": _short_stem(word.lower()), "n": len(word)}


def pieces_with_a_computed_field(r):
    for word in r["s"].split(" "):
        yield {"k": r["k"] * 2, "w": word.title()}


@pytest.mark.parametrize("fn, why", [
    (pieces_and_lengths, "calls your helper _short_stem on each piece"),
    (pieces_with_a_computed_field, "calls str.title on each piece"),
], ids=["two-fields-read-the-piece", "a-computed-record-field"])
def test_an_explosion_the_list_cannot_carry_stays_in_python(spark, fn, why):
    """The list carries one value per piece, and the record's other fields must be copies
    or constants (they are computed after every piece's value, so they must not raise):
    otherwise the whole function runs in Python, as it is written."""
    flow = uf.source("t", rows=ROWS).filter(lambda r: r["s"] is not None).map(fn)
    said = flow.physical()[flow.root.label].describe()
    assert said.startswith("Python") and why in said, said
    assert _bag(flow.collect(spark=spark)) == _bag(flow.collect(engine="reference"))


def tagged(r):
    return {**r, "tag": f"{r['s']}#{r['n']}/{r['n'] > 0}", "plain": str(r["n"])}


def tagged_float(r):
    return {**r, "tag": f"x={r['x']}"}


def test_an_f_string_of_str_int_bool_and_none_is_native(spark):
    """`f"{a}#{b}"` is str(a) + "#" + str(b): None as 'None', an int's digits, True/False."""
    flow = uf.source("t", rows=ROWS).map(tagged)
    assert flow.physical().root.describe() == "native"
    lowering, rows = _run(spark, flow)
    assert flow.root.label in lowering.native_labels
    assert "ArrowEvalPython" not in lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    assert _bag(rows) == _bag(flow.collect(engine="reference"))
    assert any(r["tag"].startswith("None#") for r in rows)


def test_an_f_string_of_a_float_writes_pythons_repr(spark):
    """`str()` of a float has no native form (Spark's cast writes 1.0E22): the call alone runs as
    Python (which type a field holds is known only when the plan is lowered)."""
    flow = uf.source("t", rows=ROWS + [{"k": 9, "s": "z", "x": 1e22, "n": 0}]).map(tagged_float)
    lowering, rows = _run(spark, flow)
    assert flow.root.label in lowering.native_labels
    assert "__udflow_term_" in lowering.lower(flow.root).df._jdf.queryExecution().executedPlan().toString()
    assert _bag(rows) == _bag(flow.collect(engine="reference"))
    assert {r["tag"] for r in rows} >= {"x=1e+22", "x=2.675", "x=-0.5"}  # Spark's cast: 1.0E22


def status_first(r):
    status = r["s"].strip().title()  # Python computes it first, on every row
    if status == "Completed" or status.startswith("M"):
        yield {**r, "status": status, "size": len(status)}


def status_second(r):
    status = r["s"].strip().title()
    if r["n"] > -3 and status == "Completed":  # an `and` that held computed every operand
        yield {**r, "status": status, "size": len(status)}


@pytest.mark.parametrize("fn", [status_first, status_second])
def test_a_call_computed_first_is_checked_for_its_error_once_and_read_plainly_after(spark, fn):
    """The statement Python runs first (`status = ...`, the model's guard `computed(...)`) raises
    the call's error there; every later read of it, in the filter and in the fields, is on a
    row that computed it without raising, so it reads the value with no check of its own
    (each check repeats the error's whole SQL, which Spark parses and analyses)."""
    flow = uf.source("t", rows=[r for r in ROWS if r["s"] is not None]).map(fn)
    lowering, rows = _run(spark, flow)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert _bag(rows) == _bag(flow.collect(engine="reference")) and rows
    plan = lowering.lower(flow.root).df._jdf.queryExecution().analyzed().toString()
    projections = [line for line in plan.splitlines() if "Project" in line and "__udflow_term_" not in line]
    # checked once, where the hidden column computing `status` reads it (`native_shared`)
    checked = [line for line in projections if ".error" in line]
    assert len(checked) == 1 and "AS __udflow_let" in checked[0], plan
    if fn is status_first:  # `or`'s second operand
        assert re.search(r"StartsWith\(__udflow_let#\d+, M\)", plan), plan
    broken = uf.source("t", rows=ROWS).map(fn)  # a None status: AttributeError, first
    messages = []
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError) as raised:
            broken.collect(engine=engine, spark=spark)
        messages.append(str(raised.value).split("\n")[0])
    # the line of the statement that computes it, which the reference's traceback names
    assert f"(line {fn.__code__.co_firstlineno + 1})" in messages[0]
    assert "AttributeError: 'NoneType' object has no attribute 'strip'" in messages[0] and messages[0] == messages[1]


PUNCTUATION = ".,!?;:"
STOP_WORDS = frozenset({"a", "the", "of"})
TEXTS = ["İstanbul, the straße! ΟΔΟΣ...", "", "a  Bb ,, Of", "x", "...", "Ünïcode;  words:of", "one,,two"]


def long_pieces(r):
    for raw in r["s"].split():
        word = raw.strip()
        n = len(word)
        if n > 1 and word not in STOP_WORDS:
            yield {"k": r["k"], "token": word, "n": n}


def tenth_of_each(r):
    for raw in r["s"].split(","):
        n = len(raw)
        if 10 // n > 1:  # an empty piece (",,") divides by zero, as in Python
            yield {**r, "piece": raw, "n": n}


def test_an_explosion_under_a_condition_with_names_bound_in_its_body_runs_natively(spark):
    """issue 29, item 2: a tokenizer's shape, names bound per piece and an `if` before the
    `yield`: explode natively, then filter the pieces by the condition"""
    rows = [{"k": i, "s": t} for i, t in enumerate(TEXTS)]
    flow = uf.source("t", rows=rows).map(long_pieces)
    assert "if " in str(flow.physical()[flow.root.label].model)
    chosen = uf.optimize(flow).chosen
    lowering = Lowering(spark, chosen.flow.physical(), samples=dict(chosen.samples))
    got = lowering.records(chosen.node)
    assert chosen.node.label in lowering.native_labels
    assert _bag(got) == _bag(flow.collect(engine="reference"))


def test_an_explosions_condition_raises_on_the_piece_python_raises_on():
    rows = [{"k": 1, "s": "ab,cde,f"}, {"k": 2, "s": "ok,,x"}]
    fine = uf.source("t", rows=rows[:1]).map(tenth_of_each)
    assert fine.physical().root.native
    assert _bag(fine.collect()) == _bag(fine.collect(engine="reference"))
    said = raised_on_both_engines(uf.source("t", rows=rows).map(tenth_of_each))
    assert said[0] == said[1] == "ZeroDivisionError: integer division or modulo by zero (line {})".format(
        tenth_of_each.__code__.co_firstlineno + 3)


def cleaned_words(text):
    """A tokenizer as users write one: a loop that appends (no term of the IR says its list)."""
    out = []
    for raw in text.split():
        word = raw.strip(PUNCTUATION).lower()
        if word and word not in STOP_WORDS:
            out.append(word)
    return out


def words_of(r):
    for token in cleaned_words(r["s"]):
        yield {"k": r["k"], "token": token}


def maybe_sizes(n):
    return [None if i % 3 == 0 else i * i for i in range(n)] if n is not None else None


def sized_pieces(r):
    for size in maybe_sizes(r["n"]):
        if size is None or size > 1:
            yield {**r, "size": size, "half": None if size is None else size // 2}


def test_an_explosion_of_a_helpers_list_runs_the_helper_in_python_and_explodes_natively(spark):
    """issue 29, item 2: `for t in helper(...)`: Python computes each record's list, once per
    record, and Spark explodes it; the pieces' fields and condition are native. Items may be
    None, as Python's `for` gives them."""
    rows = [{"k": i, "s": t, "n": i} for i, t in enumerate(TEXTS)]
    for fn in (words_of, sized_pieces):
        flow = uf.source("t", rows=rows).map(fn)
        assert flow.physical().root.describe().startswith("native, with Python for your helper "), fn
        chosen = uf.optimize(flow).chosen
        lowering = Lowering(spark, chosen.flow.physical(), samples=dict(chosen.samples))
        got = lowering.records(chosen.node)
        assert chosen.node.label in lowering.native_labels, lowering.python_reasons
        assert _bag(got) == _bag(flow.collect(engine="reference")) and got
        plan = lowering.lower(chosen.node).df._jdf.queryExecution().executedPlan().toString()
        assert "Generate explode" in plan and "ArrowEvalPython" in plan, plan


def test_an_explosion_of_none_raises_pythons_type_error_on_both_engines():
    rows = [{"k": 1, "s": "a b", "n": 2}, {"k": 2, "s": "c", "n": None}]
    failing = uf.source("t", rows=rows).map(sized_pieces)
    assert failing.physical().root.native
    said = raised_on_both_engines(failing)
    assert said[0] == said[1] == "TypeError: 'NoneType' object is not iterable (line {})".format(
        sized_pieces.__code__.co_firstlineno + 1)


@pytest.mark.parametrize("family, items, kept", [
    ("str", ["a", None, "é"], True), ("str", ["a", 1], False), ("float", [1.5, None], True),
    ("float", [1.5, 2], False), ("bool", [True, None], True), ("bool", [1], False),
    ("date", [datetime.date(2020, 1, 1)], True), ("date", [datetime.datetime(2020, 1, 1)], False),
    ("datetime", [datetime.datetime(2020, 1, 1)], True),
    ("datetime", [datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)], False),
    ("int", [1, None, -(2**63)], True), ("int", [2**63], False), ("int", [True], False),
])
def test_a_python_lists_items_are_its_sampled_family_or_it_raises(family, items, kept):
    """`items_of`: the list as it is where every item is None or of the family's own type
    (seen at once for most lists), else Python's error naming the item."""
    from udflow.spark_backend.arrow_calls import items_of

    check = items_of(family)
    if kept:
        assert check(iter(items)) == items
    else:
        with pytest.raises((TypeError, OverflowError)):
            check(items)
