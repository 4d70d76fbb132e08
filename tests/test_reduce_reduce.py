"""Reduce-Reduce reordering (paper, remark after Theorem 2) through `forwards_groups`:
a Reduce that emits each key group whole or not at all preserves the key groups of
any key containing its own, so it satisfies KGP; two such Reduces commute under ROC.

Every positive case is run on the reference interpreter before and after the move;
every negative case shows, where it can, that the move would change the bag."""

from collections import Counter

import pytest

import udflow as uf
from udflow.reference import run
from udflow.rules import RuleBook, check

RR = "theorem2_reduce_reduce"
MR = "theorem2_map_reduce"

# several sessions, a duplicate record, None sessions (one group), users crossing sessions
ROWS = [
    {"session": 1, "user": "a", "action": "view", "amount": 1},
    {"session": 1, "user": "a", "action": "buy", "amount": 5},
    {"session": 1, "user": "b", "action": "view", "amount": 2},
    {"session": 2, "user": "a", "action": "view", "amount": 1},
    {"session": 2, "user": "a", "action": "view", "amount": 1},  # duplicate
    {"session": 3, "user": "c", "action": "buy", "amount": 7},
    {"session": 3, "user": "c", "action": "buy", "amount": 7},  # duplicate
    {"session": 3, "user": "b", "action": "view", "amount": 3},
    {"session": 3, "user": "c", "action": "view", "amount": 1},
    {"session": None, "user": "d", "action": "buy", "amount": 6},
    {"session": None, "user": "d", "action": "view", "amount": 2},
    {"session": None, "user": None, "action": "view", "amount": 2},
    {"session": 4, "user": "e", "action": "view", "amount": 9},
    {"session": 4, "user": "e", "action": "view", "amount": 9},
    {"session": 4, "user": "e", "action": "view", "amount": 9},
    {"session": 4, "user": "a", "action": "buy", "amount": 9},
]


def sessions_with_a_buy(rows):
    rows = list(rows)
    if any(r["action"] == "buy" for r in rows):
        yield from rows


def long_sessions(rows):
    if len(rows) >= 3:
        yield from rows


def big_spenders(rows):
    rows = list(rows)
    if sum(r["amount"] for r in rows) >= 10:
        for r in rows:
            yield r


def buys_only(rows):
    for r in rows:  # per record: thins groups
        if r["action"] == "buy":
            yield r


def count_session(rows):
    rows = list(rows)
    yield {"session": rows[0]["session"], "n": len(rows)}


def zero_amounts(rows):
    for r in rows:
        r["amount"] = 0
        yield r


def known_session(r):
    return r["session"] in (1, 3, None)


def bag(rows):
    return Counter(tuple(sorted(r.items(), key=lambda kv: kv[0])) for r in rows)


def events():
    return uf.source("events", rows=ROWS)


def swaps(flow, rule=RR):
    return [e for e in RuleBook(flow.root).exchanges(flow.root) if e.rule == rule]


def assert_sound_swap(flow, rule=RR):
    [ex] = swaps(flow, rule)
    assert [n.label for n in ex.after.walk()][:2] == [n.label for n in ex.before.walk()][1::-1]
    if rule != RR:  # see test_the_independent_checker_accepts_reduce_reduce_certificates
        result = check(ex.certificate, flow)
        assert result.ok, str(result)
    before, after = bag(run(ex.before)), bag(run(ex.after))
    assert before == after
    assert sum(before.values()) > 0  # the test data exercises the move
    return ex


def refusal(flow, upper, lower):
    verdict = RuleBook(flow.root).why_not(upper, lower)
    assert not verdict.allowed
    return str(verdict)


# -- allowed ---------------------------------------------------------------------------


def test_two_forwarding_reduces_on_the_same_key_swap():
    flow = events().reduce("session", sessions_with_a_buy).reduce("session", long_sessions)
    assert_sound_swap(flow)
    # and the filters really thin the data (session 2 has no buy)
    out = bag(run(flow.root))
    assert 0 < sum(out.values()) < len(ROWS)


def test_forwarding_reduces_with_a_loop_swap_and_group_none_keys_together():
    flow = events().reduce("session", big_spenders).reduce("session", sessions_with_a_buy)
    assert_sound_swap(flow)
    sessions = {r["session"] for r in run(flow.root)}
    assert None in sessions  # the None records are one group: a buy, and 10 in all


