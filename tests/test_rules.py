"""Rule families on the paper's own examples: positive and negative cases, on the real analysis,
with results compared on the reference interpreter and every certificate re-checked."""

import dataclasses
import json
import time
from collections import Counter

import pytest


import udflow as uf
from udflow.plan import Match, Reduce
from udflow.reference import run
from udflow.rules import Certificate, RuleBook, check

from tests import rules_flows as F


def bag(rows, fields=None):
    def norm(r):
        return tuple(sorted((k, v) for k, v in r.items() if fields is None or k in fields))

    return Counter(norm(r) for r in rows)


def node(flow, label):
    return flow.operator(label)


def only(exchanges, rule):
    found = [e for e in exchanges if e.rule == rule]
    assert found, f"no {rule} exchange among {[e.rule for e in exchanges]}"
    return found


def assert_equivalent(flow, exchange, fields=None):
    """The rewritten subtree computes the same bag, and its certificate checks."""
    assert bag(run(exchange.before), fields) == bag(run(exchange.after), fields)
    result = check(exchange.certificate, flow)
    assert result.ok, str(result)


# -- section 3: Theorem 1 ------------------------------------------------------------------


def test_section3_f1_f2_swap_is_allowed():
    flow = F.section3_flow()
    book = RuleBook(flow.root)
    [ex] = book.exchanges(node(flow, "Filter(f2)"))
    assert ex.rule == "theorem1_map_map"
    assert [n.label for n in ex.after.walk()] == ["Map(f1)", "Filter(f2)", "Source(I)"]
    assert_equivalent(flow, ex)
    assert book.why_not("Filter(f2)", "Map(f1)").allowed


def test_section3_f2_f3_swap_is_refused_with_attribute_and_lines():
    flow = F.section3_flow()
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    verdict = book.why_not("Map(f3)", "Filter(f2)")
    assert not verdict.allowed
    [reason] = verdict.reasons
    assert reason.rule == "theorem1_map_map"
    assert reason.condition == "write-read" and reason.attribute == "A"
    lines = dict(reason.lines)
    # f3 writes A in its return statement, f2 reads A in its comparison
    assert lines["Map(f3)"] == F.f3.__code__.co_firstlineno + 1
    assert lines["Filter(f2)"] == F.f2.__code__.co_firstlineno + 1
    # and the refusal is right: swapping them changes the result
    swapped = F.f2, F.f3
    bad = uf.source("I", rows=[{"A": 2, "B": -3}]).map(swapped[1]).filter(swapped[0])
    good = uf.source("I", rows=[{"A": 2, "B": -3}]).filter(swapped[0]).map(swapped[1])
    assert bag(bad.collect(engine="reference")) != bag(good.collect(engine="reference"))


# -- section 4.2.2: Theorem 2 -----------------------------------------------------------------


def test_section422_counterexample_is_refused():
    flow = F.counterexample_flow()
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    verdict = book.why_not("Reduce[A](sum_b)", "Map(odd_a_and_b)")
    assert not verdict.allowed
    assert any(r.condition == "kgp: card_reads" and r.attribute == "B" for r in verdict.reasons)
    # the paper's point: the reordered plan computes a different bag
    reordered = F.counterexample_flow().root
    map_, reduce_ = reordered.input, reordered
    swapped = map_.with_inputs(reduce_.with_inputs(map_.input))
    assert bag(run(reordered)) != bag(run(swapped))


def test_map_reduce_allowed_when_the_filter_decides_on_the_key():
    flow = F.counterexample_flow(F.odd_a)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "theorem2_map_reduce")
    assert ex.after.label == "Map(odd_a)"
    assert_equivalent(flow, ex)
    # and back up again
    [back] = only(book.exchanges(ex.after), "theorem2_map_reduce")
    assert back.after == flow.root


def test_reduce_reduce_refused_without_group_preservation():
    flow = F.counterexample_flow(F.odd_a).reduce(["A"], F.sum_b, name="second")
    book = RuleBook(flow.root)
    verdict = book.why_not("second", "Reduce[A](sum_b)")
    assert not verdict.allowed
    assert any(r.condition.startswith("kgp") for r in verdict.reasons)


