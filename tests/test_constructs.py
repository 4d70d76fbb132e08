"""explain names the construct that kept a function in Python and, where there is one, the
native-friendly way to write it (issue 31, item 4; `udflow.analysis.constructs.ADVICE`).

Every piece of advice is taken at its word: the function rewritten as the advice says runs
natively on Spark, with the same records as the reference interpreter.
"""

from __future__ import annotations

import math

import pytest

import udflow as uf
from udflow.analysis.constructs import ADVICE, advice
from udflow.spark_backend.lower import Lowering

# not a table of literals (`udflow.tables`): a look-up in a table of literals runs natively
RATES = {"A": 0.1, "B": 0.2, "tiers": [0.3, 0.4]}
ROWS = [{"a": f"x{i}", "b": ["p", "q"][i % 2], "k": "ABC"[i % 3], "n": float(i % 4), "d": float(i % 3)}
        for i in range(60)]


def _twice(record):  # a helper of the whole record: not followed into the model
    return record["n"] * 2


def dict_get(r):
    return {**r, "rate": RATES.get(r["k"], 0.0)}


def dict_get_advised(r):
    return {**r, "rate": 0.1 if r["k"] == "A" else 0.2 if r["k"] == "B" else 0.0}


def look_up(r):
    return {**r, "rate": RATES[r["k"]] if r["k"] in ("A", "B") else 0.0}


def caught(r):
    try:  # two statements: not one term (`caught_form`)
        ratio = r["n"] / r["d"]
        share = ratio * 100
    except ZeroDivisionError:
        ratio = share = None
    return {**r, "ratio": ratio, "share": share}


def caught_advised(r):
    ratio = r["n"] / r["d"] if r["d"] != 0 else None
    return {**r, "ratio": ratio, "share": ratio * 100 if ratio is not None else None}


def helper(r):
    return {**r, "twice": _twice(r)}


def helper_advised(r):
    return {**r, "twice": r["n"] * 2}


CASES = [  # (the construct, as explain says it), the function, the function as the advice says
    ("dict.get on RATES", dict_get, dict_get_advised),
    ("a look-up in RATES", look_up, dict_get_advised),
    ("try/except", caught, caught_advised),
    ("a call of your helper _twice", helper, helper_advised),
]
SAID = {"try/except": "a try statement"}


def test_every_piece_of_advice_has_a_case():
    assert {advice(construct) for construct, _, _ in CASES} == {tip for _, tip in ADVICE}


@pytest.mark.parametrize("construct, written, advised", CASES, ids=[c[0] for c in CASES])
def test_explain_names_the_construct_and_the_advised_form_runs_natively(spark, construct, written, advised):
    before = uf.source("t", rows=ROWS).map(written)
    why = before.physical().root.describe()
    assert why.startswith("Python") and SAID.get(construct, construct) in why
    assert f"native-friendly: {advice(construct)}" in why

    after = uf.source("t", rows=ROWS).map(advised)
    assert after.physical().root.describe() == "native"
    lowering = Lowering(spark, after.physical())
    rows = lowering.records(after.root)
    assert after.root.label in lowering.native_labels
    key = lambda r: sorted((k, str(v)) for k, v in r.items())  # noqa: E731
    assert sorted(rows, key=key) == sorted(after.collect(engine="reference"), key=key)
    assert sorted(after.collect(engine="reference"), key=key) == sorted(before.collect(engine="reference"), key=key)


def test_a_construct_without_a_native_form_gets_no_advice():
    def gamma(r):
        return {**r, "g": math.gamma(r["n"] + 1)}

    why = uf.source("t", rows=ROWS).map(gamma).physical().root.describe()
    assert why.startswith("Python") and "math.gamma" in why and "native-friendly" not in why