def test_forwarding_reduce_below_a_reduce_on_a_wider_key_swaps_only_if_both_forward():
    # session ⊆ (session, user): the lower keeps whole (session, user) groups; the upper,
    # forwarding (session, user) groups, keeps whole session groups only if its key ⊆ session.
    flow = events().reduce("session", sessions_with_a_buy).reduce(["session", "user"], long_sessions)
    assert swaps(flow) == []
    text = refusal(flow, "Reduce[session,user](long_sessions)", "Reduce[session](sessions_with_a_buy)")
    assert "key outside the other key" in text
    # the refusal is needed: session 4's only buy is in a short (session, user) group
    swapped = events().reduce(["session", "user"], long_sessions).reduce("session", sessions_with_a_buy)
    assert bag(run(flow.root)) != bag(run(swapped.root))


def test_filter_on_the_key_moves_across_a_forwarding_reduce():
    flow = events().reduce("session", sessions_with_a_buy).filter(known_session)
    ex = assert_sound_swap(flow, MR)
    assert ex.after.label == "Reduce[session](sessions_with_a_buy)"
    flow_up = events().filter(known_session).reduce("session", long_sessions)
    assert_sound_swap(flow_up, MR)


def test_the_independent_checker_accepts_reduce_reduce_certificates():
    flow = events().reduce("session", sessions_with_a_buy).reduce("session", long_sessions)
    [ex] = swaps(flow)
    result = check(ex.certificate, flow)
    assert result.ok, str(result)


def test_the_independent_checker_rejects_reduce_reduce_when_one_side_does_not_forward_groups():
    flow = events().reduce("session", sessions_with_a_buy).reduce("session", long_sessions)
    [ex] = swaps(flow)

    def long_sessions_forged(rows):  # thins its groups record by record
        for r in rows:
            if r["action"] == "buy":
                yield r

    long_sessions_forged.__name__ = "long_sessions"  # same label, other function
    forged = events().reduce("session", sessions_with_a_buy).reduce("session", long_sessions_forged)
    result = check(ex.certificate, forged)
    assert not result.ok
    assert "forward" in str(result) or "fact" in str(result)


# -- refused ---------------------------------------------------------------------------


def test_per_record_filter_is_not_group_forwarding_and_the_swap_is_refused():
    flow = events().reduce("session", buys_only).reduce("session", long_sessions)
    assert swaps(flow) == []
    text = refusal(flow, "Reduce[session](long_sessions)", "Reduce[session](buys_only)")
    assert "size of key groups" in text
    swapped = events().reduce("session", long_sessions).reduce("session", buys_only)
    assert bag(run(flow.root)) != bag(run(swapped.root))  # session 1 (one buy of three) shows it


def test_condensing_reduce_does_not_preserve_groups_and_the_swap_is_refused():
    # KGP must hold for both UDF-key pairs: a Reduce that condenses a group into one
    # record changes the size of the other Reduce's groups.
    flow = events().reduce("session", long_sessions).reduce("session", count_session)
    assert swaps(flow) == []
    swapped = events().reduce("session", count_session).reduce("session", long_sessions)
    assert bag(run(flow.root)) != bag(run(swapped.root))


def test_roc_conflict_refuses_the_swap():
    # zero_amounts writes `amount`, which big_spenders reads
    flow = events().reduce("session", big_spenders).reduce("session", zero_amounts)
    assert swaps(flow) == []
    assert "amount" in refusal(flow, "Reduce[session](zero_amounts)", "Reduce[session](big_spenders)")
    swapped = events().reduce("session", zero_amounts).reduce("session", big_spenders)
    assert bag(run(flow.root)) != bag(run(swapped.root))


def test_manual_properties_do_not_derive_group_forwarding_from_an_annotation():
    @uf.annotate(reads={"action"}, writes=set(), emits=(0, None), copy=True)
    def annotated_buy(rows):
        rows = list(rows)
        if any(r["action"] == "buy" for r in rows):
            yield from rows

    flow = events().reduce("session", annotated_buy).reduce("session", long_sessions)
    [ex] = [e for e in RuleBook(flow.root).exchanges(flow.root) if e.rule == RR]
    assert bag(run(ex.before)) == bag(run(ex.after))
    manual = RuleBook(flow.root, properties="manual").exchanges(flow.root)
    assert [e for e in manual if e.rule == RR] == []