# -- Theorem 3: Map with Match / Cross ------------------------------------------------------------


def test_filter_moves_into_the_side_it_reads():
    flow = F.filter_over_match(F.big_price)
    book = RuleBook(flow.root)
    exchanges = only(book.exchanges(flow.root), "theorem3_product")
    assert len(exchanges) == 1  # into the part side only
    ex = exchanges[0]
    assert isinstance(ex.after, Match) and ex.after.left.label == "Filter(big_price)"
    assert_equivalent(flow, ex)
    # the reverse move (binary over unary) is allowed by the same theorem
    back = only(book.exchanges(ex.after), "theorem3_product")
    assert any(b.after == flow.root for b in back)


def test_filter_reading_both_sides_stays_above_the_match():
    flow = F.filter_over_match(F.cheap_or_rich)
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    reasons = book.why_not(flow.root.label, flow.root.input.label).reasons
    assert {r.attribute for r in reasons} >= {"c_budget", "p_price"}
    assert all(r.condition == "touches the other input" for r in reasons)


def test_map_writing_a_join_key_is_not_pushed_nor_swapped():
    flow = F.parts().map(F.double_price).match(F.cats(), on=("p_price", "c_budget"))
    book = RuleBook(flow.root)
    assert [e for e in book.exchanges(flow.root) if e.rule == "theorem3_product"] == []
    verdict = book.why_not(flow.root.label, "Map(double_price)")
    assert any(r.condition == "write-read" and r.attribute == "p_price" for r in verdict.reasons)


def test_projection_is_never_moved_across_a_product():
    flow = F.parts().cross(F.orders()).map(F.only_id)
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []


# -- Lemma 1: join reassociation --------------------------------------------------------------------


def test_match_match_reassociation_gives_a_bushy_or_other_left_deep_tree():
    flow = F.three_way_join()
    book = RuleBook(flow.root)
    exchanges = only(book.exchanges(flow.root), "lemma1_join_join")
    shapes = {e.certificate.after for e in exchanges}
    # Match(o_part) needs p_id from part: it can join orders to part first, never to cat alone
    assert len(exchanges) == 1
    ex = exchanges[0]
    labels = [n.label for n in ex.after.walk()]
    assert labels[0] == "Match(p_cat=c_id)" and "Source(cat)" in labels
    assert ex.after.left.label == "Match(p_id=o_part)"
    assert_equivalent(flow, ex)
    assert len(shapes) == 1


def test_cross_cross_and_match_cross_reassociate():
    flow = F.parts().cross(F.cats()).cross(F.orders())
    book = RuleBook(flow.root)
    exchanges = only(book.exchanges(flow.root), "lemma1_join_join")
    assert len(exchanges) == 2  # the Cross touches nothing: B2(X, B1(Y,Z)) and B2(B1(X,Z), Y)
    for ex in exchanges:
        assert_equivalent(flow, ex)
    mixed = F.parts().cross(F.cats()).match(F.orders(), on=("p_id", "o_part"))
    book = RuleBook(mixed.root)
    [ex] = only(book.exchanges(mixed.root), "lemma1_join_join")
    assert_equivalent(mixed, ex)


# -- Theorem 4 and invariant grouping -------------------------------------------------------------------


def test_q15_reduce_moves_below_the_match_with_the_foreign_key():
    flow = F.q15_flow(with_fk=True)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "invariant_grouping")
    pushed = ex.after.left
    assert isinstance(pushed, Reduce) and pushed.key == ("l_suppkey",)
    assert pushed.label == flow.root.label  # labels survive the move
    assert len(ex.certificate.smt) >= 3 and all(a == "unsat" for _, a in ex.certificate.smt)
    assert any(f.startswith("foreign_key(Source(lineitem), l_suppkey, supplier, s_suppkey)")
               for f in ex.certificate.facts)
    assert_equivalent(flow, ex, fields={"s_suppkey", "s_name", "total_revenue"})
    # and back: the Reduce gets its own key again
    [back] = only(book.exchanges(ex.after), "invariant_grouping")
    assert back.after == flow.root
    assert check(back.certificate, flow).ok


