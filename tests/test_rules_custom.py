"""Rule authoring: Distinct and Union from examples/custom_operators.py, added through the
public registry only; a filter moves below each, results equal on the reference interpreter,
certificates pass the checker, and refusals name the reason."""

from collections import Counter

import pytest

import udflow as uf
from udflow.reference import run
from udflow.rules import RuleBook, check

from examples import custom_operators as C

ROWS = [{"k": 1, "v": 2}, {"k": 1, "v": 2}, {"k": 1, "v": 3}, {"k": 2, "v": -1}, {"k": 3, "v": None}, {"k": 3, "v": None}]
OTHER = [{"k": 9, "v": 5}, {"k": 9, "v": 5}, {"k": 8, "v": 0}]


@pytest.fixture(scope="module", autouse=True)
def installed():
    C.install()


def bag(records):
    return Counter(tuple(sorted(r.items())) for r in records)


def bump(r):
    return {**r, "v": 0}


def test_filter_moves_below_distinct_and_back():
    flow = uf.source("t", rows=ROWS).apply(C.DISTINCT).filter(C.positive)
    book = RuleBook(flow.root)
    [ex] = book.exchanges(flow.root)
    assert ex.rule == "filter_below_distinct" and ex.after.label == "Distinct"
    assert bag(run(ex.before)) == bag(run(ex.after))
    assert bag(flow.collect(engine="reference")) == bag(run(ex.after))
    assert check(ex.certificate, flow).ok
    [back] = book.exchanges(ex.after)
    assert back.after == flow.root and check(back.certificate, flow).ok


def test_map_that_writes_stays_above_distinct():
    flow = uf.source("t", rows=ROWS).apply(C.DISTINCT).map(bump)
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    verdict = book.why_not("Map(bump)", "Distinct")
    assert any(r.condition == "not a filter: writes" and r.attribute == "v" for r in verdict.reasons)
    # and rightly so: the map merges distinct records
    pushed = flow.root.input.with_inputs(flow.root.with_inputs(flow.root.input.inputs[0]))
    assert bag(run(flow.root)) != bag(run(pushed))


def test_filter_moves_into_both_inputs_of_a_union():
    flow = uf.source("t", rows=ROWS).apply(C.UNION, uf.source("u", rows=OTHER)).filter(C.positive)
    book = RuleBook(flow.root)
    [ex] = book.exchanges(flow.root)
    assert ex.rule == "filter_into_union"
    assert [n.label for n in ex.after.inputs] == ["Filter(positive)", "Filter(positive)'"]
    assert bag(run(ex.before)) == bag(run(ex.after))
    assert check(ex.certificate, flow).ok


def test_forged_union_certificate_is_rejected():
    import dataclasses

    flow = uf.source("t", rows=ROWS).apply(C.UNION, uf.source("u", rows=OTHER)).filter(C.positive)
    [ex] = RuleBook(flow.root).exchanges(flow.root)
    lost = "\n".join(line for line in ex.certificate.after.splitlines() if "'" not in line and "Source(u)" not in line)
    result = check(dataclasses.replace(ex.certificate, after=lost), flow)
    assert not result.ok


def test_rules_are_registered_without_editing_udflow():
    from udflow.rules import builtin_rules, rules

    assert "filter_into_union" in {r.name for r in rules()}
    assert "filter_into_union" not in {r.name for r in builtin_rules()}


def test_a_rule_whose_clauses_do_not_parse_is_named():
    from udflow.errors import UdflowError
    from udflow.rules import PairRule, builtin_rules

    broken = PairRule(name="broken_rule", clauses="broken_rule(U, L) <= <= kind(U, 'map')",
                      shapes=("unary/unary",))
    flow = uf.source("t", rows=ROWS).filter(C.positive)
    with pytest.raises(UdflowError, match="broken_rule"):
        RuleBook(flow.root, rules=[*builtin_rules(), broken])


def test_the_field_flow_check_keeps_a_filter_copied_into_both_inputs_of_a_union():
    """the copy (`Filter(positive)'`) reads, with the original, what the filter read as written"""
    flow = uf.source("t", rows=ROWS).apply(C.UNION, uf.source("u", rows=OTHER)).filter(C.positive)
    opt = uf.optimize(flow, mode="full")
    assert not opt.alternatives.refused, [str(v) for _, v in opt.alternatives.refused]
    assert any(a.certificates for a in opt.alternatives)
    for alt in opt.alternatives:
        assert bag(alt.collect(engine="reference")) == bag(flow.collect(engine="reference"))
