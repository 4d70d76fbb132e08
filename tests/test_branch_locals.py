"""A local bound in the branches of an `if` (`statements.merge_terms`): after the `if`, a name
both branches bind is `IfElse(condition, one, other)`, the value of the branch taken; where a
branch returns, what follows sees the other's binding; a name one branch leaves unbound has
no term (Python's UnboundLocalError there), and the function stays Python."""

import pytest

import udflow as uf
from bench.coverage_corpus.conditionals import price_band  # if / elif / else, each binding `band`
from udflow.analysis import analyze
from udflow.expr import IfElse

ROWS = [{"k": i, "price": p, "n": n, "kind": t} for i, (p, n, t) in
        enumerate([(5.0, 0, "refund"), (50.0, 3, "sale"), (500.0, -1, "refund"), (10.0, 10, "x"), (99.5, 2, "sale")])]


def reassigned(r):
    fee = 0.0
    if r["n"] > 0:
        fee = 5.0 + r["n"] * 0.5
    amount = r["price"]
    if r["kind"] == "refund":
        amount = -amount
    return {**r, "fee": fee, "amount": amount}


def divided(r):
    if r["n"]:
        per = r["price"] / r["n"]  # raises only where it is computed: n is not 0 there
    else:
        per = None
    return {**r, "per": per}


def exits_early(r):
    label = "cheap"
    if r["price"] > 100:
        return {**r, "label": "dear"}
    else:
        label = "fair" if r["price"] > 20 else label
    return {**r, "label": label}


def unbound_on_one_path(r):
    if r["n"] > 0:
        note = "positive"
    return {**r, "note": note}  # noqa: F821 - UnboundLocalError where n <= 0, as Python


@pytest.mark.parametrize("fn", [price_band, reassigned, divided, exits_early])
def test_a_local_bound_in_branches_is_the_taken_branchs_value_natively(spark, fn):
    assert any(isinstance(t, IfElse) for c in analyze(fn).model.cases for _, e in c.emit.fields for t in e.walk()) \
        or fn is exits_early
    flow = uf.source("t", rows=ROWS).map(fn)
    assert flow.physical().root.describe() == "native"
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, map(fn, ROWS)))


def test_a_name_one_branch_leaves_unbound_has_no_model_and_raises_as_python(spark):
    assert analyze(unbound_on_one_path).model is None
    flow = uf.source("t", rows=ROWS).map(unbound_on_one_path)
    for how in ({"engine": "reference"}, {"spark": spark}):
        with pytest.raises(uf.UdfRuntimeError, match="UnboundLocalError|NameError"):
            flow.collect(**how)