def test_q15_allowed_with_the_supplier_key_and_no_foreign_key():
    """The proof needs only that each lineitem meets at most one supplier: lineitems whose
    supplier is missing are dropped by the Match as whole groups, above or below."""
    flow = F.q15_flow(with_fk=False, lineitem=F.LINEITEM + F.ORPHANS)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "invariant_grouping")
    assert ex.after.left.key == ("l_suppkey",)
    assert not any(f.startswith(("foreign_key(", "source_key(")) for f in ex.certificate.facts)
    assert "unique_key(Source(supplier), s_suppkey)" in ex.certificate.facts
    assert all(a == "unsat" for _, a in ex.certificate.smt)
    assert book.why_not(flow.root.label, flow.root.input.label).allowed
    # the orphans really are there, and pushing keeps the bag anyway
    pushed_groups = {r["l_suppkey"] for r in run(ex.after.left)}
    assert {7, 9, None} <= pushed_groups
    assert_equivalent(flow, ex, fields={"s_suppkey", "s_name", "total_revenue"})
    [back] = only(book.exchanges(ex.after), "invariant_grouping")
    assert back.after == flow.root and check(back.certificate, flow).ok


def test_q15_refused_when_the_supplier_key_is_not_declared():
    flow = F.q15_flow(with_fk=False, supplier_key=False)
    book = RuleBook(flow.root)
    assert [e for e in book.exchanges(flow.root) if e.rule == "invariant_grouping"] == []
    verdict = book.why_not(flow.root.label, flow.root.input.label)
    assert not verdict.allowed
    assert any(r.condition == "the other input's join key is not a key" and r.attribute == "s_suppkey"
               for r in verdict.reasons)


def test_q15_refused_when_the_supplier_holds_duplicate_keys():
    """The refusal is needed: with supplier 0 twice, the pushed plan changes the bag."""
    dup = [{"s_suppkey": 0, "s_name": "A"}, {"s_suppkey": 0, "s_name": "B"}, {"s_suppkey": 1, "s_name": "C"}]
    flow = F.q15_flow(with_fk=False, supplier_key=False, supplier=dup)
    book = RuleBook(flow.root)
    assert [e for e in book.exchanges(flow.root) if e.rule == "invariant_grouping"] == []
    reduce_node, match = flow.root, flow.root.input
    pushed = match.with_inputs(dataclasses.replace(reduce_node, key=("l_suppkey",)).with_inputs(match.left),
                               match.right)
    fields = {"s_suppkey", "s_name", "total_revenue"}
    assert bag(run(flow.root), fields) != bag(run(pushed), fields)


def test_q15_allowed_when_a_map_rewrites_the_join_key_below():
    """F need not reference supplier any more: only its uniqueness on supplier's side matters.
    The foreign key no longer holds, so its facts are not in the certificate."""
    def shift(r):
        return {**r, "l_suppkey": r["l_suppkey"] + 1 if r["l_suppkey"] is not None else None}

    fks = {("l_suppkey",): ("supplier", ("s_suppkey",))}
    li = uf.source("lineitem", rows=F.LINEITEM, key=["l_orderkey", "l_linenumber"], foreign_keys=fks)
    su = uf.source("supplier", rows=F.SUPPLIER, key=["s_suppkey"])
    flow = li.map(shift).match(su, on=("l_suppkey", "s_suppkey")).reduce(["s_suppkey"], F.revenue)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "invariant_grouping")
    assert not any(f.startswith("foreign_key(") for f in ex.certificate.facts)
    assert_equivalent(flow, ex, fields={"s_suppkey", "s_name", "total_revenue"})


