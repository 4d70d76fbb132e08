"""`forwards_groups`: a Reduce whose every call emits its whole group unchanged, or nothing.

Positive cases live in the corpus (tests/analysis_corpus/ordinary_group.py); here are
the near misses, each one a function whose output is *not* always the group or empty,
shown by running it on a group."""

import pytest

from udflow.analysis import analyze

FIELDS = {"session", "action", "amount"}
GROUP = [
    {"session": 1, "action": "view", "amount": 2},
    {"session": 1, "action": "buy", "amount": 5},
    {"session": 1, "action": "view", "amount": 4},
]


def buy_session(rows):
    """The positive reference: the whole session if it has a buy."""
    rows = list(rows)
    if any(r["action"] == "buy" for r in rows):
        yield from rows


def threshold(rows):
    if len(rows) >= 3:
        yield from rows


def per_record_filter(rows):
    for r in rows:
        if r["action"] == "buy":
            yield r


def filter_inside_forwarding_loop(rows):
    rows = list(rows)
    if len(rows) > 1:
        for r in rows:
            if r["amount"] > 2:
                yield r


def rows_twice(rows):
    rows = list(rows)
    yield from rows
    if len(rows) > 2:
        yield from rows


def modified_records(rows):
    rows = list(rows)
    if len(rows) > 1:
        for r in rows:
            r["amount"] = r["amount"] * 2
            yield r


def first_row(rows):
    rows = list(rows)
    yield rows[0]


def break_in_loop(rows):
    rows = list(rows)
    for r in rows:
        yield r
        if r["action"] == "buy":
            break


def continue_in_loop(rows):
    rows = list(rows)
    for r in rows:
        if r["action"] == "buy":
            continue
        yield r


def a_slice(rows):
    rows = list(rows)
    yield from rows[1:]


def popped_first(rows):
    rows = list(rows)
    rows.pop()
    yield from rows


def iterator_consumed_then_forwarded(rows):
    if any(r["action"] == "buy" for r in rows):  # on a one-shot iterator, eats records
        yield from rows


def two_loops_on_one_path(rows):
    rows = list(rows)
    for r in rows:
        yield r
    for r in rows:
        yield r


def forwards(f) -> bool:
    return analyze(f, FIELDS, "reduce").forwards_groups


def emits_group_or_nothing(f, group) -> bool:
    out = list(f([dict(r) for r in group]))
    return out == [] or sorted(map(repr, out)) == sorted(map(repr, group))


@pytest.mark.parametrize("f", [buy_session, threshold])
def test_whole_group_filters_forward_groups_with_evidence(f):
    props = analyze(f, FIELDS, "reduce")
    assert props.forwards_groups
    [ev] = props.evidence_for("forwards_groups")
    assert ev.text in ("yield from rows", "for r in rows:") and ev.line > 0
    assert emits_group_or_nothing(f, GROUP) and emits_group_or_nothing(f, GROUP[:1])


@pytest.mark.parametrize("f", [per_record_filter, filter_inside_forwarding_loop, rows_twice, modified_records,
                               first_row, break_in_loop, continue_in_loop, a_slice, popped_first,
                               two_loops_on_one_path])
def test_near_misses_do_not_forward_groups(f):
    assert not forwards(f)
    assert not emits_group_or_nothing(f, GROUP)  # and rightly so


def test_a_one_shot_iterator_consumed_before_forwarding_is_not_trusted():
    assert not forwards(iterator_consumed_then_forwarded)
    assert list(iterator_consumed_then_forwarded(iter(GROUP))) == GROUP[2:]


def test_only_reduce_functions_forward_groups():
    assert not analyze(buy_session, (FIELDS, FIELDS), "cogroup").forwards_groups
    assert not analyze(lambda r: r, FIELDS, "map").forwards_groups