def test_invariant_grouping_on_a_join_key_computed_below():
    """F created by a Map on S's side (like a session id parsed from a URL)."""
    def supplier_of(r):
        return {**r, "l_sk": r["l_suppkey"]}

    li = uf.source("lineitem", rows=F.LINEITEM + F.ORPHANS)
    su = uf.source("supplier", rows=F.SUPPLIER, key=["s_suppkey"])
    flow = li.map(supplier_of).match(su, on=("l_sk", "s_suppkey")).reduce(["s_suppkey"], F.revenue)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "invariant_grouping")
    assert ex.after.left.key == ("l_sk",)
    assert_equivalent(flow, ex, fields={"s_suppkey", "s_name", "total_revenue"})


def test_theorem4_reduce_past_a_set():
    flow = F.theorem4_flow(region_key=True)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "theorem4_reduce_cross")
    assert ex.after.right.key == ("s_item",)
    assert_equivalent(flow, ex)


def test_theorem4_refused_when_the_other_input_may_hold_duplicates():
    flow = F.theorem4_flow(region_key=False)
    book = RuleBook(flow.root)
    assert [e for e in book.exchanges(flow.root) if e.rule == "theorem4_reduce_cross"] == []
    # the refusal is needed: with a duplicated region record the counts differ
    dup = uf.source("region", rows=F.REGIONS + F.REGIONS[:1])
    bad = dup.cross(uf.source("sales", rows=F.SALES)).reduce(["r_id", "r_name", "s_item"], F.per_item)
    pushed = dup.cross(uf.source("sales", rows=F.SALES).reduce(["s_item"], F.per_item))
    assert bag(run(bad.root)) != bag(run(pushed.root))


# -- CoGroup via the tagged union ----------------------------------------------------------------------


def test_one_to_one_map_moves_into_a_cogroup_input():
    flow = F.cogroup_flow(F.tag_price)
    book = RuleBook(flow.root)
    [ex] = only(book.exchanges(flow.root), "cogroup_map")
    assert ex.after.left.label == "Map(tag_price)"
    assert_equivalent(flow, ex)
    [back] = only(book.exchanges(ex.after), "cogroup_map")
    assert back.after == flow.root


def test_filter_does_not_move_into_a_cogroup_input():
    flow = F.cogroup_flow(F.big_price, filter_=True)
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    reasons = book.why_not(flow.root.label, flow.root.input.label).reasons
    assert any(r.condition.startswith("kgp") for r in reasons)


def _cogroup_reduce_exchange(flow):
    book = RuleBook(flow.root)
    found = [e for e in book.exchanges(flow.root) if e.rule == "cogroup_reduce"]
    return book, found


def test_group_filter_moves_into_the_input_a_cogroup_forwards():
    for fn in (F.busy_parts, F.big_order_parts):
        flow = F.cogroup_reduce_flow(fn)
        book, [ex] = _cogroup_reduce_exchange(flow)
        assert ex.after.label == "CoGroup(with_part_price)"
        assert ex.after.left.label == flow.root.label == f"Reduce[o_part]({fn.__name__})"
        assert "forwards_side(CoGroup(with_part_price), 0)" in ex.certificate.facts
        assert f"preserves_groups({flow.root.label})" in ex.certificate.facts
        assert_equivalent(flow, ex)
        assert bag(run(flow.root)) != bag(run(flow.root.input))  # the Reduce does filter here
        [back] = only(book.exchanges(ex.after), "cogroup_reduce")
        assert back.after == flow.root
        assert_equivalent(flow, back)


def test_group_filter_moves_out_of_a_forwarded_cogroup_input():
    flow = F.cogroup_reduce_flow(below=True)
    book, [ex] = _cogroup_reduce_exchange(flow)
    assert ex.after.label == "Reduce[o_part](busy_parts)"
    assert_equivalent(flow, ex)


@pytest.mark.parametrize("case, condition", [
    ("cogroup drops orders one by one", "kgp"),
    ("reduce reads what the cogroup adds", "read-write"),
    ("reduce aggregates, not filters groups", "kgp"),
])
def test_reduce_does_not_cross_a_cogroup_and_rightly_so(case, condition):
    flow = {
        "cogroup drops orders one by one": lambda: F.cogroup_reduce_flow(cogroup_fn=F.priced_big_orders),
        "reduce reads what the cogroup adds": lambda: F.cogroup_reduce_flow(F.cheap_parts),
        "reduce aggregates, not filters groups": lambda: F.cogroup_reduce_flow(F.orders_per_part),
    }[case]()
    book, found = _cogroup_reduce_exchange(flow)
    assert found == []
    reduce_label, cogroup_label = flow.root.label, flow.root.input.label
    reasons = book.why_not(reduce_label, cogroup_label).reasons
    assert any(r.condition.lower().startswith(condition) for r in reasons), reasons
    # the refusal is needed: the Reduce on the orders input computes another bag
    cg = flow.root.input
    pushed = cg.with_inputs(flow.root.with_inputs(cg.left), cg.right)
    if case != "reduce reads what the cogroup adds":  # below, o_price does not exist yet
        assert bag(run(flow.root)) != bag(run(pushed))


def test_reduce_keyed_otherwise_or_on_the_other_input_stays():
    flow = F.cogroup_reduce_flow(F.busy_parts, key=("o_part", "o_qty"))
    assert _cogroup_reduce_exchange(flow)[1] == []
    parts = F.parts_with_keys().reduce(["p_id"], F.busy_parts)  # side 1: with_part_price drops parts
    flow = F.order_lines().cogroup(parts, on=("o_part", "p_id"), f=F.with_part_price)
    book = RuleBook(flow.root)
    assert [e for e in book.exchanges(flow.root) if e.rule == "cogroup_reduce"] == []
    reasons = book.why_not(flow.root.label, flow.root.right.label).reasons
    assert any("does not forward input 1" in r.condition for r in reasons), reasons


def test_cogroup_reduce_certificate_without_its_forwarding_fact_is_rejected():
    flow = F.cogroup_reduce_flow()
    _, [ex] = _cogroup_reduce_exchange(flow)
    cert = ex.certificate
    fact = "forwards_side(CoGroup(with_part_price), 0)"
    tampered = dataclasses.replace(cert, facts=tuple(f for f in cert.facts if f != fact))
    result = check(tampered, flow)
    assert not result.ok and any(fact in p for p in result.problems)
    # the same certificate presented for a flow whose CoGroup drops orders one by one
    other = F.cogroup_reduce_flow(cogroup_fn=F.priced_big_orders)
    renamed = Certificate.from_dict(json.loads(cert.to_json().replace("with_part_price", "priced_big_orders")))
    result = check(renamed, other)
    assert not result.ok
    assert any("does not forward input 0" in p for p in result.problems), result.problems


# -- impure functions ---------------------------------------------------------------------------------------


def test_impure_operators_are_never_reordered():
    import random

    def noisy(r):
        return {**r, "noise": random.random()}

    flow = F.section3_flow().map(noisy)
    book = RuleBook(flow.root)
    assert book.exchanges(flow.root) == []
    assert any(r.condition == "impure" for r in book.why_not("Map(noisy)", "Map(f3)").reasons)


# -- certificates ------------------------------------------------------------------------------------------------


def _q15_certificate():
    flow = F.q15_flow()
    [ex] = RuleBook(flow.root).exchanges(flow.root)
    return flow, ex.certificate


def test_certificate_round_trips_through_json():
    flow, cert = _q15_certificate()
    again = Certificate.from_dict(json.loads(cert.to_json()))
    assert again == cert
    assert check(again.to_dict(), flow).ok


def test_removed_fact_is_named():
    flow = F.section3_flow()
    [ex] = RuleBook(flow.root).exchanges(flow.operator("Filter(f2)"))
    cert = ex.certificate
    assert "writes(Map(f1), B)" in cert.facts
    tampered = dataclasses.replace(cert, facts=tuple(f for f in cert.facts if f != "writes(Map(f1), B)"))
    result = check(tampered, flow)
    assert not result.ok
    assert any("writes(Map(f1), B)" in p for p in result.problems)


def test_changed_fact_is_named():
    flow = F.section3_flow()
    [ex] = RuleBook(flow.root).exchanges(flow.operator("Filter(f2)"))
    cert = ex.certificate
    facts = tuple("reads(Filter(f2), B)" if f == "reads(Filter(f2), A)" else f for f in cert.facts)
    result = check(dataclasses.replace(cert, facts=facts), flow)
    assert not result.ok
    assert any("reads(Filter(f2), B) does not hold" in p for p in result.problems)
    assert any("missing fact reads(Filter(f2), A)" in p for p in result.problems)


def test_tampered_smt_answer_and_foreign_key_are_rejected():
    flow, cert = _q15_certificate()
    smt = ((cert.smt[0][0], "sat"),) + cert.smt[1:]
    result = check(dataclasses.replace(cert, smt=smt), flow)
    assert not result.ok and any("SMT query answered unsat" in p for p in result.problems)
    no_fk = F.q15_flow(with_fk=False)
    result = check(cert, no_fk)
    assert not result.ok
    assert any("foreign_key(Source(lineitem), l_suppkey, supplier, s_suppkey) does not hold" in p
               for p in result.problems)


def _paper_certificates():
    """One certificate per rule family on the paper's flows (the golden flows), plus invariant
    grouping without a foreign key."""
    from tests.test_rules_golden import FAMILIES

    out = {}
    for family, make in sorted(FAMILIES.items()):
        flow, label = make()
        at = flow.operator(label) if label else flow.root
        out[family] = (flow, only(RuleBook(flow.root).exchanges(at), family)[0].certificate)
    flow = F.q15_flow(with_fk=False)
    out["invariant_grouping (no foreign key)"] = (flow, RuleBook(flow.root).exchanges(flow.root)[0].certificate)
    return out


@pytest.mark.parametrize("family", sorted(_paper_certificates()))
def test_every_single_fact_is_needed(family):
    flow, cert = _paper_certificates()[family]
    assert check(cert, flow).ok
    for fact in cert.facts:
        result = check(dataclasses.replace(cert, facts=tuple(f for f in cert.facts if f != fact)), flow)
        assert not result.ok and f"missing fact {fact}" in result.problems, (fact, result.problems)


def test_removed_key_rewrite_fact_is_named():
    flow, cert = _q15_certificate()
    fact = "reduce_key_after(Reduce[s_suppkey](revenue), l_suppkey)"
    assert fact in cert.facts
    result = check(dataclasses.replace(cert, facts=tuple(f for f in cert.facts if f != fact)), flow)
    assert not result.ok and f"missing fact {fact}" in result.problems
    wrong = tuple("reduce_key_after(Reduce[s_suppkey](revenue), s_suppkey)" if f == fact else f
                  for f in cert.facts)
    result = check(dataclasses.replace(cert, facts=wrong), flow)
    assert "fact reduce_key_after(Reduce[s_suppkey](revenue), s_suppkey) does not hold" in result.problems


def test_forged_invariant_grouping_without_a_unique_key_is_rejected():
    """A certificate made on a flow with supplier's key, checked against the same flow
    without it: the checker re-derives uniqueness from the declared keys."""
    flow = F.q15_flow(with_fk=False)
    cert = RuleBook(flow.root).exchanges(flow.root)[0].certificate
    result = check(cert, F.q15_flow(with_fk=False, supplier_key=False))
    assert not result.ok
    assert any("(s_suppkey) is not a key of Source(supplier)" in p for p in result.problems)


def test_certificate_for_a_swap_the_analysis_forbids_is_rejected():
    flow = F.section3_flow()
    [ex] = RuleBook(flow.root).exchanges(flow.operator("Filter(f2)"))
    forged = dataclasses.replace(
        ex.certificate,
        operators=("Map(f3)", "Filter(f2)"),
        before="Map(f3)\n  Filter(f2)\n    Map(f1)\n      Source(I)",
        after="Filter(f2)\n  Map(f3)\n    Map(f1)\n      Source(I)",
    )
    result = check(forged, flow)
    assert not result.ok
    assert any("ROC fails" in p for p in result.problems)


# -- isolation and speed ------------------------------------------------------------------------------------------


def test_two_rulebooks_in_one_thread_do_not_share_facts():
    a, b = F.section3_flow(), F.counterexample_flow()
    book_a, book_b = RuleBook(a.root), RuleBook(b.root)
    labels_a = {x for (x,) in book_a.query("op(X)")}
    labels_b = {x for (x,) in book_b.query("op(X)")}
    assert labels_a == {"Map(f1)", "Filter(f2)", "Map(f3)"}
    assert labels_b == {"Map(odd_a_and_b)", "Reduce[A](sum_b)"}
    assert book_a.exchanges(a.operator("Filter(f2)"))  # still answers after b was built
    book_b.close()
    assert book_a.query("reads('Map(f1)', X)") == {("B",)}


def test_two_rulebooks_in_two_threads_do_not_share_facts():
    import threading

    results, errors = {}, []

    def work(name, make):
        try:
            for _ in range(5):
                flow = make()
                with RuleBook(flow.root) as book:
                    results.setdefault(name, set()).update(x for (x,) in book.query("op(X)"))
                    results.setdefault(name + "-ex", set()).update(
                        e.rule for n in flow.operators for e in book.exchanges(n))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=("s3", F.section3_flow)),
               threading.Thread(target=work, args=("q15", F.q15_flow))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results["s3"] == {"Map(f1)", "Filter(f2)", "Map(f3)"}
    assert results["q15"] == {"Match(l_suppkey=s_suppkey)", "Reduce[s_suppkey](revenue)"}
    assert results["s3-ex"] == {"theorem1_map_map"}
    assert results["q15-ex"] == {"invariant_grouping"}


def test_cached_exchanges_are_fast():
    flow = F.three_way_join().filter(F.big_price)
    book = RuleBook(flow.root)
    nodes = list(flow.root.walk())
    for n in nodes:
        book.exchanges(n)
    start = time.perf_counter()
    rounds = 2000
    for _ in range(rounds):
        for n in nodes:
            book.exchanges(n)
    per_call = (time.perf_counter() - start) / (rounds * len(nodes))
    assert per_call < 50e-6, f"{per_call * 1e6:.1f} µs per cached call"
    # an equal but rebuilt subtree hits the structural cache too
    rebuilt = flow.root.with_inputs(flow.root.input)
    assert book.exchanges(rebuilt) == book.exchanges(flow.root)


# -- manual annotations --------------------------------------------------------------------------------------------


def test_manual_properties_allow_what_the_annotation_declares():
    import math

    @uf.annotate(reads=["A"], writes=[], emits=(0, 1), copy=True)
    def opaque_filter(r):
        return getattr(math, "isfinite")(r["A"]) and r["A"] > 0  # getattr: the analysis gives up

    flow = uf.source("I", rows=[{"A": 1, "B": -1}, {"A": -1, "B": 2}]).map(F.f1).filter(opaque_filter)
    analysed = RuleBook(flow.root)
    manual = RuleBook(flow.root, properties="manual")
    assert manual.exchanges(flow.root), "the annotation declares a filter on A: it commutes with f1"
    [ex] = manual.exchanges(flow.root)
    assert ex.certificate.properties == "manual"
    assert check(ex.certificate, flow).ok
    assert bag(run(ex.before)) == bag(run(ex.after))
    if not analysed.exchanges(flow.root):  # when the analysis cannot see through it,
        assert not check(ex.certificate, flow, manual=False).ok  # the checker agrees with it


def test_optimize_enumerates_the_reduce_on_either_side_of_a_forwarding_cogroup():
    flow = F.cogroup_reduce_flow()
    opt = uf.optimize(flow)
    tops = sorted(a.node.label for a in opt.alternatives)
    assert tops == ["CoGroup(with_part_price)", "Reduce[o_part](busy_parts)"]
    expected = bag(run(flow.root))
    for alt in opt.alternatives:
        assert bag(run(alt.node)) == expected


def test_both_sides_of_the_cogroup_reduce_exchange_agree_on_spark(spark):
    flow = F.cogroup_reduce_flow()
    _, [ex] = _cogroup_reduce_exchange(flow)
    expected = bag(run(flow.root))
    for root in (ex.before, ex.after):
        assert bag(uf.Flow(root).collect(engine="spark", spark=spark)) == expected
